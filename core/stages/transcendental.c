/* transcendental.c - stage 18's decompositions of the ops tinygrad v0.12.0's
 * CPU LLVM renderer does not draw (its code_for_op holds only FDIV and
 * CMPLT): EXP2, LOG2 and SIN as polynomial approximations of about 1 ulp
 * with the special values (inf, nan, 0, -0) handled by selects, SQRT as
 * pow(x, 0.5) through them, MAX as a compare and select, and THREEFRY (the
 * counter-based random generator) as 32-bit adds, multiplies by powers of
 * two and xors.  The graphs built here are node for node those of v0.12.0's
 * decompositions (same ops, same operand order, same constants), so the
 * symbolic_simple rules that run with them leave what tinygrad leaves.
 *
 * Writing notes: `x - y` is ADD(x, MUL(y, -1)) and `x - c` is ADD(x, -c),
 * as tinygrad spells them; a constant takes the dtype of the node it meets. */
#include <math.h>
#include <stdint.h>
#include "stage_rules.h"
#include "uop_build.h"
#include "../sym/symbolic.h"

#define CTX (m->ctx)
#define HALF_PI 1.5707963267948966
#define GET(n) match_get(m, n)

/* ---- small builders (each passes a NULL source through as NULL) ---- */

static const DType *like_count(const DType *scalar, const UOp *x) { return dt_vec(scalar, dt_vcount(x->dtype)); }

/* a constant of x's dtype (lane type for vectors) with value v */
static const UOp *K(UCtx *c, const UOp *x, double v) {
    if (!x) return NULL;
    const DType *dt = x->dtype;
    if (dt_is_float(dt)) return uop_const_float(c, dt, v);
    return uop_const_int(c, dt, (int64_t)v);
}
/* an integer constant of x's dtype given exactly (64-bit patterns) */
static const UOp *KI(UCtx *c, const UOp *x, int64_t v) { return x ? uop_const_int(c, x->dtype, v) : NULL; }

static const UOp *add(UCtx *c, const UOp *a, const UOp *b) { return uop_binary(c, OP_ADD, a, b); }
static const UOp *mul(UCtx *c, const UOp *a, const UOp *b) { return uop_binary(c, OP_MUL, a, b); }
static const UOp *idiv(UCtx *c, const UOp *a, const UOp *b) { return uop_binary(c, OP_IDIV, a, b); }
static const UOp *and_(UCtx *c, const UOp *a, const UOp *b) { return uop_binary(c, OP_AND, a, b); }
static const UOp *or_(UCtx *c, const UOp *a, const UOp *b) { return uop_binary(c, OP_OR, a, b); }
static const UOp *xor_(UCtx *c, const UOp *a, const UOp *b) { return uop_binary(c, OP_XOR, a, b); }
static const UOp *lt(UCtx *c, const UOp *a, const UOp *b) { return uop_binary(c, OP_CMPLT, a, b); }
static const UOp *ne(UCtx *c, const UOp *a, const UOp *b) { return uop_binary(c, OP_CMPNE, a, b); }
static const UOp *where(UCtx *c, const UOp *b, const UOp *x, const UOp *y) { return uop_where(c, b, x, y); }
static const UOp *addk(UCtx *c, const UOp *a, double v) { return add(c, a, K(c, a, v)); }
static const UOp *mulk(UCtx *c, const UOp *a, double v) { return mul(c, a, K(c, a, v)); }
static const UOp *ltk(UCtx *c, const UOp *a, double v) { return lt(c, a, K(c, a, v)); }
static const UOp *nek(UCtx *c, const UOp *a, double v) { return ne(c, a, K(c, a, v)); }
static const UOp *neg(UCtx *c, const UOp *a) { return mulk(c, a, -1); }
static const UOp *sub(UCtx *c, const UOp *a, const UOp *b) { return add(c, a, neg(c, b)); }
static const UOp *not_(UCtx *c, const UOp *b) { return b ? ne(c, b, uop_const_bool(c, true)) : NULL; }
static const UOp *cast(UCtx *c, const UOp *x, const DType *scalar) { return x ? ub_cast(c, x, like_count(scalar, x)) : NULL; }
static const UOp *bitcast(UCtx *c, const UOp *x, const DType *scalar) {
    if (!x) return NULL;
    const DType *dt = like_count(scalar, x);
    return uop_new(c, OP_BITCAST, dt, &x, 1, NULL);
}
/* b ? v1 : v2 with constants of x's dtype */
static const UOp *where_kk(UCtx *c, const UOp *b, const UOp *x, double v1, double v2) {
    return where(c, b, K(c, x, v1), K(c, x, v2));
}
/* tinygrad's polyN: ((0*x + p0)*x + p1)*x + ... */
static const UOp *poly(UCtx *c, const UOp *x, const double *p, int n) {
    const UOp *acc = mul(c, K(c, x, 0.0), x);
    acc = addk(c, acc, p[0]);
    for (int i = 1; i < n; i++) acc = addk(c, mul(c, acc, x), p[i]);
    return acc;
}

