/* divmod.c - folding of integer division and remainder (tinygrad's
 * div_and_mod_symbolic).  IDIV truncates toward zero and MOD is the C
 * remainder, so every rule that reasons with floor semantics first checks
 * with value bounds that the operands are non-negative. */
#include "bounds.h"
#include "sym_helpers.h"
#include "sym_rules.h"
#include "sym_would_be.h"

#define CTX (m->ctx)
#define ROOT (m->root)
#define GET(n) match_get(m, n)

typedef __int128 i128;

static int64_t pymod(int64_t a, int64_t b) { int64_t r = a % b; return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r; }
static int64_t pydiv(int64_t a, int64_t b) { return (a - pymod(a, b)) / b; }
static i128 floordiv128(i128 a, i128 b) { i128 q = a / b; return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q; }
static bool bnd(const UOp *u, int64_t *lo, int64_t *hi) { return u && sym_bounds(u, lo, hi); }
static int64_t vmin_of(const UOp *u) { int64_t lo, hi; return bnd(u, &lo, &hi) ? lo : INT64_MIN; }
/* a / b truncated, b != 0, in 128 bits only where 64 overflow (INT64_MIN / -1) */
static i128 trunc_div(int64_t a, int64_t b) { return a == INT64_MIN && b == -1 ? -(i128)a : (i128)(a / b); }

/* (x//c + a)//d -> (x + a*c)//(c*d) */
static const UOp *fold_div_nested_add(const Match *m, void *ud) {
    (void)ud;
    const UOp *x = GET("x");
    int64_t c, a, d, x0, x1;
    if (!sym_is_int(x) || !sym_const_int(GET("c"), &c) || !sym_const_int(GET("a"), &a) || !sym_const_int(GET("d"), &d))
        return NULL;
    if (c <= 0 || d <= 0 || !bnd(x, &x0, &x1) || !((x0 >= 0 && a >= 0) || (x1 <= 0 && a <= 0))) return NULL;
    if (!sym_fits(x->dtype, (i128)a * c) || !sym_fits(x->dtype, (i128)c * d)) return NULL;
    return sym_bin(CTX, OP_IDIV, sym_addc(CTX, x, a * c), sym_const_like(CTX, x, c * d));
}
static const UOp *div_neg_divisor(const Match *m, void *ud) {
    (void)ud;
    const UOp *x = GET("x"), *d = GET("d");
    int64_t lo, hi;
    if (!sym_is_index(x) || !bnd(d, &lo, &hi) || hi >= 0) return NULL;
    return sym_neg(CTX, sym_bin(CTX, OP_IDIV, x, sym_neg(CTX, d)));
}
static const UOp *div_neg_numerator(const Match *m, void *ud) {
    (void)ud;
    const UOp *x = GET("x"), *d = GET("d");
    int64_t lo, hi;
    if (!sym_is_index(x) || !bnd(x, &lo, &hi) || hi > 0 || lo == hi) return NULL;
    return sym_neg(CTX, sym_bin(CTX, OP_IDIV, sym_neg(CTX, x), d));
}
/* (x + c)//d with the sum non-negative: move the whole multiples of d out */
static const UOp *div_split_const(const Match *m, void *ud) {
    (void)ud;
    const UOp *x = GET("x"), *n = ROOT->src[0];
    int64_t c, d, x0, x1, n0, n1;
    if (!sym_is_index(x) || !sym_const_int(GET("c"), &c) || !sym_const_int(GET("d"), &d) || d <= 0) return NULL;
    if (!bnd(x, &x0, &x1) || !bnd(n, &n0, &n1) || n0 < 0) return NULL;
    int64_t cm = pymod(c, d), cq = pydiv(c, d);
    if (x0 >= 0 && cm != c)
        return sym_addc(CTX, sym_bin(CTX, OP_IDIV, sym_addc(CTX, x, cm), GET("d")), cq);
    if (x1 <= 0) {
        const UOp *t = sym_neg(CTX, sym_addc(CTX, x, cm - (d - 1)));
        return sym_addc(CTX, sym_neg(CTX, sym_bin(CTX, OP_IDIV, t, GET("d"))), cq);
    }
    return NULL;
}
static const UOp *mod_neg_numerator(const Match *m, void *ud) {
    (void)ud;
    const UOp *x = GET("x");
    int64_t lo, hi;
    if (!sym_is_index(x) || !bnd(x, &lo, &hi) || hi > 0 || lo == hi) return NULL;
    return sym_neg(CTX, sym_bin(CTX, OP_MOD, sym_neg(CTX, x), GET("d")));
}
static const UOp *mod_neg_divisor(const Match *m, void *ud) {
    (void)ud;
    const UOp *x = GET("x"), *d = GET("d");
    int64_t lo, hi;
    if (!sym_is_index(x) || !bnd(d, &lo, &hi) || hi >= 0) return NULL;
    return sym_bin(CTX, OP_MOD, x, sym_neg(CTX, d));
}

