/* test_ir.c - the IR core: op table, dtypes and promotion, args, interning,
 * constructor checks, toposort. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/ir/uop.h"
#include "core/ir/renumber_ranges.h"
#include "core/util/stack_guard.h"
#include "core/util/arena.h"

static void test_op_table(void **state) {
    (void)state;
    assert_string_equal(op_name(OP_ADD), "ADD");
    assert_string_equal(op_name(OP_DEFINE_GLOBAL), "DEFINE_GLOBAL");
    assert_string_equal(op_name(OP_PTRCAT), "PTRCAT");
    Op op;
    assert_true(op_from_name("MULACC", &op));
    assert_int_equal(op, OP_MULACC);
    assert_true(op_from_name("Ops.WHERE", &op));
    assert_int_equal(op, OP_WHERE);
    assert_false(op_from_name("ADDD", &op));
    assert_true(op_is(OP_ADD, OPF_COMMUTATIVE));
    assert_false(op_is(OP_SUB, OPF_COMMUTATIVE));
    assert_true(op_is(OP_CMPLT, OPF_COMPARISON));
    assert_true(op_is_alu(OP_WHERE));
    assert_false(op_is_alu(OP_CAST));
    assert_true(op_is(OP_RESHAPE, OPF_MOVEMENT));
    /* tinygrad v0.12.0 order: defines first, expander ops last */
    assert_true(OP_DEFINE_GLOBAL < OP_SINK && OP_SINK < OP_INDEX && OP_INDEX < OP_ADD && OP_ADD < OP_RANGE);
    assert_int_equal(OP_COUNT - 1, OP_PTRCAT);
}

static const char *fmt(const DType *d, bool tg) {
    static char buf[128];
    StrBuf sb;
    sb_init(&sb);
    if (tg) dt_format_tinygrad(&sb, d); else dt_format(&sb, d);
    snprintf(buf, sizeof buf, "%s", sb_str(&sb));
    sb_free(&sb);
    return buf;
}

static void test_dtypes(void **state) {
    (void)state;
    const DType *f = DT_FLOAT32;
    assert_ptr_equal(dt_vec(f, 4), dt_vec(f, 4));
    assert_ptr_equal(dt_vec(f, 1), f);
    assert_int_equal(dt_vec(f, 4)->count, 4);
    assert_ptr_equal(dt_vec(f, 4)->scalar, f);
    assert_null(dt_vec(dt_vec(f, 4), 2));
    const DType *p = dt_ptr(f, 9, ADDR_GLOBAL);
    assert_ptr_equal(p, dt_ptr(f, 9, ADDR_GLOBAL));
    assert_ptr_not_equal(p, dt_ptr(f, 10, ADDR_GLOBAL));
    assert_ptr_not_equal(p, dt_ptr(f, 9, ADDR_LOCAL));
    assert_ptr_equal(p->base, f);
    assert_string_equal(fmt(dt_vec(f, 4), false), "float32.vec(4)");
    assert_string_equal(fmt(p, false), "float32.ptr(9)");
    assert_string_equal(fmt(dt_ptr(f, 16, ADDR_LOCAL), false), "float32.ptr(16, local)");
    assert_string_equal(fmt(p, true), "dtypes.float.ptr(9)");
    assert_string_equal(fmt(dt_ptr(f, 16, ADDR_LOCAL), true), "dtypes.float.ptr(16, AddrSpace.LOCAL)");
    assert_string_equal(fmt(dt_scalar(SK_INT64), true), "dtypes.long");
    assert_string_equal(fmt(dt_scalar(SK_UINT8), true), "dtypes.uchar");
    assert_string_equal(fmt(dt_ptr_vec(p, 4), false), "float32.ptr(9).vec(4)");
    const DType *d;
    assert_int_equal(dt_parse("dtypes.float.ptr(16, AddrSpace.LOCAL)", &d), 37);
    assert_ptr_equal(d, dt_ptr(f, 16, ADDR_LOCAL));
    assert_true(dt_parse("half.vec(2)", &d) > 0);
    assert_ptr_equal(d, dt_vec(dt_scalar(SK_FLOAT16), 2));
    assert_true(dt_parse("int32.ptr(9).vec(4)", &d) > 0);
    assert_ptr_equal(d, dt_ptr_vec(dt_ptr(DT_INT32, 9, ADDR_GLOBAL), 4));
    assert_int_equal(dt_parse("floaty", &d), 0);
    /* promotion follows tinygrad's lattice */
    assert_ptr_equal(dt_least_upper(DT_INT32, DT_FLOAT32), DT_FLOAT32);
    assert_ptr_equal(dt_least_upper(dt_scalar(SK_INT8), dt_scalar(SK_UINT8)), dt_scalar(SK_INT16));
    assert_ptr_equal(dt_least_upper(DT_BOOL, DT_INT32), DT_INT32);
    assert_ptr_equal(dt_least_upper(DT_INT64, dt_scalar(SK_UINT64)), dt_scalar(SK_FP8E4M3));
    assert_ptr_equal(dt_least_upper(dt_scalar(SK_FLOAT16), dt_scalar(SK_BFLOAT16)), DT_FLOAT32);
    assert_true(dt_can_lossless_cast(DT_INT32, DT_INT64));
    assert_false(dt_can_lossless_cast(DT_INT64, DT_INT32));
    assert_true(dt_can_lossless_cast(DT_INT32, DT_INDEX));
    assert_int_equal(dt_max_int(DT_INT32), 2147483647);
    assert_int_equal(dt_min_int(dt_scalar(SK_INT8)), -128);
    assert_int_equal(dt_max_int(dt_scalar(SK_UINT16)), 65535);
}

