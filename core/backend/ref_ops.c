/* ref_ops.c - the tensor reference's arithmetic on blocks (see ref_ops.h).
 *
 * The loops for float32, float64, int32, int64 and bool repeat scalar_eval's
 * expressions exactly (a float32 result is computed in double and rounded by
 * (double)(float), as scalar_from_float does; an int32 result wraps as
 * dt_wrap_int does), so the results are bit for bit those of scalar_eval; any
 * other dtype or op goes through scalar_eval element by element. */
#if defined(__GNUC__) && !defined(__clang__)
/* the block loops vectorise with GCC's cheap cost model, not with -O2's very cheap one */
#pragma GCC optimize("tree-vectorize", "vect-cost-model=cheap")
#endif
#include "ref_ops.h"
#include "scalar_eval.h"

#include <math.h>

/* The hot block loops are built twice on x86-64, for AVX2 and for the
 * baseline, and the loader picks one by the CPU (GCC and Clang function
 * multi-versioning): converting doubles to float and back, as every float32
 * op does, takes three times as long in baseline SSE2.  AVX2 without FMA:
 * the same IEEE operations, so the same bits. */
#if defined(__x86_64__) && defined(__linux__) && (defined(__GNUC__) || defined(__clang__))
#define VECTOR_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define VECTOR_CLONES
#endif

/* the dtypes with loops of their own */
typedef enum Kind { K_F32, K_F64, K_I32, K_I64, K_BOOL, K_OTHER } Kind;

static Kind kind_of(const DType *dt) {
    switch (dt->sk) {
    case SK_FLOAT32: return K_F32;
    case SK_FLOAT64: return K_F64;
    case SK_INT32: return K_I32;
    case SK_INT64: case SK_INDEX: return K_I64;
    case SK_BOOL: return K_BOOL;
    default: return K_OTHER;
    }
}

/* dt_wrap_int for int32 */
static inline int64_t wrap32(uint64_t x) {
    uint64_t m = x & 0xFFFFFFFFu;
    return (int64_t)((m ^ 0x80000000u) - 0x80000000u);
}

#define LOOP(body)                                                                             \
    do {                                                                                       \
        for (int64_t t = 0; t < len; t++) { body; }                                            \
        return NULL;                                                                           \
    } while (0)

/* float32 (R = (double)(float)) or float64 (R = nothing) arithmetic */
#define FLOAT_OPS(R)                                                                           \
    switch (op) {                                                                              \
    case OP_ADD: LOOP(of[t] = R(af[t] + bf[t]));                                               \
    case OP_SUB: LOOP(of[t] = R(af[t] - bf[t]));                                               \
    case OP_MUL: LOOP(of[t] = R(af[t] * bf[t]));                                               \
    case OP_FDIV: LOOP(of[t] = R(af[t] / bf[t]));                                              \
    case OP_NEG: LOOP(of[t] = R(-af[t]));                                                      \
    case OP_MAX: LOOP(of[t] = R(scalar_max_float(af[t], bf[t])));                              \
    default: break;                                                                            \
    }
#define ROUND32(x) ((double)(float)(x))
#define AS_IS(x) (x)

/* int32 (W = wrap32) or int64 (W = (int64_t)) arithmetic in uint64 */
#define INT_OPS(W)                                                                             \
    switch (op) {                                                                              \
    case OP_ADD: LOOP(oi[t] = W((uint64_t)ai[t] + (uint64_t)bi[t]));                           \
    case OP_SUB: LOOP(oi[t] = W((uint64_t)ai[t] - (uint64_t)bi[t]));                           \
    case OP_MUL: LOOP(oi[t] = W((uint64_t)ai[t] * (uint64_t)bi[t]));                           \
    case OP_AND: LOOP(oi[t] = W((uint64_t)ai[t] & (uint64_t)bi[t]));                           \
    case OP_OR: LOOP(oi[t] = W((uint64_t)ai[t] | (uint64_t)bi[t]));                            \
    case OP_XOR: LOOP(oi[t] = W((uint64_t)ai[t] ^ (uint64_t)bi[t]));                           \
    case OP_MAX: LOOP(oi[t] = W((uint64_t)(ai[t] > bi[t] ? ai[t] : bi[t])));                   \
    default: break;                                                                            \
    }

