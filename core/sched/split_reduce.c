/* split_reduce.c - the first thing step 1 (realize) does: a reduction of
 * many elements into few is split into two kernels, as v0.12.0's
 * split_reduceop (its earliest rewrites) splits it.
 *
 * A REDUCE_AXIS whose source has at least SPLIT_THRESHOLD times as many
 * elements as its result is split on the first reduced axis that divides by
 * some d (the largest of min(256, 2^22 / result elements) down to 8) and
 * whose index is not a broadcast: the axis of size n becomes (d, n/d), the
 * d dim moves last, the original axes are reduced (d partial results per
 * output element, in a buffer of their own: CONTIGUOUS), and a second
 * REDUCE_AXIS folds the d partials.  The new inner reduction is examined
 * again, so a huge one splits more than once.  A sum of 2^20 floats becomes
 * 256 sums of 4096 and a sum of those 256: two kernels, the first one with
 * 256 independent accumulators, which is also what makes it fast. */
#include <stdlib.h>
#include <string.h>
#include "schedule_internal.h"

#define SPLIT_THRESHOLD 32768
#define SPLIT_MAX 256
#define SPLIT_MIN 8
#define SPLIT_OUTPUT_CAP ((int64_t)1 << 22)

static const UOp *reduce_axis(UCtx *c, const UOp *x, const Arg *op, const Arg *axes) {
    const Arg *items[2] = {op, axes};
    return uop_new(c, OP_REDUCE_AXIS, x->dtype, &x, 1, arg_tuple(c, items, 2));
}

/* Which dims of x its base reads by an index that varies with the dim:
 * x's dims get RANGEs, the indices are pushed down x's movement ops as
 * rangeify pushes them (a broadcast dim reads index 0), and a dim is live
 * when its RANGE is left in the base's indices.  false with st->err set
 * when building the indices fails. */
static bool live_dims(SchedState *st, const UOp *x, bool *live) {
    UCtx *c = st->c;
    const Shape *xs = sched_shape(st, x);
    const UOp *idx[SHAPE_MAX_DIMS], *sidx[SHAPE_MAX_DIMS], *zero = uop_const_int(c, DT_INDEX, 0);
    const UOp *ranges[SHAPE_MAX_DIMS] = {NULL};
    for (int d = 0; d < xs->ndim; d++) {
        live[d] = false;
        if (xs->d[d] > 1) ranges[d] = uop_range(c, uop_const_int(c, DT_INDEX, xs->d[d]), d, AXIS_LOOP);
        idx[d] = ranges[d] ? ranges[d] : zero;
        if (!idx[d]) return sched_fail(st, x, "split reduce: %s", uctx_error(c));
    }
    int n = xs->ndim;
    for (const UOp *m = x; op_is(uop_op(m), OPF_MOVEMENT); m = m->src[0]) {
        const Shape *in = sched_shape(st, m->src[0]);
        /* a PAD moves the index but keeps its range (its gate aside) */
        if (uop_op(m) == OP_PAD) memcpy(sidx, idx, (size_t)in->ndim * sizeof *idx);
        else if (!sched_movement_indices(st, m, idx, sidx)) return false;
        n = in->ndim;
        for (int d = 0; d < n; d++) idx[d] = sidx[d];
    }
    if (n == 0) return true;
    const UOp *all = uop_intern(c, OP_SINK, DT_VOID, idx, n, NULL, NULL);
    size_t nt = 0;
    const UOp **topo = all ? uop_toposort(all, &nt) : NULL;
    if (!topo) return sched_fail(st, x, "split reduce: out of memory");
    for (size_t i = 0; i < nt; i++)
        for (int d = 0; d < xs->ndim; d++)
            if (topo[i] == ranges[d]) live[d] = true;
    free(topo);
    return true;
}

/* The split form of REDUCE_AXIS r, or r itself when it is not split;
 * NULL with st->err set on failure. */
