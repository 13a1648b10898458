/* symbolic_pow.c - the POW rules of symbolic_simple (tinygrad v0.12.0's
 * simplify_pow and its constant-base rule), and sym's last word on a POW
 * that is left (its xpow: exp2(e * log2|b|), fixed up for a negative base
 * and for 0 ** 0), which stage 18 also uses for SQRT:
 *   x ** c with a constant c:   c < 0         -> (1/x) ** -c       (floats)
 *                               c == 0        -> 1
 *                               c = n + 0.5   -> x ** n * sqrt(x)  (floats)
 *                               c integral    -> y * y * (x or 1), y = x ** (c // 2)
 *   c ** x with a constant c > 0:   1 ** x -> 1,  c ** x -> exp2(x * log2(c))
 * Each rule takes one step; the rewrite repeats it on the POW it leaves, so
 * x ** 7 ends as (x*x*x) * (x*x*x) * x, multiplications only: an integer
 * POW with a constant exponent is exact (and wraps as the MULs wrap). */
#include <math.h>
#include "symbolic.h"
#include "sym_helpers.h"
#include "sym_rules.h"

#define CTX (m->ctx)
#define GET(n) match_get(m, n)

/* exponents beyond this are left to the POW itself */
#define POW_MAX_EXPONENT 9007199254740992.0 /* 2^53 */

/* the value of a scalar numeric CONST */
static bool const_number(const UOp *u, double *out) {
    if (uop_op(u) != OP_CONST || u->dtype->count != 1 || !u->arg) return false;
    if (u->arg->kind == ARG_INT) *out = (double)u->arg->v.i;
    else if (u->arg->kind == ARG_FLOAT) *out = u->arg->v.f;
    else return false;
    return true;
}

/* a constant of c's dtype with value v */
static const UOp *number_like(UCtx *ctx, const UOp *c, double v) {
    if (!c) return NULL;
    if (dt_is_float(c->dtype)) return uop_const_float(ctx, c->dtype, v);
    return sym_const_like(ctx, c, (int64_t)v);
}

static const UOp *fold_pow_const_exponent(const Match *m, void *ud) {
    (void)ud;
    const UOp *x = GET("x"), *c = GET("c");
    double e;
    if (!const_number(c, &e) || !isfinite(e) || fabs(e) > POW_MAX_EXPONENT) return NULL;
    bool fl = dt_is_float(x->dtype);
    if (!fl && !dt_is_int(x->dtype)) return NULL;
    if (e < 0) {
        if (!fl) return NULL; /* no reciprocal of an integer */
        return sym_bin(CTX, OP_POW, uop_unary(CTX, OP_RECIPROCAL, x), number_like(CTX, c, -e));
    }
    if (e == 0) return sym_const_like(CTX, x, 1);
    double whole = trunc(e - 0.5);
    if (whole + 0.5 == e) {
        if (!fl) return NULL;
        return sym_mul(CTX, sym_bin(CTX, OP_POW, x, number_like(CTX, c, whole)), uop_unary(CTX, OP_SQRT, x));
    }
    if (trunc(e) != e) return NULL;
    const UOp *y = sym_bin(CTX, OP_POW, x, number_like(CTX, c, floor(e / 2)));
    const UOp *odd = fmod(e, 2) == 1 ? x : sym_const_like(CTX, x, 1);
    return sym_mul(CTX, sym_mul(CTX, y, y), odd);
}

static const UOp *fold_pow_const_base(const Match *m, void *ud) {
    (void)ud;
    const UOp *c = GET("c"), *x = GET("x");
    double b;
    if (!dt_is_float(x->dtype) || !const_number(c, &b) || !(b > 0)) return NULL;
    if (b == 1) return c;
    return uop_unary(CTX, OP_EXP2, sym_mul(CTX, x, uop_const_float(CTX, x->dtype, log2(b))));
}

/* ---- xpow, built as tinygrad builds it (the builders pass NULL through) ---- */

static const UOp *lt0(UCtx *c, const UOp *a) { return sym_bin(c, OP_CMPLT, a, sym_const_like(c, a, 0)); }
/* x == v, as tinygrad's eq: (x != v) != true */
static const UOp *eq_k(UCtx *c, const UOp *x, int64_t v) {
    return sym_not(c, sym_bin(c, OP_CMPNE, x, sym_const_like(c, x, v)));
}

const UOp *sym_xpow(UCtx *c, const UOp *base, const UOp *exponent) {
    if (!base || !exponent) return NULL;
    const UOp *neg_base = lt0(c, base);
    const UOp *log_abs = uop_unary(c, OP_LOG2, uop_where(c, neg_base, sym_neg(c, base), base));
    const UOp *ret = uop_unary(c, OP_EXP2, sym_mul(c, log_abs, exponent));
    if (!ret) return NULL;
    const DType *i32 = dt_scalar(SK_INT32);
    const UOp *non_int = sym_bin(c, OP_CMPNE, exponent, uop_cast(c, uop_cast(c, exponent, i32), exponent->dtype->scalar));
    const UOp *abs_i = uop_cast(c, uop_where(c, lt0(c, exponent), sym_neg(c, exponent), exponent), i32);
    const UOp *odd = uop_cast(c, sym_bin(c, OP_MOD, abs_i, sym_const_like(c, abs_i, 2)), DT_BOOL);
    const UOp *adj = uop_where(c, non_int, number_like(c, ret, NAN),
                               uop_where(c, odd, sym_const_like(c, ret, -1), sym_const_like(c, ret, 1)));
    const UOp *zero_zero = sym_bin(c, OP_AND, eq_k(c, base, 0), eq_k(c, exponent, 0));
    const UOp *one = sym_const_like(c, ret, 1);
    return uop_where(c, zero_zero, one, sym_mul(c, ret, uop_where(c, neg_base, adj, one)));
}

/* a float POW left after the folding above */
static const UOp *pow_as_exp2_log2(const Match *m, void *ud) {
    (void)ud;
    const UOp *p = m->root;
    if (!dt_is_float(p->dtype)) return NULL;
    return sym_xpow(CTX, p->src[0], p->src[1]);
}

static const RuleSpec pow_specs[] = {
    RULE_FN("fold_pow_const_exponent", "(POW x c@(CONST))", fold_pow_const_exponent),
    RULE_FN("fold_pow_const_base", "(POW c@(CONST) x)", fold_pow_const_base),
};
const RuleTable sym_pow_rules = {pow_specs, sizeof pow_specs / sizeof *pow_specs};

static const RuleSpec pow_decompose_specs[] = {
    RULE_FN("pow_as_exp2_log2", "(POW _ _)", pow_as_exp2_log2),
};
const RuleTable sym_pow_decompose_rules = {pow_decompose_specs, sizeof pow_decompose_specs / sizeof *pow_decompose_specs};
