/* test_symbolic_fuzz.c - the random-expression checker over 10k expressions
 * with a fixed seed: simplification must never change a value, and the
 * bounds of input and result must contain every evaluated value. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include "core/rewrite/registry.h"
#include "core/sym/sym_check.h"
#include "core/sym/symbolic.h"
#include "viz/render.h"

static void check_set(const char *set, size_t n, uint64_t seed) {
    SymCheckOpts o = {.count = n, .seed = seed, .set = set, .render = uop_render_expr};
    SymCheckResult r;
    bool ok = sym_check_run(&o, &r);
    printf("  %s: %zu checked, %zu skipped, nodes %zu -> %zu, %zu grew, %.2f s\n", set, r.checked, r.skipped, r.nodes_in,
           r.nodes_out, r.grew, r.seconds);
    if (!ok) printf("%s", r.report);
    assert_true(ok);
    assert_true(r.checked > n / 2);         /* most expressions are in range */
    assert_true(r.nodes_out < r.nodes_in);  /* and the simplifier does simplify */
    sym_check_result_free(&r);
}

static void test_fuzz_sym(void **s) { (void)s; check_set("sym", 10000, 12345); }
static void test_fuzz_symbolic(void **s) { (void)s; check_set("symbolic", 3000, 777); }
static void test_fuzz_symbolic_simple(void **s) { (void)s; check_set("symbolic_simple", 2000, 99); }

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fuzz_sym),
        cmocka_unit_test(test_fuzz_symbolic),
        cmocka_unit_test(test_fuzz_symbolic_simple),
    };
    int r = cmocka_run_group_tests(tests, NULL, NULL);
    ruleset_registry_free();
    return r;
}