/* out does not overlap a or b (a and b may be the same); the loops read and
 * write the union's members through plain pointers, which vectorise */
VECTOR_CLONES static const char *alu_fast(Op op, Kind ks, Kind kd, const RefWord *restrict a, const RefWord *restrict b,
                            RefWord *restrict out, int64_t len) {
    const double *restrict af = &a->f, *restrict bf = &b->f;
    const int64_t *restrict ai = &a->i, *restrict bi = &b->i;
    double *restrict of = &out->f;
    int64_t *restrict oi = &out->i;
    if (op_is(op, OPF_COMPARISON)) {
        if (kd != K_BOOL) return "";
        if (ks == K_F32 || ks == K_F64) {
            if (op == OP_CMPLT) LOOP(oi[t] = !(af[t] >= bf[t]));   /* "ult", as scalar_eval */
            if (op == OP_CMPNE) LOOP(oi[t] = af[t] != bf[t]);
            if (op == OP_CMPEQ) LOOP(oi[t] = af[t] == bf[t]);
        } else if (ks == K_I32 || ks == K_I64 || ks == K_BOOL) {
            /* bools are 0 or 1: signed and unsigned order agree */
            if (op == OP_CMPLT) LOOP(oi[t] = ai[t] < bi[t]);
            if (op == OP_CMPNE) LOOP(oi[t] = ai[t] != bi[t]);
            if (op == OP_CMPEQ) LOOP(oi[t] = ai[t] == bi[t]);
        }
        return "";
    }
    if (ks != kd) return "";
    if (ks == K_F32) FLOAT_OPS(ROUND32)
    else if (ks == K_F64) FLOAT_OPS(AS_IS)
    else if (ks == K_I32) INT_OPS(wrap32)
    else if (ks == K_I64) INT_OPS((int64_t))
    else if (ks == K_BOOL) {
        if (op == OP_AND) LOOP(oi[t] = (ai[t] & bi[t]) != 0);
        if (op == OP_OR) LOOP(oi[t] = (ai[t] | bi[t]) != 0);
        if (op == OP_XOR) LOOP(oi[t] = (ai[t] ^ bi[t]) != 0);
    }
    return "";
}

static inline ScalarVal to_scalar(RefWord w, bool is_float) {
    return is_float ? (ScalarVal){w.f, 0} : (ScalarVal){0, w.i};
}

const char *ref_block_alu(const UOp *u, const RefWord *const *src, const bool *sf, RefWord *out, int64_t len,
                          unsigned char *bad) {
    return ref_block_alu_as(uop_op(u), u, src, sf, out, len, bad);
}

const char *ref_block_alu_as(Op op, const UOp *u, const RefWord *const *src, const bool *sf, RefWord *out, int64_t len,
                             unsigned char *bad) {
    int nsrc = u->nsrc < 3 ? u->nsrc : 3;
    if (op == OP_WHERE) {
        /* a float condition reads as 0, as ScalarVal's int field */
        if (sf[0]) LOOP(out[t] = src[2][t]);
        LOOP(out[t] = src[0][t].i ? src[1][t] : src[2][t]);
    }
    const DType *sdt = u->src[0]->dtype;
    Kind ks = kind_of(sdt), kd = kind_of(u->dtype);
    bool fl = ks == K_F32 || ks == K_F64;
    bool kinds_agree = true;
    for (int k = 0; k < nsrc; k++) kinds_agree = kinds_agree && sf[k] == fl;
    if (ks != K_OTHER && kd != K_OTHER && kinds_agree && nsrc <= 2) {
        const char *r = alu_fast(op, ks, kd, src[0], nsrc > 1 ? src[1] : src[0], out, len);
        if (!r) return NULL;
    }
    bool out_float = dt_is_float(u->dtype);
    const char *failed = NULL;
    for (int64_t t = 0; t < len; t++) {
        ScalarVal s[3] = {{0, 0}, {0, 0}, {0, 0}}, z = {0, 0};
        for (int k = 0; k < nsrc; k++) s[k] = to_scalar(src[k][t], sf[k]);
        const char *why = scalar_alu(op, u->dtype, sdt, u->nsrc, s, &z);
        bad[t] = why != NULL;
        if (why) failed = why;
        if (out_float) out[t].f = z.f;
        else out[t].i = z.i;
    }
    return failed;
}

