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
 * unchanged.
 *
 * The GPU target (StageCtx.target) first makes every output LOOP range a
 * GLOBAL one (tinygrad's convert_loop_to_global), then takes the opts of a
 * GPU renderer, with tinygrad's axis numbers (apply_opts_gpu.c picks the
 * range and checks the opt):
 *
 *   LOCAL    a GLOBAL/LOOP range split as UPCAST is, the inner part LOCAL
 *   GROUP    a REDUCE range split so, the inner part GROUP_REDUCE
 *   GROUPTOP the same, split at the top (the GROUP_REDUCE part outer)
 *   PADTO    a range rounded up to a multiple of amount; each buffer indexed
 *            by it gets the gate `r < old size`
 *   SWAP     two GLOBAL ranges exchange axis ids (amount: the other's axis)
 *   NOLOCALS no LOCAL or GROUP_REDUCE ranges may follow; stage 12 makes
 *            global ids without workgroups
 *
 * with tinygrad's checks (local memory of a grouped reduce within
 * GPU_SHARED_MAX, no group inside another reduce, padding a sum only when
 * zeros are safe, at most four times the work).  The cpu target takes
 * PADTO, SWAP and NOLOCALS the same way (SWAP then fails: its ranges are
 * LOOP, not GLOBAL), and refuses LOCAL, GROUP and GROUPTOP, which need
 * local memory. */
#include <stdlib.h>
#include "apply_opts.h"
#include "early.h"

#define MAX_UPCAST 16   /* tinygrad's limits */
#define MAX_UNROLL 32
#define MAX_THREADS 64

static bool acts_on(OptOp op, AxisType t) {
    if (op == OPT_UPCAST || op == OPT_THREAD) return t == AXIS_GLOBAL || t == AXIS_LOCAL || t == AXIS_LOOP;
    return t == AXIS_GROUP_REDUCE || t == AXIS_REDUCE;
}

static const UOp *shift_range(StageCtx *sc, const UOp *root, const KernelOpt *o, const UOp *r, int64_t amount);

/* Applies one opt; NULL + sc->err when it does not apply. */
static const UOp *apply_one(StageCtx *sc, const UOp *root, const KernelOpt *o, bool dont_use_locals) {
    const char *name = opt_op_name(o->op);
    if (sc->target == TARGET_GPU) {
        const UOp *r = NULL, *out = NULL;
        int64_t amount = 0;
        if (!opts_gpu_pick(sc, root, o, dont_use_locals, &r, &amount, &out)) return NULL;
        return out ? out : shift_range(sc, root, o, r, amount);
    }
    /* PADTO, SWAP and NOLOCALS are no split: they are done, and checked, as
     * for the gpu target (on the cpu one SWAP finds only LOOP ranges, and
     * NOLOCALS has no locals to forbid, as in tinygrad) */
    if (o->op == OPT_PADTO || o->op == OPT_SWAP || o->op == OPT_NOLOCALS) {
        const UOp *r = NULL, *out = NULL;
        int64_t amount = 0;
        return opts_gpu_pick(sc, root, o, dont_use_locals, &r, &amount, &out) ? out : NULL;
    }
    if (opt_op_gpu_only(o->op))
        return stage_fail(sc, "%s: not an opt of the cpu target (it needs a GPU's local memory: uop.compile(t, "
                          "{target = \"gpu\"}))", name);
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
        if (o->op == OPT_THREAD && range_axis_type(r) == AXIS_THREAD) {
            free(all);
            return stage_fail(sc, "THREAD: the kernel is already split over cores (range %%%u)", r->id);
        }
        /* a range of symbolic size counts (it is > 1 as far as we know) */
        if (acts_on(o->op, range_axis_type(r)) && (!range_size(r, &size) || size > 1) && naxes < MAX_AXES)
            axes[naxes++] = r;
    }
    free(all);
    qsort(axes, (size_t)naxes, sizeof *axes, range_ids_qsort_cmp);
    if (o->axis < 0 || o->axis >= naxes)
        return stage_fail(sc, "%s axis %d: the kernel has %d %s range%s", name, o->axis, naxes, kind,
                          naxes == 1 ? "" : "s");
    const UOp *r = axes[o->axis];
    int64_t size;
    if (!range_size(r, &size))
        return stage_fail(sc, "%s axis %d: range %%%u has a symbolic size", name, o->axis, r->id);
    return shift_range(sc, root, o, r, o->amount == 0 ? size : o->amount);
}

/* splits range r by amount as opt o asks (the checks of size and limits
 * here are the same for both targets) */
static const UOp *shift_range(StageCtx *sc, const UOp *root, const KernelOpt *o, const UOp *r, int64_t amount) {
    UCtx *c = sc->c;
    const char *name = opt_op_name(o->op);
    int64_t size, next_id = 0;
    if (!range_size(r, &size))
        return stage_fail(sc, "%s axis %d: range %%%u has a symbolic size", name, o->axis, r->id);
    size_t nr;
    const UOp **all = early_all_ranges(root, &nr);
    for (size_t i = 0; i < nr; i++)
        if (axis_id_of(all[i]) >= next_id) next_id = axis_id_of(all[i]) + 1;
    free(all);
    if (amount < 1) return stage_fail(sc, "%s axis %d: amount %d is not positive", name, o->axis, o->amount);
    if (amount > size)
        return stage_fail(sc, "%s axis %d: amount %lld is more than the size %lld of range %%%u", name, o->axis,
                          (long long)amount, (long long)size, r->id);
    if (size % amount)
        return stage_fail(sc, "%s axis %d: amount %lld does not divide the size %lld of range %%%u", name, o->axis,
                          (long long)amount, (long long)size, r->id);
    int64_t limit = o->op == OPT_UPCAST ? MAX_UPCAST : o->op == OPT_UNROLL ? MAX_UNROLL : o->op == OPT_THREAD ? MAX_THREADS : size;
    if (amount > limit)
        return stage_fail(sc, "%s axis %d: amount %lld is more than %lld", name, o->axis, (long long)amount,
                          (long long)limit);

    const DType *idt = r->dtype;
    AxisType at = o->op == OPT_UPCAST ? AXIS_UPCAST : o->op == OPT_UNROLL ? AXIS_UNROLL : o->op == OPT_THREAD ? AXIS_THREAD
                  : o->op == OPT_LOCAL ? AXIS_LOCAL : AXIS_GROUP_REDUCE;
    const UOp *new_rng = uop_range(c, uop_const_int(c, idt, amount), next_id, at);
    if ((o->op == OPT_THREAD || o->op == OPT_GROUPTOP) && size / amount > 1) {
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
    if (sc->target == TARGET_GPU) root = opts_loops_to_global(sc, root);
    bool dont_use_locals = false;
    for (int i = 0; i < sc->nopts && root; i++) {
        root = apply_one(sc, root, &sc->opts[i], dont_use_locals);
        dont_use_locals |= sc->opts[i].op == OPT_NOLOCALS;
    }
    return root;
}
