/* test_render.c - infix rendering; the expected strings are what tinygrad
 * v0.12.0's UOp.render(simplify=False) gives for the same graphs (except
 * where uopdb's own forms are noted: INDEX with its buffer, OP(...)). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include "viz/render.h"

static UCtx *c;

static int setup(void **state) {
    (void)state;
    c = uctx_new();
    return c ? 0 : -1;
}
static int teardown(void **state) {
    (void)state;
    uctx_free(c);
    return 0;
}

static void expect(const UOp *u, const char *want) {
    if (!u) fail_msg("could not build the node: %s", uctx_error(c));
    StrBuf sb;
    sb_init(&sb);
    uop_render_expr(&sb, u);
    assert_string_equal(sb_str(&sb), want);
    sb_free(&sb);
}

static const UOp *ci(int64_t v) { return uop_const_int(c, DT_INDEX, v); }
static const UOp *cf(double v) { return uop_const_float(c, DT_FLOAT32, v); }
static const UOp *bin(Op op, const UOp *a, const UOp *b) { return uop_binary(c, op, a, b); }
static const UOp *A(void) { return uop_var(c, "a", 0, 10); }
static const UOp *B(void) { return uop_var(c, "b", 0, 10); }

static void test_leaves(void **state) {
    (void)state;
    expect(A(), "a");
    const UOp *sixteen = ci(16);
    expect(uop_new(c, OP_SPECIAL, DT_INDEX, &sixteen, 1, arg_str(c, "gidx0")), "gidx0");
    expect(uop_range(c, ci(4), 0, AXIS_LOOP), "r0");
    const Arg *items[3] = {arg_int(c, 1), arg_int(c, -2), arg_axis(c, AXIS_LOOP)};
    const UOp *four = ci(4);
    expect(uop_new(c, OP_RANGE, DT_INDEX, &four, 1, arg_tuple(c, items, 3)), "r1_m2");
    expect(ci(-7), "-7");
    expect(cf(2.0), "2.0");
    expect(uop_const_bool(c, true), "True");
    expect(uop_const_arg(c, DT_INDEX, arg_invalid(c)), "Invalid");
}

static void test_binary_parentheses(void **state) {
    (void)state;
    expect(bin(OP_ADD, A(), ci(4)), "(a+4)");
    expect(bin(OP_ADD, bin(OP_MUL, A(), ci(4)), B()), "(a*4+b)");
    expect(bin(OP_MUL, bin(OP_ADD, A(), ci(4)), B()), "((a+4)*b)");
    expect(bin(OP_SUB, A(), bin(OP_SUB, B(), ci(1))), "(a-(b-1))");
    expect(bin(OP_SUB, bin(OP_SUB, A(), B()), ci(1)), "(a-b-1)");
    const UOp *sixteen = ci(16);
    const UOp *g = uop_new(c, OP_SPECIAL, DT_INDEX, &sixteen, 1, arg_str(c, "gidx0"));
    const UOp *r0 = uop_range(c, ci(4), 0, AXIS_LOOP);
    expect(bin(OP_MOD, bin(OP_IDIV, bin(OP_ADD, r0, g), ci(3)), ci(2)), "((r0+gidx0)//3%2)");
    expect(bin(OP_SHL, bin(OP_ADD, A(), B()), ci(2)), "(a+b<<2)");
    expect(bin(OP_OR, bin(OP_AND, A(), B()), bin(OP_XOR, A(), ci(1))), "(a&b|a^1)");
    expect(bin(OP_CMPLT, bin(OP_ADD, A(), B()), ci(5)), "((a+b)<5)");
    expect(bin(OP_CMPNE, A(), B()), "(a!=b)");
    expect(bin(OP_AND, uop_const_bool(c, true), bin(OP_CMPLT, A(), B())), "(True&(a<b))");
    const UOp *r3 = uop_range(c, ci(8), 3, AXIS_REDUCE);
    expect(bin(OP_ADD, bin(OP_MUL, r3, ci(8)), r0), "(r3*8+r0)");
    expect(bin(OP_MUL, bin(OP_MUL, A(), B()), bin(OP_ADD, bin(OP_ADD, A(), B()), ci(1))), "(a*b*(a+b+1))");
}

static void test_functions_and_special_forms(void **state) {
    (void)state;
    expect(bin(OP_MAX, A(), bin(OP_MUL, B(), ci(2))), "max(a, (b*2))");
    expect(uop_where(c, bin(OP_CMPLT, A(), ci(3)), A(), ci(0)), "(a if (a<3) else 0)");
    expect(uop_unary(c, OP_NEG, bin(OP_ADD, A(), B())), "(-(a+b))");
    expect(uop_unary(c, OP_RECIPROCAL, cf(2.0)), "(1/2.0)");
    expect(uop_cast(c, bin(OP_ADD, A(), B()), DT_INT32), "(int)((a+b))");
    const UOp *ints[2] = {uop_const_int(c, DT_INT32, 1), uop_const_int(c, DT_INT32, 2)};
    const UOp *iv = uop_new(c, OP_VECTORIZE, dt_vec(DT_INT32, 2), ints, 2, NULL);
    expect(uop_cast(c, iv, dt_vec(DT_FLOAT32, 2)), "(float.vec(2))({1,2})");
    const UOp *fl[4] = {cf(1.0), cf(0.1), cf(-0.0), cf(1e16)};
    expect(uop_new(c, OP_VECTORIZE, dt_vec(DT_FLOAT32, 4), fl, 4, NULL), "{1.0,0.1,-0.0,1e+16}");
    const UOp *aaa[3] = {A(), A(), A()};
    expect(uop_new(c, OP_VECTORIZE, dt_vec(DT_INDEX, 3), aaa, 3, NULL), "{a, ...}");
    const UOp *mac[3] = {A(), B(), ci(1)};
    expect(uop_new(c, OP_MULACC, DT_INDEX, mac, 3, NULL), "(a*b+1)");
    const UOp *bind[2] = {A(), ci(3)};
    expect(uop_new(c, OP_BIND, DT_INDEX, bind, 2, NULL), "a");
}

static void test_memory_and_other_ops(void **state) {
    (void)state;
    const DType *p = dt_ptr(DT_FLOAT32, 16, ADDR_GLOBAL);
    const UOp *buf = uop_new(c, OP_DEFINE_GLOBAL, p, NULL, 0, arg_int(c, 0));
    const UOp *r0 = uop_range(c, ci(4), 0, AXIS_LOOP);
    const UOp *is[2] = {buf, bin(OP_ADD, bin(OP_MUL, r0, ci(4)), A())};
    const UOp *idx = uop_new(c, OP_INDEX, p, is, 2, NULL);
    expect(idx, "data0[r0*4+a]");
    expect(uop_new(c, OP_LOAD, DT_FLOAT32, &idx, 1, NULL), "LOAD(data0[r0*4+a])");
    expect(uop_unary(c, OP_EXP2, cf(2.5)), "EXP2(2.5)");
    expect(uop_new(c, OP_DEFINE_LOCAL, dt_ptr(DT_FLOAT32, 16, ADDR_LOCAL), NULL, 0, arg_int(c, 1)), "local1");
    expect(uop_new(c, OP_DEVICE, DT_VOID, NULL, 0, arg_str(c, "CPU")), "DEVICE('CPU')");
}

static void test_heavy_sharing_stays_small(void **state) {
    (void)state;
    /* x_{k+1} = x_k + x_k: written out in full this would be 2^40 long */
    const UOp *x = A();
    for (int i = 0; i < 40; i++) x = bin(OP_ADD, x, x);
    StrBuf sb;
    sb_init(&sb);
    uop_render_expr(&sb, x);
    assert_true(sb.len < 20000);
    assert_non_null(strstr(sb_str(&sb), "(%"));
    sb_free(&sb);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_leaves),
        cmocka_unit_test(test_binary_parentheses),
        cmocka_unit_test(test_functions_and_special_forms),
        cmocka_unit_test(test_memory_and_other_ops),
        cmocka_unit_test(test_heavy_sharing_stays_small),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
