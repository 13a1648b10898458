/* test_kernel_name.c - kernel names as tinygrad gives them: r or E, the
 * sizes of the ranges in tinygrad's order of axis types then ids, ranges of
 * one iteration left out, a variable's size by its name, and a name that
 * does not fit.  (tests/lua/test_heuristic_opts.lua and test_gpu.lua check
 * whole kernels against the names tinygrad gave them.) */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>
#include "core/ir/uop.h"
#include "core/sched/kernel_name.h"

static UCtx *c;
static int setup(void **s) { (void)s; c = uctx_new(); return 0; }
static int teardown(void **s) { (void)s; uctx_free(c); return 0; }

static const UOp *range(int64_t size, int64_t id, AxisType at) {
    return uop_range(c, uop_const_int(c, DT_INDEX, size), id, at);
}

static const UOp *sink_of(const UOp **src, int n) { return uop_sink(c, src, n); }

static void test_order_of_axis_types(void **s) {
    (void)s;
    /* given in the opposite order: UNROLL, REDUCE, UPCAST, LOCAL, THREAD, LOOP */
    const UOp *src[] = {range(4, 6, AXIS_UNROLL), range(128, 2, AXIS_REDUCE), range(3, 5, AXIS_UPCAST),
                        range(8, 4, AXIS_LOCAL), range(2, 3, AXIS_THREAD), range(64, 1, AXIS_LOOP),
                        range(32, 0, AXIS_LOOP)};
    char name[64];
    assert_true(kernel_shape_name(sink_of(src, 7), name, sizeof name));
    /* no REDUCE op: E, whatever the ranges' types */
    assert_string_equal(name, "E_32_64_2_8_3_128_4");
}

static void test_reduce_and_single_iterations(void **s) {
    (void)s;
    const UOp *r = range(5, 1, AXIS_REDUCE), *one = range(1, 2, AXIS_UPCAST);
    const UOp *x = uop_binary(c, OP_ADD, uop_cast(c, r, DT_FLOAT32), uop_cast(c, one, DT_FLOAT32));
    const UOp *red_src[] = {x, r};
    const UOp *red = uop_intern(c, OP_REDUCE, DT_FLOAT32, red_src, 2, arg_op(c, OP_ADD), NULL);
    assert_non_null(red);
    const UOp *src[] = {red, range(7, 0, AXIS_LOOP)};
    char name[64];
    assert_true(kernel_shape_name(sink_of(src, 2), name, sizeof name));
    assert_string_equal(name, "r_7_5"); /* the range of 1 is not named */
}

static void test_variable_size(void **s) {
    (void)s;
    const UOp *n = uop_var(c, "n", 1, 10);
    const UOp *src[] = {uop_range(c, n, 0, AXIS_LOOP), range(3, 1, AXIS_UPCAST)};
    char name[64];
    assert_true(kernel_shape_name(sink_of(src, 2), name, sizeof name));
    assert_string_equal(name, "E_n_3");
}

static void test_does_not_fit(void **s) {
    (void)s;
    const UOp *src[] = {range(1000, 0, AXIS_LOOP), range(2000, 1, AXIS_LOOP)};
    char name[8];
    assert_false(kernel_shape_name(sink_of(src, 2), name, sizeof name));
    assert_string_equal(name, "E_1000_"); /* as much as fits */
    char full[16];
    assert_true(kernel_shape_name(sink_of(src, 2), full, sizeof full));
    assert_string_equal(full, "E_1000_2000");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_order_of_axis_types, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reduce_and_single_iterations, setup, teardown),
        cmocka_unit_test_setup_teardown(test_variable_size, setup, teardown),
        cmocka_unit_test_setup_teardown(test_does_not_fit, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
