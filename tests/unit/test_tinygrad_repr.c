/* test_tinygrad_repr.c - tinygrad's repr both ways: exact export against
 * text tinygrad v0.12.0 printed (tests/golden/tinygrad_*.txt), tolerant
 * import, errors, and the round trip on random graphs. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "random_args.h"
#include "viz/tinygrad_repr.h"

static char *read_golden(const char *name) {
    char path[256];
    snprintf(path, sizeof path, "tests/golden/%s", name);
    FILE *f = fopen(path, "rb");
    if (!f) fail_msg("cannot open %s (run the tests from the repository root)", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    assert_non_null(s);
    assert_int_equal(fread(s, 1, (size_t)n, f), (size_t)n);
    s[n] = 0;
    fclose(f);
    /* the file ends with a newline the exporter does not write */
    if (n && s[n - 1] == '\n') s[n - 1] = 0;
    return s;
}

static char *export(const UOp *u) {
    StrBuf sb;
    sb_init(&sb);
    char err[256];
    if (!uop_to_tinygrad(&sb, u, err, sizeof err)) fail_msg("export: %s", err);
    return sb_take(&sb);
}

static const UOp *mk(UCtx *c, Op op, const DType *dt, const Arg *arg, int n, ...) {
    const UOp *src[8];
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n; i++) src[i] = va_arg(ap, const UOp *);
    va_end(ap);
    const UOp *u = uop_new(c, op, dt, src, n, arg);
    if (!u) fail_msg("%s", uctx_error(c));
    return u;
}

/* the 3x3 matmul kernel exactly as tinygrad's scheduler builds it */
static const UOp *build_matmul(UCtx *c) {
    const DType *p9 = dt_ptr(DT_FLOAT32, 9, ADDR_GLOBAL), *ix = DT_INDEX, *f = DT_FLOAT32;
    const UOp *three = uop_const_int(c, ix, 3);
    const UOp *r1 = uop_range(c, three, 1, AXIS_LOOP), *r2 = uop_range(c, three, 2, AXIS_LOOP);
    const UOp *r0 = uop_range(c, three, 0, AXIS_REDUCE);
    const UOp *row = mk(c, OP_MUL, ix, NULL, 2, r1, three);
    const UOp *out = mk(c, OP_INDEX, p9, NULL, 2, mk(c, OP_DEFINE_GLOBAL, p9, arg_int(c, 0), 0),
                        mk(c, OP_ADD, ix, NULL, 2, row, r2));
    const UOp *ina = mk(c, OP_INDEX, f, NULL, 2, mk(c, OP_DEFINE_GLOBAL, p9, arg_int(c, 1), 0),
                        mk(c, OP_ADD, ix, NULL, 2, row, r0));
    const UOp *inb = mk(c, OP_INDEX, f, NULL, 2, mk(c, OP_DEFINE_GLOBAL, p9, arg_int(c, 2), 0),
                        mk(c, OP_ADD, ix, NULL, 2, mk(c, OP_MUL, ix, NULL, 2, r0, three), r2));
    const UOp *red = mk(c, OP_REDUCE, f, arg_op(c, OP_ADD), 2, mk(c, OP_MUL, f, NULL, 2, ina, inb), r0);
    const UOp *st = mk(c, OP_STORE, DT_VOID, NULL, 2, out, red);
    const UOp *end = mk(c, OP_END, DT_VOID, NULL, 3, st, r1, r2);
    return mk(c, OP_SINK, DT_VOID, NULL, 1, end);
}

static void test_export_matches_tinygrad_matmul(void **state) {
    (void)state;
    UCtx *c = uctx_new();
    char *want = read_golden("tinygrad_matmul_ast.txt");
    char *got = export(build_matmul(c));
    assert_string_equal(got, want);
    free(got);
    free(want);
    uctx_free(c);
}

static void test_import_matmul_gives_same_graph(void **state) {
    (void)state;
    UCtx *c = uctx_new();
    const UOp *built = build_matmul(c);
    char *text = read_golden("tinygrad_matmul_ast.txt");
    char err[256] = "";
    const UOp *imported = uop_from_tinygrad(c, text, err, sizeof err);
    assert_string_equal(err, "");
    assert_ptr_equal(imported, built);
    assert_int_equal(uop_graph_size(imported), 20);
    free(text);
    uctx_free(c);
}

