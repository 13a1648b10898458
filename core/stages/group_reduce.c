/* group_reduce.c - a reduction split over a workgroup (the GROUP and
 * GROUPTOP opts of the gpu target) through local memory, as tinygrad
 * v0.12.0 lowers it:
 *
 * stage 9 (pm_group_for_reduce): a REDUCE over GROUP_REDUCE ranges g and
 * other ranges r becomes
 *
 *   partial = REDUCE(x, r...)                      each work item's part (x when no r)
 *   buf     = BUFFERIZE(partial, locals..., g...)  arg (axis id of g0, "local")
 *   REDUCE(INDEX(buf, flat(locals..., g'...)), g'...)
 *
 * where locals are the LOCAL ranges the REDUCE is inside, g' are REDUCE
 * ranges of g's sizes with axis ids 100 more, and flat() is the row-major
 * offset over those sizes (tinygrad keeps one index per range there and
 * flattens it in stage 10; it is flattened here at once, the same offset).
 *
 * stage 10 (pm_add_buffers_local): a local BUFFERIZE(x, ranges...) becomes
 *
 *   AFTER(DEFINE_LOCAL, BARRIER(END(STORE(INDEX(DEFINE_LOCAL, flat(ranges)), x), ranges...)))
 *
 * the DEFINE_LOCALs numbered 0, 1, ... (the row's context, a counter, as
 * tinygrad's itertools.count(0));
 * so every work item stores its part, the workgroup waits at the barrier,
 * and the final REDUCE reads the parts through the AFTER.  A part of W
 * lanes (the reduce's output upcast) takes W consecutive elements: it is
 * stored at flat*W + (0..W-1) through W pointers (which stage 14 folds into
 * one vector store), and an INDEX of W lanes reading the buffer at a
 * scalar offset reads those W elements.  Stage 12 makes
 * the LOCAL and GROUP_REDUCE ranges SPECIAL lidx, so the END closes no loop
 * there. */
#include <stdlib.h>
#include <string.h>
#include "stage_rules.h"
#include "stages.h"
#include "ranges.h"
#include "../sym/vector_rules.h"

#define CTX (m->ctx)
#define ROOT (m->root)
#define MAX_RANGES 32

static int64_t range_id(const UOp *r) {
    const Arg *a = r->arg;
    return a && a->kind == ARG_TUPLE && a->n && a->items[0] && a->items[0]->kind == ARG_INT ? a->items[0]->v.i : -1;
}

/* sum of idx[k] * (product of the sizes after k); NULL + error when a size
 * is not a constant */
static const UOp *flat_index(UCtx *c, const UOp *const *idx, const UOp *const *sizes_of, int n) {
    const UOp *acc = NULL;
    int64_t stride = 1;
    for (int k = n - 1; k >= 0; k--) {
        int64_t size;
        if (!uop_const_int_value(sizes_of[k]->src[0], &size)) {
            uctx_set_error(c, "RANGE %%%u of a local buffer has a symbolic size", sizes_of[k]->id);
            return NULL;
        }
        const UOp *term = stride == 1 ? idx[k] : uop_binary(c, OP_MUL, idx[k], uop_const_int(c, idx[k]->dtype, stride));
        acc = acc ? uop_binary(c, OP_ADD, acc, term) : term;
        if (!acc) return NULL;
        stride *= size;
    }
    return acc ? acc : uop_const_int(c, DT_INDEX, 0);
}

static bool is_local_bufferize(const UOp *b) {
    const Arg *a = b->arg;
    return uop_op(b) == OP_BUFFERIZE && a && a->kind == ARG_TUPLE && a->n == 2 && a->items[1] &&
           a->items[1]->kind == ARG_STR && a->items[1]->n == 5 && !memcmp(a->items[1]->v.s, "local", 5);
}

/* ---- stage 9 ---- */

