/* symbolic_combine.c - the second and third phases of the simplifier
 * (tinygrad's symbolic and sym, less div/mod and valids): boolean algebra,
 * combining like terms, WHERE folding, folding by bounds, max by bounds,
 * two-stage constant folding, comparisons (lt folding), moving constants to
 * the end, cast chains, and the opinionated distribution rules of sym. */
#include <stdlib.h>
#include "bounds.h"
#include "sym_helpers.h"
#include "sym_rules.h"

#define CTX (m->ctx)
#define ROOT (m->root)
#define GET(n) match_get(m, n)

static bool is_invalid(const UOp *u) {
    return u && uop_op(u) == OP_CONST && u->arg && u->arg->kind == ARG_INVALID;
}
static bool is_const(const UOp *u) { return uop_op(u) == OP_CONST; }

/* x | !x -> true */
static const UOp *fold_or_not_self(const Match *m, void *ud) {
    (void)ud;
    return dt_is_bool(GET("x")->dtype) ? uop_const_bool(CTX, true) : NULL;
}

/* t is x*c (either order, c const): sets x and c */
static bool term_times_const(const UOp *t, const UOp **x, int64_t *c) {
    if (uop_op(t) != OP_MUL) return false;
    if (sym_const_int(t->src[1], c)) { *x = t->src[0]; return true; }
    if (sym_const_int(t->src[0], c)) { *x = t->src[1]; return true; }
    return false;
}
/* a and b are k1*x and k2*x (a bare x counts as 1*x; consts are not terms) */
static bool like_terms(const UOp *a, const UOp *b, const UOp **x, int64_t *k) {
    const UOp *xa = a, *xb = b;
    int64_t ka = 1, kb = 1;
    bool ma = term_times_const(a, &xa, &ka), mb = term_times_const(b, &xb, &kb);
    if (xa != xb || is_const(xa)) return false;
    if (!ma && !mb && a != b) return false;
    __int128 s = (__int128)ka + kb;
    if (!sym_fits(a->dtype, s)) return false;
    *x = xa;
    *k = (int64_t)s;
    return true;
}
/* the float forms of like terms: a and b are c1*x and c2*x (a bare x counts
 * as 1.0*x), the sum of the constants in double precision as v0.12.0 folds */
static bool term_times_float(const UOp *t, const UOp **x, double *c) {
    if (uop_op(t) != OP_MUL) return false;
    for (int i = 0; i < 2; i++)
        if (is_const(t->src[i]) && uop_const_value(t->src[i], c)) { *x = t->src[1 - i]; return true; }
    return false;
}
static bool like_float_terms(const UOp *a, const UOp *b, const UOp **x, double *k) {
    const UOp *xa = a, *xb = b;
    double ka = 1, kb = 1;
    bool ma = term_times_float(a, &xa, &ka), mb = term_times_float(b, &xb, &kb);
    if (xa != xb || is_const(xa)) return false;
    if (!ma && !mb && a != b) return false;
    *x = xa;
    *k = ka + kb;
    return true;
}
/* x*c0 + x*c1 -> x*(c0+c1), x + x*c -> x*(c+1), x + x -> x*2, and each with
 * a y added first: tinygrad's combine-terms rules, which apply to floats too */
static const UOp *combine_float_terms(const Match *m) {
    const UOp *a = ROOT->src[0], *b = ROOT->src[1], *x;
    double k;
    if (ROOT->dtype->count != 1) return NULL;
    if (like_float_terms(a, b, &x, &k)) return sym_bin(CTX, OP_MUL, x, uop_const_float(CTX, ROOT->dtype, k));
    for (int s = 0; s < 2; s++) {
        const UOp *sum = s ? b : a, *other = s ? a : b;
        if (uop_op(sum) != OP_ADD) continue;
        for (int i = 0; i < 2; i++)
            if (like_float_terms(sum->src[i], other, &x, &k))
                return sym_bin(CTX, OP_ADD, sum->src[1 - i], sym_bin(CTX, OP_MUL, x, uop_const_float(CTX, ROOT->dtype, k)));
    }
    return NULL;
}