static const UOp *split_one(SchedState *st, const UOp *r) {
    UCtx *c = st->c;
    const UOp *x = r->src[0];
    const Shape *xs = sched_shape(st, x), *rs = sched_shape(st, r);
    int64_t out_n = shape_numel(rs);
    if (out_n == 0 || xs->ndim >= SHAPE_MAX_DIMS || shape_numel(xs) / out_n < SPLIT_THRESHOLD) return r;
    bool live[SHAPE_MAX_DIMS];
    if (!live_dims(st, x, live)) return NULL;
    const Arg *axes = r->arg->items[1];
    int64_t top = SPLIT_OUTPUT_CAP / out_n < SPLIT_MAX ? SPLIT_OUTPUT_CAP / out_n : SPLIT_MAX;
    int dim = -1;
    int64_t divisor = 0;
    for (uint32_t a = 0; a < axes->n && dim < 0; a++) {
        int i = (int)axes->items[a]->v.i;
        for (int64_t d = top; d >= SPLIT_MIN && dim < 0; d--)
            if (xs->d[i] % d == 0 && live[i]) dim = i, divisor = d;
    }
    if (dim < 0) return r;
    /* x.reshape(.., d, n/d, ..).permute(the d dim last) */
    int64_t shape[SHAPE_MAX_DIMS];
    const Arg *order[SHAPE_MAX_DIMS];
    int n = 0;
    for (int i = 0; i < xs->ndim; i++) {
        if (i == dim) shape[n++] = divisor, shape[n++] = xs->d[i] / divisor;
        else shape[n++] = xs->d[i];
    }
    for (int i = 0, k = 0; i < n; i++)
        if (i != dim) order[k++] = arg_int(c, i);
    order[n - 1] = arg_int(c, dim);
    const UOp *rsrc[2] = {x, sched_shape_vector(c, shape, n)};
    const UOp *reshaped = rsrc[1] ? uop_new(c, OP_RESHAPE, x->dtype, rsrc, 2, NULL) : NULL;
    const UOp *permuted = reshaped ? uop_new(c, OP_PERMUTE, x->dtype, &reshaped, 1, arg_tuple(c, order, (uint32_t)n)) : NULL;
    /* reduce the original axes, keep the d partials in a buffer, reduce them */
    const UOp *partial = permuted ? reduce_axis(c, permuted, r->arg->items[0], axes) : NULL;
    const UOp *kept = partial ? uop_new(c, OP_CONTIGUOUS, x->dtype, &partial, 1, NULL) : NULL;
    const Arg *last = arg_int(c, rs->ndim);
    const UOp *folded = kept ? reduce_axis(c, kept, r->arg->items[0], arg_tuple(c, &last, 1)) : NULL;
    const UOp *back[2] = {folded, sched_shape_vector(c, rs->d, rs->ndim)};
    const UOp *out = folded && back[1] ? uop_new_tagged(c, OP_RESHAPE, r->dtype, back, 2, NULL, r->tag) : NULL;
    if (!out) return sched_fail(st, r, "split reduce: %s", uctx_error(c)), NULL;
    SCHED_NOTE(st, "split_reduceop", r, out);
    return out;
}

bool sched_split_reduces(SchedState *st, bool *changed) {
    *changed = false;
    U64Map map = {0};
    bool ok = true;
    for (size_t i = 0; ok && i < st->n; i++) {
        const UOp *u = st->topo[i];
        if (uop_op(u) != OP_REDUCE_AXIS) continue;
        const UOp *s = split_one(st, u);
        if (!s) ok = false;
        else if (s != u) ok = u64map_put(&map, u->id, s) || sched_fail(st, u, "out of memory");
    }
    if (ok && map.count) {
        const UOp *sink = sched_substitute(st->c, st->sink, &map);
        if (!sink) ok = sched_fail(st, st->sink, "split reduce: %s", uctx_error(st->c));
        else st->sink = sink, *changed = true;
    }
    u64map_free(&map);
    return ok;
}
