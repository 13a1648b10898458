/* expander.c - stage 9, the expander (tinygrad v0.12.0 codegen/late/
 * expander.py): sym + pm_pre_expander + pm_group_for_reduce + expander.
 *
 * An UPCAST or UNROLL range of size n becomes UNROLL(VCONST(0..n-1)) with
 * the arg ((axis, n),): "this value, once per lane of the axis".  Every op
 * with an UNROLL source is expanded into one vector op over all lanes of
 * the axes involved, wrapped in an UNROLL of those axes; CONTRACT takes axes
 * back out of an UNROLL into the vector dtype (a REDUCE's unrolled axes
 * become a vector source it reduces horizontally; a STORE/END's become a
 * plain vector store).  An UNROLL left with no axes is its source.
 * pm_group_for_reduce (GROUP opts) is in group_reduce.c. */
#include <stdio.h>
#include <stdlib.h>
#include "stage_rules.h"
#include "stages.h"
#include "../sym/vector_rules.h"
#include "../rewrite/rewrite.h"
#include "../sym/symbolic.h"

#define CTX (m->ctx)
#define ROOT (m->root)
#define MAX_AXES 32

/* one (axis id, size) pair of an UNROLL/CONTRACT arg */
typedef struct Axis {
    int64_t id, n;
} Axis;

/* the pairs of an arg ((id, n), ...); -1 when it is not such a tuple */
static int axes_of(const Arg *a, Axis *out) {
    if (!a || a->kind != ARG_TUPLE || a->n > MAX_AXES) return -1;
    for (uint32_t i = 0; i < a->n; i++) {
        const Arg *p = a->items[i];
        if (!p || p->kind != ARG_TUPLE || p->n != 2 || !p->items[0] || !p->items[1] || p->items[0]->kind != ARG_INT ||
            p->items[1]->kind != ARG_INT || p->items[1]->v.i < 1)
            return -1;
        out[i] = (Axis){p->items[0]->v.i, p->items[1]->v.i};
    }
    return (int)a->n;
}

static const Arg *axes_arg(UCtx *c, const Axis *ax, int n) {
    const Arg *items[MAX_AXES];
    for (int i = 0; i < n; i++) {
        const Arg *pair[2] = {arg_int(c, ax[i].id), arg_int(c, ax[i].n)};
        items[i] = arg_tuple(c, pair, 2);
    }
    return arg_tuple(c, items, (uint32_t)n);
}

static int64_t axes_size(const Axis *ax, int n) {
    int64_t s = 1;
    for (int i = 0; i < n && s <= VEC_MAX_LANES; i++) s *= ax[i].n;
    return s;
}

static bool axes_has(const Axis *ax, int n, Axis a) {
    for (int i = 0; i < n; i++)
        if (ax[i].id == a.id && ax[i].n == a.n) return true;
    return false;
}

/* The lane of a value unrolled over axes `e` (the last axis varies fastest)
 * at the point where axis ids[i] has value vals[i]. */
static int lane_at(const Axis *e, int ne, const int64_t *ids, const int64_t *vals, int nv) {
    int64_t lane = 0, mul = 1;
    for (int j = ne - 1; j >= 0; j--) {
        int64_t v = 0;
        for (int k = 0; k < nv; k++)
            if (ids[k] == e[j].id) v = vals[k];
        lane += v * mul;
        mul *= e[j].n;
    }
    return (int)lane;
}

/* Point k (0..size-1) of the axes `ax`, last axis fastest: the value of each. */
static void point_of(const Axis *ax, int n, int64_t k, int64_t *ids, int64_t *vals) {
    for (int j = n - 1; j >= 0; j--) {
        ids[j] = ax[j].id;
        vals[j] = k % ax[j].n;
        k /= ax[j].n;
    }
}

/* For each point of the expansion axes `c`, the lane of a value unrolled
 * over `e` (tinygrad _swizzle_args). */
static int swizzle(const Axis *c, int nc, const Axis *e, int ne, int *out) {
    int64_t total = axes_size(c, nc), ids[MAX_AXES], vals[MAX_AXES];
    for (int64_t k = 0; k < total; k++) {
        point_of(c, nc, k, ids, vals);
        out[k] = lane_at(e, ne, ids, vals, nc);
    }
    return (int)total;
}

static int cmp_axis(const void *a, const void *b) {
    const Axis *x = a, *y = b;
    if (x->id != y->id) return x->id < y->id ? -1 : 1;
    return x->n < y->n ? -1 : x->n > y->n;
}

static bool is_void(const UOp *u) { return u->dtype->sk == SK_VOID && !dt_is_ptr(u->dtype); }

