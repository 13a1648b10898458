/* test_program_run.c - a scheduled program run through the pipelines and
 * the JIT: tmp buffers allocated and freed by the plan, outputs exact, and
 * validation that passes on correct data and names the elements that
 * differ on corrupted data; a missing input is a clear error. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/rewrite/registry.h"
#include "core/debug/kernel_check.h"

static UCtx *c;
static const UOp *dev, *bufA;
static float A[6] = {1, 2, 3, 4, 5, 6};

#include "tensor_graph.h"

static int setup(void **s) {
    (void)s;
    c = uctx_new();
    dev = uop_new(c, OP_DEVICE, DT_VOID, NULL, 0, arg_str(c, "CPU"));
    bufA = buffer(0, 6, DT_FLOAT32);
    return 0;
}
static int teardown(void **s) {
    (void)s;
    uctx_free(c);
    ruleset_registry_free();
    return 0;
}

static const void *inputs(void *ud, const UOp *b) {
    (void)ud;
    return b == bufA ? (const void *)A : NULL;
}
static const void *no_inputs(void *ud, const UOp *b) {
    (void)ud;
    (void)b;
    return NULL;
}


/* x - max(x, axis 1) broadcast back: two kernels through a tmp buffer */
static const UOp *centered(void) {
    const UOp *a = mop(OP_RESHAPE, bufA, (int64_t[]){2, 3}, 2);
    const UOp *m = mop(OP_EXPAND, reduce(OP_MAX, a, (int64_t[]){1}, 1), (int64_t[]){2, 3}, 2);
    /* -1 as a tensor: a CONST on the device, reshaped and expanded */
    const UOp *k = uop_new(c, OP_CONST, DT_FLOAT32, &dev, 1, arg_float(c, -1.0));
    k = mop(OP_EXPAND, mop(OP_RESHAPE, k, (int64_t[]){1, 1}, 2), (int64_t[]){2, 3}, 2);
    return uop_binary(c, OP_ADD, a, uop_binary(c, OP_MUL, m, k));
}

typedef struct Prog {
    Schedule *s;
    KernelPipeline *kps[8];
} Prog;

static void prog_build(Prog *p, const UOp *out) {
    char err[1024];
    const UOp *sink = uop_sink(c, &out, 1);
    p->s = schedule_build(c, sink, err, sizeof err);
    if (!p->s) fail_msg("%s", err);
    assert_true(p->s->nkernels <= 8);
    for (int i = 0; i < p->s->nkernels; i++) p->kps[i] = pipeline_new(c, p->s->kernels[i].name, p->s->kernels[i].ast);
}
static void prog_free(Prog *p) {
    for (int i = 0; i < p->s->nkernels; i++) pipeline_free(p->kps[i]);
    schedule_free(p->s);
}

static void test_run_and_validate(void **s) {
    (void)s;
    Prog p;
    prog_build(&p, centered());
    assert_int_equal(p.s->nkernels, 2);
    bool has_tmp = false;
    for (int b = 0; b < p.s->nbufs; b++) has_tmp |= p.s->bufs[b].kind == SBUF_TMP;
    assert_true(has_tmp);
    float out[6] = {0};
    void *outs[1] = {out};
    char err[1024];
    assert_true(program_run(p.s, p.kps, inputs, NULL, outs, err, sizeof err));
    const float want[6] = {-2, -1, 0, -2, -1, 0};
    for (int i = 0; i < 6; i++) assert_true(out[i] == want[i]);

    ValidateReport rep;
    StrBuf sb;
    sb_init(&sb);
    assert_true(program_validate(p.s, 0, out, inputs, NULL, 1e-5, 1e-4, &rep, &sb, err, sizeof err));
    assert_true(rep.ok);
    assert_int_equal(rep.checked, 6);
    assert_non_null(strstr(sb_str(&sb), "6 elements match the reference"));

    /* corrupt one element: validation names it with its index */
    out[4] = 7;
    sb_clear(&sb);
    assert_true(program_validate(p.s, 0, out, inputs, NULL, 1e-5, 1e-4, &rep, &sb, err, sizeof err));
    assert_false(rep.ok);
    assert_int_equal(rep.mismatches, 1);
    assert_non_null(strstr(sb_str(&sb), "1 of 6 elements differ"));
    assert_non_null(strstr(sb_str(&sb), "at [1, 1]: got 7, want -1"));
    sb_free(&sb);
    prog_free(&p);
}

static void test_missing_input_is_an_error(void **s) {
    (void)s;
    Prog p;
    prog_build(&p, centered());
    float out[6];
    void *outs[1] = {out};
    char err[1024];
    assert_false(program_run(p.s, p.kps, no_inputs, NULL, outs, err, sizeof err));
    assert_non_null(strstr(err, "input0 (BUFFER"));
    assert_non_null(strstr(err, "has no data"));
    prog_free(&p);
}

