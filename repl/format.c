/* format.c - the REPL's printed form of a value, see format.h. */
#include "format.h"
#include "output.h"
#include <ctype.h>
#include <lauxlib.h>
#include <stdbool.h>
#include <string.h>

/* How much of a table is shown: nested tables to MAX_DEPTH levels, and
 * MAX_ENTRIES entries in all, shared by every level, so a deep or wide
 * table prints one readable line; what is left out shows as "..." or
 * {...}.  The depth bound also ends a table that contains itself. */
enum { MAX_DEPTH = 4, MAX_ENTRIES = 200 };
/* the columns a table's one-line form may take before its entries go one
 * to a line (the width the REPL's wide tables are cut at, at least) */
enum { WIDTH = 100 };
/* a table's non-list keys sorted at most: beyond, which are shown is
 * lua_next's choice (the sort is quadratic) */
enum { MAX_KEYS_SORTED = 1000 };

static bool is_identifier(const char *s) {
    if (!*s || !(isalpha((unsigned char)*s) || *s == '_')) return false;
    for (; *s; s++)
        if (!(isalnum((unsigned char)*s) || *s == '_')) return false;
    return true;
}

/* where a table's text goes: it starts at column col of a line indented
 * by indent; col < 0: on one line whatever its length */
typedef struct Place {
    int col, indent;
} Place;
static const Place ONE_LINE = {-1, 0};

static void format_table(lua_State *L, int idx, int depth, int *budget, Place at);

/* a value inside a table: strings quoted, tables without __tostring nested
 * while depth and budget last */
static void push_inner(lua_State *L, int idx, int depth, int *budget, Place at) {
    idx = lua_absindex(L, idx);
    if (lua_type(L, idx) == LUA_TSTRING) {
        luaL_Buffer b;
        luaL_buffinit(L, &b);
        luaL_addchar(&b, '"');
        size_t len;
        const char *s = lua_tolstring(L, idx, &len);
        for (size_t i = 0; i < len; i++) {
            char ch = s[i];
            if (ch == '"' || ch == '\\') { luaL_addchar(&b, '\\'); luaL_addchar(&b, ch); }
            else if (ch == '\n') luaL_addstring(&b, "\\n");
            else luaL_addchar(&b, ch);
        }
        luaL_addchar(&b, '"');
        luaL_pushresult(&b);
    } else if (lua_type(L, idx) == LUA_TTABLE && !luaL_getmetafield(L, idx, "__tostring")) {
        if (depth < MAX_DEPTH && *budget > 0) format_table(L, idx, depth + 1, budget, at);
        else lua_pushstring(L, "{...}");
    } else {
        if (lua_type(L, idx) == LUA_TTABLE) lua_pop(L, 1); /* the metafield */
        luaL_tolstring(L, idx, NULL);
    }
}

/* sorts the strings of the list at t (small lists: insertion sort) */
static void sort_strings(lua_State *L, int t, lua_Integer n) {
    for (lua_Integer i = 2; i <= n; i++) {
        lua_rawgeti(L, t, i);
        lua_Integer j = i - 1;
        for (; j >= 1; j--) {
            lua_rawgeti(L, t, j);
            if (strcmp(lua_tostring(L, -1), lua_tostring(L, -2)) <= 0) { lua_pop(L, 1); break; }
            lua_rawseti(L, t, j + 1);
        }
        lua_rawseti(L, t, j + 1);
    }
}

/* Pushes the table's entries in the order shown, as two lists: the texts
 * "key" of the keys (false for the list items) and the values; the list
 * part comes first in order, then the other keys sorted.  The keys are
 * gathered before any value is shown, so the entries shown are the same
 * every time whatever lua_next's order.  No more than MAX_ENTRIES are
 * taken, as no more can be shown.  Returns the count; *more when entries
 * were left out. */
