/* test_checked_run.c - kernels compiled with bounds checks: in-range
 * kernels give the same results checked and unchecked; an access outside
 * its buffer (past the end, before the start, a vector running over, a
 * register, inside a true gate) stops the kernel before it touches memory,
 * with a report naming the INDEX, the buffer, the offset, the size and the
 * loop counters, in the very words the linear interpreter uses for the
 * same program; a false gate is not checked; on a kernel split over cores
 * the lowest failing core_id is reported; the pipeline caches the checked
 * kernel next to the plain one; vectors of pointers and value INDEXes
 * (the forms before stage 14) load and store a lane at a time, each lane
 * checked, and an index Invalid where a condition fails (before stage 15)
 * gates its lanes.  Kernels with a bad access are only ever
 * run checked here. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/debug/pipeline.h"
#include "core/rewrite/registry.h"
#include "viz/tinygrad_repr.h"
#include "linear_prog.h"
#include "test_files.h"

/* ---- a 3x3 matmul whose A and B offsets are shifted ---- */

typedef struct Matmul {
    const UOp *ia, *ib, *iout;   /* the INDEXes of A, B and the output */
    const UOp *ranges[3];
} Matmul;

static Matmul build_matmul(Prog *p, int64_t shift_a, int64_t shift_b) {
    Matmul m;
    const UOp *d0 = glob(p, 0, SK_FLOAT32, 9), *d1 = glob(p, 1, SK_FLOAT32, 9), *d2 = glob(p, 2, SK_FLOAT32, 9);
    const UOp *acc = reg(p, SK_FLOAT32, 1);
    const UOp *c0 = cint(p, SK_INT32, 0), *c3 = cint(p, SK_INT32, 3);
    const UOp *ri = rng(p, c3, 0, AXIS_LOOP), *rj = rng(p, c3, 1, AXIS_LOOP);
    const UOp *init = st(p, idx(p, acc, c0), cflt(p, 0.0));
    const UOp *row = bin(p, OP_MUL, ri, c3);
    const UOp *rk = rng(p, c3, 2, AXIS_REDUCE);
    const UOp *oa = bin(p, OP_ADD, row, rk), *ob = bin(p, OP_ADD, bin(p, OP_MUL, rk, c3), rj);
    if (shift_a) oa = bin(p, OP_ADD, oa, cint(p, SK_INT32, shift_a));
    if (shift_b) ob = bin(p, OP_ADD, ob, cint(p, SK_INT32, shift_b));
    m.ia = idx(p, d1, oa);
    m.ib = idx(p, d2, ob);
    const UOp *a = ld(p, m.ia), *b = ld(p, m.ib);
    const UOp *ai = idx(p, after(p, acc, init), c0);
    const UOp *upd = st(p, ai, bin(p, OP_ADD, ld(p, ai), bin(p, OP_MUL, a, b)));
    const UOp *res = ld(p, idx(p, after(p, acc, end(p, upd, rk)), c0));
    m.iout = idx(p, d0, bin(p, OP_ADD, row, rj));
    sink(p, end(p, end(p, st(p, m.iout, res), rj), ri));
    m.ranges[0] = ri, m.ranges[1] = rj, m.ranges[2] = rk;
    return m;
}

static const float want_matmul[9] = {84, 90, 96, 201, 216, 231, 318, 342, 366};

static void fill_ab(float *A, float *B) {
    for (int i = 0; i < 9; i++) A[i] = (float)(i + 1), B[i] = (float)(i + 10);
}

static void test_in_range_same_results(void **state) {
    (void)state;
    Prog p = {.c = uctx_new()};
    build_matmul(&p, 0, 0);
    Kernel *plain = compile_prog(&p, "r_3_3_3", false), *checked = compile_prog(&p, "r_3_3_3", true);
    assert_false(kernel_is_checked(plain));
    assert_true(kernel_is_checked(checked));
    assert_null(strstr(kernel_ir(plain, false), "out_of_bounds"));
    assert_non_null(strstr(kernel_ir(checked, false), "out_of_bounds"));
    assert_non_null(strstr(kernel_ir(checked, false), "ptr %report"));
    float C1[9], C2[9], A[9], B[9];
    fill_ab(A, B);
    void *b1[3] = {C1, A, B}, *b2[3] = {C2, A, B};
    char err[512];
    assert_true(kernel_run(plain, b1, NULL, err, sizeof err));
    AccessFault rep;
    if (!kernel_run_checked(checked, b2, NULL, &rep, err, sizeof err)) fail_msg("%s", err);
    assert_false(rep.failed);
    assert_memory_equal(C1, want_matmul, sizeof C1);
    assert_memory_equal(C2, C1, sizeof C1);
    /* kernel_run and kernel_run_parallel run checked kernels too */
    memset(C2, 0, sizeof C2);
    assert_true(kernel_run(checked, b2, NULL, err, sizeof err));
    assert_memory_equal(C2, want_matmul, sizeof C2);
    kernel_free(plain);
    kernel_free(checked);
    uctx_free(p.c);
}

