/* gpudims.c - stage 12, add GPU dims.
 *
 * The CPU target: a THREAD range (from the THREAD opt) becomes SPECIAL
 * gidx0, which the LLVM renderer reads as the kernel's core_id argument,
 * and the ENDs that closed it no longer do; the program runner launches one
 * call per core_id (kernel_threads).  The CPU has no local memory or
 * workgroups, as in tinygrad's CPU renderer.
 *
 * The gpu target (tinygrad v0.12.0's add_gpudims): the GLOBAL ranges become
 * the workgroup ids gidx0.. (the last GLOBAL range is gidx0), the LOCAL and
 * GROUP_REDUCE ranges the work-item ids lidx0.. within a workgroup, fitted
 * to the GPU's limits (GPU_GLOBAL_MAX, GPU_LOCAL_MAX: more than three dims
 * are merged, a dim over its limit is split); with NOLOCALS the GLOBAL
 * ranges become global ids idx0.. and there are no workgroups.  A store to
 * a global buffer whose index does not use some local range is done by the
 * work item where that range is 0 only (its index is Invalid elsewhere).
 * The ENDs of the replaced ranges go: a SPECIAL is not a loop. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "stage_rules.h"
#include "stages.h"
#include "ranges.h"
#include "../sym/vector_rules.h"
#include "../util/u64map.h"

#define CTX (m->ctx)
#define ROOT (m->root)

static bool is_thread_range(const UOp *u) {
    if (uop_op(u) != OP_RANGE || !u->arg || u->arg->kind != ARG_TUPLE || !u->arg->n) return false;
    const Arg *t = u->arg->items[u->arg->n - 1];
    return t && t->kind == ARG_AXIS && t->v.axis == AXIS_THREAD;
}

/* RANGE(n, THREAD) -> SPECIAL(n) "gidx0" */
static const UOp *thread_to_special(const Match *m, void *ud) {
    (void)ud;
    const UOp *r = ROOT;
    if (!is_thread_range(r)) return NULL;
    return uop_intern(CTX, OP_SPECIAL, r->dtype, &r->src[0], 1, arg_str(CTX, "gidx0"), NULL);
}

/* END(x, ..., SPECIAL, ...) -> END(x, ...): a core_id is not a loop */
static const UOp *end_drops_special(const Match *m, void *ud) {
    (void)ud;
    const UOp *e = ROOT;
    int keep = 0;
    for (int i = 0; i < e->nsrc; i++) keep += !(i > 0 && uop_op(e->src[i]) == OP_SPECIAL);
    if (keep == e->nsrc) return NULL;
    const UOp **src = malloc((size_t)keep * sizeof *src);
    if (!src) return NULL;
    int k = 0;
    for (int i = 0; i < e->nsrc; i++)
        if (!(i > 0 && uop_op(e->src[i]) == OP_SPECIAL)) src[k++] = e->src[i];
    const UOp *out = keep == 1 ? e->src[0] : uop_intern(CTX, OP_END, e->dtype, src, keep, e->arg, e->tag);
    free(src);
    return out;
}


/* ---- the gpu target ---- */

#define MAX_DIMS 32

typedef struct GpuDimsCtx {
    bool gpu;
    bool dont_use_locals;
} GpuDimsCtx;

static bool gpudims_init(void *ctx, const UOp *root, const StageCtx *sc, char *why, size_t whylen) {
    (void)root, (void)why, (void)whylen;
    GpuDimsCtx *g = ctx;
    g->gpu = sc->target == TARGET_GPU;
    for (int i = 0; i < sc->nopts; i++) g->dont_use_locals |= sc->opts[i].op == OPT_NOLOCALS;
    return true;
}

const StageContext gpudims_context = {.name = "Renderer", .size = sizeof(GpuDimsCtx), .init = gpudims_init};

/* tinygrad's _group_dims: merges neighbours until there are at most as many
 * dims as limits and each fits; false when it cannot */
static bool group_dims(int64_t *d, int *n, const int64_t *max, int nmax) {
    for (;;) {
        bool over = *n > nmax;
        for (int i = 0; i < *n && i < nmax; i++) over |= d[i] > max[i];
        if (!over) return true;
        int i = 0;
        for (; i < nmax; i++)
            if (i < *n - 1 && d[i] * d[i + 1] <= max[i]) break;
        if (i == nmax) return false;
        d[i] *= d[i + 1];
        memmove(&d[i + 1], &d[i + 2], (size_t)(*n - i - 2) * sizeof *d);
        (*n)--;
    }
}

