/* vector_rules.c - vector constructors and the gep_pushing rules (tinygrad
 * v0.12.0 symbolic.py): a GEP is pushed down until it meets what it selects
 * from, so that lanes of VECTORIZEs, constants and ALUs become the scalar
 * values they are, and CAT (which no backend renders) becomes a VECTORIZE. */
#include "vector_rules.h"
#include "sym_rules.h"
#include <stdio.h>

#define CTX (m->ctx)
#define ROOT (m->root)

/* ---- constructors ---- */

const DType *vec_scalar_type(const DType *dt) { return dt_is_ptr(dt) ? dt->ptr_scalar : dt->scalar; }

const DType *vec_type(const DType *dt, int n) {
    return dt_is_ptr(dt) ? dt_ptr_vec(dt->ptr_scalar, n) : dt_vec(dt->scalar, n);
}

const Arg *vec_int_tuple(UCtx *c, const int *v, int n) {
    const Arg *items[VEC_MAX_LANES];
    if (n > VEC_MAX_LANES) { uctx_set_error(c, "a vector of %d lanes is more than %d", n, VEC_MAX_LANES); return NULL; }
    for (int i = 0; i < n; i++) items[i] = arg_int(c, v[i]);
    return arg_tuple(c, items, (uint32_t)n);
}

int vec_tuple_ints(const Arg *a, int *out, int max) {
    if (!a || a->kind != ARG_TUPLE || (int)a->n > max) return -1;
    for (uint32_t i = 0; i < a->n; i++) {
        if (!a->items[i] || a->items[i]->kind != ARG_INT) return -1;
        out[i] = (int)a->items[i]->v.i;
    }
    return (int)a->n;
}

const UOp *vec_const(UCtx *c, const DType *dt, const Arg *const *vals, int n) {
    bool same = true;
    for (int i = 1; i < n && same; i++) same = vals[i] == vals[0];
    if (same) return uop_const_arg(c, dt, vals[0]);
    const UOp *r = uop_new(c, OP_VCONST, dt, NULL, 0, arg_tuple(c, vals, (uint32_t)n));
    return r;
}

const UOp *vec_gep(UCtx *c, const UOp *u, const int *lanes, int n) {
    if (!u) return NULL;
    if (u->dtype->sk == SK_VOID && !dt_is_ptr(u->dtype)) return u;
    int width = dt_vcount(u->dtype);
    for (int i = 0; i < n; i++)
        if (lanes[i] < 0 || lanes[i] >= width) {
            uctx_set_error(c, "lane %d of %s %%%u, which has %d", lanes[i], op_name(uop_op(u)), u->id, width);
            return NULL;
        }
    if (n == 1) {
        Op op = uop_op(u);
        if (op == OP_VECTORIZE) return u->src[lanes[0]];
        if (op == OP_VCONST) return uop_const_arg(c, vec_scalar_type(u->dtype), u->arg->items[lanes[0]]);
        if (op == OP_CONST) return uop_const_arg(c, vec_scalar_type(u->dtype), u->arg);
        if (width == 1) return u;
    }
    const Arg *a = vec_int_tuple(c, lanes, n);
    return a ? uop_new(c, OP_GEP, vec_type(u->dtype, n), &u, 1, a) : NULL;
}

const UOp *vec_lane(UCtx *c, const UOp *u, int lane) { return vec_gep(c, u, &lane, 1); }

const UOp *vec_broadcast(UCtx *c, const UOp *u, int n) {
    if (!u || n == 1) return u;
    const UOp *srcs[VEC_MAX_LANES];
    if (n > VEC_MAX_LANES) { uctx_set_error(c, "a vector of %d lanes is more than %d", n, VEC_MAX_LANES); return NULL; }
    for (int i = 0; i < n; i++) srcs[i] = u;
    /* a void value (an unrolled STORE or END) has no lanes to check */
    if (u->dtype->sk == SK_VOID && !dt_is_ptr(u->dtype))
        return uop_intern(c, OP_VECTORIZE, u->dtype, srcs, n, NULL, NULL);
    return uop_new(c, OP_VECTORIZE, vec_type(u->dtype, n), srcs, n, NULL);
}