/* ---- the float formats ---- */

static bool transcendental_dtype(const DType *d) {
    return d->sk == SK_FLOAT16 || d->sk == SK_FLOAT32 || d->sk == SK_FLOAT64;
}
static int mantissa_bits(const DType *d) { return d->sk == SK_FLOAT64 ? 52 : d->sk == SK_FLOAT32 ? 23 : 10; }
static int exponent_bias(const DType *d) { return d->sk == SK_FLOAT64 ? 1023 : d->sk == SK_FLOAT32 ? 127 : 15; }
static int exponent_mask(const DType *d) { return d->sk == SK_FLOAT64 ? 2047 : d->sk == SK_FLOAT32 ? 255 : 31; }
/* the signed and unsigned integers as wide as a float */
static const DType *int_of(const DType *d) {
    return dt_scalar(d->sk == SK_FLOAT64 ? SK_INT64 : d->sk == SK_FLOAT32 ? SK_INT32 : SK_INT16);
}
static const DType *uint_of(const DType *d) {
    return dt_scalar(d->sk == SK_FLOAT64 ? SK_UINT64 : d->sk == SK_FLOAT32 ? SK_UINT32 : SK_UINT16);
}
static double pow2(int e) { return ldexp(1.0, e); }
static const UOp *shr(UCtx *c, const UOp *x, int y) { return idiv(c, x, K(c, x, pow2(y))); }
static const UOp *shl(UCtx *c, const UOp *x, int y) { return mul(c, x, K(c, x, pow2(y))); }

/* inf, -inf and nan map to the given nodes, everything else to ratio */
static const UOp *map_specials(UCtx *c, const UOp *x, const UOp *inf, const UOp *minf, const UOp *nan, const UOp *ratio) {
    const UOp *finite = where(c, ne(c, x, K(c, x, -INFINITY)), ratio, minf);
    return where(c, ne(c, x, K(c, x, INFINITY)), where(c, ne(c, x, x), nan, finite), inf);
}

/* d rounded to an integer, halves away from 0 */
static const UOp *rintk(UCtx *c, const UOp *d) {
    const UOp *half = where_kk(c, ltk(c, d, 0.0), d, -0.5, 0.5);
    return cast(c, add(c, d, half), int_of(d->dtype->scalar));
}

/* 2^q as a float, q an integer in the normal exponent range */
static const UOp *pow2if(UCtx *c, const UOp *q, const DType *float_dt) {
    if (!q) return NULL;
    ScalarKind k = q->dtype->sk;
    const DType *out = k == SK_INT64 ? dt_scalar(SK_FLOAT64) : k == SK_INT32 ? dt_scalar(SK_FLOAT32) : float_dt->scalar;
    return bitcast(c, shl(c, addk(c, q, exponent_bias(out)), mantissa_bits(out)), out);
}

