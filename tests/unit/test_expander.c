/* test_expander.c - stage 9 (the expander) on kernels as they are after
 * stage 8 with an UPCAST or UNROLL range, written as listings: the vector
 * forms tinygrad v0.12.0 produces (UNROLL gone, ops widened, REDUCE over a
 * contracted vector source); CONTRACT's lane order; unsupported GROUP_REDUCE
 * reported by node; and, through all 22 stages, exact results of the 3x3
 * matmul and of a 16-element add with UPCAST/UNROLL opts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/rewrite/registry.h"
#include "core/sym/eval.h"
#include "core/backend/backend.h"
#include "core/ir/uop.h"
#include "core/stages/stages.h"
#include "core/stages/stage_rules.h"
#include "core/sym/vector_rules.h"
#include "core/sym/symbolic.h"
#include "viz/listing.h"
#include "viz/tinygrad_repr.h"

#include "listing_fixture.h"

static const UOp *expand(const UOp *u) {
    StageCtx sc = {.c = c, .err = err, .errlen = sizeof err};
    const UOp *r = stage_run(&sc, 9, u);
    if (!r) fail_msg("expander: %s", err);
    return r;
}

#include "graph_query.h"
#include "test_files.h"

static const UOp *only(const UOp *root, Op op) {
    const UOp *u[4];
    int n = find(root, op, u, 4);
    if (n != 1) fail_msg("expected one %s, found %d", op_name(op), n);
    return u[0];
}

static void assert_dtype(const UOp *u, const DType *dt) {
    if (u->dtype != dt) {
        StrBuf a = {0}, b = {0};
        dt_format(&a, u->dtype), dt_format(&b, dt);
        fail_msg("%s %%%u is %s, expected %s", op_name(uop_op(u)), u->id, a.data, b.data);
    }
}

static void assert_no_expander_ops(const UOp *root) {
    const UOp *u[1];
    assert_int_equal(find(root, OP_UNROLL, u, 1), 0);
    assert_int_equal(find(root, OP_CONTRACT, u, 1), 0);
    const UOp *r[8];
    int n = find(root, OP_RANGE, r, 8);
    for (int i = 0; i < n && i < 8; i++) {
        AxisType at = r[i]->arg->items[r[i]->arg->n - 1]->v.axis;
        assert_true(at != AXIS_UPCAST && at != AXIS_UNROLL);
    }
}

/* out[r0*4 + r1] = a[..] + b[..], r1 an UPCAST range of 4 */
static const char *ADD_UPCAST4 =
    "%0 = DEFINE_GLOBAL float32.ptr(16) arg=0\n"
    "%1 = CONST index arg=4\n"
    "%2 = RANGE index (%1) arg=(0, LOOP)\n"
    "%3 = RANGE index (%1) arg=(1, UPCAST)\n"
    "%4 = MUL index (%2, %1)\n"
    "%5 = ADD index (%4, %3)\n"
    "%6 = INDEX float32.ptr(16) (%0, %5)\n"
    "%7 = DEFINE_GLOBAL float32.ptr(16) arg=1\n"
    "%8 = INDEX float32 (%7, %5)\n"
    "%9 = DEFINE_GLOBAL float32.ptr(16) arg=2\n"
    "%10 = INDEX float32 (%9, %5)\n"
    "%11 = ADD float32 (%8, %10)\n"
    "%12 = STORE void (%6, %11)\n"
    "%13 = END void (%12, %2, %3)\n"
    "%14 = SINK void (%13)\n";

static void test_upcast_elementwise(void **state) {
    (void)state;
    const UOp *root = expand(parse(ADD_UPCAST4));
    assert_no_expander_ops(root);
    const DType *f4 = dt_vec(DT_FLOAT32, 4), *i4 = dt_vec(DT_INDEX, 4);
    const UOp *end = root->src[0];
    assert_int_equal(uop_op(end), OP_END);
    assert_int_equal(end->nsrc, 2); /* the UPCAST range is gone from the END */
    const UOp *st = end->src[0];
    assert_int_equal(uop_op(st), OP_STORE);
    /* the store goes through a vector of 4 pointers into buffer 0 */
    const UOp *dst = st->src[0];
    assert_int_equal(uop_op(dst), OP_INDEX);
    assert_dtype(dst, dt_ptr_vec(dt_ptr(DT_FLOAT32, 16, ADDR_GLOBAL), 4));
    assert_int_equal(uop_op(dst->src[0]), OP_VECTORIZE);
    assert_int_equal(dst->src[0]->nsrc, 4);
    /* the address: broadcast(r0*4) + (0, 1, 2, 3) */
    const UOp *addr = dst->src[1];
    assert_int_equal(uop_op(addr), OP_ADD);
    assert_dtype(addr, i4);
    const UOp *lanes = uop_op(addr->src[1]) == OP_VCONST ? addr->src[1] : addr->src[0];
    assert_int_equal(uop_op(lanes), OP_VCONST);
    for (int i = 0; i < 4; i++) assert_int_equal(lanes->arg->items[i]->v.i, i);
    /* the value: one ADD of two float4 value INDEXes */
    const UOp *val = st->src[1];
    assert_int_equal(uop_op(val), OP_ADD);
    assert_dtype(val, f4);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(uop_op(val->src[i]), OP_INDEX);
        assert_dtype(val->src[i], f4);
        assert_ptr_equal(val->src[i]->src[1], addr);
    }
}

