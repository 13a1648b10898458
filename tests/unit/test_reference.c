/* test_reference.c - tensor-graph shapes and the naive tensor-semantics
 * reference: movement ops, broadcasting, reductions and an exact 3x3 matmul
 * built from movement ops as the Tensor front end builds it. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/ir/uop.h"
#include "core/sched/shape.h"
#include "core/backend/tensor_reference.h"

static UCtx *c;
static const UOp *dev;
static int setup(void **s) {
    (void)s;
    c = uctx_new();
    dev = uop_new(c, OP_DEVICE, DT_VOID, NULL, 0, arg_str(c, "CPU"));
    return 0;
}
static int teardown(void **s) { (void)s; uctx_free(c); return 0; }

#include "tensor_graph.h"

static float A[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, B[9] = {10, 11, 12, 13, 14, 15, 16, 17, 18};
static const UOp *bufA, *bufB;
static const void *buffers(void *ud, const UOp *b) {
    (void)ud;
    return b == bufA ? (const void *)A : b == bufB ? (const void *)B : NULL;
}

static void expect(const UOp *root, const double *want, size_t n) {
    RefTensor t;
    char err[256];
    if (!ref_eval(root, buffers, NULL, &t, err, sizeof err)) fail_msg("%s", err);
    assert_int_equal(shape_numel(&t.shape), n);
    for (size_t i = 0; i < n; i++)
        if (ref_value(&t, i) != want[i]) fail_msg("element %zu: got %g, want %g", i, ref_value(&t, i), want[i]);
    ref_tensor_free(&t);
}

static void test_shapes(void **s) {
    (void)s;
    bufA = buffer(0, 9, DT_FLOAT32);
    Shape sh;
    char err[256];
    assert_true(uop_shape(bufA, &sh, err, sizeof err));
    assert_int_equal(sh.ndim, 1);
    const UOp *a = mop(OP_RESHAPE, bufA, (int64_t[]){3, 3}, 2);
    const UOp *p = with_arg_ints(OP_PERMUTE, mop(OP_RESHAPE, bufA, (int64_t[]){1, 9}, 2), (int64_t[]){1, 0}, 2);
    assert_true(uop_shape(p, &sh, err, sizeof err));
    assert_int_equal(sh.d[0], 9);
    assert_int_equal(sh.d[1], 1);
    const UOp *pad = mop2(OP_PAD, a, (int64_t[]){1, 0}, (int64_t[]){0, 2}, 2);
    assert_true(uop_shape(pad, &sh, err, sizeof err));
    assert_int_equal(sh.d[0], 4);
    assert_int_equal(sh.d[1], 5);
    assert_true(uop_shape(reduce(OP_ADD, a, (int64_t[]){1}, 1), &sh, err, sizeof err));
    assert_int_equal(sh.d[1], 1);
    /* errors name the problem and the node */
    assert_false(uop_shape(mop(OP_RESHAPE, bufA, (int64_t[]){2, 4}, 2), &sh, err, sizeof err));
    assert_non_null(strstr(err, "bad reshape: (9,) -> (2, 4) at node"));
    assert_false(uop_shape(mop(OP_EXPAND, a, (int64_t[]){3, 3, 3}, 3), &sh, err, sizeof err));
    assert_non_null(strstr(err, "bad expand"));
    const UOp *v = mop(OP_RESHAPE, bufA, (int64_t[]){9, 1}, 2);
    assert_false(uop_shape(uop_binary(c, OP_ADD, a, mop(OP_RESHAPE, v, (int64_t[]){1, 9}, 2)), &sh, err, sizeof err));
    assert_non_null(strstr(err, "shape mismatch: (3, 3) and (1, 9)"));
}

static void test_movement_and_reduce(void **s) {
    (void)s;
    bufA = buffer(0, 9, DT_FLOAT32);
    const UOp *a = mop(OP_RESHAPE, bufA, (int64_t[]){3, 3}, 2);
    expect(with_arg_ints(OP_PERMUTE, a, (int64_t[]){1, 0}, 2), (double[]){1, 4, 7, 2, 5, 8, 3, 6, 9}, 9);
    expect(with_arg_ints(OP_FLIP, a, (int64_t[]){0, 1}, 2), (double[]){3, 2, 1, 6, 5, 4, 9, 8, 7}, 9);
    expect(mop2(OP_SHRINK, a, (int64_t[]){1, 0}, (int64_t[]){3, 2}, 2), (double[]){4, 5, 7, 8}, 4);
    expect(mop2(OP_PAD, mop(OP_RESHAPE, bufA, (int64_t[]){9}, 1), (int64_t[]){1}, (int64_t[]){2}, 1),
           (double[]){0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 0}, 12);
    expect(reduce(OP_ADD, a, (int64_t[]){1}, 1), (double[]){6, 15, 24}, 3);
    expect(reduce(OP_ADD, a, (int64_t[]){0}, 1), (double[]){12, 15, 18}, 3);
    expect(reduce(OP_MAX, a, (int64_t[]){0, 1}, 2), (double[]){9}, 1);
    expect(reduce(OP_MUL, mop2(OP_SHRINK, a, (int64_t[]){0, 0}, (int64_t[]){1, 3}, 2), (int64_t[]){1}, 1), (double[]){6}, 1);
    /* broadcasting a tensor constant: (3,3) + 10 */
    const UOp *ten = uop_new(c, OP_CONST, DT_FLOAT32, &dev, 1, arg_float(c, 10));
    const UOp *b = mop(OP_EXPAND, mop(OP_RESHAPE, ten, (int64_t[]){1, 1}, 2), (int64_t[]){3, 3}, 2);
    expect(uop_binary(c, OP_ADD, a, b), (double[]){11, 12, 13, 14, 15, 16, 17, 18, 19}, 9);
    /* casts truncate like C, ints wrap */
    const UOp *half = uop_binary(c, OP_MUL, a, mop(OP_EXPAND, mop(OP_RESHAPE, uop_new(c, OP_CONST, DT_FLOAT32, &dev, 1, arg_float(c, 0.5)), (int64_t[]){1, 1}, 2), (int64_t[]){3, 3}, 2));
    expect(uop_cast(c, half, DT_INT32), (double[]){0, 1, 1, 2, 2, 3, 3, 4, 4}, 9);
}

