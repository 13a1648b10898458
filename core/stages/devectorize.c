/* devectorize.c - stage 14, devectorize (tinygrad v0.12.0 codegen/late/
 * devectorizer.py) for the CPU's LLVM renderer: sym + devectorize +
 * load_store_folding + correct_load_store + load_store_indexing.
 *
 *  - devectorize: vector ALUs become a VECTORIZE of scalar ALUs over lanes;
 *    vector register/local buffers become scalar buffers of the same bytes.
 *  - load_store_folding: a vector INDEX (one pointer per lane) becomes lane
 *    pointers, grouped into runs of consecutive addresses (a PTRCAT of
 *    vector pointers), pushed through the LOAD/STORE that use them.
 *  - correct_load_store: a vector LOAD/STORE is split into the widths the
 *    target takes: 4 or 2 float/half lanes of a global buffer when the
 *    address divides by the width (the renderer supports float4), else 1.
 *  - load_store_indexing (stages_late.h, shared with stage 15): an INDEX
 *    gated by a constant true drops its gate.
 *
 * What is left for the renderer: scalar ALUs, VECTORIZE, GEP, and vector
 * LOAD/STORE through an INDEX cast to a vector pointer. */
#include <stdio.h>
#include <string.h>
#include "stages.h"
#include "stage_rules.h"
#include "../sym/vector_rules.h"
#include "../rewrite/rewrite.h"
#include "../sym/sym_helpers.h"
#include "../sym/symbolic.h"

#define CTX (m->ctx)
#define ROOT (m->root)
#define GET(n) match_get(m, n)

static bool is_invalid(const UOp *u) { return uop_op(u) == OP_CONST && u->arg && u->arg->kind == ARG_INVALID; }
static bool is_define(const UOp *u) {
    Op op = uop_op(u);
    return op == OP_DEFINE_GLOBAL || op == OP_DEFINE_LOCAL || op == OP_DEFINE_REG;
}
static bool is_local_or_reg(const UOp *u) { return uop_op(u) == OP_DEFINE_LOCAL || uop_op(u) == OP_DEFINE_REG; }
/* a buffer: a define or an AFTER of one (tinygrad or_after) */
static bool is_buffer(const UOp *u, bool (*def)(const UOp *)) {
    return def(u) || (uop_op(u) == OP_AFTER && u->nsrc >= 1 && def(u->src[0]));
}
/* the address of an index expression and its valid (NULL: always valid) */
static const UOp *idx_of(const UOp *e) { return uop_op(e) == OP_WHERE && is_invalid(e->src[2]) ? e->src[1] : e; }
static const UOp *valid_of(const UOp *e) { return uop_op(e) == OP_WHERE && is_invalid(e->src[2]) ? e->src[0] : NULL; }
/* e gated by valid (tinygrad x.valid(cond)) */
static const UOp *with_valid(UCtx *c, const UOp *e, const UOp *valid) {
    if (!e || !valid) return e;
    return uop_where(c, valid, e, uop_const_arg(c, e->dtype, arg_invalid(c)));
}
/* pointer to n elements of the buffer's element type, same size and address space */
static const DType *vec_ptr(const DType *buf, int n) {
    return dt_ptr(dt_vec(buf->base->scalar, n), buf->size, buf->addrspace);
}

/* ---- devectorize ---- */

/* AFTER(CAST(x), deps...) -> CAST(AFTER(x, deps...)) */
static const UOp *cast_after_after(const Match *m, void *ud) {
    (void)ud;
    const UOp *cast = ROOT->src[0], *srcs[64];
    if (ROOT->nsrc > 64) return NULL;
    srcs[0] = cast->src[0];
    for (int i = 1; i < ROOT->nsrc; i++) srcs[i] = ROOT->src[i];
    const UOp *a = uop_new(CTX, OP_AFTER, cast->src[0]->dtype, srcs, ROOT->nsrc, ROOT->arg);
    return a ? uop_new(CTX, OP_CAST, cast->dtype, &a, 1, NULL) : NULL;
}