static void test_misc_round_trips_text_exactly(void **state) {
    (void)state;
    UCtx *c = uctx_new();
    char *text = read_golden("tinygrad_misc.txt");
    char err[256] = "";
    const UOp *g = uop_from_tinygrad(c, text, err, sizeof err);
    assert_string_equal(err, "");
    assert_non_null(g);
    /* KernelInfo(...) is kept as a string arg holding its text */
    assert_int_equal(g->arg->kind, ARG_STR);
    assert_string_equal(g->arg->v.s, "KernelInfo(name='r_3_3', axis_types=(AxisType.LOOP,), dont_use_locals=False, "
                                     "applied_opts=(), opts_to_apply=None)");
    /* the CUSTOM node's strings and the ADD's tag */
    const UOp *custom = g->src[1];
    assert_string_equal(custom->arg->items[1]->v.s, "it's");
    assert_string_equal(custom->arg->items[0]->v.s, "say \"hi\"");
    assert_int_equal(custom->tag->kind, ARG_TUPLE);
    char *back = export(g);
    assert_string_equal(back, text);
    free(back);
    free(text);
    uctx_free(c);
}

static void test_python_float_and_string_spelling(void **state) {
    (void)state;
    UCtx *c = uctx_new();
    const Arg *items[8] = {arg_float(c, 1e6), arg_float(c, 1e16), arg_float(c, 1.5e-7), arg_float(c, 0.0001),
                           arg_float(c, 123.25), arg_str(c, "a'b\"c\\"), arg_str(c, "x\ny"), arg_float(c, -2.0)};
    const UOp *u = uop_new(c, OP_CUSTOM, DT_VOID, NULL, 0, arg_tuple(c, items, 8));
    char *got = export(u);
    assert_string_equal(got, "UOp(Ops.CUSTOM, dtypes.void, arg=(1000000.0, 1e+16, 1.5e-07, 0.0001, 123.25, "
                             "'a\\'b\"c\\\\', 'x\\ny', -2.0), src=())");
    char err[256] = "";
    assert_ptr_equal(uop_from_tinygrad(c, got, err, sizeof err), u);
    free(got);
    uctx_free(c);
}

static void test_tolerant_import(void **state) {
    (void)state;
    UCtx *c = uctx_new();
    char err[256] = "";
    const UOp *a = uop_var(c, "a", 0, 10);
    const UOp *inf = uop_const_float(c, DT_FLOAT32, INFINITY);
    const Arg *tup1[1] = {arg_int(c, 3)};
    const UOp *want = uop_new_tagged(c, OP_CUSTOM, dt_vec(DT_FLOAT32, 4), (const UOp *[]){a, inf, a}, 3,
                                     arg_tuple(c, tup1, 1), arg_bool(c, true));
    const char *text = "  x0 := UOp( Ops.CUSTOM ,\n dtypes.float.vec( 4 ) , src = (\n"
                       "     x1:=UOp(Ops.DEFINE_VAR, dtypes.index, arg=(\"a\", 0, 10)),\n"
                       "     UOp(Ops.CONST, dtype=dtypes.float32, arg=math.inf),\n"
                       "     x1), arg = ( 3 , ) ,tag=True , )  \n";
    assert_ptr_equal(uop_from_tinygrad(c, text, err, sizeof err), want);
    assert_string_equal(err, "");
    /* a SINK with no dtype, arg or src */
    assert_ptr_equal(uop_from_tinygrad(c, "UOp(Ops.SINK)", err, sizeof err), uop_sink(c, NULL, 0));
    uctx_free(c);
}

static void expect_error(const char *text, const char *want) {
    UCtx *c = uctx_new();
    char err[512] = "";
    assert_null(uop_from_tinygrad(c, text, err, sizeof err));
    assert_string_equal(err, want);
    uctx_free(c);
}

static void test_import_errors(void **state) {
    (void)state;
    expect_error("UOp(Ops.FROB, dtypes.void, arg=None, src=())", "line 1, column 5: unknown op 'Ops.FROB'");
    expect_error("UOp(Ops.SINK, dtypes.flot, arg=None, src=())", "line 1, column 15: bad dtype 'dtypes.flot'");
    expect_error("UOp(Ops.SINK, dtypes.void, arg=None, src=(\n  x3,))", "line 2, column 3: x3 is used before it is defined");
    expect_error("UOp(Ops.SINK, dtypes.void, arg=None, src=()) junk", "line 1, column 46: unexpected text after the graph");
    expect_error("UOp(Ops.SINK, dtypes.void, arg=(1, 2, src=())", "line 1, column 39: unknown name 'src' in an arg");
    expect_error("UOp(Ops.SINK, dtypes.void, arg=None, src=(\n  UOp(Ops.ADD, dtypes.int, arg=None, src=()),))",
                 "line 2, column 3: ADD needs 2 sources, got 0");
    expect_error("UOp(Ops.SINK, dtypes.void, arg=None, colour=3)", "line 1, column 38: unknown keyword 'colour'");
    expect_error("UOp(Ops.SINK, dtypes.void, arg=None, src=(", "line 1, column 43: expected UOp(...) or a name like x3");
    expect_error("", "line 1, column 1: expected UOp(...) or a name like x3");
}

