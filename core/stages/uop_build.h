/* uop_build.h - small node builders the late stages share, with tinygrad's
 * shortcuts: a cast to the same dtype is the node itself, a scalar target
 * dtype takes the source's vector width, GEP of one lane of a VECTORIZE,
 * VCONST or CONST is that lane directly.  Every builder returns NULL when a
 * source is NULL or the node is ill-formed (the context error says why). */
#ifndef UOPDB_STAGE_UOP_BUILD_H
#define UOPDB_STAGE_UOP_BUILD_H
#include "../ir/uop.h"

static inline const UOp *ub_cast(UCtx *c, const UOp *x, const DType *dt) {
    if (!x || !dt) return NULL;
    if (dt->kind == DTK_SCALAR && dt_vcount(x->dtype) > 1 && !dt_is_ptr(x->dtype)) dt = dt_vec(dt, x->dtype->count);
    if (x->dtype == dt) return x;
    return uop_new(c, OP_CAST, dt, &x, 1, NULL);
}

/* lane i of x */
static inline const UOp *ub_gep1(UCtx *c, const UOp *x, int i) {
    if (!x) return NULL;
    if (uop_op(x) == OP_VECTORIZE && i < x->nsrc) return x->src[i];
    if (uop_op(x) == OP_VCONST && x->arg && i < (int)x->arg->n) return uop_const_arg(c, x->dtype->scalar, x->arg->items[i]);
    if (uop_op(x) == OP_CONST) return uop_const_arg(c, x->dtype->scalar, x->arg);
    const Arg *a = arg_int(c, i);
    const DType *dt = dt_is_ptr(x->dtype) ? x->dtype->ptr_scalar : x->dtype->scalar;
    return uop_new(c, OP_GEP, dt, &x, 1, arg_tuple(c, &a, 1));
}

/* lanes idx[0..n) of x: one lane is ub_gep1, more a vector GEP */
static inline const UOp *ub_gep(UCtx *c, const UOp *x, const int *idx, int n) {
    if (!x || n < 1) return NULL;
    if (n == 1) return ub_gep1(c, x, idx[0]);
    const Arg *items[256];
    if (n > 256) { uctx_set_error(c, "GEP of %d lanes is too wide", n); return NULL; }
    for (int i = 0; i < n; i++) items[i] = arg_int(c, idx[i]);
    const DType *dt = dt_is_ptr(x->dtype) ? dt_ptr_vec(x->dtype->ptr_scalar, n) : dt_vec(x->dtype->scalar, n);
    return uop_new(c, OP_GEP, dt, &x, 1, arg_tuple(c, items, (uint32_t)n));
}

static inline const UOp *ub_node(UCtx *c, Op op, const DType *dt, const UOp *const *src, int n, const Arg *arg) {
    for (int i = 0; i < n; i++)
        if (!src[i]) return NULL;
    return uop_new(c, op, dt, src, n, arg);
}

/* INDEX(buf, i...) with dtype dt (the pointer for ptr=True, the element for a value read) */
static inline const UOp *ub_index(UCtx *c, const DType *dt, const UOp *buf, const UOp *i, const UOp *gate) {
    const UOp *s[3] = {buf, i, gate};
    return ub_node(c, OP_INDEX, dt, s, gate ? 3 : 2, NULL);
}

#endif
