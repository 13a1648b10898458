/* stages_late.c - the rules of stages 13, 18 and 19 of tinygrad v0.12.0's
 * codegen (the rows in stage_table.c compose them):
 *   pm_add_loads               a value INDEX becomes LOAD(INDEX as a pointer)
 *   get_late_rewrite_patterns  the late rewrites for the ops tinygrad's CPU
 *                              LLVM renderer has (CMPLT, FDIV); the
 *                              decompositions themselves are in
 *                              transcendental.c
 *   get_late_rewrite_patterns_native  the same for uopdb's LLVM renderer's
 *                              whole op set (pow2 mul/div/mod to shifts,
 *                              MULACC, NEG, SUB, CMPEQ), with
 *                              {transcendentals = "native"}
 *   pm_render                  vector constants and GEPs explicit, masked
 *                              loads with an alt value
 *   extra_matcher              the renderer's: bfloat16 math in float32
 *   pm_split_ends              an END of several ranges becomes nested ENDs */
#include "stages.h"
#include <stdlib.h>
#include <string.h>
#include "ranges.h"
#include "stage_rules.h"
#include "uop_build.h"
#include "../sym/bounds.h"
#include "../sym/symbolic.h"

#define CTX (m->ctx)
#define ROOT (m->root)
#define GET(n) match_get(m, n)

static bool is_const_int(const UOp *u, int64_t *v) {
    return u && uop_op(u) == OP_CONST && u->arg && u->arg->kind == ARG_INT && (*v = u->arg->v.i, true);
}
static const UOp *not_of(UCtx *c, const UOp *x) {
    const UOp *t = uop_const_int(c, x->dtype, 1);
    return uop_binary(c, OP_CMPNE, x, t);
}
/* log2 of v when v is a power of two above 1, else 0 (tinygrad's powers_of_two.get(v, 0)) */
static int pow2_shift(int64_t v) {
    if (v < 2 || (v & (v - 1))) return 0;
    int s = 0;
    while ((1LL << s) != v) s++;
    return s;
}
static const UOp *strip_cast(const UOp *u) { return uop_op(u) == OP_CAST ? u->src[0] : u; }

/* ================= stage 13: add loads ================= */

static const UOp *add_load(const Match *m, void *ud) {
    (void)ud;
    const UOp *idx = ROOT;
    if (dt_is_ptr(idx->dtype)) return NULL;
    const UOp *p = uop_new(CTX, OP_INDEX, idx->src[0]->dtype, idx->src, idx->nsrc, idx->arg);
    return ub_node(CTX, OP_LOAD, idx->dtype->base, &p, 1, NULL);
}

static const UOp *store_without_load(const Match *m, void *ud) {
    (void)ud;
    const UOp *s = ROOT;
    const UOp **src = malloc((size_t)s->nsrc * sizeof *src);
    if (!src) return NULL;
    memcpy(src, s->src, (size_t)s->nsrc * sizeof *src);
    src[0] = s->src[0]->src[0];
    const UOp *r = uop_with_src(CTX, s, src, s->nsrc);
    free(src);
    return r;
}

static const RuleSpec add_loads_specs[] = {
    RULE_FN("add_load", "(INDEX)", add_load),
    RULE_FN("store_without_load", "(STORE (LOAD) ...)", store_without_load),
};


/* ================= stage 18: late rewrites for the renderer's op set ================= */
/* tinygrad v0.12.0's CPU LLVM renderer announces only FDIV and CMPLT
 * (LLVMRenderer.code_for_op), so of get_late_rewrite_patterns the
 * comparison and division rules apply, with the decompositions of
 * transcendental.c.  uopdb's renderer (core/backend/llvm_render.c) draws
 * every ALU op but THREEFRY natively, EXP2/LOG2/SIN/SQRT/MAX included; with
 * {transcendentals = "native"} stage 18 announces that whole set, and the
 * rules for AND, OR, SHL, SHR, NEG, SUB, CMPLT, CMPEQ, MULACC and FDIV
 * apply. */

static const UOp *mod_pow2_to_and(const Match *m, void *ud) {
    (void)ud;
    const UOp *x = GET("x");
    int64_t c, lo, hi;
    if (!is_const_int(GET("c"), &c) || !pow2_shift(c)) return NULL;
    /* MOD is the C remainder: the mask equals it only for non-negative x */
    if (!uop_bounds(x, &lo, &hi) || lo < 0) return NULL;
    return uop_binary(CTX, OP_AND, x, uop_const_int(CTX, x->dtype, c - 1));
}

