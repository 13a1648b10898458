/* test_llvm.c - the LLVM backend: linear programs written by hand the way
 * tinygrad's linearizer produces them for the CPU are rendered, optimised,
 * JIT-compiled and run, and the numbers are checked exactly. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "core/backend/backend.h"
#include "core/ir/uop.h"

/* ---- building linear programs ---- */

typedef struct Prog {
    UCtx *c;
    const UOp *lst[256];
    size_t n;
} Prog;

/* Appends u unless it is already in the list (nodes are hash-consed, so
 * building the same constant twice gives the same node). */
static const UOp *P(Prog *p, const UOp *u) {
    if (!u) fail_msg("node construction failed: %s", uctx_error(p->c));
    for (size_t i = 0; i < p->n; i++)
        if (p->lst[i] == u) return u;
    assert_true(p->n < 256);
    p->lst[p->n++] = u;
    return u;
}

static const UOp *glob(Prog *p, int i, ScalarKind sk, int64_t size) {
    return P(p, uop_new(p->c, OP_DEFINE_GLOBAL, dt_ptr(dt_scalar(sk), size, ADDR_GLOBAL), NULL, 0, arg_int(p->c, i)));
}
static const UOp *cint(Prog *p, ScalarKind sk, int64_t v) { return P(p, uop_const_int(p->c, dt_scalar(sk), v)); }
static const UOp *cflt(Prog *p, double v) { return P(p, uop_const_float(p->c, DT_FLOAT32, v)); }
static const UOp *rng(Prog *p, const UOp *end, int axis, AxisType at) { return P(p, uop_range(p->c, end, axis, at)); }
static const UOp *idx(Prog *p, const UOp *buf, const UOp *i) {
    const UOp *s[2] = {buf, i};
    return P(p, uop_new(p->c, OP_INDEX, buf->dtype, s, 2, NULL));
}
static const UOp *idx_gated(Prog *p, const UOp *buf, const UOp *i, const UOp *gate) {
    const UOp *s[3] = {buf, i, gate};
    return P(p, uop_new(p->c, OP_INDEX, buf->dtype, s, 3, NULL));
}
static const UOp *ld(Prog *p, const UOp *addr) {
    return P(p, uop_new(p->c, OP_LOAD, addr->dtype->base, &addr, 1, NULL));
}
static const UOp *ld_alt(Prog *p, const UOp *addr, const UOp *alt) {
    const UOp *s[2] = {addr, alt};
    return P(p, uop_new(p->c, OP_LOAD, addr->dtype->base, s, 2, NULL));
}
static const UOp *st(Prog *p, const UOp *addr, const UOp *v) {
    const UOp *s[2] = {addr, v};
    return P(p, uop_new(p->c, OP_STORE, DT_VOID, s, 2, NULL));
}
static const UOp *end(Prog *p, const UOp *v, const UOp *r) {
    const UOp *s[2] = {v, r};
    return P(p, uop_new(p->c, OP_END, DT_VOID, s, 2, NULL));
}
static const UOp *after(Prog *p, const UOp *buf, const UOp *dep) {
    const UOp *s[2] = {buf, dep};
    return P(p, uop_new(p->c, OP_AFTER, buf->dtype, s, 2, NULL));
}
static const UOp *bin(Prog *p, Op op, const UOp *a, const UOp *b) { return P(p, uop_binary(p->c, op, a, b)); }
static const UOp *un(Prog *p, Op op, const UOp *a) { return P(p, uop_unary(p->c, op, a)); }
static const UOp *cast(Prog *p, const UOp *a, ScalarKind sk) { return P(p, uop_cast(p->c, a, dt_scalar(sk))); }
static const UOp *reg(Prog *p, ScalarKind sk, int64_t size) {
    return P(p, uop_new(p->c, OP_DEFINE_REG, dt_ptr(dt_scalar(sk), size, ADDR_REG), NULL, 0, arg_int(p->c, 0)));
}
static const UOp *sink(Prog *p, const UOp *last) { return P(p, uop_sink(p->c, &last, 1)); }

static Kernel *compile_ok(Prog *p, const char *name) {
    char err[512];
    Kernel *k = kernel_compile(name, p->lst, p->n, err, sizeof err);
    if (!k) fail_msg("%s: %s", name, err);
    double r, o, j;
    kernel_compile_times(k, &r, &o, &j);
    print_message("%-14s compiled in %.2f ms (render %.2f, optimise %.2f, JIT %.2f)\n", name, kernel_compile_ms(k), r, o,
                  j);
    return k;
}

static void run_ok(Kernel *k, void **bufs, const int32_t *vars) {
    char err[256];
    if (!kernel_run(k, bufs, vars, err, sizeof err)) fail_msg("run: %s", err);
}

/* ---- elementwise c[i] = a[i] + b[i] ---- */

static void build_add(Prog *p, int64_t n) {
    const UOp *d0 = glob(p, 0, SK_FLOAT32, n), *d1 = glob(p, 1, SK_FLOAT32, n), *d2 = glob(p, 2, SK_FLOAT32, n);
    const UOp *r = rng(p, cint(p, SK_INT32, n), 0, AXIS_LOOP);
    const UOp *a = ld(p, idx(p, d1, r)), *b = ld(p, idx(p, d2, r));
    const UOp *s = bin(p, OP_ADD, a, b);
    sink(p, end(p, st(p, idx(p, d0, r), s), r));
}