static void test_read_past_the_end(void **state) {
    (void)state;
    Prog p = {.c = uctx_new()};
    Matmul m = build_matmul(&p, 3, 0);   /* A[3i + k + 3]: 9 at i=2, k=0 */
    Kernel *k = compile_prog(&p, "r_3_3_3", true);
    float C[9], A[9], B[9];
    fill_ab(A, B);
    for (int i = 0; i < 9; i++) C[i] = -1;
    void *bufs[3] = {C, A, B};
    AccessFault rep;
    char err[512], want[512];
    assert_false(kernel_run_checked(k, bufs, NULL, &rep, err, sizeof err));
    snprintf(want, sizeof want, "INDEX %%%u reads buffer 1 at 9, past its 9 elements (r0=2, r1=0, r2=0)", m.ia->id);
    assert_string_equal(err, want);
    interp_fails_with(&p, bufs, 3, want);
    assert_true(rep.failed);
    assert_false(rep.store);
    assert_int_equal(rep.index_id, m.ia->id);
    assert_int_equal(rep.buffer_op, OP_DEFINE_GLOBAL);
    assert_int_equal(rep.buffer, 1);
    assert_int_equal(rep.index, 9);
    assert_int_equal(rep.size, 9);
    assert_int_equal(rep.width, 1);
    assert_int_equal(rep.core_id, 0);
    assert_int_equal(rep.nranges, 3);
    for (int i = 0; i < 3; i++) assert_int_equal(rep.range_id[i], m.ranges[i]->id);
    assert_string_equal(rep.range_name[2], "r2");
    assert_int_equal(rep.range_value[0], 2);
    assert_int_equal(rep.range_value[1], 0);
    assert_int_equal(rep.range_value[2], 0);
    /* the kernel stopped there: rows 0 and 1 are written (shifted by a row), row 2 is not */
    for (int i = 0; i < 6; i++) assert_true(C[i] == want_matmul[i + 3]);
    for (int i = 6; i < 9; i++) assert_true(C[i] == -1);
    /* kernel_run gives the same message */
    assert_false(kernel_run(k, bufs, NULL, err, sizeof err));
    assert_string_equal(err, want);
    /* with a program buffer's name */
    access_fault_message(&rep, "input0", err, sizeof err);
    assert_non_null(strstr(err, "reads buffer 1 (input0) at 9"));
    kernel_free(k);
    uctx_free(p.c);
}

static void test_read_before_the_start(void **state) {
    (void)state;
    Prog p = {.c = uctx_new()};
    Matmul m = build_matmul(&p, 0, -1);   /* B[3k + j - 1]: -1 at the first access */
    Kernel *k = compile_prog(&p, "r_3_3_3", true);
    float C[9], A[9], B[9];
    fill_ab(A, B);
    void *bufs[3] = {C, A, B};
    char err[512], want[512];
    assert_false(kernel_run(k, bufs, NULL, err, sizeof err));
    snprintf(want, sizeof want, "INDEX %%%u reads buffer 2 at -1, before the start of its 9 elements (%s)", m.ib->id,
             "r0=0, r1=0, r2=0");
    assert_string_equal(err, want);
    interp_fails_with(&p, bufs, 3, want);
    kernel_free(k);
    uctx_free(p.c);
}

