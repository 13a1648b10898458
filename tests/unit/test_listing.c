/* test_listing.c - the text listing: exact output, the parser's errors, and
 * the round trip parse(print(g)) == g on hand-made and random graphs. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "random_args.h"
#include "viz/listing.h"

static char *listing_of(const UOp *root, bool color) {
    StrBuf sb;
    sb_init(&sb);
    ListingOpts o = {.color = color};
    uop_listing(&sb, root, &o);
    return sb_take(&sb);
}

/* the example of listing.h */
static const UOp *build_example(UCtx *c) {
    const UOp *x = uop_var(c, "x", 0, 10);
    const UOp *four = uop_const_int(c, DT_INDEX, 4);
    const UOp *sum = uop_binary(c, OP_ADD, x, four);
    return uop_range(c, sum, 0, AXIS_REDUCE);
}

static void test_prints_header_example(void **state) {
    (void)state;
    UCtx *c = uctx_new();
    char *text = listing_of(build_example(c), false);
    assert_string_equal(text,
                        "%0 = DEFINE_VAR index arg=(\"x\", 0, 10)\n"
                        "%1 = CONST      index arg=4\n"
                        "%2 = ADD        index (%0, %1)\n"
                        "%3 = RANGE      index (%2) arg=(0, REDUCE)\n");
    free(text);
    uctx_free(c);
}

static void test_pads_labels_and_dtypes_and_prints_tags(void **state) {
    (void)state;
    UCtx *c = uctx_new();
    /* ten filler nodes so the ids reach two digits */
    for (int i = 0; i < 10; i++) uop_const_int(c, DT_INT32, 100 + i);
    const UOp *buf = uop_new(c, OP_DEFINE_GLOBAL, dt_ptr(DT_FLOAT32, 9, ADDR_GLOBAL), NULL, 0, arg_int(c, 0));
    const UOp *i0 = uop_const_int(c, DT_INDEX, 0);
    const UOp *src[2] = {buf, i0};
    const UOp *idx = uop_new_tagged(c, OP_INDEX, dt_ptr(DT_FLOAT32, 9, ADDR_GLOBAL), src, 2, NULL, arg_int(c, 7));
    const UOp *ld = uop_new(c, OP_LOAD, DT_FLOAT32, &idx, 1, NULL);
    const UOp *sink = uop_sink(c, &ld, 1);
    char *text = listing_of(sink, false);
    assert_string_equal(text,
                        "%10 = DEFINE_GLOBAL float32.ptr(9) arg=0\n"
                        "%11 = CONST         index          arg=0\n"
                        "%12 = INDEX         float32.ptr(9) (%10, %11) tag=7\n"
                        "%13 = LOAD          float32        (%12)\n"
                        "%14 = SINK          void           (%13)\n");
    free(text);
    uctx_free(c);
}

static void test_line_without_padding(void **state) {
    (void)state;
    UCtx *c = uctx_new();
    const UOp *r = build_example(c);
    StrBuf sb;
    sb_init(&sb);
    uop_listing_line(&sb, r->src[0]->src[1], NULL);
    assert_string_equal(sb_str(&sb), "%1 = CONST index arg=4");
    sb_free(&sb);
    uctx_free(c);
}

static void test_color_marks_ops(void **state) {
    (void)state;
    UCtx *c = uctx_new();
    char *text = listing_of(build_example(c), true);
    assert_non_null(strstr(text, "%2 = \x1b[32mADD\x1b[0m        index (%0, %1)\n"));
    assert_non_null(strstr(text, "\x1b[33mDEFINE_VAR\x1b[0m"));
    free(text);
    uctx_free(c);
}

static void test_parse_returns_same_node(void **state) {
    (void)state;
    UCtx *c = uctx_new();
    const UOp *r = build_example(c);
    char *text = listing_of(r, false);
    char err[256];
    assert_ptr_equal(uop_parse_listing(c, text, err, sizeof err), r);
    free(text);
    uctx_free(c);
}