static const char *argstr(const Arg *a, bool py) {
    static char buf[256];
    StrBuf sb;
    sb_init(&sb);
    if (py) arg_format_python(&sb, a); else arg_format(&sb, a);
    snprintf(buf, sizeof buf, "%s", sb_str(&sb));
    sb_free(&sb);
    return buf;
}

static void test_args(void **state) {
    (void)state;
    UCtx *c = uctx_new();
    assert_ptr_equal(arg_int(c, 3), arg_int(c, 3));
    assert_ptr_not_equal(arg_int(c, 3), arg_float(c, 3.0));
    assert_ptr_equal(arg_float(c, NAN), arg_float(c, -NAN));
    const Arg *items[2] = {arg_int(c, 0), arg_axis(c, AXIS_REDUCE)};
    const Arg *t = arg_tuple(c, items, 2);
    assert_ptr_equal(t, arg_tuple(c, items, 2));
    assert_string_equal(argstr(t, false), "(0, REDUCE)");
    assert_string_equal(argstr(t, true), "(0, AxisType.REDUCE)");
    const Arg *one[1] = {arg_int(c, 5)};
    assert_string_equal(argstr(arg_tuple(c, one, 1), true), "(5,)");
    assert_string_equal(argstr(arg_float(c, 1.0), false), "1.0");
    assert_string_equal(argstr(arg_float(c, 0.1), false), "0.1");
    assert_string_equal(argstr(arg_float(c, -INFINITY), false), "-inf");
    assert_string_equal(argstr(arg_bool(c, true), true), "True");
    assert_string_equal(argstr(arg_str(c, "it's"), true), "\"it's\"");
    assert_string_equal(argstr(arg_str(c, "a'b\"c"), true), "'a\\'b\"c'");
    assert_string_equal(argstr(arg_float(c, 1e6), true), "1000000.0");
    assert_string_equal(argstr(arg_float(c, 1e16), true), "1e+16");
    assert_string_equal(argstr(arg_str(c, "gidx0"), false), "\"gidx0\"");
    assert_string_equal(argstr(arg_op(c, OP_ADD), false), "Ops.ADD");
    assert_string_equal(argstr(arg_dtype(c, DT_FLOAT32), true), "dtypes.float");
    /* arg_equal works across contexts */
    UCtx *c2 = uctx_new();
    const Arg *items2[2] = {arg_int(c2, 0), arg_axis(c2, AXIS_REDUCE)};
    const Arg *t2 = arg_tuple(c2, items2, 2);
    assert_ptr_not_equal(t, t2);
    assert_true(arg_equal(t, t2));
    assert_ptr_equal(arg_import(c, t2), t);
    uctx_free(c2);
    uctx_free(c);
}