/* the golden matmul after stage 8, with the args of its ranges (output
 * axes 1 and 2, reduce axis 0) as given */
static const UOp *matmul_with(const char *r1, const char *r2, const char *r0) {
    char text[2048];
    snprintf(text, sizeof text,
             "%%0  = DEFINE_GLOBAL float32.ptr(9) arg=0\n"
             "%%1  = CONST index arg=3\n"
             "%%2  = RANGE index (%%1) arg=%s\n"
             "%%3  = MUL index (%%2, %%1)\n"
             "%%4  = RANGE index (%%1) arg=%s\n"
             "%%5  = ADD index (%%3, %%4)\n"
             "%%6  = INDEX float32.ptr(9) (%%0, %%5)\n"
             "%%7  = DEFINE_GLOBAL float32.ptr(9) arg=1\n"
             "%%8  = RANGE index (%%1) arg=%s\n"
             "%%9  = ADD index (%%3, %%8)\n"
             "%%10 = INDEX float32 (%%7, %%9)\n"
             "%%11 = DEFINE_GLOBAL float32.ptr(9) arg=2\n"
             "%%12 = MUL index (%%8, %%1)\n"
             "%%13 = ADD index (%%12, %%4)\n"
             "%%14 = INDEX float32 (%%11, %%13)\n"
             "%%15 = MUL float32 (%%10, %%14)\n"
             "%%16 = REDUCE float32 (%%15, %%8) arg=Ops.ADD\n"
             "%%17 = STORE void (%%6, %%16)\n"
             "%%18 = END void (%%17, %%2, %%4)\n"
             "%%19 = SINK void (%%18)\n",
             r1, r2, r0);
    return parse(text);
}

static void test_unroll_reduce(void **state) {
    (void)state;
    const UOp *root = expand(matmul_with("(1, LOOP)", "(2, LOOP)", "(0, UNROLL)"));
    assert_no_expander_ops(root);
    /* the REDUCE has no loop left: it reduces a float3 of the three products */
    const UOp *red = only(root, OP_REDUCE);
    assert_dtype(red, DT_FLOAT32);
    assert_int_equal(red->nsrc, 1);
    assert_int_equal(uop_op(red->src[0]), OP_MUL);
    assert_dtype(red->src[0], dt_vec(DT_FLOAT32, 3));
    /* the store and its END are untouched: scalar, over both output ranges */
    const UOp *end = only(root, OP_END);
    assert_int_equal(end->nsrc, 3);
    assert_dtype(only(root, OP_STORE)->src[0], dt_ptr(DT_FLOAT32, 9, ADDR_GLOBAL));
}

static void test_upcast_output_with_reduce(void **state) {
    (void)state;
    const UOp *root = expand(matmul_with("(1, LOOP)", "(2, UPCAST)", "(0, REDUCE)"));
    assert_no_expander_ops(root);
    /* three accumulators at once: a float3 REDUCE over the reduce range */
    const UOp *red = only(root, OP_REDUCE);
    assert_dtype(red, dt_vec(DT_FLOAT32, 3));
    assert_int_equal(red->nsrc, 2);
    assert_int_equal(uop_op(red->src[1]), OP_RANGE);
    assert_dtype(red->src[0], dt_vec(DT_FLOAT32, 3));
    const UOp *st = only(root, OP_STORE);
    assert_ptr_equal(st->src[1], red);
    assert_dtype(st->src[0], dt_ptr_vec(dt_ptr(DT_FLOAT32, 9, ADDR_GLOBAL), 3));
    assert_int_equal(only(root, OP_END)->nsrc, 2);
}

static void test_upcast_and_unroll(void **state) {
    (void)state;
    const UOp *root = expand(matmul_with("(1, LOOP)", "(2, UPCAST)", "(0, UNROLL)"));
    assert_no_expander_ops(root);
    const UOp *red = only(root, OP_REDUCE);
    /* 3 outputs, each the horizontal sum of 3 products: a float9 source, no loop */
    assert_dtype(red, dt_vec(DT_FLOAT32, 3));
    assert_int_equal(red->nsrc, 1);
    assert_dtype(red->src[0], dt_vec(DT_FLOAT32, 9));
}

