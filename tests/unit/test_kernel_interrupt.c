/* test_kernel_interrupt.c - JIT kernels stop soon after the interrupt flag
 * is set: a long loop without inner loops (polled per chunk of 65536), an
 * outer loop around inner ones (polled per iteration), a kernel split over
 * cores, a checked kernel; a flag already set stops a kernel at once and
 * the program runner before its first kernel; after clearing, kernels run
 * to the end; the long loop of a chunked kernel is still vectorised. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <pthread.h>
#include <cmocka.h>

#include "core/debug/program_run.h"
#include "core/rewrite/registry.h"
#include "core/util/interrupt.h"
#include "linear_prog.h"

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ---- a timer that sets the flag after a delay ---- */

typedef struct Timer {
    pthread_t tid;
    int delay_ms;
    double fired_at;
} Timer;

static void *timer_main(void *arg) {
    Timer *t = arg;
    struct timespec d = {t->delay_ms / 1000, (long)(t->delay_ms % 1000) * 1000000L};
    nanosleep(&d, NULL);
    t->fired_at = now_ms();
    uopdb_interrupt_request();
    return NULL;
}

/* Runs k (all its core_ids) with the flag set after 50 ms: it must fail
 * with "interrupted" soon after. */
static void expect_interrupted(Kernel *k, void **bufs) {
    uopdb_interrupt_clear();
    Timer t = {.delay_ms = 50};
    assert_int_equal(pthread_create(&t.tid, NULL, timer_main, &t), 0);
    char err[256];
    double t0 = now_ms();
    bool ok = kernel_run_parallel(k, bufs, NULL, err, sizeof err);
    double t1 = now_ms();
    pthread_join(t.tid, NULL);
    uopdb_interrupt_clear();
    if (ok) fail_msg("%s ran to the end (%.0f ms) instead of stopping", kernel_name(k), t1 - t0);
    assert_string_equal(err, "interrupted");
    double latency = t1 - t.fired_at;
    print_message("%-12s stopped %.2f ms after the flag was set (%.0f ms in all)\n", kernel_name(k), latency, t1 - t0);
    /* ~100 ms is the aim; the bound leaves room for a loaded machine */
    assert_true(latency < 1000);
}

/* acc = acc * 0.999 + in[0] for r < n: a dependency chain LLVM cannot shorten */
static void build_long_sum(Prog *p, int64_t n, const UOp *core) {
    const UOp *out = glob(p, 0, SK_FLOAT32, 4), *in = glob(p, 1, SK_FLOAT32, 1);
    const UOp *acc = reg(p, SK_FLOAT32, 1);
    const UOp *c0 = cint(p, SK_INT32, 0);
    const UOp *init = st(p, idx(p, acc, c0), cflt(p, 0.0));
    const UOp *x = ld(p, idx(p, in, c0));
    const UOp *r = rng(p, cint(p, SK_INT32, n), 0, AXIS_REDUCE);
    const UOp *ai = idx(p, after(p, acc, init), c0);
    const UOp *upd = st(p, ai, bin(p, OP_ADD, bin(p, OP_MUL, ld(p, ai), cflt(p, 0.999)), x));
    const UOp *res = ld(p, idx(p, after(p, acc, end(p, upd, r)), c0));
    sink(p, st(p, idx(p, out, core ? core : c0), res));
}

static void test_long_flat_loop(void **state) {
    (void)state;
    Prog p = {.c = uctx_new()};
    build_long_sum(&p, INT32_MAX, NULL);
    Kernel *k = compile_prog(&p, "r_2147483647", false);
    const char *ir = kernel_ir(k, false);
    assert_non_null(strstr(ir, "load volatile i32, ptr @uopdb.interrupt"));
    assert_non_null(strstr(ir, "chunk"));
    float *out = buffer_alloc(DT_FLOAT32, 4), *in = buffer_alloc(DT_FLOAT32, 1);
    in[0] = 1;
    void *bufs[2] = {out, in};
    expect_interrupted(k, bufs);
    kernel_free(k);

    /* the same kernel checked */
    k = compile_prog(&p, "r_checked", true);
    expect_interrupted(k, bufs);
    kernel_free(k);

    /* cleared, a short one runs to the end: sum_{i<n} 0.999^i */
    p.n = 0;
    build_long_sum(&p, 100000, NULL);
    k = compile_prog(&p, "r_100000", false);
    char err[256];
    if (!kernel_run(k, bufs, NULL, err, sizeof err)) fail_msg("%s", err);
    assert_true(out[0] > 999.0f && out[0] < 1000.0f);
    /* set before the run: it stops at once */
    uopdb_interrupt_request();
    out[0] = -5;
    assert_false(kernel_run(k, bufs, NULL, err, sizeof err));
    assert_string_equal(err, "interrupted");
    assert_true(out[0] == -5);
    uopdb_interrupt_clear();
    buffer_free(out), buffer_free(in);
    kernel_free(k);
    uctx_free(p.c);
}