static const UOp *group_for_reduce(const Match *m, void *ud) {
    (void)ud;
    const UOp *x = ROOT;
    const UOp *gfr[MAX_RANGES], *rest[MAX_RANGES + 1], *locals[MAX_RANGES];
    int ng = 0, nr = 0, nl = 0;
    if (x->nsrc > MAX_RANGES) return NULL;
    rest[nr++] = x->src[0];
    for (int i = 1; i < x->nsrc; i++) {
        if (range_axis_type(x->src[i]) == AXIS_GROUP_REDUCE) gfr[ng++] = x->src[i];
        else rest[nr++] = x->src[i];
    }
    if (!ng) return NULL;
    /* the LOCAL ranges upstream of the REDUCE: each work item's part goes to its own slot */
    size_t n;
    const UOp **topo = uop_toposort(x, &n);
    if (!topo) return NULL;
    for (size_t i = 0; i < n; i++)
        if (range_axis_type(topo[i]) == AXIS_LOCAL && nl < MAX_RANGES) locals[nl++] = topo[i];
    free(topo);
    if (nl + ng > MAX_RANGES) {
        rewrite_fail(m, "REDUCE %%%u: too many local ranges for a local buffer", x->id);
        return NULL;
    }
    /* a part over no range (and no lanes to reduce horizontally) is the value itself */
    const UOp *partial = nr == 1 && x->src[0]->dtype == x->dtype ? x->src[0] : uop_new(CTX, OP_REDUCE, x->dtype, rest, nr, x->arg);
    const UOp *bsrc[1 + 2 * MAX_RANGES], *loops[MAX_RANGES], *ridx[2 * MAX_RANGES], *shape[2 * MAX_RANGES];
    int nb = 0;
    bsrc[nb++] = partial;
    for (int i = 0; i < nl; i++) bsrc[nb++] = locals[i], ridx[i] = locals[i], shape[i] = locals[i];
    for (int i = 0; i < ng; i++) {
        bsrc[nb++] = gfr[i];
        loops[i] = uop_range(CTX, gfr[i]->src[0], range_id(gfr[i]) + 100, AXIS_REDUCE);
        if (!loops[i]) return NULL;
        ridx[nl + i] = loops[i];
        shape[nl + i] = gfr[i];
    }
    if (!partial) return NULL;
    const Arg *ba[2] = {arg_int(CTX, range_id(gfr[0])), arg_str(CTX, "local")};
    const UOp *buf = uop_new(CTX, OP_BUFFERIZE, x->dtype, bsrc, nb, arg_tuple(CTX, ba, 2));
    const UOp *flat = flat_index(CTX, ridx, shape, nl + ng);
    const UOp *isrc[2] = {buf, flat};
    const UOp *ix = buf && flat ? uop_new(CTX, OP_INDEX, x->dtype, isrc, 2, NULL) : NULL;
    if (!ix) return NULL;
    const UOp *fsrc[1 + MAX_RANGES];
    fsrc[0] = ix;
    for (int i = 0; i < ng; i++) fsrc[1 + i] = loops[i];
    return uop_new(CTX, OP_REDUCE, x->dtype, fsrc, 1 + ng, x->arg);
}

static const RuleSpec group_for_reduce_specs[] = {
    RULE_FN("fix_group_for_reduce", "(REDUCE ...)", group_for_reduce),
};

const RuleTable pm_group_for_reduce_rules = RULE_TABLE(group_for_reduce_specs);

/* ---- stage 10 ---- */

/* INDEX of buf at i*w + (0..w-1) through w pointers (dtype dt); for w == 1
 * INDEX(buf, i) */
static const UOp *lanes_index(UCtx *c, const UOp *buf, const UOp *i, int w, const DType *dt) {
    if (w == 1) {
        const UOp *src[2] = {buf, i};
        return uop_new(c, OP_INDEX, dt, src, 2, NULL);
    }
    const Arg *lanes[64];
    if (w > 64) {
        uctx_set_error(c, "a local buffer of %d lanes", w);
        return NULL;
    }
    for (int k = 0; k < w; k++) lanes[k] = arg_int(c, k);
    const UOp *base = uop_binary(c, OP_MUL, i, uop_const_int(c, i->dtype, w));
    const UOp *off = base ? uop_binary(c, OP_ADD, vec_broadcast(c, base, w), vec_const(c, dt_vec(i->dtype, w), lanes, w))
                          : NULL;
    const UOp *src[2] = {vec_broadcast(c, buf, w), off};
    return src[0] && off ? uop_new(c, OP_INDEX, dt, src, 2, NULL) : NULL;
}