static const UOp *not_and_not_to_or(const Match *m, void *ud) {
    (void)ud;
    return not_of(CTX, uop_binary(CTX, OP_OR, GET("x"), GET("y")));
}

static const UOp *mul_pow2_to_shl(const Match *m, void *ud) {
    (void)ud;
    const UOp *x = GET("x");
    int64_t c;
    int v;
    if (!is_const_int(GET("c"), &c) || !(v = pow2_shift(c))) return NULL;
    return uop_binary(CTX, OP_SHL, x, uop_const_int(CTX, x->dtype, v));
}

static const UOp *div_pow2_to_shr(const Match *m, void *ud) {
    (void)ud;
    const UOp *x = GET("x");
    int64_t c, lo, hi;
    int v;
    if (!is_const_int(GET("c"), &c) || !(v = pow2_shift(c))) return NULL;
    const UOp *sh = uop_const_int(CTX, x->dtype, v);
    if (dt_is_unsigned(x->dtype)) return uop_binary(CTX, OP_SHR, x, sh);
    /* truncating division: negative numerators are biased by c-1 first */
    const UOp *neg = uop_binary(CTX, OP_CMPLT, x, uop_const_int(CTX, x->dtype, 0));
    if (neg && uop_bounds(neg, &lo, &hi) && lo == hi) neg = uop_const_bool(CTX, lo != 0);
    const UOp *bias = uop_where(CTX, neg, uop_const_int(CTX, x->dtype, c - 1), uop_const_int(CTX, x->dtype, 0));
    return uop_binary(CTX, OP_SHR, uop_binary(CTX, OP_ADD, x, bias), sh);
}

static const UOp *mul_neg1_to_neg(const Match *m, void *ud) { (void)ud; return uop_unary(CTX, OP_NEG, GET("x")); }
static const UOp *add_neg_to_sub(const Match *m, void *ud) {
    (void)ud;
    return uop_binary(CTX, OP_SUB, GET("x"), GET("y"));
}

static const UOp *not_lt_const(const Match *m, void *ud) {   /* !(x < c) -> c-1 < x */
    (void)ud;
    int64_t c;
    const UOp *x = GET("x");
    /* c may lie outside x's dtype (a wide Lua integer): c - 1 must not overflow */
    if (!is_const_int(GET("c"), &c) || c == dt_min_int(x->dtype->scalar) || c == INT64_MIN) return NULL;
    return uop_binary(CTX, OP_CMPLT, uop_const_int(CTX, x->dtype, c - 1), x);
}
static const UOp *not_const_lt(const Match *m, void *ud) {   /* !(c < x) -> x < c+1 */
    (void)ud;
    int64_t c;
    const UOp *x = GET("x");
    if (!is_const_int(GET("c"), &c) || c == dt_max_int(x->dtype->scalar) || c == INT64_MAX) return NULL;
    return uop_binary(CTX, OP_CMPLT, x, uop_const_int(CTX, x->dtype, c + 1));
}
static const UOp *neg_lt_scaled(const Match *m, void *ud) {   /* -x < y*c -> y*(-c) < x */
    (void)ud;
    int64_t c;
    const UOp *x = GET("x"), *y = GET("y");
    if (!is_const_int(GET("c"), &c) || c == INT64_MIN) return NULL;
    return uop_binary(CTX, OP_CMPLT, uop_binary(CTX, OP_MUL, y, uop_const_int(CTX, y->dtype, -c)), x);
}
static const UOp *neg_lt_const(const Match *m, void *ud) {   /* -x < c -> -c < x */
    (void)ud;
    int64_t c;
    const UOp *x = GET("x");
    if (!is_const_int(GET("c"), &c) || c == INT64_MIN) return NULL;
    return uop_binary(CTX, OP_CMPLT, uop_const_int(CTX, x->dtype, -c), x);
}
static const UOp *between_to_eq(const Match *m, void *ud) {   /* (c1 < x) & (x < c2), c1+2 == c2 -> x == c1+1 */
    (void)ud;
    int64_t c1, c2;
    const UOp *x = GET("x");
    if (!is_const_int(GET("c1"), &c1) || !is_const_int(GET("c2"), &c2)) return NULL;
    if (GET("c1")->dtype->count != 1 || GET("c2")->dtype->count != 1 || c1 >= c2 || c2 - c1 != 2) return NULL;
    return uop_binary(CTX, OP_CMPEQ, x, uop_const_int(CTX, x->dtype, c1 + 1));
}
/* the same without CMPEQ in the op set: x == c1+1 written !(x != c1+1) */
static const UOp *between_to_not_ne(const Match *m, void *ud) {
    const UOp *eq = between_to_eq(m, ud);
    if (!eq) return NULL;
    return not_of(CTX, uop_binary(CTX, OP_CMPNE, eq->src[0], eq->src[1]));
}
static const UOp *not_ne_to_eq(const Match *m, void *ud) {
    (void)ud;
    return uop_binary(CTX, OP_CMPEQ, GET("x"), GET("y"));
}
static const UOp *mul_add_to_mulacc(const Match *m, void *ud) {
    (void)ud;
    /* bfloat16 and fp8 math is done in float32 after stage 19: a MULACC
     * there would skip the rounding of the product to the narrow type */
    ScalarKind sk = ROOT->dtype->sk;
    if (sk == SK_BFLOAT16 || sk == SK_FP8E4M3 || sk == SK_FP8E5M2) return NULL;
    const UOp *s[3] = {GET("a"), GET("b"), GET("c")};
    return ub_node(CTX, OP_MULACC, ROOT->dtype, s, 3, NULL);
}
static const UOp *reciprocal_to_fdiv(const Match *m, void *ud) {
    (void)ud;
    const UOp *x = GET("x");
    return uop_binary(CTX, OP_FDIV, uop_const_int(CTX, x->dtype, 1), x);
}
static const UOp *mul_inverse_to_fdiv(const Match *m, void *ud) {
    (void)ud;
    return uop_binary(CTX, OP_FDIV, GET("a"), GET("b"));
}

