/* apply_opts_gpu.c - stage 7 for the gpu target: which range an opt acts
 * on, numbered as tinygrad's Scheduler numbers them, and tinygrad's checks
 * (apply_opt) for LOCAL, GROUP, GROUPTOP, UPCAST and UNROLL, which
 * apply_opts.c then splits like any opt; PADTO, SWAP and NOLOCALS, which
 * are no split, are done here.
 *
 * Axis numbers: `rngs` are the ranges of size > 1 ordered by kind (LOOP,
 * GLOBAL/THREAD, WARP, LOCAL/GROUP_REDUCE, UPCAST, REDUCE, UNROLL) then axis
 * id; UPCAST, LOCAL, PADTO and SWAP index rngs, UNROLL its reduce ranges,
 * GROUP and GROUPTOP its REDUCE ranges. */
#include <stdlib.h>
#include <string.h>
#include "apply_opts.h"
#include "early.h"
#include "ranges.h"

static int cmp_rngs(const void *pa, const void *pb) {
    const UOp *a = *(const UOp *const *)pa, *b = *(const UOp *const *)pb;
    int x = axis_to_pos(range_axis_type(a)), y = axis_to_pos(range_axis_type(b));
    if (x != y) return x < y ? -1 : 1;
    return range_ids_qsort_cmp(pa, pb);
}

/* tinygrad's Scheduler.rngs: the ranges of size > 1 (symbolic ones count),
 * by kind then axis id.  Returns how many (at most MAX_AXES); next_id gets
 * one more than the largest axis id. */
static int tg_rngs(const UOp *root, const UOp **out, int64_t *next_id) {
    size_t nr;
    const UOp **all = early_all_ranges(root, &nr);
    int n = 0;
    *next_id = 0;
    for (size_t i = 0; i < nr; i++) {
        int64_t id = axis_id_of(all[i]), size;
        if (id >= *next_id) *next_id = id + 1;
        if ((!range_size(all[i], &size) || size > 1) && n < MAX_AXES) out[n++] = all[i];
    }
    free(all);
    qsort(out, (size_t)n, sizeof *out, cmp_rngs);
    return n;
}

/* the first REDUCE of the kernel (tinygrad's reduceop), NULL when none */
static const UOp *first_reduce(const UOp *root) {
    size_t n;
    const UOp **topo = uop_toposort(root, &n);
    const UOp *r = NULL;
    for (size_t i = n; topo && i-- > 0;)
        if (uop_op(topo[i]) == OP_REDUCE) r = topo[i];
    free(topo);
    return r;
}

/* LOOP ranges closed by the kernel's top-level ENDs become GLOBAL */
const UOp *opts_loops_to_global(StageCtx *sc, const UOp *root) {
    const UOp *todo[MAX_AXES];
    int n = 0;
    for (int i = 0; i < root->nsrc; i++) {
        const UOp *e = root->src[i];
        if (uop_op(e) != OP_END) continue;
        for (int k = 1; k < e->nsrc; k++) {
            bool seen = false;
            for (int j = 0; j < n; j++) seen |= todo[j] == e->src[k];
            if (!seen && uop_op(e->src[k]) == OP_RANGE && range_axis_type(e->src[k]) == AXIS_LOOP && n < MAX_AXES)
                todo[n++] = e->src[k];
        }
    }
    for (int i = 0; i < n && root; i++) {
        const UOp *r = todo[i];
        const UOp *g = range_retyped(sc->c, r, r->src[0], AXIS_GLOBAL);
        root = g ? early_replace_range(sc->c, root, r, g, &g, 1) : NULL;
        if (!root) return stage_fail(sc, "LOOP range %%%u to GLOBAL: %s", r->id, uctx_error(sc->c));
    }
    return root;
}

static int count_type(const UOp *const *rngs, int n, AxisType t) {
    int k = 0;
    for (int i = 0; i < n; i++) k += range_axis_type(rngs[i]) == t;
    return k;
}