/* m (may be NULL) hears why nothing applied, for k:why */
static const UOp *divmod_general(UCtx *c, Op op, const UOp *d, const UOp *x, const UOp *y, int depth,
                                  const Match *m);

/* term[i] = t[i] / fac[i], built; false when one cannot be (the rule then
 * does not apply, as when sym_divides fails) */
static bool build_terms(UCtx *ctx, const UOp *const *t, const int64_t *fac, const UOp **term, WouldBe *tb, int n) {
    for (int i = 0; i < n; i++) {
        if (!(term[i] = sym_divides(ctx, t[i], fac[i]))) return false;
        if (!tb[i].known) tb[i] = wb_of(term[i]);
    }
    return true;
}

/* rules that need a positive constant divisor c; NULL when none applies */
static const UOp *divmod_const(UCtx *ctx, Op op, const UOp *x, const UOp *y, int64_t c, const UOp *x_peeled, int64_t k,
                               const UOp **t, int n, int depth) {
    int64_t x0, x1;
    if (!bnd(x, &x0, &x1)) return NULL;
    /* remove_nested_mod: (a%4 + b)%2 -> (a+b)%2 */
    if (op == OP_MOD && x0 >= 0) {
        const UOp *nt[SYM_MAX_TERMS];
        bool changed = false;
        for (int i = 0; i < n; i++) {
            int64_t mc;
            nt[i] = t[i];
            if (uop_op(t[i]) == OP_MOD && sym_const_int(t[i]->src[1], &mc) && mc % c == 0) { nt[i] = t[i]->src[0]; changed = true; }
        }
        if (changed) {
            const UOp *nx = sym_addc(ctx, sym_sum(ctx, nt, n, x), k);
            if (nx && vmin_of(nx) >= 0) return sym_bin(ctx, OP_MOD, nx, y);
        }
    }
    /* each term is fac * term; the terms are built only where a rule below
     * returns them: their bounds, and those of the candidate sums, are
     * worked out without building anything (sym_would_be.h) */
    const UOp *term[SYM_MAX_TERMS];
    int64_t fac[SYM_MAX_TERMS];
    WouldBe tb[SYM_MAX_TERMS];
    bool built = false;
    for (int i = 0; i < n; i++) {
        fac[i] = sym_const_factor(t[i]);
        if (fac[i] == 0) return NULL;
        int r = wb_divides(t[i], fac[i], &tb[i]);
        if (r == 0) return NULL;
        if (r < 0) built = true;
    }
    if (built && !build_terms(ctx, t, fac, term, tb, n)) return NULL;
    /* fold_binary_numerator: one term taking two values */
    if (n == 1 && tb[0].known && (i128)tb[0].hi - tb[0].lo == 1) {
        int64_t v0 = tb[0].lo, v1 = tb[0].hi;
        i128 a = (i128)fac[0] * v0 + k, b = (i128)fac[0] * v1 + k;
        if (!sym_fits(x->dtype, a) || !sym_fits(x->dtype, b)) return NULL;
        if (!built && !build_terms(ctx, t, fac, term, tb, n)) return NULL;
        int64_t y1 = op == OP_MOD ? (int64_t)(a % c) : (int64_t)(a / c), y2 = op == OP_MOD ? (int64_t)(b % c) : (int64_t)(b / c);
        return sym_addc(ctx, sym_mulc(ctx, sym_addc(ctx, term[0], -v0), y2 - y1), y1);
    }
    /* fold_divmod_congruence: x is congruent to an expression that stays in one interval of c */
    if (x0 >= 0) {
        int64_t rem[SYM_MAX_TERMS];
        WouldBe rb = wb_const(0);
        int nr = 0;
        for (int i = 0; i < n; i++) {
            int64_t r = pymod(fac[i], c), r2 = r - c;
            rem[i] = (r2 < 0 ? -r2 : r2) < r ? r2 : r;
            if (!rem[i]) continue;
            WouldBe rt = rem[i] == 1 ? tb[i] : wb_mul(x->dtype, tb[i], wb_const(rem[i]));
            rb = nr++ == 0 ? rt : wb_add(x->dtype, rb, rt);
        }
        if (pymod(k, c) != 0) rb = wb_add(x->dtype, rb, wb_const(pymod(k, c)));
        /* unknown bounds: build the candidate and read its bounds, as before */
        bool try_it = !rb.known || (rb.lo > INT64_MIN && rb.hi < INT64_MAX && pydiv(rb.lo, c) == pydiv(rb.hi, c));
        if (try_it && !built && !build_terms(ctx, t, fac, term, tb, n)) return NULL;
        built = built || try_it;
        const UOp *rt[SYM_MAX_TERMS];
        nr = 0;
        for (int i = 0; try_it && i < n; i++)
            if (rem[i]) rt[nr++] = sym_mulc(ctx, term[i], rem[i]);
        const UOp *rsum = try_it ? sym_addc(ctx, sym_sum(ctx, rt, nr, x), pymod(k, c)) : NULL;
        int64_t r0, r1;
        if (rsum && bnd(rsum, &r0, &r1) && r0 > INT64_MIN && r1 < INT64_MAX && pydiv(r0, c) == pydiv(r1, c)) {
            int64_t q = pydiv(r0, c);
            if (op == OP_MOD) return sym_addc(ctx, rsum, -q * c);
            const UOp *qt[SYM_MAX_TERMS];
            int nq = 0;
            for (int i = 0; i < n; i++) {
                int64_t coef = (fac[i] - rem[i]) / c;
                if (coef) qt[nq++] = sym_mulc(ctx, term[i], coef);
            }
            i128 kc = floordiv128((i128)k - pymod(k, c) + (i128)q * c, c);
            if (!sym_fits(x->dtype, kc)) return NULL;
            return sym_addc(ctx, sym_sum(ctx, qt, nq, x), (int64_t)kc);
        }
    }
    /* gcd_with_remainder: factor a common gcd out of the numerator */
    if (x0 >= 0) {
        /* sym_gcd of the terms and y: with y the constant c, the common
         * factors it keeps are only constants, so it is the constant gcd of
         * the factors and c (NULL when a term splits into too many factors) */
        int64_t gv = 0;
        bool split_ok = true;
        for (int i = 0; i < n && split_ok; i++) {
            const UOp *parts[SYM_MAX_TERMS];
            split_ok = sym_split(t[i], OP_MUL, parts, SYM_MAX_TERMS) >= 0;
            gv = sym_gcd_int(gv, fac[i]);
        }
        gv = sym_gcd_int(gv, c);
        WouldBe nb;
        if (split_ok && gv) sym_const_like(ctx, t[0], gv); /* made as sym_gcd made it (node ids) */
        int nd = split_ok && gv > 1 ? wb_divides(x_peeled, gv, &nb) : 0;
        if (nd == 1 && pymod(k, c) / gv != 0) nb = wb_add(x->dtype, nb, wb_const(pymod(k, c) / gv));
        if (nd < 0 || (nd == 1 && (!nb.known || nb.lo >= 0))) {
            const UOp *g = sym_const_like(ctx, x, gv);
            const UOp *nx = sym_addc(ctx, sym_divide_exact(ctx, x_peeled, g), pymod(k, c) / gv);
            if (nx && vmin_of(nx) >= 0) {
                const UOp *ret = sym_bin(ctx, op, nx, sym_const_like(ctx, x, c / gv));
                return op == OP_MOD ? sym_addc(ctx, sym_mulc(ctx, ret, gv), pymod(k, gv)) : sym_addc(ctx, ret, pydiv(k, c));
            }
        }
    }
    /* nest_div_by_smallest_factor: divide by a factor of c first if that simplifies */
    if (op == OP_IDIV && x0 >= 0 && depth < 8) {
        int64_t div = c;
        for (int i = 0; i < n; i++) {
            int64_t f = fac[i] < 0 ? -fac[i] : fac[i];
            if (uop_op(t[i]) != OP_CONST && f > 1 && c % f == 0 && f < div) div = f;
        }
        if (div < c) {
            const UOp *dv = sym_const_like(ctx, x, div);
            const UOp *inner = sym_bin(ctx, OP_IDIV, x, dv);
            const UOp *nx = inner ? divmod_general(ctx, OP_IDIV, inner, x, dv, depth + 1, NULL) : NULL;
            if (nx && vmin_of(nx) >= 0) return sym_bin(ctx, OP_IDIV, nx, sym_const_like(ctx, x, c / div));
        }
    }
    return NULL;
}