static const UOp *combine_like_terms(const Match *m, void *ud) {
    (void)ud;
    const UOp *a = ROOT->src[0], *b = ROOT->src[1], *x;
    int64_t k;
    if (dt_is_bool(ROOT->dtype)) return NULL;
    if (dt_is_float(ROOT->dtype)) return combine_float_terms(m);
    if (like_terms(a, b, &x, &k)) return sym_mulc(CTX, x, k);
    /* (y + t1) + t2 */
    for (int s = 0; s < 2; s++) {
        const UOp *sum = s ? b : a, *other = s ? a : b;
        if (uop_op(sum) != OP_ADD) continue;
        for (int i = 0; i < 2; i++)
            if (like_terms(sum->src[i], other, &x, &k)) return sym_add(CTX, sum->src[1 - i], sym_mulc(CTX, x, k));
    }
    return NULL;
}

/* -1*(x+c) -> -x + -c, for ints and floats as v0.12.0 writes it (so
 * pi/2 - (pi/2 - x) is x again) ; c*(x+c1) -> c*x + c*c1 (index) */
static const UOp *distribute_neg_const(const Match *m, void *ud) {
    (void)ud;
    const UOp *x = GET("x"), *c = GET("c");
    if (dt_is_float(x->dtype) && !dt_is_ptr(x->dtype) && c->dtype == x->dtype) {
        double cf;
        if (!uop_const_value(c, &cf)) return NULL;
        return sym_add(CTX, sym_neg(CTX, x), uop_const_float(CTX, x->dtype, -cf));
    }
    int64_t c1;
    /* -c1 of the most negative int64 is not an int64 */
    if (!sym_const_int(c, &c1) || !sym_is_int(x) || c1 == INT64_MIN) return NULL;
    return sym_add(CTX, sym_neg(CTX, x), sym_const_like(CTX, x, -c1));
}
static const UOp *distribute_const_mul_index(const Match *m, void *ud) {
    (void)ud;
    int64_t y, c;
    const UOp *x = GET("x");
    if (!sym_is_index(x) || !sym_const_int(GET("y"), &y) || !sym_const_int(GET("c"), &c)) return NULL;
    if (!sym_fits(x->dtype, (__int128)y * c)) return NULL;
    return sym_add(CTX, sym_mulc(CTX, x, y), sym_const_like(CTX, x, y * c));
}

/* ---- WHERE ---- */
static const UOp *where_not_cond_swap(const Match *m, void *ud) {
    (void)ud;
    const UOp *cond = GET("cond"), *f = GET("f");
    if (!dt_is_bool(cond->dtype) || is_invalid(f)) return NULL;
    return uop_where(CTX, cond, f, GET("t"));
}
static const UOp *where_combine_alu(const Match *m, void *ud) {
    (void)ud;
    const UOp *w0 = ROOT->src[0], *w1 = ROOT->src[1];
    if (uop_op(w0) != OP_WHERE || uop_op(w1) != OP_WHERE || w0->src[0] != w1->src[0]) return NULL;
    const UOp *t = w0->src[1], *f = w0->src[2], *tt = w1->src[1], *ff = w1->src[2];
    if (!((is_const(t) && is_const(tt)) || (is_const(f) && is_const(ff)))) return NULL;
    Op op = uop_op(ROOT);
    return uop_where(CTX, w0->src[0], sym_bin(CTX, op, t, tt), sym_bin(CTX, op, f, ff));
}
static const UOp *where_combine_add_assoc(const Match *m, void *ud) {
    (void)ud;
    for (int s = 0; s < 2; s++) {
        const UOp *sum = ROOT->src[s], *w1 = ROOT->src[1 - s];
        if (uop_op(sum) != OP_ADD || uop_op(w1) != OP_WHERE) continue;
        for (int i = 0; i < 2; i++) {
            const UOp *w0 = sum->src[i], *y = sum->src[1 - i];
            if (uop_op(w0) != OP_WHERE || w0->src[0] != w1->src[0]) continue;
            const UOp *t = w0->src[1], *f = w0->src[2], *tt = w1->src[1], *ff = w1->src[2];
            if (!((is_const(t) && is_const(tt)) || (is_const(f) && is_const(ff)))) continue;
            return sym_add(CTX, y, uop_where(CTX, w0->src[0], sym_add(CTX, t, tt), sym_add(CTX, f, ff)));
        }
    }
    return NULL;
}

