/* test_dot.c - DOT output: exact text, constant folding, the focus cut,
 * escaping, and rendering through the dot program. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "viz/dot.h"

static const UOp *build_example(UCtx *c) {
    const UOp *x = uop_var(c, "x", 0, 10);
    const UOp *four = uop_const_int(c, DT_INDEX, 4);
    const UOp *sum = uop_binary(c, OP_ADD, x, four);
    return uop_range(c, sum, 0, AXIS_REDUCE);
}

static char *dot_of(const UOp *root, const DotOpts *o) {
    StrBuf sb;
    sb_init(&sb);
    uop_dot(&sb, root, o);
    return sb_take(&sb);
}

static void test_exact_text_with_folded_const(void **state) {
    (void)state;
    UCtx *c = uctx_new();
    DotOpts o = {.title = "stage \"4\""};
    char *d = dot_of(build_example(c), &o);
    assert_string_equal(d,
        "digraph uops {\n"
        "  graph [labelloc=t, fontname=\"Helvetica\", label=\"stage \\\"4\\\"\"];\n"
        "  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=10];\n"
        "  edge [fontname=\"Helvetica\", fontsize=8, color=\"#606060\"];\n"
        "  n0 [label=\"DEFINE_VAR\\n(\\\"x\\\", 0, 10)\\nindex\\n%0\", fillcolor=\"#f2cb91\"];\n"
        "  n2 [label=\"ADD\\nindex\\nCONST1 4\\n%2\", fillcolor=\"#ffffc0\"];\n"
        "  n3 [label=\"RANGE\\n(0, REDUCE)\\nindex\\n%3\", fillcolor=\"#c8a0e0\"];\n"
        "  n0 -> n2 [label=\"0\"];\n"
        "  n2 -> n3;\n"
        "}\n");
    free(d);
    uctx_free(c);
}

static void test_keep_consts_draws_them(void **state) {
    (void)state;
    UCtx *c = uctx_new();
    DotOpts o = {.keep_consts = true};
    char *d = dot_of(build_example(c), &o);
    assert_non_null(strstr(d, "  n1 [label=\"CONST\\n4\\nindex\\n%1\", fillcolor=\"#e0e0e0\"];\n"));
    assert_non_null(strstr(d, "  n1 -> n2 [label=\"1\"];\n"));
    assert_non_null(strstr(d, "  n2 [label=\"ADD\\nindex\\n%2\""));
    assert_null(strstr(d, "graph [")); /* no title */
    free(d);
    /* a lone CONST root is still drawn when folding */
    char *lone = dot_of(uop_const_int(c, DT_INT32, 9), NULL);
    assert_non_null(strstr(lone, "[label=\"CONST\\n9\\nint32\\n%"));
    free(lone);
    uctx_free(c);
}

static void test_escapes_strings_and_shortens_args(void **state) {
    (void)state;
    UCtx *c = uctx_new();
    const UOp *u = uop_new(c, OP_CUSTOM, DT_VOID, NULL, 0, arg_str(c, "a\\b\"c"));
    char *d = dot_of(u, NULL);
    /* arg_format writes "a\\b\"c"; DOT escapes each backslash and quote again */
    assert_non_null(strstr(d, "label=\"CUSTOM\\n\\\"a\\\\\\\\b\\\\\\\"c\\\"\\n%0\""));
    free(d);
    const UOp *longer = uop_new(c, OP_CUSTOM, DT_VOID, NULL, 0,
                                arg_str(c, "0123456789012345678901234567890123456789xyz"));
    d = dot_of(longer, NULL);
    assert_non_null(strstr(d, "\\\"012345678901234567890123456789012345...\\n%1\""));
    free(d);
    uctx_free(c);
}