static const RuleSpec late_rewrite_specs[] = {
    RULE_FN("mod_pow2_to_and", "(MOD x:ints c@(CONST))", mod_pow2_to_and),
    RULE_FN("not_and_not_to_or", "(AND (CMPNE x:bool true) (CMPNE y:bool true))", not_and_not_to_or),
    RULE_FN("mul_pow2_to_shl", "(MUL x:ints c@(CONST))", mul_pow2_to_shl),
    RULE_FN("div_pow2_to_shr", "(IDIV x:ints c@(CONST))", div_pow2_to_shr),
    RULE_FN("mul_neg1_to_neg", "(MUL x -1)", mul_neg1_to_neg),
    RULE_FN("add_neg_to_sub", "(ADD x (NEG y))", add_neg_to_sub),
    RULE_FN("not_lt_const", "(CMPNE (CMPLT x:sints c@(CONST:sints)) true)", not_lt_const),
    RULE_FN("not_const_lt", "(CMPNE (CMPLT c@(CONST:sints) x:sints) true)", not_const_lt),
    RULE_FN("neg_lt_scaled", "(CMPLT (MUL x:sints -1) (MUL y:sints c@(CONST)))", neg_lt_scaled),
    RULE_FN("neg_lt_const", "(CMPLT (MUL x:sints -1) c@(CONST))", neg_lt_const),
    RULE_FN("between_to_eq", "(AND (CMPLT c1@(CONST) x:sints) (CMPLT x c2@(CONST)))", between_to_eq),
    RULE_FN("not_ne_to_eq", "(CMPNE (CMPNE x y) true)", not_ne_to_eq),
    RULE_FN("mul_add_to_mulacc", "(ADD (MUL a b) c)", mul_add_to_mulacc),
    RULE_FN("reciprocal_to_fdiv", "(RECIPROCAL x)", reciprocal_to_fdiv),
    RULE_FN("mul_inverse_to_fdiv", "(MUL a:floats (FDIV 1 b))", mul_inverse_to_fdiv),
};