/* ---- bounds ---- */
static const UOp *fold_by_bounds(const Match *m, void *ud) {
    (void)ud;
    int64_t lo, hi;
    if (ROOT->dtype->count != 1) {
        MATCH_DECLINE(m, "a vector is not folded to one constant");
        return NULL;
    }
    if (!sym_bounds(ROOT, &lo, &hi)) {
        MATCH_DECLINE(m, "its bounds are not known");
        return NULL;
    }
    if (lo != hi) {
        MATCH_DECLINE(m, "its bounds [%lld, %lld] are not one value", (long long)lo, (long long)hi);
        return NULL;
    }
    return sym_const_like(CTX, ROOT, lo);
}
static const UOp *fold_max_by_bounds(const Match *m, void *ud) {
    (void)ud;
    const UOp *x = ROOT->src[0], *y = ROOT->src[1];
    int64_t x0, x1, y0, y1;
    if (!sym_bounds(x, &x0, &x1) || !sym_bounds(y, &y0, &y1)) {
        MATCH_DECLINE(m, "the bounds of its sources are not known");
        return NULL;
    }
    if (x0 >= y1) return x;
    if (x1 <= y0) return y;
    MATCH_DECLINE(m, "its sources' bounds [%lld, %lld] and [%lld, %lld] overlap", (long long)x0, (long long)x1,
                  (long long)y0, (long long)y1);
    return NULL;
}

/* (x op c1) op c2 -> x op (c1 op c2) */
static const UOp *fold_assoc_consts(const Match *m, void *ud) {
    (void)ud;
    Op op = uop_op(ROOT);
    const UOp *inner = NULL, *c2 = NULL;
    for (int s = 0; s < 2 && !inner; s++)
        if (uop_op(ROOT->src[s]) == op && is_const(ROOT->src[1 - s])) { inner = ROOT->src[s]; c2 = ROOT->src[1 - s]; }
    if (!inner) return NULL;
    for (int i = 0; i < 2; i++) {
        const UOp *x = inner->src[1 - i], *c1 = inner->src[i];
        if (is_const(c1) && !is_const(x) && !is_invalid(c1) && !is_invalid(c2))
            return sym_bin(CTX, op, x, sym_bin(CTX, op, c1, c2));
    }
    return NULL;
}

/* ---- comparisons ---- */
/* c0 + x < c1 -> x < c1 - c0; for floats too, as v0.12.0 writes it, with
 * c1 - c0 left to the constant folder (c1 + c0*-1) */