/* a vector ALU -> VECTORIZE of the scalar ALU on each lane */
static const UOp *no_vectorized_alu(const Match *m, void *ud) {
    (void)ud;
    const UOp *alu = ROOT;
    int n = dt_vcount(alu->dtype);
    if (n == 1 || dt_is_ptr(alu->dtype)) return NULL;
    /* a gated vector index stays whole: its lanes are taken by the INDEX rules */
    if (uop_op(alu) == OP_WHERE && is_invalid(alu->src[2])) return NULL;
    const UOp *lanes[VEC_MAX_LANES];
    if (n > VEC_MAX_LANES) return NULL;
    for (int i = 0; i < n; i++) {
        const UOp *s[3];
        for (int j = 0; j < alu->nsrc; j++)
            if (!(s[j] = vec_lane(CTX, alu->src[j], i))) return NULL;
        lanes[i] = uop_new(CTX, uop_op(alu), alu->dtype->scalar, s, alu->nsrc, alu->arg);
        if (!lanes[i]) return NULL;
    }
    return uop_new(CTX, OP_VECTORIZE, alu->dtype, lanes, n, NULL);
}

/* DEFINE_REG/LOCAL of vectors -> the scalar buffer of the same bytes, cast back */
static const UOp *no_vectorized_buf(const Match *m, void *ud) {
    (void)ud;
    const UOp *buf = ROOT;
    const DType *dt = buf->dtype;
    if (!dt_is_ptr(dt) || dt->count == 1 || dt->v != 1) return NULL;
    const DType *sdt = dt_ptr(dt->base->scalar, dt->size < 0 ? -1 : dt->size * dt->count, dt->addrspace);
    const UOp *s = uop_intern(CTX, uop_op(buf), sdt, buf->src, buf->nsrc, buf->arg, buf->tag);
    return s ? uop_new(CTX, OP_CAST, dt, &s, 1, NULL) : NULL;
}

/* INDEX(CAST(buf) to a vector pointer, i) -> INDEX(buf per lane, i*cnt + lane) */
static const UOp *no_vectorized_index(const Match *m, void *ud) {
    (void)ud;
    const UOp *cast = GET("cast"), *buf = GET("buf"), *idx = GET("idx");
    int cnt = cast->dtype->count;
    if (!dt_is_ptr(cast->dtype) || cnt == 1 || idx->dtype->count != 1 || !is_buffer(buf, is_local_or_reg)) return NULL;
    const Arg *vals[VEC_MAX_LANES];
    if (cnt > VEC_MAX_LANES) return NULL;
    for (int i = 0; i < cnt; i++) vals[i] = arg_int(CTX, i);
    const DType *vdt = dt_vec(idx->dtype, cnt);
    const UOp *scaled = sym_mul(CTX, vec_broadcast(CTX, idx, cnt), uop_const_int(CTX, vdt, cnt));
    const UOp *lane_idx = sym_add(CTX, scaled, vec_const(CTX, vdt, vals, cnt));
    const UOp *bufs = vec_broadcast(CTX, buf, cnt);
    if (!lane_idx || !bufs) return NULL;
    return uop_new(CTX, OP_INDEX, bufs->dtype, (const UOp *[]){bufs, lane_idx}, 2, NULL);
}

/* INDEX(VECTORIZE/GEP of CAST(buf), i) -> the same per lane (tinygrad
 * no_vectorized_index_broadcast) */