static lua_Integer table_entries(lua_State *L, int idx, bool *more) {
    lua_Integer len = (lua_Integer)lua_rawlen(L, idx), n = len < MAX_ENTRIES ? len : MAX_ENTRIES;
    lua_createtable(L, (int)n, 0); /* key texts */
    int texts = lua_gettop(L);
    lua_createtable(L, (int)n, 0); /* values */
    int values = lua_gettop(L);
    lua_newtable(L);               /* key text -> key */
    int key_of = lua_gettop(L);
    lua_newtable(L);               /* the other keys' texts, to sort */
    int others = lua_gettop(L);
    for (lua_Integer i = 1; i <= n; i++) {
        lua_pushboolean(L, 0);
        lua_rawseti(L, texts, i);
        lua_rawgeti(L, idx, i);
        lua_rawseti(L, values, i);
    }
    lua_Integer nkeys = 0;
    *more = n < len;
    if (!*more) lua_pushnil(L);
    while (!*more && lua_next(L, idx)) {
        lua_pop(L, 1);
        if (lua_isinteger(L, -1) && lua_tointeger(L, -1) >= 1 && lua_tointeger(L, -1) <= len) continue;
        if (nkeys == MAX_KEYS_SORTED) { *more = true; lua_pop(L, 1); break; }
        if (lua_type(L, -1) == LUA_TSTRING && is_identifier(lua_tostring(L, -1))) lua_pushvalue(L, -1);
        else {
            int none = 0; /* a key is shown whole: it takes nothing from the budget */
            lua_pushliteral(L, "[");
            push_inner(L, -2, MAX_DEPTH, &none, ONE_LINE);
            lua_pushliteral(L, "]");
            lua_concat(L, 3);
        }
        lua_pushvalue(L, -1);
        lua_pushvalue(L, -3);
        lua_rawset(L, key_of);
        lua_rawseti(L, others, ++nkeys);
    }
    sort_strings(L, others, nkeys);
    for (lua_Integer k = 1; k <= nkeys; k++) {
        lua_rawgeti(L, others, k);
        lua_pushvalue(L, -1);
        lua_rawseti(L, texts, n + k);
        lua_rawget(L, key_of);
        lua_rawget(L, idx);
        lua_rawseti(L, values, n + k);
    }
    lua_pop(L, 2);
    return n + nkeys;
}

static void add_spaces(luaL_Buffer *b, int n) {
    for (int k = 0; k < n; k++) luaL_addchar(b, ' ');
}

/* Pushes {item, key = value, ...} for the table at idx on one line; when
 * that line would pass column WIDTH, one entry to a line instead (list
 * items that take one line each fill lines up to the width), each indented
 * two more than the line the table starts on and laid out the same way:
 *   {
 *     1, 2, 3,
 *     key = {...},
 *   }                                                                    */
