/* lua_module.c - luaopen_uopdb: builds the module table from its parts,
 * owns the one UCtx of a Lua state (freed when the state closes) and runs
 * the embedded Lua parts (the prelude, the Tensor front end). */
#include "uopdb_lua.h"
#include "../core/util/interrupt.h"
#include "lua_internal.h"
#include <lualib.h>
#include <stdlib.h>
#include "../core/stages/stages.h"

#define CTX_KEY "uopdb.ctx"
#define MODULE_KEY "uopdb.module"

/* The parts of the module written in Lua, run in this order when it opens.
 * Each is scripting/NAME.lua, embedded by the Makefile as uopdb_lua_NAME
 * (scripts/embed.sh) and loaded as the chunk "=uopdb/NAME.lua", the name
 * messages and tracebacks show.  A new file needs one line here. */
#define LUA_PARTS(X)      \
    X(prelude)            \
    X(tensor)             \
    X(tensor_dtype)       \
    X(tensor_movement)    \
    X(tensor_elementwise) \
    X(tensor_activation)  \
    X(tensor_reduce)      \
    X(tensor_window)      \
    X(tensor_create)      \
    X(tensor_index)       \
    X(tensor_join)        \
    X(tensor_einsum)      \
    X(tensor_math)        \
    X(tensor_nn)          \
    X(tensor_sort)        \
    X(tensor_scatter)     \
    X(tensor_format)      \
    X(tensor_realize)     \
    X(tensor_grad)        \
    X(tensor_names)       \
    X(tensor_errors)

#define DECLARE_PART(name)                \
    extern const char uopdb_lua_##name[]; \
    extern const size_t uopdb_lua_##name##_len;
LUA_PARTS(DECLARE_PART)

static const struct LuaPart {
    const char *chunkname;
    const char *data;
    const size_t *len;
} lua_parts[] = {
#define PART_ENTRY(name) {"=uopdb/" #name ".lua", uopdb_lua_##name, &uopdb_lua_##name##_len},
    LUA_PARTS(PART_ENTRY)
};

typedef struct CtxBox {
    UCtx *c;
    LuaMemory mem;
} CtxBox;

static int ctx_gc(lua_State *L) {
    CtxBox *b = luaL_checkudata(L, 1, "uopdb.Context");
    if (b->c) uctx_free(b->c);
    b->c = NULL;
    return 0;
}

UCtx *luop_ctx(lua_State *L) {
    lua_getfield(L, LUA_REGISTRYINDEX, CTX_KEY);
    CtxBox *b = lua_touserdata(L, -1);
    lua_pop(L, 1);
    if (!b || !b->c) luaL_error(L, "uopdb: the module is not open in this Lua state");
    return b->c;
}

LuaMemory *luop_memory(lua_State *L) {
    lua_getfield(L, LUA_REGISTRYINDEX, CTX_KEY);
    CtxBox *b = lua_touserdata(L, -1);
    lua_pop(L, 1);
    if (!b || !b->c) luaL_error(L, "uopdb: the module is not open in this Lua state");
    return &b->mem;
}

int luop_ctx_error(lua_State *L) {
    UCtx *c = luop_ctx(L);
    const char *msg = uctx_error(c);
    luaL_where(L, 1); /* the Lua line that called */
    lua_pushstring(L, msg[0] ? msg : "uopdb: operation failed");
    lua_concat(L, 2);
    uctx_clear_error(c);
    return lua_error(L);
}

/* The context is created before anything else that has a finalizer, so Lua
 * finalizes it last when the state closes. */
static void create_context(lua_State *L) {
    CtxBox *b = lua_newuserdatauv(L, sizeof *b, 0);
    b->c = NULL;
    luop_memory_init(&b->mem);
    if (luaL_newmetatable(L, "uopdb.Context")) {
        lua_pushcfunction(L, ctx_gc);
        lua_setfield(L, -2, "__gc");
    }
    lua_setmetatable(L, -2);
    b->c = uctx_new();
    if (!b->c) luaL_error(L, "uopdb: out of memory creating the context");
    lua_setfield(L, LUA_REGISTRYINDEX, CTX_KEY);
}

static _Thread_local lua_State *active_state;

lua_State *luop_active_state(lua_State *fallback) { return active_state ? active_state : fallback; }

lua_State *luop_set_active_state(lua_State *L) {
    lua_State *prev = active_state;
    active_state = L;
    return prev;
}

int luaopen_uopdb(lua_State *L) {
    /* a second open in the same state returns the same table */
    if (lua_getfield(L, LUA_REGISTRYINDEX, MODULE_KEY) == LUA_TTABLE) return 1;
    lua_pop(L, 1);
    create_context(L);
    lua_newtable(L);
    luop_open_dtype(L);
    luop_open_arg(L);
    luop_open_uop(L);
    luop_open_build(L);
    luop_open_text(L);
    luop_open_rules(L);
    luop_open_tensor(L);
    luop_open_compile(L);
    luop_open_report(L);
    luop_open_verify(L);
    luop_open_find(L);
    luop_open_memory(L);
    lua_pushliteral(L, "0.1.0");
    lua_setfield(L, -2, "version");
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, MODULE_KEY);
    /* the Lua parts add to the table; each receives it and one table the
     * parts share their helpers through, which scripts never see; it starts
     * with the UOp metatable, so the Lua parts can tell a UOp from a look-alike */
    lua_newtable(L);
    luaL_getmetatable(L, LUOP_UOP_MT);
    lua_setfield(L, -2, "uop_mt");
    for (size_t i = 0; i < sizeof lua_parts / sizeof lua_parts[0]; i++) {
        const struct LuaPart *p = &lua_parts[i];
        if (luaL_loadbuffer(L, p->data, *p->len, p->chunkname) != LUA_OK) return lua_error(L);
        lua_pushvalue(L, -3); /* the module table */
        lua_pushvalue(L, -3); /* the shared table */
        lua_call(L, 2, 0);
    }
    lua_pop(L, 1);
    return 1;
}

void uopdb_lua_open(lua_State *L) {
    luaL_requiref(L, "uopdb", luaopen_uopdb, 0);
    lua_getfield(L, -1, "Tensor");
    lua_setglobal(L, "Tensor");
    lua_setglobal(L, "uop");
}

int uopdb_lua_stage_count(void) { return STAGE_COUNT; }
void uopdb_lua_interrupt(void) { uopdb_interrupt_request(); }
void uopdb_lua_interrupt_clear(void) { uopdb_interrupt_clear(); }

static lua_Hook repl_stop_hook;
void uopdb_lua_set_stop_hook(lua_Hook hook) { repl_stop_hook = hook; }
void luop_interrupt_handled(lua_State *L) {
    if (repl_stop_hook && lua_gethook(L) == repl_stop_hook) lua_sethook(L, NULL, 0, 0);
}