/* the integer part of log2(d) for a normal d >= 0 */
static const UOp *ilogb2k(UCtx *c, const UOp *d) {
    const DType *f = d->dtype->scalar;
    const UOp *dint = bitcast(c, d, int_of(f));
    return addk(c, and_(c, shr(c, dint, mantissa_bits(f)), K(c, dint, exponent_mask(f))), -exponent_bias(f));
}

/* d * 2^e for e a float holding an integer in the exponent range */
static const UOp *ldexp3k(UCtx *c, const UOp *d, const UOp *e) {
    const DType *f = d->dtype->scalar;
    const UOp *m1 = bitcast(c, d, int_of(f));
    const UOp *m2 = shl(c, cast(c, e, int_of(f)), mantissa_bits(f));
    return cast(c, bitcast(c, add(c, m1, m2), f), f);
}

/* d * 2^e, e an integer: two steps so that neither factor overflows */
static const UOp *ldexp2k(UCtx *c, const UOp *d, const UOp *e) {
    const UOp *half = shr(c, e, 1);
    return mul(c, mul(c, d, pow2if(c, half, d->dtype)), pow2if(c, sub(c, e, half), d->dtype));
}

/* ---- EXP2 ---- */

static const UOp *xexp2(UCtx *c, const UOp *d) {
    const DType *f = d->dtype->scalar;
    const UOp *zero = K(c, d, 0.0);
    const UOp *x = map_specials(c, d, zero, zero, zero, d);
    const UOp *q = rintk(c, x);
    const UOp *s = sub(c, x, cast(c, q, f));
    static const double p64[] = {0.4434359082926529454e-9, 0.7073164598085707425e-8, 0.1017819260921760451e-6,
                                 0.1321543872511327615e-5, 0.1525273353517584730e-4, 0.1540353045101147808e-3,
                                 0.1333355814670499073e-2, 0.9618129107597600536e-2, 0.5550410866482046596e-1,
                                 0.2402265069591012214e+0, 0.6931471805599452862e+0, 0.1000000000000000000e+1};
    static const double p32[] = {0.1535920892e-3, 0.1339262701e-2, 0.9618384764e-2, 0.5550347269e-1,
                                 0.2402264476e+0, 0.6931471825e+0, 1.0};
    const UOp *u = f->sk == SK_FLOAT64 ? poly(c, s, p64, 12) : poly(c, s, p32, 7);
    u = ldexp2k(c, u, q);
    double upper = f->sk == SK_FLOAT64 ? 1024 : f->sk == SK_FLOAT32 ? 128 : 23;
    double lower = f->sk == SK_FLOAT64 ? -2000 : f->sk == SK_FLOAT32 ? -150 : -22;
    u = where(c, not_(c, ltk(c, d, upper)), K(c, d, INFINITY), u);
    u = where(c, ltk(c, d, lower), K(c, d, 0.0), u);
    return where(c, ne(c, d, d), K(c, d, NAN), u);
}

/* ---- LOG2 ---- */