static void test_elementwise_add(void **state) {
    (void)state;
    Prog p = {.c = uctx_new()};
    build_add(&p, 1000);
    Kernel *k = compile_ok(&p, "E_1000");
    assert_int_equal(kernel_num_buffers(k), 3);
    assert_ptr_equal(kernel_buffer_dtype(k, 0), DT_FLOAT32);
    assert_int_equal(kernel_buffer_size(k, 2), 1000);
    assert_int_equal(kernel_num_vars(k), 0);
    float *c = buffer_alloc(DT_FLOAT32, 1000), *a = buffer_alloc(DT_FLOAT32, 1000), *b = buffer_alloc(DT_FLOAT32, 1000);
    assert_true(((uintptr_t)a & 63) == 0);
    for (int i = 0; i < 1000; i++) a[i] = (float)i * 0.5f - 3.25f, b[i] = 1.0f / (float)(i + 1);
    void *bufs[3] = {c, a, b};
    run_ok(k, bufs, NULL);
    for (int i = 0; i < 1000; i++) {
        float want = a[i] + b[i];
        if (memcmp(&want, &c[i], sizeof want)) fail_msg("c[%d] = %.9g, expected %.9g", i, c[i], want);
    }
    buffer_free(a), buffer_free(b), buffer_free(c);
    kernel_free(k);
    uctx_free(p.c);
}

static void test_ir_and_asm(void **state) {
    (void)state;
    Prog p = {.c = uctx_new()};
    build_add(&p, 1000);
    Kernel *k = compile_ok(&p, "E_1000");
    const char *before = kernel_ir(k, false), *after_ = kernel_ir(k, true);
    assert_non_null(before);
    assert_non_null(after_);
    assert_non_null(strstr(before, "define void @E_1000(ptr %data0, ptr %data1, ptr %data2, i32 %core_id)"));
    assert_non_null(strstr(before, "fadd float"));
    assert_non_null(strstr(before, "phi i32"));
#if defined(__x86_64__) || defined(__aarch64__)
    /* after O2 for the host the loop is vectorised */
    assert_true(strstr(after_, "<4 x float>") || strstr(after_, "<8 x float>") || strstr(after_, "<16 x float>"));
#endif
    const char *as = kernel_asm(k);
    assert_non_null(as);
    assert_non_null(strstr(as, "E_1000:"));
    assert_ptr_equal(kernel_asm(k), as);   /* computed once */
    kernel_free(k);
    uctx_free(p.c);
}

/* ---- reduction: sum of 1..100 through a DEFINE_REG accumulator ---- */

static void test_reduce_sum(void **state) {
    (void)state;
    Prog p = {.c = uctx_new()};
    const UOp *d0 = glob(&p, 0, SK_FLOAT32, 1);
    const UOp *acc = reg(&p, SK_FLOAT32, 1);
    const UOp *c0 = cint(&p, SK_INT32, 0), *c1 = cint(&p, SK_INT32, 1);
    const UOp *init = st(&p, idx(&p, acc, c0), cflt(&p, 0.0));
    const UOp *r = rng(&p, cint(&p, SK_INT32, 100), 0, AXIS_REDUCE);
    const UOp *a = idx(&p, after(&p, acc, init), c0);
    const UOp *v = cast(&p, bin(&p, OP_ADD, r, c1), SK_FLOAT32);
    const UOp *upd = st(&p, a, bin(&p, OP_ADD, ld(&p, a), v));
    const UOp *e = end(&p, upd, r);
    const UOp *total = ld(&p, idx(&p, after(&p, acc, e), c0));
    sink(&p, st(&p, idx(&p, d0, c0), total));
    Kernel *k = compile_ok(&p, "r_100");
    float *out = buffer_alloc(DT_FLOAT32, 1);
    void *bufs[1] = {out};
    run_ok(k, bufs, NULL);
    assert_true(out[0] == 5050.0f);
    out[0] = -1;
    run_ok(k, bufs, NULL);   /* runs again from scratch */
    assert_true(out[0] == 5050.0f);
    buffer_free(out);
    kernel_free(k);
    uctx_free(p.c);
}

/* ---- matmul 3x3: loops i, j, k with an accumulator ---- */

static void test_matmul_3x3(void **state) {
    (void)state;
    Prog p = {.c = uctx_new()};
    const UOp *d0 = glob(&p, 0, SK_FLOAT32, 9), *d1 = glob(&p, 1, SK_FLOAT32, 9), *d2 = glob(&p, 2, SK_FLOAT32, 9);
    const UOp *acc = reg(&p, SK_FLOAT32, 1);
    const UOp *c0 = cint(&p, SK_INT32, 0), *c3 = cint(&p, SK_INT32, 3);
    const UOp *zero = cflt(&p, 0.0);
    const UOp *ri = rng(&p, c3, 0, AXIS_LOOP), *rj = rng(&p, c3, 1, AXIS_LOOP);
    const UOp *init = st(&p, idx(&p, acc, c0), zero);
    const UOp *row = bin(&p, OP_MUL, ri, c3);   /* hoisted out of the k loop, as the linearizer places it */
    const UOp *rk = rng(&p, c3, 2, AXIS_REDUCE);
    const UOp *a = ld(&p, idx(&p, d1, bin(&p, OP_ADD, row, rk)));
    const UOp *b = ld(&p, idx(&p, d2, bin(&p, OP_ADD, bin(&p, OP_MUL, rk, c3), rj)));
    const UOp *ai = idx(&p, after(&p, acc, init), c0);
    const UOp *upd = st(&p, ai, bin(&p, OP_ADD, ld(&p, ai), bin(&p, OP_MUL, a, b)));
    const UOp *ek = end(&p, upd, rk);
    const UOp *res = ld(&p, idx(&p, after(&p, acc, ek), c0));
    const UOp *out = st(&p, idx(&p, d0, bin(&p, OP_ADD, row, rj)), res);
    sink(&p, end(&p, end(&p, out, rj), ri));
    Kernel *k = compile_ok(&p, "r_3_3_3");
    float *C = buffer_alloc(DT_FLOAT32, 9), *A = buffer_alloc(DT_FLOAT32, 9), *B = buffer_alloc(DT_FLOAT32, 9);
    for (int i = 0; i < 9; i++) A[i] = (float)(i + 1), B[i] = (float)(i + 10);
    void *bufs[3] = {C, A, B};
    run_ok(k, bufs, NULL);
    const float want[9] = {84, 90, 96, 201, 216, 231, 318, 342, 366};
    for (int i = 0; i < 9; i++)
        if (C[i] != want[i]) fail_msg("C[%d] = %g, expected %g", i, C[i], want[i]);
    buffer_free(A), buffer_free(B), buffer_free(C);
    kernel_free(k);
    uctx_free(p.c);
}

