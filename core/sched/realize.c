/* realize.c - scheduler step 1: which tensor nodes get a buffer of their own.
 *
 * The rule:
 *   - every source of the SINK is materialised (it is an output);
 *   - every CONTIGUOUS is materialised (the user asked for it);
 *   - a REDUCE_AXIS is materialised when, on some path from it up to a
 *     materialised node (that node included), a movement op re-indexes its
 *     result: an EXPAND that broadcasts, a PAD, a SHRINK, a PERMUTE or FLIP
 *     that moves elements, or a RESHAPE that does more than add or drop
 *     size-1 dims.
 *   - input BUFFERs are already materialised; nothing else is.
 * Everything else is computed inline by the kernel that reads it.  So a
 * reduction stays inside the kernel when it is only combined elementwise at
 * its own index (matmul: one kernel, the sum over the shared axis inside),
 * and gets its own kernel when its result would otherwise be recomputed for
 * every element it is broadcast to (softmax: max, sum of exp, divide).
 * Elementwise work is recomputed where it is read (as tinygrad does). */
#include <stdlib.h>
#include "schedule_internal.h"

/* does the movement op x read its source at other positions than its own? */
static bool reindexes(const SchedState *st, const UOp *x) {
    Op op = uop_op(x);
    if (!op_is(op, OPF_MOVEMENT)) return false;
    const Shape *in = sched_shape(st, x->src[0]), *out = sched_shape(st, x);
    switch (op) {
    case OP_RESHAPE: return !sched_pure_unit_reshape(in, out);
    case OP_EXPAND: case OP_SHRINK: case OP_PAD: return !shape_equal(in, out);
    case OP_PERMUTE: {
        /* a permutation that only moves size-1 dims keeps the element order */
        int last = -1;
        for (uint32_t i = 0; i < x->arg->n; i++) {
            int64_t p = x->arg->items[i]->v.i;
            if (in->d[p] == 1) continue;
            if (p < last) return true;
            last = (int)p;
        }
        return false;
    }
    case OP_FLIP:
        for (uint32_t i = 0; i < x->arg->n; i++) {
            const Arg *f = x->arg->items[i];
            if ((f->kind == ARG_BOOL ? f->v.b : f->v.i != 0) && in->d[i] > 1) return true;
        }
        return false;
    default: return true;
    }
}

/* the sources of x that are tensors (a movement op's sizes are not) */
static int tensor_srcs(const UOp *x) { return op_is(uop_op(x), OPF_MOVEMENT) ? 1 : x->nsrc; }

bool sched_realize(SchedState *st) {
    size_t n = st->n;
    bool *reindexed = calloc(n ? n : 1, sizeof *reindexed);
    if (!reindexed) return sched_fail(st, st->sink, "out of memory");
    for (int i = 0; i < st->sink->nsrc; i++) {
        int p = sched_pos(st, st->sink->src[i]);
        if (!st->materialised[p]) SCHED_NOTE(st, "realize_output", st->sink->src[i], st->sink->src[i]);
        st->materialised[p] = true;
    }
    /* consumers come after their sources in the toposort, so walking it
     * backwards sees every path above a node before the node itself */
    for (size_t i = n; i-- > 0;) {
        const UOp *x = st->topo[i];
        Op op = uop_op(x);
        if (op == OP_CONTIGUOUS && !st->materialised[i]) {
            st->materialised[i] = true;
            SCHED_NOTE(st, "realize_contiguous", x, x);
        }
        if (op == OP_REDUCE_AXIS && !st->materialised[i] && reindexed[i]) {
            st->materialised[i] = true;
            SCHED_NOTE(st, "realize_reduce", x, x);
        }
        if (st->shapes[i].ndim < 0 && op != OP_SINK) continue;
        /* a materialised node ends the paths through it, but re-indexes too */
        bool above = op != OP_SINK && (reindexes(st, x) || (!st->materialised[i] && reindexed[i]));
        for (int k = 0; k < tensor_srcs(x); k++) {
            int p = sched_pos(st, x->src[k]);
            if (p >= 0) reindexed[p] |= above;
        }
    }
    free(reindexed);
    int count = 0;
    for (size_t i = 0; i < n; i++) count += st->materialised[i] && uop_op(st->topo[i]) != OP_SINK;
    st->mat = malloc((count ? (size_t)count : 1) * sizeof *st->mat);
    st->mat_of = malloc((n ? n : 1) * sizeof *st->mat_of);
    if (!st->mat || !st->mat_of) return sched_fail(st, st->sink, "out of memory");
    for (size_t i = 0; i < n; i++) {
        st->mat_of[i] = -1;
        if (st->materialised[i] && uop_op(st->topo[i]) != OP_SINK) {
            st->mat_of[i] = st->nmat;
            st->mat[st->nmat++] = st->topo[i];
        }
    }
    return true;
}
