/* test_registry.c - the rule-set registry: sets built once on first use,
 * "a + b" composed in order, bases before a set's own rules, names refused
 * when taken twice or containing '+', every registered set of the stages
 * building, freed and rebuilt, lookups from several threads at once, and a
 * set cached under its name when building its base grows the table. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "core/rewrite/registry.h"
#include "core/stages/stages.h"

static const UOp *keep(const Match *m, void *ud) { (void)ud; return m->root; }

static const RuleSpec a_specs[] = {RULE_FN("a1", "(ADD x 0)", keep), RULE_FN("a2", "(MUL x 1)", keep)};
static const RuleSpec b_specs[] = {RULE_FN("b1", "(Binary x x)", keep)};
static const RuleSpec bad_specs[] = {RULE_FN("bad", "(NOT_AN_OP x)", keep)};
static const RuleTable a_table = RULE_TABLE(a_specs), b_table = RULE_TABLE(b_specs), bad_table = RULE_TABLE(bad_specs);
static const RuleTable *const a_list[] = {&a_table}, *const b_list[] = {&b_table}, *const bad_list[] = {&bad_table};
static const RuleSetDef defs[] = {
    {"test_a", NULL, RULE_TABLES(a_list), "two rules"},
    {"test_b", "test_a", RULE_TABLES(b_list), "test_a, then one rule"},
    {"test_bad", NULL, RULE_TABLES(bad_list), "a rule that does not compile"},
};

static void test_build_compose_and_names(void **state) {
    (void)state;
    char err[300];
    assert_true(ruleset_register(defs, 3, err, sizeof err));
    assert_true(ruleset_register(defs, 3, err, sizeof err)); /* the same definitions again: ignored */
    const RuleSet *a = ruleset_get("test_a", err, sizeof err), *b = ruleset_get("test_b", err, sizeof err);
    assert_non_null(a);
    assert_ptr_equal(ruleset_get("test_a", err, sizeof err), a); /* built once */
    assert_int_equal(ruleset_count(b), 3);
    assert_string_equal(rule_name(ruleset_rule(b, 0)), "a1"); /* base first */
    assert_string_equal(rule_name(ruleset_rule(b, 2)), "b1");
    const RuleSet *ab = ruleset_get("test_b+ test_a", err, sizeof err);
    assert_non_null(ab);
    assert_string_equal(ruleset_name(ab), "test_b + test_a");
    assert_int_equal(ruleset_count(ab), 5);
    assert_ptr_equal(ruleset_get("test_b + test_a", err, sizeof err), ab);
    assert_null(ruleset_get("test_a + nope", err, sizeof err));
    assert_non_null(strstr(err, "unknown rule set 'nope'"));
    assert_null(ruleset_get("test_a + ", err, sizeof err));
    assert_null(ruleset_get("test_bad", err, sizeof err));
    assert_non_null(strstr(err, "rule bad of 'test_bad' does not compile"));
    /* a name taken by another definition, a name with '+' */
    RuleSetDef again = {"test_a", NULL, RULE_TABLES(b_list), "other"}, plus = {"x+y", NULL, NULL, 0, "bad name"};
    assert_false(ruleset_register(&again, 1, err, sizeof err));
    assert_non_null(strstr(err, "registered twice"));
    assert_false(ruleset_register(&plus, 1, err, sizeof err));
    /* freed in one place and rebuilt on next use */
    ruleset_registry_free();
    assert_int_equal(ruleset_count(ruleset_get("test_b", err, sizeof err)), 3);
    assert_ptr_equal(ruleset_def_find("test_b"), &defs[1]);
}

/* every set the stages and the symbolic engine register builds, by name */
static void test_every_registered_set_builds(void **state) {
    (void)state;
    stages_register_rulesets();
    int n = ruleset_def_count();
    assert_true(n >= 30);
    const char *want[] = {"sym", "symbolic", "gep_pushing", "pm_lower_index_dtype", "pm_add_loads", "pm_reduce",
                          "pm_linearize_cleanups", "pm_reduce_unparented", "pm_decomp"};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) assert_non_null(ruleset_def_find(want[i]));
    for (int i = 0; i < n; i++) {
        char err[300];
        const RuleSetDef *d = ruleset_def(i);
        if (!strcmp(d->name, "test_bad")) continue;
        if (!ruleset_get(d->name, err, sizeof err)) fail_msg("%s: %s", d->name, err);
    }
}

/* A set whose base is a composition makes the registry add the
 * composition's entry while the set is being built; when that moves the
 * table, the set must still be cached under its own name (built once).
 * MANY fillers and MANY sets composed over them are registered first; then
 * each lookup adds exactly one entry, so the lookups step the table one by
 * one across the growth at 512 entries (with fewer than 100 entries before). */
#define MANY 200
static RuleSetDef many[2 * MANY];
static char many_names[2 * MANY][24], many_bases[MANY][40];

static void test_composed_base_while_the_table_grows(void **state) {
    (void)state;
    char err[300];
    assert_true(ruleset_def_count() < 100);
    for (int i = 0; i < MANY; i++) {
        snprintf(many_names[i], sizeof many_names[i], "test_many_%d", i);
        snprintf(many_names[MANY + i], sizeof many_names[MANY + i], "test_composed_%d", i);
        snprintf(many_bases[i], sizeof many_bases[i], "test_a + test_many_%d", i);
        many[i] = (RuleSetDef){many_names[i], NULL, RULE_TABLES(b_list), "filler"};
        many[MANY + i] = (RuleSetDef){many_names[MANY + i], many_bases[i], RULE_TABLES(b_list), "composed base"};
    }
    assert_true(ruleset_register(many, 2 * MANY, err, sizeof err));
    for (int i = 0; i < MANY; i++) {
        const RuleSet *first = ruleset_get(many_names[MANY + i], err, sizeof err);
        assert_non_null(first);
        assert_int_equal(ruleset_count(first), 4);
        assert_ptr_equal(ruleset_get(many_names[MANY + i], err, sizeof err), first);
    }
}

static void *lookup_many(void *arg) {
    (void)arg;
    for (int i = 0; i < 200; i++)
        if (!ruleset_get(i % 2 ? "sym + pm_flatten_range" : "pm_decomp + pm_render", NULL, 0)) return (void *)1;
    return NULL;
}

static void test_threads(void **state) {
    (void)state;
    stages_register_rulesets();
    ruleset_registry_free();
    pthread_t t[4];
    for (int i = 0; i < 4; i++) pthread_create(&t[i], NULL, lookup_many, NULL);
    for (int i = 0; i < 4; i++) {
        void *r;
        pthread_join(t[i], &r);
        assert_null(r);
    }
}

static int teardown(void **state) {
    (void)state;
    ruleset_registry_free();
    return 0;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_build_compose_and_names),
        cmocka_unit_test(test_every_registered_set_builds),
        cmocka_unit_test(test_threads),
        cmocka_unit_test(test_composed_base_while_the_table_grows),
    };
    return cmocka_run_group_tests(tests, NULL, teardown);
}