/* out[r + 1] = r for r < 9 on a buffer of 9: the store at 9 does not happen */
static void test_store_does_not_touch_memory(void **state) {
    (void)state;
    Prog p = {.c = uctx_new()};
    const UOp *out = glob(&p, 0, SK_INT32, 9);
    const UOp *r = rng(&p, cint(&p, SK_INT32, 9), 0, AXIS_LOOP);
    const UOp *ix = idx(&p, out, bin(&p, OP_ADD, r, cint(&p, SK_INT32, 1)));
    sink(&p, end(&p, st(&p, ix, r), r));
    Kernel *k = compile_prog(&p, "E_9", true);
    int32_t *o = buffer_alloc(DT_INT32, 16);   /* room past the declared 9, to see nothing lands there */
    for (int i = 0; i < 16; i++) o[i] = -7;
    void *bufs[1] = {o};
    char err[512], want[512];
    assert_false(kernel_run(k, bufs, NULL, err, sizeof err));
    snprintf(want, sizeof want, "INDEX %%%u writes buffer 0 at 9, past its 9 elements (r0=8)", ix->id);
    assert_string_equal(err, want);
    interp_fails_with(&p, bufs, 1, want);
    assert_int_equal(o[0], -7);
    for (int i = 1; i < 9; i++) assert_int_equal(o[i], i - 1);
    for (int i = 9; i < 16; i++) assert_int_equal(o[i], -7);
    buffer_free(o);
    kernel_free(k);
    uctx_free(p.c);
}

/* in[r + 5] gated by r < lim, on a buffer of 9: a false gate is not checked */
static void test_gates(void **state) {
    (void)state;
    for (int lim = 4; lim <= 5; lim++) {
        Prog p = {.c = uctx_new()};
        const UOp *out = glob(&p, 0, SK_INT32, 9), *in = glob(&p, 1, SK_INT32, 9);
        const UOp *r = rng(&p, cint(&p, SK_INT32, 9), 0, AXIS_LOOP);
        const UOp *gate = bin(&p, OP_CMPLT, r, cint(&p, SK_INT32, lim));
        const UOp *ix = idx_gated(&p, in, bin(&p, OP_ADD, r, cint(&p, SK_INT32, 5)), gate);
        sink(&p, end(&p, st(&p, idx(&p, out, r), ld_alt(&p, ix, cint(&p, SK_INT32, -1))), r));
        Kernel *k = compile_prog(&p, "E_gated", true);
        int32_t o[9], iv[9];
        for (int i = 0; i < 9; i++) iv[i] = 10 * i;
        void *bufs[2] = {o, iv};
        char err[512], want[512];
        if (lim == 4) {
            if (!kernel_run(k, bufs, NULL, err, sizeof err)) fail_msg("%s", err);
            const int32_t w[9] = {50, 60, 70, 80, -1, -1, -1, -1, -1};
            assert_memory_equal(o, w, sizeof w);
        } else {
            assert_false(kernel_run(k, bufs, NULL, err, sizeof err));
            snprintf(want, sizeof want, "INDEX %%%u reads buffer 1 at 9, past its 9 elements (r0=4)", ix->id);
            assert_string_equal(err, want);
            interp_fails_with(&p, bufs, 2, want);
        }
        kernel_free(k);
        uctx_free(p.c);
    }
}

/* a DEFINE_REG of 2 written at r < 3; a float4 load at 4r from a buffer of 10 */
static void test_register_and_vector(void **state) {
    (void)state;
    Prog p = {.c = uctx_new()};
    const UOp *out = glob(&p, 0, SK_INT32, 3);
    const UOp *acc = reg(&p, SK_INT32, 2);
    const UOp *r = rng(&p, cint(&p, SK_INT32, 3), 0, AXIS_LOOP);
    const UOp *ix = idx(&p, acc, r);
    const UOp *s = st(&p, ix, r);
    sink(&p, end(&p, st(&p, idx(&p, out, r), ld(&p, idx(&p, after(&p, acc, s), r))), r));
    Kernel *k = compile_prog(&p, "E_reg", true);
    int32_t o[3];
    void *bufs[1] = {o};
    char err[512], want[512];
    assert_false(kernel_run(k, bufs, NULL, err, sizeof err));
    snprintf(want, sizeof want, "INDEX %%%u writes DEFINE_REG %%%u at 2, past its 2 elements (r0=2)", ix->id, acc->id);
    assert_string_equal(err, want);
    interp_fails_with(&p, bufs, 1, want);
    kernel_free(k);
    uctx_free(p.c);

    p = (Prog){.c = uctx_new()};
    const DType *f4 = dt_vec(DT_FLOAT32, 4), *f4p = dt_ptr(f4, -1, ADDR_GLOBAL);
    const UOp *d0 = glob(&p, 0, SK_FLOAT32, 12), *d1 = glob(&p, 1, SK_FLOAT32, 10);
    r = rng(&p, cint(&p, SK_INT32, 3), 0, AXIS_LOOP);
    const UOp *base = bin(&p, OP_MUL, r, cint(&p, SK_INT32, 4));
    ix = idx(&p, d1, base);
    const UOp *v = ld(&p, P(&p, uop_cast(p.c, ix, f4p)));
    sink(&p, end(&p, st(&p, P(&p, uop_cast(p.c, idx(&p, d0, base), f4p)), v), r));
    k = compile_prog(&p, "E_3_4", true);
    float *fo = buffer_alloc(DT_FLOAT32, 12), *fi = buffer_alloc(DT_FLOAT32, 12);
    void *fb[2] = {fo, fi};
    assert_false(kernel_run(k, fb, NULL, err, sizeof err));
    snprintf(want, sizeof want, "INDEX %%%u reads 4 elements of buffer 1 at 8, past its 10 elements (r0=2)", ix->id);
    assert_string_equal(err, want);
    interp_fails_with(&p, fb, 2, want);
    buffer_free(fo), buffer_free(fi);
    kernel_free(k);
    uctx_free(p.c);
}

