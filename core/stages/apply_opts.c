/* apply_opts.c - stage 7: the opts asked for by hand, applied in order as
 * tinygrad's Scheduler.shift_to does.  UPCAST acts on an output range
 * (GLOBAL/LOCAL/LOOP), UNROLL on a reduce range (GROUP_REDUCE/REDUCE); the
 * opt's axis counts those ranges (size > 1) in axis-id order.  A range r of
 * size N split by `amount` becomes
 *
 *   r_outer * amount + r_new     r_outer: size N/amount, r's axis id and type
 *                                r_new:   size amount, a fresh axis id, UPCAST/UNROLL
 *
 * and where r ends (END/REDUCE range lists) it is replaced by r_outer, r_new.
 * When N == amount the outer range would have size 1: it is left out, and r
 * becomes r_new.  THREAD (an output range, at most one) splits at the top
 * instead, as tinygrad's shift_to(top=True):
 *
 *   r_thread * (N/amount) + r_inner   r_thread: size amount, a fresh id, THREAD
 *                                     r_inner:  size N/amount, r's id and type
 *
 * so each core gets a contiguous block.  No opts: the root is returned
 * unchanged. */
#include <stdlib.h>
#include "early.h"
#include "stages.h"

#define MAX_AXES 64
#define MAX_UPCAST 16   /* tinygrad's limits */
#define MAX_UNROLL 32
#define MAX_THREADS 64

static AxisType axis_type_of(const UOp *r) {
    const Arg *a = r->arg;
    if (!a || a->kind != ARG_TUPLE || !a->n || !a->items[a->n - 1] || a->items[a->n - 1]->kind != ARG_AXIS)
        return AXIS_COUNT;
    return a->items[a->n - 1]->v.axis;
}

static int64_t axis_id_of(const UOp *r) {
    const Arg *a = r->arg;
    return a && a->kind == ARG_TUPLE && a->n && a->items[0] && a->items[0]->kind == ARG_INT ? a->items[0]->v.i : -1;
}

/* axis-id order: the int items of the arg, compared in turn */
static int cmp_axis(const void *pa, const void *pb) {
    const Arg *a = (*(const UOp *const *)pa)->arg, *b = (*(const UOp *const *)pb)->arg;
    uint32_t n = a->n < b->n ? a->n : b->n;
    for (uint32_t i = 0; i < n; i++) {
        const Arg *x = a->items[i], *y = b->items[i];
        if (!x || !y || x->kind != ARG_INT || y->kind != ARG_INT) break;
        if (x->v.i != y->v.i) return x->v.i < y->v.i ? -1 : 1;
    }
    return (a->n > b->n) - (a->n < b->n);
}

static bool acts_on(OptOp op, AxisType t) {
    if (op == OPT_UPCAST || op == OPT_THREAD) return t == AXIS_GLOBAL || t == AXIS_LOCAL || t == AXIS_LOOP;
    return t == AXIS_GROUP_REDUCE || t == AXIS_REDUCE;
}

static bool range_size(const UOp *r, int64_t *out) { return uop_const_int_value(r->src[0], out); }

