/* test_bounds.c - value bounds and integer evaluation: exact cases from
 * tinygrad's semantics, and a random check that every evaluated value lies
 * inside the computed bounds. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "core/ir/uop.h"
#include "core/sym/bounds.h"
#include "core/sym/eval.h"

static UCtx *c;
static int setup(void **s) { (void)s; c = uctx_new(); return 0; }
static int teardown(void **s) { (void)s; uctx_free(c); return 0; }

static const UOp *ci(int64_t v) { return uop_const_int(c, DT_INDEX, v); }
static const UOp *bin(Op op, const UOp *a, const UOp *b) { return uop_binary(c, op, a, b); }

static void expect_bounds(const UOp *u, int64_t lo, int64_t hi) {
    int64_t a, b;
    assert_non_null(u);
    assert_true(uop_bounds(u, &a, &b));
    assert_int_equal(a, lo);
    assert_int_equal(b, hi);
}

static void test_bounds_cases(void **s) {
    (void)s;
    const UOp *x = uop_var(c, "x", 0, 10), *y = uop_var(c, "y", -3, 4);
    expect_bounds(x, 0, 10);
    expect_bounds(bin(OP_ADD, x, y), -3, 14);
    expect_bounds(bin(OP_MUL, x, y), -30, 40);
    expect_bounds(bin(OP_MUL, y, y), -12, 16);
    expect_bounds(bin(OP_IDIV, x, ci(3)), 0, 3);
    expect_bounds(bin(OP_IDIV, y, ci(2)), -1, 2);          /* -3//2 truncates to -1 */
    expect_bounds(bin(OP_IDIV, x, ci(-3)), -3, 0);
    expect_bounds(bin(OP_MOD, x, ci(4)), 0, 3);
    expect_bounds(bin(OP_MOD, x, ci(20)), 0, 10);
    expect_bounds(bin(OP_MOD, y, ci(2)), -1, 1);            /* C remainder keeps the sign */
    expect_bounds(bin(OP_MAX, x, y), 0, 10);
    expect_bounds(bin(OP_CMPLT, x, ci(11)), 1, 1);
    expect_bounds(bin(OP_CMPLT, x, ci(0)), 0, 0);
    expect_bounds(bin(OP_CMPLT, x, ci(5)), 0, 1);
    expect_bounds(bin(OP_CMPNE, x, ci(20)), 1, 1);
    expect_bounds(uop_where(c, bin(OP_CMPLT, x, ci(5)), y, ci(100)), -3, 100);
    expect_bounds(uop_range(c, ci(8), 0, AXIS_LOOP), 0, 7);
    expect_bounds(uop_cast(c, y, dt_scalar(SK_INT8)), -3, 4);
    expect_bounds(uop_cast(c, uop_var(c, "big", 0, 1000), dt_scalar(SK_INT8)), 0, 127);
    expect_bounds(bin(OP_AND, x, ci(3)), 0, 3);
    expect_bounds(bin(OP_SHL, x, ci(2)), 0, 40);
    expect_bounds(bin(OP_SHR, x, ci(1)), 0, 5);
    /* overflowing int32 arithmetic may wrap: the whole range */
    const UOp *bi = uop_cast(c, uop_var(c, "b", 0, 2000000000), DT_INT32);
    expect_bounds(bin(OP_ADD, bi, bi), INT32_MIN, INT32_MAX);
    /* floats have no integer bounds */
    int64_t lo, hi;
    assert_false(uop_bounds(uop_const_float(c, DT_FLOAT32, 1.0), &lo, &hi));
}

static void test_eval_cases(void **s) {
    (void)s;
    const UOp *x = uop_var(c, "x", 0, 10);
    const UOp *e = bin(OP_IDIV, bin(OP_ADD, bin(OP_MUL, x, ci(4)), ci(3)), ci(2));
    EvalBinding b = {"x", 7};
    int64_t v;
    char err[200];
    assert_true(uop_eval_int(e, &b, 1, &v, err, sizeof err));
    assert_int_equal(v, 15);
    const UOp *neg = bin(OP_ADD, x, ci(-20));
    assert_true(uop_eval_int(bin(OP_IDIV, neg, ci(3)), &b, 1, &v, err, sizeof err));
    assert_int_equal(v, -4);  /* -13 / 3 truncates toward zero */
    assert_true(uop_eval_int(bin(OP_MOD, neg, ci(3)), &b, 1, &v, err, sizeof err));
    assert_int_equal(v, -1);
    /* int8 wraps */
    const UOp *i8 = uop_cast(c, x, dt_scalar(SK_INT8));
    const UOp *w = bin(OP_MUL, i8, uop_const_int(c, dt_scalar(SK_INT8), 20));
    assert_true(uop_eval_int(w, &b, 1, &v, err, sizeof err));
    assert_int_equal(v, (int8_t)140);
    /* errors */
    assert_false(uop_eval_int(e, NULL, 0, &v, err, sizeof err));
    assert_string_equal(err, "variable 'x' has no value");
    EvalBinding out_of_bounds = {"x", 11};
    assert_false(uop_eval_int(e, &out_of_bounds, 1, &v, err, sizeof err));
    assert_non_null(strstr(err, "outside its bounds [0, 10]"));
    const UOp *div0 = bin(OP_IDIV, ci(10), bin(OP_ADD, x, ci(-7)));
    assert_false(uop_eval_int(div0, &b, 1, &v, err, sizeof err));
    assert_non_null(strstr(err, "division by zero"));
    /* a division by zero in a WHERE branch that is not taken is fine */
    const UOp *d = bin(OP_ADD, x, ci(-7));
    const UOp *safe = uop_where(c, bin(OP_CMPNE, d, ci(0)), bin(OP_IDIV, ci(10), d), ci(0));
    assert_true(uop_eval_int(safe, &b, 1, &v, err, sizeof err));
    assert_int_equal(v, 0);
    assert_false(uop_eval_int(uop_const_float(c, DT_FLOAT32, 1.0), NULL, 0, &v, err, sizeof err));
    /* ranges bind as r<axis_id> */
    const UOp *r = uop_range(c, ci(8), 3, AXIS_REDUCE);
    EvalBinding rb = {"r3", 5};
    assert_true(uop_eval_int(bin(OP_MUL, r, ci(2)), &rb, 1, &v, err, sizeof err));
    assert_int_equal(v, 10);
}