/* out[100 core + r] on a buffer of 250: cores 2 (at r=50) and 3 (at r=0) fail, core 2 is reported */
static void test_cores(void **state) {
    (void)state;
    Prog p = {.c = uctx_new()};
    const UOp *out = glob(&p, 0, SK_INT32, 250);
    const UOp *core = special(&p, 4);
    const UOp *r = rng(&p, cint(&p, SK_INT32, 100), 0, AXIS_LOOP);
    const UOp *i = bin(&p, OP_ADD, bin(&p, OP_MUL, core, cint(&p, SK_INT32, 100)), r);
    const UOp *ix = idx(&p, out, i);
    sink(&p, end(&p, st(&p, ix, i), r));
    Kernel *k = compile_prog(&p, "E_4_100", true);
    assert_int_equal(kernel_threads(k), 4);
    int32_t *o = buffer_alloc(DT_INT32, 400);
    void *bufs[1] = {o};
    char err[512], want[512];
    AccessFault rep;
    for (int run = 0; run < 5; run++) {   /* whatever the threads' timing */
        assert_false(kernel_run_checked(k, bufs, NULL, &rep, err, sizeof err));
        /* the core named by its SPECIAL, as the graph shows it */
        snprintf(want, sizeof want, "INDEX %%%u writes buffer 0 at 250, past its 250 elements (gidx0=2, r0=50)", ix->id);
        assert_string_equal(err, want);
        assert_int_equal(rep.core_id, 2);
        assert_int_equal(rep.threads, 4);
        assert_int_equal(rep.nranges, 2);
        assert_int_equal(rep.range_id[0], core->id);
        if (run == 0) interp_fails_with(&p, bufs, 1, want);
        assert_false(kernel_run_parallel(k, bufs, NULL, err, sizeof err));
        assert_string_equal(err, want);
    }
    for (int e = 0; e < 250; e++) assert_int_equal(o[e], e);
    for (int e = 250; e < 400; e++) assert_int_equal(o[e], 0);
    buffer_free(o);
    kernel_free(k);
    uctx_free(p.c);
}

/* ---- through the pipeline: the golden matmul AST ---- */

#include "golden_matmul_fixture.h"

static void run_matmul(Kernel *k, float *out, char *err, size_t errlen, bool expect_ok) {
    float a[9], b[9];
    fill_ab(a, b);
    void *bufs[3] = {out, a, b};
    assert_int_equal(kernel_run(k, bufs, NULL, err, errlen), expect_ok);
}

/* ---- vectors of pointers and value INDEXes (the forms before stage 14) ---- */

/* out[0..4) = in[lanes] through a vector of 4 pointers; value: the INDEX
 * of in loads itself and the STORE goes through a value INDEX of out */
static void build_gather_gated(Prog *p, const int64_t lanes[4], bool value, const bool *valid);
static void build_gather(Prog *p, const int64_t lanes[4], bool value) { build_gather_gated(p, lanes, value, NULL); }

/* with valid: lane l's index is valid[l].where(lanes[l], Invalid), the form
 * before stage 15: a lane whose condition fails loads 0 and is not checked */