static const UOp *bufferize_to_local(const Match *m, void *ud) {
    (void)ud;
    const UOp *x = ROOT;
    if (!is_local_bufferize(x)) {
        /* global buffers are the scheduler's; one left in a kernel is a bug upstream */
        rewrite_fail(m, "BUFFERIZE %%%u: only local buffers (from GROUP opts) are lowered in a kernel", x->id);
        return NULL;
    }
    int nr = x->nsrc - 1;
    if (nr < 1 || nr > MAX_RANGES) {
        rewrite_fail(m, "BUFFERIZE %%%u: a local buffer needs 1 to %d ranges", x->id, MAX_RANGES);
        return NULL;
    }
    const UOp *val = x->src[0];
    int w = dt_vcount(val->dtype);
    int64_t size = w;
    for (int i = 1; i < x->nsrc; i++) {
        int64_t s;
        if (uop_op(x->src[i]) != OP_RANGE || !uop_const_int_value(x->src[i]->src[0], &s)) {
            rewrite_fail(m, "BUFFERIZE %%%u: source %d is not a RANGE of constant size", x->id, i);
            return NULL;
        }
        size *= s;
    }
    const DType *pdt = dt_ptr(val->dtype->scalar, size, ADDR_LOCAL);
    /* numbered 0, 1, ... in the order the stage meets them (tinygrad's ctx, itertools.count(0)) */
    int64_t *count = m->user;
    const UOp *buf = pdt ? uop_new(CTX, OP_DEFINE_LOCAL, pdt, NULL, 0, arg_int(CTX, count ? (*count)++ : 0)) : NULL;
    const UOp *flat = flat_index(CTX, x->src + 1, x->src + 1, nr);
    const UOp *ix = buf && flat ? lanes_index(CTX, buf, flat, w, dt_ptr_vec(pdt, w)) : NULL;
    const UOp *ssrc[2] = {ix, val};
    const UOp *st = ix ? uop_new(CTX, OP_STORE, DT_VOID, ssrc, 2, NULL) : NULL;
    if (!st) return NULL;
    const UOp *esrc[1 + MAX_RANGES];
    esrc[0] = st;
    memcpy(esrc + 1, x->src + 1, (size_t)nr * sizeof *esrc);
    qsort(esrc + 1, (size_t)nr, sizeof *esrc, range_ids_qsort_cmp);
    const UOp *end = uop_new(CTX, OP_END, DT_VOID, esrc, 1 + nr, NULL);
    const UOp *bar = end ? uop_new(CTX, OP_BARRIER, DT_VOID, &end, 1, NULL) : NULL;
    const UOp *asrc[2] = {buf, bar};
    return bar ? uop_new(CTX, OP_AFTER, pdt, asrc, 2, NULL) : NULL;
}

/* INDEX(AFTER(DEFINE_LOCAL), i) of W lanes: the W elements from i*W */
static const UOp *local_lanes_read(const Match *m, void *ud) {
    (void)ud;
    const UOp *ix = ROOT, *after = ix->src[0];
    int w = dt_vcount(ix->dtype);
    if (w == 1 || dt_is_ptr(ix->dtype) || dt_vcount(ix->src[1]->dtype) != 1 || after->dtype->v != 1) return NULL;
    return lanes_index(CTX, after, ix->src[1], w, ix->dtype);
}

static const RuleSpec add_buffers_local_specs[] = {
    RULE_FN("bufferize_to_store", "(BUFFERIZE ...)", bufferize_to_local),
    RULE_FN("local_lanes_read", "(INDEX (AFTER (DEFINE_LOCAL) ...) _)", local_lanes_read),
};

const RuleTable pm_add_buffers_local_rules = RULE_TABLE(add_buffers_local_specs);

const StageContext local_buffer_count_context = {.name = "count", .size = sizeof(int64_t)};