/* the op set of tinygrad's CPU LLVM renderer: CMPLT and FDIV */
static const RuleSpec late_llvm_specs[] = {
    RULE_FN("not_lt_const", "(CMPNE (CMPLT x:sints c@(CONST:sints)) true)", not_lt_const),
    RULE_FN("not_const_lt", "(CMPNE (CMPLT c@(CONST:sints) x:sints) true)", not_const_lt),
    RULE_FN("neg_lt_scaled", "(CMPLT (MUL x:sints -1) (MUL y:sints c@(CONST)))", neg_lt_scaled),
    RULE_FN("neg_lt_const", "(CMPLT (MUL x:sints -1) c@(CONST))", neg_lt_const),
    RULE_FN("between_to_not_ne", "(AND (CMPLT c1@(CONST) x:sints) (CMPLT x c2@(CONST)))", between_to_not_ne),
    RULE_FN("reciprocal_to_fdiv", "(RECIPROCAL x)", reciprocal_to_fdiv),
    RULE_FN("mul_inverse_to_fdiv", "(MUL a:floats (FDIV 1 b))", mul_inverse_to_fdiv),
};

/* ================= stage 19: pm_render ================= */

static const UOp *vector_const_explicit(const Match *m, void *ud) {
    (void)ud;
    const UOp *c = ROOT;
    int n = dt_vcount(c->dtype);
    if (n <= 1 || dt_is_ptr(c->dtype)) return NULL;
    const UOp *s = uop_const_arg(CTX, c->dtype->scalar, c->arg);
    const UOp **src = malloc((size_t)n * sizeof *src);
    if (!src) return NULL;
    for (int i = 0; i < n; i++) src[i] = s;
    const UOp *r = ub_node(CTX, OP_VECTORIZE, c->dtype, src, n, NULL);
    free(src);
    return r;
}

static const UOp *vconst_explicit(const Match *m, void *ud) {
    (void)ud;
    const UOp *c = ROOT;
    int n = (int)c->arg->n;
    const UOp **src = malloc((size_t)(n ? n : 1) * sizeof *src);
    if (!src) return NULL;
    for (int i = 0; i < n; i++) src[i] = uop_const_arg(CTX, c->dtype->scalar, c->arg->items[i]);
    const UOp *r = ub_node(CTX, OP_VECTORIZE, c->dtype, src, n, NULL);
    free(src);
    return r;
}

static const UOp *gep_lanes_explicit(const Match *m, void *ud) {
    (void)ud;
    const UOp *g = ROOT;
    int n = (int)g->arg->n;
    if (n <= 1) return NULL;
    const UOp **src = malloc((size_t)n * sizeof *src);
    if (!src) return NULL;
    for (int i = 0; i < n; i++) src[i] = ub_gep1(CTX, g->src[0], (int)g->arg->items[i]->v.i);
    const UOp *r = ub_node(CTX, OP_VECTORIZE, g->dtype, src, n, NULL);
    free(src);
    return r;
}

static const UOp *gep_of_scalar(const Match *m, void *ud) {
    (void)ud;
    const UOp *g = ROOT;
    if (dt_vcount(g->src[0]->dtype) != 1 || g->arg->n != 1 || g->arg->items[0]->v.i != 0) return NULL;
    return g->src[0];
}

static const UOp *vectorize_single(const Match *m, void *ud) { (void)ud; return GET("x"); }

/* a masked LOAD without an alt value gets 0 */
static const UOp *masked_load_alt(const Match *m, void *ud) {
    (void)ud;
    const UOp *l = ROOT;
    if (l->nsrc > 1) {
        Op o = uop_op(l->src[1]);
        if (o != OP_CUSTOM && o != OP_STORE && o != OP_BARRIER) return NULL;
    }
    const UOp **src = malloc((size_t)(l->nsrc + 1) * sizeof *src);
    if (!src) return NULL;
    src[0] = l->src[0];
    src[1] = uop_const_int(CTX, l->dtype, 0);
    for (int i = 1; i < l->nsrc; i++) src[i + 1] = l->src[i];
    const UOp *r = ub_node(CTX, OP_LOAD, l->dtype, src, l->nsrc + 1, l->arg);
    free(src);
    return r;
}

/* the gate of a LOAD (or a CAST of one) whose INDEX (or a CAST of it) is gated, else NULL */
static const UOp *load_gate(const UOp *maybe_cast_load, const UOp **load) {
    const UOp *l = strip_cast(maybe_cast_load);
    if (uop_op(l) != OP_LOAD) return NULL;
    const UOp *ix = strip_cast(l->src[0]);
    if (uop_op(ix) != OP_INDEX || ix->nsrc != 3) return NULL;
    *load = l;
    return ix->src[2];
}

