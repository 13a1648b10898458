/* eval.c - protected calls, Ctrl-C handling, error reports and result
 * printing shared by the REPL loop, the colon commands and main(). */
#include "eval.h"
#include "format.h"
#include <lauxlib.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include "../scripting/uopdb_lua.h"

static lua_State *running_state;

/* the hook Ctrl-C installs: stops the Lua code at its next step */
static void stop_hook(lua_State *L, lua_Debug *ar) {
    (void)ar;
    lua_sethook(L, NULL, 0, 0);
    luaL_error(L, "interrupted!");
}

/* Signal handler: sets a hook that stops the Lua code (safe in a handler)
 * and the interrupt flag that long C work polls (interpreters, rewrites,
 * bisection, JIT kernels).  It stays installed: a second Ctrl-C only asks
 * again, it never kills the REPL. */
static void on_sigint(int sig) {
    (void)sig;
    uopdb_lua_interrupt();
    if (running_state) lua_sethook(running_state, stop_hook, LUA_MASKCALL | LUA_MASKRET | LUA_MASKCOUNT, 1);
}

static int message_handler(lua_State *L) {
    const char *msg = lua_tostring(L, 1);
    if (!msg) {
        if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING) return 1;
        msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
    }
    luaL_traceback(L, L, msg, 1);
    return 1;
}

int eval_docall(lua_State *L, int narg, int nres) {
    int base = lua_gettop(L) - narg;
    lua_pushcfunction(L, message_handler);
    lua_insert(L, base);
    lua_State *prev = running_state;
    running_state = L;
    uopdb_lua_interrupt_clear();
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old);
    int status = lua_pcall(L, narg, nres, base);
    sigaction(SIGINT, &old, NULL);
    uopdb_lua_interrupt_clear();
    running_state = prev;
    lua_sethook(L, NULL, 0, 0);
    lua_remove(L, base);
    return status;
}

int eval_report(lua_State *L, int status) {
    if (status != LUA_OK) {
        const char *msg = lua_tostring(L, -1);
        fflush(stdout);
        fprintf(stderr, "%s\n", msg ? msg : "(error object is not a string)");
        fflush(stderr);
        lua_pop(L, 1);
    }
    return status;
}

/* protected: prints values 1..n of its own stack, tab-separated */
static int print_values(lua_State *L) {
    int n = lua_gettop(L);
    luaL_Buffer b;
    for (int i = 1; i <= n; i++) {
        format_value(L, i);
        lua_replace(L, i);
    }
    luaL_buffinit(L, &b);
    for (int i = 1; i <= n; i++) {
        if (i > 1) luaL_addchar(&b, '\t');
        lua_pushvalue(L, i);
        luaL_addvalue(&b);
    }
    luaL_addchar(&b, '\n');
    luaL_pushresult(&b);
    size_t len;
    const char *s = lua_tolstring(L, -1, &len);
    fwrite(s, 1, len, stdout);
    return 0;
}

void eval_print_values(lua_State *L, int base) {
    int n = lua_gettop(L) - base;
    if (n > 0) {
        luaL_checkstack(L, LUA_MINSTACK, "too many results to print");
        lua_pushcfunction(L, print_values);
        lua_insert(L, base + 1);
        eval_report(L, eval_docall(L, n, 0));
    }
    lua_settop(L, base);
    fflush(stdout);
}

int eval_file(lua_State *L, const char *path) {
    int status = luaL_loadfile(L, path);
    if (status == LUA_OK) status = eval_docall(L, 0, 0);
    fflush(stdout);
    return eval_report(L, status);
}

int eval_string(lua_State *L, const char *code, const char *chunkname) {
    int status = luaL_loadbuffer(L, code, strlen(code), chunkname);
    if (status == LUA_OK) status = eval_docall(L, 0, 0);
    fflush(stdout);
    return eval_report(L, status);
}