void ref_block_bitcast(const DType *to, const DType *from, RefWord *x, int64_t len) {
    bool ff = dt_is_float(from), tf = dt_is_float(to);
    for (int64_t t = 0; t < len; t++) {
        unsigned char bytes[8] = {0};
        ScalarVal v = {ff ? x[t].f : 0, ff ? 0 : x[t].i};
        scalar_write(from, bytes, 0, v);
        v = scalar_read(to, bytes, 0);
        if (tf) x[t].f = v.f;
        else x[t].i = v.i;
    }
}

void ref_block_cast(const DType *to, const DType *from, RefWord *x, int64_t len) {
    bool ff = dt_is_float(from);
    double *xf = &x->f;
    int64_t *xi = &x->i;
    bool fu = dt_is_unsigned(from);
    switch (kind_of(to)) {
    case K_F32:
        /* an integer is rounded once to float, as sitofp/uitofp do */
        if (ff) for (int64_t t = 0; t < len; t++) xf[t] = (double)(float)xf[t];
        else if (fu) for (int64_t t = 0; t < len; t++) xf[t] = (double)(float)(uint64_t)xi[t];
        else for (int64_t t = 0; t < len; t++) xf[t] = (double)(float)xi[t];
        return;
    case K_F64:
        if (!ff && fu) for (int64_t t = 0; t < len; t++) xf[t] = (double)(uint64_t)xi[t];
        else if (!ff) for (int64_t t = 0; t < len; t++) xf[t] = (double)xi[t];
        return;
    case K_I32:
        if (!ff) { for (int64_t t = 0; t < len; t++) xi[t] = wrap32((uint64_t)xi[t]); return; }
        break;
    case K_I64:
        if (!ff) return;
        break;
    case K_BOOL:
        if (ff) for (int64_t t = 0; t < len; t++) xi[t] = xf[t] != 0;
        else for (int64_t t = 0; t < len; t++) xi[t] = xi[t] != 0;
        return;
    default: break;
    }
    bool tf = dt_is_float(to);
    for (int64_t t = 0; t < len; t++) {
        ScalarVal v = ff ? scalar_from_float(to, x[t].f) : fu ? scalar_from_uint(to, (uint64_t)x[t].i) : scalar_from_int(to, x[t].i);
        if (tf) x[t].f = v.f;
        else x[t].i = v.i;
    }
}

/* ---------------------------------------------------------------- reductions */

bool ref_reduce_known(Op rop) { return rop == OP_ADD || rop == OP_MUL || rop == OP_MAX; }

RefWord ref_reduce_identity(const RefReduce *rd) {
    RefWord w = {.i = 0};
    bool fl = dt_is_float(rd->dt);
    if (rd->op == OP_MAX) {
        if (fl) w.f = -INFINITY;
        else w.i = dt_min_int(rd->dt);
        return w;
    }
    int one = rd->op == OP_MUL;
    if (fl) w.f = scalar_from_float(rd->dt, one).f;
    else w.i = scalar_from_int(rd->dt, one).i;
    return w;
}

/* one step in any dtype, as scalar_eval makes the value */
static inline RefWord step(const RefReduce *rd, bool fl, RefWord acc, RefWord v) {
    if (fl) {
        double a = acc.f, x = rd->src_float ? v.f : 0.0;
        double res = rd->op == OP_ADD ? a + x : rd->op == OP_MUL ? a * x : scalar_max_float(a, x);
        acc.f = scalar_from_float(rd->dt, res).f;
    } else {
        int64_t a = acc.i, x = rd->src_float ? 0 : v.i;
        int64_t res = rd->op == OP_ADD ? (int64_t)((uint64_t)a + (uint64_t)x)
                    : rd->op == OP_MUL ? (int64_t)((uint64_t)a * (uint64_t)x)
                    : (dt_is_unsigned(rd->dt) ? ((uint64_t)x > (uint64_t)a ? x : a) : (x > a ? x : a));
        acc.i = scalar_from_int(rd->dt, res).i;
    }
    return acc;
}