static void test_parse_free_labels_comments_blank_lines(void **state) {
    (void)state;
    UCtx *c = uctx_new();
    const UOp *r = build_example(c);
    const char *text = "# a hand-written listing\n"
                       "\n"
                       "  %100 = DEFINE_VAR index arg=('x', 0, 10)   # Python quotes work too\n"
                       "%7=CONST index arg=4\n"
                       "%5 = ADD index (%100,%7)\n"
                       "%0 = RANGE index (%5) arg=(0, AxisType.REDUCE)\n"
                       "\n";
    char err[256] = "";
    const UOp *p = uop_parse_listing(c, text, err, sizeof err);
    assert_string_equal(err, "");
    assert_ptr_equal(p, r);
    uctx_free(c);
}

static void test_parse_into_other_context(void **state) {
    (void)state;
    UCtx *a = uctx_new(), *b = uctx_new();
    uop_const_int(a, DT_INT32, 5); /* shift ids in a */
    const UOp *ra = build_example(a);
    char *ta = listing_of(ra, false);
    char err[256];
    const UOp *rb = uop_parse_listing(b, ta, err, sizeof err);
    assert_non_null(rb);
    char *tb = listing_of(rb, false);
    /* same graph, other ids: read b's text back into a */
    assert_ptr_equal(uop_parse_listing(a, tb, err, sizeof err), ra);
    free(ta);
    free(tb);
    uctx_free(a);
    uctx_free(b);
}

static void expect_error(const char *text, const char *want) {
    UCtx *c = uctx_new();
    char err[512] = "";
    assert_null(uop_parse_listing(c, text, err, sizeof err));
    assert_string_equal(err, want);
    uctx_free(c);
}

static void test_parse_errors(void **state) {
    (void)state;
    expect_error("%0 = CONST index arg=1\n%1 = FROB index (%0)\n", "line 2, column 6: unknown op 'FROB'");
    expect_error("%0 = CONST flaot arg=1\n", "line 1, column 12: bad dtype 'flaot'");
    expect_error("%0 = CONST float32x arg=1\n", "line 1, column 12: bad dtype 'float32x'");
    expect_error("%0 = CONST index arg=1\n%1 = ADD index (%0, %2)\n%2 = CONST index arg=2\n",
                 "line 2, column 21: unknown label %2 (sources must be defined on an earlier line)");
    expect_error("%0 = CONST index arg=1\n%0 = CONST index arg=2\n", "line 2, column 1: label %0 is defined twice");
    expect_error("%0 = CONST index arg=1 junk\n", "line 1, column 24: unexpected text 'junk'");
    expect_error("0 = CONST index arg=1\n", "line 1, column 1: expected a node label like %3");
    expect_error("%0 CONST index arg=1\n", "line 1, column 4: expected '=' after the label");
    expect_error("%0 = CONST index arg=(1, 2\n", "line 1, column 27: expected ',' or ')' in a tuple");
    expect_error("%0 = CONST index (%0\n", "line 1, column 19: unknown label %0 (sources must be defined on an earlier line)");
    expect_error("%0 = CONST int32 arg=1\n%1 = CONST float32 arg=2.0\n%2 = ADD int32 (%0, %1)\n",
                 "line 3, column 6: ADD: sources have different dtypes, int32 (node 0) and float32 (node 1)");
    expect_error("%0 = ADD index\n", "line 1, column 6: ADD needs 2 sources, got 0");
    expect_error("# only a comment\n\n", "line 2, column 1: the listing has no nodes");
    expect_error("", "line 1, column 1: the listing has no nodes");
}

/* ---- random graphs ---- */

static const DType *random_value_dtype(void) {
    static const ScalarKind sks[] = {SK_INDEX, SK_BOOL, SK_INT8, SK_UINT16, SK_INT32, SK_INT64, SK_FLOAT16, SK_FLOAT32, SK_FLOAT64};
    const DType *d = dt_scalar(sks[rnd(9)]);
    return rnd(4) == 0 && d->sk != SK_INDEX ? dt_vec(d, 2 + (int)rnd(3)) : d;
}

