/* suggest.c - "did you mean" (see suggest.h).  The methods of a value are
 * the ones tab completion lists for "v:", so both always agree. */
#include "suggest.h"
#include "complete.h"
#include "../core/util/name_distance.h"
#include <ctype.h>
#include <lauxlib.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

int suggest_limit(const char *typed) {
    size_t half = strlen(typed) / 2;
    return half < 2 ? (int)half : 2;
}

/* tinygrad's names for what has another name here, since Lua has no numpy */
static const struct { const char *tinygrad, *here; } renamed[] = {
    {"numpy", "tolist"},
    {"data", "tolist"},
};

static bool is_name_char(char c) { return isalnum((unsigned char)c) || c == '_' || c == '.'; }

/* the receiver of the first ":method" call in code written as a name
 * (a, a.b.c) into recv; false when there is none */
static bool find_receiver(const char *code, const char *method, char *recv, size_t cap) {
    size_t mlen = strlen(method);
    for (const char *p = strchr(code, ':'); p; p = strchr(p + 1, ':')) {
        if (strncmp(p + 1, method, mlen) != 0 || is_name_char(p[1 + mlen])) continue;
        const char *start = p;
        while (start > code && is_name_char(start[-1])) start--;
        size_t n = (size_t)(p - start);
        if (n == 0 || n + 2 > cap || !(isalpha((unsigned char)*start) || *start == '_')) continue;
        memcpy(recv, start, n);
        recv[n] = ':';
        recv[n + 1] = 0;
        return true;
    }
    return false;
}

/* how far method m is from what was typed: 0 for the name tinygrad's
 * spelling stands for here */
static int distance_to(const char *typed, const char *m, const char *alias) {
    return alias && !strcmp(m, alias) ? 0 : name_distance(typed, m);
}

void suggest_method(lua_State *L, const char *code) {
    if (!code || lua_type(L, -1) != LUA_TSTRING) return;
    const char *msg = lua_tostring(L, -1);
    const char *at = strstr(msg, "attempt to call a nil value (method '");
    if (!at) return;
    char method[64];
    const char *name = at + strlen("attempt to call a nil value (method '"), *end = strchr(name, '\'');
    if (!end || end == name || (size_t)(end - name) >= sizeof method || strcmp(end, "')") != 0) return;
    memcpy(method, name, (size_t)(end - name));
    method[end - name] = 0;
    char recv[128];
    if (!find_receiver(code, method, recv, sizeof recv)) return;
    char **list = NULL;
    size_t n = complete_word(L, recv, &list), rlen = strlen(recv);
    if (!n) return;
    const char *alias = NULL;
    for (size_t i = 0; i < sizeof renamed / sizeof renamed[0]; i++)
        if (!strcmp(method, renamed[i].tinygrad)) alias = renamed[i].here;
    int *dist = malloc(n * sizeof *dist);
    if (!dist) {
        complete_free(list, n);
        return;
    }
    int best = suggest_limit(method) + 1;
    for (size_t i = 0; i < n; i++) {
        dist[i] = distance_to(method, list[i] + rlen, alias);
        if (dist[i] < best) best = dist[i];
    }
    size_t close = 0;
    for (size_t i = 0; i < n; i++) close += dist[i] == best;
    if (close && close <= 4) {
        luaL_Buffer b;
        luaL_buffinit(L, &b);
        luaL_addstring(&b, msg);
        luaL_addstring(&b, ": did you mean ");
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
            if (dist[i] != best) continue;
            if (k) luaL_addstring(&b, k + 1 == close ? " or " : ", ");
            luaL_addstring(&b, list[i]);
            k++;
        }
        luaL_addstring(&b, "?");
        luaL_pushresult(&b);
        lua_replace(L, -2);
    }
    free(dist);
    complete_free(list, n);
}