/* ---- gep_pushing ---- */

static int gep_lanes(const UOp *g, int *lanes) { return vec_tuple_ints(g->arg, lanes, VEC_MAX_LANES); }

/* GEP(GEP(x, inner), outer) -> GEP(x, inner[outer]) */
static const UOp *gep_of_gep(const Match *m, void *ud) {
    (void)ud;
    int outer[VEC_MAX_LANES], inner[VEC_MAX_LANES], lanes[VEC_MAX_LANES];
    const UOp *g = ROOT->src[0];
    int n = gep_lanes(ROOT, outer), ni = gep_lanes(g, inner);
    if (n < 0 || ni < 0) return NULL;
    for (int i = 0; i < n; i++) {
        if (outer[i] >= ni) return NULL;
        lanes[i] = inner[outer[i]];
    }
    return vec_gep(CTX, g->src[0], lanes, n);
}

/* GEP(VECTORIZE(s...), lanes) -> VECTORIZE(s[lanes]) or the one source */
static const UOp *gep_of_vectorize(const Match *m, void *ud) {
    (void)ud;
    int lanes[VEC_MAX_LANES];
    const UOp *v = ROOT->src[0], *srcs[VEC_MAX_LANES];
    int n = gep_lanes(ROOT, lanes);
    if (n < 1) return NULL;
    for (int i = 0; i < n; i++) {
        if (lanes[i] >= v->nsrc) return NULL;
        srcs[i] = v->src[lanes[i]];
    }
    if (n == 1) return srcs[0];
    return uop_new(CTX, OP_VECTORIZE, ROOT->dtype, srcs, n, NULL);
}

/* GEP of a constant: the constant (CONST) or its chosen lanes (VCONST) */
static const UOp *gep_of_const(const Match *m, void *ud) {
    (void)ud;
    const UOp *k = ROOT->src[0];
    if (uop_op(k) == OP_CONST) return uop_const_arg(CTX, ROOT->dtype, k->arg);
    int lanes[VEC_MAX_LANES];
    const Arg *vals[VEC_MAX_LANES];
    int n = gep_lanes(ROOT, lanes);
    if (n < 1) return NULL;
    for (int i = 0; i < n; i++) {
        if (lanes[i] >= (int)k->arg->n) return NULL;
        vals[i] = k->arg->items[lanes[i]];
    }
    return vec_const(CTX, ROOT->dtype, vals, n);
}

/* GEP of a void value selects nothing */
static const UOp *gep_of_void(const Match *m, void *ud) {
    (void)ud;
    const UOp *x = ROOT->src[0];
    return x->dtype->sk == SK_VOID && !dt_is_ptr(x->dtype) ? x : NULL;
}

/* GEP(x, (0, 1, ..., n-1)) of an n-lane value -> x (not for pointers) */
static const UOp *gep_identity(const Match *m, void *ud) {
    (void)ud;
    int lanes[VEC_MAX_LANES];
    const UOp *x = ROOT->src[0];
    if (dt_is_ptr(ROOT->dtype)) return NULL;
    int n = gep_lanes(ROOT, lanes);
    if (n != x->dtype->count || dt_is_ptr(x->dtype)) return NULL;
    for (int i = 0; i < n; i++)
        if (lanes[i] != i) return NULL;
    return x;
}

/* GEP(alu(a, b), lanes) -> alu(GEP(a, lanes), GEP(b, lanes)) */
static const UOp *gep_through_alu(const Match *m, void *ud) {
    (void)ud;
    const UOp *alu = ROOT->src[0];
    if (dt_is_ptr(ROOT->dtype) || dt_is_ptr(alu->dtype)) return NULL;
    int lanes[VEC_MAX_LANES];
    int n = gep_lanes(ROOT, lanes);
    if (n < 1) return NULL;
    const UOp *srcs[3];
    for (int i = 0; i < alu->nsrc; i++)
        if (!(srcs[i] = vec_gep(CTX, alu->src[i], lanes, n))) return NULL;
    return uop_new(CTX, uop_op(alu), dt_vec(alu->dtype->scalar, n), srcs, alu->nsrc, alu->arg);
}