static const UOp *xlog2(UCtx *c, const UOp *d) {
    const DType *f = d->dtype->scalar;
    int denormal_exp = f->sk == SK_FLOAT16 ? 10 : 64;
    const UOp *flt_min = K(c, d, f->sk == SK_FLOAT16 ? 6.1e-5 : 1e-4);
    const UOp *is_denormal = lt(c, d, flt_min);
    const UOp *a = where(c, is_denormal, mulk(c, d, pow2(denormal_exp)), d);
    const UOp *e = cast(c, ilogb2k(c, mulk(c, a, 1.0 / 0.75)), f);
    const UOp *mant = ldexp3k(c, a, neg(c, e));
    e = where(c, is_denormal, addk(c, e, -denormal_exp), e);
    const UOp *x = mul(c, addk(c, mant, -1.0), uop_unary(c, OP_RECIPROCAL, addk(c, mant, 1.0)));
    const UOp *x2 = mul(c, x, x);
    const UOp *r;
    if (f->sk == SK_FLOAT64) {
        static const double p[] = {0.2211941750456081490e+0, 0.2200768693152277689e+0, 0.2623708057488514656e+0,
                                   0.3205977477944495502e+0, 0.4121985945485324709e+0, 0.5770780162997058982e+0,
                                   0.96179669392608091449};
        const UOp *t = poly(c, x2, p, 7);
        r = add(c, add(c, mul(c, t, mul(c, x, x2)), e), mulk(c, x, 2.885390081777926774));
    } else {
        static const double p[] = {0.4374550283e+0, 0.5764790177e+0, 0.9618012905120};
        const UOp *t = poly(c, x2, p, 3);
        r = add(c, add(c, mul(c, t, mul(c, x, x2)), e), mulk(c, x, 2.8853900432586669922));
        /* the low part of the constant only for float32: it underflows in float16 */
        r = f->sk == SK_FLOAT32 ? add(c, r, mulk(c, x, 3.2734474483568488616e-08)) : addk(c, r, 0);
    }
    r = where(c, nek(c, d, INFINITY), r, K(c, r, INFINITY));
    r = where(c, nek(c, d, 0.0), r, K(c, r, -INFINITY));
    r = where(c, ltk(c, d, -0.0), K(c, r, NAN), r);
    r = where(c, ne(c, d, d), K(c, r, NAN), r);
    /* log2(-0) = -inf: 1/-0 is -inf, which holds where -0 == 0 does not tell them apart */
    return where(c, nek(c, uop_unary(c, OP_RECIPROCAL, d), -INFINITY), r, K(c, r, -INFINITY));
}

/* ---- SIN ---- */

/* (mantissa in [0.5, 1), exponent) of v != 0 */
static void frexp_parts(UCtx *c, const UOp *v, const UOp **mant, const UOp **expo) {
    const DType *f = v->dtype->scalar;
    int64_t m1 = f->sk == SK_FLOAT64 ? 0x000FFFFFFFFFFFFF : f->sk == SK_FLOAT32 ? 0x807FFFFF : 0x83FF;
    int64_t m2 = f->sk == SK_FLOAT64 ? 0x3FE0000000000000 : f->sk == SK_FLOAT32 ? 0x3F000000 : 0x3800;
    const UOp *bits = bitcast(c, v, uint_of(f));
    const UOp *exponent = and_(c, shr(c, bits, mantissa_bits(f)), K(c, bits, exponent_mask(f)));
    *mant = bitcast(c, or_(c, and_(c, bits, KI(c, bits, m1)), KI(c, bits, m2)), f);
    *expo = addk(c, addk(c, exponent, -exponent_bias(f)), 1);
}

/* Payne-Hanek: d mod pi/2 for large d (>= 39800 and inf) by 2/pi to 190
 * bits; returns r and the quadrant q (int32; q % 4 is what counts) */