/* sym_gcd(t, n) when t[n-1] is a positive constant: then the factors it
 * has in common are constants and it is the constant gcd of the terms'
 * factors.  1 with that gcd in *g, 0 when sym_gcd gives NULL, -1 when that
 * cannot be told without building. */
static int const_gcd(const UOp *const *t, int n, int64_t *g) {
    int64_t gv = 0;
    for (int i = 0; i < n; i++) {
        int64_t f = sym_const_factor(t[i]);
        if (f == 0) return 0;
        WouldBe b;
        int r = wb_divides(t[i], f, &b);
        if (r <= 0) return r;
        const UOp *parts[SYM_MAX_TERMS];
        if (sym_split(t[i], OP_MUL, parts, SYM_MAX_TERMS) < 0) return 0;
        gv = sym_gcd_int(gv, f);
    }
    if (gv == 0) return 0;
    *g = gv;
    return 1;
}

static const UOp *divmod_general(UCtx *ctx, Op op, const UOp *d, const UOp *x, const UOp *y, int depth,
                                  const Match *m) {
    int64_t x0, x1, y0, y1;
    if (!bnd(x, &x0, &x1) || !bnd(y, &y0, &y1) || (y0 == 0 && y1 == 0)) {
        MATCH_DECLINE(m, "the bounds of its sources are not known, or the divisor is 0");
        return NULL;
    }
    /* cancel_divmod: the numerator stays within one interval of the denominator */
    if ((y0 > 0 && y1 > 0) || (y0 < 0 && y1 < 0)) {
        i128 q = trunc_div(x0, y0);
        if (q == trunc_div(x0, y1) && q == trunc_div(x1, y0) && q == trunc_div(x1, y1)) {
            if (op == OP_MOD) return sym_add(ctx, x, sym_neg(ctx, sym_mulc(ctx, y, (int64_t)q)));
            return sym_const_like(ctx, d, (int64_t)q);
        }
        MATCH_DECLINE(m, "cancel_divmod: the numerator's bounds [%lld, %lld] span more than one quotient by [%lld, %lld]",
                      (long long)x0, (long long)x1, (long long)y0, (long long)y1);
    } else {
        MATCH_DECLINE(m, "cancel_divmod: the divisor's bounds [%lld, %lld] include 0", (long long)y0, (long long)y1);
    }
    int64_t k;
    const UOp *x_peeled = sym_pop_const(x, &k);
    const UOp *t[SYM_MAX_TERMS + 1];
    int n = sym_split(x_peeled, OP_ADD, t, SYM_MAX_TERMS);
    if (n < 0) return NULL;
    int64_t c;
    if (sym_const_int(y, &c) && c > 0) {
        const UOp *r = divmod_const(ctx, op, x, y, c, x_peeled, k, t, n, depth);
        if (r) return r;
    }
    /* divide_by_gcd: x//y -> (x/g)//(y/g) */
    const UOp *all[SYM_MAX_TERMS + 2];
    int na = 0;
    for (int i = 0; i < n; i++) all[na++] = t[i];
    if (k != 0) all[na++] = sym_const_like(ctx, x, k);
    all[na] = y;
    int64_t yc = 0, gv;
    bool y_pos_const = sym_const_int(y, &yc) && yc > 0;
    /* with y a positive constant the gcd is a constant, told without building */
    int gs = y_pos_const ? const_gcd(all, na + 1, &gv) : -1;
    /* the gcd constant is made, as sym_gcd made it: node ids are shown to
     * the user, and a constant made later would take another id */
    if (gs == 1) sym_const_like(ctx, t[0], gv);
    if (gs == 0) return NULL;
    const UOp *g = gs == 1 && gv == 1 ? NULL : sym_gcd(ctx, all, na + 1);
    if (gs != 1 && !g) return NULL;
    if (g && !(sym_const_int(g, &gv) && gv == 1)) {
        const UOp *xd = sym_divide_exact(ctx, x, g), *yd = sym_divide_exact(ctx, y, g);
        if (!xd || !yd) return NULL;
        const UOp *ret = sym_bin(ctx, op, xd, yd);
        return op == OP_MOD ? sym_mul(ctx, ret, g) : ret;
    }
    /* factor_remainder: (d*x + r)//d -> x + r//d */
    if (y0 < 0 || x0 < 0) return NULL;
    if (y_pos_const) {
        /* nothing to factor out: no term divisible by y (nor, for MOD, a
         * factor to reduce modulo y) */
        int would = 0;
        bool unknown = false;
        for (int i = 0; i < na; i++) {
            WouldBe b;
            int r = wb_divides(all[i], yc, &b);
            int64_t f;
            if (r < 0) unknown = true;
            else if (r == 1) would++;
            else if (op == OP_MOD && (f = sym_const_factor(all[i])) != 0 && pymod(f, yc) != f) would++;
        }
        if (!unknown && !would) return NULL;
    }
    const UOp *quo[SYM_MAX_TERMS + 1], *rem[SYM_MAX_TERMS + 1];
    int nq = 0, nr = 0;
    bool y_const = sym_const_int(y, &yc) && yc != 0;
    for (int i = 0; i < na; i++) {
        const UOp *q = sym_divide_exact(ctx, all[i], y);
        int64_t f;
        if (q) quo[nq++] = q;
        else if (op == OP_MOD && y_const && (f = sym_const_factor(all[i])) != 0 && pymod(f, yc) != f) {
            const UOp *base = sym_divides(ctx, all[i], f);
            if (!base) return NULL;
            rem[nr++] = sym_mulc(ctx, base, pymod(f, yc));
            quo[nq++] = sym_const_like(ctx, x, 0);
        } else rem[nr++] = all[i];
    }
    if (!nq) return NULL;
    const UOp *nx = sym_sum(ctx, rem, nr, x);
    if (!nx || vmin_of(nx) < 0) return NULL;
    if (op == OP_MOD) return sym_bin(ctx, OP_MOD, nx, y);
    return sym_add(ctx, sym_bin(ctx, OP_IDIV, nx, y), sym_sum(ctx, quo, nq, x));
}