/* ---- pm_pre_expander ---- */

/* RANGE of type UPCAST/UNROLL -> UNROLL(VCONST(0..n-1), ((axis, n),)) */
static const UOp *range_to_unroll(const Match *m, void *ud) {
    (void)ud;
    const UOp *r = ROOT;
    const Arg *a = r->arg;
    if (!a || a->kind != ARG_TUPLE || a->n < 2 || a->items[a->n - 1]->kind != ARG_AXIS) return NULL;
    AxisType at = a->items[a->n - 1]->v.axis;
    if (at != AXIS_UPCAST && at != AXIS_UNROLL) return NULL;
    int64_t n;
    if (!uop_const_int_value(r->src[0], &n) || n < 1 || n > VEC_MAX_LANES) {
        rewrite_fail(m, "%s RANGE %%%u needs a constant size from 1 to %d", axis_name(at), r->id, VEC_MAX_LANES);
        return NULL;
    }
    const Arg *vals[VEC_MAX_LANES];
    for (int64_t i = 0; i < n; i++) vals[i] = arg_int(CTX, i);
    const UOp *k = vec_const(CTX, dt_vec(r->dtype, (int)n), vals, (int)n);
    Axis ax = {a->items[0]->v.i, n};
    return k ? uop_new(CTX, OP_UNROLL, r->dtype, &k, 1, axes_arg(CTX, &ax, 1)) : NULL;
}

/* REDUCE(x, ranges..., UNROLLs...) -> REDUCE(CONTRACT(x, unrolled axes), ranges...) */
static const UOp *fix_reduce_unroll(const Match *m, void *ud) {
    (void)ud;
    const UOp *red = ROOT, *ranges[64];
    Axis ax[MAX_AXES];
    int nr = 0, na = 0;
    bool any = false;
    if (red->nsrc > 64) return NULL;
    for (int i = 1; i < red->nsrc; i++) {
        const UOp *s = red->src[i];
        if (uop_op(s) == OP_RANGE) { ranges[nr++] = s; continue; }
        any = true;
        if (uop_op(s) == OP_CONST) continue;
        Axis sa[MAX_AXES];
        int k = uop_op(s) == OP_UNROLL ? axes_of(s->arg, sa) : -1;
        if (k < 0 || na + k > MAX_AXES) {
            rewrite_fail(m, "REDUCE %%%u: source %d is %s %%%u, not a RANGE or an UNROLL", red->id, i,
                         op_name(uop_op(s)), s->id);
            return NULL;
        }
        for (int j = 0; j < k; j++) ax[na++] = sa[j];
    }
    if (!any) return NULL;
    const UOp *src = red->src[0];
    if (na) {
        int64_t sz = axes_size(ax, na);
        const DType *dt = red->dtype->count == 1 && sz <= VEC_MAX_LANES ? dt_vec(red->dtype, (int)sz) : NULL;
        if (!dt) {
            rewrite_fail(m, "REDUCE %%%u: cannot contract %lld lanes into its dtype", red->id, (long long)sz);
            return NULL;
        }
        src = uop_new_tagged(CTX, OP_CONTRACT, dt, &src, 1, axes_arg(CTX, ax, na), arg_int(CTX, 1));
        if (!src) return NULL;
    }
    const UOp *srcs[65];
    srcs[0] = src;
    for (int i = 0; i < nr; i++) srcs[i + 1] = ranges[i];
    return uop_new(CTX, OP_REDUCE, red->dtype, srcs, nr + 1, red->arg);
}

/* STORE(idx, val, ranges..., UNROLLs...) -> CONTRACT(STORE(idx, val, ranges...), unrolled axes) */
static const UOp *fix_store_unroll(const Match *m, void *ud) {
    (void)ud;
    const UOp *st = ROOT, *srcs[64];
    Axis ax[MAX_AXES];
    int ns = 2, na = 0;
    if (st->nsrc > 64) return NULL;
    srcs[0] = st->src[0], srcs[1] = st->src[1];
    for (int i = 2; i < st->nsrc; i++) {
        const UOp *s = st->src[i];
        Axis sa[MAX_AXES];
        int k = uop_op(s) == OP_UNROLL ? axes_of(s->arg, sa) : -1;
        if (k < 0) { srcs[ns++] = s; continue; }
        if (na + k > MAX_AXES) return NULL;
        for (int j = 0; j < k; j++) ax[na++] = sa[j];
    }
    if (ns == st->nsrc) return NULL;
    const UOp *inner = uop_new(CTX, OP_STORE, st->dtype, srcs, ns, st->arg);
    return inner ? uop_new_tagged(CTX, OP_CONTRACT, DT_VOID, &inner, 1, axes_arg(CTX, ax, na), arg_int(CTX, 1)) : NULL;
}

