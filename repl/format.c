/* format.c - the REPL's printed form of a value, see format.h. */
#include "format.h"
#include "output.h"
#include <ctype.h>
#include <lauxlib.h>
#include <stdbool.h>
#include <string.h>

#define MAX_ENTRIES 100

static bool is_identifier(const char *s) {
    if (!*s || !(isalpha((unsigned char)*s) || *s == '_')) return false;
    for (; *s; s++)
        if (!(isalnum((unsigned char)*s) || *s == '_')) return false;
    return true;
}

/* a value inside a table: strings quoted, tables without __tostring elided */
static void push_inner(lua_State *L, int idx) {
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
        lua_pushstring(L, "{...}");
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

static void format_table(lua_State *L, int idx) {
    lua_Integer n = (lua_Integer)lua_rawlen(L, idx);
    lua_newtable(L); /* "key = value" entries of the other keys */
    int entries = lua_gettop(L);
    lua_Integer nentries = 0;
    bool more = false;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        if (lua_isinteger(L, -2) && lua_tointeger(L, -2) >= 1 && lua_tointeger(L, -2) <= n) { lua_pop(L, 1); continue; }
        if (nentries >= MAX_ENTRIES) { more = true; lua_pop(L, 2); break; }
        if (lua_type(L, -2) == LUA_TSTRING && is_identifier(lua_tostring(L, -2))) lua_pushvalue(L, -2);
        else {
            lua_pushliteral(L, "[");
            push_inner(L, -3);
            lua_pushliteral(L, "]");
            lua_concat(L, 3);
        }
        lua_pushliteral(L, " = ");
        push_inner(L, -3);
        lua_concat(L, 3);
        lua_rawseti(L, entries, ++nentries);
        lua_pop(L, 1);
    }
    sort_strings(L, entries, nentries);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    luaL_addchar(&b, '{');
    int shown = 0;
    for (lua_Integer i = 1; i <= n && shown < MAX_ENTRIES; i++, shown++) {
        if (shown) luaL_addstring(&b, ", ");
        lua_rawgeti(L, idx, i);
        push_inner(L, -1);
        lua_remove(L, -2);
        luaL_addvalue(&b);
    }
    if (n > MAX_ENTRIES) more = true;
    for (lua_Integer i = 1; i <= nentries; i++) {
        if (shown++) luaL_addstring(&b, ", ");
        lua_rawgeti(L, entries, i);
        luaL_addvalue(&b);
    }
    if (more) luaL_addstring(&b, ", ...");
    luaL_addchar(&b, '}');
    luaL_pushresult(&b);
    lua_remove(L, entries);
}

void format_value(lua_State *L, int idx) {
    idx = lua_absindex(L, idx);
    luaL_checkstack(L, 16, "formatting a value");
    if (lua_type(L, idx) == LUA_TTABLE && !luaL_getmetafield(L, idx, "__tostring")) {
        format_table(L, idx);
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