/* random expressions: bounds must contain every evaluated value */
static uint64_t rng = 88172645463325252ull;
static uint64_t next(void) { rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; return rng; }
static int64_t rnd(int64_t lo, int64_t hi) { return lo + (int64_t)(next() % (uint64_t)(hi - lo + 1)); }

static const UOp *random_expr(const UOp **vars, int nvars, int depth) {
    if (depth == 0 || rnd(0, 3) == 0) return rnd(0, 2) ? vars[rnd(0, nvars - 1)] : ci(rnd(-9, 9));
    static const Op ops[] = {OP_ADD, OP_MUL, OP_IDIV, OP_MOD, OP_MAX, OP_ADD, OP_MUL};
    Op op = ops[rnd(0, 6)];
    const UOp *a = random_expr(vars, nvars, depth - 1);
    const UOp *b = random_expr(vars, nvars, depth - 1);
    if (op == OP_IDIV || op == OP_MOD) {
        int64_t k = rnd(1, 7) * (rnd(0, 1) ? 1 : -1);
        b = ci(k);
    }
    if (rnd(0, 5) == 0) return uop_where(c, bin(OP_CMPLT, a, b), a, b);
    return bin(op, a, b);
}

static void test_random_bounds_contain_values(void **s) {
    (void)s;
    for (int iter = 0; iter < 2000; iter++) {
        int64_t lo0 = rnd(-20, 20), lo1 = rnd(-20, 20);
        const UOp *vars[2] = {uop_var(c, "a", lo0, lo0 + rnd(0, 30)), uop_var(c, "b", lo1, lo1 + rnd(0, 30))};
        const UOp *e = random_expr(vars, 2, 4);
        int64_t lo, hi;
        assert_true(uop_bounds(e, &lo, &hi));
        for (int k = 0; k < 20; k++) {
            int64_t av, bv, v;
            assert_true(uop_bounds(vars[0], &lo0, &av));
            av = rnd(lo0, av);
            int64_t blo, bhi;
            assert_true(uop_bounds(vars[1], &blo, &bhi));
            bv = rnd(blo, bhi);
            EvalBinding bind[2] = {{"a", av}, {"b", bv}};
            char err[200];
            assert_true(uop_eval_int(e, bind, 2, &v, err, sizeof err));
            if (v < lo || v > hi) fail_msg("value %lld outside [%lld, %lld]", (long long)v, (long long)lo, (long long)hi);
        }
    }
}

/* Bounds asked for at each new node of a long WHERE chain (as a top-down
 * rewrite does) walk only what is not known yet: the node's fresh constant,
 * not the whole chain below, which made this quadratic (minutes, not
 * milliseconds, at this length). */
static void test_bounds_where_chain_linear(void **s) {
    (void)s;
    const UOp *r = uop_range(c, ci(1000), 0, AXIS_LOOP);
    const UOp *e = ci(0);
    int64_t lo, hi;
    enum { N = 60000 };
    clock_t t0 = clock();
    for (int i = 1; i <= N; i++) {
        const UOp *src[3] = {bin(OP_CMPLT, r, ci(i % 997 + 1)), ci(1000000 + i), e};
        e = uop_new(c, OP_WHERE, DT_INDEX, src, 3, NULL);
        assert_non_null(e);
        assert_true(uop_bounds(e, &lo, &hi));
    }
    double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
    /* the union of 0 and 1000001..1000000+N */
    assert_int_equal(lo, 0);
    assert_int_equal(hi, 1000000 + N);
    assert_true(secs < 1.0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_bounds_cases, setup, teardown),
        cmocka_unit_test_setup_teardown(test_eval_cases, setup, teardown),
        cmocka_unit_test_setup_teardown(test_random_bounds_contain_values, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bounds_where_chain_linear, setup, teardown),
    };
    return cmocka_run_group_tests_name("bounds", tests, NULL, NULL);
}