static const UOp *no_vectorized_index_broadcast(const Match *m, void *ud) {
    (void)ud;
    const UOp *bcast = ROOT->src[0], *idx = ROOT->src[1];
    const UOp *cast = uop_op(bcast) == OP_GEP ? bcast->src[0] : bcast->src[0];
    if (uop_op(cast) != OP_CAST || !dt_is_ptr(cast->dtype)) return NULL;
    const UOp *buf = cast->src[0];
    if (!is_buffer(buf, is_local_or_reg)) return NULL;
    if (uop_op(bcast) == OP_VECTORIZE)
        for (int i = 1; i < bcast->nsrc; i++)
            if (bcast->src[i] != cast) return NULL;
    int cnt = cast->dtype->count, pre = dt_vcount(bcast->dtype), in_gep[VEC_MAX_LANES];
    if (cnt * pre > VEC_MAX_LANES || dt_vcount(idx->dtype) != pre) return NULL;
    if (uop_op(bcast) == OP_GEP) {
        if (vec_tuple_ints(bcast->arg, in_gep, VEC_MAX_LANES) != pre) return NULL;
    } else
        for (int i = 0; i < pre; i++) in_gep[i] = 0;
    int gep_lanes[VEC_MAX_LANES];
    const Arg *sums[VEC_MAX_LANES];
    for (int i = 0; i < cnt; i++)
        for (int y = 0; y < pre; y++) {
            gep_lanes[i * pre + y] = y;
            sums[i * pre + y] = arg_int(CTX, i + in_gep[y]);
        }
    int n = cnt * pre;
    const DType *vdt = dt_vec(idx->dtype->scalar, n);
    const UOp *scaled = sym_mul(CTX, vec_gep(CTX, idx, gep_lanes, n), uop_const_int(CTX, vdt, cnt));
    const UOp *lane_idx = sym_add(CTX, scaled, vec_const(CTX, vdt, sums, n));
    const UOp *bufs = vec_broadcast(CTX, buf, n);
    if (!lane_idx || !bufs) return NULL;
    return uop_new(CTX, OP_INDEX, bufs->dtype, (const UOp *[]){bufs, lane_idx}, 2, NULL);
}

/* ---- load_store_folding ---- */

/* INDEX(VECTORIZE(buf, buf, ...), vec) -> VECTORIZE(INDEX(buf, vec[i]) for each lane) */
static const UOp *expand_index(const Match *m, void *ud) {
    (void)ud;
    const UOp *v = ROOT->src[0], *vec = ROOT->src[1], *buf = v->src[0];
    if (ROOT->nsrc != 2 || !is_buffer(buf, is_define)) return NULL;
    for (int i = 1; i < v->nsrc; i++)
        if (v->src[i] != buf) return NULL;
    int n = vec->dtype->count;
    if (n > VEC_MAX_LANES || n != v->nsrc) return NULL;
    const UOp *lanes[VEC_MAX_LANES];
    for (int i = 0; i < n; i++) {
        const UOp *li = vec_lane(CTX, vec, i);
        lanes[i] = li ? uop_new(CTX, OP_INDEX, buf->dtype, (const UOp *[]){buf, li}, 2, NULL) : NULL;
        if (!lanes[i]) return NULL;
    }
    return uop_new(CTX, OP_VECTORIZE, dt_ptr_vec(buf->dtype, n), lanes, n, NULL);
}

/* VECTORIZE of lane pointers into one buffer -> GEP(PTRCAT(runs of
 * consecutive addresses as vector pointers), the lane of each) */
typedef struct LaneKey {
    const UOp *valid;   /* NULL: always valid */
    const UOp *root;    /* the address without its constant offset; NULL: a constant address */
    bool invalid;       /* the address is Invalid */
    const UOp *whole;   /* an INDEX that is its own group (it has a gate source) */
} LaneKey;