/* ---- random graphs ---- */

static void test_random_round_trip(void **state) {
    (void)state;
    rng_seed(0x9E3779B97F4A7C15ull);
    UCtx *c = uctx_new();
    for (int g = 0; g < 300; g++) {
        const UOp *nodes[48];
        int n = 0, size = 1 + (int)rnd(30);
        while (n < size) {
            const UOp *src[3];
            int ns = n ? (int)rnd(4) : 0;
            for (int i = 0; i < ns; i++) src[i] = nodes[rnd((uint32_t)n)];
            Op op = rnd(2) ? OP_CUSTOM : OP_NOOP;
            const UOp *u = uop_new_tagged(c, op, rnd(2) ? DT_INT32 : dt_ptr(DT_FLOAT32, 9, ADDR_REG), src, ns,
                                          rnd(4) ? random_arg(c, 0) : NULL, rnd(3) == 0 ? random_arg(c, 1) : NULL);
            assert_non_null(u);
            nodes[n++] = u;
        }
        const UOp *root = uop_sink(c, nodes, n);
        char *text = export(root);
        char err[512] = "";
        const UOp *back = uop_from_tinygrad(c, text, err, sizeof err);
        if (back != root) fail_msg("graph %d did not round-trip (%s):\n%s", g, err, text);
        free(text);
    }
    uctx_free(c);
}

static void test_deep_graphs(void **state) {
    (void)state;
    UCtx *c = uctx_new();
    const UOp *u = uop_const_int(c, DT_INT32, 1);
    for (int i = 0; i < 1000; i++) u = uop_unary(c, OP_NEG, u);
    char *text = export(u);
    char err[256] = "";
    assert_ptr_equal(uop_from_tinygrad(c, text, err, sizeof err), u);
    free(text);
    /* a graph nested 100000 deep exports with its indent capped at 200
     * spaces: linear text (each NEG line is its indent and 44 characters, the
     * closing parentheses 3 per node), which reads back as the same graph */
    for (int i = 1000; i < 100000; i++) u = uop_unary(c, OP_NEG, u);
    StrBuf sb;
    sb_init(&sb);
    assert_true(uop_to_tinygrad(&sb, u, err, sizeof err));
    assert_true(sb.len < (size_t)100001 * (TINYGRAD_REPR_MAX_INDENT + 60));
    assert_ptr_equal(uop_from_tinygrad(c, sb_str(&sb), err, sizeof err), u);
    const char *last = strrchr(sb_str(&sb), '\n') + 1;
    assert_int_equal(strspn(last, " "), TINYGRAD_REPR_MAX_INDENT);
    /* the importer reads any nesting (here 100000 levels, not indented) */
    sb_clear(&sb);
    for (int i = 0; i < 100000; i++) sb_puts(&sb, "UOp(Ops.NEG, dtypes.int, src=(");
    sb_puts(&sb, "UOp(Ops.CONST, dtypes.int, arg=1, src=())");
    for (int i = 0; i < 100000; i++) sb_puts(&sb, ",))");
    assert_ptr_equal(uop_from_tinygrad(c, sb_str(&sb), err, sizeof err), u);
    /* and an unclosed one is an error at its end, not a crash */
    sb_clear(&sb);
    for (int i = 0; i < 100000; i++) sb_puts(&sb, "UOp(Ops.NEG, dtypes.int, src=(");
    assert_null(uop_from_tinygrad(c, sb_str(&sb), err, sizeof err));
    assert_string_equal(err, "line 1, column 3000001: expected UOp(...) or a name like x3");
    sb_free(&sb);
    uctx_free(c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_export_matches_tinygrad_matmul),
        cmocka_unit_test(test_import_matmul_gives_same_graph),
        cmocka_unit_test(test_misc_round_trips_text_exactly),
        cmocka_unit_test(test_python_float_and_string_spelling),
        cmocka_unit_test(test_tolerant_import),
        cmocka_unit_test(test_import_errors),
        cmocka_unit_test(test_random_round_trip),
        cmocka_unit_test(test_deep_graphs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