static const UOp *fold_lt_add_const(const Match *m, void *ud) {
    (void)ud;
    int64_t c0, c1;
    const UOp *x = GET("x");
    if (dt_is_float(x->dtype) && !dt_is_ptr(x->dtype) && GET("c0")->dtype == x->dtype && GET("c1")->dtype == x->dtype)
        return sym_bin(CTX, OP_CMPLT, x, sym_add(CTX, GET("c1"), sym_neg(CTX, GET("c0"))));
    if (!sym_is_int(x) || !sym_const_int(GET("c0"), &c0) || !sym_const_int(GET("c1"), &c1)) return NULL;
    if (!sym_fits(x->dtype, (__int128)c1 - c0)) return NULL;
    return sym_bin(CTX, OP_CMPLT, x, sym_const_like(CTX, x, c1 - c0));
}
static const UOp *fold_div_div(const Match *m, void *ud) {
    (void)ud;
    int64_t c1, c2;
    const UOp *x = GET("x");
    if (!sym_is_int(x) || !sym_const_int(GET("c1"), &c1) || !sym_const_int(GET("c2"), &c2) || !c1 || !c2) return NULL;
    if (!sym_fits(x->dtype, (__int128)c1 * c2)) return NULL;
    return sym_bin(CTX, OP_IDIV, x, sym_const_like(CTX, x, c1 * c2));
}
static int64_t floordiv(int64_t a, int64_t b) {
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
static const UOp *lt_mul_const(const Match *m, void *ud) {
    (void)ud;
    const UOp *x = GET("x");
    int64_t c0, c1;
    if (!sym_is_index(x) || !sym_const_int(GET("c0"), &c0) || !sym_const_int(GET("c1"), &c1)) return NULL;
    if (c0 > 0 && c1 > 0) return sym_bin(CTX, OP_CMPLT, x, sym_const_like(CTX, x, -floordiv(-c1, c0)));
    if (c0 < 0 && c0 != -1 && c0 != INT64_MIN && c1 <= 0 && c1 != INT64_MIN)
        return sym_bin(CTX, OP_CMPLT, sym_neg(CTX, x), sym_const_like(CTX, x, -floordiv(-c1, -c0)));
    return NULL;
}
static const UOp *lt_div_const(const Match *m, void *ud) {
    (void)ud;
    const UOp *x = GET("x");
    int64_t d, c;
    if (!sym_is_index(x) || !sym_const_int(GET("d"), &d) || !sym_const_int(GET("c"), &c) || d <= 0) return NULL;
    __int128 bound = c > 0 ? (__int128)c * d : (__int128)c * d - (d - 1);
    if (!sym_fits(x->dtype, bound)) return NULL;
    return sym_bin(CTX, OP_CMPLT, x, sym_const_like(CTX, x, (int64_t)bound));
}

/* (x + c) + y -> (x + y) + c, the same for MUL */
static const UOp *move_const_to_end(const Match *m, void *ud) {
    (void)ud;
    Op op = uop_op(ROOT);
    for (int s = 0; s < 2; s++) {
        const UOp *in = ROOT->src[s], *y = ROOT->src[1 - s];
        if (uop_op(in) != op || is_const(y)) continue;
        for (int i = 0; i < 2; i++) {
            const UOp *c1 = in->src[i], *x = in->src[1 - i];
            if (is_const(c1) && !is_const(x) && !is_invalid(c1)) return sym_bin(CTX, op, sym_bin(CTX, op, x, y), c1);
        }
    }
    return NULL;
}

/* x < c with c > 0: drop terms too small to matter after dividing out a
 * common factor d of the other terms and c */
static const UOp *lt_folding(const Match *m, void *ud) {
    (void)ud;
    const UOp *x = GET("x");
    int64_t c;
    if (!sym_is_index(x) || !sym_const_int(GET("c"), &c) || c <= 0) return NULL;
    const UOp *t[SYM_MAX_TERMS], *np[SYM_MAX_TERMS];
    int n = sym_split(x, OP_ADD, t, SYM_MAX_TERMS), nn = 0;
    if (n < 0) return NULL;
    int64_t d = c;
    __int128 pmin = 0, pmax = 0;
    for (int i = 0; i < n; i++) {
        int64_t f = sym_const_factor(t[i]);
        if (f == 1) {
            int64_t lo, hi;
            if (!sym_bounds(t[i], &lo, &hi)) return NULL;
            pmin += lo;
            pmax += hi;
        } else {
            np[nn++] = t[i];
            d = sym_gcd_int(d, f);
        }
    }
    if (!nn || d <= 1 || pmin < 0 || pmax >= d) return NULL;
    const UOp *q = sym_divides(CTX, sym_sum(CTX, np, nn, x), d);
    return q ? sym_bin(CTX, OP_CMPLT, q, sym_const_like(CTX, x, c / d)) : NULL;
}
static const UOp *lt_neg_swap(const Match *m, void *ud) {
    (void)ud;
    const UOp *a = ROOT->src[0], *b = ROOT->src[1], *x, *y;
    int64_t k1, k2;
    if (!term_times_const(a, &x, &k1) || !term_times_const(b, &y, &k2) || k1 != -1 || k2 != -1) return NULL;
    if (!sym_is_index(x)) return NULL;
    return sym_bin(CTX, OP_CMPLT, y, x);
}
static bool irreducible(const UOp *u) { return op_is(uop_op(u), OPF_IRREDUCIBLE); }
static const UOp *canonicalize_simplex(const Match *m, void *ud) {
    (void)ud;
    const UOp *x = GET("x");
    if (!sym_is_index(x)) return NULL;
    const UOp *t[SYM_MAX_TERMS];
    int n = sym_split(x, OP_ADD, t, SYM_MAX_TERMS);
    if (n < 0) return NULL;
    bool changed = false;
    for (int i = 0; i < n; i++) {
        int64_t k, lo, hi;
        if (uop_op(t[i]) == OP_MUL && sym_const_int(t[i]->src[1], &k) && k > 0) { t[i] = t[i]->src[0]; changed = true; }
        if (!irreducible(t[i]) || !sym_bounds(t[i], &lo, &hi) || lo < 0) return NULL;
    }
    if (!changed) return NULL;
    const UOp *s = sym_sum(CTX, t, n, x);
    return sym_not(CTX, sym_bin(CTX, OP_CMPLT, s, sym_const_like(CTX, x, 1)));
}
static const UOp *fold_range_mod_end(const Match *m, void *ud) { (void)ud; return GET("r"); }
static const UOp *fold_range_div_end(const Match *m, void *ud) { (void)ud; return sym_const_like(CTX, ROOT, 0); }

/* ---- casts ---- */
static const UOp *fold_cast_chain_lossless(const Match *m, void *ud) {
    (void)ud;
    const UOp *x = GET("x"), *a = ROOT->src[0];
    return dt_can_lossless_cast(x->dtype, a->dtype) ? uop_cast(CTX, x, ROOT->dtype) : NULL;
}
static const UOp *fold_cast_chain_in_range(const Match *m, void *ud) {
    (void)ud;
    const UOp *x = GET("x"), *a = ROOT->src[0];
    int64_t lo, hi;
    if (!sym_is_int(x) || !sym_is_int(a) || dt_is_unsigned(a->dtype) || !sym_bounds(x, &lo, &hi)) return NULL;
    if (lo < dt_min_int(a->dtype) || hi > dt_max_int(a->dtype)) return NULL;
    return uop_cast(CTX, x, ROOT->dtype);
}

static const RuleSpec symbolic_specs[] = {
    RULE_FN("fold_or_not_self", "(OR x (CMPNE x true))", fold_or_not_self),
    RULE_FN("combine_like_terms", "(ADD _ _)", combine_like_terms),
    RULE_FN("distribute_neg_const", "(MUL -1 (ADD x c@(CONST)))", distribute_neg_const),
    RULE_FN("distribute_const_mul_index", "(MUL y@(CONST) (ADD x c@(CONST)))", distribute_const_mul_index),
    RULE_FN("where_not_cond_swap", "(WHERE (CMPNE cond true) t f)", where_not_cond_swap),
    RULE_FN("where_combine_alu", "({ADD MUL SHL SHR IDIV MAX MOD CMPLT CMPNE CMPEQ XOR OR AND SUB} (WHERE c _ _) (WHERE c _ _))",
            where_combine_alu),
    RULE_FN("where_combine_add_assoc", "(ADD (ADD _ _) (WHERE _ _ _))", where_combine_add_assoc),
    RULE_FN("fold_by_bounds",
            "({CAST NEG ADD MUL SHL SHR IDIV MAX MOD CMPLT CMPNE CMPEQ XOR OR AND SUB WHERE DEFINE_VAR SPECIAL} ...)",
            fold_by_bounds),
    RULE_FN("fold_range_by_bounds", "(RANGE (CONST) ...)", fold_by_bounds),
    RULE_FN("fold_max_by_bounds", "(MAX x y)", fold_max_by_bounds),
    RULE_FN("fold_assoc_consts", "({ADD MUL MAX OR AND} _ _)", fold_assoc_consts),
    RULE_FN("fold_lt_add_const", "(CMPLT (ADD c0@(CONST) x) c1@(CONST))", fold_lt_add_const),
    RULE_FN("fold_div_div", "(IDIV (IDIV x c1@(CONST)) c2@(CONST))", fold_div_div),
    RULE_FN("lt_mul_const", "(CMPLT (MUL c0@(CONST) x) c1@(CONST))", lt_mul_const),
    RULE_FN("lt_div_const", "(CMPLT (IDIV x d@(CONST)) c@(CONST))", lt_div_const),
    RULE_FN("move_const_to_end", "({ADD MUL} _ _)", move_const_to_end),
    RULE_FN("lt_folding", "(CMPLT x c@(CONST))", lt_folding),
    RULE_FN("lt_neg_swap", "(CMPLT (MUL _ _) (MUL _ _))", lt_neg_swap),
    RULE_FN("canonicalize_simplex", "(CMPNE (CMPLT x 1) true)", canonicalize_simplex),
    RULE_FN("fold_range_mod_end", "(MOD r@(RANGE end) end)", fold_range_mod_end),
    RULE_FN("fold_range_div_end", "(IDIV (RANGE end) end)", fold_range_div_end),
    RULE_FN("fold_cast_chain_lossless", "(CAST (CAST x))", fold_cast_chain_lossless),
    RULE_FN("fold_cast_chain_in_range", "(CAST (CAST x))", fold_cast_chain_in_range),
};
const RuleTable sym_symbolic_rules = {symbolic_specs, sizeof symbolic_specs / sizeof *symbolic_specs};

/* ---- sym (phase 3) ---- */
static const UOp *fold_ne_zero_to_bool(const Match *m, void *ud) {
    (void)ud;
    const UOp *x = GET("x");
    if (dt_is_ptr(x->dtype)) return NULL;
    return uop_cast(CTX, x, dt_vec(DT_BOOL, x->dtype->count));
}
static const UOp *where_push_cast(const Match *m, void *ud) {
    (void)ud;
    const UOp *w = ROOT->src[0];
    return uop_where(CTX, w->src[0], uop_cast(CTX, w->src[1], ROOT->dtype), uop_cast(CTX, w->src[2], ROOT->dtype));
}
static const UOp *distribute_neg(const Match *m, void *ud) {
    (void)ud;
    const UOp *x = GET("x"), *y = GET("y");
    if (!sym_is_int(x)) return NULL;
    return sym_add(CTX, sym_neg(CTX, x), sym_neg(CTX, y));
}
static const UOp *distribute_mul_index(const Match *m, void *ud) {
    (void)ud;
    const UOp *x = GET("x"), *y = GET("y"), *c = GET("c");
    if (!sym_is_index(x) || is_invalid(c)) return NULL;
    return sym_add(CTX, sym_mul(CTX, x, c), sym_mul(CTX, y, c));
}
static const UOp *group_single(const Match *m, void *ud) { (void)ud; return GET("x"); }
static const UOp *sink_flatten(const Match *m, void *ud) {
    (void)ud;
    const UOp *u = ROOT;
    int n = 0;
    bool any = false;
    for (int i = 0; i < u->nsrc; i++) {
        Op o = uop_op(u->src[i]);
        bool flat = o == OP_UNROLL || o == OP_NOOP || o == OP_VECTORIZE || o == OP_SINK;
        any |= flat;
        n += flat ? u->src[i]->nsrc : 1;
    }
    if (!any) return NULL;
    const UOp **src = malloc((size_t)(n ? n : 1) * sizeof *src);
    if (!src) return NULL;
    int k = 0;
    for (int i = 0; i < u->nsrc; i++) {
        const UOp *s = u->src[i];
        Op o = uop_op(s);
        if (o == OP_UNROLL || o == OP_NOOP || o == OP_VECTORIZE || o == OP_SINK)
            for (int j = 0; j < s->nsrc; j++) src[k++] = s->src[j];
        else src[k++] = s;
    }
    const UOp *r = uop_intern(CTX, uop_op(u), u->dtype, src, n, u->arg, u->tag);
    free(src);
    return r;
}

static const RuleSpec sym_specs[] = {
    RULE_FN("fold_ne_zero_to_bool", "(CMPNE x 0)", fold_ne_zero_to_bool),
    RULE_FN("where_push_cast", "(CAST (WHERE _ _ _))", where_push_cast),
    RULE_FN("group_single", "(GROUP x)", group_single),
    RULE_FN("sink_flatten", "({SINK GROUP} ...)", sink_flatten),
    RULE_FN("distribute_neg", "(MUL -1 (ADD x y))", distribute_neg),
    RULE_FN("distribute_mul_index", "(MUL (ADD x y) c@(CONST))", distribute_mul_index),
};
const RuleTable sym_sym_rules = {sym_specs, sizeof sym_specs / sizeof *sym_specs};
