/* test_diff.c - diffs of two graphs (unified and side by side) and the DOT
 * overlay: on a hand-rewritten graph, on chains rewritten deep down by
 * graph_rewrite (ids move, only what changed is shown), on nodes that only
 * moved, and on 10k-node graphs (fast, no recursion). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "core/rewrite/rewrite.h"
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

/* ---- a rewrite deep in a chain ---- */

/* SINK(MUL(...MUL(ADD(x, 7), 3)..., 3), NEG(y)) with n MULs */
static const UOp *chain(UCtx *c, int n) {
    const UOp *x = uop_var(c, "x", 0, 10);
    const UOp *v = uop_binary(c, OP_ADD, x, uop_const_int(c, DT_INDEX, 7));
    const UOp *three = uop_const_int(c, DT_INDEX, 3);
    for (int i = 0; i < n; i++) v = uop_binary(c, OP_MUL, v, three);
    const UOp *y = uop_var(c, "y", 0, 5);
    const UOp *s[2] = {v, uop_unary(c, OP_NEG, y)};
    return uop_sink(c, s, 2);
}

/* the leaf CONST 7 becomes CONST 8: every node above it is rebuilt */
static const UOp *rewrite_leaf(UCtx *c, const UOp *root) {
    static const RuleSpec specs[] = {RULE_TMPL("seven_to_eight", "7", "8")};
    char err[256];
    RuleSet *rs = ruleset_from_specs("leaf", specs, 1, err, sizeof err);
    if (!rs) fail_msg("rules did not compile: %s", err);
    const UOp *r = graph_rewrite(c, root, rs, NULL);
    ruleset_free(rs);
    assert_non_null(r);
    return r;
}

/* the lines of text that start with ch */
static int count_lines(const char *text, char ch) {
    int n = 0;
    for (const char *p = text; *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p))
        if (*p == ch && strncmp(p, "--- ", 4) != 0 && strncmp(p, "+++ ", 4) != 0) n++;
    return n;
}

static void test_rewrite_deep_in_a_chain_golden(void **state) {
    (void)state;
    UCtx *c = uctx_new();
    const UOp *a = chain(c, 4);
    const UOp *b = rewrite_leaf(c, a);
    assert_ptr_not_equal(a, b);
    StrBuf sb;
    sb_init(&sb);
    DiffOpts o = {.label_a = "before", .label_b = "after"};
    DiffStats st = uop_diff_text(&sb, a, b, &o);
    /* the leaf and its user change; the MULs and the SINK above got new ids
     * only because of that change, so they are context */
    assert_string_equal(sb_str(&sb),
                        "--- before\n"
                        "+++ after\n"
                        "@@ -1,6 +1,6 @@\n"
                        " %0  = DEFINE_VAR index arg=(\"x\", 0, 10)\n"
                        "-%1  = CONST      index arg=7\n"
                        "-%2  = ADD        index (%0, %1)\n"
                        "+%11 = CONST      index arg=8\n"
                        "+%12 = ADD        index (%0, %11)\n"
                        " %3  = CONST      index arg=3\n"
                        " %13 = MUL        index (%12, %3)  # was %4\n"
                        " %14 = MUL        index (%13, %3)  # was %5\n");
    assert_int_equal(st.added, 2);
    assert_int_equal(st.removed, 2);
    assert_int_equal(st.kept, 9);
    assert_int_equal(st.renamed, 5);
    sb_free(&sb);
    uctx_free(c);
}

static void test_rewrite_deep_in_a_long_chain(void **state) {
    (void)state;
    UCtx *c = uctx_new();
    const UOp *a = chain(c, 200);
    const UOp *b = rewrite_leaf(c, a);
    StrBuf sb;
    sb_init(&sb);
    DiffStats st = uop_diff_text(&sb, a, b, NULL);
    const char *s = sb_str(&sb);
    /* exactly the leaf and its user, though 201 nodes above got new ids */
    assert_int_equal(count_lines(s, '-'), 2);
    assert_int_equal(count_lines(s, '+'), 2);
    assert_non_null(strstr(s, "\n-%1   = CONST      index arg=7\n-%2   = ADD        index (%0, %1)\n"));
    assert_int_equal(st.added, 2);
    assert_int_equal(st.removed, 2);
    assert_int_equal(st.renamed, 201);
    assert_int_equal(st.kept, 201 + 4);
    /* one hunk: nothing far from the change is printed */
    assert_int_equal(count_lines(s, '@'), 1);
    assert_null(strstr(s, "SINK"));
    sb_free(&sb);
    uctx_free(c);
}