static void test_arg_parse_round_trip(void **state) {
    (void)state;
    UCtx *c = uctx_new();
    const char *texts[] = {"3", "-7", "1.5", "1.0", "-0.0", "inf", "-inf", "nan", "true", "false", "Invalid",
                           "\"a \\\"q\\\" b\"", "Ops.ADD", "REDUCE", "float32", "float32.ptr(16, local)",
                           "(0, REDUCE)", "(1,)", "()", "(\"x\", 0, 10)", "((1, 2), (3, None))",
                           "1e+100", "0.1", "9223372036854775807", "-9223372036854775808"};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        const Arg *a;
        char err[200];
        int n = arg_parse(c, texts[i], &a, err, sizeof err);
        assert_int_equal(n, (int)strlen(texts[i]));
        const Arg *b;
        char *again = strdup(argstr(a, false));
        assert_int_equal(arg_parse(c, again, &b, err, sizeof err), (int)strlen(again));
        assert_ptr_equal(a, b);
        free(again);
        /* the Python spelling reads back too */
        again = strdup(argstr(a, true));
        assert_true(arg_parse(c, again, &b, err, sizeof err) > 0);
        assert_ptr_equal(a, b);
        free(again);
    }
    const Arg *a;
    char err[200];
    assert_int_equal(arg_parse(c, "(1, 2", &a, err, sizeof err), 0);
    assert_non_null(strstr(err, "column 6"));
    assert_int_equal(arg_parse(c, "BOGUS", &a, err, sizeof err), 0);
    assert_non_null(strstr(err, "unknown axis type 'BOGUS'"));
    assert_int_equal(arg_parse(c, "99999999999999999999", &a, err, sizeof err), 0);
    assert_int_equal(arg_parse(c, "\"open", &a, err, sizeof err), 0);
    assert_non_null(strstr(err, "unterminated"));
    uctx_free(c);
}

static void test_interning(void **state) {
    (void)state;
    UCtx *c = uctx_new();
    const UOp *x = uop_var(c, "x", 0, 10);
    const UOp *four = uop_const_int(c, DT_INDEX, 4);
    const UOp *a = uop_binary(c, OP_ADD, x, four);
    const UOp *b = uop_binary(c, OP_ADD, x, four);
    assert_non_null(a);
    assert_ptr_equal(a, b);
    assert_ptr_not_equal(a, uop_binary(c, OP_ADD, four, x));
    assert_int_equal(x->id, 0);
    assert_int_equal(four->id, 1);
    assert_int_equal(a->id, 2);
    assert_ptr_equal(uctx_node(c, 2), a);
    assert_null(uctx_node(c, 99));
    assert_int_equal(uctx_node_count(c), 4); /* x, 4, x+4, 4+x */
    /* tags make distinct nodes */
    const UOp *s[2] = {x, four};
    const UOp *tagged = uop_new_tagged(c, OP_ADD, DT_INDEX, s, 2, NULL, arg_int(c, 1));
    assert_ptr_not_equal(tagged, a);
    /* many nodes: the table grows and ids stay dense */
    const UOp *acc = x;
    for (int i = 0; i < 100000; i++) acc = uop_binary(c, OP_ADD, acc, uop_const_int(c, DT_INDEX, i % 7));
    assert_non_null(acc);
    const UOp *again = x;
    for (int i = 0; i < 100000; i++) again = uop_binary(c, OP_ADD, again, uop_const_int(c, DT_INDEX, i % 7));
    assert_ptr_equal(acc, again);
    uctx_free(c);
}

