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

#include "core/backend/program_run.h"

static UCtx *c;
static const UOp *dev, *bufA;
static float A[6] = {1, 2, 3, 4, 5, 6};

static int setup(void **s) {
    (void)s;
    c = uctx_new();
    dev = uop_new(c, OP_DEVICE, DT_VOID, NULL, 0, arg_str(c, "CPU"));
    const UOp *u = uop_new(c, OP_UNIQUE, DT_VOID, NULL, 0, arg_int(c, 0));
    const UOp *src[2] = {u, dev};
    bufA = uop_new(c, OP_BUFFER, DT_FLOAT32, src, 2, arg_int(c, 6));
    return 0;
}
static int teardown(void **s) {
    (void)s;
    uctx_free(c);
    stages_rules_free();
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

static const UOp *ivec(const int64_t *v, int n) {
    const Arg *items[8];
    for (int i = 0; i < n; i++) items[i] = arg_int(c, v[i]);
    return uop_new(c, OP_VCONST, dt_vec(DT_INDEX, n), NULL, 0, arg_tuple(c, items, (uint32_t)n));
}
static const UOp *mop(Op op, const UOp *x, const int64_t *v, int n) {
    const UOp *s[2] = {x, ivec(v, n)};
    return uop_new(c, op, x->dtype, s, 2, NULL);
}
static const UOp *reduce_axis(Op rop, const UOp *x, int64_t axis) {
    const Arg *ax = arg_int(c, axis);
    const Arg *items[2] = {arg_op(c, rop), arg_tuple(c, &ax, 1)};
    return uop_new(c, OP_REDUCE_AXIS, x->dtype, &x, 1, arg_tuple(c, items, 2));
}

/* x - max(x, axis 1) broadcast back: two kernels through a tmp buffer */
static const UOp *centered(void) {
    const UOp *a = mop(OP_RESHAPE, bufA, (int64_t[]){2, 3}, 2);
    const UOp *m = mop(OP_EXPAND, reduce_axis(OP_MAX, a, 1), (int64_t[]){2, 3}, 2);
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

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_run_and_validate),
        cmocka_unit_test(test_missing_input_is_an_error),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