/* ---- integer ops, comparisons, WHERE, casts ---- */

static void test_int_ops_and_casts(void **state) {
    (void)state;
    Prog p = {.c = uctx_new()};
    const UOp *out = glob(&p, 0, SK_INT32, 16), *in = glob(&p, 1, SK_INT32, 4), *fin = glob(&p, 2, SK_FLOAT32, 2);
    const UOp *c[16];
    for (int i = 0; i < 16; i++) c[i] = cint(&p, SK_INT32, i);
    const UOp *m7 = ld(&p, idx(&p, in, c[0])), *two = ld(&p, idx(&p, in, c[1]));
    const UOp *seven = ld(&p, idx(&p, in, c[2])), *m2 = ld(&p, idx(&p, in, c[3]));
    const UOp *f0 = ld(&p, idx(&p, fin, c[0])), *f1 = ld(&p, idx(&p, fin, c[1]));
    const UOp *zero = bin(&p, OP_SUB, two, two);
    const UOp *v[16];
    v[0] = bin(&p, OP_IDIV, m7, two);                     /* -7 / 2 = -3 */
    v[1] = bin(&p, OP_MOD, m7, two);                      /* -7 % 2 = -1 */
    v[2] = bin(&p, OP_IDIV, seven, m2);                   /* 7 / -2 = -3 */
    v[3] = bin(&p, OP_MOD, seven, m2);                    /* 7 % -2 = 1 */
    v[4] = bin(&p, OP_IDIV, m7, zero);                    /* defined as 0 */
    v[5] = cast(&p, bin(&p, OP_CMPLT, m7, two), SK_INT32); /* 1 */
    v[6] = P(&p, uop_where(p.c, bin(&p, OP_CMPNE, seven, seven), cint(&p, SK_INT32, 5), cint(&p, SK_INT32, 9)));
    v[7] = bin(&p, OP_MAX, m7, m2);                       /* -2 */
    v[8] = bin(&p, OP_SHR, m7, c[1]);                     /* arithmetic: -4 */
    v[9] = bin(&p, OP_XOR, seven, two);                   /* 5 */
    v[10] = cast(&p, f0, SK_INT32);                       /* -2.75 -> -2 */
    v[11] = cast(&p, f1, SK_INT32);                       /* 3.9 -> 3 */
    v[12] = cast(&p, cast(&p, two, SK_BOOL), SK_INT32);   /* 1 */
    v[13] = cast(&p, cast(&p, zero, SK_BOOL), SK_INT32);  /* 0 */
    const UOp *um7 = cast(&p, m7, SK_UINT32);
    v[14] = cast(&p, bin(&p, OP_IDIV, um7, cast(&p, two, SK_UINT32)), SK_INT32); /* 4294967289 / 2 */
    v[15] = un(&p, OP_NEG, m7);                           /* 7 */
    const UOp *last = NULL;
    for (int i = 0; i < 16; i++) last = st(&p, idx(&p, out, c[i]), v[i]);
    sink(&p, last);
    Kernel *k = compile_ok(&p, "E_int_ops");
    int32_t *o = buffer_alloc(DT_INT32, 16), *iv = buffer_alloc(DT_INT32, 4);
    float *fv = buffer_alloc(DT_FLOAT32, 2);
    iv[0] = -7, iv[1] = 2, iv[2] = 7, iv[3] = -2;
    fv[0] = -2.75f, fv[1] = 3.9f;
    void *bufs[3] = {o, iv, fv};
    run_ok(k, bufs, NULL);
    const int32_t want[16] = {-3, -1, -3, 1, 0, 1, 9, -2, -4, 5, -2, 3, 1, 0, 2147483644, 7};
    for (int i = 0; i < 16; i++)
        if (o[i] != want[i]) fail_msg("out[%d] = %d, expected %d", i, o[i], want[i]);
    buffer_free(o), buffer_free(iv), buffer_free(fv);
    kernel_free(k);
    uctx_free(p.c);
}

/* ---- float math: exp2, sqrt, reciprocal, trunc, where, max, fdiv ---- */

static void test_float_math(void **state) {
    (void)state;
    Prog p = {.c = uctx_new()};
    const UOp *out = glob(&p, 0, SK_FLOAT32, 8), *in = glob(&p, 1, SK_FLOAT32, 2);
    const UOp *c[8];
    for (int i = 0; i < 8; i++) c[i] = cint(&p, SK_INT32, i);
    const UOp *x = ld(&p, idx(&p, in, c[0])), *y = ld(&p, idx(&p, in, c[1]));   /* 3.0, -2.5 */
    const UOp *v[8] = {
        un(&p, OP_EXP2, x),                            /* 8 */
        un(&p, OP_SQRT, bin(&p, OP_MUL, x, x)),        /* 3 */
        un(&p, OP_RECIPROCAL, y),                      /* -0.4 */
        un(&p, OP_TRUNC, y),                           /* -2 */
        bin(&p, OP_MAX, x, y),                         /* 3 */
        bin(&p, OP_FDIV, x, y),                        /* -1.2 */
        un(&p, OP_LOG2, bin(&p, OP_MUL, x, x)),        /* log2(9) */
        P(&p, uop_where(p.c, bin(&p, OP_CMPLT, y, x), bin(&p, OP_SUB, x, y), un(&p, OP_NEG, x))), /* 5.5 */
    };
    const UOp *last = NULL;
    for (int i = 0; i < 8; i++) last = st(&p, idx(&p, out, c[i]), v[i]);
    sink(&p, last);
    Kernel *k = compile_ok(&p, "E_float_math");
    float *o = buffer_alloc(DT_FLOAT32, 8), *iv = buffer_alloc(DT_FLOAT32, 2);
    iv[0] = 3.0f, iv[1] = -2.5f;
    void *bufs[2] = {o, iv};
    run_ok(k, bufs, NULL);
    volatile float xv = 3.0f, yv = -2.5f;
    const float want[8] = {8.0f, 3.0f, 1.0f / yv, -2.0f, 3.0f, xv / yv, 0, 5.5f};
    for (int i = 0; i < 8; i++) {
        if (i == 6) continue;
        if (o[i] != want[i]) fail_msg("out[%d] = %.9g, expected %.9g", i, o[i], want[i]);
    }
    assert_true(o[6] > 3.1699f && o[6] < 3.1700f);
    buffer_free(o), buffer_free(iv);
    kernel_free(k);
    uctx_free(p.c);
}