/* the local memory a grouped reduce needs, checked against GPU_SHARED_MAX */
static bool shared_fits(StageCtx *sc, const UOp *const *rngs, int n, const UOp *red, int64_t amount, const char *name,
                        int axis) {
    int64_t sz = amount * (int64_t)dt_itemsize(red->dtype->scalar);
    for (int i = 0; i < n; i++) {
        AxisType t = range_axis_type(rngs[i]);
        int64_t s;
        if ((t == AXIS_UPCAST || t == AXIS_WARP || t == AXIS_LOCAL || t == AXIS_GROUP_REDUCE) && range_size(rngs[i], &s))
            sz *= s;
    }
    if (sz <= GPU_SHARED_MAX) return true;
    stage_fail(sc, "%s axis %d: the grouped reduce needs %lld bytes of local memory, more than %d", name, axis,
               (long long)sz, GPU_SHARED_MAX);
    return false;
}

/* whether a REDUCE encloses r and is itself inside a reduce-kind range */
static bool group_inside_reduce(const UOp *root, const UOp *r, bool *oom) {
    RangeMap m;
    *oom = !range_map_init(&m, root);
    if (*oom) return false;
    bool bad = false;
    for (size_t i = 0; i < m.t.n && !bad; i++) {
        const UOp *u = m.t.topo[i];
        if (uop_op(u) != OP_REDUCE) continue;
        bool mine = false;
        for (int k = 1; k < u->nsrc; k++) {
            const NodeSet *in = range_map_get(&m, u->src[k]);
            mine |= u->src[k] == r || (in && nodeset_has(in, r));
        }
        if (!mine) continue;
        const NodeSet *outer = range_map_get(&m, u);
        for (int k = 0; outer && k < outer->n; k++) {
            AxisType t = range_axis_type(outer->items[k]);
            bad |= t == AXIS_REDUCE || t == AXIS_UNROLL || t == AXIS_GROUP_REDUCE;
        }
    }
    range_map_free(&m);
    return bad;
}

/* ops whose value at 0 is not 0 (tinygrad's GroupOp.UnsafePad) */
static bool unsafe_pad(Op op) {
    return op == OP_RECIPROCAL || op == OP_LOG2 || op == OP_EXP2 || op == OP_IDIV || op == OP_POW;
}

/* PADTO: r (size N) becomes a range of size round_up(N, amount); every INDEX
 * whose index uses r is gated by r < N */
static const UOp *pad_to(StageCtx *sc, const UOp *root, const UOp *r, int64_t size, int64_t amount, int axis) {
    UCtx *c = sc->c;
    int64_t new_sz = (size + amount - 1) / amount * amount;
    if (!(size > new_sz / 4)) return stage_fail(sc, "PADTO axis %d: padding adds more than four times the work", axis);
    const UOp *nr = range_retyped(c, r, uop_const_int(c, r->dtype, new_sz), range_axis_type(r));
    const UOp *valid = nr ? uop_binary(c, OP_CMPLT, nr, uop_const_int(c, r->dtype, size)) : NULL;
    if (!valid) return stage_fail(sc, "PADTO axis %d: %s", axis, uctx_error(c));
    /* gate the INDEXes first (their index still uses r), then replace r */
    size_t n;
    const UOp **topo = uop_toposort(root, &n);
    if (!topo) return stage_fail(sc, "out of memory");
    for (size_t i = 0; i < n && root; i++) {
        const UOp *ix = topo[i];
        if (uop_op(ix) != OP_INDEX || ix->nsrc != 2) continue;
        size_t m;
        const UOp **sub = uop_toposort(ix->src[1], &m);
        bool uses = false;
        for (size_t j = 0; sub && j < m; j++) uses |= sub[j] == r;
        free(sub);
        if (!uses) continue;
        const UOp *idx = ix->src[1], *gate = valid;
        const UOp *inv = uop_const_arg(c, idx->dtype, arg_invalid(c));
        if (uop_op(idx) == OP_WHERE && uop_op(idx->src[2]) == OP_CONST && idx->src[2]->arg &&
            idx->src[2]->arg->kind == ARG_INVALID) {
            gate = uop_binary(c, OP_AND, valid, idx->src[0]);
            idx = idx->src[1];
        }
        const UOp *w = uop_where(c, gate, idx, inv);
        const UOp *src[2] = {ix->src[0], w};
        const UOp *nix = w ? uop_with_src(c, ix, src, 2) : NULL;
        root = nix ? early_replace_range(c, root, ix, nix, NULL, 0) : NULL;
        /* the toposort is of the old graph: later INDEXes are found again by identity */
    }
    free(topo);
    if (root) root = early_replace_range(c, root, r, nr, &nr, 1);
    if (!root) return stage_fail(sc, "PADTO axis %d on range %%%u: %s", axis, r->id, uctx_error(c));
    return root;
}