static const UOp *fold_divmod_general(const Match *m, void *ud) {
    (void)ud;
    const UOp *u = ROOT;
    if (!sym_is_index(u)) {
        MATCH_DECLINE(m, "it is not index arithmetic");
        return NULL;
    }
    const UOp *r = divmod_general(CTX, uop_op(u), u, u->src[0], u->src[1], 0, m);
    if (!r || r == u)
        MATCH_DECLINE(m, "nor do its other folds (nested mod, congruence, common factors, remainders)");
    return r == u ? NULL : r;
}

static const RuleSpec divmod_specs[] = {
    RULE_FN("fold_div_nested_add", "(IDIV (ADD (IDIV x c@(CONST)) a@(CONST)) d@(CONST))", fold_div_nested_add),
    RULE_FN("div_neg_divisor", "(IDIV x d)", div_neg_divisor),
    RULE_FN("div_neg_numerator", "(IDIV x d)", div_neg_numerator),
    RULE_FN("div_split_const", "(IDIV (ADD x c@(CONST)) d@(CONST))", div_split_const),
    RULE_FN("fold_divmod_general", "({IDIV MOD} _ _)", fold_divmod_general),
    RULE_FN("mod_neg_numerator", "(MOD x d)", mod_neg_numerator),
    RULE_FN("mod_neg_divisor", "(MOD x d)", mod_neg_divisor),
};
const RuleTable sym_divmod_rules = {divmod_specs, sizeof divmod_specs / sizeof *divmod_specs};