static const UOp *load_with_alt(UCtx *c, const UOp *l, const UOp *alt, const DType *out) {
    const UOp **src = malloc((size_t)(l->nsrc + 1) * sizeof *src);
    if (!src) return NULL;
    int n = 0;
    src[n++] = l->src[0];
    src[n++] = ub_cast(c, alt, l->dtype);
    for (int i = 2; i < l->nsrc; i++) src[n++] = l->src[i];
    const UOp *r = ub_node(c, OP_LOAD, l->dtype, src, n, l->arg);
    free(src);
    return ub_cast(c, r, out);
}

/* whether a, cast to the load's dtype and back, is still a: the alt value
 * goes through the load's dtype (3 through a bool load would come back 1) */
static bool alt_survives(UCtx *c, const UOp *a, const UOp *l) {
    if (a->dtype == l->dtype) return true;
    if (uop_op(a) != OP_CONST) return false;
    const UOp *back = ub_cast(c, ub_cast(c, a, l->dtype), a->dtype);
    return back && uop_simplify(c, back, "symbolic", NULL) == a;
}

/* c.where(gated load by c, a) -> the load with alt a */
static const UOp *where_gated_load_then(const Match *m, void *ud) {
    (void)ud;
    const UOp *l = NULL, *g = load_gate(GET("l"), &l);
    if (!g || g != GET("c") || !alt_survives(CTX, GET("a"), l)) return NULL;
    return load_with_alt(CTX, l, GET("a"), GET("a")->dtype);
}

/* c.where(a, gated load by !c) -> the load with alt a */
static const UOp *where_gated_load_else(const Match *m, void *ud) {
    (void)ud;
    const UOp *l = NULL, *g = load_gate(GET("l"), &l), *c = GET("c");
    if (!g || uop_op(g) != OP_CMPNE || g->src[0] != c) return NULL;
    const UOp *t;
    if (!(t = g->src[1]) || uop_op(t) != OP_CONST || !t->arg || t->arg->kind != ARG_BOOL || !t->arg->v.b) return NULL;
    if (!alt_survives(CTX, GET("a"), l)) return NULL;
    return load_with_alt(CTX, l, GET("a"), GET("a")->dtype);
}

static const RuleSpec render_specs[] = {
    RULE_FN("vector_const_explicit", "(CONST)", vector_const_explicit),
    RULE_FN("vconst_explicit", "(VCONST)", vconst_explicit),
    RULE_FN("gep_lanes_explicit", "(GEP)", gep_lanes_explicit),
    RULE_FN("gep_of_scalar", "(GEP)", gep_of_scalar),
    RULE_FN("vectorize_single", "(VECTORIZE x)", vectorize_single),
    RULE_FN("masked_load_alt", "(LOAD (INDEX _ _ _) ...)", masked_load_alt),
    RULE_FN("masked_load_alt_cast", "(LOAD (CAST (INDEX _ _ _)) ...)", masked_load_alt),
    RULE_FN("where_gated_load_then", "(WHERE c l a)", where_gated_load_then),
    RULE_FN("where_gated_load_else", "(WHERE c a l)", where_gated_load_else),
};

/* ---- the renderer's extra_matcher: bfloat16 math is done in float32 ---- */

static const DType *with_scalar(const DType *like, const DType *scalar) { return dt_vec(scalar, dt_vcount(like)); }

static const UOp *bf16_where_in_float(const Match *m, void *ud) {
    (void)ud;
    const DType *f = with_scalar(ROOT->dtype, DT_FLOAT32);
    const UOp *w = uop_where(CTX, GET("b"), ub_cast(CTX, GET("x"), f), ub_cast(CTX, GET("y"), f));
    return ub_cast(CTX, w, ROOT->dtype);
}

static const UOp *bf16_alu_in_float(const Match *m, void *ud) {
    (void)ud;
    const UOp *u = ROOT;
    if (uop_op(u) == OP_WHERE) return NULL;
    const UOp *src[3];
    for (int i = 0; i < u->nsrc && i < 3; i++) src[i] = ub_cast(CTX, u->src[i], with_scalar(u->src[i]->dtype, DT_FLOAT32));
    const UOp *r = ub_node(CTX, uop_op(u), with_scalar(u->dtype, DT_FLOAT32), src, u->nsrc, u->arg);
    return ub_cast(CTX, r, u->dtype);
}

