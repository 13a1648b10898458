/* test_ast_interp.c - the kernel-AST interpreter on hand-built kernels and on
 * tinygrad v0.12.0's 3x3 matmul AST: exact values, reductions (ADD, MAX,
 * MUL, nested, loop-invariant), Invalid-gated loads and stores, int and
 * bool buffers, and errors that name the node (an access outside a buffer, a
 * missing buffer, a RANGE outside its loop); the interrupt flag stops it;
 * the direct paths of float32, float64 and 64-bit integer arithmetic give
 * bit for bit what the general scalar semantics give. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/ir/uop.h"
#include "core/backend/ast_interp.h"
#include "direct_path_cases.h"
#include "viz/tinygrad_repr.h"
#include "core/util/interrupt.h"

static UCtx *c;
static int setup(void **s) { (void)s; c = uctx_new(); return 0; }
static int teardown(void **s) { (void)s; uctx_free(c); return 0; }

static const UOp *idx(int64_t v) { return uop_const_int(c, DT_INDEX, v); }
static const UOp *range(int64_t end, int id, AxisType at) { return uop_range(c, idx(end), id, at); }
static const UOp *dg(int slot, const DType *dt, int64_t size) {
    return uop_new(c, OP_DEFINE_GLOBAL, dt_ptr(dt, size, ADDR_GLOBAL), NULL, 0, arg_int(c, slot));
}
static const UOp *load(const UOp *buf, const UOp *i) {
    const UOp *s[2] = {buf, i};
    return uop_new(c, OP_INDEX, buf->dtype->base, s, 2, NULL);
}
static const UOp *bin(Op op, const UOp *a, const UOp *b) { return uop_binary(c, op, a, b); }
/* SINK(END(STORE(INDEX(out, i), v), ranges...)) */
static const UOp *kernel(const UOp *out, const UOp *i, const UOp *v, const UOp *const *ranges, int nr) {
    const UOp *is[2] = {out, i};
    const UOp *ss[2] = {uop_new(c, OP_INDEX, out->dtype, is, 2, NULL), v};
    const UOp *st = uop_new(c, OP_STORE, DT_VOID, ss, 2, NULL);
    const UOp *es[8] = {st};
    for (int k = 0; k < nr; k++) es[1 + k] = ranges[k];
    const UOp *body = nr ? uop_new(c, OP_END, DT_VOID, es, 1 + nr, NULL) : st;
    assert_non_null(body);
    return uop_sink(c, &body, 1);
}
static const UOp *reduce(Op op, const UOp *v, const UOp *const *ranges, int nr) {
    const UOp *s[8] = {v};
    for (int k = 0; k < nr; k++) s[1 + k] = ranges[k];
    return uop_new(c, OP_REDUCE, v->dtype, s, 1 + nr, arg_op(c, op));
}
static const UOp *invalid(void) { return uop_const_arg(c, DT_INDEX, arg_invalid(c)); }

static void run_ok(const UOp *k, void **bufs, const int64_t *sizes, int n) {
    char err[256];
    if (!ast_interp_run(k, bufs, sizes, n, err, sizeof err)) fail_msg("%s", err);
}

#include "test_files.h"

/* the 3x3 matmul exactly; with the interrupt flag set it stops at its
 * first iteration and stores nothing */