/* ---- gated load: out[i] = i < 3 ? in[i] : -1; gated store: out2[i] = in[i] only for i < 3 ---- */

static void test_gated_load_store(void **state) {
    (void)state;
    Prog p = {.c = uctx_new()};
    const UOp *out = glob(&p, 0, SK_INT32, 6), *in = glob(&p, 1, SK_INT32, 3), *out2 = glob(&p, 2, SK_INT32, 6);
    const UOp *r = rng(&p, cint(&p, SK_INT32, 6), 0, AXIS_LOOP);
    const UOp *gate = bin(&p, OP_CMPLT, r, cint(&p, SK_INT32, 3));
    const UOp *v = ld_alt(&p, idx_gated(&p, in, r, gate), cint(&p, SK_INT32, -1));
    st(&p, idx(&p, out, r), v);
    const UOp *s2 = st(&p, idx_gated(&p, out2, r, gate), v);
    sink(&p, end(&p, s2, r));
    Kernel *k = compile_ok(&p, "E_gated");
    int32_t *o = buffer_alloc(DT_INT32, 6), *iv = buffer_alloc(DT_INT32, 3), *o2 = buffer_alloc(DT_INT32, 6);
    iv[0] = 10, iv[1] = 20, iv[2] = 30;
    for (int i = 0; i < 6; i++) o2[i] = 7;
    void *bufs[3] = {o, iv, o2};
    run_ok(k, bufs, NULL);
    const int32_t want[6] = {10, 20, 30, -1, -1, -1}, want2[6] = {10, 20, 30, 7, 7, 7};
    assert_memory_equal(o, want, sizeof want);
    assert_memory_equal(o2, want2, sizeof want2);
    buffer_free(o), buffer_free(iv), buffer_free(o2);
    kernel_free(k);
    uctx_free(p.c);
}

/* ---- float4: vector load/add/store through cast pointers, GEP and VECTORIZE ---- */

static void test_float4(void **state) {
    (void)state;
    Prog p = {.c = uctx_new()};
    const DType *f4 = dt_vec(DT_FLOAT32, 4), *f4p = dt_ptr(f4, -1, ADDR_GLOBAL);
    const UOp *d0 = glob(&p, 0, SK_FLOAT32, 16), *d1 = glob(&p, 1, SK_FLOAT32, 16), *d2 = glob(&p, 2, SK_FLOAT32, 16);
    const UOp *r = rng(&p, cint(&p, SK_INT32, 4), 0, AXIS_LOOP);
    const UOp *base = bin(&p, OP_MUL, r, cint(&p, SK_INT32, 4));
    const UOp *a = ld(&p, P(&p, uop_cast(p.c, idx(&p, d1, base), f4p)));
    const UOp *s = bin(&p, OP_ADD, a, ld(&p, P(&p, uop_cast(p.c, idx(&p, d2, base), f4p))));
    const Arg *rev_items[4] = {arg_int(p.c, 3), arg_int(p.c, 2), arg_int(p.c, 1), arg_int(p.c, 0)};
    const UOp *rev = P(&p, uop_new(p.c, OP_GEP, f4, &s, 1, arg_tuple(p.c, rev_items, 4)));
    /* VECTORIZE(GEP x 4) rebuilds the reversed vector element by element */
    const UOp *el[4];
    for (int i = 0; i < 4; i++) el[i] = P(&p, uop_new(p.c, OP_GEP, DT_FLOAT32, &rev, 1, arg_tuple(p.c, &rev_items[i], 1)));
    const UOp *vec = P(&p, uop_new(p.c, OP_VECTORIZE, f4, el, 4, NULL));
    const UOp *out = st(&p, P(&p, uop_cast(p.c, idx(&p, d0, base), f4p)), vec);
    sink(&p, end(&p, out, r));
    Kernel *k = compile_ok(&p, "E_4_4");
    assert_non_null(strstr(kernel_ir(k, false), "load <4 x float>"));
    assert_non_null(strstr(kernel_ir(k, false), "shufflevector"));
    float *c = buffer_alloc(DT_FLOAT32, 16), *a_ = buffer_alloc(DT_FLOAT32, 16), *b_ = buffer_alloc(DT_FLOAT32, 16);
    for (int i = 0; i < 16; i++) a_[i] = (float)i, b_[i] = 100.0f * (float)i;
    void *bufs[3] = {c, a_, b_};
    run_ok(k, bufs, NULL);
    /* element i of the VECTORIZE is rev[3-i] = s[i]: the elementwise sum */
    for (int i = 0; i < 16; i++)
        if (c[i] != 101.0f * (float)i) fail_msg("c[%d] = %g, expected %g", i, c[i], 101.0 * i);
    buffer_free(c), buffer_free(a_), buffer_free(b_);
    kernel_free(k);
    uctx_free(p.c);
}