/* Applies one opt; NULL + sc->err when it does not apply. */
static const UOp *apply_one(StageCtx *sc, const UOp *root, const KernelOpt *o) {
    UCtx *c = sc->c;
    const char *name = opt_op_name(o->op);
    const char *kind = o->op == OPT_UNROLL ? "reduce" : "output";
    size_t nr;
    const UOp **all = early_all_ranges(root, &nr);
    const UOp *axes[MAX_AXES];
    int naxes = 0;
    int64_t next_id = 0;
    for (size_t i = 0; i < nr; i++) {
        const UOp *r = all[i];
        int64_t id = axis_id_of(r), size;
        if (id >= next_id) next_id = id + 1;
        if (o->op == OPT_THREAD && axis_type_of(r) == AXIS_THREAD) {
            free(all);
            return stage_fail(sc, "THREAD: the kernel is already split over cores (range %%%u)", r->id);
        }
        /* a range of symbolic size counts (it is > 1 as far as we know) */
        if (acts_on(o->op, axis_type_of(r)) && (!range_size(r, &size) || size > 1) && naxes < MAX_AXES)
            axes[naxes++] = r;
    }
    free(all);
    qsort(axes, (size_t)naxes, sizeof *axes, cmp_axis);
    if (o->axis < 0 || o->axis >= naxes)
        return stage_fail(sc, "%s axis %d: the kernel has %d %s range%s", name, o->axis, naxes, kind,
                          naxes == 1 ? "" : "s");
    const UOp *r = axes[o->axis];
    int64_t size;
    if (!range_size(r, &size))
        return stage_fail(sc, "%s axis %d: range %%%u has a symbolic size", name, o->axis, r->id);
    int64_t amount = o->amount == 0 ? size : o->amount;
    if (amount < 1) return stage_fail(sc, "%s axis %d: amount %d is not positive", name, o->axis, o->amount);
    if (amount > size)
        return stage_fail(sc, "%s axis %d: amount %lld is more than the size %lld of range %%%u", name, o->axis,
                          (long long)amount, (long long)size, r->id);
    if (size % amount)
        return stage_fail(sc, "%s axis %d: amount %lld does not divide the size %lld of range %%%u", name, o->axis,
                          (long long)amount, (long long)size, r->id);
    int64_t limit = o->op == OPT_UPCAST ? MAX_UPCAST : o->op == OPT_UNROLL ? MAX_UNROLL : MAX_THREADS;
    if (amount > limit)
        return stage_fail(sc, "%s axis %d: amount %lld is more than %lld", name, o->axis, (long long)amount,
                          (long long)limit);

    const DType *idt = r->dtype;
    AxisType at = o->op == OPT_UPCAST ? AXIS_UPCAST : o->op == OPT_UNROLL ? AXIS_UNROLL : AXIS_THREAD;
    const UOp *new_rng = uop_range(c, uop_const_int(c, idt, amount), next_id, at);
    if (o->op == OPT_THREAD && size / amount > 1) {
        /* top split: r_thread * (N/amount) + r_inner */
        const UOp *src[r->nsrc];
        src[0] = uop_const_int(c, idt, size / amount);
        for (int i = 1; i < r->nsrc; i++) src[i] = r->src[i];
        const UOp *inner = src[0] ? uop_with_src(c, r, src, r->nsrc) : NULL;
        const UOp *k = uop_const_int(c, idt, size / amount);
        const UOp *to = inner && k && new_rng ? uop_binary(c, OP_ADD, uop_binary(c, OP_MUL, new_rng, k), inner) : NULL;
        const UOp *tparts[2] = {new_rng, inner};
        const UOp *out = to ? early_replace_range(c, root, r, to, tparts, 2) : NULL;
        if (!out) return stage_fail(sc, "%s axis %d on range %%%u: %s", name, o->axis, r->id, uctx_error(c));
        return out;
    }
    const UOp *to = new_rng, *parts[2];
    int nparts = 0;
    if (size / amount > 1) {
        const UOp *src[r->nsrc];
        src[0] = uop_const_int(c, idt, size / amount);
        for (int i = 1; i < r->nsrc; i++) src[i] = r->src[i];
        const UOp *outer = src[0] ? uop_with_src(c, r, src, r->nsrc) : NULL;
        const UOp *k = uop_const_int(c, idt, amount);
        to = outer && k && new_rng ? uop_binary(c, OP_ADD, uop_binary(c, OP_MUL, outer, k), new_rng) : NULL;
        parts[nparts++] = outer;
    }
    parts[nparts++] = new_rng;
    const UOp *out = to ? early_replace_range(c, root, r, to, parts, nparts) : NULL;
    if (!out) return stage_fail(sc, "%s axis %d on range %%%u: %s", name, o->axis, r->id, uctx_error(c));
    return out;
}

const UOp *stage_apply_opts(StageCtx *sc, const UOp *root) {
    for (int i = 0; i < sc->nopts && root; i++) root = apply_one(sc, root, &sc->opts[i]);
    return root;
}
