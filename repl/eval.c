/* eval.c - protected calls, Ctrl-C handling, error reports and result
 * printing shared by the REPL loop, the colon commands and main(). */
#include "eval.h"
#include "format.h"
#include "output.h"
#include <ctype.h>
#include <lauxlib.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include "../scripting/uopdb_lua.h"

/* registry keys: the traceback of the error being raised, and the last
 * error reported with its traceback */
#define PENDING_TRACE_KEY "uopdb.repl.pending_trace"
#define LAST_ERROR_KEY "uopdb.repl.last_error"

static lua_State *running_state;
static bool verbose;

void eval_set_verbose(bool on) { verbose = on; }

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

/* the error stays the message ("stdin:1: boom"); its traceback is kept
 * aside for the report */
static int message_handler(lua_State *L) {
    if (!lua_isstring(L, 1)) {
        if (!(luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING))
            lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
        lua_replace(L, 1);
    }
    lua_settop(L, 1);
    luaL_traceback(L, L, NULL, 1);
    lua_setfield(L, LUA_REGISTRYINDEX, PENDING_TRACE_KEY);
    return 1;
}

int eval_docall(lua_State *L, int narg, int nres) {
    int base = lua_gettop(L) - narg;
    lua_pushnil(L);
    lua_setfield(L, LUA_REGISTRYINDEX, PENDING_TRACE_KEY);
    lua_pushcfunction(L, message_handler);
    lua_insert(L, base);
    lua_State *prev = running_state;
    running_state = L;
    uopdb_lua_set_stop_hook(stop_hook);
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
    if (status == LUA_OK) return status;
    if (!lua_isstring(L, -1)) {
        lua_pop(L, 1);
        lua_pushliteral(L, "(error object is not a string)");
    }
    size_t len;
    const char *msg = lua_tolstring(L, -1, &len);
    lua_getfield(L, LUA_REGISTRYINDEX, PENDING_TRACE_KEY);
    size_t tlen = 0;
    const char *trace = lua_type(L, -1) == LUA_TSTRING ? lua_tolstring(L, -1, &tlen) : NULL;
    output_error(msg, len);
    if (verbose && trace) {
        fwrite(trace, 1, tlen, stderr);
        fputc('\n', stderr);
        fflush(stderr);
    }
    /* remember "message\nstack traceback:..." for :trace */
    if (trace) lua_pushfstring(L, "%s\n%s", msg, trace);
    else lua_pushvalue(L, -2);
    lua_setfield(L, LUA_REGISTRYINDEX, LAST_ERROR_KEY);
    lua_pushnil(L);
    lua_setfield(L, LUA_REGISTRYINDEX, PENDING_TRACE_KEY);
    lua_pop(L, 2);
    return status;
}

bool eval_push_last_error(lua_State *L) {
    if (lua_getfield(L, LUA_REGISTRYINDEX, LAST_ERROR_KEY) == LUA_TSTRING) return true;
    lua_pop(L, 1);
    return false;
}

/* protected: the values 1..n of its own stack shown (format_display) and
 * joined by the separator in upvalue 1, a newline at the end */
static int join_values(lua_State *L) {
    int n = lua_gettop(L);
    const char *sep = lua_tostring(L, lua_upvalueindex(1));
    for (int i = 1; i <= n; i++) {
        format_display(L, i);
        lua_replace(L, i);
    }
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (int i = 1; i <= n; i++) {
        if (i > 1) luaL_addstring(&b, sep);
        lua_pushvalue(L, i);
        luaL_addvalue(&b);
    }
    luaL_addchar(&b, '\n');
    luaL_pushresult(&b);
    return 1;
}

/* shows before, then the values above base joined by sep, as one output;
 * pops the values; returns the status of formatting them (reported) */
static int show_values(lua_State *L, int base, const char *sep, const StrBuf *before) {
    int n = lua_gettop(L) - base;
    int status = LUA_OK;
    StrBuf out;
    sb_init(&out);
    if (before && before->len) sb_putn(&out, before->data, before->len);
    if (n > 0) {
        luaL_checkstack(L, LUA_MINSTACK, "too many results to print");
        lua_pushstring(L, sep);
        lua_pushcclosure(L, join_values, 1);
        lua_insert(L, base + 1);
        status = eval_docall(L, n, 1);
        if (status == LUA_OK) {
            size_t len;
            const char *s = lua_tolstring(L, -1, &len);
            sb_putn(&out, s, len);
            lua_pop(L, 1);
        }
    }
    if (out.len) output_emit(out.data, out.len);
    sb_free(&out);
    eval_report(L, status);
    lua_settop(L, base);
    fflush(stdout);
    return status;
}

void eval_print_values(lua_State *L, int base) { show_values(L, base, "\t", NULL); }

/* "=:command" code's errors say what went wrong, not where in that code:
 * ":command:3: no stage 99" becomes "no stage 99" */
static void drop_location(lua_State *L, const char *chunkname) {
    if (lua_type(L, -1) != LUA_TSTRING) return;
    const char *msg = lua_tostring(L, -1), *name = chunkname[0] == '=' ? chunkname + 1 : chunkname;
    size_t n = strlen(name);
    if (strncmp(msg, name, n) != 0 || msg[n] != ':') return;
    const char *q = msg + n + 1;
    while (isdigit((unsigned char)*q)) q++;
    if (q == msg + n + 1 || q[0] != ':' || q[1] != ' ') return;
    lua_pushstring(L, q + 2);
    lua_replace(L, -2);
}

/* and their tracebacks leave out the frames of that code, which the user
 * did not write: "\t:command:3: in main chunk" */
static void drop_frames(lua_State *L, const char *chunkname) {
    if (lua_getfield(L, LUA_REGISTRYINDEX, PENDING_TRACE_KEY) != LUA_TSTRING) {
        lua_pop(L, 1);
        return;
    }
    const char *trace = lua_tostring(L, -1), *name = chunkname[0] == '=' ? chunkname + 1 : chunkname;
    size_t n = strlen(name);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (const char *p = trace; *p;) {
        const char *end = strchr(p, '\n');
        size_t len = end ? (size_t)(end - p) + 1 : strlen(p);
        if (!(p[0] == '\t' && strncmp(p + 1, name, n) == 0 && p[1 + n] == ':')) luaL_addlstring(&b, p, len);
        p += len;
    }
    luaL_pushresult(&b);
    lua_setfield(L, LUA_REGISTRYINDEX, PENDING_TRACE_KEY);
    lua_pop(L, 1);
}

int eval_command(lua_State *L, const char *code, const char *chunkname) {
    int base = lua_gettop(L);
    int status = luaL_loadbuffer(L, code, strlen(code), chunkname);
    if (status != LUA_OK) return eval_report(L, status);
    OutputCapture cap;
    bool capturing = output_capture_begin(&cap);
    status = eval_docall(L, 0, LUA_MULTRET);
    StrBuf before;
    sb_init(&before);
    if (capturing) output_capture_end(&cap, &before);
    if (status == LUA_OK) {
        status = show_values(L, base, "\n", &before);
    } else {
        if (before.len) output_emit(before.data, before.len);
        drop_location(L, chunkname);
        drop_frames(L, chunkname);
        eval_report(L, status);
    }
    sb_free(&before);
    lua_settop(L, base);
    return status;
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
