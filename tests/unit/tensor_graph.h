/* tensor_graph.h - builders of tensor graphs as the Tensor front end makes
 * them (BUFFER on a DEVICE, movement ops with VCONST shapes, REDUCE_AXIS),
 * for the unit tests.  The including file defines `static UCtx *c;` and
 * `static const UOp *dev;` (a DEVICE node) before including it. */
#ifndef UOPDB_TEST_TENSOR_GRAPH_H
#define UOPDB_TEST_TENSOR_GRAPH_H
#include <stdint.h>
#include "core/ir/uop.h"

#define TG_UNUSED __attribute__((unused))

/* an index VCONST holding v[0..n) */
TG_UNUSED static const UOp *ivec(const int64_t *v, int n) {
    const Arg *items[16];
    for (int i = 0; i < n; i++) items[i] = arg_int(c, v[i]);
    return uop_new(c, OP_VCONST, dt_vec(DT_INDEX, n), NULL, 0, arg_tuple(c, items, (uint32_t)n));
}
/* BUFFER(UNIQUE(id), dev) of size elements */
TG_UNUSED static const UOp *buffer(int id, int64_t size, const DType *dt) {
    const UOp *u = uop_new(c, OP_UNIQUE, DT_VOID, NULL, 0, arg_int(c, id));
    const UOp *s[2] = {u, dev};
    return uop_new(c, OP_BUFFER, dt, s, 2, arg_int(c, size));
}
/* RESHAPE / EXPAND with the shape as a source */
TG_UNUSED static const UOp *mop(Op op, const UOp *x, const int64_t *v, int n) {
    const UOp *s[2] = {x, ivec(v, n)};
    return uop_new(c, op, x->dtype, s, 2, NULL);
}
/* PAD / SHRINK with two vectors as sources */
TG_UNUSED static const UOp *mop2(Op op, const UOp *x, const int64_t *a, const int64_t *b, int n) {
    const UOp *s[3] = {x, ivec(a, n), ivec(b, n)};
    return uop_new(c, op, x->dtype, s, 3, NULL);
}
/* PERMUTE / FLIP with the order or the flags as the arg */
TG_UNUSED static const UOp *with_arg_ints(Op op, const UOp *x, const int64_t *v, int n) {
    const Arg *items[16];
    for (int i = 0; i < n; i++) items[i] = op == OP_FLIP ? arg_bool(c, v[i] != 0) : arg_int(c, v[i]);
    return uop_new(c, op, x->dtype, &x, 1, arg_tuple(c, items, (uint32_t)n));
}
/* REDUCE_AXIS(rop, axes), keeping reduced axes as 1 */
TG_UNUSED static const UOp *reduce(Op rop, const UOp *x, const int64_t *axes, int n) {
    const Arg *ax[16];
    for (int i = 0; i < n; i++) ax[i] = arg_int(c, axes[i]);
    const Arg *items[2] = {arg_op(c, rop), arg_tuple(c, ax, (uint32_t)n)};
    return uop_new(c, OP_REDUCE_AXIS, x->dtype, &x, 1, arg_tuple(c, items, 2));
}

#endif