static void build_gather_gated(Prog *p, const int64_t lanes[4], bool value, const bool *valid) {
    const UOp *out = glob(p, 0, SK_FLOAT32, 4), *in = glob(p, 1, SK_FLOAT32, 8);
    const UOp *vin_s[4] = {in, in, in, in}, *vout_s[4] = {out, out, out, out}, *ix[4], *ox[4];
    for (int l = 0; l < 4; l++) ix[l] = cint(p, SK_INT32, lanes[l]), ox[l] = cint(p, SK_INT32, l);
    const DType *i4 = dt_vec(DT_INT32, 4), *f4 = dt_vec(DT_FLOAT32, 4);
    const UOp *pin = P(p, uop_new(p->c, OP_VECTORIZE, dt_ptr_vec(in->dtype, 4), vin_s, 4, NULL));
    const UOp *pout = P(p, uop_new(p->c, OP_VECTORIZE, dt_ptr_vec(out->dtype, 4), vout_s, 4, NULL));
    const UOp *iv = P(p, uop_new(p->c, OP_VECTORIZE, i4, ix, 4, NULL)), *ov = P(p, uop_new(p->c, OP_VECTORIZE, i4, ox, 4, NULL));
    if (valid) {
        const UOp *vb[4], *inv = uop_const_arg(p->c, DT_INT32, arg_invalid(p->c));
        for (int l = 0; l < 4; l++) vb[l] = P(p, uop_const_bool(p->c, valid[l]));
        const UOp *invs[4] = {inv, inv, inv, inv};
        const UOp *w[3] = {P(p, uop_new(p->c, OP_VECTORIZE, dt_vec(DT_BOOL, 4), vb, 4, NULL)), iv,
                           P(p, uop_new(p->c, OP_VECTORIZE, i4, invs, 4, NULL))};
        iv = P(p, uop_new(p->c, OP_WHERE, i4, w, 3, NULL));
    }
    const UOp *a[2] = {pin, iv}, *b[2] = {pout, ov};
    const UOp *src = P(p, uop_new(p->c, OP_INDEX, value ? f4 : pin->dtype, a, 2, NULL));
    const UOp *dst = P(p, uop_new(p->c, OP_INDEX, value ? f4 : pout->dtype, b, 2, NULL));
    const UOp *v = value ? src : P(p, uop_new(p->c, OP_LOAD, f4, &src, 1, NULL));
    sink(p, st(p, dst, v));
}

/* the gather built both ways (through LOADs, through value INDEXes),
 * compiled checked and plain, run on in = 10..17: out is want */
static void expect_gather(const int64_t lanes[4], const bool *valid, const float want[4]) {
    float in[8] = {10, 11, 12, 13, 14, 15, 16, 17};
    for (int value = 0; value < 2; value++)
        for (int checked = 0; checked < 2; checked++) {
            Prog p = {.c = uctx_new()};
            build_gather_gated(&p, lanes, value, valid);
            Kernel *k = compile_prog(&p, "gather", checked);
            float out[4] = {-1, -1, -1, -1};
            void *bufs[2] = {out, in};
            char err[512];
            AccessFault rep;
            if (!kernel_run_checked(k, bufs, NULL, &rep, err, sizeof err)) fail_msg("%s", err);
            assert_memory_equal(out, want, 4 * sizeof *out);
            kernel_free(k);
            uctx_free(p.c);
        }
}

static void test_pointer_vectors(void **state) {
    (void)state;
    static const int64_t lanes[4] = {7, 5, 3, 1};
    static const float want[4] = {17, 15, 13, 11};
    expect_gather(lanes, NULL, want);
}

static void test_pointer_vector_gated(void **state) {
    (void)state;
    static const int64_t lanes[4] = {7, 100, 3, -5};   /* lanes 1 and 3 are outside, and Invalid */
    static const bool valid[4] = {true, false, true, false};
    static const float want[4] = {17, 0, 13, 0};
    expect_gather(lanes, valid, want);
}