/* ---- expander ---- */

/* AFTER/END of a broadcast -> broadcast of the AFTER/END */
static const UOp *broadcast_through(const Match *m, void *ud) {
    (void)ud;
    const UOp *b = ROOT->src[0];
    if (b->nsrc < 2) return NULL;
    for (int i = 1; i < b->nsrc; i++)
        if (b->src[i] != b->src[0]) return NULL;
    const UOp *srcs[64];
    if (ROOT->nsrc > 64) return NULL;
    srcs[0] = b->src[0];
    for (int i = 1; i < ROOT->nsrc; i++) srcs[i] = ROOT->src[i];
    const DType *dt = uop_op(ROOT) == OP_AFTER ? b->src[0]->dtype : ROOT->dtype;
    const UOp *inner = uop_new(CTX, uop_op(ROOT), dt, srcs, ROOT->nsrc, ROOT->arg);
    return vec_broadcast(CTX, inner, b->nsrc);
}

/* END(x, ranges..., UNROLLs...) -> END(CONTRACT(x, unrolled axes), ranges...) */
static const UOp *end_unrolls(const Match *m, void *ud) {
    (void)ud;
    const UOp *srcs[64];
    Axis ax[MAX_AXES];
    int ns = 1, na = 0;
    if (ROOT->nsrc > 64) return NULL;
    for (int i = 1; i < ROOT->nsrc; i++) {
        const UOp *s = ROOT->src[i];
        Axis sa[MAX_AXES];
        int k = uop_op(s) == OP_UNROLL ? axes_of(s->arg, sa) : -1;
        if (k < 0) { srcs[ns++] = s; continue; }
        if (na + k > MAX_AXES) return NULL;
        for (int j = 0; j < k; j++) ax[na++] = sa[j];
    }
    if (ns == ROOT->nsrc) return NULL;
    srcs[0] = uop_new(CTX, OP_CONTRACT, DT_VOID, &ROOT->src[0], 1, axes_arg(CTX, ax, na));
    return srcs[0] ? uop_new(CTX, OP_END, ROOT->dtype, srcs, ns, ROOT->arg) : NULL;
}

/* BUFFERIZE(UNROLL, UNROLL) -> BUFFERIZE of CONTRACTs over the ranges' axes */
static const UOp *bufferize_contract(const Match *m, void *ud) {
    (void)ud;
    const UOp *x = ROOT, *srcs[2];
    int cnt = x->src[1]->src[0]->dtype->count;
    for (int i = 0; i < 2; i++) {
        const DType *dt = dt_vec(x->src[i]->dtype, cnt);
        if (!dt) return NULL;
        srcs[i] = uop_new(CTX, OP_CONTRACT, dt, &x->src[i], 1, x->src[1]->arg);
        if (!srcs[i]) return NULL;
    }
    return uop_new(CTX, OP_BUFFERIZE, x->dtype, srcs, 2, x->arg);
}

/* UNROLL(UNROLL(x, inner), outer) -> UNROLL(x, inner + outer) */
static const UOp *double_unroll(const Match *m, void *ud) {
    (void)ud;
    const UOp *inner = ROOT->src[0];
    Axis ax[2 * MAX_AXES];
    int ni = axes_of(inner->arg, ax), no = ni < 0 ? -1 : axes_of(ROOT->arg, ax + ni);
    if (no < 0 || ni + no > MAX_AXES) return NULL;
    return uop_new(CTX, OP_UNROLL, ROOT->dtype, &inner->src[0], 1, axes_arg(CTX, ax, ni + no));
}

/* the first source index of an op's ranges (tinygrad range_start) */
static int range_start(Op op) {
    switch (op) {
    case OP_BUFFERIZE: case OP_REDUCE: case OP_END: return 1;
    case OP_STORE: return 2;
    case OP_WMMA: return 3;
    default: return -1;
    }
}