static void payne_hanek(UCtx *c, const UOp *d, const UOp **r_out, const UOp **q_out) {
    static const int64_t two_over_pi[] = {0x00000000, 0x28be60db, 0x9391054a, 0x7f09d5f4,
                                          0x7d4d3770, 0x36d8a566, 0x4f10e410};
    const int n_words = (int)(sizeof two_over_pi / sizeof *two_over_pi);
    const DType *f = d->dtype->scalar, *u32 = dt_scalar(SK_UINT32), *u64 = dt_scalar(SK_UINT64);
    const DType *inter = f->sk == SK_FLOAT16 ? dt_scalar(SK_FLOAT32) : f;
    const UOp *fr, *e;
    frexp_parts(c, d, &fr, &e);
    const UOp *ia = cast(c, mulk(c, cast(c, fr, inter), 4.294967296e9), u64);
    const UOp *i = shr(c, cast(c, e, u64), 5);
    e = and_(c, cast(c, e, dt_scalar(SK_INT32)), K(c, cast(c, e, dt_scalar(SK_INT32)), 31));
    const UOp *offset = add(c, K(c, e, 32), neg(c, e));
    /* a[k] = two_over_pi[i + k], chosen by comparisons on i */
    const UOp *a[4];
    const UOp *zero = uop_const_int(c, like_count(u32, d), 0);
    for (int k = 0; k < 4; k++) {
        const UOp *an = zero;
        int last = n_words - 1 - k; /* counts from 0 while count + k < n_words - 1 */
        for (int count = last - 1; count >= 0; count--)
            an = where(c, ne(c, i, K(c, i, count)), an, KI(c, zero, two_over_pi[count + k]));
        a[k] = an;
    }
    const UOp *hi, *mi, *lo;
#define SHL_LAZY(x, y) cast(c, mul(c, cast(c, x, u64), cast(c, pow2if(c, y, f), u64)), u32)
#define SHR_LAZY(x, y) cast(c, idiv(c, cast(c, x, u64), cast(c, pow2if(c, y, f), u64)), u32)
    hi = or_(c, SHL_LAZY(a[0], e), SHR_LAZY(a[1], offset));
    mi = or_(c, SHL_LAZY(a[1], e), SHR_LAZY(a[2], offset));
    lo = or_(c, SHL_LAZY(a[2], e), SHR_LAZY(a[3], offset));
#undef SHL_LAZY
#undef SHR_LAZY
#define HP_MUL(x, y) mul(c, cast(c, x, u64), cast(c, y, u64))
    const UOp *p = add(c, add(c, shl(c, HP_MUL(ia, hi), 32), HP_MUL(ia, mi)), shr(c, HP_MUL(ia, lo), 32));
#undef HP_MUL
    const UOp *q = cast(c, shr(c, p, 62), dt_scalar(SK_INT32));
    p = and_(c, p, KI(c, p, 0x3fffffffffffffff));
    const UOp *r = cast(c, mulk(c, cast(c, p, inter), 3.4061215800865545e-19), f);
    const UOp *small = ltk(c, fr, 0.5);
    *r_out = where(c, small, r, addk(c, r, -HALF_PI));
    *q_out = where(c, small, q, addk(c, q, 1));
}

/* d - q*pi in several parts, in the precision d needs */
static const UOp *cody_waite_reduce(UCtx *c, const UOp *x, const UOp *q, const UOp *qdh) {
    const DType *f = x->dtype->scalar;
    if (f->sk == SK_FLOAT64) {
        static const double pi[] = {3.1415926218032836914, 3.1786509424591713469e-08, 1.2246467864107188502e-16,
                                    1.2736634327021899816e-24};
        const UOp *d = add(c, mulk(c, qdh, -pi[0]), x);
        d = add(c, mulk(c, q, -pi[0]), d);
        d = add(c, mulk(c, qdh, -pi[1]), d);
        d = add(c, mulk(c, q, -pi[1]), d);
        d = add(c, mulk(c, qdh, -pi[2]), d);
        d = add(c, mulk(c, q, -pi[2]), d);
        return add(c, mulk(c, add(c, qdh, q), -pi[3]), d);
    }
    if (f->sk == SK_FLOAT16) {
        const DType *f32 = dt_scalar(SK_FLOAT32);
        return cast(c, cody_waite_reduce(c, cast(c, x, f32), cast(c, q, f32), qdh), f);
    }
    const UOp *d = add(c, mulk(c, q, -3.1414794921875), x);
    d = add(c, mulk(c, q, -0.00011315941810607910156), d);
    d = add(c, mulk(c, q, -1.9841872589410058936e-09), d);
    return add(c, mulk(c, q, -1.2154201256553420762e-10), d);
}