/* a kernel checked at single stages: the kernel-AST interpreter for the
 * scheduler's forms, the linear interpreter from stage 11 on; a wrong
 * kernel is caught; a form the interpreters cannot run says so */
/* one check of kernel ki at point n, in a session of its own */
static bool check_kernel_at(const Schedule *s, KernelPipeline *const *kps, int ki, int n, RefBufferFn inputs, void *ud,
                            double atol, double rtol, ValidateReport *rep, StrBuf *sb, char *err, size_t errlen) {
    KernelCheck *kc = kcheck_new(s, kps, ki, inputs, ud, atol, rtol, err, errlen);
    bool ok = kc && kcheck_point(kc, n, rep, sb, err, errlen);
    kcheck_free(kc);
    return ok;
}

static void test_check_kernel_at_stages(void **s) {
    (void)s;
    Prog p;
    prog_build(&p, centered());
    char err[1024];
    ValidateReport rep;
    StrBuf sb;
    sb_init(&sb);
    /* every point: the kernel-AST interpreter up to stage 10, the linear
     * interpreter from stage 11 on (points before 21 linearized) */
    for (int ki = 0; ki < p.s->nkernels; ki++) {
        for (int n = 0; n <= STAGE_COUNT; n++) {
            sb_clear(&sb);
            if (!check_kernel_at(p.s, p.kps, ki, n, inputs, NULL, 1e-5, 1e-4, &rep, &sb, err, sizeof err))
                fail_msg("kernel %d at %d: %s", ki, n, err);
            if (!rep.ok) fail_msg("kernel %d at %d: %s", ki, n, sb_str(&sb));
        }
    }
    /* a vector REDUCE (stages 9 and 10 with UPCAST) is lowered through
     * stages 10-11 and linearized: every point checks */
    assert_string_equal(p.s->kernels[0].name, "r_2_3");
    KernelOpt up = {OPT_UPCAST, 0, 2};
    pipeline_set_opts(p.kps[0], &up, 1);
    for (int n = 0; n <= STAGE_COUNT; n++) {
        sb_clear(&sb);
        if (!check_kernel_at(p.s, p.kps, 0, n, inputs, NULL, 1e-5, 1e-4, &rep, &sb, err, sizeof err))
            fail_msg("UPCAST, at %d: %s", n, err);
        assert_true(rep.ok);
    }
    pipeline_set_opts(p.kps[0], NULL, 0);
    /* a wrong kernel: the last kernel's ADD made a MUL */
    int last = p.s->nkernels - 1;
    const UOp *ast = p.s->kernels[last].ast;
    size_t n;
    const UOp **topo = uop_toposort(ast, &n);
    const UOp *add = NULL;
    for (size_t i = 0; i < n; i++)
        if (uop_op(topo[i]) == OP_ADD && dt_is_float(topo[i]->dtype)) add = topo[i];
    free(topo);
    assert_non_null(add);
    const UOp *mul = uop_intern(c, OP_MUL, add->dtype, add->src, add->nsrc, NULL, NULL);
    /* rebuild the kernel with the MUL in place of the ADD */
    const UOp **t2 = uop_toposort(ast, &n);
    const UOp **map = calloc(n, sizeof *map);
    for (size_t i = 0; i < n; i++) {
        const UOp *u = t2[i];
        if (u == add) { map[i] = mul; continue; }
        const UOp *src[16];
        for (int k = 0; k < u->nsrc; k++) {
            src[k] = u->src[k];
            for (size_t j = 0; j < i; j++)
                if (t2[j] == u->src[k]) src[k] = map[j];
        }
        map[i] = uop_intern(c, uop_op(u), u->dtype, src, u->nsrc, u->arg, u->tag);
    }
    KernelPipeline *good = p.kps[last];
    p.kps[last] = pipeline_new(c, "broken", map[n - 1]);
    free(t2);
    free(map);
    sb_clear(&sb);
    assert_true(check_kernel_at(p.s, p.kps, last, 0, inputs, NULL, 1e-5, 1e-4, &rep, &sb, err, sizeof err));
    assert_false(rep.ok);
    assert_non_null(strstr(sb_str(&sb), "differ from the reference"));
    pipeline_free(p.kps[last]);
    p.kps[last] = good;
    sb_free(&sb);
    prog_free(&p);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_run_and_validate),
        cmocka_unit_test(test_missing_input_is_an_error),
        cmocka_unit_test(test_check_kernel_at_stages),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