/* CAT(a, b, ...) -> VECTORIZE of every lane of a, then of b, ... */
static const UOp *cat_to_vectorize(const Match *m, void *ud) {
    (void)ud;
    if (dt_is_ptr(ROOT->dtype)) return NULL;
    const UOp *srcs[VEC_MAX_LANES];
    int n = 0;
    for (int s = 0; s < ROOT->nsrc; s++) {
        const UOp *y = ROOT->src[s];
        for (int i = 0; i < y->dtype->count; i++) {
            if (n == VEC_MAX_LANES) return NULL;
            if (!(srcs[n++] = vec_lane(CTX, y, i))) return NULL;
        }
    }
    if (n != ROOT->dtype->count) {
        rewrite_fail(m, "CAT %%%u has %d lanes in its sources but dtype count %d", ROOT->id, n, ROOT->dtype->count);
        return NULL;
    }
    return uop_new(CTX, OP_VECTORIZE, ROOT->dtype, srcs, n, NULL);
}

/* VECTORIZE(GEP(x, i0), GEP(x, i1), ...) -> GEP(x, (i0, i1, ...)) */
static const UOp *vectorize_of_geps(const Match *m, void *ud) {
    (void)ud;
    const UOp *x = NULL;
    int lanes[VEC_MAX_LANES], one[2];
    for (int i = 0; i < ROOT->nsrc; i++) {
        const UOp *g = ROOT->src[i];
        if (uop_op(g) != OP_GEP || (x && g->src[0] != x) || vec_tuple_ints(g->arg, one, 1) != 1) return NULL;
        x = g->src[0];
        lanes[i] = one[0];
    }
    return x ? vec_gep(CTX, x, lanes, ROOT->nsrc) : NULL;
}

static const RuleSpec gep_pushing_specs[] = {
    RULE_FN("gep_of_gep", "(GEP (GEP _))", gep_of_gep),
    RULE_FN("gep_of_vectorize", "(GEP (VECTORIZE))", gep_of_vectorize),
    RULE_FN("gep_of_const", "(GEP {CONST VCONST})", gep_of_const),
    RULE_FN("gep_of_void", "(GEP _)", gep_of_void),
    RULE_FN("gep_identity", "(GEP _)", gep_identity),
    RULE_FN("gep_through_alu", "(GEP {ALU CAST BITCAST})", gep_through_alu),
    RULE_FN("cat_to_vectorize", "(CAT)", cat_to_vectorize),
    RULE_FN("vectorize_of_geps", "(VECTORIZE (GEP _) ...)", vectorize_of_geps),
};

const RuleTable gep_pushing_rules = RULE_TABLE(gep_pushing_specs);

/* sym: a binary ALU of two broadcasts VECTORIZE(x, x, ...) op VECTORIZE(y,
 * y, ...) is the broadcast of the scalar x op y */
static const UOp *alu_of_broadcasts(const Match *m, void *ud) {
    (void)ud;
    const UOp *alu = ROOT, *x = match_get(m, "x"), *y = match_get(m, "y");
    int n = alu->dtype->count;
    if (n < 1 || n > VEC_MAX_LANES || alu->src[0]->nsrc != n || alu->src[1]->nsrc != n) return NULL;
    const UOp *src[2] = {x, y};
    const UOp *s = uop_new(CTX, uop_op(alu), alu->dtype->scalar, src, 2, alu->arg);
    if (!s) return NULL;
    const UOp *lanes[VEC_MAX_LANES];
    for (int i = 0; i < n; i++) lanes[i] = s;
    return uop_new(CTX, OP_VECTORIZE, alu->dtype, lanes, n, NULL);
}

static const RuleSpec vector_sym_specs[] = {
    RULE_FN("alu_of_broadcasts", "(ALU (VECTORIZE *x) (VECTORIZE *y))", alu_of_broadcasts),
};

const RuleTable sym_vector_rules = RULE_TABLE(vector_sym_specs);