/* tinygrad's _split_dims: a dim over its limit gives a factor to the next */
static bool split_dims(int64_t *d, int *n, const int64_t *max) {
    bool fits = true;
    for (int i = 0; i < *n && i < 3; i++) fits &= d[i] <= max[i];
    if (fits) return true;
    int64_t x[3] = {1, 1, 1};
    for (int i = 0; i < *n; i++) x[i] = d[i];
    for (int i = 0; i < 3; i++)
        while (x[i] > max[i]) {
            int64_t div = 1;
            for (int64_t k = 2; k * k <= x[i] || k == 2; k++)
                if (k <= x[i] && x[i] % k == 0) { div = k; break; }
            if (div == 1) return false;
            x[i] /= div;
            x[(i + 1) % 3] *= div;
        }
    *n = x[2] == 1 ? 2 : 3;   /* as tinygrad returns them */
    for (int i = 0; i < *n; i++) d[i] = x[i];
    return true;
}

static const UOp *ci(UCtx *c, int64_t v) { return uop_const_int(c, DT_INDEX, v); }

/* tinygrad's get_grouped_dims: the index expression of each dim, from
 * SPECIALs named prefix0.. fitted to the limits; false with a message */
static bool grouped_dims(UCtx *c, const char *prefix, const int64_t *dims_in, int n, const int64_t *max, bool reverse,
                         const UOp **out, char *why, size_t whylen) {
    int64_t dims[MAX_DIMS], lim[MAX_DIMS];
    for (int i = 0; i < n; i++) dims[i] = dims_in[reverse ? n - 1 - i : i];
    int nl = n;
    memcpy(lim, dims, (size_t)n * sizeof *dims);
    if (!group_dims(lim, &nl, max, 3)) {
        memcpy(lim, dims, (size_t)n * sizeof *dims);
        nl = n;
    }
    if (nl > 3) {
        snprintf(why, whylen, "cannot fit %d %s dims into 3", n, prefix);
        return false;
    }
    bool same = nl == n && !memcmp(lim, dims, (size_t)n * sizeof *dims);
    if (same && !split_dims(lim, &nl, max)) {
        snprintf(why, whylen, "cannot fit the %s dims into the GPU's limits", prefix);
        return false;
    }
    same = nl == n && !memcmp(lim, dims, (size_t)n * sizeof *dims);
    const UOp *raw[3], *res[MAX_DIMS];
    for (int i = 0; i < nl; i++) {
        char name[16];
        snprintf(name, sizeof name, "%s%d", prefix, i);
        const UOp *sz = ci(c, lim[i]);
        raw[i] = sz ? uop_new(c, OP_SPECIAL, DT_INDEX, &sz, 1, arg_str(c, name)) : NULL;
        if (!raw[i]) return snprintf(why, whylen, "%s", uctx_error(c)), false;
    }
    if (nl < n) {
        /* each limited dim is a product of consecutive dims (tinygrad's
         * get_contraction: where the running products of the limited dims
         * meet those of the dims) */
        int split[3];
        int64_t acc_new = 1;
        for (int i = 0; i < nl; i++) {
            acc_new *= lim[i];
            int64_t acc_old = 1;
            split[i] = -1;
            for (int k = 0; k < n && split[i] < 0; k++) {
                acc_old *= dims[k];
                if (acc_old == acc_new) split[i] = k + 1;
            }
            if (acc_new == 1) split[i] = 0;
            if (split[i] < 0) return snprintf(why, whylen, "cannot group the %s dims", prefix), false;
        }
        for (int i = 0; i < nl; i++) {
            int first = i == 0 ? 0 : split[i - 1], last = i == nl - 1 ? n : split[i];
            const UOp *idx = raw[i];
            for (int k = first; k < last - 1; k++) {
                res[k] = uop_binary(c, OP_MOD, idx, ci(c, dims[k]));
                idx = uop_binary(c, OP_IDIV, idx, ci(c, dims[k]));
            }
            if (last > first) res[last - 1] = idx;
        }
    } else if (nl > n) {
        if (n == 1 && nl == 2) res[0] = uop_binary(c, OP_ADD, uop_binary(c, OP_MUL, raw[0], ci(c, lim[1])), raw[1]);
        else if (n == 1 && nl == 3)
            res[0] = uop_binary(c, OP_ADD,
                                uop_binary(c, OP_MUL, uop_binary(c, OP_ADD, uop_binary(c, OP_MUL, raw[0], ci(c, lim[1])), raw[1]),
                                           ci(c, lim[2])),
                                raw[2]);
        else res[0] = uop_binary(c, OP_ADD, uop_binary(c, OP_MUL, raw[0], ci(c, lim[1])), raw[1]), res[1] = raw[2];
    } else if (!same) {
        const UOp *flat = n == 2 ? uop_binary(c, OP_ADD, uop_binary(c, OP_MUL, raw[0], ci(c, lim[1])), raw[1])
                                 : uop_binary(c, OP_ADD, uop_binary(c, OP_ADD, uop_binary(c, OP_MUL, raw[0], ci(c, lim[1] * lim[2])),
                                                                    uop_binary(c, OP_MUL, raw[1], ci(c, lim[2]))),
                                              raw[2]);
        if (n == 2) {
            res[0] = uop_binary(c, OP_IDIV, flat, ci(c, dims[1]));
            res[1] = uop_binary(c, OP_MOD, flat, ci(c, dims[1]));
        } else {
            res[0] = uop_binary(c, OP_IDIV, flat, ci(c, dims[2] * dims[1]));
            res[1] = uop_binary(c, OP_MOD, uop_binary(c, OP_IDIV, flat, ci(c, dims[2])), ci(c, dims[1]));
            res[2] = uop_binary(c, OP_MOD, flat, ci(c, dims[2]));
        }
    } else {
        for (int i = 0; i < n; i++) res[i] = raw[i];
    }
    for (int i = 0; i < n; i++) {
        out[reverse ? n - 1 - i : i] = res[i];
        if (!res[i]) return snprintf(why, whylen, "%s", uctx_error(c)), false;
    }
    return true;
}