static const UOp *random_graph(UCtx *c, int size) {
    const UOp *nodes[64];
    int n = 0;
    while (n < size) {
        const UOp *u = NULL;
        switch (rnd(5)) {
        case 0: { /* CONST of a fitting kind */
            const DType *d = dt_with_count(random_value_dtype(), 1);
            if (dt_is_float(d)) u = uop_const_float(c, d, rnd(2) ? 0.1 * rnd(50) : (rnd(2) ? -0.0 : NAN));
            else u = uop_const_int(c, d, (int64_t)rnd(100) - 50);
            break;
        }
        case 1: { /* a binary op on a node and a fresh const of its dtype */
            if (!n) break;
            const UOp *a = nodes[rnd((uint32_t)n)];
            if (dt_is_ptr(a->dtype) || a->dtype->sk == SK_VOID || a->dtype->count != 1) break;
            const UOp *b = dt_is_float(a->dtype) ? uop_const_float(c, a->dtype, 2.5) : uop_const_int(c, a->dtype, 3);
            static const Op ops[] = {OP_ADD, OP_MUL, OP_MAX, OP_CMPLT, OP_CMPNE};
            u = uop_binary(c, ops[rnd(5)], a, b);
            break;
        }
        case 2: u = uop_var(c, rnd(2) ? "x" : "it's \"n\"", 0, (int64_t)rnd(100)); break;
        case 3: u = uop_new(c, OP_DEFINE_GLOBAL, dt_ptr(random_value_dtype(), rnd(2) ? -1 : 64, (AddrSpace)rnd(3)),
                            NULL, 0, arg_int(c, rnd(4)));
            break;
        default: { /* CUSTOM with any sources, arg and tag */
            const UOp *src[3];
            int ns = n ? (int)rnd(4) : 0;
            for (int i = 0; i < ns; i++) src[i] = nodes[rnd((uint32_t)n)];
            u = uop_new_tagged(c, OP_CUSTOM, random_value_dtype(), src, ns, rnd(4) ? random_arg(c, 0) : NULL,
                               rnd(3) == 0 ? random_arg(c, 1) : NULL);
        }
        }
        if (u) nodes[n++] = u;
    }
    return uop_sink(c, nodes, n);
}

static void test_random_round_trip(void **state) {
    (void)state;
    rng_seed(0x2545F4914F6CDD1Dull);
    UCtx *c = uctx_new(), *other = uctx_new();
    for (int g = 0; g < 400; g++) {
        const UOp *root = random_graph(c, 1 + (int)rnd(40));
        assert_non_null(root);
        char *text = listing_of(root, false);
        char err[512] = "";
        const UOp *back = uop_parse_listing(c, text, err, sizeof err);
        if (back != root) fail_msg("graph %d did not round-trip (%s):\n%s", g, err, text);
        /* through another context and back */
        const UOp *o = uop_parse_listing(other, text, err, sizeof err);
        if (!o) fail_msg("graph %d failed in another context (%s)", g, err);
        char *text2 = listing_of(o, false);
        assert_ptr_equal(uop_parse_listing(c, text2, err, sizeof err), root);
        free(text);
        free(text2);
    }
    uctx_free(c);
    uctx_free(other);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_prints_header_example),
        cmocka_unit_test(test_pads_labels_and_dtypes_and_prints_tags),
        cmocka_unit_test(test_line_without_padding),
        cmocka_unit_test(test_color_marks_ops),
        cmocka_unit_test(test_parse_returns_same_node),
        cmocka_unit_test(test_parse_free_labels_comments_blank_lines),
        cmocka_unit_test(test_parse_into_other_context),
        cmocka_unit_test(test_parse_errors),
        cmocka_unit_test(test_random_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