/* Cody-Waite: d mod pi/2 for |d| up to 39800; same outputs as payne_hanek */
static void cody_waite(UCtx *c, const UOp *d, const UOp **r_out, const UOp **q_out) {
    const DType *f = d->dtype->scalar;
    const double m_1_pi = 0.318309886183790671537767526745028724;
    const UOp *qdh = NULL, *quadrant;
    if (f->sk == SK_FLOAT64) {
        qdh = mulk(c, cast(c, cast(c, mulk(c, d, m_1_pi / pow2(24)), dt_scalar(SK_INT64)), f), pow2(24));
        quadrant = rintk(c, sub(c, mulk(c, d, m_1_pi), qdh));
    } else {
        quadrant = rintk(c, mulk(c, d, m_1_pi));
    }
    *r_out = cody_waite_reduce(c, d, cast(c, quadrant, f), qdh);
    *q_out = cast(c, quadrant, dt_scalar(SK_INT32));
}

/* sin on [-pi/2, pi/2] */
static const UOp *sin_poly(UCtx *c, const UOp *d) {
    static const double p32[] = {2.6083159809786593541503e-06, -0.0001981069071916863322258,
                                 0.00833307858556509017944336, -0.166666597127914428710938, 1.0};
    static const double p64[] = {-7.97255955009037868891952e-18, 2.81009972710863200091251e-15,
                                 -7.64712219118158833288484e-13, 1.60590430605664501629054e-10,
                                 -2.50521083763502045810755e-08, 2.75573192239198747630416e-06,
                                 -0.000198412698412696162806809, 0.00833333333333332974823815,
                                 -0.166666666666666657414808, 1.0};
    const UOp *d2 = mul(c, d, d);
    return mul(c, d, d->dtype->sk == SK_FLOAT64 ? poly(c, d2, p64, 10) : poly(c, d2, p32, 5));
}
static const UOp *quadrant_bit(UCtx *c, const UOp *q, int n) { return nek(c, and_(c, q, K(c, q, n)), 0); }

static const UOp *sin_poly_small(UCtx *c, const UOp *d, const UOp *q) {
    const UOp *r = sin_poly(c, d);
    return mul(c, r, where_kk(c, quadrant_bit(c, q, 1), r, -1, 1));
}
static const UOp *sin_poly_large(UCtx *c, const UOp *d, const UOp *q) {
    const UOp *r = sin_poly(c, add(c, d, where_kk(c, quadrant_bit(c, q, 1), d, HALF_PI, 0)));
    return mul(c, r, where_kk(c, quadrant_bit(c, q, 2), r, -1, 1));
}

static const UOp *xsin(UCtx *c, const UOp *d) {
    const UOp *zero = K(c, d, 0.0);
    const UOp *x = map_specials(c, d, zero, zero, zero, d);
    const UOp *x_sign = where(c, nek(c, x, 0), where_kk(c, ltk(c, x, 0), x, -1, 1), K(c, x, 0));
    const UOp *x_abs = mul(c, x, x_sign);
    const UOp *r, *q, *r_small, *q_small;
    payne_hanek(c, x_abs, &r, &q);
    cody_waite(c, x_abs, &r_small, &q_small);
    const UOp *result = where(c, ltk(c, x_abs, 30.0), sin_poly_small(c, r_small, q_small), sin_poly_large(c, r, q));
    result = mul(c, result, x_sign);
    const UOp *nan = K(c, d, NAN);
    return map_specials(c, d, nan, nan, nan, result);
}

/* ---- the rules ---- */

typedef const UOp *(*Approx)(UCtx *c, const UOp *d);

/* float16/32/64 get the approximation; other floats (bfloat16, fp8) go
 * through float32 and back */
static const UOp *decompose(const Match *m, Approx f) {
    const UOp *u = m->root, *d = GET("d");
    if (transcendental_dtype(u->dtype)) return f(CTX, d);
    if (!dt_is_float(u->dtype)) return NULL;
    const UOp *in32 = uop_unary(CTX, uop_op(u), cast(CTX, d, dt_scalar(SK_FLOAT32)));
    return cast(CTX, in32, u->dtype->scalar);
}
static const UOp *exp2_approx(const Match *m, void *ud) { (void)ud; return decompose(m, xexp2); }
static const UOp *log2_approx(const Match *m, void *ud) { (void)ud; return decompose(m, xlog2); }
static const UOp *sin_approx(const Match *m, void *ud) { (void)ud; return decompose(m, xsin); }