/* whether the graph under u uses range r */
static bool uses_range(const UOp *u, const UOp *r) {
    size_t n;
    const UOp **topo = uop_toposort(u, &n);
    bool found = false;
    for (size_t i = 0; topo && i < n && !found; i++) found = topo[i] == r;
    free(topo);
    return found;
}

/* the INDEX a STORE writes through, if into a global buffer */
static const UOp *global_store_index(const UOp *st) {
    const UOp *ix = st->src[0];
    if (uop_op(ix) == OP_CAST) ix = ix->src[0];
    if (uop_op(ix) != OP_INDEX || ix->nsrc != 2) return NULL;
    const UOp *b = ix->src[0];
    while (uop_op(b) == OP_AFTER) b = b->src[0];
    return uop_op(b) == OP_DEFINE_GLOBAL ? ix : NULL;
}

static const UOp *add_gpudims(const Match *m, void *ud) {
    (void)ud;
    const GpuDimsCtx *g = m->user;
    if (!g || !g->gpu) return NULL;
    UCtx *c = CTX;
    size_t n;
    const UOp **topo = uop_toposort(ROOT, &n);
    if (!topo) return NULL;
    const UOp *glob[MAX_DIMS], *loc[MAX_DIMS];
    int ng = 0, nl = 0;
    bool special = false;
    for (size_t i = 0; i < n; i++) {
        const UOp *u = topo[i];
        special |= uop_op(u) == OP_SPECIAL;
        AxisType t = range_axis_type(u);
        if ((t == AXIS_GLOBAL || t == AXIS_THREAD) && ng < MAX_DIMS) glob[ng++] = u;
        if ((t == AXIS_WARP || t == AXIS_LOCAL || t == AXIS_GROUP_REDUCE) && nl < MAX_DIMS) loc[nl++] = u;
    }
    const UOp *out = NULL;
    if (special || (!ng && !nl)) goto done;
    qsort(glob, (size_t)ng, sizeof *glob, range_ids_qsort_cmp);
    qsort(loc, (size_t)nl, sizeof *loc, range_ids_qsort_cmp);
    int64_t gs[MAX_DIMS], ls[MAX_DIMS];
    for (int i = 0; i < ng + nl; i++) {
        const UOp *r = i < ng ? glob[i] : loc[i - ng];
        if (!uop_const_int_value(r->src[0], i < ng ? &gs[i] : &ls[i - ng])) {
            rewrite_fail(m, "RANGE %%%u: a GPU dim of symbolic size is not supported", r->id);
            goto done;
        }
    }
    const UOp *gidx[MAX_DIMS], *lidx[MAX_DIMS];
    const int64_t gmax[3] = GPU_GLOBAL_MAX, lmax[3] = GPU_LOCAL_MAX;
    char why[256];
    if (g->dont_use_locals && nl) {
        rewrite_fail(m, "NOLOCALS with local ranges");
        goto done;
    }
    if (!grouped_dims(c, g->dont_use_locals ? "idx" : "gidx", gs, ng, gmax, true, gidx, why, sizeof why) ||
        !grouped_dims(c, "lidx", ls, nl, lmax, false, lidx, why, sizeof why)) {
        rewrite_fail(m, "%s", why);
        goto done;
    }
    /* substitute, rebuilding in toposort order */
    U64Map map = {0};
    const UOp **src = NULL;
    for (size_t i = 0; i < n; i++) {
        const UOp *u = topo[i], *rep = NULL;
        for (int k = 0; k < ng && !rep; k++) rep = u == glob[k] ? gidx[k] : NULL;
        for (int k = 0; k < nl && !rep; k++) rep = u == loc[k] ? lidx[k] : NULL;
        if (!rep) {
            free(src);
            src = malloc(((size_t)u->nsrc + 1) * sizeof *src);
            if (!src) break;
            int ns = 0;
            bool changed = false;
            for (int j = 0; j < u->nsrc; j++) {
                const UOp *s = u->src[j], *t = u64map_get(&map, s->id);
                /* an END no longer closes a replaced range */
                if (uop_op(u) == OP_END && j > 0 && uop_op(s) == OP_RANGE && uop_op(t) != OP_RANGE) {
                    changed = true;
                    continue;
                }
                changed |= t != s;
                src[ns++] = t;
            }
            rep = !changed ? u : uop_op(u) == OP_END && ns == 1 ? src[0] : uop_with_src(c, u, src, ns);
            /* a global store not using a local range is done where that range is 0 */
            if (rep && uop_op(u) == OP_STORE && global_store_index(u) && !g->dont_use_locals) {
                const UOp *ix = global_store_index(u), *mask = NULL;
                for (int k = 0; k < nl; k++) {
                    if (uses_range(ix, loc[k])) continue;
                    const UOp *ne = uop_binary(c, OP_CMPNE, lidx[k], ci(c, 0));
                    const UOp *eq = ne ? uop_binary(c, OP_CMPNE, ne, uop_const_bool(c, true)) : NULL;
                    mask = mask && eq ? uop_binary(c, OP_AND, mask, eq) : eq;
                }
                if (mask) {
                    const UOp *nix = rep->src[0], *cast = NULL;
                    if (uop_op(nix) == OP_CAST) cast = nix, nix = nix->src[0];
                    const UOp *idx = nix->src[1];
                    int cnt = dt_vcount(idx->dtype);
                    const UOp *mk = cnt > 1 ? vec_broadcast(c, mask, cnt) : mask;
                    const UOp *inv = uop_const_arg(c, idx->dtype, arg_invalid(c));
                    const UOp *w = mk && inv ? uop_where(c, mk, idx, inv) : NULL;
                    const UOp *is[2] = {nix->src[0], w};
                    const UOp *ni = w ? uop_with_src(c, nix, is, 2) : NULL;
                    if (ni && cast) ni = uop_with_src(c, cast, &ni, 1);
                    const UOp *ss[8];
                    int k = 0;
                    ss[k++] = ni;
                    for (int j = 1; j < rep->nsrc && j < 8; j++) ss[k++] = rep->src[j];
                    rep = ni ? uop_with_src(c, rep, ss, k) : NULL;
                }
            }
        }
        if (!rep || !u64map_put(&map, u->id, rep)) {
            rep = NULL;
            break;
        }
        if (i == n - 1) out = rep;
    }
    free(src);
    u64map_free(&map);
    if (!out) rewrite_fail(m, "add gpudims: %s", uctx_error(c)[0] ? uctx_error(c) : "out of memory");
done:
    free(topo);
    return out;
}

static const RuleSpec specs[] = {
    RULE_FN("thread_to_special", "(RANGE ...)", thread_to_special),
    RULE_FN("end_drops_special", "(END ...)", end_drops_special),
    RULE_FN("add_gpudims", "(SINK ...)", add_gpudims),
};

const RuleTable pm_add_gpudims_rules = RULE_TABLE(specs);
