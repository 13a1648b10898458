/* test_diff.c - unified diffs of listings and the DOT overlay, on a graph
 * and a hand-rewritten version of it. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include "viz/diff.h"

/* before: SINK(ADD(NEG(NEG(NEG(x))), 1), NEG^8(y));
 * after:  the ADD rewritten to MUL(..., 2), everything else shared */
typedef struct Pair { const UOp *before, *after; } Pair;

static Pair build_pair(UCtx *c) {
    const UOp *a = uop_var(c, "x", 0, 10);
    for (int i = 0; i < 3; i++) a = uop_unary(c, OP_NEG, a);
    const UOp *top_before = uop_binary(c, OP_ADD, a, uop_const_int(c, DT_INDEX, 1));
    const UOp *b = uop_var(c, "y", 0, 10);
    for (int i = 0; i < 8; i++) b = uop_unary(c, OP_NEG, b);
    const UOp *s1[2] = {top_before, b};
    const UOp *before = uop_sink(c, s1, 2);
    /* the rewritten version, built by hand */
    const UOp *two = uop_new(c, OP_CONST, DT_INDEX, NULL, 0, arg_int(c, 2));
    const UOp *ms[2] = {a, two};
    const UOp *top_after = uop_new(c, OP_MUL, DT_INDEX, ms, 2, NULL);
    const UOp *s2[2] = {top_after, b};
    const UOp *after = uop_new(c, OP_SINK, DT_VOID, s2, 2, NULL);
    return (Pair){before, after};
}

static void test_unified_diff_two_hunks(void **state) {
    (void)state;
    UCtx *c = uctx_new();
    Pair p = build_pair(c);
    StrBuf sb;
    sb_init(&sb);
    DiffOpts o = {.context = 2, .label_a = "stage 4", .label_b = "stage 5"};
    DiffStats st = uop_diff_text(&sb, p.before, p.after, &o);
    assert_string_equal(sb_str(&sb),
                        "--- stage 4\n"
                        "+++ stage 5\n"
                        "@@ -3,6 +3,6 @@\n"
                        " %2  = NEG        index (%1)\n"
                        " %3  = NEG        index (%2)\n"
                        "-%4  = CONST      index arg=1\n"
                        "-%5  = ADD        index (%3, %4)\n"
                        "+%16 = CONST      index arg=2\n"
                        "+%17 = MUL        index (%3, %16)\n"
                        " %6  = DEFINE_VAR index arg=(\"y\", 0, 10)\n"
                        " %7  = NEG        index (%6)\n"
                        "@@ -14,3 +14,3 @@\n"
                        " %13 = NEG        index (%12)\n"
                        " %14 = NEG        index (%13)\n"
                        "-%15 = SINK       void  (%5, %14)\n"
                        "+%18 = SINK       void  (%17, %14)\n");
    assert_int_equal(st.added, 3);
    assert_int_equal(st.removed, 3);
    assert_int_equal(st.kept, 13);
    sb_free(&sb);
    uctx_free(c);
}

static void test_default_context_and_labels(void **state) {
    (void)state;
    UCtx *c = uctx_new();
    Pair p = build_pair(c);
    StrBuf sb;
    sb_init(&sb);
    uop_diff_text(&sb, p.before, p.after, NULL);
    const char *s = sb_str(&sb);
    assert_true(strncmp(s, "--- a\n+++ b\n@@ -2,8 +2,8 @@\n %1  = NEG        index (%0)\n", strlen("--- a\n+++ b\n@@ -2,8 +2,8 @@\n %1  = NEG")) == 0);
    assert_non_null(strstr(s, "\n %8  = NEG        index (%7)\n@@ -13,4 +13,4 @@\n %12 = NEG        index (%11)\n"));
    sb_free(&sb);
    uctx_free(c);
}