/* nodes sit on 64-byte lines, so a node of two sources is one cache line */
static void test_node_layout(void **state) {
    (void)state;
    assert_true(sizeof(UOp) + 2 * sizeof(UOp *) <= 64);
    UCtx *c = uctx_new();
    const UOp *x = uop_var(c, "x", 0, 10);
    const UOp *acc = x;
    for (int i = 0; i < 5000; i++) {
        /* args of several sizes go to the same arena between the nodes */
        const UOp *k = uop_const_int(c, DT_INDEX, i);
        acc = uop_binary(c, i % 2 ? OP_ADD : OP_MUL, acc, k);
        assert_non_null(acc);
        assert_int_equal((uintptr_t)acc % 64, 0);
        assert_int_equal((uintptr_t)k % 64, 0);
        if (i % 500 == 0) assert_non_null(uop_var(c, i % 1000 ? "a_rather_long_variable_name" : "y", 0, i));
    }
    const UOp *w = uop_where(c, uop_binary(c, OP_CMPLT, x, acc), x, acc);
    assert_int_equal((uintptr_t)w % 64, 0);
    uctx_free(c);

    /* the allocator itself: aligned, zeroed, not overlapping, across chunks
     * and for blocks larger than a chunk */
    Arena a;
    arena_init(&a);
    unsigned char *prev = NULL;
    size_t prev_n = 0;
    for (int i = 0; i < 4000; i++) {
        size_t n = i % 97 == 0 ? 200000 : (size_t)(1 + i % 130);
        unsigned char *p = arena_alloc_lines(&a, n);
        assert_non_null(p);
        assert_int_equal((uintptr_t)p % 64, 0);
        for (size_t k = 0; k < n; k++) assert_int_equal(p[k], 0);
        memset(p, 0xab, n);
        if (prev) assert_true(p + n <= prev || prev + prev_n <= p);
        if (i % 3 == 0) assert_non_null(arena_alloc(&a, (size_t)(1 + i % 40))); /* unaligned neighbours */
        prev = p;
        prev_n = n;
    }
    arena_free(&a);
}

static void test_checks(void **state) {
    (void)state;
    UCtx *c = uctx_new();
    const UOp *x = uop_var(c, "x", 0, 10);
    const UOp *f = uop_const_float(c, DT_FLOAT32, 1.5);
    assert_null(uop_binary(c, OP_ADD, x, f));
    assert_non_null(strstr(uctx_error(c), "ADD: sources have different dtypes, index (node 0) and float32 (node 1)"));
    const UOp *three[3] = {x, x, x};
    assert_null(uop_new(c, OP_ADD, DT_INDEX, three, 3, NULL));
    assert_string_equal(uctx_error(c), "ADD needs 2 sources, got 3");
    assert_null(uop_binary(c, OP_IDIV, f, f));
    assert_non_null(strstr(uctx_error(c), "IDIV: needs integer sources"));
    assert_null(uop_where(c, x, x, x));
    assert_non_null(strstr(uctx_error(c), "WHERE: the condition"));
    const UOp *lt = uop_binary(c, OP_CMPLT, x, x);
    assert_non_null(lt);
    assert_ptr_equal(lt->dtype, DT_BOOL);
    assert_non_null(uop_where(c, lt, x, x));
    assert_null(uop_var(c, "y", 5, 1));
    assert_non_null(strstr(uctx_error(c), "min 5 is above max 1"));
    assert_null(uop_new(c, OP_CONST, DT_INT32, NULL, 0, arg_str(c, "no")));
    assert_null(uop_new(c, OP_CONST, DT_INT32, NULL, 0, NULL));
    const UOp *missing[2] = {x, NULL};
    assert_null(uop_new(c, OP_ADD, DT_INDEX, missing, 2, NULL));
    assert_non_null(strstr(uctx_error(c), "source 1 is missing"));
    const UOp *r = uop_range(c, uop_const_int(c, DT_INDEX, 8), 0, AXIS_REDUCE);
    assert_non_null(r);
    assert_string_equal(argstr(r->arg, false), "(0, REDUCE)");
    const UOp *v[2] = {x, x};
    assert_non_null(uop_new(c, OP_VECTORIZE, dt_vec(DT_INDEX, 2), v, 2, NULL));
    assert_null(uop_new(c, OP_VECTORIZE, dt_vec(DT_INDEX, 3), v, 2, NULL));
    assert_null(uop_new(c, OP_SINK, DT_INT32, v, 2, NULL));
    uctx_free(c);
}