static const UOp *sqrt_as_pow(const Match *m, void *ud) {
    (void)ud;
    const UOp *d = GET("d");
    return sym_xpow(CTX, d, K(CTX, d, 0.5));
}

static const UOp *max_as_where(const Match *m, void *ud) {
    (void)ud;
    const UOp *a = m->root->src[0], *b = m->root->src[1];
    return where(CTX, lt(CTX, a, b), b, a);
}

/* ---- THREEFRY: threefry2x32 on (x, key) as two uint32 halves each ---- */

static const UOp *threefry2x32(UCtx *c, const UOp *x, const UOp *key) {
    const DType *u32 = dt_scalar(SK_UINT32), *u64 = dt_scalar(SK_UINT64);
    const UOp *x0 = cast(c, and_(c, x, KI(c, x, 0xffffffff)), u32);
    const UOp *x1 = cast(c, and_(c, idiv(c, x, KI(c, x, 1LL << 32)), KI(c, x, 0xffffffff)), u32);
    const UOp *key0 = cast(c, and_(c, key, KI(c, key, 0xffffffff)), u32);
    const UOp *key1 = cast(c, and_(c, idiv(c, key, KI(c, key, 1LL << 32)), KI(c, key, 0xffffffff)), u32);
    static const int rotations[2][4] = {{13, 15, 26, 6}, {17, 29, 16, 24}};
    const UOp *ks[3] = {key1, xor_(c, xor_(c, key0, key1), KI(c, key0, 0x1BD11BDA)), key0};
    const UOp *xr0 = add(c, x0, ks[2]), *xr1 = add(c, x1, ks[0]);
    for (int i = 0; i < 5; i++) {
        for (int j = 0; j < 4; j++) {
            int r = rotations[i % 2][j];
            const UOp *sum = add(c, xr0, xr1);
            const UOp *rot = add(c, mul(c, xr1, KI(c, xr1, 1LL << r)), idiv(c, xr1, KI(c, xr1, 1LL << (32 - r))));
            xr1 = xor_(c, sum, rot);
            xr0 = sum;
        }
        xr0 = add(c, xr0, ks[i % 3]);
        xr1 = addk(c, addk(c, add(c, xr1, ks[(i + 1) % 3]), i), 1); /* (x + ks) + i + 1, as written */
    }
    const UOp *hi = cast(c, xr1, u64);
    return or_(c, mul(c, hi, KI(c, hi, 1LL << 32)), cast(c, xr0, u64));
}

static const UOp *threefry_rule(const Match *m, void *ud) {
    (void)ud;
    return threefry2x32(CTX, GET("x"), GET("key"));
}

static const RuleSpec transcendental_specs[] = {
    RULE_FN("xexp2", "(EXP2:floats d)", exp2_approx),
    RULE_FN("xlog2", "(LOG2:floats d)", log2_approx),
    RULE_FN("xsin", "(SIN:floats d)", sin_approx),
};
static const RuleSpec threefry_specs[] = {
    RULE_FN("threefry2x32", "(THREEFRY:uint64 x key)", threefry_rule),
};
static const RuleSpec max_sqrt_specs[] = {
    RULE_FN("max_as_where", "(MAX _ _)", max_as_where),
    RULE_FN("sqrt_as_pow", "(SQRT d)", sqrt_as_pow),
};

const RuleTable transcendental_rules = RULE_TABLE(transcendental_specs);
const RuleTable threefry_rules = RULE_TABLE(threefry_specs);
const RuleTable max_sqrt_rules = RULE_TABLE(max_sqrt_specs);