static const UOp *bf16_compare_in_float(const Match *m, void *ud) {
    (void)ud;
    const UOp *x = GET("x"), *y = GET("y");
    const UOp *src[2] = {ub_cast(CTX, x, with_scalar(x->dtype, DT_FLOAT32)), ub_cast(CTX, y, with_scalar(y->dtype, DT_FLOAT32))};
    return ub_node(CTX, uop_op(ROOT), ROOT->dtype, src, 2, ROOT->arg);
}

static const UOp *bf16_cast_through_float(const Match *m, void *ud) {
    (void)ud;
    const UOp *x = GET("x");
    if (x->dtype->scalar == DT_FLOAT32) return NULL;
    return ub_cast(CTX, ub_cast(CTX, x, with_scalar(x->dtype, DT_FLOAT32)), ROOT->dtype);
}

static const RuleSpec bf16_specs[] = {
    RULE_FN("bf16_where_in_float", "(WHERE b x:bfloat16 y:bfloat16)", bf16_where_in_float),
    RULE_FN("bf16_alu_in_float", "(ALU:bfloat16 ...)", bf16_alu_in_float),
    RULE_FN("bf16_compare_in_float", "(ALU:bool x:bfloat16 y:bfloat16)", bf16_compare_in_float),
    RULE_FN("bf16_cast_to_through_float", "(CAST:bfloat16 x)", bf16_cast_through_float),
    RULE_FN("bf16_cast_from_through_float", "(CAST x:bfloat16)", bf16_cast_through_float),
};

/* ---- pm_split_ends: END over several ranges -> nested single-range ENDs ---- */

static int arg_cmp(const Arg *a, const Arg *b) {
    if (!a || !b) return (a != NULL) - (b != NULL);
    if (a->kind == ARG_TUPLE && b->kind == ARG_TUPLE) {
        for (uint32_t i = 0; i < a->n && i < b->n; i++) {
            int r = arg_cmp(a->items[i], b->items[i]);
            if (r) return r;
        }
        return (a->n > b->n) - (a->n < b->n);
    }
    int64_t x = a->kind == ARG_INT ? a->v.i : a->kind == ARG_AXIS ? (int64_t)a->v.axis : 0;
    int64_t y = b->kind == ARG_INT ? b->v.i : b->kind == ARG_AXIS ? (int64_t)b->v.axis : 0;
    return (x > y) - (x < y);
}

static int range_arg_desc(const void *pa, const void *pb) {
    const UOp *a = *(const UOp *const *)pa, *b = *(const UOp *const *)pb;
    int r = arg_cmp(b->arg, a->arg);
    return r ? r : (a->id > b->id) - (a->id < b->id);
}

static const UOp *split_end(const Match *m, void *ud) {
    (void)ud;
    const UOp *e = ROOT;
    const UOp *sink = uop_new(CTX, OP_SINK, DT_VOID, e->src + 1, e->nsrc - 1, NULL);
    if (!sink) return NULL;
    RangeMap rm;
    if (!range_map_init(&rm, sink)) { rewrite_fail(m, "out of memory"); return NULL; }
    const NodeSet *rs = range_map_get(&rm, sink);
    int n = rs->n;
    const UOp **sorted = malloc((size_t)(n ? n : 1) * sizeof *sorted);
    if (!sorted) { range_map_free(&rm); rewrite_fail(m, "out of memory"); return NULL; }
    if (n) memcpy(sorted, rs->items, (size_t)n * sizeof *sorted);
    range_map_free(&rm);
    qsort(sorted, (size_t)n, sizeof *sorted, range_arg_desc);
    const UOp *ret = e->src[0];
    for (int i = 0; i < n && ret; i++) {
        const UOp *s[2] = {ret, sorted[i]};
        ret = ub_node(CTX, OP_END, DT_VOID, s, 2, NULL);
    }
    free(sorted);
    return ret == e ? NULL : ret;
}

static const RuleSpec split_ends_specs[] = {
    RULE_FN("split_ends", "(END)", split_end),
};

const RuleTable pm_add_loads_rules = RULE_TABLE(add_loads_specs);
const RuleTable get_late_rewrite_patterns_rules = RULE_TABLE(late_llvm_specs);
const RuleTable get_late_rewrite_patterns_native_rules = RULE_TABLE(late_rewrite_specs);
const RuleTable pm_render_rules = RULE_TABLE(render_specs);
const RuleTable extra_matcher_rules = RULE_TABLE(bf16_specs);
const RuleTable pm_split_ends_rules = RULE_TABLE(split_ends_specs);
