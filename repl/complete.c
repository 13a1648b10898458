/* complete.c - completion candidates, see complete.h.  Only raw lookups
 * are used, so completing never runs user code (no __index functions). */
#include "complete.h"
#include <ctype.h>
#include <lauxlib.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static const char *const keywords[] = {
    "and", "break", "do", "else", "elseif", "end", "false", "for", "function", "goto", "if", "in",
    "local", "nil", "not", "or", "repeat", "return", "then", "true", "until", "while", NULL};

static bool is_identifier(const char *s, size_t n) {
    if (n == 0 || !(isalpha((unsigned char)s[0]) || s[0] == '_')) return false;
    for (size_t i = 1; i < n; i++)
        if (!(isalnum((unsigned char)s[i]) || s[i] == '_')) return false;
    return true;
}

/* adds prefix..key for each identifier key of the table at t that starts
 * with partial (into the set at out) */
static void add_keys(lua_State *L, int t, const char *prefix, const char *partial, int out, bool only_functions) {
    size_t plen = strlen(partial);
    lua_pushnil(L);
    while (lua_next(L, t)) {
        if (lua_type(L, -2) == LUA_TSTRING && (!only_functions || lua_isfunction(L, -1))) {
            size_t klen;
            const char *k = lua_tolstring(L, -2, &klen);
            if (is_identifier(k, klen) && klen >= plen && strncmp(k, partial, plen) == 0) {
                lua_pushfstring(L, "%s%s", prefix, k);
                lua_pushboolean(L, 1);
                lua_rawset(L, out);
            }
        }
        lua_pop(L, 1);
    }
}

/* the metatable's __index of the value at idx, if a table (pushed), else nothing */
static bool push_index_table(lua_State *L, int idx) {
    if (!lua_getmetatable(L, idx)) return false;
    lua_pushliteral(L, "__index");
    lua_rawget(L, -2);
    lua_remove(L, -2);
    if (lua_istable(L, -1)) return true;
    lua_pop(L, 1);
    return false;
}

/* field k of the value on top, by raw lookups; replaces it (nil if none) */
static void raw_field(lua_State *L, const char *k, size_t n) {
    int v = lua_gettop(L);
    if (lua_istable(L, v)) {
        lua_pushlstring(L, k, n);
        if (lua_rawget(L, v) != LUA_TNIL) { lua_replace(L, v); return; }
        lua_pop(L, 1);
    }
    if (push_index_table(L, v)) {
        lua_pushlstring(L, k, n);
        lua_rawget(L, -2);
        lua_remove(L, -2);
        lua_replace(L, v);
        return;
    }
    lua_pushnil(L);
    lua_replace(L, v);
}

/* protected: (word) -> sorted list of completions */
static int candidates(lua_State *L) {
    const char *word = luaL_checkstring(L, 1);
    lua_newtable(L); /* set of results */
    int out = lua_gettop(L);
    const char *sep = NULL;
    for (const char *p = word; *p; p++)
        if (*p == '.' || *p == ':') sep = p;
    if (!sep) {
        lua_pushglobaltable(L);
        add_keys(L, lua_gettop(L), "", word, out, false);
        lua_pop(L, 1);
        size_t n = strlen(word);
        for (int i = 0; keywords[i]; i++)
            if (strncmp(keywords[i], word, n) == 0) {
                lua_pushstring(L, keywords[i]);
                lua_pushboolean(L, 1);
                lua_rawset(L, out);
            }
    } else {
        /* walk the path before the last separator */
        lua_pushglobaltable(L);
        const char *seg = word;
        while (seg < sep) {
            const char *end = seg;
            while (end < sep && *end != '.' && *end != ':') end++;
            if (!is_identifier(seg, (size_t)(end - seg))) { lua_pushnil(L); lua_replace(L, -2); break; }
            raw_field(L, seg, (size_t)(end - seg));
            seg = end + 1;
        }
        int v = lua_gettop(L);
        lua_pushlstring(L, word, (size_t)(sep - word) + 1);
        const char *prefix = lua_tostring(L, -1);
        if (!lua_isnil(L, v)) {
            if (lua_istable(L, v)) add_keys(L, v, prefix, sep + 1, out, *sep == ':');
            if (push_index_table(L, v)) {
                add_keys(L, lua_gettop(L), prefix, sep + 1, out, *sep == ':');
                lua_pop(L, 1);
            }
        }
        lua_pop(L, 1);
    }
    /* set -> sorted list */
    lua_newtable(L);
    int list = lua_gettop(L);
    lua_Integer n = 0;
    lua_pushnil(L);
    while (lua_next(L, out)) {
        lua_pop(L, 1);
        lua_pushvalue(L, -1);
        lua_rawseti(L, list, ++n);
    }
    for (lua_Integer i = 2; i <= n; i++) {
        lua_rawgeti(L, list, i);
        lua_Integer j = i - 1;
        for (; j >= 1; j--) {
            lua_rawgeti(L, list, j);
            if (strcmp(lua_tostring(L, -1), lua_tostring(L, -2)) <= 0) { lua_pop(L, 1); break; }
            lua_rawseti(L, list, j + 1);
        }
        lua_rawseti(L, list, j + 1);
    }
    return 1;
}

size_t complete_word(lua_State *L, const char *word, char ***out) {
    *out = NULL;
    int top = lua_gettop(L);
    if (!lua_checkstack(L, 4)) return 0;
    lua_pushcfunction(L, candidates);
    lua_pushstring(L, word);
    if (lua_pcall(L, 1, 1, 0) != LUA_OK) { lua_settop(L, top); return 0; }
    size_t n = (size_t)lua_rawlen(L, -1), got = 0;
    char **list = n ? calloc(n, sizeof *list) : NULL;
    for (size_t i = 0; list && i < n; i++) {
        lua_rawgeti(L, -1, (lua_Integer)i + 1);
        const char *s = lua_tostring(L, -1);
        list[got] = s ? strdup(s) : NULL;
        if (list[got]) got++;
        lua_pop(L, 1);
    }
    lua_settop(L, top);
    *out = list;
    return got;
}

void complete_free(char **list, size_t n) {
    for (size_t i = 0; i < n; i++) free(list[i]);
    free(list);
}