/* ---- index arithmetic in int32, int64 and abstract `index` ---- */

static void build_shifted_copy(Prog *p, ScalarKind isk) {
    /* out[i] = in[(i + big) - big] for i < 4, big = 2^30 in int32 and 2^32 in the
     * 64-bit kinds (where 32-bit index math would wrap) */
    const UOp *out = glob(p, 0, SK_INT32, 4), *in = glob(p, 1, SK_INT32, 4);
    const UOp *r = rng(p, cint(p, isk, 4), 0, AXIS_LOOP);
    const UOp *big = cint(p, isk, isk == SK_INT32 ? 1 << 30 : (int64_t)1 << 32);
    const UOp *i = bin(p, OP_SUB, bin(p, OP_ADD, r, big), big);
    sink(p, end(p, st(p, idx(p, out, r), ld(p, idx(p, in, i))), r));
}

static void test_index_dtypes(void **state) {
    (void)state;
    const ScalarKind kinds[3] = {SK_INT32, SK_INT64, SK_INDEX};
    const char *names[3] = {"E_i32", "E_i64", "E_index"};
    for (int t = 0; t < 3; t++) {
        Prog p = {.c = uctx_new()};
        build_shifted_copy(&p, kinds[t]);
        Kernel *k = compile_ok(&p, names[t]);
        assert_non_null(strstr(kernel_ir(k, false), t == 0 ? "phi i32" : "phi i64"));
        int32_t *o = buffer_alloc(DT_INT32, 4), *iv = buffer_alloc(DT_INT32, 4);
        for (int i = 0; i < 4; i++) iv[i] = 7 * i - 3;
        void *bufs[2] = {o, iv};
        run_ok(k, bufs, NULL);
        assert_memory_equal(o, iv, 4 * sizeof *o);
        buffer_free(o), buffer_free(iv);
        kernel_free(k);
        uctx_free(p.c);
    }
}

/* ---- DEFINE_VAR: out[i] = 2*i for i < n ---- */

static void test_define_var(void **state) {
    (void)state;
    Prog p = {.c = uctx_new()};
    const UOp *out = glob(&p, 0, SK_INT32, 10);
    const UOp *n = P(&p, uop_var(p.c, "n", 1, 10));
    const UOp *r = rng(&p, n, 0, AXIS_LOOP);
    const UOp *v = cast(&p, bin(&p, OP_MUL, r, cint(&p, SK_INDEX, 2)), SK_INT32);
    sink(&p, end(&p, st(&p, idx(&p, out, r), v), r));
    Kernel *k = compile_ok(&p, "E_n");
    assert_int_equal(kernel_num_vars(k), 1);
    assert_string_equal(kernel_var_name(k, 0), "n");
    int64_t lo, hi;
    kernel_var_bounds(k, 0, &lo, &hi);
    assert_int_equal(lo, 1);
    assert_int_equal(hi, 10);
    assert_non_null(strstr(kernel_ir(k, false), "define void @E_n(ptr %data0, i32 %n, i32 %core_id)"));
    int32_t *o = buffer_alloc(DT_INT32, 10);
    for (int i = 0; i < 10; i++) o[i] = -1;
    void *bufs[1] = {o};
    int32_t vars[1] = {5};
    run_ok(k, bufs, vars);
    const int32_t want[10] = {0, 2, 4, 6, 8, -1, -1, -1, -1, -1};
    assert_memory_equal(o, want, sizeof want);
    char err[256];
    vars[0] = 11;
    assert_false(kernel_run(k, bufs, vars, err, sizeof err));
    assert_string_equal(err, "E_n: variable n = 11 is outside its bounds [1, 10]");
    assert_false(kernel_run(k, bufs, NULL, err, sizeof err));
    assert_string_equal(err, "E_n needs 1 variable values, got none");
    buffer_free(o);
    kernel_free(k);
    uctx_free(p.c);
}

/* ---- IF/ENDIF: only the first element is written ---- */

static void test_if_endif(void **state) {
    (void)state;
    Prog p = {.c = uctx_new()};
    const UOp *out = glob(&p, 0, SK_INT32, 4);
    const UOp *r = rng(&p, cint(&p, SK_INT32, 4), 0, AXIS_LOOP);
    const UOp *g = bin(&p, OP_CMPEQ, r, cint(&p, SK_INT32, 0));
    const UOp *ifu = P(&p, uop_new(p.c, OP_IF, DT_VOID, &g, 1, NULL));
    const UOp *s = st(&p, idx(&p, out, r), cint(&p, SK_INT32, 42));
    const UOp *eif_src[2] = {ifu, s};
    const UOp *eif = P(&p, uop_new(p.c, OP_ENDIF, DT_VOID, eif_src, 2, NULL));
    sink(&p, end(&p, eif, r));
    Kernel *k = compile_ok(&p, "E_if");
    int32_t *o = buffer_alloc(DT_INT32, 4);
    void *bufs[1] = {o};
    run_ok(k, bufs, NULL);
    const int32_t want[4] = {42, 0, 0, 0};
    assert_memory_equal(o, want, sizeof want);
    buffer_free(o);
    kernel_free(k);
    uctx_free(p.c);
}

/* ---- errors: exact messages, no crash ---- */

static void expect_error(Prog *p, const char *want) {
    char err[512];
    Kernel *k = kernel_compile("bad", p->lst, p->n, err, sizeof err);
    assert_null(k);
    assert_string_equal(err, want);
}