static const UOp *fold_expanded_index(const Match *m, void *ud) {
    (void)ud;
    const UOp *midx = ROOT;
    int n = midx->nsrc;
    if (n < 2 || n > VEC_MAX_LANES) return NULL;
    const UOp *buf = midx->src[0]->src[0];
    for (int i = 0; i < n; i++) {
        const UOp *s = midx->src[i];
        if (uop_op(s) != OP_INDEX || s->nsrc < 2 || s->src[0] != buf || !dt_is_ptr(s->dtype) || s->dtype->v != 1) return NULL;
    }
    /* each lane: a key (valid, root) and a constant offset */
    LaneKey keys[VEC_MAX_LANES];
    int key_of[VEC_MAX_LANES], nkeys = 0;
    int64_t off[VEC_MAX_LANES];
    for (int i = 0; i < n; i++) {
        const UOp *s = midx->src[i], *e = s->src[1];
        LaneKey k = {0};
        int64_t o = 0;
        if (s->nsrc > 2) k.whole = s;
        else {
            const UOp *x = idx_of(e);
            k.valid = valid_of(e);
            if (uop_op(x) == OP_ADD && sym_const_int(x->src[1], &o)) k.root = x->src[0];
            else if (uop_op(x) == OP_ADD && sym_const_int(x->src[0], &o)) k.root = x->src[1];
            else if (is_invalid(x)) k.invalid = true;
            else if (sym_const_int(x, &o)) k.root = NULL;
            else k.root = x;
        }
        int j = 0;
        while (j < nkeys && memcmp(&keys[j], &k, sizeof k) != 0) j++;
        if (j == nkeys) keys[nkeys++] = k;
        key_of[i] = j;
        off[i] = o;
    }
    /* per key, the distinct offsets in order, cut into consecutive runs */
    const UOp *parts[VEC_MAX_LANES];
    int nparts = 0, lane_out[VEC_MAX_LANES], total = 0;
    for (int kk = 0; kk < nkeys; kk++) {
        int64_t offs[VEC_MAX_LANES];
        int no = 0;
        for (int i = 0; i < n; i++) {
            if (key_of[i] != kk) continue;
            int p = 0;
            while (p < no && offs[p] < off[i]) p++;
            if (p < no && offs[p] == off[i]) continue;
            memmove(offs + p + 1, offs + p, (size_t)(no - p) * sizeof *offs);
            offs[p] = off[i], no++;
        }
        for (int a = 0; a < no;) {
            int b = a + 1;
            while (b < no && offs[b] == offs[b - 1] + 1) b++;
            int len = b - a;
            const UOp *lidx = NULL;
            for (int i = 0; i < n; i++) {
                if (key_of[i] != kk || off[i] < offs[a] || off[i] >= offs[a] + len) continue;
                if (off[i] == offs[a] && !lidx) lidx = midx->src[i];
                lane_out[i] = total + (int)(off[i] - offs[a]);
            }
            if (len > 1) lidx = uop_new(CTX, OP_CAST, vec_ptr(buf->dtype, len), &lidx, 1, NULL);
            if (!lidx) return NULL;
            parts[nparts++] = lidx;
            total += len;
            a = b;
        }
    }
    const DType *cat_dt = dt_ptr_vec(dt_ptr(buf->dtype->base, buf->dtype->size, buf->dtype->addrspace), total);
    const UOp *cat = uop_new(CTX, OP_PTRCAT, cat_dt, parts, nparts, NULL);
    return vec_gep(CTX, cat, lane_out, n);
}

/* LOAD(GEP(p, lanes)) -> GEP(LOAD(p), lanes) */
static const UOp *gep_after_load(const Match *m, void *ud) {
    (void)ud;
    const UOp *ld = ROOT, *g = ld->src[0], *srcs[64];
    if (ld->nsrc > 64) return NULL;
    int lanes[VEC_MAX_LANES], n = vec_tuple_ints(g->arg, lanes, VEC_MAX_LANES);
    if (n < 1) return NULL;
    srcs[0] = g->src[0];
    for (int i = 1; i < ld->nsrc; i++) srcs[i] = ld->src[i];
    const DType *dt = dt_vec(ld->dtype->scalar, dt_vcount(g->src[0]->dtype) * g->src[0]->dtype->count);
    const UOp *inner = dt ? uop_new(CTX, OP_LOAD, dt, srcs, ld->nsrc, ld->arg) : NULL;
    return vec_gep(CTX, inner, lanes, n);
}

/* STORE(GEP(p, lanes), data) -> STORE(p, data in the pointers' order) */
static const UOp *gep_on_store(const Match *m, void *ud) {
    (void)ud;
    const UOp *st = ROOT, *g = st->src[0], *srcs[64];
    if (st->nsrc > 64) return NULL;
    int lanes[VEC_MAX_LANES], n = vec_tuple_ints(g->arg, lanes, VEC_MAX_LANES);
    int width = dt_vcount(g->src[0]->dtype), inv[VEC_MAX_LANES], ni = 0, which[VEC_MAX_LANES];
    if (n < 1 || width > VEC_MAX_LANES) return NULL;
    /* for each pointer lane, the last data lane stored through it */
    for (int p = 0; p < width; p++) which[p] = -1;
    for (int i = 0; i < n; i++) which[lanes[i]] = i;
    for (int p = 0; p < width; p++)
        if (which[p] >= 0) inv[ni++] = which[p];
    srcs[0] = g->src[0];
    srcs[1] = vec_gep(CTX, st->src[1], inv, ni);
    for (int i = 2; i < st->nsrc; i++) srcs[i] = st->src[i];
    return srcs[1] ? uop_new(CTX, OP_STORE, st->dtype, srcs, st->nsrc, st->arg) : NULL;
}

