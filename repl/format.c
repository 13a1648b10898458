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
/* a table's non-list keys sorted at most: beyond, which are shown is
 * lua_next's choice (the sort is quadratic) */
enum { MAX_KEYS_SORTED = 1000 };

static bool is_identifier(const char *s) {
    if (!*s || !(isalpha((unsigned char)*s) || *s == '_')) return false;
    for (; *s; s++)
        if (!(isalnum((unsigned char)*s) || *s == '_')) return false;
    return true;
}

static void format_table(lua_State *L, int idx, int depth, int *budget);

/* a value inside a table: strings quoted, tables without __tostring nested
 * while depth and budget last */
static void push_inner(lua_State *L, int idx, int depth, int *budget) {
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
        if (depth < MAX_DEPTH && *budget > 0) format_table(L, idx, depth + 1, budget);
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

/* Pushes {list items, key = value...}: the list part in order, then the
 * other keys sorted.  The keys are gathered before any value is shown, so
 * the entries shown are the same every time whatever lua_next's order. */
static void format_table(lua_State *L, int idx, int depth, int *budget) {
    idx = lua_absindex(L, idx);
    luaL_checkstack(L, 16, "formatting a value");
    lua_Integer n = (lua_Integer)lua_rawlen(L, idx);
    lua_newtable(L); /* the other keys' "key" texts, with the keys themselves */
    int keys = lua_gettop(L);
    lua_newtable(L);
    int key_values = lua_gettop(L);
    lua_Integer nkeys = 0;
    bool more = false;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        lua_pop(L, 1);
        if (lua_isinteger(L, -1) && lua_tointeger(L, -1) >= 1 && lua_tointeger(L, -1) <= n) continue;
        if (nkeys == MAX_KEYS_SORTED) { more = true; lua_pop(L, 1); break; }
        if (lua_type(L, -1) == LUA_TSTRING && is_identifier(lua_tostring(L, -1))) lua_pushvalue(L, -1);
        else {
            int none = 0; /* a key is shown whole: it takes nothing from the budget */
            lua_pushliteral(L, "[");
            push_inner(L, -2, MAX_DEPTH, &none);
            lua_pushliteral(L, "]");
            lua_concat(L, 3);
        }
        lua_pushvalue(L, -1);
        lua_pushvalue(L, -3);
        lua_rawset(L, key_values); /* key text -> key */
        lua_rawseti(L, keys, ++nkeys);
    }
    sort_strings(L, keys, nkeys);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    luaL_addchar(&b, '{');
    /* the list items, then the other keys' "key = value" */
    lua_Integer i = 1;
    for (; i <= n + nkeys; i++) {
        if (*budget <= 0) { more = true; break; }
        (*budget)--;
        if (i > 1) luaL_addstring(&b, ", ");
        if (i <= n) {
            lua_rawgeti(L, idx, i);
            push_inner(L, -1, depth, budget);
            lua_remove(L, -2);
        } else {
            lua_rawgeti(L, keys, i - n);
            lua_pushvalue(L, -1);
            lua_rawget(L, key_values); /* the key */
            lua_rawget(L, idx);        /* its value */
            push_inner(L, -1, depth, budget);
            lua_remove(L, -2);
            lua_pushliteral(L, " = ");
            lua_insert(L, -2);
            lua_concat(L, 3);
        }
        luaL_addvalue(&b);
    }
    if (more) luaL_addstring(&b, i > 1 ? ", ..." : "...");
    luaL_addchar(&b, '}');
    luaL_pushresult(&b);
    lua_remove(L, key_values);
    lua_remove(L, keys);
}

void format_value(lua_State *L, int idx) {
    idx = lua_absindex(L, idx);
    luaL_checkstack(L, 16, "formatting a value");
    if (lua_type(L, idx) == LUA_TTABLE && !luaL_getmetafield(L, idx, "__tostring")) {
        int budget = MAX_ENTRIES;
        format_table(L, idx, 1, &budget);
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