/* CONTRACT of axis 0 out of an UNROLL over ((0, 2), (1, 3)): for each value
 * of the axis left (1), the lanes of axis 0 together */
static void test_contract_lane_order(void **state) {
    (void)state;
    const UOp *root = expand(parse("%0 = VCONST index.vec(6) arg=(0, 1, 2, 3, 4, 5)\n"
                                   "%1 = UNROLL index (%0) arg=((0, 2), (1, 3))\n"
                                   "%2 = CONTRACT index.vec(2) (%1) arg=((0, 2),)\n"
                                   "%3 = SINK void (%2)\n"));
    assert_no_expander_ops(root);
    /* (sym drops the UNROLL under the SINK: what is left is its lanes) */
    const UOp *k = only(root, OP_VCONST);
    assert_int_equal(k->arg->n, 6);
    const int64_t want[6] = {0, 3, 1, 4, 2, 5};
    for (int i = 0; i < 6; i++) assert_int_equal(k->arg->items[i]->v.i, want[i]);
}

/* GROUP_REDUCE (the GROUP opt of the gpu target): each work item reduces its
 * part, the parts go to a local BUFFERIZE over (LOCAL, GROUP_REDUCE), and a
 * final REDUCE over a range of axis id 100 more reads them back */
static void test_group_reduce_through_local_buffer(void **state) {
    (void)state;
    const UOp *in = matmul_with("(1, GLOBAL)", "(2, LOCAL)", "(0, GROUP_REDUCE)");
    const UOp *root = expand(in);
    const UOp *b = only(root, OP_BUFFERIZE);
    assert_non_null(b->arg);
    assert_int_equal(b->arg->kind, ARG_TUPLE);
    assert_int_equal(b->arg->items[0]->v.i, 0);
    assert_string_equal(b->arg->items[1]->v.s, "local");
    /* the part of one work item (no range of its own is left: the product
     * itself), then the LOCAL and GROUP_REDUCE ranges */
    assert_int_equal(b->nsrc, 3);
    assert_int_equal(uop_op(b->src[0]), OP_MUL);
    assert_string_equal(axis_name(b->src[1]->arg->items[1]->v.axis), "LOCAL");
    assert_string_equal(axis_name(b->src[2]->arg->items[1]->v.axis), "GROUP_REDUCE");
    /* the final REDUCE: over RANGE (100, REDUCE) of size 3, reading the buffer at local*3 + r100 */
    const UOp *fin = only(root, OP_REDUCE);
    assert_int_equal(fin->nsrc, 2);
    const UOp *r100 = fin->src[1];
    assert_int_equal(r100->arg->items[0]->v.i, 100);
    assert_string_equal(axis_name(r100->arg->items[1]->v.axis), "REDUCE");
    const UOp *ix = fin->src[0];
    assert_int_equal(uop_op(ix), OP_INDEX);
    assert_ptr_equal(ix->src[0], b);
    for (int64_t l = 0; l < 3; l++)
        for (int64_t r = 0; r < 3; r++) {
            EvalBinding bind[2] = {{"r2", l}, {"r100", r}};
            int64_t got;
            if (!uop_eval_int(ix->src[1], bind, 2, &got, err, sizeof err)) fail_msg("index: %s", err);
            assert_int_equal(got, l * 3 + r);
        }
}

/* stage 10 then lowers the local BUFFERIZE: a DEFINE_LOCAL of 9 floats, the
 * part stored at local*3 + group, the END of both ranges, a BARRIER, and the
 * AFTER the final REDUCE reads through */
static void test_local_buffer_store_and_barrier(void **state) {
    (void)state;
    const UOp *root = expand(matmul_with("(1, GLOBAL)", "(2, LOCAL)", "(0, GROUP_REDUCE)"));
    StageCtx sc = {.c = c, .err = err, .errlen = sizeof err};
    root = stage_run(&sc, 10, root);
    if (!root) fail_msg("stage 10: %s", err);
    const UOp *dl = only(root, OP_DEFINE_LOCAL);
    assert_dtype(dl, dt_ptr(DT_FLOAT32, 9, ADDR_LOCAL));
    const UOp *bar = only(root, OP_BARRIER);
    const UOp *end = bar->src[0];
    assert_int_equal(uop_op(end), OP_END);
    assert_int_equal(end->nsrc, 3);
    const UOp *st = end->src[0];
    assert_int_equal(uop_op(st), OP_STORE);
    assert_ptr_equal(st->src[0]->src[0], dl);
    const UOp *after = only(root, OP_AFTER);
    assert_ptr_equal(after->src[0], dl);
    assert_ptr_equal(after->src[1], bar);
    int nb = find(root, OP_BUFFERIZE, NULL, 0);
    assert_int_equal(nb, 0);
}