/* LOAD(PTRCAT(p0, p1, ...)) -> CAT(LOAD(p0), LOAD(p1), ...) */
static const UOp *ptrcat_after_load(const Match *m, void *ud) {
    (void)ud;
    const UOp *ld = ROOT, *cat = ld->src[0], *parts[VEC_MAX_LANES], *srcs[64];
    if (ld->nsrc > 64 || cat->nsrc > VEC_MAX_LANES) return NULL;
    for (int i = 1; i < ld->nsrc; i++) srcs[i] = ld->src[i];
    for (int p = 0; p < cat->nsrc; p++) {
        srcs[0] = cat->src[p];
        parts[p] = uop_new(CTX, OP_LOAD, cat->src[p]->dtype->base, srcs, ld->nsrc, ld->arg);
        if (!parts[p]) return NULL;
    }
    return uop_new(CTX, OP_CAT, dt_vec(cat->dtype->base, dt_vcount(cat->dtype)), parts, cat->nsrc, NULL);
}

/* the stores as one node: itself when one, else a GROUP */
static const UOp *group_of(UCtx *c, const UOp *const *st, int n) {
    return n == 1 ? st[0] : uop_new(c, OP_GROUP, DT_VOID, st, n, NULL);
}

/* STORE(PTRCAT(p0, p1, ...), data) -> GROUP(STORE(p0, data[..]), STORE(p1, data[..]), ...) */
static const UOp *ptrcat_after_store(const Match *m, void *ud) {
    (void)ud;
    const UOp *st = ROOT, *cat = st->src[0], *parts[VEC_MAX_LANES], *srcs[64];
    if (st->nsrc > 64 || cat->nsrc > VEC_MAX_LANES) return NULL;
    for (int i = 2; i < st->nsrc; i++) srcs[i] = st->src[i];
    int offset = 0, lanes[VEC_MAX_LANES];
    for (int p = 0; p < cat->nsrc; p++) {
        int cnt = cat->src[p]->dtype->count;
        if (offset + cnt > VEC_MAX_LANES) return NULL;
        for (int j = 0; j < cnt; j++) lanes[j] = offset + j;
        srcs[0] = cat->src[p];
        srcs[1] = vec_gep(CTX, st->src[1], lanes, cnt);
        parts[p] = srcs[1] ? uop_new(CTX, OP_STORE, st->dtype, srcs, st->nsrc, st->arg) : NULL;
        if (!parts[p]) return NULL;
        offset += cnt;
    }
    return group_of(CTX, parts, cat->nsrc);
}

/* ---- correct_load_store ---- */

/* LOAD/STORE through CAST(INDEX) of n lanes -> chunks of the widths the
 * target takes (4 and 2 for float/half lanes of a non-register buffer whose
 * address divides by the width; 1 otherwise) */
