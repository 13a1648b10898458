/* test_access_fault.c - the words for an access outside a buffer, which
 * every executor uses: each kind of buffer, a program buffer's name, a
 * vector's width, before the start and past the end, read, write and both,
 * the loops in order, the loops past the record's room, and a record that
 * did not fail. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>
#include "core/backend/access_fault.h"
#include "core/ir/uop.h"

static AccessFault fault(Op buffer_op, int64_t buffer, int64_t index, int64_t size, int width) {
    return (AccessFault){.failed = true, .node_op = OP_INDEX, .index_id = 41, .buffer_op = buffer_op,
                         .buffer = buffer, .index = index, .size = size, .width = width, .threads = 1};
}

static void test_buffers(void **state) {
    (void)state;
    char out[256];
    AccessFault f = fault(OP_DEFINE_GLOBAL, 1, 12, 9, 1);
    access_fault_message(&f, NULL, out, sizeof out);
    assert_string_equal(out, "INDEX %41 reads buffer 1 at 12, past its 9 elements");
    access_fault_message(&f, "input0", out, sizeof out);
    assert_string_equal(out, "INDEX %41 reads buffer 1 (input0) at 12, past its 9 elements");
    f = fault(OP_DEFINE_REG, 17, 2, 2, 1);
    f.store = true;
    access_fault_message(&f, "ignored for a register", out, sizeof out);
    assert_string_equal(out, "INDEX %41 writes DEFINE_REG %17 at 2, past its 2 elements");
    f = fault(OP_DEFINE_LOCAL, 5, -1, 1, 4);
    f.both = true;
    access_fault_message(&f, NULL, out, sizeof out);
    assert_string_equal(out, "INDEX %41 accesses 4 elements of DEFINE_LOCAL %5 at -1, before the start of its 1 element");
    f = fault(OP_NOOP, -1, 3, 3, 1);
    f.node_op = OP_CAST;
    access_fault_message(&f, NULL, out, sizeof out);
    assert_string_equal(out, "CAST %41 reads the buffer behind its pointer at 3, past its 3 elements");
}

static void test_loops(void **state) {
    (void)state;
    char out[512];
    AccessFault f = fault(OP_DEFINE_GLOBAL, 0, 250, 250, 1);
    f.store = true;
    access_fault_add_loop(&f, 7, "gidx0", 2);
    access_fault_add_loop(&f, 9, "r0", 50);
    access_fault_message(&f, "output0", out, sizeof out);
    assert_string_equal(out, "INDEX %41 writes buffer 0 (output0) at 250, past its 250 elements (gidx0=2, r0=50)");
    assert_int_equal(f.nranges, 2);
    assert_int_equal(f.range_id[1], 9);
    /* past the record's room, loops are dropped, not written over the end */
    for (int i = 0; i < ACCESS_FAULT_LOOPS + 5; i++) access_fault_add_loop(&f, 100 + (unsigned)i, "r9", i);
    assert_int_equal(f.nranges, ACCESS_FAULT_LOOPS);
    /* a name longer than the record's room is cut */
    AccessFault g = fault(OP_DEFINE_GLOBAL, 0, 1, 1, 1);
    access_fault_add_loop(&g, 1, "a_range_name_longer_than_twenty_three_characters", 0);
    assert_int_equal(strlen(g.range_name[0]), sizeof g.range_name[0] - 1);
    /* a small buffer gets what fits, terminated */
    char tiny[16];
    access_fault_message(&f, "output0", tiny, sizeof tiny);
    assert_int_equal(strlen(tiny), sizeof tiny - 1);
}

/* a RANGE and a SPECIAL named as listings name them, by the node */
static void test_loop_nodes(void **state) {
    (void)state;
    UCtx *c = uctx_new();
    const UOp *four = uop_const_int(c, DT_INDEX, 4);
    const UOp *r12 = uop_new(c, OP_RANGE, DT_INDEX, &four, 1,
                             arg_tuple(c, (const Arg *[]){arg_int(c, 1), arg_int(c, 2), arg_axis(c, AXIS_LOOP)}, 3));
    const UOp *g0 = uop_new(c, OP_SPECIAL, DT_INDEX, &four, 1, arg_str(c, "gidx0"));
    assert_non_null(r12);
    assert_non_null(g0);
    AccessFault f = fault(OP_DEFINE_GLOBAL, 0, 4, 4, 1);
    access_fault_add_node(&f, g0, 3);
    access_fault_add_node(&f, r12, 2);
    assert_int_equal(f.range_id[0], g0->id);
    char out[256];
    access_fault_message(&f, NULL, out, sizeof out);
    assert_string_equal(out, "INDEX %41 reads buffer 0 at 4, past its 4 elements (gidx0=3, r1_2=2)");
    uctx_free(c);
}

static void test_not_failed(void **state) {
    (void)state;
    char out[64];
    AccessFault f = {0};
    access_fault_message(&f, NULL, out, sizeof out);
    assert_string_equal(out, "every access was inside its buffer");
    access_fault_message(NULL, NULL, out, sizeof out);
    assert_string_equal(out, "every access was inside its buffer");
    access_fault_message(&f, NULL, NULL, 0); /* nothing to write into: nothing written */
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_buffers),
        cmocka_unit_test(test_loops),
        cmocka_unit_test(test_loop_nodes),
        cmocka_unit_test(test_not_failed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
