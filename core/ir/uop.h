/* uop.h - the IR node.  A UOp is immutable (op, dtype, src[], arg, tag),
 * hash-consed in a context (UCtx): building the same node twice returns the
 * same pointer, so structural equality is pointer equality.  Each node gets a
 * stable id (creation order, never reused) that printers name it by. */
#ifndef UOPDB_UOP_H
#define UOPDB_UOP_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "ops.h"
#include "dtype.h"
#include "arg.h"

typedef struct UCtx UCtx;

/* 48 bytes before the sources, so a node of two sources is one 64-byte
 * cache line (nodes are allocated line-aligned). */
typedef struct UOp {
    uint32_t id;
    uint8_t op;           /* Op */
    uint8_t bounds_state; /* low 2 bits: bounds unknown/computed; above: cached symbolic facts (core/sym/bounds.h) */
    uint16_t nsrc;
    const DType *dtype;
    const Arg *arg;       /* NULL: None */
    const Arg *tag;       /* NULL: no tag */
    /* lazily computed value bounds (see core/sym/bounds.h) */
    int64_t vmin, vmax;
    const struct UOp *src[];
} UOp;

UCtx *uctx_new(void);
void uctx_free(UCtx *c);
/* The message of the last failed call on this context ("" if none). */
const char *uctx_error(const UCtx *c);
void uctx_clear_error(UCtx *c);
void uctx_set_error(UCtx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Ids handed out so far (the next id); nodes a compaction freed count too. */
size_t uctx_node_count(const UCtx *c);
/* Nodes in the context now (made and not freed by a compaction). */
size_t uctx_live_nodes(const UCtx *c);
size_t uctx_bytes(const UCtx *c);     /* memory held by nodes, args and tables */
/* Node lookups that reached the node set's interning (the constant cache
 * answers before it), and how many of them the recent-node table answered. */
size_t uctx_lookups(const UCtx *c);
size_t uctx_recent_hits(const UCtx *c);
/* Node by stable id, NULL if none. */
const UOp *uctx_node(const UCtx *c, uint32_t id);

/* Interns a node after checking arity and dtypes; returns NULL and sets the
 * context error when the node is ill-formed.  Never aborts. */
const UOp *uop_new(UCtx *c, Op op, const DType *dt, const UOp *const *src, int nsrc, const Arg *arg);
const UOp *uop_new_tagged(UCtx *c, Op op, const DType *dt, const UOp *const *src, int nsrc, const Arg *arg,
                          const Arg *tag);
/* Interns without the well-formedness check (for the rewrite engine
 * rebuilding a node whose sources changed, and for parsers that report
 * errors themselves). */
const UOp *uop_intern(UCtx *c, Op op, const DType *dt, const UOp *const *src, int nsrc, const Arg *arg,
                      const Arg *tag);
/* Checks a would-be node; returns false and sets the context error if bad. */
bool uop_check(UCtx *c, Op op, const DType *dt, const UOp *const *src, int nsrc, const Arg *arg);
/* The same node with other sources (same op, dtype, arg, tag). */
const UOp *uop_with_src(UCtx *c, const UOp *u, const UOp *const *src, int nsrc);

static inline Op uop_op(const UOp *u) { return (Op)u->op; }

/* ---- compaction (uop_compact.c) ----
 * Frees the nodes no root reaches: mark every node something still holds
 * (uctx_mark: it and, at the sweep, everything below it), then uctx_sweep.
 * Live nodes stay where they are (pointers stay valid), ids are never
 * reused, and freed nodes' memory goes to later nodes; the args no live
 * node uses any more are freed too.  Nothing may build
 * nodes between uctx_marks_new and uctx_sweep; whoever holds a node that
 * is not marked must not use it after the sweep (caches are cleared). */
typedef struct UCtxMarks UCtxMarks;
UCtxMarks *uctx_marks_new(UCtx *c);   /* NULL when out of memory */
void uctx_mark(UCtxMarks *m, const UOp *u); /* NULL is ignored */
/* Propagates the marks to sources (one pass down the ids, no recursion),
 * frees the unmarked nodes, rebuilds the node set and frees m.  Returns the
 * number of nodes freed. */
size_t uctx_sweep(UCtx *c, UCtxMarks *m);
void uctx_marks_free(UCtxMarks *m);   /* abandons a mark without sweeping */
/* totals over the context's life: compactions, nodes and args they freed */
size_t uctx_compactions(const UCtx *c);
size_t uctx_freed_nodes(const UCtx *c);
size_t uctx_freed_args(const UCtx *c);
/* Args in the context now. */
size_t uctx_live_args(const UCtx *c);

/* ---- convenience constructors (all checked; NULL + error on bad input) ---- */
const UOp *uop_const_int(UCtx *c, const DType *dt, int64_t v);
const UOp *uop_const_float(UCtx *c, const DType *dt, double v);
const UOp *uop_const_bool(UCtx *c, bool v);
const UOp *uop_const_arg(UCtx *c, const DType *dt, const Arg *v); /* CONST with any arg (e.g. Invalid) */
/* DEFINE_VAR of dtype index with arg (name, lo, hi) */
const UOp *uop_var(UCtx *c, const char *name, int64_t lo, int64_t hi);
/* RANGE(end) of dtype index with arg (axis_id, axis_type) */
const UOp *uop_range(UCtx *c, const UOp *end, int64_t axis_id, AxisType at);
/* ALU ops: dtype inferred (comparisons give bool, WHERE gives the branch type) */
const UOp *uop_alu(UCtx *c, Op op, const UOp *const *src, int nsrc);
const UOp *uop_binary(UCtx *c, Op op, const UOp *a, const UOp *b);
const UOp *uop_unary(UCtx *c, Op op, const UOp *a);
const UOp *uop_where(UCtx *c, const UOp *cond, const UOp *a, const UOp *b);
const UOp *uop_cast(UCtx *c, const UOp *a, const DType *dt);
const UOp *uop_sink(UCtx *c, const UOp *const *src, int nsrc);

/* value of a CONST as a number (ints, bools, floats); false if not a CONST
 * or its arg is not numeric */
bool uop_const_value(const UOp *u, double *out);
bool uop_const_int_value(const UOp *u, int64_t *out);

/* ---- traversal ---- */
/* Post-order toposort (sources before users), each node once.  Returns a
 * malloc'd array of *n nodes (the root last), or NULL when out of memory. */
const UOp **uop_toposort(const UOp *root, size_t *n);
/* 1 when node is in the graph under root, 0 when not, -1 out of memory */
int uop_graph_has(const UOp *root, const UOp *node);
/* The same, not entering the sources of nodes for which leaf(u, ud) is true
 * (the scheduler stops at other kernels' buffers); leaf must not toposort. */
const UOp **uop_toposort_gated(const UOp *root, bool (*leaf)(const UOp *u, void *ud), void *ud, size_t *n);
/* Number of distinct nodes reachable from root. */
size_t uop_graph_size(const UOp *root);
/* Nodes on the longest path from root down to a leaf (1 for a leaf), the
 * depth a recursive walk would reach; 0 when out of memory. */
size_t uop_graph_depth(const UOp *root);

#endif