static void format_table(lua_State *L, int idx, int depth, int *budget, Place at) {
    idx = lua_absindex(L, idx);
    luaL_checkstack(L, 16, "formatting a value");
    bool more;
    lua_Integer count = table_entries(L, idx, &more);
    int texts = lua_gettop(L) - 1, values = lua_gettop(L);
    for (int pass = 0; pass < 2; pass++) {
        bool broken = pass == 1;
        int trial = *budget, *use = broken ? budget : &trial;
        bool cut = more;
        luaL_Buffer b;
        luaL_buffinit(L, &b);
        luaL_addstring(&b, broken ? "{\n" : "{");
        lua_Integer i = 1;
        int line = -1; /* broken: the length of the line being filled with list items, -1 if none */
        for (; i <= count; i++) {
            if (*use <= 0) { cut = true; break; }
            (*use)--;
            if (!broken && i > 1) luaL_addstring(&b, ", ");
            lua_rawgeti(L, texts, i);
            bool keyed = lua_toboolean(L, -1);
            size_t klen = 0;
            if (keyed) {
                lua_pushliteral(L, " = ");
                lua_concat(L, 2);
                klen = lua_rawlen(L, -1);
            } else {
                lua_pop(L, 1);
                lua_pushliteral(L, "");
            }
            lua_rawgeti(L, values, i);
            Place inner = {at.indent + 2 + (int)klen, at.indent + 2};
            push_inner(L, -1, depth, use, broken ? inner : ONE_LINE);
            lua_remove(L, -2);
            lua_concat(L, 2);
            if (broken) {
                /* list items of one line each share lines up to the width */
                size_t len;
                const char *text = lua_tolstring(L, -1, &len);
                bool packable = !keyed && !memchr(text, '\n', len);
                if (packable && line >= 0 && line + (int)len + 2 <= WIDTH) {
                    luaL_addchar(&b, ' ');
                    line += (int)len + 2;
                } else {
                    if (line >= 0) luaL_addchar(&b, '\n');
                    add_spaces(&b, at.indent + 2);
                    line = packable ? at.indent + 2 + (int)len + 1 : -1;
                }
                luaL_addvalue(&b);
                luaL_addchar(&b, ',');
                if (line < 0) luaL_addchar(&b, '\n');
            } else {
                luaL_addvalue(&b);
            }
        }
        if (broken && line >= 0) luaL_addchar(&b, '\n');
        if (cut) {
            if (broken) {
                add_spaces(&b, at.indent + 2);
                luaL_addstring(&b, "...\n");
            } else {
                luaL_addstring(&b, i > 1 ? ", ..." : "...");
            }
        }
        if (broken) add_spaces(&b, at.indent);
        luaL_addchar(&b, '}');
        luaL_pushresult(&b);
        if (broken || at.col < 0 || (lua_Integer)lua_rawlen(L, -1) + at.col <= WIDTH || count == 0) {
            if (!broken) *budget = trial;
            break;
        }
        lua_pop(L, 1);
    }
    lua_remove(L, values);
    lua_remove(L, texts);
}

void format_value(lua_State *L, int idx) {
    idx = lua_absindex(L, idx);
    luaL_checkstack(L, 16, "formatting a value");
    if (lua_type(L, idx) == LUA_TTABLE && !luaL_getmetafield(L, idx, "__tostring")) {
        int budget = MAX_ENTRIES;
        format_table(L, idx, 1, &budget, (Place){0, 0});
        return;
    }
    if (lua_type(L, idx) == LUA_TTABLE) lua_pop(L, 1);
    luaL_tolstring(L, idx, NULL);
}

/* a text object: a table whose metatable is the module's "uopdb.Text" */
static bool is_text_object(lua_State *L, int idx) {
    if (lua_type(L, idx) != LUA_TTABLE || !lua_getmetatable(L, idx)) return false;
    luaL_getmetatable(L, "uopdb.Text");
    bool yes = lua_rawequal(L, -1, -2);
    lua_pop(L, 2);
    return yes;
}

void format_display(lua_State *L, int idx) {
    idx = lua_absindex(L, idx);
    luaL_checkstack(L, 4, "formatting a value");
    if (is_text_object(L, idx)) {
        lua_pushliteral(L, "kind");
        lua_rawget(L, idx);
        lua_pushliteral(L, "text");
        lua_rawget(L, idx);
        if (lua_type(L, -1) == LUA_TSTRING) {
            size_t len;
            const char *text = lua_tolstring(L, -1, &len);
            if (len && text[len - 1] == '\n') len--; /* shown as a block of lines */
            const char *kind = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : NULL;
            StrBuf sb;
            sb_init(&sb);
            output_decorate(&sb, kind, text, len);
            if (sb.oom) {
                sb_free(&sb);
                luaL_error(L, "out of memory while printing");
            }
            lua_pushlstring(L, sb.data ? sb.data : "", sb.len);
            sb_free(&sb);
            lua_replace(L, -3);
            lua_pop(L, 1);
            return;
        }
        lua_pop(L, 2);
    }
    format_value(L, idx);
}