static void test_focus_cuts_to_neighbourhood(void **state) {
    (void)state;
    UCtx *c = uctx_new();
    /* a chain v -> n1 -> n2 -> ... -> n8 of NEGs on a variable */
    const UOp *chain[9];
    chain[0] = uop_var(c, "v", 0, 5);
    for (int i = 1; i < 9; i++) chain[i] = uop_unary(c, OP_NEG, chain[i - 1]);
    DotOpts o = {.focus = chain[4], .radius = 1};
    char *d = dot_of(chain[8], &o);
    for (int i = 0; i < 9; i++) {
        char want[32];
        snprintf(want, sizeof want, "  n%u [", chain[i]->id);
        if (i >= 3 && i <= 5) assert_non_null(strstr(d, want));
        else assert_null(strstr(d, want));
    }
    assert_non_null(strstr(d, "n3 -> n4;\n"));
    assert_non_null(strstr(d, "n4 -> n5;\n"));
    assert_null(strstr(d, "n2 -> n3"));
    assert_non_null(strstr(d, "  cut [shape=note, label=\"6 nodes more than 1 edges from %4 not shown\"];\n"));
    free(d);
    /* default radius 2 */
    DotOpts o2 = {.focus = chain[4]};
    d = dot_of(chain[8], &o2);
    assert_non_null(strstr(d, "  n2 ["));
    assert_non_null(strstr(d, "  n6 ["));
    assert_null(strstr(d, "  n7 ["));
    assert_non_null(strstr(d, "4 nodes more than 2 edges"));
    free(d);
    /* a focus outside the graph draws everything and says so */
    const UOp *other = uop_var(c, "w", 0, 1);
    DotOpts o3 = {.focus = other};
    d = dot_of(chain[8], &o3);
    assert_non_null(strstr(d, "  n8 ["));
    assert_non_null(strstr(d, "is not in this graph"));
    free(d);
    uctx_free(c);
}

static void test_render_svg(void **state) {
    (void)state;
    if (!dot_available()) skip();
    UCtx *c = uctx_new();
    char *d = dot_of(build_example(c), NULL);
    char path[] = "/tmp/uopdb-test-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    char err[512] = "";
    assert_true(dot_render(d, "svg", path, err, sizeof err));
    assert_string_equal(err, "");
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char buf[4096];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    assert_non_null(strstr(buf, "<svg"));
    assert_non_null(strstr(buf, "DEFINE_VAR"));
    /* broken DOT text: dot's own message comes back */
    assert_false(dot_render("digraph { a -> ; }", "svg", path, err, sizeof err));
    assert_non_null(strstr(err, "dot failed (exit status 1) writing"));
    assert_non_null(strstr(err, "syntax error"));
    unlink(path);
    free(d);
    uctx_free(c);
}

static void test_render_rejects_bad_format_and_missing_dot(void **state) {
    (void)state;
    char err[512] = "";
    assert_false(dot_render("digraph {}", "svg; rm -rf /", "/tmp/x.svg", err, sizeof err));
    assert_string_equal(err, "unknown output format 'svg; rm -rf /' (use svg, png, pdf, dot, json or plain)");
    /* a format with a newline (from a file name) is shown on one line, cut when long */
    assert_false(dot_render("digraph {}", "x,)),\n    y", "/tmp/x.svg", err, sizeof err));
    assert_string_equal(err, "unknown output format 'x,)),\\n    y' (use svg, png, pdf, dot, json or plain)");
    char long_format[300];
    memset(long_format, 'q', sizeof long_format - 1);
    long_format[sizeof long_format - 1] = 0;
    assert_false(dot_render("digraph {}", long_format, "/tmp/x.svg", err, sizeof err));
    assert_null(strchr(err, '\n'));
    assert_true(strstr(err, "...' (use svg") != NULL);
    /* with no dot on the PATH */
    char *old = getenv("PATH") ? strdup(getenv("PATH")) : NULL;
    setenv("PATH", "/nonexistent-uopdb-dir", 1);
    bool avail = dot_available();
    bool ok = dot_render("digraph {}", "svg", "/tmp/uopdb-never.svg", err, sizeof err);
    if (old) setenv("PATH", old, 1);
    else unsetenv("PATH");
    free(old);
    assert_false(avail);
    assert_false(ok);
    assert_string_equal(err, "the Graphviz 'dot' program is not installed (apt-get install graphviz)");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_text_with_folded_const),
        cmocka_unit_test(test_keep_consts_draws_them),
        cmocka_unit_test(test_escapes_strings_and_shortens_args),
        cmocka_unit_test(test_focus_cuts_to_neighbourhood),
        cmocka_unit_test(test_render_svg),
        cmocka_unit_test(test_render_rejects_bad_format_and_missing_dot),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