static void test_pointer_vector_lane_outside(void **state) {
    (void)state;
    static const int64_t lanes[4] = {7, 5, 9, 1};   /* lane 2 is past in's 8 elements */
    for (int value = 0; value < 2; value++) {
        Prog p = {.c = uctx_new()};
        build_gather(&p, lanes, value);
        Kernel *k = compile_prog(&p, "gather", true);
        float out[4] = {0}, in[8] = {0};
        void *bufs[2] = {out, in};
        char err[512];
        AccessFault rep;
        assert_false(kernel_run_checked(k, bufs, NULL, &rep, err, sizeof err));
        assert_true(rep.failed);
        assert_false(rep.store);
        assert_int_equal(rep.buffer, 1);
        assert_int_equal(rep.index, 9);
        assert_int_equal(rep.width, 1);
        assert_int_equal(rep.size, 8);
        float zero[4] = {0};
        assert_memory_equal(out, zero, sizeof out);   /* stopped before the store */
        kernel_free(k);
        uctx_free(p.c);
    }
}

static void test_pipeline_checked(void **state) {
    (void)state;
    KernelPipeline *kp = pipeline_new(c, "r_3_3_3", ast);
    char err[1024];
    const KernelOpt opts[3][2] = {{{0}}, {{OPT_UPCAST, 1, 3}}, {{OPT_UNROLL, 0, 3}}};
    for (int o = 0; o < 3; o++) {
        pipeline_set_opts(kp, opts[o], o ? 1 : 0);
        Kernel *plain = pipeline_kernel(kp, err, sizeof err), *checked = pipeline_kernel_checked(kp, err, sizeof err);
        if (!plain || !checked) fail_msg("%s", err);
        assert_ptr_equal(pipeline_kernel_checked(kp, err, sizeof err), checked);   /* cached */
        assert_true(kernel_is_checked(checked) && !kernel_is_checked(plain));
        float o1[9] = {0}, o2[9] = {0};
        run_matmul(plain, o1, err, sizeof err, true);
        run_matmul(checked, o2, err, sizeof err, true);
        assert_memory_equal(o1, want_matmul, sizeof o1);
        assert_memory_equal(o2, o1, sizeof o1);
    }
    pipeline_set_opts(kp, NULL, 0);

    /* the final program with A's offset moved 3 on: the checked kernel stops at A[9] */
    const UOp *lin = pipeline_root(kp, STAGE_COUNT, err, sizeof err);
    assert_non_null(lin);
    const UOp *lst[256], *from[256], *to[256], *bad = NULL;
    size_t n = 0, nmap = 0;
    for (int i = 0; i < lin->nsrc; i++) {
        const UOp *u = lin->src[i], *src[16];
        assert_true(u->nsrc <= 16 && n + 2 < 256);
        bool changed = false;
        for (int s = 0; s < u->nsrc; s++) {
            src[s] = u->src[s];
            for (size_t m = 0; m < nmap; m++)
                if (from[m] == src[s]) src[s] = to[m], changed = true;
        }
        if (uop_op(u) == OP_INDEX && uop_op(u->src[0]) == OP_DEFINE_GLOBAL && u->src[0]->arg->v.i == 1 && !bad) {
            src[1] = lst[n++] = uop_binary(c, OP_ADD, src[1], uop_const_int(c, src[1]->dtype, 3));
            changed = true;
        }
        const UOp *nu = changed ? uop_with_src(c, u, src, u->nsrc) : u;
        if (uop_op(u) == OP_INDEX && nu != u && !bad) bad = nu;
        if (nu != u) from[nmap] = u, to[nmap++] = nu;
        lst[n++] = nu;
    }
    assert_non_null(bad);
    KernelCompileOpts co = {.checked = true};
    Kernel *k = kernel_compile_opts("r_3_3_3", lst, n, &co, err, sizeof err);
    if (!k) fail_msg("%s", err);
    float out[9];
    run_matmul(k, out, err, sizeof err, false);
    char want[128];
    snprintf(want, sizeof want, "INDEX %%%u reads buffer 1 at 9, past its 9 elements (", bad->id);
    if (strncmp(err, want, strlen(want))) fail_msg("got \"%s\", expected it to start with \"%s\"", err, want);
    kernel_free(k);
    pipeline_free(kp);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_in_range_same_results),
        cmocka_unit_test(test_read_past_the_end),
        cmocka_unit_test(test_read_before_the_start),
        cmocka_unit_test(test_store_does_not_touch_memory),
        cmocka_unit_test(test_gates),
        cmocka_unit_test(test_register_and_vector),
        cmocka_unit_test(test_cores),
        cmocka_unit_test(test_pipeline_checked),
        cmocka_unit_test(test_pointer_vectors),
        cmocka_unit_test(test_pointer_vector_lane_outside),
        cmocka_unit_test(test_pointer_vector_gated),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