static void test_matmul_3x3_exact(void **s) {
    (void)s;
    bufA = buffer(0, 9, DT_FLOAT32);
    bufB = buffer(1, 9, DT_FLOAT32);
    /* A (3,3) -> (3,1,3) -> expand (3,3,3); B^T (3,3) -> (1,3,3) -> expand; multiply; sum the last axis */
    const UOp *a = mop(OP_EXPAND, mop(OP_RESHAPE, bufA, (int64_t[]){3, 1, 3}, 3), (int64_t[]){3, 3, 3}, 3);
    const UOp *bt = with_arg_ints(OP_PERMUTE, mop(OP_RESHAPE, bufB, (int64_t[]){3, 3}, 2), (int64_t[]){1, 0}, 2);
    const UOp *b = mop(OP_EXPAND, mop(OP_RESHAPE, bt, (int64_t[]){1, 3, 3}, 3), (int64_t[]){3, 3, 3}, 3);
    const UOp *mm = mop(OP_RESHAPE, reduce(OP_ADD, uop_binary(c, OP_MUL, a, b), (int64_t[]){2}, 1), (int64_t[]){3, 3}, 2);
    expect(mm, (double[]){84, 90, 96, 201, 216, 231, 318, 342, 366}, 9);
}

static void test_errors(void **s) {
    (void)s;
    bufA = buffer(0, 9, DT_FLOAT32);
    const UOp *unknown = buffer(7, 4, DT_FLOAT32);
    RefTensor t;
    char err[256];
    assert_false(ref_eval(unknown, buffers, NULL, &t, err, sizeof err));
    assert_non_null(strstr(err, "no data for this buffer"));
    const UOp *x = uop_var(c, "x", 0, 3);
    assert_false(ref_eval(x, buffers, NULL, &t, err, sizeof err));
    assert_non_null(strstr(err, "no shape"));
}

/* A deep graph: a chain of nodes evaluated per element is cut by
 * materialising, so any depth evaluates; a chain of tensors too large to
 * materialise stops at the stack budget with an error naming the depth. */
static void test_deep_graphs(void **s) {
    (void)s;
    bufA = buffer(0, 9, DT_FLOAT32);
    const UOp *a = mop(OP_RESHAPE, bufA, (int64_t[]){3, 3}, 2), *x = a;
    /* x -> x^T + A, 50000 times (100000 nested nodes): A + 25000 (A + A^T) */
    for (int i = 0; i < 50000; i++) x = uop_binary(c, OP_ADD, with_arg_ints(OP_PERMUTE, x, (int64_t[]){1, 0}, 2), a);
    double want[9];
    for (int i = 0; i < 9; i++) want[i] = A[i] + 25000.0 * (A[i] + A[(i % 3) * 3 + i / 3]);
    expect(x, want, 9);
    const UOp *k = uop_new(c, OP_CONST, DT_FLOAT32, &dev, 1, arg_float(c, 1));
    const UOp *big = mop(OP_EXPAND, mop(OP_RESHAPE, k, (int64_t[]){1, 1}, 2), (int64_t[]){4096, 4097}, 2), *y = big;
    for (int i = 0; i < 100000; i++) y = uop_binary(c, OP_ADD, y, big);
    RefTensor t;
    char err[256];
    assert_false(ref_eval(reduce(OP_ADD, y, (int64_t[]){0, 1}, 2), buffers, NULL, &t, err, sizeof err));
    if (!strstr(err, "graph too deep for the reference: 100005 nested nodes (limit ~")) fail_msg("%s", err);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_shapes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_movement_and_reduce, setup, teardown),
        cmocka_unit_test_setup_teardown(test_matmul_3x3_exact, setup, teardown),
        cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_deep_graphs, setup, teardown),
    };
    return cmocka_run_group_tests_name("reference", tests, NULL, NULL);
}
