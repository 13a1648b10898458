/* lua_memory.c - bounded memory for a Lua state: its UOp context is
 * compacted from what Lua still reaches, and the host data of the buffers
 * whose nodes go is freed with them.
 *
 * A compaction runs a full Lua collection first (dropped UOps, tensors and
 * programs are collected; a program's finalizer frees its schedule, kernels
 * and pipelines), then marks the nodes of every UOp box still alive and of
 * every live program (its schedule, its kernels' points and traces) and
 * sweeps the rest (uctx_sweep: live nodes keep their address and id).
 *
 * It happens by itself at safe points, when the live nodes have grown by
 * GROWTH since the last compaction (and are at least MIN_NODES) or the host
 * data has (at least MIN_BYTES): at the start of the functions that build
 * nodes, compile, run or make buffers, and at the REPL's prompt.  Never
 * while C code below holds nodes Lua does not (a rewrite or breakpoint
 * calling a Lua function: the busy count), nor inside a finalizer.
 * uop.compact() runs one now and returns what it freed; uop.memory()
 * returns the counts. */
#include "lua_internal.h"
#include "lua_compile.h"
#include "tensor_data.h"
#include "uopdb_lua.h"
#include "../core/rewrite/rewrite.h"
#include <string.h>

#define MIN_NODES ((size_t)1 << 18)
#define MIN_BYTES ((size_t)64 << 20)
#define GROWTH 2

typedef struct CompactReport {
    size_t nodes, buffers, bytes;
} CompactReport;

/* whether a finalizer (__gc) is running somewhere up the Lua stack: it may
 * have interrupted C code in the middle of its work */
static bool in_finalizer(lua_State *L) {
    lua_Debug ar;
    for (int level = 0; lua_getstack(L, level, &ar); level++) {
        if (!lua_getinfo(L, "n", &ar)) continue;
        if (ar.namewhat && !strcmp(ar.namewhat, "metamethod") && ar.name && !strcmp(ar.name, "__gc")) return true;
    }
    return false;
}

static bool compact(lua_State *L, LuaMemory *m, CompactReport *rep) {
    UCtx *c = luop_ctx(L);
    memset(rep, 0, sizeof *rep);
    m->busy++;
    /* twice: what the first run's finalizers let go of goes too */
    lua_gc(L, LUA_GCCOLLECT, 0);
    lua_gc(L, LUA_GCCOLLECT, 0);
    UCtxMarks *marks = uctx_marks_new(c);
    if (!marks) {
        m->busy--;
        return false;
    }
    luop_mark_boxes(L, marks);
    luop_mark_programs(L, marks);
    rep->nodes = uctx_sweep(c, marks);
    rewrite_release_buffers();
    rep->buffers = luop_buffer_prune(L, &rep->bytes);
    size_t live = uctx_live_nodes(c), bytes = luop_buffer_bytes(L);
    m->next_nodes = live * GROWTH > MIN_NODES ? live * GROWTH : MIN_NODES;
    m->next_bytes = bytes * GROWTH > MIN_BYTES ? bytes * GROWTH : MIN_BYTES;
    m->compactions++;
    m->nodes_freed += rep->nodes;
    m->buffers_freed += rep->buffers;
    m->bytes_freed += rep->bytes;
    m->busy--;
    return true;
}

void luop_safe_point(lua_State *L) {
    LuaMemory *m = luop_memory(L);
    if (m->busy) return;
    if (uctx_live_nodes(luop_ctx(L)) < m->next_nodes && m->host_bytes < m->next_bytes) return;
    if (in_finalizer(L)) return;
    CompactReport rep;
    if (!compact(L, m, &rep)) {
        /* out of memory for the marks: try again after as much growth */
        m->next_nodes *= GROWTH;
        m->next_bytes *= GROWTH;
    }
}

static int safe_point_body(lua_State *L) {
    luop_safe_point(L);
    return 0;
}

void uopdb_lua_safe_point(lua_State *L) {
    lua_getfield(L, LUA_REGISTRYINDEX, "uopdb.module");
    bool open = lua_istable(L, -1);
    lua_pop(L, 1);
    if (!open) return;
    /* protected: nothing is there to catch an error between two inputs */
    lua_pushcfunction(L, safe_point_body);
    if (lua_pcall(L, 0, 0, 0) != LUA_OK) lua_pop(L, 1);
}

void luop_memory_init(LuaMemory *m) {
    memset(m, 0, sizeof *m);
    m->next_nodes = MIN_NODES;
    m->next_bytes = MIN_BYTES;
}

/* uop.compact() -> {nodes=, buffers=, bytes=}: a compaction now (after a
 * full collection), with the nodes, buffers and host bytes it freed */
static int l_compact(lua_State *L) {
    LuaMemory *m = luop_memory(L);
    if (m->busy || in_finalizer(L))
        return luaL_error(L, "uop.compact: not possible while a rewrite, breakpoint or finalizer is running");
    CompactReport rep;
    if (!compact(L, m, &rep)) return luaL_error(L, "uop.compact: out of memory");
    lua_createtable(L, 0, 3);
    lua_pushinteger(L, (lua_Integer)rep.nodes);
    lua_setfield(L, -2, "nodes");
    lua_pushinteger(L, (lua_Integer)rep.buffers);
    lua_setfield(L, -2, "buffers");
    lua_pushinteger(L, (lua_Integer)rep.bytes);
    lua_setfield(L, -2, "bytes");
    return 1;
}

/* uop.memory() -> {nodes=, ids=, context_bytes=, buffers=, buffer_bytes=,
 * compactions=, nodes_freed=, buffers_freed=, bytes_freed=, next_nodes=,
 * sanitizer=}; sanitizer is true in a build under AddressSanitizer, whose
 * quarantine keeps freed memory resident for a while, so the process's
 * resident size says little there */
static int l_memory(lua_State *L) {
    LuaMemory *m = luop_memory(L);
    UCtx *c = luop_ctx(L);
    struct { const char *k; size_t v; } f[] = {
        {"nodes", uctx_live_nodes(c)},      {"ids", uctx_node_count(c)},
        {"context_bytes", uctx_bytes(c)},   {"buffers", luop_buffer_count(L)},
        {"buffer_bytes", luop_buffer_bytes(L)}, {"compactions", m->compactions},
        {"nodes_freed", m->nodes_freed},    {"buffers_freed", m->buffers_freed},
        {"bytes_freed", m->bytes_freed},    {"next_nodes", m->next_nodes},
    };
    lua_createtable(L, 0, (int)(sizeof f / sizeof *f));
    for (size_t i = 0; i < sizeof f / sizeof *f; i++) {
        lua_pushinteger(L, (lua_Integer)f[i].v);
        lua_setfield(L, -2, f[i].k);
    }
#if defined(__SANITIZE_ADDRESS__)
    lua_pushboolean(L, 1);
#else
    lua_pushboolean(L, 0);
#endif
    lua_setfield(L, -2, "sanitizer");
    return 1;
}

void luop_open_memory(lua_State *L) {
    lua_pushcfunction(L, l_compact);
    lua_setfield(L, -2, "compact");
    lua_pushcfunction(L, l_memory);
    lua_setfield(L, -2, "memory");
}