static const UOp *split_load_store(const Match *m, void *ud) {
    (void)ud;
    const UOp *ls = ROOT, *idx = GET("idx");
    int sz = ls->src[0]->dtype->count;
    if (sz == 1 || idx->nsrc != 2) return NULL;
    const UOp *buf = idx->src[0];
    const DType *bdt = buf->dtype;
    if (!dt_is_ptr(bdt)) return NULL;
    ScalarKind sk = bdt->base->sk;
    int lengths[3], nl = 0;
    bool foldable = (sk == SK_FLOAT32 || sk == SK_FLOAT16 || sk == SK_FP8E4M3 || sk == SK_FP8E5M2) &&
                    bdt->base->count == 1 && bdt->addrspace != ADDR_REG;
    const UOp *offset = idx_of(idx->src[1]), *mask = valid_of(idx->src[1]);
    if (foldable) {
        const int cand[2] = {4, 2};
        for (int i = 0; i < 2; i++)
            if (sym_divides(CTX, offset, cand[i])) lengths[nl++] = cand[i];
    }
    lengths[nl++] = 1;
    const UOp *parts[VEC_MAX_LANES], *srcs[64];
    if (ls->nsrc > 64 || sz > VEC_MAX_LANES) return NULL;
    int np = 0;
    for (int go = 0; go < sz;) {
        int fl = 1;
        for (int i = 0; i < nl; i++)
            if (go + lengths[i] <= sz) { fl = lengths[i]; break; }
        const UOp *addr = with_valid(CTX, sym_addc(CTX, offset, go), mask);
        const UOp *lidx = addr ? uop_new(CTX, OP_INDEX, bdt, (const UOp *[]){buf, addr}, 2, NULL) : NULL;
        if (lidx && fl > 1) lidx = uop_new(CTX, OP_CAST, vec_ptr(bdt, fl), &lidx, 1, NULL);
        if (!lidx) return NULL;
        srcs[0] = lidx;
        for (int i = 1; i < ls->nsrc; i++) srcs[i] = ls->src[i];
        if (uop_op(ls) == OP_STORE) {
            int lanes[4];
            for (int j = 0; j < fl; j++) lanes[j] = go + j;
            if (!(srcs[1] = vec_gep(CTX, ls->src[1], lanes, fl))) return NULL;
            parts[np] = uop_new(CTX, OP_STORE, ls->dtype, srcs, ls->nsrc, ls->arg);
        } else
            parts[np] = uop_new(CTX, OP_LOAD, dt_vec(ls->dtype->scalar, fl), srcs, ls->nsrc, ls->arg);
        if (!parts[np++]) return NULL;
        go += fl;
    }
    if (np <= 1) return NULL;
    if (uop_op(ls) == OP_LOAD) return uop_new(CTX, OP_CAT, ls->dtype, parts, np, NULL);
    return group_of(CTX, parts, np);
}

static const RuleSpec devectorize_specs[] = {
    RULE_FN("cast_after_after", "(AFTER (CAST _) ...)", cast_after_after),
    RULE_FN("no_vectorized_alu", "{ALU CAST BITCAST}", no_vectorized_alu),
    RULE_FN("no_vectorized_buf", "{DEFINE_LOCAL DEFINE_REG}", no_vectorized_buf),
    RULE_FN("no_vectorized_index", "(INDEX cast@(CAST buf) idx)", no_vectorized_index),
    RULE_FN("no_vectorized_index_broadcast", "(INDEX (VECTORIZE (CAST _) ...) _)", no_vectorized_index_broadcast),
    RULE_FN("no_vectorized_index_gep", "(INDEX (GEP (CAST _)) _)", no_vectorized_index_broadcast),
};
static const RuleSpec load_store_folding_specs[] = {
    RULE_FN("expand_index", "(INDEX (VECTORIZE) _)", expand_index),
    RULE_FN("fold_expanded_index", "(VECTORIZE (INDEX) ...)", fold_expanded_index),
    RULE_FN("gep_after_load", "(LOAD (GEP _) ...)", gep_after_load),
    RULE_FN("gep_on_store", "(STORE (GEP _) _ ...)", gep_on_store),
    RULE_FN("ptrcat_after_load", "(LOAD (PTRCAT) ...)", ptrcat_after_load),
    RULE_FN("ptrcat_after_store", "(STORE (PTRCAT) _ ...)", ptrcat_after_store),
};
static const RuleSpec correct_load_store_specs[] = {
    RULE_FN("split_load_store", "({LOAD STORE} (CAST idx@(INDEX)) ...)", split_load_store),
};
const RuleTable devectorize_rules = RULE_TABLE(devectorize_specs);
const RuleTable load_store_folding_rules = RULE_TABLE(load_store_folding_specs);
const RuleTable correct_load_store_rules = RULE_TABLE(correct_load_store_specs);