static void test_error_unsupported_op(void **state) {
    (void)state;
    Prog p = {.c = uctx_new()};
    const UOp *out = glob(&p, 0, SK_UINT64, 1);
    const UOp *a = cint(&p, SK_UINT64, 1);
    const UOp *s[2] = {a, a};
    const UOp *t = P(&p, uop_new(p.c, OP_THREEFRY, dt_scalar(SK_UINT64), s, 2, NULL));
    st(&p, idx(&p, out, cint(&p, SK_INT32, 0)), t);
    char want[128];
    snprintf(want, sizeof want, "THREEFRY %%%u: not supported by the LLVM backend", t->id);
    expect_error(&p, want);
    uctx_free(p.c);
}

static void test_error_missing_end(void **state) {
    (void)state;
    Prog p = {.c = uctx_new()};
    const UOp *out = glob(&p, 0, SK_INT32, 4);
    const UOp *r = rng(&p, cint(&p, SK_INT32, 4), 0, AXIS_LOOP);
    st(&p, idx(&p, out, r), cint(&p, SK_INT32, 1));
    char want[128];
    snprintf(want, sizeof want, "RANGE %%%u: has no END (the loop is never closed)", r->id);
    expect_error(&p, want);
    uctx_free(p.c);
}

static void test_error_not_linear(void **state) {
    (void)state;
    Prog p = {.c = uctx_new()};
    const UOp *out = glob(&p, 0, SK_FLOAT32, 1), *in = glob(&p, 1, SK_FLOAT32, 1);
    const UOp *c0 = cint(&p, SK_INT32, 0);
    const UOp *ix = uop_new(p.c, OP_INDEX, in->dtype, (const UOp *[]){in, c0}, 2, NULL);
    const UOp *l = uop_new(p.c, OP_LOAD, DT_FLOAT32, &ix, 1, NULL);
    const UOp *sum = bin(&p, OP_ADD, l, l);   /* uses the LOAD before it is defined */
    P(&p, ix), P(&p, l);
    st(&p, idx(&p, out, c0), sum);
    char want[320];
    snprintf(want, sizeof want,
             "ADD %%%u: source 0 is LOAD %%%u, which does not come before it in the program (not a linear program?)",
             sum->id, l->id);
    expect_error(&p, want);
    uctx_free(p.c);
}

static void test_error_misc(void **state) {
    (void)state;
    /* END of a loop that is not the innermost */
    Prog p = {.c = uctx_new()};
    const UOp *out = glob(&p, 0, SK_INT32, 4);
    const UOp *r0 = rng(&p, cint(&p, SK_INT32, 2), 0, AXIS_LOOP), *r1 = rng(&p, cint(&p, SK_INT32, 2), 1, AXIS_LOOP);
    const UOp *s = st(&p, idx(&p, out, bin(&p, OP_ADD, r0, r1)), cint(&p, SK_INT32, 1));
    const UOp *e = end(&p, s, r0);
    char want[320];
    snprintf(want, sizeof want, "END %%%u: the innermost open loop is RANGE %%%u, which this END does not end", e->id,
             r1->id);
    expect_error(&p, want);
    uctx_free(p.c);

    /* a tensor-graph op */
    p = (Prog){.c = uctx_new()};
    const UOp *c = cint(&p, SK_INT32, 3);
    const UOp *cont = P(&p, uop_new(p.c, OP_CONTIGUOUS, DT_INT32, &c, 1, NULL));
    snprintf(want, sizeof want,
             "CONTIGUOUS %%%u: not supported by the LLVM backend: it must be lowered by the codegen stages before rendering",
             cont->id);
    expect_error(&p, want);
    uctx_free(p.c);

    /* the Invalid marker used as a value, a duplicate entry, an empty program */
    p = (Prog){.c = uctx_new()};
    const UOp *iout = glob(&p, 0, SK_INT32, 4);
    const UOp *inv = P(&p, uop_const_arg(p.c, DT_INT32, arg_invalid(p.c)));
    const UOp *ist = st(&p, idx(&p, iout, cint(&p, SK_INT32, 0)), inv);
    snprintf(want, sizeof want,
             "STORE %%%u: source 1, CONST %%%u, is Invalid (where a condition fails), which has no value: only an INDEX "
             "takes it, as its index; stage 15 (lower index dtype) makes the condition a gate", ist->id, inv->id);
    expect_error(&p, want);
    uctx_free(p.c);

    p = (Prog){.c = uctx_new()};
    const UOp *g = glob(&p, 0, SK_INT32, 4);
    p.lst[p.n++] = g;
    snprintf(want, sizeof want, "DEFINE_GLOBAL %%%u: appears twice in the program (entries must be unique)", g->id);
    expect_error(&p, want);
    uctx_free(p.c);

    /* mismatched dtypes in an unchecked node (as the text parser builds them) */
    p = (Prog){.c = uctx_new()};
    const UOp *i3 = cint(&p, SK_INT32, 3), *f3 = cflt(&p, 3.0);
    const UOp *mixed = P(&p, uop_intern(p.c, OP_ADD, DT_INT32, (const UOp *[]){i3, f3}, 2, NULL, NULL));
    snprintf(want, sizeof want, "ADD %%%u: sources 0 and 1 have different dtypes, int32 and float32", mixed->id);
    expect_error(&p, want);
    uctx_free(p.c);

    char err[128];
    Kernel *k = kernel_compile("empty", NULL, 0, err, sizeof err);
    assert_non_null(k);   /* an empty program is a kernel that does nothing */
    assert_true(kernel_run(k, NULL, NULL, err, sizeof err));
    kernel_free(k);
}


/* ---- more ops: MULACC, POW, SIN, BITCAST, VCONST, SHL, uint64, bool logic, half ---- */

