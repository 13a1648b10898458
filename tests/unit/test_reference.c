/* test_reference.c - tensor-graph shapes and the tensor-semantics
 * reference: movement ops, broadcasting, reductions and an exact 3x3 matmul
 * built from movement ops as the Tensor front end builds it; combinations of
 * movement ops (strided views, reshapes they cannot follow, a chain of views
 * over a source too large to materialise), padding over arithmetic, the
 * order of float sums, blocks read in place and broadcast blocks, failed elements the result never reads, and the
 * interrupt flag. */
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
#include "core/util/interrupt.h"

static UCtx *c;
static const UOp *dev;
static void forget_buffers(void);
static int setup(void **s) {
    (void)s;
    forget_buffers(); /* nodes of an earlier test's context: a new node may reuse the address */
    c = uctx_new();
    dev = uop_new(c, OP_DEVICE, DT_VOID, NULL, 0, arg_str(c, "CPU"));
    return 0;
}
static int teardown(void **s) { (void)s; uctx_free(c); return 0; }

#include "tensor_graph.h"

static float A[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, B[9] = {10, 11, 12, 13, 14, 15, 16, 17, 18};
static int32_t C[4] = {1, 2, 3, 4}, D[4] = {1, 0, 2, 3};
static float E[4 * 16];
/* a 13x5 by 5x300 matmul: more rows than one tile, more columns than one block */
enum { MM_N = 13, MM_K = 5, MM_M = 300 };
static float G[MM_N * MM_K], H[MM_K * MM_M];
static const UOp *bufA, *bufB, *bufC, *bufD, *bufE, *bufG, *bufH;
static void forget_buffers(void) { bufA = bufB = bufC = bufD = bufE = bufG = bufH = NULL; }
static const void *buffers(void *ud, const UOp *b) {
    (void)ud;
    return b == bufA ? (const void *)A : b == bufB ? (const void *)B : b == bufC ? (const void *)C
         : b == bufD ? (const void *)D : b == bufE ? (const void *)E : b == bufG ? (const void *)G
         : b == bufH ? (const void *)H : NULL;
}

static void expect(const UOp *root, const double *want, size_t n) {
    RefTensor t;
    char err[256];
    if (!ref_eval(root, buffers, NULL, &t, err, sizeof err)) fail_msg("%s", err);
    assert_int_equal(shape_numel(&t.shape), n);
    for (size_t i = 0; i < n; i++)
        if (ref_value(&t, i) != want[i]) fail_msg("element %zu: got %.17g, want %.17g", i, ref_value(&t, i), want[i]);
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

/* a tensor constant broadcast to shape s (n dims) */
static const UOp *splat(const UOp *k, const int64_t *s, int n) {
    int64_t ones[16];
    for (int i = 0; i < n; i++) ones[i] = 1;
    return mop(OP_EXPAND, mop(OP_RESHAPE, k, ones, n), s, n);
}

static void expect_error(const UOp *root, const char *want) {
    RefTensor t;
    char err[256];
    if (ref_eval(root, buffers, NULL, &t, err, sizeof err)) {
        ref_tensor_free(&t);
        fail_msg("no error, wanted %s", want);
    }
    if (!strstr(err, want)) fail_msg("%s (wanted %s)", err, want);
}

/* Movement ops combined, as strided views over A = [[1,2,3],[4,5,6],[7,8,9]]:
 * pads with flips (negative strides, valid ranges moved), shrinks into the
 * padding, permutes and reshapes of padded views, a reshape of an expand (a
 * view cannot follow it: its source is materialised), values by hand. */
static void test_views(void **s) {
    (void)s;
    bufA = buffer(0, 9, DT_FLOAT32);
    const UOp *a = mop(OP_RESHAPE, bufA, (int64_t[]){3, 3}, 2);
    /* pad ((1,0),(0,1)) then flip both axes */
    const UOp *pf = with_arg_ints(OP_FLIP, mop2(OP_PAD, a, (int64_t[]){1, 0}, (int64_t[]){0, 1}, 2), (int64_t[]){1, 1}, 2);
    expect(pf, (double[]){0, 9, 8, 7, 0, 6, 5, 4, 0, 3, 2, 1, 0, 0, 0, 0}, 16);
    /* flip axis 1 then pad ((0,1),(2,0)) */
    const UOp *fp = mop2(OP_PAD, with_arg_ints(OP_FLIP, a, (int64_t[]){0, 1}, 2), (int64_t[]){0, 2}, (int64_t[]){1, 0}, 2);
    expect(fp, (double[]){0, 0, 3, 2, 1, 0, 0, 6, 5, 4, 0, 0, 9, 8, 7, 0, 0, 0, 0, 0}, 20);
    /* pad by 1 all round, shrink rows [0,2) and columns [2,5): half padding */
    const UOp *ps = mop2(OP_SHRINK, mop2(OP_PAD, a, (int64_t[]){1, 1}, (int64_t[]){1, 1}, 2), (int64_t[]){0, 2},
                         (int64_t[]){2, 5}, 2);
    expect(ps, (double[]){0, 0, 0, 2, 3, 0}, 6);
    /* a flip inside a shrink inside a flip: rows 2..0, columns 1..2 of the flipped */
    const UOp *ff = with_arg_ints(OP_FLIP, mop2(OP_SHRINK, with_arg_ints(OP_FLIP, a, (int64_t[]){1, 1}, 2),
                                                (int64_t[]){0, 0}, (int64_t[]){3, 2}, 2), (int64_t[]){0, 1}, 2);
    expect(ff, (double[]){8, 9, 5, 6, 2, 3}, 6);
    /* transpose, pad a row below, flatten: the padding is the outer dim's, so the view follows */
    const UOp *tp = mop(OP_RESHAPE, mop2(OP_PAD, with_arg_ints(OP_PERMUTE, a, (int64_t[]){1, 0}, 2), (int64_t[]){0, 0},
                                         (int64_t[]){1, 0}, 2), (int64_t[]){12}, 1);
    expect(tp, (double[]){1, 4, 7, 2, 5, 8, 3, 6, 9, 0, 0, 0}, 12);
    /* pad a column to the right, flatten, reshape (2, 6): the padding is inside rows */
    const UOp *pc = mop(OP_RESHAPE, mop(OP_RESHAPE, mop2(OP_PAD, a, (int64_t[]){0, 0}, (int64_t[]){0, 1}, 2),
                                        (int64_t[]){12}, 1), (int64_t[]){2, 6}, 2);
    expect(pc, (double[]){1, 2, 3, 0, 4, 5, 6, 0, 7, 8, 9, 0}, 12);
    /* a flipped flatten keeps a negative stride: 9..1, then shrink [2, 7) */
    const UOp *nf = mop2(OP_SHRINK, mop(OP_RESHAPE, with_arg_ints(OP_FLIP, a, (int64_t[]){1, 1}, 2), (int64_t[]){9}, 1),
                         (int64_t[]){2}, (int64_t[]){7}, 1);
    expect(nf, (double[]){7, 6, 5, 4, 3}, 5);
    /* repeat as the front end makes it: [1,2,3] -> (1,3) -> expand (2,3) -> (6,) -> [1,3) -> (2,2) */
    const UOp *row = mop(OP_RESHAPE, mop2(OP_SHRINK, mop(OP_RESHAPE, bufA, (int64_t[]){9}, 1), (int64_t[]){0}, (int64_t[]){3}, 1),
                         (int64_t[]){1, 3}, 2);
    const UOp *rep = mop(OP_RESHAPE, mop2(OP_SHRINK, mop(OP_RESHAPE, mop(OP_EXPAND, row, (int64_t[]){2, 3}, 2), (int64_t[]){6}, 1),
                                          (int64_t[]){1}, (int64_t[]){5}, 1), (int64_t[]){2, 2}, 2);
    expect(rep, (double[]){2, 3, 1, 2}, 4);
    /* flip rows, expand a new last axis, move it first, sum it: 2 * the flipped */
    const UOp *fe = with_arg_ints(OP_PERMUTE, mop(OP_EXPAND, mop(OP_RESHAPE, with_arg_ints(OP_FLIP, a, (int64_t[]){1, 0}, 2),
                                                                 (int64_t[]){3, 3, 1}, 3), (int64_t[]){3, 3, 2}, 3),
                                  (int64_t[]){2, 0, 1}, 3);
    expect(reduce(OP_ADD, fe, (int64_t[]){0}, 1), (double[]){14, 16, 18, 8, 10, 12, 2, 4, 6}, 9);
    /* padding arithmetic pads with 0, not with the arithmetic of 0: (A + 10) padded a row above */
    const UOp *ten = uop_new(c, OP_CONST, DT_FLOAT32, &dev, 1, arg_float(c, 10));
    const UOp *pa = mop2(OP_PAD, uop_binary(c, OP_ADD, a, splat(ten, (int64_t[]){3, 3}, 2)), (int64_t[]){1, 0},
                         (int64_t[]){0, 0}, 2);
    expect(pa, (double[]){0, 0, 0, 11, 12, 13, 14, 15, 16, 17, 18, 19}, 12);
    /* and through a transpose and a flip above the pad */
    expect(with_arg_ints(OP_FLIP, with_arg_ints(OP_PERMUTE, pa, (int64_t[]){1, 0}, 2), (int64_t[]){1, 0}, 2),
           (double[]){0, 13, 16, 19, 0, 12, 15, 18, 0, 11, 14, 17}, 12);
}

/* A RESHAPE of a pad whose source has more than 2^24 elements: not
 * materialised, it is read through a chain of two views.  A (9,1) expanded
 * to (9, 2000000), a column of padding added, flattened, 4 elements read. */
static void test_view_chain(void **s) {
    (void)s;
    bufA = buffer(0, 9, DT_FLOAT32);
    const UOp *wide = mop(OP_EXPAND, mop(OP_RESHAPE, bufA, (int64_t[]){9, 1}, 2), (int64_t[]){9, 2000000}, 2);
    const UOp *flat = mop(OP_RESHAPE, mop2(OP_PAD, wide, (int64_t[]){0, 0}, (int64_t[]){0, 1}, 2), (int64_t[]){9 * 2000001}, 1);
    const UOp *few = mop2(OP_SHRINK, flat, (int64_t[]){1999999}, (int64_t[]){2000003}, 1);
    expect(few, (double[]){1, 0, 2, 2}, 4);
    expect(reduce(OP_ADD, mop(OP_RESHAPE, few, (int64_t[]){2, 2}, 2), (int64_t[]){1}, 1), (double[]){1, 4}, 2);
}

/* A float32 sum accumulates in float64 and is rounded to float32 once: 1e8
 * + 1 - 1e8 + 1 is 2 (a float32 accumulator would absorb the first 1 and
 * give 1), whether a block of outputs is summed at once (16 columns) or one
 * output's elements are (16 rows), in row-major or transposed order. */
/* Blocks read in place from an array, and blocks of one repeated value (a
 * broadcast): a matmul whose products are summed without a block of them,
 * against plain loops with the same rounding (each product to float32, the
 * sum in double, rounded to float32 once); a sum of two broadcasts; a cast
 * done in place on a block read in place must not change the array. */
static void test_blocks_in_place(void **s) {
    (void)s;
    for (int i = 0; i < MM_N * MM_K; i++) G[i] = (float)((i * 7) % 11 - 5) + 0.1f * (float)(i % 3);
    for (int i = 0; i < MM_K * MM_M; i++) H[i] = (float)((i * 5) % 13) * 0.37f - 2.0f;
    bufG = buffer(5, MM_N * MM_K, DT_FLOAT32);
    bufH = buffer(6, MM_K * MM_M, DT_FLOAT32);
    const UOp *g = mop(OP_EXPAND, mop(OP_RESHAPE, bufG, (int64_t[]){MM_N, 1, MM_K}, 3), (int64_t[]){MM_N, MM_M, MM_K}, 3);
    const UOp *ht = with_arg_ints(OP_PERMUTE, mop(OP_RESHAPE, bufH, (int64_t[]){MM_K, MM_M}, 2), (int64_t[]){1, 0}, 2);
    const UOp *h = mop(OP_EXPAND, mop(OP_RESHAPE, ht, (int64_t[]){1, MM_M, MM_K}, 3), (int64_t[]){MM_N, MM_M, MM_K}, 3);
    const UOp *mm = reduce(OP_ADD, uop_binary(c, OP_MUL, g, h), (int64_t[]){2}, 1);
    static double want[MM_N * MM_M];
    for (int i = 0; i < MM_N; i++)
        for (int j = 0; j < MM_M; j++) {
            double acc = 0;
            for (int k = 0; k < MM_K; k++) acc += (double)(float)((double)G[i * MM_K + k] * (double)H[k * MM_M + j]);
            want[i * MM_M + j] = (double)(float)acc;
        }
    expect(mm, want, MM_N * MM_M);

    /* out[j] = sum_k G[k] * G[k + 1], every lane the same: both sources broadcast */
    const UOp *row0 = mop2(OP_SHRINK, mop(OP_RESHAPE, bufG, (int64_t[]){1, MM_N * MM_K}, 2), (int64_t[]){0, 0},
                           (int64_t[]){1, MM_K}, 2);
    const UOp *row1 = mop2(OP_SHRINK, mop(OP_RESHAPE, bufG, (int64_t[]){1, MM_N * MM_K}, 2), (int64_t[]){0, 1},
                           (int64_t[]){1, MM_K + 1}, 2);
    const UOp *b0 = mop(OP_EXPAND, row0, (int64_t[]){20, MM_K}, 2), *b1 = mop(OP_EXPAND, row1, (int64_t[]){20, MM_K}, 2);
    double dot = 0, same[20];
    for (int k = 0; k < MM_K; k++) dot += (double)(float)((double)G[k] * (double)G[k + 1]);
    for (int j = 0; j < 20; j++) same[j] = (double)(float)dot;
    expect(reduce(OP_ADD, uop_binary(c, OP_MUL, b0, b1), (int64_t[]){1}, 1), same, 20);
    /* a broadcast added to a row: its one value filled out for the ADD */
    const UOp *col = mop(OP_EXPAND, mop(OP_RESHAPE, bufG, (int64_t[]){MM_N * MM_K, 1}, 2), (int64_t[]){MM_N * MM_K, MM_M}, 2);
    const UOp *rows = mop(OP_EXPAND, mop(OP_RESHAPE, mop2(OP_SHRINK, bufH, (int64_t[]){0}, (int64_t[]){MM_M}, 1),
                                         (int64_t[]){1, MM_M}, 2), (int64_t[]){MM_N * MM_K, MM_M}, 2);
    static double sums[MM_N * MM_K * MM_M];
    for (int i = 0; i < MM_N * MM_K; i++)
        for (int j = 0; j < MM_M; j++) sums[i * MM_M + j] = (double)(float)((double)G[i] + (double)H[j]);
    expect(uop_binary(c, OP_ADD, col, rows), sums, MM_N * MM_K * MM_M);

    /* trunc(H) + H: the cast works on a copy of H's block, not on H's array */
    const UOp *trunc = uop_cast(c, uop_cast(c, bufH, DT_INT32), DT_FLOAT32);
    static double th[MM_K * MM_M];
    for (int i = 0; i < MM_K * MM_M; i++) th[i] = (double)(float)((double)(int32_t)H[i] + (double)H[i]);
    expect(uop_binary(c, OP_ADD, trunc, bufH), th, MM_K * MM_M);
}

static void test_sum_order(void **s) {
    (void)s;
    const float col[4] = {1e8f, 1, -1e8f, 1};
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 16; j++) E[i * 16 + j] = col[i];
    bufE = buffer(4, 64, DT_FLOAT32);
    const UOp *e = mop(OP_RESHAPE, bufE, (int64_t[]){4, 16}, 2);
    double twos[16];
    for (int j = 0; j < 16; j++) twos[j] = 2;
    expect(reduce(OP_ADD, e, (int64_t[]){0}, 1), twos, 16);
    expect(reduce(OP_ADD, with_arg_ints(OP_PERMUTE, e, (int64_t[]){1, 0}, 2), (int64_t[]){1}, 1), twos, 16);
    expect(reduce(OP_ADD, e, (int64_t[]){0, 1}, 2), (double[]){32}, 1);
    expect(reduce(OP_ADD, with_arg_ints(OP_PERMUTE, e, (int64_t[]){1, 0}, 2), (int64_t[]){0, 1}, 2), (double[]){32}, 1);
}

/* An element whose op fails (an integer division by zero) is an error only
 * where the result reads it: not under padding, not where a materialised
 * reshape source is shrunk away, but yes where it is read. */
static void test_failed_elements(void **s) {
    (void)s;
    bufC = buffer(2, 4, DT_INT32);
    bufD = buffer(3, 4, DT_INT32);
    const UOp *cc = mop(OP_RESHAPE, bufC, (int64_t[]){2, 2}, 2);
    /* C // C padded: the padding would be 0 // 0 */
    const UOp *q = mop2(OP_PAD, uop_binary(c, OP_IDIV, cc, cc), (int64_t[]){1, 0}, (int64_t[]){0, 1}, 2);
    expect(q, (double[]){0, 0, 0, 1, 1, 0, 1, 1, 0}, 9);
    const UOp *pcc = mop2(OP_PAD, cc, (int64_t[]){1, 0}, (int64_t[]){0, 1}, 2);
    expect_error(uop_binary(c, OP_IDIV, pcc, pcc), "integer division by zero at node");
    /* 6 // D = [6, fails, 3, 2], each twice: a reshape of an expand, its source materialised */
    const UOp *six = uop_new(c, OP_CONST, DT_INT32, &dev, 1, arg_int(c, 6));
    const UOp *qd = uop_binary(c, OP_IDIV, splat(six, (int64_t[]){4}, 1), bufD);
    const UOp *twice = mop(OP_RESHAPE, mop(OP_EXPAND, mop(OP_RESHAPE, qd, (int64_t[]){4, 1}, 2), (int64_t[]){4, 2}, 2),
                           (int64_t[]){8}, 1);
    expect(mop2(OP_SHRINK, twice, (int64_t[]){4}, (int64_t[]){8}, 1), (double[]){3, 3, 2, 2}, 4);
    expect(mop2(OP_SHRINK, twice, (int64_t[]){0}, (int64_t[]){1}, 1), (double[]){6}, 1);
    expect_error(mop2(OP_SHRINK, twice, (int64_t[]){1}, (int64_t[]){4}, 1), "integer division by zero at node");
    expect_error(reduce(OP_ADD, twice, (int64_t[]){0}, 1), "integer division by zero at node");
}

/* a set interrupt flag stops a long evaluation with "interrupted" */
static void test_interrupt(void **s) {
    (void)s;
    const UOp *one = uop_new(c, OP_CONST, DT_FLOAT32, &dev, 1, arg_float(c, 1));
    const UOp *big = splat(one, (int64_t[]){1024, 1024, 64}, 3);
    uopdb_interrupt_request();
    expect_error(reduce(OP_ADD, big, (int64_t[]){0, 1, 2}, 3), "interrupted");
    uopdb_interrupt_clear();
    expect(reduce(OP_ADD, splat(one, (int64_t[]){1024, 64}, 2), (int64_t[]){0, 1}, 2), (double[]){65536}, 1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_shapes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_movement_and_reduce, setup, teardown),
        cmocka_unit_test_setup_teardown(test_matmul_3x3_exact, setup, teardown),
        cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_deep_graphs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_views, setup, teardown),
        cmocka_unit_test_setup_teardown(test_view_chain, setup, teardown),
        cmocka_unit_test_setup_teardown(test_blocks_in_place, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sum_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failed_elements, setup, teardown),
        cmocka_unit_test_setup_teardown(test_interrupt, setup, teardown),
    };
    return cmocka_run_group_tests_name("reference", tests, NULL, NULL);
}
