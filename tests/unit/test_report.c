/* test_report.c - the pieces of the session report: HTML and JSON escaping
 * (quotes, backslashes, control characters, UTF-8 passed through, bytes that
 * are not UTF-8 replaced), rule counts from a trace, and dot run on many
 * graphs at once (each job alone, dot missing said once for all). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "viz/dot.h"
#include "viz/report.h"

static char *json_of(const char *s) {
    StrBuf sb;
    sb_init(&sb);
    json_string(&sb, s);
    return sb_take(&sb);
}

static char *html_of(const char *s) {
    StrBuf sb;
    sb_init(&sb);
    html_escape(&sb, s, strlen(s));
    return sb_take(&sb);
}

static void test_json_string_escapes(void **state) {
    (void)state;
    char *j = json_of("a\"b\\c\n\t\r\b\f\x01\x1f\x7f<&>");
    assert_string_equal(j, "\"a\\\"b\\\\c\\n\\t\\r\\b\\f\\u0001\\u001f\\u007f<&>\"");
    free(j);
    /* UTF-8 passes through: 2, 3 and 4 byte sequences */
    j = json_of("\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x99\x82");
    assert_string_equal(j, "\"\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x99\x82\"");
    free(j);
    /* bytes that are not UTF-8 (a lone continuation, a cut sequence, an
     * overlong form, a surrogate) become U+FFFD, one per byte */
    j = json_of("x\x80y\xc3");
    assert_string_equal(j, "\"x\\ufffdy\\ufffd\"");
    free(j);
    j = json_of("\xc0\xaf|\xed\xa0\x80");
    assert_string_equal(j, "\"\\ufffd\\ufffd|\\ufffd\\ufffd\\ufffd\"");
    free(j);
    j = json_of(NULL);
    assert_string_equal(j, "\"\"");
    free(j);
}

static void test_html_escape(void **state) {
    (void)state;
    char *h = html_of("<script>alert('x' & \"y\")</script>\x01\x7f\nok\t\xc3\xa9");
    assert_string_equal(h, "&lt;script&gt;alert(&#39;x&#39; &amp; &quot;y&quot;)&lt;/script&gt;\nok\t\xc3\xa9");
    free(h);
    h = html_of("");
    assert_true(h == NULL || h[0] == 0);
    free(h);
}

static void test_rule_counts_in_order_of_first_firing(void **state) {
    (void)state;
    UCtx *c = uctx_new();
    const UOp *a = uop_const_int(c, DT_INT32, 1), *b = uop_const_int(c, DT_INT32, 2);
    Trace t;
    trace_init(&t);
    size_t n = 99;
    assert_null(report_rule_counts(&t, &n));
    assert_int_equal(n, 0);
    assert_true(trace_begin_pass(&t, "pass", "rules", a));
    assert_true(trace_add_rewrite(&t, "fold", "x.c", 10, a, b, 5));
    assert_true(trace_add_rewrite(&t, "lower", "y.c", 3, b, a, 5));
    assert_true(trace_add_rewrite(&t, "fold", "x.c", 10, a, b, 5));
    assert_true(trace_add_rewrite(&t, "fold", "z.c", 7, a, b, 5)); /* same name, another rule */
    trace_end_pass(&t, b, 20);
    ReportRuleCount *rc = report_rule_counts(&t, &n);
    assert_int_equal(n, 3);
    assert_string_equal(rc[0].rule, "fold");
    assert_string_equal(rc[0].file, "x.c");
    assert_int_equal(rc[0].line, 10);
    assert_int_equal(rc[0].count, 2);
    assert_string_equal(rc[1].rule, "lower");
    assert_int_equal(rc[1].count, 1);
    assert_string_equal(rc[2].file, "z.c");
    assert_int_equal(rc[2].count, 1);
    free(rc);
    trace_free(&t);
    uctx_free(c);
}

static void test_svg_batch(void **state) {
    (void)state;
    if (!dot_available()) skip();
    DotSvgJob jobs[5] = {
        {.dot_text = "digraph { a -> b; }"}, {.dot_text = "digraph { this is not dot"}, {.dot_text = "digraph { c; }"},
        {.dot_text = NULL},                  {.dot_text = "digraph { d -> e -> f; }"},
    };
    assert_true(dot_render_svg_batch(jobs, 5, 2));
    assert_non_null(jobs[0].svg);
    assert_non_null(strstr(jobs[0].svg, "<svg"));
    assert_non_null(strstr(jobs[0].svg, ">b</text>"));
    assert_null(jobs[1].svg);
    assert_non_null(strstr(jobs[1].err, "dot failed (exit status"));
    assert_non_null(jobs[2].svg);
    assert_non_null(strstr(jobs[2].svg, ">c</text>"));
    assert_null(jobs[3].svg);
    assert_string_equal(jobs[3].err, "no DOT text to render");
    assert_non_null(strstr(jobs[4].svg, ">f</text>"));
    for (int i = 0; i < 5; i++) free(jobs[i].svg);
}

static void test_svg_batch_without_dot(void **state) {
    (void)state;
    char *old = getenv("PATH") ? strdup(getenv("PATH")) : NULL;
    setenv("PATH", "/nonexistent-uopdb-dir", 1);
    DotSvgJob jobs[3] = {{.dot_text = "digraph { a; }"}, {.dot_text = "digraph { b; }"}, {.dot_text = "digraph { c; }"}};
    bool ok = dot_render_svg_batch(jobs, 3, 0);
    if (old) setenv("PATH", old, 1);
    else unsetenv("PATH");
    free(old);
    assert_false(ok);
    for (int i = 0; i < 3; i++) {
        assert_null(jobs[i].svg);
        assert_string_equal(jobs[i].err, "the Graphviz 'dot' program is not installed (apt-get install graphviz)");
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_string_escapes),
        cmocka_unit_test(test_html_escape),
        cmocka_unit_test(test_rule_counts_in_order_of_first_firing),
        cmocka_unit_test(test_svg_batch),
        cmocka_unit_test(test_svg_batch_without_dot),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