static void test_more_ops(void **state) {
    (void)state;
    Prog p = {.c = uctx_new()};
    const UOp *fo = glob(&p, 0, SK_FLOAT32, 8), *io = glob(&p, 1, SK_INT32, 8), *uo = glob(&p, 2, SK_UINT64, 2);
    const UOp *fin = glob(&p, 3, SK_FLOAT32, 2);
    const UOp *c[8];
    for (int i = 0; i < 8; i++) c[i] = cint(&p, SK_INT32, i);
    const UOp *x = ld(&p, idx(&p, fin, c[0])), *y = ld(&p, idx(&p, fin, c[1]));   /* 2.0, 0.0 */
    const UOp *ma_src[3] = {x, x, y};
    const UOp *fv[8] = {
        P(&p, uop_new(p.c, OP_MULACC, DT_FLOAT32, ma_src, 3, NULL)),             /* 4 */
        bin(&p, OP_POW, x, cflt(&p, 10.0)),                                      /* 1024 */
        un(&p, OP_SIN, y),                                                       /* 0 */
        P(&p, uop_new(p.c, OP_BITCAST, DT_FLOAT32, (const UOp *[]){cint(&p, SK_INT32, 0x3f800000)}, 1, NULL)), /* 1 */
        cast(&p, cast(&p, bin(&p, OP_ADD, x, cflt(&p, -0.5)), SK_FLOAT16), SK_FLOAT32),  /* 1.5 through half */
        cast(&p, cast(&p, x, SK_FLOAT64), SK_FLOAT32),                          /* 2 through double */
        cast(&p, bin(&p, OP_CMPNE, bin(&p, OP_FDIV, y, y), bin(&p, OP_FDIV, y, y)), SK_FLOAT32), /* NaN != NaN: 1 */
        cast(&p, bin(&p, OP_CMPLT, bin(&p, OP_FDIV, y, y), x), SK_FLOAT32),     /* NaN < 2: 1 (ult, as tinygrad) */
    };
    const DType *i4 = dt_vec(DT_INT32, 4);
    const Arg *vc_items[4] = {arg_int(p.c, 1), arg_int(p.c, 2), arg_int(p.c, 3), arg_int(p.c, 4)};
    const UOp *vc = P(&p, uop_new(p.c, OP_VCONST, i4, NULL, 0, arg_tuple(p.c, vc_items, 4)));
    const UOp *vx = cast(&p, x, SK_INT32);                                       /* 2 */
    const UOp *vx4 = P(&p, uop_new(p.c, OP_VECTORIZE, i4, (const UOp *[]){vx, vx, vx, vx}, 4, NULL));
    const UOp *prod4 = bin(&p, OP_MUL, vc, vx4);                                 /* 2 4 6 8 */
    const Arg *g2 = arg_int(p.c, 2);
    const UOp *t = cast(&p, bin(&p, OP_CMPEQ, vx, c[2]), SK_BOOL);
    const UOp *f = bin(&p, OP_CMPEQ, vx, c[3]);
    const UOp *iv[8] = {
        bin(&p, OP_SHL, vx, c[3]),                                               /* 16 */
        P(&p, uop_new(p.c, OP_GEP, DT_INT32, &prod4, 1, arg_tuple(p.c, &g2, 1))), /* 6 */
        cast(&p, bin(&p, OP_AND, t, f), SK_INT32),                               /* 0 */
        cast(&p, bin(&p, OP_OR, t, f), SK_INT32),                                /* 1 */
        cast(&p, bin(&p, OP_XOR, t, t), SK_INT32),                               /* 0 */
        cast(&p, un(&p, OP_NEG, t), SK_INT32),                                   /* bool NEG is not: 0 */
        bin(&p, OP_MOD, cint(&p, SK_INT32, INT32_MIN), cint(&p, SK_INT32, -1)),  /* 0 */
        cast(&p, cast(&p, cint(&p, SK_INT32, 300), SK_UINT8), SK_INT32),         /* 44 */
    };
    const UOp *big = cast(&p, vx, SK_UINT64);
    const UOp *uv[2] = {
        bin(&p, OP_SHL, big, cint(&p, SK_UINT64, 62)),                          /* 2^63 */
        bin(&p, OP_SHR, bin(&p, OP_SHL, big, cint(&p, SK_UINT64, 62)), cint(&p, SK_UINT64, 63)), /* logical: 1 */
    };
    const UOp *last = NULL;
    for (int i = 0; i < 8; i++) st(&p, idx(&p, fo, c[i]), fv[i]);
    for (int i = 0; i < 8; i++) st(&p, idx(&p, io, c[i]), iv[i]);
    for (int i = 0; i < 2; i++) last = st(&p, idx(&p, uo, c[i]), uv[i]);
    sink(&p, last);
    Kernel *k = compile_ok(&p, "E_more_ops");
    float *F = buffer_alloc(DT_FLOAT32, 8), *in = buffer_alloc(DT_FLOAT32, 2);
    int32_t *I = buffer_alloc(DT_INT32, 8);
    uint64_t *U = buffer_alloc(dt_scalar(SK_UINT64), 2);
    in[0] = 2.0f, in[1] = 0.0f;
    void *bufs[4] = {F, I, U, in};
    run_ok(k, bufs, NULL);
    const float fw[8] = {4, 1024, 0, 1, 1.5f, 2, 1, 1};
    for (int i = 0; i < 8; i++)
        if (F[i] != fw[i]) fail_msg("float out[%d] = %.9g, expected %.9g", i, F[i], fw[i]);
    const int32_t iw[8] = {16, 6, 0, 1, 0, 0, 0, 44};
    for (int i = 0; i < 8; i++)
        if (I[i] != iw[i]) fail_msg("int out[%d] = %d, expected %d", i, I[i], iw[i]);
    assert_true(U[0] == (uint64_t)1 << 63);
    assert_true(U[1] == 1);
    buffer_free(F), buffer_free(in), buffer_free(I), buffer_free(U);
    kernel_free(k);
    uctx_free(p.c);
}

/* ---- SPECIAL is the core_id argument; DEFINE_LOCAL is a stack array ---- */