static void test_no_context_and_edges_of_the_file(void **state) {
    (void)state;
    UCtx *c = uctx_new();
    const UOp *x = uop_var(c, "x", 0, 3);
    const UOp *n1 = uop_unary(c, OP_NEG, x);
    const UOp *y = uop_var(c, "y", 0, 3);
    const UOp *n2 = uop_unary(c, OP_NEG, y);
    StrBuf sb;
    sb_init(&sb);
    DiffOpts o = {.context = -1};
    DiffStats st = uop_diff_text(&sb, n1, n2, &o);
    assert_string_equal(sb_str(&sb),
                        "--- a\n"
                        "+++ b\n"
                        "@@ -1,2 +1,2 @@\n"
                        "-%0 = DEFINE_VAR index arg=(\"x\", 0, 3)\n"
                        "-%1 = NEG        index (%0)\n"
                        "+%2 = DEFINE_VAR index arg=(\"y\", 0, 3)\n"
                        "+%3 = NEG        index (%2)\n");
    assert_int_equal(st.kept, 0);
    /* only additions after a kept prefix: the empty side names the line before */
    const UOp *n3 = uop_unary(c, OP_NEG, n1);
    sb_clear(&sb);
    st = uop_diff_text(&sb, n1, n3, &o);
    assert_string_equal(sb_str(&sb), "--- a\n+++ b\n@@ -2,0 +3 @@\n+%4 = NEG        index (%1)\n");
    assert_int_equal(st.added, 1);
    assert_int_equal(st.removed, 0);
    assert_int_equal(st.kept, 2);
    sb_free(&sb);
    uctx_free(c);
}

static void test_identical_graphs_print_nothing(void **state) {
    (void)state;
    UCtx *c = uctx_new();
    Pair p = build_pair(c);
    StrBuf sb;
    sb_init(&sb);
    DiffStats st = uop_diff_text(&sb, p.before, p.before, NULL);
    assert_string_equal(sb_str(&sb), "");
    assert_int_equal(st.kept, 16);
    assert_int_equal(st.added + st.removed, 0);
    sb_free(&sb);
    uctx_free(c);
}

static void test_color(void **state) {
    (void)state;
    UCtx *c = uctx_new();
    Pair p = build_pair(c);
    StrBuf sb;
    sb_init(&sb);
    DiffOpts o = {.color = true};
    uop_diff_text(&sb, p.before, p.after, &o);
    assert_non_null(strstr(sb_str(&sb), "\x1b[31m-%4  = CONST      index arg=1\x1b[0m\n"));
    assert_non_null(strstr(sb_str(&sb), "\x1b[32m+%16 = CONST      index arg=2\x1b[0m\n"));
    assert_non_null(strstr(sb_str(&sb), "\x1b[36m@@ -2,8 +2,8 @@\x1b[0m\n"));
    sb_free(&sb);
    uctx_free(c);
}

static void test_dot_overlay(void **state) {
    (void)state;
    UCtx *c = uctx_new();
    Pair p = build_pair(c);
    StrBuf sb;
    sb_init(&sb);
    uop_diff_dot(&sb, p.before, p.after);
    const char *d = sb_str(&sb);
    assert_true(strncmp(d, "digraph uops {\n", 15) == 0);
    assert_non_null(strstr(d, "  n5 [label=\"ADD\\nindex\\nCONST1 1\\n%5\", fillcolor=\"#f4a6a6\"];\n"));   /* removed */
    assert_non_null(strstr(d, "  n17 [label=\"MUL\\nindex\\nCONST1 2\\n%17\", fillcolor=\"#a8e6a1\"];\n")); /* added */
    assert_non_null(strstr(d, "  n3 [label=\"NEG\\nindex\\n%3\", fillcolor=\"#e0e0e0\"];\n"));            /* kept */
    assert_non_null(strstr(d, "  n3 -> n17 [label=\"0\", color=\"#a8e6a1\"];\n"));
    assert_non_null(strstr(d, "  n5 -> n15 [label=\"0\", color=\"#f4a6a6\"];\n"));
    assert_null(strstr(d, "  n4 [")); /* the constants are folded */
    assert_true(strlen(d) > 2 && strcmp(d + strlen(d) - 2, "}\n") == 0);
    sb_free(&sb);
    uctx_free(c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unified_diff_two_hunks),
        cmocka_unit_test(test_default_context_and_labels),
        cmocka_unit_test(test_no_context_and_edges_of_the_file),
        cmocka_unit_test(test_identical_graphs_print_nothing),
        cmocka_unit_test(test_color),
        cmocka_unit_test(test_dot_overlay),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