static void test_toposort(void **state) {
    (void)state;
    UCtx *c = uctx_new();
    const UOp *x = uop_var(c, "x", 0, 10);
    const UOp *y = uop_var(c, "y", 0, 10);
    const UOp *a = uop_binary(c, OP_ADD, x, y);
    const UOp *m = uop_binary(c, OP_MUL, a, a);
    const UOp *s = uop_binary(c, OP_ADD, m, x);
    size_t n;
    const UOp **t = uop_toposort(s, &n);
    assert_int_equal(n, 5);
    assert_ptr_equal(t[n - 1], s);
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < t[i]->nsrc; k++) {
            size_t j = 0;
            while (t[j] != t[i]->src[k]) j++;
            assert_true(j < i);
        }
    free(t);
    /* a deep chain does not overflow the C stack */
    const UOp *acc = x;
    for (int i = 0; i < 200000; i++) acc = uop_binary(c, OP_ADD, acc, y);
    assert_int_equal(uop_graph_size(acc), 200002);
    /* its depth: the longest path down, counted in nodes */
    assert_int_equal(uop_graph_depth(acc), 200001);
    assert_int_equal(uop_graph_depth(x), 1);
    assert_int_equal(uop_graph_depth(uop_binary(c, OP_ADD, x, uop_binary(c, OP_MUL, y, x))), 3);
    uctx_free(c);
}

/* recurses until the guard says stop; the depth it reached (the frame is
 * used after the call, so the recursion cannot become a loop) */
__attribute__((noinline)) static int recurse_until_guard(const StackGuard *g, int depth) {
    volatile char frame[256];
    frame[0] = 1;
    if (stack_guard_exceeded(g)) return depth;
    int reached = recurse_until_guard(g, depth + 1);
    return frame[0] == 1 ? reached : -1;
}

/* the stack guard stops a recursion within its budget (half the stack limit,
 * at most 4 MiB), however large the frames are */
static void test_stack_guard(void **state) {
    (void)state;
    StackGuard g;
    stack_guard_init(&g);
    assert_true(g.budget > 0 && g.budget <= STACK_GUARD_BUDGET);
    assert_false(stack_guard_exceeded(&g));
    int depth = recurse_until_guard(&g, 0);
    /* frames of at least 256 bytes: no more than budget / 256 of them */
    assert_true(depth > 100);
    assert_true((size_t)depth <= g.budget / 256 + 1);
}

static bool stop_at_mul(const UOp *u, void *ud) {
    (void)ud;
    return uop_op(u) == OP_MUL;
}

/* a gated toposort lists a leaf but not what is under it */
static void test_toposort_gated(void **state) {
    (void)state;
    UCtx *c = uctx_new();
    const UOp *x = uop_var(c, "x", 0, 10), *y = uop_var(c, "y", 0, 10);
    const UOp *m = uop_binary(c, OP_MUL, x, uop_const_int(c, DT_INDEX, 3));
    const UOp *root = uop_binary(c, OP_ADD, m, y);
    size_t n;
    const UOp **all = uop_toposort(root, &n);
    assert_int_equal(n, 5);
    free(all);
    const UOp **some = uop_toposort_gated(root, stop_at_mul, NULL, &n);
    assert_int_equal(n, 3);
    assert_ptr_equal(some[0], m);
    assert_ptr_equal(some[1], y);
    assert_ptr_equal(some[2], root);
    free(some);
    uctx_free(c);
}

/* the axis id of a RANGE */
static int64_t axis_id(const UOp *r) { return r->arg->items[0]->v.i; }