static void test_special_core_id_and_local(void **state) {
    (void)state;
    Prog p = {.c = uctx_new()};
    const UOp *out = glob(&p, 0, SK_INT32, 4);
    const UOp *loc = P(&p, uop_new(p.c, OP_DEFINE_LOCAL, dt_ptr(DT_INT32, 4, ADDR_LOCAL), NULL, 0, arg_str(p.c, "temp")));
    const UOp *four = cint(&p, SK_INT32, 4);
    const UOp *core = P(&p, uop_new(p.c, OP_SPECIAL, DT_INT32, &four, 1, arg_str(p.c, "gidx0")));
    const UOp *c0 = cint(&p, SK_INT32, 0);
    const UOp *s = st(&p, idx(&p, loc, c0), bin(&p, OP_MUL, core, cint(&p, SK_INT32, 10)));
    const UOp *v = ld(&p, idx(&p, after(&p, loc, s), c0));
    sink(&p, st(&p, idx(&p, out, core), v));
    Kernel *k = compile_ok(&p, "E_core");
    int32_t *o = buffer_alloc(DT_INT32, 4);
    void *bufs[1] = {o};
    char err[256];
    for (int core_id = 0; core_id < 4; core_id++)
        if (!kernel_run_core(k, bufs, NULL, core_id, err, sizeof err)) fail_msg("%s", err);
    const int32_t want[4] = {0, 10, 20, 30};
    assert_memory_equal(o, want, sizeof want);
    bufs[0] = NULL;
    assert_false(kernel_run(k, bufs, NULL, err, sizeof err));
    assert_string_equal(err, "E_core: buffer 0 (data0) is missing");
    buffer_free(o);
    kernel_free(k);
    uctx_free(p.c);
}

/* ---- a kernel split over 4 cores: each core_id writes its own quarter ---- */

static void test_parallel_cores(void **state) {
    (void)state;
    Prog p = {.c = uctx_new()};
    const UOp *out = glob(&p, 0, SK_INT32, 400);
    const UOp *four = cint(&p, SK_INT32, 4);
    const UOp *core = P(&p, uop_new(p.c, OP_SPECIAL, DT_INT32, &four, 1, arg_str(p.c, "gidx0")));
    const UOp *r = rng(&p, cint(&p, SK_INT32, 100), 0, AXIS_LOOP);
    const UOp *i = bin(&p, OP_ADD, bin(&p, OP_MUL, core, cint(&p, SK_INT32, 100)), r);
    end(&p, st(&p, idx(&p, out, i), bin(&p, OP_MUL, i, cint(&p, SK_INT32, 3))), r);
    Kernel *k = compile_ok(&p, "E_4_100");
    assert_int_equal(kernel_threads(k), 4);
    int32_t *o = buffer_alloc(DT_INT32, 400);
    void *bufs[1] = {o};
    char err[256];
    if (!kernel_run_parallel(k, bufs, NULL, err, sizeof err)) fail_msg("%s", err);
    for (int e = 0; e < 400; e++) assert_int_equal(o[e], 3 * e);
    bufs[0] = NULL;
    assert_false(kernel_run_parallel(k, bufs, NULL, err, sizeof err));
    assert_string_equal(err, "E_4_100: buffer 0 (data0) is missing");
    buffer_free(o);
    kernel_free(k);
    uctx_free(p.c);
}

/* ---- LLVM's verifier: a loop value used after its loop ---- */

static void test_error_verifier(void **state) {
    (void)state;
    Prog p = {.c = uctx_new()};
    const UOp *out = glob(&p, 0, SK_INT32, 4);
    const UOp *r = rng(&p, cint(&p, SK_INT32, 4), 0, AXIS_LOOP);
    const UOp *twice = bin(&p, OP_ADD, r, r);
    const UOp *e = end(&p, st(&p, idx(&p, out, r), twice), r);
    sink(&p, st(&p, idx(&p, out, cint(&p, SK_INT32, 0)), twice));
    (void)e;
    char err[512];
    Kernel *k = kernel_compile("bad", p.lst, p.n, err, sizeof err);
    assert_null(k);
    assert_true(strncmp(err, "LLVM rejected the rendered module: Instruction does not dominate all uses!", 74) == 0);
    uctx_free(p.c);
}

static void test_buffers(void **state) {
    (void)state;
    assert_int_equal(buffer_bytes(DT_FLOAT32, 10), 40);
    assert_int_equal(buffer_bytes(dt_vec(DT_FLOAT32, 4), 2), 32);
    assert_int_equal(buffer_bytes(DT_FLOAT32, -1), -1);
    assert_int_equal(buffer_bytes(DT_INT64, INT64_MAX / 4), -1);
    assert_null(buffer_alloc(DT_INT64, INT64_MAX / 4));
    unsigned char *b = buffer_alloc(DT_INT32, 0);
    assert_non_null(b);
    assert_true(((uintptr_t)b & 63) == 0);
    buffer_free(b);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_elementwise_add),
        cmocka_unit_test(test_ir_and_asm),
        cmocka_unit_test(test_reduce_sum),
        cmocka_unit_test(test_matmul_3x3),
        cmocka_unit_test(test_int_ops_and_casts),
        cmocka_unit_test(test_float_math),
        cmocka_unit_test(test_gated_load_store),
        cmocka_unit_test(test_float4),
        cmocka_unit_test(test_index_dtypes),
        cmocka_unit_test(test_define_var),
        cmocka_unit_test(test_if_endif),
        cmocka_unit_test(test_error_unsupported_op),
        cmocka_unit_test(test_error_missing_end),
        cmocka_unit_test(test_error_not_linear),
        cmocka_unit_test(test_error_misc),
        cmocka_unit_test(test_more_ops),
        cmocka_unit_test(test_special_core_id_and_local),
        cmocka_unit_test(test_parallel_cores),
        cmocka_unit_test(test_error_verifier),
        cmocka_unit_test(test_buffers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
