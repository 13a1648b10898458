/* lua_internal.h - what the files of the Lua binding share: the per-state
 * context, boxes for UOps and dtypes, conversion of args between Lua and C,
 * and the functions that add each part to the module table. */
#ifndef UOPDB_LUA_INTERNAL_H
#define UOPDB_LUA_INTERNAL_H
#include <lua.h>
#include <stdbool.h>
#include <lauxlib.h>
#include "../core/ir/uop.h"

#define LUOP_UOP_MT "uopdb.UOp"
#define LUOP_DTYPE_MT "uopdb.DType"
#define LUOP_OP_MT "uopdb.Op"
#define LUOP_AXIS_MT "uopdb.AxisType"
#define LUOP_SENTINEL_MT "uopdb.Sentinel"
#include "../core/rewrite/pattern.h"
#define LUOP_RULES_MT "uopdb.RuleSet"
/* the rule set at idx: a uop.rules{} set, or a table of rules made into one
 * (replacing it on the stack); raises otherwise */
RuleSet *luop_to_rules(lua_State *L, int idx);
/* the options of a diff (uop.diff, k:diff) at t: {context=, side=, width=,
 * color=, label_a=, label_b=, stats=}; unknown keys are errors */
struct DiffOpts;
void luop_diff_opts(lua_State *L, int t, struct DiffOpts *o, bool *want_stats);

/* ---- context (lua_module.c) ---- */
UCtx *luop_ctx(lua_State *L);
/* Raises the context's error message as a Lua error (never returns). */
int luop_ctx_error(lua_State *L);

/* ---- memory (lua_memory.c) ---- */
typedef struct LuaMemory {
    int busy;                 /* >0: C code below holds nodes Lua does not (a
                                 rewrite calling a Lua function): no compaction */
    size_t host_bytes;        /* host data of buffers (kept by lua_tensor.c) */
    size_t next_nodes, next_bytes; /* compact when live nodes or host data reach these */
    size_t compactions, nodes_freed, buffers_freed, bytes_freed; /* totals */
} LuaMemory;
void luop_memory_init(LuaMemory *m);
LuaMemory *luop_memory(lua_State *L);   /* lua_module.c: the state's, beside its context */
/* A safe point: compacts when memory has grown enough (see lua_memory.c).
 * Call only at the start of a function called from Lua, before it holds
 * any node Lua does not. */
void luop_safe_point(lua_State *L);
/* Marks for a compaction: the nodes of every live UOp box (lua_uop.c), of
 * every live program (lua_program.c). */
void luop_mark_boxes(lua_State *L, UCtxMarks *m);
void luop_mark_programs(lua_State *L, UCtxMarks *m);
void luop_open_memory(lua_State *L);

/* ---- UOp boxes (lua_uop.c): one box per node, so == is identity ---- */
void luop_push(lua_State *L, const UOp *u);      /* pushes nil for NULL */
/* Pushes u, or raises the context error when u is NULL (a failed build). */
void luop_push_result(lua_State *L, const UOp *u);
const UOp *luop_test(lua_State *L, int idx);      /* NULL if not a UOp */
const UOp *luop_test_tensor(lua_State *L, int idx); /* a UOp, or a Tensor's (its uop field); NULL if neither */
const UOp *luop_check(lua_State *L, int idx);     /* raises "UOp expected" */

/* A CONST of dtype dt from the number or boolean at idx (lua_build.c);
 * raises on a value the dtype cannot hold (a float too large for an int). */
const UOp *luop_const_number(lua_State *L, const DType *dt, int idx);

/* ---- quoting a user's string in a message (lua_quote.c) ---- */
/* Pushes s escaped onto one line and cut to a readable length; returns it. */
const char *luop_quote(lua_State *L, const char *s);
/* Pushes a one-line description of the value at idx for a message ("a
 * table", "a Tensor", a number, a quoted-safe string); returns it. */
const char *luop_describe(lua_State *L, int idx);

/* ---- dtypes (lua_dtype.c) ---- */
void luop_push_dtype(lua_State *L, const DType *dt);
const DType *luop_test_dtype(lua_State *L, int idx);   /* userdata only */
/* a dtype value or a dtype name ("float32", "int.vec(4)") */
const DType *luop_check_dtype(lua_State *L, int idx);

/* ---- args, ops, axis types, None/Invalid (lua_arg.c) ---- */
void luop_push_arg(lua_State *L, const Arg *a);
/* Converts the Lua value at idx; raises on a value that cannot be an arg. */
const Arg *luop_to_arg(lua_State *L, int idx);
/* an op value (uop.ops.ADD) or an op name ("ADD", "Ops.ADD") */
Op luop_check_op(lua_State *L, int idx);
AxisType luop_check_axis(lua_State *L, int idx);
void luop_push_op(lua_State *L, Op op);
void luop_push_axis(lua_State *L, AxisType a);

/* ---- the parts of the module; each adds its fields to the table on top ---- */
void luop_open_dtype(lua_State *L);
void luop_open_arg(lua_State *L);
void luop_open_uop(lua_State *L);
void luop_open_build(lua_State *L);
void luop_open_text(lua_State *L);
void luop_open_rules(lua_State *L);
/* pushes one rewrite of a trace as a table {rule, where = "file:line", before, after} */
struct TraceRewrite;
void luop_push_rewrite(lua_State *L, const struct TraceRewrite *w);
void luop_open_tensor(lua_State *L);   /* lua_tensor.c: buffers with host data, shapes */
void luop_open_compile(lua_State *L);  /* lua_compile.c: uop.compile, programs, kernels */
void luop_open_report(lua_State *L);   /* lua_report.c: p:report, p:export (after luop_open_compile) */
void luop_open_verify(lua_State *L);   /* lua_verify.c: uop.verify, uop.verify_stages, uop.spec_for_point */
void luop_open_find(lua_State *L);     /* lua_find.c: uop.match, u:match (after luop_open_uop) */
/* Work that handled Ctrl-C itself (a beam search keeps the best it found)
 * removes the stop hook the REPL set on L (uopdb_lua_set_stop_hook), so
 * its caller gets the result instead of an "interrupted!" error. */
void luop_interrupt_handled(lua_State *L);

/* The Lua state whose code a Lua rewrite function runs on while
 * uop.rewrite is active (rewrites may run inside coroutines). */
lua_State *luop_active_state(lua_State *fallback);
lua_State *luop_set_active_state(lua_State *L); /* returns the previous one */

#endif