#define RED_LANES(R)                                                                           \
    switch (rd->op) {                                                                          \
    case OP_ADD: for (int64_t t = 0; t < len; t++) af[t] = R(af[t] + vf[t]); return;           \
    case OP_MUL: for (int64_t t = 0; t < len; t++) af[t] = R(af[t] * vf[t]); return;           \
    default: break;                                                                            \
    }

bool ref_mul_sum_fusable(Op op, const UOp *mul, const bool *src_float, const RefReduce *rd) {
    Kind k = kind_of(mul->dtype);
    return op == OP_MUL && mul->nsrc == 2 && src_float[0] && src_float[1] && (k == K_F32 || k == K_F64) &&
           kind_of(mul->src[0]->dtype) == k && rd->op == OP_ADD && rd->src_float && kind_of(rd->dt) == K_F64;
}

/* acc[t] + R(x[t] * y[t]), with x[t] = x[0] where x is uniform (likewise y) */
#define MUL_SUM(R)                                                                                 do {                                                                                               if (x_uniform && y_uniform) {                                                                      double p = R(xf[0] * yf[0]);                                                                   for (int64_t t = 0; t < len; t++) af[t] = af[t] + p;                                       } else if (x_uniform) {                                                                            double s = xf[0];                                                                              for (int64_t t = 0; t < len; t++) af[t] = af[t] + R(s * yf[t]);                            } else if (y_uniform) {                                                                            double s = yf[0];                                                                              for (int64_t t = 0; t < len; t++) af[t] = af[t] + R(xf[t] * s);                            } else {                                                                                           for (int64_t t = 0; t < len; t++) af[t] = af[t] + R(xf[t] * yf[t]);                        }                                                                                          } while (0)

VECTOR_CLONES void ref_mul_sum_lanes(const UOp *mul, RefWord *acc, const RefWord *x, bool x_uniform,
                                     const RefWord *y, bool y_uniform, int64_t len) {
    double *restrict af = &acc->f;
    const double *xf = &x->f, *yf = &y->f;
    if (kind_of(mul->dtype) == K_F32) MUL_SUM(ROUND32);
    else MUL_SUM(AS_IS);
}

VECTOR_CLONES void ref_reduce_lanes(const RefReduce *rd, RefWord *acc, const RefWord *v, int64_t len) {
    bool fl = dt_is_float(rd->dt);
    double *restrict af = &acc->f;
    const double *restrict vf = &v->f;
    int64_t *restrict ai = &acc->i;
    const int64_t *restrict vi = &v->i;
    if (fl == rd->src_float) {
        switch (kind_of(rd->dt)) {
        case K_F32: RED_LANES(ROUND32) break;
        case K_F64: RED_LANES(AS_IS) break;
        case K_I32:
            if (rd->op == OP_ADD) { for (int64_t t = 0; t < len; t++) ai[t] = wrap32((uint64_t)ai[t] + (uint64_t)vi[t]); return; }
            break;
        case K_I64:
            if (rd->op == OP_ADD) { for (int64_t t = 0; t < len; t++) ai[t] = (int64_t)((uint64_t)ai[t] + (uint64_t)vi[t]); return; }
            break;
        default: break;
        }
    }
    for (int64_t t = 0; t < len; t++) acc[t] = step(rd, fl, acc[t], v[t]);
}

void ref_reduce_serial(const RefReduce *rd, RefWord *acc, const RefWord *v, int64_t len) {
    bool fl = dt_is_float(rd->dt);
    RefWord a = *acc;
    const double *vf = &v->f;
    if (fl == rd->src_float && rd->op == OP_ADD && kind_of(rd->dt) == K_F32) {
        for (int64_t t = 0; t < len; t++) a.f = (double)(float)(a.f + vf[t]);
    } else if (fl == rd->src_float && rd->op == OP_ADD && kind_of(rd->dt) == K_F64) {
        for (int64_t t = 0; t < len; t++) a.f = a.f + vf[t];
    } else {
        for (int64_t t = 0; t < len; t++) a = step(rd, fl, a, v[t]);
    }
    *acc = a;
}