/* An op with UNROLL sources -> UNROLL(the op over all lanes of their axes) */
static const UOp *do_expand(const Match *m, void *ud) {
    (void)ud;
    const UOp *root = ROOT;
    Op op = uop_op(root);
    Axis ex[MAX_AXES];
    int nex = -1;
    const Arg *first = NULL;
    bool same = true;
    for (int i = 0; i < root->nsrc; i++) {
        const UOp *s = root->src[i];
        if (uop_op(s) != OP_UNROLL) continue;
        if (!first) first = s->arg;
        else same &= s->arg == first;
    }
    if (!first) return NULL;
    if (op == OP_WMMA) {
        rewrite_fail(m, "WMMA %%%u: expanding tensor-core ops is not supported", root->id);
        return NULL;
    }
    if (same) nex = axes_of(first, ex);
    else {
        /* the union of every UNROLL's axes, sorted */
        Axis all[4 * MAX_AXES];
        int na = 0;
        for (int i = 0; i < root->nsrc; i++) {
            const UOp *s = root->src[i];
            Axis sa[MAX_AXES];
            int k = uop_op(s) == OP_UNROLL ? axes_of(s->arg, sa) : 0;
            if (k < 0 || na + k > 4 * MAX_AXES) { nex = -1; na = -1; break; }
            for (int j = 0; j < k; j++) all[na++] = sa[j];
        }
        if (na >= 0) {
            qsort(all, (size_t)na, sizeof *all, cmp_axis);
            nex = 0;
            for (int i = 0; i < na && nex <= MAX_AXES; i++)
                if (!nex || cmp_axis(&all[i], &ex[nex - 1]) != 0) {
                    if (nex == MAX_AXES) { nex = MAX_AXES + 1; break; }
                    ex[nex++] = all[i];
                }
            if (nex > MAX_AXES) nex = -1;
        }
    }
    if (nex < 0) {
        rewrite_fail(m, "%s %%%u: its UNROLL sources have malformed or too many axes", op_name(op), root->id);
        return NULL;
    }
    const Arg *ex_arg = same ? first : axes_arg(CTX, ex, nex);
    int64_t sz = axes_size(ex, nex);
    if (sz * root->dtype->count > VEC_MAX_LANES) {
        rewrite_fail(m, "%s %%%u: expanding to %lld lanes is more than %d", op_name(op), root->id,
                     (long long)(sz * root->dtype->count), VEC_MAX_LANES);
        return NULL;
    }
    const UOp *srcs[64];
    if (root->nsrc > 64) return NULL;
    int rs = range_start(op);
    for (int i = 0; i < root->nsrc; i++) {
        const UOp *s = root->src[i];
        if (uop_op(s) == OP_UNROLL) {
            if (s->arg == ex_arg) { srcs[i] = s->src[0]; continue; }
            Axis sa[MAX_AXES];
            int ns = axes_of(s->arg, sa), lanes[VEC_MAX_LANES];
            int n = swizzle(ex, nex, sa, ns, lanes), cnt = s->dtype->count;
            if (!is_void(s) && !dt_is_ptr(s->dtype) && cnt > 1) {
                /* each lane is a vector of cnt: keep its elements together */
                int wide[VEC_MAX_LANES];
                for (int k = 0; k < n; k++)
                    for (int j = 0; j < cnt; j++) wide[k * cnt + j] = lanes[k] * cnt + j;
                srcs[i] = vec_gep(CTX, s->src[0], wide, n * cnt);
            } else srcs[i] = vec_gep(CTX, s->src[0], lanes, n);
        } else if (rs >= 0 && i >= rs) srcs[i] = s;
        else if (op == OP_INDEX && i >= 1 && !dt_is_ptr(root->dtype)) srcs[i] = s;
        else if (!dt_is_ptr(s->dtype) && s->dtype->count > 1) {
            const UOp *rep[VEC_MAX_LANES];
            for (int k = 0; k < sz; k++) rep[k] = s;
            srcs[i] = uop_new(CTX, OP_CAT, dt_vec(s->dtype->scalar, (int)sz * s->dtype->count), rep, (int)sz, NULL);
        } else srcs[i] = vec_broadcast(CTX, s, (int)sz);
        if (!srcs[i]) {
            rewrite_fail(m, "%s %%%u: source %d cannot be expanded: %s", op_name(op), root->id, i, uctx_error(CTX));
            return NULL;
        }
    }
    const Arg *arg = root->arg;
    if (op == OP_GEP) {
        int g[2], total = dt_vcount(srcs[0]->dtype), step = total / (int)sz, lanes[VEC_MAX_LANES], n = 0;
        if (root->dtype->count != 1 || vec_tuple_ints(root->arg, g, 1) != 1 || step < 1) {
            rewrite_fail(m, "GEP %%%u: only a one-lane GEP can be expanded", root->id);
            return NULL;
        }
        for (int k = g[0]; k < total; k += step) lanes[n++] = k;
        arg = vec_int_tuple(CTX, lanes, n);
    }
    const DType *dt = is_void(root) ? root->dtype : vec_type(root->dtype, root->dtype->count * (int)sz);
    if (dt_is_ptr(root->dtype)) dt = dt_ptr_vec(root->dtype->ptr_scalar, (int)sz);
    const UOp *wide = dt ? uop_new(CTX, op, dt, srcs, root->nsrc, arg) : NULL;
    if (!wide) {
        rewrite_fail(m, "%s %%%u: the expanded op is not well formed: %s", op_name(op), root->id, uctx_error(CTX));
        return NULL;
    }
    return uop_new(CTX, OP_UNROLL, root->dtype, &wide, 1, ex_arg);
}