static void test_renumber_ranges(void **state) {
    (void)state;
    UCtx *c = uctx_new();
    const UOp *three = uop_const_int(c, DT_INDEX, 3), *four = uop_const_int(c, DT_INDEX, 4);
    /* r7*4 + r2, with a REDUCE range r5 summed over: numbered 0, 1, 2 in order of appearance */
    const UOp *r7 = uop_range(c, three, 7, AXIS_LOOP), *r2 = uop_range(c, four, 2, AXIS_LOOP);
    const UOp *r5 = uop_range(c, four, 5, AXIS_REDUCE);
    const UOp *idx = uop_binary(c, OP_ADD, uop_binary(c, OP_MUL, r7, four), r2);
    const UOp *root = uop_binary(c, OP_ADD, idx, r5);
    const UOp *n = uop_renumber_ranges(c, root);
    assert_non_null(n);
    const UOp *m = n->src[0]->src[0]->src[0];
    assert_int_equal(uop_op(m), OP_RANGE);
    assert_int_equal(axis_id(m), 0);
    assert_int_equal(axis_id(n->src[0]->src[1]), 1);
    assert_int_equal(axis_id(n->src[1]), 2);
    assert_int_equal(n->src[1]->arg->items[1]->v.axis, AXIS_REDUCE);
    /* the same graph with other ids renumbers to the same node; a swap of
     * where the ranges are used does not */
    const UOp *s7 = uop_range(c, three, 0, AXIS_LOOP), *s2 = uop_range(c, four, 9, AXIS_LOOP);
    const UOp *other = uop_binary(c, OP_ADD, uop_binary(c, OP_ADD, uop_binary(c, OP_MUL, s7, four), s2),
                                  uop_range(c, four, 1, AXIS_REDUCE));
    assert_ptr_equal(uop_renumber_ranges(c, other), n);
    const UOp *swapped = uop_binary(c, OP_ADD, uop_binary(c, OP_ADD, uop_binary(c, OP_MUL, r2, four), r7), r5);
    assert_ptr_not_equal(uop_renumber_ranges(c, swapped), n);
    /* a graph without ranges is itself */
    assert_ptr_equal(uop_renumber_ranges(c, four), four);
    uctx_free(c);
}

/* uop_graph_has agrees with membership in the toposort for every node of
 * the context and every root: the walk it stops at older nodes loses none */
static void test_graph_has(void **state) {
    (void)state;
    UCtx *c = uctx_new();
    const UOp *x = uop_var(c, "x", 0, 10), *y = uop_var(c, "y", 0, 10);
    const UOp *e = uop_binary(c, OP_ADD, uop_binary(c, OP_MUL, x, uop_const_int(c, DT_INDEX, 3)), y);
    for (int i = 0; i < 6; i++) /* deeper sums reusing older nodes, and nodes of other graphs in between */
        e = uop_binary(c, i % 2 ? OP_ADD : OP_MUL, e, uop_binary(c, OP_ADD, i % 3 ? x : y, uop_const_int(c, DT_INDEX, i)));
    size_t total = uctx_node_count(c);
    for (uint32_t r = 0; r < total; r++) {
        const UOp *root = uctx_node(c, r);
        size_t n;
        const UOp **t = uop_toposort(root, &n);
        assert_non_null(t);
        for (uint32_t k = 0; k < total; k++) {
            bool in = false;
            for (size_t i = 0; i < n; i++) in = in || t[i]->id == k;
            assert_int_equal(uop_graph_has(root, uctx_node(c, k)), in);
        }
        free((void *)t);
    }
    assert_int_equal(uop_graph_has(NULL, x), 0);
    uctx_free(c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_graph_has),
        cmocka_unit_test(test_op_table),  cmocka_unit_test(test_dtypes),   cmocka_unit_test(test_args),
        cmocka_unit_test(test_arg_parse_round_trip), cmocka_unit_test(test_interning),
        cmocka_unit_test(test_node_layout),
        cmocka_unit_test(test_checks),    cmocka_unit_test(test_toposort), cmocka_unit_test(test_toposort_gated),
        cmocka_unit_test(test_stack_guard), cmocka_unit_test(test_renumber_ranges),
    };
    return cmocka_run_group_tests_name("ir", tests, NULL, NULL);
}