static void test_tinygrad_matmul_ast(void **st) {
    (void)st;
    char err[256];
    const UOp *k = read_golden_ast(c, GOLDEN_MATMUL_AST, err, sizeof err);
    if (!k) fail_msg("%s", err);
    float a[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, b[9] = {10, 11, 12, 13, 14, 15, 16, 17, 18}, out[9] = {0};
    void *bufs[3] = {out, a, b};
    int64_t sizes[3] = {9, 9, 9};
    uopdb_interrupt_request();
    bool ok = ast_interp_run(k, bufs, sizes, 3, err, sizeof err);
    uopdb_interrupt_clear();
    assert_false(ok);
    assert_non_null(strstr(err, "interp: interrupted at node %"));
    for (int i = 0; i < 9; i++) assert_true(out[i] == 0);
    run_ok(k, bufs, sizes, 3);
    const float want[9] = {84, 90, 96, 201, 216, 231, 318, 342, 366};
    for (int i = 0; i < 9; i++) assert_true(out[i] == want[i]);
}

static void test_reductions(void **st) {
    (void)st;
    /* rows of a 3x4: sum, max, product, and (row max) summed over all rows
     * inside the row loop (a loop-invariant nested reduction) */
    float x[12] = {1, -2, 3, 0.5f, 4, 5, -6, 2, 7, 1, 1, -1};
    const UOp *in = dg(1, DT_FLOAT32, 12), *out = dg(0, DT_FLOAT32, 3);
    const UOp *i = range(3, 0, AXIS_LOOP), *j = range(4, 1, AXIS_REDUCE);
    const UOp *elem = load(in, bin(OP_ADD, bin(OP_MUL, i, idx(4)), j));
    const Op ops[3] = {OP_ADD, OP_MAX, OP_MUL};
    const float want[3][3] = {{2.5f, 5, 8}, {3, 5, 7}, {-3, -240, -7}};
    for (int o = 0; o < 3; o++) {
        float res[3] = {0};
        void *bufs[2] = {res, x};
        int64_t sizes[2] = {3, 12};
        run_ok(kernel(out, i, reduce(ops[o], elem, &j, 1), &i, 1), bufs, sizes, 2);
        for (int r = 0; r < 3; r++) assert_true(res[r] == want[o][r]);
    }
    /* out[i] = x[i, 0] + sum over (p, q) of x[p, q]: the inner reduce does
     * not depend on i, so it is computed once and reused */
    const UOp *p = range(3, 2, AXIS_REDUCE), *q = range(4, 3, AXIS_REDUCE);
    const UOp *rs[2] = {p, q};
    const UOp *all = reduce(OP_ADD, load(in, bin(OP_ADD, bin(OP_MUL, p, idx(4)), q)), rs, 2);
    float res[3] = {0};
    void *bufs[2] = {res, x};
    int64_t sizes[2] = {3, 12};
    run_ok(kernel(out, i, bin(OP_ADD, load(in, bin(OP_MUL, i, idx(4))), all), &i, 1), bufs, sizes, 2);
    for (int r = 0; r < 3; r++) assert_true(res[r] == x[r * 4] + 15.5f);
}

static void test_invalid_gates(void **st) {
    (void)st;
    /* out[i] = in[i - 1] for 1 <= i < 4, else 0: a padded read */
    float x[3] = {7, 8, 9}, res[6];
    for (int k = 0; k < 6; k++) res[k] = -1;
    const UOp *in = dg(1, DT_FLOAT32, 3), *out = dg(0, DT_FLOAT32, 6);
    const UOp *i = range(6, 0, AXIS_LOOP);
    const UOp *valid = bin(OP_AND, bin(OP_CMPLT, idx(0), i), bin(OP_CMPLT, i, idx(4)));
    const UOp *gated = uop_where(c, valid, bin(OP_ADD, i, idx(-1)), invalid());
    const UOp *v = uop_where(c, valid, load(in, gated), uop_const_float(c, DT_FLOAT32, 0));
    void *bufs[2] = {res, x};
    int64_t sizes[2] = {6, 3};
    run_ok(kernel(out, i, v, &i, 1), bufs, sizes, 2);
    const float want[6] = {0, 7, 8, 9, 0, 0};
    for (int k = 0; k < 6; k++) assert_true(res[k] == want[k]);
    /* the same read without its gate is caught, naming the INDEX; the
     * WHERE around it does not save it (both branches are evaluated) */
    const UOp *ungated = load(in, bin(OP_ADD, i, idx(-1)));
    char err[256], want_msg[128];
    assert_false(ast_interp_run(kernel(out, i, uop_where(c, valid, ungated, uop_const_float(c, DT_FLOAT32, 0)), &i, 1),
                                bufs, sizes, 2, err, sizeof err));
    snprintf(want_msg, sizeof want_msg, "INDEX %%%u reads buffer 1 at -1, before the start of its 3 elements (r0=0)",
             ungated->id);
    assert_string_equal(err, want_msg);
    /* an Invalid store index stores nothing */
    for (int k = 0; k < 6; k++) res[k] = -1;
    const UOp *half = uop_where(c, bin(OP_CMPLT, i, idx(3)), i, invalid());
    run_ok(kernel(out, half, uop_cast(c, i, DT_FLOAT32), &i, 1), bufs, sizes, 2);
    const float want2[6] = {0, 1, 2, -1, -1, -1};
    for (int k = 0; k < 6; k++) assert_true(res[k] == want2[k]);
}

static void test_int_and_bool_buffers(void **st) {
    (void)st;
    /* out[i] (int32) = in[i] (int32) // 3 where flag[i] else -in[i] */
    int32_t x[5] = {10, -7, 9, 4, 2147483647}, res[5] = {0};
    unsigned char flag[5] = {1, 1, 0, 1, 0};
    const UOp *in = dg(1, DT_INT32, 5), *fl = dg(2, DT_BOOL, 5), *out = dg(0, DT_INT32, 5);
    const UOp *i = range(5, 0, AXIS_LOOP);
    const UOp *xi = load(in, i);
    const UOp *v = uop_where(c, load(fl, i), bin(OP_IDIV, xi, uop_const_int(c, DT_INT32, 3)),
                             uop_unary(c, OP_NEG, xi));
    void *bufs[3] = {res, x, flag};
    int64_t sizes[3] = {5, 5, 5};
    run_ok(kernel(out, i, v, &i, 1), bufs, sizes, 3);
    const int32_t want[5] = {3, -2, -9, 1, -2147483647};
    for (int k = 0; k < 5; k++) assert_int_equal(res[k], want[k]);
    /* a kernel with no ranges stores once */
    int32_t one = 0;
    void *b1[1] = {&one};
    int64_t s1[1] = {1};
    run_ok(kernel(dg(0, DT_INT32, 1), idx(0), uop_const_int(c, DT_INT32, 42), NULL, 0), b1, s1, 1);
    assert_int_equal(one, 42);
}

/* out[i] = (a[i] op b[i]) op a[i] as a kernel AST */
static void direct_path_run(const DType *dt, Op op, const void *a, const void *b, int n, void *res) {
    const UOp *in_a = dg(1, dt, n), *in_b = dg(2, dt, n), *out = dg(0, dt, n);
    const UOp *i = range(n, 0, AXIS_LOOP);
    const UOp *ai = load(in_a, i);
    const UOp *v = bin(op, bin(op, ai, load(in_b, i)), ai);
    void *bufs[3] = {res, (void *)a, (void *)b};
    int64_t sizes[3] = {n, n, n};
    run_ok(kernel(out, i, v, &i, 1), bufs, sizes, 3);
}

static void test_direct_paths(void **st) {
    (void)st;
    direct_path_cases(direct_path_run);
    /* float32 rounds after each op: (1 + 2^-30) - 1 is 0, not 2^-30 */
    float one[1] = {1.0f}, tiny[1] = {0x1p-30f}, res[1] = {-1};
    const UOp *x = load(dg(1, DT_FLOAT32, 1), idx(0)), *y = load(dg(2, DT_FLOAT32, 1), idx(0));
    void *bufs[3] = {res, one, tiny};
    int64_t sizes[3] = {1, 1, 1};
    run_ok(kernel(dg(0, DT_FLOAT32, 1), idx(0), bin(OP_SUB, bin(OP_ADD, x, y), x), NULL, 0), bufs, sizes, 3);
    assert_true(res[0] == 0.0f);
    /* an Invalid index stays Invalid through index arithmetic: no store */
    float out[8] = {-1, -1, -1, -1, -1, -1, -1, -1};
    const UOp *i = range(4, 0, AXIS_LOOP);
    const UOp *gated = uop_where(c, bin(OP_CMPLT, i, idx(2)), i, invalid());
    /* (gated + i) * 1 + 2: 2 and 4 for i = 0, 1; with the Invalid lost, i = 3 would store to 5 */
    const UOp *at = bin(OP_ADD, bin(OP_MUL, bin(OP_ADD, gated, i), idx(1)), idx(2));
    void *b2[1] = {out};
    int64_t s2[1] = {8};
    run_ok(kernel(dg(0, DT_FLOAT32, 8), at, uop_const_float(c, DT_FLOAT32, 5.0), &i, 1), b2, s2, 1);
    const float want[8] = {-1, -1, 5, -1, 5, -1, -1, -1};
    for (int k = 0; k < 8; k++) assert_true(out[k] == want[k]);
}

static void test_errors(void **st) {
    (void)st;
    float res[4], x[4] = {0};
    void *bufs[2] = {res, x};
    int64_t sizes[2] = {4, 4};
    char err[256], want[48];
    const UOp *out = dg(0, DT_FLOAT32, 4), *i = range(4, 0, AXIS_LOOP);
    /* a DEFINE_GLOBAL beyond the buffers given */
    const UOp *far = dg(5, DT_FLOAT32, 4);
    const UOp *k = kernel(out, i, load(far, i), &i, 1);
    AccessFault f;
    assert_false(ast_interp_run_fault(k, bufs, sizes, 2, &f, err, sizeof err));
    assert_non_null(strstr(err, "DEFINE_GLOBAL 5 has no buffer"));
    assert_false(f.failed); /* a kernel the interpreter cannot run */
    /* a store past the end */
    const UOp *i5 = range(5, 1, AXIS_LOOP);
    const UOp *st5 = kernel(out, i5, uop_const_float(c, DT_FLOAT32, 1), &i5, 1);
    assert_false(ast_interp_run_fault(st5, bufs, sizes, 2, &f, err, sizeof err));
    /* a wrong kernel: in the words a compiled kernel with bounds checks uses (access_fault.h) */
    char want_access[128];
    snprintf(want_access, sizeof want_access, "INDEX %%%u writes buffer 0 at 4, past its 4 elements (r1=4)",
             st5->src[0]->src[0]->src[0]->id);
    assert_string_equal(err, want_access);
    assert_true(f.failed && f.store && f.index == 4 && f.nranges == 1 && f.range_id[0] == i5->id);
    /* a RANGE outside the loop that would define it */
    const UOp *j = range(4, 2, AXIS_LOOP);
    assert_false(ast_interp_run_fault(kernel(out, i, uop_cast(c, j, DT_FLOAT32), &i, 1), bufs, sizes, 2, &f, err, sizeof err));
    snprintf(want, sizeof want, "%%%u (RANGE)", j->id);
    assert_non_null(strstr(err, "outside its loop"));
    assert_false(f.failed);
    assert_non_null(strstr(err, want));
    /* not a statement */
    const UOp *v = uop_const_float(c, DT_FLOAT32, 1);
    assert_false(ast_interp_run(uop_sink(c, &v, 1), bufs, sizes, 2, err, sizeof err));
    assert_non_null(strstr(err, "not a statement"));
    assert_false(ast_interp_run(NULL, bufs, sizes, 2, err, sizeof err));
    /* a chain too deep to follow is refused, not a crash */
    const UOp *deep = uop_const_float(c, DT_FLOAT32, 0), *one = uop_const_float(c, DT_FLOAT32, 1);
    for (int n = 0; n < 200000; n++) deep = bin(OP_ADD, deep, one);
    assert_false(ast_interp_run(kernel(out, i, deep, &i, 1), bufs, sizes, 2, err, sizeof err));
    if (!strstr(err, "graph too deep for the interpreter: ") || !strstr(err, " nested nodes (limit ~")) fail_msg("%s", err);
    /* a shallower one runs */
    deep = uop_const_float(c, DT_FLOAT32, 0);
    for (int n = 0; n < 1000; n++) deep = bin(OP_ADD, deep, one);
    run_ok(kernel(out, i, deep, &i, 1), bufs, sizes, 2);
    assert_true(res[3] == 1000);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_tinygrad_matmul_ast, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reductions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_invalid_gates, setup, teardown),
        cmocka_unit_test_setup_teardown(test_int_and_bool_buffers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_direct_paths, setup, teardown),
        cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
    };
    return cmocka_run_group_tests_name("ast_interp", tests, NULL, NULL);
}