/* SWAP: two GLOBAL ranges exchange axis ids, through a tagged stand-in so
 * that equal-sized ranges do not merge midway */
static const UOp *swap_globals(StageCtx *sc, const UOp *root, const UOp *a, const UOp *b, int axis) {
    UCtx *c = sc->c;
    const UOp *a_new = uop_new(c, OP_RANGE, a->dtype, a->src, a->nsrc, b->arg);
    const UOp *b_new = uop_new(c, OP_RANGE, b->dtype, b->src, b->nsrc, a->arg);
    const UOp *tmp = a_new ? uop_new_tagged(c, OP_RANGE, a_new->dtype, a_new->src, a_new->nsrc, a_new->arg,
                                            arg_str(c, "swap")) : NULL;
    if (tmp) root = early_replace_range(c, root, a, tmp, &tmp, 1);
    if (tmp && root && b_new) root = early_replace_range(c, root, b, b_new, &b_new, 1);
    if (tmp && root && b_new) root = early_replace_range(c, root, tmp, a_new, &a_new, 1);
    if (!tmp || !b_new || !root) return stage_fail(sc, "SWAP axis %d: %s", axis, uctx_error(c));
    return root;
}

bool opts_gpu_pick(StageCtx *sc, const UOp *root, const KernelOpt *o, bool dont_use_locals, const UOp **r,
                     int64_t *amount, const UOp **out) {
    const char *name = opt_op_name(o->op);
    const UOp *rngs[MAX_AXES];
    int64_t next_id;
    int n = tg_rngs(root, rngs, &next_id);
    *r = NULL;
    *out = NULL;
    if (o->op == OPT_THREAD) {
        stage_fail(sc, "THREAD: the gpu target has no threads (a CPU opt)");
        return false;
    }
    if (o->op == OPT_NOLOCALS) {
        for (int i = 0; i < n; i++) {
            AxisType t = range_axis_type(rngs[i]);
            if (t == AXIS_WARP || t == AXIS_LOCAL || t == AXIS_GROUP_REDUCE) {
                stage_fail(sc, "NOLOCALS: the kernel already has a %s range (%%%u)", axis_name(t), rngs[i]->id);
                return false;
            }
        }
        *out = root;
        return true;
    }
    const UOp *cand[MAX_AXES];
    int nc = 0;
    const char *kind = "";
    if (o->op == OPT_UNROLL) {
        for (int i = 0; i < n; i++)
            if (range_axis_type(rngs[i]) == AXIS_GROUP_REDUCE || range_axis_type(rngs[i]) == AXIS_REDUCE) cand[nc++] = rngs[i];
        kind = " reduce";
    } else if (o->op == OPT_GROUP || o->op == OPT_GROUPTOP) {
        for (int i = 0; i < n; i++)
            if (range_axis_type(rngs[i]) == AXIS_REDUCE) cand[nc++] = rngs[i];
        kind = " REDUCE";
    } else {
        memcpy(cand, rngs, (size_t)n * sizeof *rngs);
        nc = n;
    }
    if (o->axis < 0 || o->axis >= nc) {
        stage_fail(sc, "%s axis %d: the kernel has %d%s range%s", name, o->axis, nc, kind, nc == 1 ? "" : "s");
        return false;
    }
    const UOp *rng = cand[o->axis];
    AxisType t = range_axis_type(rng);
    int64_t size = 0;
    bool const_size = range_size(rng, &size);
    const UOp *red = first_reduce(root);
    if (o->op == OPT_SWAP) {
        if (o->amount < 0 || o->amount >= n) {
            stage_fail(sc, "SWAP axis %d: no axis %d to swap with (the kernel has %d ranges)", o->axis, o->amount, n);
            return false;
        }
        const UOp *alt = rngs[o->amount];
        if (t != AXIS_GLOBAL || range_axis_type(alt) != AXIS_GLOBAL) {
            stage_fail(sc, "SWAP axis %d with %d: swap is only for GLOBAL ranges", o->axis, o->amount);
            return false;
        }
        *out = rng == alt ? root : swap_globals(sc, root, rng, alt, o->axis);
        return *out != NULL;
    }
    if (!const_size) {
        stage_fail(sc, "%s axis %d: range %%%u has a symbolic size", name, o->axis, rng->id);
        return false;
    }
    if (o->op == OPT_PADTO) {
        if (t == AXIS_UPCAST || t == AXIS_UNROLL || t == AXIS_THREAD) {
            stage_fail(sc, "PADTO axis %d: cannot pad a%s %s range", o->axis, t == AXIS_UPCAST || t == AXIS_UNROLL ? "n" : "",
                       axis_name(t));
            return false;
        }
        if (o->amount < 1) {
            stage_fail(sc, "PADTO axis %d: amount %d is not positive", o->axis, o->amount);
            return false;
        }
        if (red && (t == AXIS_GROUP_REDUCE || t == AXIS_REDUCE)) {
            bool ok = red->arg && red->arg->kind == ARG_OP && red->arg->v.op == OP_ADD;
            size_t m;
            const UOp **sub = uop_toposort(red, &m);
            for (size_t j = 0; sub && j < m; j++) ok = ok && !unsafe_pad(uop_op(sub[j]));
            free(sub);
            if (!ok) {
                stage_fail(sc, "PADTO axis %d: cannot pad the reduce %%%u (not a sum, or an op whose value at 0 is not 0)",
                           o->axis, red->id);
                return false;
            }
        }
        *out = pad_to(sc, root, rng, size, o->amount, o->axis);
        return *out != NULL;
    }
    int64_t amt = o->amount == 0 ? size : o->amount;
    if (red && (o->op == OPT_GROUP || o->op == OPT_GROUPTOP || count_type(rngs, n, AXIS_GROUP_REDUCE) > 0) &&
        !shared_fits(sc, rngs, n, red, amt, name, o->axis))
        return false;
    switch (o->op) {
    case OPT_UNROLL:
        break;
    case OPT_UPCAST:
        if (t != AXIS_GLOBAL && t != AXIS_LOCAL && t != AXIS_LOOP) {
            stage_fail(sc, "UPCAST axis %d: upcast is for GLOBAL/LOCAL/LOOP ranges, not %s (%%%u)", o->axis, axis_name(t),
                       rng->id);
            return false;
        }
        break;
    case OPT_LOCAL:
        if (dont_use_locals) {
            stage_fail(sc, "LOCAL axis %d: NOLOCALS was applied", o->axis);
            return false;
        }
        if (t != AXIS_GLOBAL && t != AXIS_LOOP) {
            stage_fail(sc, "LOCAL axis %d: local is for GLOBAL/LOOP ranges, not %s (%%%u)", o->axis, axis_name(t), rng->id);
            return false;
        }
        break;
    case OPT_GROUP: case OPT_GROUPTOP: {
        if (dont_use_locals) {
            stage_fail(sc, "%s axis %d: NOLOCALS was applied", name, o->axis);
            return false;
        }
        bool oom = false;
        if (red && group_inside_reduce(root, rng, &oom)) {
            stage_fail(sc, "%s axis %d: cannot have a GROUP_REDUCE inside another reduce", name, o->axis);
            return false;
        }
        if (oom) {
            stage_fail(sc, "out of memory");
            return false;
        }
        break;
    }
    default: break;
    }
    *r = rng;
    *amount = amt;
    return true;
}