/* CONTRACT(UNROLL(x, axes), some axes) -> UNROLL(GEP(x, lanes), the other axes) */
static const UOp *do_contract(const Match *m, void *ud) {
    (void)ud;
    const UOp *con = ROOT, *ex = con->src[0];
    Axis ca[MAX_AXES], ea[MAX_AXES], rest[MAX_AXES];
    int nc = axes_of(con->arg, ca);
    if (nc < 0) {
        rewrite_fail(m, "CONTRACT %%%u: malformed axes", con->id);
        return NULL;
    }
    int64_t csz = axes_size(ca, nc);
    if (!is_void(con) && con->dtype->count != csz) {
        rewrite_fail(m, "CONTRACT %%%u: dtype count %d is not the %lld lanes of its axes", con->id, con->dtype->count,
                     (long long)csz);
        return NULL;
    }
    if (uop_op(ex) != OP_UNROLL) {
        /* nothing unrolled: the value repeated in every lane */
        if (is_void(con)) return ex;
        const UOp *rep[VEC_MAX_LANES];
        for (int i = 0; i < con->dtype->count; i++) rep[i] = ex;
        return uop_new(CTX, OP_VECTORIZE, con->dtype, rep, con->dtype->count, NULL);
    }
    int ne = axes_of(ex->arg, ea), nr = 0;
    if (ne < 0) return NULL;
    for (int i = 0; i < ne; i++)
        if (!axes_has(ca, nc, ea[i])) rest[nr++] = ea[i];
    int64_t rsz = axes_size(rest, nr), ids[2 * MAX_AXES], vals[2 * MAX_AXES];
    if (rsz * csz > VEC_MAX_LANES) return NULL;
    int lanes[VEC_MAX_LANES], n = 0;
    for (int64_t r = 0; r < rsz; r++)
        for (int64_t l = 0; l < csz; l++) {
            point_of(rest, nr, r, ids, vals);
            point_of(ca, nc, l, ids + nr, vals + nr);
            lanes[n++] = lane_at(ea, ne, ids, vals, nr + nc);
        }
    const UOp *g = vec_gep(CTX, ex->src[0], lanes, n);
    if (!g) {
        rewrite_fail(m, "CONTRACT %%%u: %s", con->id, uctx_error(CTX));
        return NULL;
    }
    return uop_new(CTX, OP_UNROLL, con->dtype, &g, 1, axes_arg(CTX, rest, nr));
}

/* UNROLL(x) with no axes -> x */
static const UOp *empty_unroll(const Match *m, void *ud) {
    (void)ud;
    const Arg *a = ROOT->arg;
    return a && a->kind == ARG_TUPLE && a->n == 0 ? ROOT->src[0] : NULL;
}

#define EXPANDED_OPS "{ALU CAST BITCAST GEP WMMA LOAD STORE INDEX BUFFERIZE VECTORIZE REDUCE END AFTER}"

static const RuleSpec pre_expander_specs[] = {
    RULE_FN("range_to_unroll", "(RANGE)", range_to_unroll),
    RULE_FN("fix_reduce_unroll", "(REDUCE)", fix_reduce_unroll),
    RULE_FN("fix_store_unroll", "(STORE)", fix_store_unroll),
};
static const RuleSpec expander_specs[] = {
    RULE_FN("broadcast_through_after", "(AFTER (VECTORIZE) ...)", broadcast_through),
    RULE_FN("broadcast_through_end", "(END (VECTORIZE) ...)", broadcast_through),
    RULE_FN("end_unrolls", "(END)", end_unrolls),
    RULE_FN("bufferize_contract", "(BUFFERIZE (UNROLL) (UNROLL))", bufferize_contract),
    RULE_FN("double_unroll", "(UNROLL (UNROLL))", double_unroll),
    RULE_FN("do_expand", EXPANDED_OPS, do_expand),
    RULE_FN("do_contract", "(CONTRACT)", do_contract),
    RULE_FN("empty_unroll", "(UNROLL _)", empty_unroll),
};

const RuleTable pm_pre_expander_rules = RULE_TABLE(pre_expander_specs);
const RuleTable expander_rules = RULE_TABLE(expander_specs);