/* for i < 2^20: for j < 4096: out[0] = out[0] * 0.999 + in[0] (the outer loop polls) */
static void test_outer_loop(void **state) {
    (void)state;
    Prog p = {.c = uctx_new()};
    const UOp *out = glob(&p, 0, SK_FLOAT32, 1), *in = glob(&p, 1, SK_FLOAT32, 1);
    const UOp *c0 = cint(&p, SK_INT32, 0);
    const UOp *ri = rng(&p, cint(&p, SK_INT32, 1 << 20), 0, AXIS_LOOP);
    const UOp *rj = rng(&p, cint(&p, SK_INT32, 4096), 1, AXIS_REDUCE);
    const UOp *o = idx(&p, out, c0);
    const UOp *s = st(&p, o, bin(&p, OP_ADD, bin(&p, OP_MUL, ld(&p, o), cflt(&p, 0.999)), ld(&p, idx(&p, in, c0))));
    sink(&p, end(&p, end(&p, s, rj), ri));
    Kernel *k = compile_prog(&p, "r_1048576_4096", false);
    float o_[1] = {0}, i_[1] = {1};
    void *bufs[2] = {o_, i_};
    expect_interrupted(k, bufs);
    kernel_free(k);
    uctx_free(p.c);
}

static void test_cores(void **state) {
    (void)state;
    Prog p = {.c = uctx_new()};
    build_long_sum(&p, INT32_MAX, special(&p, 2));
    Kernel *k = compile_prog(&p, "r_2_long", false);
    assert_int_equal(kernel_threads(k), 2);
    float *out = buffer_alloc(DT_FLOAT32, 4), *in = buffer_alloc(DT_FLOAT32, 1);
    void *bufs[2] = {out, in};
    expect_interrupted(k, bufs);
    buffer_free(out), buffer_free(in);
    kernel_free(k);
    uctx_free(p.c);
}

/* a long elementwise loop is chunked and still vectorised */
static void test_chunked_loop_vectorised(void **state) {
    (void)state;
    Prog p = {.c = uctx_new()};
    int64_t n = 1 << 20;
    const UOp *d0 = glob(&p, 0, SK_FLOAT32, n), *d1 = glob(&p, 1, SK_FLOAT32, n);
    const UOp *r = rng(&p, cint(&p, SK_INT32, n), 0, AXIS_LOOP);
    sink(&p, end(&p, st(&p, idx(&p, d0, r), bin(&p, OP_ADD, ld(&p, idx(&p, d1, r)), cflt(&p, 1.0))), r));
    Kernel *k = compile_prog(&p, "E_1048576", false);
    const char *ir = kernel_ir(k, true);
    assert_non_null(strstr(ir, "load volatile i32, ptr @uopdb.interrupt"));
#if defined(__x86_64__) || defined(__aarch64__)
    assert_true(strstr(ir, "<4 x float>") || strstr(ir, "<8 x float>") || strstr(ir, "<16 x float>"));
#endif
    float *a = buffer_alloc(DT_FLOAT32, n), *b = buffer_alloc(DT_FLOAT32, n);
    for (int64_t i = 0; i < n; i++) b[i] = (float)i;
    void *bufs[2] = {a, b};
    char err[256];
    if (!kernel_run(k, bufs, NULL, err, sizeof err)) fail_msg("%s", err);
    for (int64_t i = 0; i < n; i++)
        if (a[i] != (float)i + 1.0f) fail_msg("a[%lld] = %g", (long long)i, a[i]);
    buffer_free(a), buffer_free(b);
    kernel_free(k);
    uctx_free(p.c);
}

/* ---- the program runner ---- */

static UCtx *c;
static const UOp *dev;
#include "tensor_graph.h"

static float X[6] = {1, 2, 3, 4, 5, 6};
static const UOp *bufX;
static const void *inputs(void *ud, const UOp *b) {
    (void)ud;
    return b == bufX ? (const void *)X : NULL;
}

static void test_program_run(void **state) {
    (void)state;
    c = uctx_new();
    dev = uop_new(c, OP_DEVICE, DT_VOID, NULL, 0, arg_str(c, "CPU"));
    bufX = buffer(0, 6, DT_FLOAT32);
    const UOp *sum = reduce(OP_ADD, mop(OP_RESHAPE, bufX, (int64_t[]){2, 3}, 2), (int64_t[]){1}, 1);
    char err[1024];
    Schedule *s = schedule_build(c, uop_sink(c, &sum, 1), err, sizeof err);
    if (!s) fail_msg("%s", err);
    KernelPipeline *kps[8];
    assert_true(s->nkernels <= 8);
    for (int i = 0; i < s->nkernels; i++) kps[i] = pipeline_new(c, s->kernels[i].name, s->kernels[i].ast);
    float out[2] = {0};
    void *outs[1] = {out};
    uopdb_interrupt_request();
    assert_false(program_run(s, kps, inputs, NULL, outs, err, sizeof err));
    assert_non_null(strstr(err, "interrupted before kernel 1"));
    uopdb_interrupt_clear();
    ProgramRunOpts o = {.checked = true};
    for (int checked = 0; checked < 2; checked++) {
        memset(out, 0, sizeof out);
        if (!program_run_opts(s, kps, inputs, NULL, outs, checked ? &o : NULL, err, sizeof err)) fail_msg("%s", err);
        assert_true(out[0] == 6 && out[1] == 15);
    }
    for (int i = 0; i < s->nkernels; i++) pipeline_free(kps[i]);
    schedule_free(s);
    uctx_free(c);
    ruleset_registry_free();
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_long_flat_loop),
        cmocka_unit_test(test_outer_loop),
        cmocka_unit_test(test_cores),
        cmocka_unit_test(test_chunked_loop_vectorised),
        cmocka_unit_test(test_program_run),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
