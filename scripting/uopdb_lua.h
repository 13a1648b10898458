/* uopdb_lua.h - the Lua 5.4 binding of uopdb: the module a stock lua5.4
 * loads with require "uopdb", and the entry point the REPL uses to expose
 * the same module as the global `uop`. */
#ifndef UOPDB_LUA_H
#define UOPDB_LUA_H
#include <lua.h>
#include <stddef.h>

/* Opens the module and returns its table (one UCtx per Lua state, created
 * on first open and freed when the state is closed). */
int luaopen_uopdb(lua_State *L);

/* Opens the module as package.loaded["uopdb"] (so a later require "uopdb"
 * returns the same table) and sets the global `uop`.  Needs the standard
 * libraries opened first. */
void uopdb_lua_open(lua_State *L);

/* The last stage number: a kernel's stages are 0 (as scheduled) to this. */
int uopdb_lua_stage_count(void);

/* The current kernel and its point for the prompt: "r_3_3_3@15",
 * "r_3_3_3@15.3" at a rewrite point; "" when there is no current kernel. */
const char *uopdb_lua_current_point(lua_State *L, char *buf, size_t len);

/* How many validations failed in this Lua state (p:run{validate=true} that
 * found a mismatch): a script that had one exits non-zero. */
int uopdb_lua_failed_validations(lua_State *L);

/* Ctrl-C: asks long work in C (interpreters, rewrites, bisection, JIT
 * kernels) to stop with an "interrupted" error; async-signal-safe.  The
 * REPL clears the request before each evaluation. */
/* Between two inputs of the REPL: compacts the state's UOp context when
 * memory has grown enough (scripting/lua_memory.c). */
void uopdb_lua_safe_point(lua_State *L);
void uopdb_lua_interrupt(void);
void uopdb_lua_interrupt_clear(void);
/* The hook the REPL sets on Ctrl-C to stop running Lua code.  Work that
 * handles Ctrl-C itself (a beam search keeps the best found and returns)
 * removes this hook, so its result reaches the caller. */
void uopdb_lua_set_stop_hook(lua_Hook hook);

#endif