static void test_a_node_that_only_moved_is_unchanged(void **state) {
    (void)state;
    UCtx *c = uctx_new();
    /* two independent subgraphs p and q: SINK(p, q) lists p's nodes first,
     * SINK(q, p) q's; a line diff shows one of them removed and added */
    const UOp *p = uop_unary(c, OP_NEG, uop_unary(c, OP_NEG, uop_var(c, "p", 0, 3)));
    const UOp *q = uop_binary(c, OP_ADD, uop_var(c, "q", 0, 3), uop_const_int(c, DT_INDEX, 5));
    const UOp *s1[2] = {p, q}, *s2[2] = {q, p};
    const UOp *a = uop_sink(c, s1, 2), *b = uop_sink(c, s2, 2);
    StrBuf sb;
    sb_init(&sb);
    DiffOpts o = {.context = -1};
    DiffStats st = uop_diff_text(&sb, a, b, &o);
    assert_string_equal(sb_str(&sb),
                        "--- a\n"
                        "+++ b\n"
                        "@@ -7 +7 @@\n"
                        "-%6 = SINK       void  (%2, %5)\n"
                        "+%7 = SINK       void  (%5, %2)\n");
    assert_int_equal(st.added, 1);
    assert_int_equal(st.removed, 1);
    assert_int_equal(st.kept, 6);
    assert_int_equal(st.renamed, 0);
    sb_free(&sb);
    uctx_free(c);
}

/* index arithmetic lowered to int32 under a float chain: the lowered nodes
 * change, the CAST and everything above it only got new ids */
static void test_a_dtype_change_pairs_the_node(void **state) {
    (void)state;
    UCtx *c = uctx_new();
    const UOp *b = NULL, *a = NULL;
    for (int lowered = 0; lowered < 2; lowered++) {
        const DType *dt = lowered ? DT_INT32 : DT_INDEX;
        const UOp *two = uop_const_int(c, dt, 2);
        const UOp *m = uop_binary(c, OP_MUL, two, uop_const_int(c, dt, 3));
        const UOp *v = uop_cast(c, m, DT_FLOAT32);
        for (int i = 0; i < 3; i++) v = uop_unary(c, OP_NEG, v);
        const UOp *s[1] = {v};
        *(lowered ? &b : &a) = uop_sink(c, s, 1);
    }
    StrBuf sb;
    sb_init(&sb);
    DiffStats st = uop_diff_text(&sb, a, b, NULL);
    assert_string_equal(sb_str(&sb),
                        "--- a\n"
                        "+++ b\n"
                        "@@ -1,6 +1,6 @@\n"
                        "-%0  = CONST index   arg=2\n"
                        "-%1  = CONST index   arg=3\n"
                        "-%2  = MUL   index   (%0, %1)\n"
                        "+%8  = CONST int32   arg=2\n"
                        "+%9  = CONST int32   arg=3\n"
                        "+%10 = MUL   int32   (%8, %9)\n"
                        " %11 = CAST  float32 (%10)  # was %3\n"
                        " %12 = NEG   float32 (%11)  # was %4\n"
                        " %13 = NEG   float32 (%12)  # was %5\n");
    assert_int_equal(st.added, 3);
    assert_int_equal(st.removed, 3);
    assert_int_equal(st.renamed, 5); /* the CAST, the NEGs and the SINK */
    sb_free(&sb);
    uctx_free(c);
}

static void test_context_zero_and_five(void **state) {
    (void)state;
    UCtx *c = uctx_new();
    const UOp *a = chain(c, 12);
    const UOp *b = rewrite_leaf(c, a);
    StrBuf sb;
    sb_init(&sb);
    DiffOpts o = {.context = -1};
    uop_diff_text(&sb, a, b, &o);
    assert_string_equal(sb_str(&sb),
                        "--- a\n"
                        "+++ b\n"
                        "@@ -2,2 +2,2 @@\n"
                        "-%1  = CONST      index arg=7\n"
                        "-%2  = ADD        index (%0, %1)\n"
                        "+%19 = CONST      index arg=8\n"
                        "+%20 = ADD        index (%0, %19)\n");
    sb_clear(&sb);
    o.context = 5;
    uop_diff_text(&sb, a, b, &o);
    const char *s = sb_str(&sb);
    /* one line before the change (the file starts there), five after */
    assert_true(strncmp(s, "--- a\n+++ b\n@@ -1,8 +1,8 @@\n %0  = DEFINE_VAR", 44) == 0);
    assert_int_equal(count_lines(s, ' '), 6);
    assert_non_null(strstr(s, "\n %24 = MUL        index (%23, %3)  # was %7\n"));
    assert_null(strstr(s, "%25"));
    sb_free(&sb);
    uctx_free(c);
}

/* display columns of a UTF-8 line */
static size_t utf8_columns(const char *s, size_t len) {
    size_t n = 0;
    for (size_t k = 0; k < len; k++) n += ((unsigned char)s[k] & 0xC0) != 0x80;
    return n;
}