/* ---- end to end: stages 1..22, compile, run ---- */

static void run_kernel(const UOp *ast, const KernelOpt *opts, int nopts, float *out, int n_out, int n_in) {
    const UOp *lin = stages_run_all(c, ast, opts, nopts, err, sizeof err);
    if (!lin) fail_msg("stages: %s", err);
    Kernel *k = kernel_compile("k", lin->src, lin->nsrc, err, sizeof err);
    if (!k) fail_msg("compile: %s", err);
    float *b[3];
    for (int i = 0; i < 3; i++) b[i] = buffer_alloc(DT_FLOAT32, i == 0 ? n_out : n_in);
    for (int j = 0; j < n_out; j++) b[0][j] = -1;
    for (int j = 0; j < n_in; j++) b[1][j] = (float)(j + 1), b[2][j] = (float)(10 + j);
    if (!kernel_run(k, (void **)b, NULL, err, sizeof err)) fail_msg("run: %s", err);
    memcpy(out, b[0], (size_t)n_out * sizeof *out);
    for (int i = 0; i < 3; i++) buffer_free(b[i]);
    kernel_free(k);
}

static const UOp *golden_matmul(void) {
    const UOp *u = read_golden_ast(c, GOLDEN_MATMUL_AST, err, sizeof err);
    if (!u) fail_msg("golden: %s", err);
    return u;
}

static void check_matmul(const KernelOpt *opts, int n) {
    const float want[9] = {84, 90, 96, 201, 216, 231, 318, 342, 366};
    float out[9];
    run_kernel(golden_matmul(), opts, n, out, 9, 9);
    for (int i = 0; i < 9; i++)
        if (out[i] != want[i]) fail_msg("out[%d] = %g, expected %g", i, out[i], want[i]);
}

static void test_e2e_matmul(void **state) {
    (void)state;
    check_matmul(NULL, 0);
    check_matmul((KernelOpt[]){{OPT_UPCAST, 1, 3}}, 1);
    check_matmul((KernelOpt[]){{OPT_UNROLL, 0, 3}}, 1);
    check_matmul((KernelOpt[]){{OPT_UPCAST, 1, 3}, {OPT_UNROLL, 0, 3}}, 2);
    check_matmul((KernelOpt[]){{OPT_UPCAST, 0, 3}, {OPT_UPCAST, 0, 3}, {OPT_UNROLL, 0, 3}}, 3);
}

static void test_e2e_add_upcast4(void **state) {
    (void)state;
    const UOp *ast = parse("%0 = DEFINE_GLOBAL float32.ptr(16) arg=0\n"
                           "%1 = CONST index arg=16\n"
                           "%2 = RANGE index (%1) arg=(0, LOOP)\n"
                           "%3 = INDEX float32.ptr(16) (%0, %2)\n"
                           "%4 = DEFINE_GLOBAL float32.ptr(16) arg=1\n"
                           "%5 = INDEX float32 (%4, %2)\n"
                           "%6 = DEFINE_GLOBAL float32.ptr(16) arg=2\n"
                           "%7 = INDEX float32 (%6, %2)\n"
                           "%8 = ADD float32 (%5, %7)\n"
                           "%9 = STORE void (%3, %8)\n"
                           "%10 = END void (%9, %2)\n"
                           "%11 = SINK void (%10)\n");
    const KernelOpt cases[3] = {{OPT_UPCAST, 0, 4}, {OPT_UPCAST, 0, 2}, {OPT_UPCAST, 0, 16}};
    for (int t = 0; t < 3; t++) {
        float out[16];
        run_kernel(ast, &cases[t], 1, out, 16, 16);
        for (int i = 0; i < 16; i++)
            if (out[i] != (float)(11 + 2 * i)) fail_msg("UPCAST %d: out[%d] = %g", cases[t].amount, i, out[i]);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_upcast_elementwise),
        cmocka_unit_test(test_unroll_reduce),
        cmocka_unit_test(test_upcast_output_with_reduce),
        cmocka_unit_test(test_upcast_and_unroll),
        cmocka_unit_test(test_contract_lane_order),
        cmocka_unit_test(test_group_reduce_through_local_buffer),
        cmocka_unit_test(test_local_buffer_store_and_barrier),
        cmocka_unit_test(test_e2e_matmul),
        cmocka_unit_test(test_e2e_add_upcast4),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
