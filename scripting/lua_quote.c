/* lua_quote.c - a user's string as an error message quotes it: on one line
 * (newlines, tabs and other control bytes written as escapes, like Lua's
 * "%q" but without a literal newline) and cut short when it is long, so a
 * message stays one readable line whatever string it names; and any Lua
 * value as a message describes it, the same way (a table, a Tensor by name,
 * never by calling its __tostring, which would compute the tensor). */
#include "lua_internal.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define QUOTE_MAX_BYTES 60

const char *luop_quote(lua_State *L, const char *s) {
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    size_t n = s ? strlen(s) : 0;
    size_t shown = n > QUOTE_MAX_BYTES ? QUOTE_MAX_BYTES : n;
    for (size_t i = 0; i < shown; i++) {
        unsigned char ch = (unsigned char)s[i];
        char esc[8];
        switch (ch) {
        case '\n': luaL_addstring(&b, "\\n"); break;
        case '\r': luaL_addstring(&b, "\\r"); break;
        case '\t': luaL_addstring(&b, "\\t"); break;
        case '\\': luaL_addstring(&b, "\\\\"); break;
        default:
            if (ch < 0x20 || ch == 0x7f) {
                snprintf(esc, sizeof esc, "\\%d", ch);
                luaL_addstring(&b, esc);
            } else {
                luaL_addchar(&b, (char)ch);
            }
        }
    }
    if (shown < n) luaL_addstring(&b, "...");
    luaL_pushresult(&b);
    return lua_tostring(L, -1);
}

/* true when the table at idx is a Tensor of the loaded module */
static bool is_tensor(lua_State *L, int idx) {
    if (!lua_getmetatable(L, idx)) return false;
    bool yes = false;
    lua_getfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
    if (lua_getfield(L, -1, "uopdb") == LUA_TTABLE) {
        lua_getfield(L, -1, "Tensor");
        yes = lua_rawequal(L, -1, -4);
        lua_pop(L, 1);
    }
    lua_pop(L, 3);
    return yes;
}

const char *luop_describe(lua_State *L, int idx) {
    idx = lua_absindex(L, idx);
    switch (lua_type(L, idx)) {
    case LUA_TNONE: lua_pushliteral(L, "nothing"); break;
    case LUA_TTABLE: lua_pushstring(L, is_tensor(L, idx) ? "a Tensor" : "a table"); break;
    case LUA_TFUNCTION: lua_pushliteral(L, "a function"); break;
    case LUA_TTHREAD: lua_pushliteral(L, "a coroutine"); break;
    default:
        luop_quote(L, luaL_tolstring(L, idx, NULL));
        lua_remove(L, -2);
    }
    return lua_tostring(L, -1);
}