static void test_side_by_side(void **state) {
    (void)state;
    UCtx *c = uctx_new();
    const UOp *a = chain(c, 4);
    const UOp *b = rewrite_leaf(c, a);
    StrBuf sb;
    sb_init(&sb);
    DiffOpts o = {.side = true, .width = 80, .label_a = "before", .label_b = "after"};
    DiffStats st = uop_diff_text(&sb, a, b, &o);
    /* a changed pair is one row marked |, removed rows <, added rows > */
    assert_string_equal(sb_str(&sb),
                        "before                                   after\n"
                        "@@ -1,6 +1,6 @@\n"
                        "%0  = DEFINE_VAR index arg=(\"x\", 0, 1\xe2\x80\xa6   %0  = DEFINE_VAR index arg=(\"x\", 0, 10)\n"
                        "%1  = CONST      index arg=7           <\n"
                        "                                       > %11 = CONST      index arg=8\n"
                        "%2  = ADD        index (%0, %1)        | %12 = ADD        index (%0, %11)\n"
                        "%3  = CONST      index arg=3             %3  = CONST      index arg=3\n"
                        "%4  = MUL        index (%2, %3)          %13 = MUL        index (%12, %3)\n"
                        "%5  = MUL        index (%4, %3)          %14 = MUL        index (%13, %3)\n");
    assert_int_equal(st.added, 2);
    assert_int_equal(st.removed, 2);
    /* every line fits the width, whatever the width */
    for (int width = 10; width <= 120; width += 7) {
        sb_clear(&sb);
        o.width = width;
        o.context = width % 2 ? 2 : -1;
        uop_diff_text(&sb, a, b, &o);
        const char *s = sb_str(&sb);
        int lines = 0;
        for (const char *p = s; *p; lines++) {
            const char *nl = strchr(p, '\n');
            assert_non_null(nl);
            size_t cols = utf8_columns(p, (size_t)(nl - p));
            if (cols > (size_t)width) fail_msg("width %d: a line of %zu columns: %.*s", width, cols, (int)(nl - p), p);
            p = nl + 1;
        }
        assert_true(lines >= 5); /* labels, @@, the rows of the three changes */
    }
    sb_free(&sb);
    uctx_free(c);
}

static void test_side_by_side_color(void **state) {
    (void)state;
    UCtx *c = uctx_new();
    const UOp *a = chain(c, 2);
    const UOp *b = rewrite_leaf(c, a);
    StrBuf sb;
    sb_init(&sb);
    DiffOpts o = {.side = true, .color = true, .width = 70};
    uop_diff_text(&sb, a, b, &o);
    const char *s = sb_str(&sb);
    assert_non_null(strstr(s, "\x1b[36m@@ -1,6 +1,6 @@\x1b[0m\n"));
    assert_non_null(strstr(s, "\n\x1b[31m%1  = CONST      index arg=7\x1b[0m      <\n"));
    assert_non_null(strstr(s, "\n                                  > \x1b[32m%9  = CONST      index arg=8\x1b[0m\n"));
    assert_non_null(strstr(s, "\n\x1b[31m%2  = ADD        index (%0, %1)\x1b[0m   | \x1b[32m%10 = ADD        index (%0, %9)\x1b[0m\n"));
    assert_non_null(strstr(s, "\n%3  = CONST      index arg=3        %3  = CONST      index arg=3\n")); /* kept: no colour */
    sb_free(&sb);
    uctx_free(c);
}

/* two graphs of 10k nodes: a chain whose bottom leaf is rewritten (every
 * node above gets a new id) beside a wide part that stays */
static void test_ten_thousand_nodes_fast(void **state) {
    (void)state;
    UCtx *c = uctx_new();
    const UOp *x = uop_var(c, "x", 0, 10);
    const UOp *v = uop_binary(c, OP_ADD, x, uop_const_int(c, DT_INDEX, 7));
    for (int i = 0; i < 5000; i++) v = uop_binary(c, OP_MUL, v, uop_const_int(c, DT_INDEX, 100 + i % 50));
    const UOp *w = uop_var(c, "y", 0, 5);
    for (int i = 0; i < 5000; i++) w = uop_binary(c, OP_ADD, w, uop_const_int(c, DT_INDEX, 1000 + i));
    const UOp *s[2] = {v, w};
    const UOp *a = uop_sink(c, s, 2);
    const UOp *b = rewrite_leaf(c, a);
    StrBuf sb;
    sb_init(&sb);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    DiffStats st = uop_diff_text(&sb, a, b, NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    printf("diff of two %zu-node graphs: %.2f ms\n", uop_graph_size(a), ms);
    assert_int_equal(st.added, 2);
    assert_int_equal(st.removed, 2);
    assert_int_equal(st.renamed, 5001);
    assert_true(ms < 1000); /* milliseconds in a normal build; sanitizers are slower */
    /* everything changed, side by side too */
    const UOp *z = uop_var(c, "z", 0, 1);
    const UOp *fresh[1] = {uop_unary(c, OP_NEG, z)};
    DiffOpts o = {.side = true};
    sb_clear(&sb);
    st = uop_diff_text(&sb, a, uop_sink(c, fresh, 1), &o);
    assert_int_equal(st.added, 3);
    assert_int_equal(st.removed, uop_graph_size(a)); /* the SINKs pair, changed */
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
        cmocka_unit_test(test_rewrite_deep_in_a_chain_golden),
        cmocka_unit_test(test_rewrite_deep_in_a_long_chain),
        cmocka_unit_test(test_a_node_that_only_moved_is_unchanged),
        cmocka_unit_test(test_a_dtype_change_pairs_the_node),
        cmocka_unit_test(test_context_zero_and_five),
        cmocka_unit_test(test_side_by_side),
        cmocka_unit_test(test_side_by_side_color),
        cmocka_unit_test(test_ten_thousand_nodes_fast),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
