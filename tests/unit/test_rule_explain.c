/* test_rule_explain.c - why a rule does or does not rewrite a node
 * (rule_explain): the sub-pattern a failed match stops at, the node it was
 * tried on and what differs, for every kind of miss; the furthest of the
 * orders a commutative node is tried in; the verdicts of a rule that
 * matches (declines, rewrites, fails) and what a rule says of a decline;
 * and the explaining matcher agreeing with the plain one on every pattern
 * and node below. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>
#include "core/rewrite/pattern_internal.h"
#include "core/rewrite/registry.h"
#include "core/sym/symbolic.h"

static UCtx *c;
static const UOp *x, *y, *two, *three, *sum, *prod, *nested, *fsum;

static int setup(void **state) {
    (void)state;
    c = uctx_new();
    x = uop_var(c, "x", 0, 10);
    y = uop_var(c, "y", 0, 10);
    two = uop_const_int(c, DT_INDEX, 2);
    three = uop_const_int(c, DT_INDEX, 3);
    sum = uop_binary(c, OP_ADD, x, three);        /* x + 3 */
    prod = uop_binary(c, OP_MUL, y, two);         /* y * 2 */
    nested = uop_binary(c, OP_IDIV, sum, two);    /* (x + 3) // 2 */
    const UOp *f = uop_const_float(c, DT_FLOAT32, 1.5);
    fsum = uop_binary(c, OP_ADD, f, f);
    return 0;
}

static int teardown(void **state) {
    (void)state;
    uctx_free(c);
    ruleset_registry_free();
    return 0;
}

static const UOp *keep_root(const Match *m, void *ud) {
    (void)ud;
    return m->root; /* the node itself: no rewrite */
}

static const UOp *to_x(const Match *m, void *ud) {
    (void)ud;
    return match_get(m, "a");
}

static const UOp *failing(const Match *m, void *ud) {
    (void)ud;
    rewrite_fail(m, "cannot do that");
    return NULL;
}

static Rule *make_rule(const char *pattern, RewriteFn fn, const char *tmpl) {
    RuleSpec spec = {.name = "r", .pattern = pattern, .fn = fn, .template_text = tmpl, .file = __FILE__, .line = 1};
    char err[256];
    Rule *r = rule_new(&spec, err, sizeof err);
    if (!r) fail_msg("rule %s: %s", pattern, err);
    return r;
}

/* explains pattern on u with a function rule that declines */
static RuleExplain explain(const char *pattern, const UOp *u) {
    Rule *r = make_rule(pattern, keep_root, NULL);
    RuleExplain ex;
    rule_explain(r, c, u, NULL, &ex);
    rule_unref(r);
    return ex;
}

static void expect_miss(const char *pattern, const UOp *u, const UOp *at, const char *sub, const char *reason) {
    RuleExplain ex = explain(pattern, u);
    assert_int_equal(ex.verdict, RULE_NO_MATCH);
    assert_ptr_equal(ex.miss.node, at);
    assert_string_equal(ex.miss.pattern, sub);
    assert_string_equal(ex.miss.reason, reason);
}

static void test_misses(void **state) {
    (void)state;
    expect_miss("({IDIV MOD} _ _)", sum, sum, "({IDIV MOD} _ _)", "wants IDIV or MOD, it is ADD");
    /* a source's op: the sub-pattern is the one that failed, the node is the source */
    expect_miss("(IDIV (MUL a b) c)", nested, sum, "(MUL a b)", "wants MUL, it is ADD");
    /* a constant's value, two levels down */
    expect_miss("(IDIV (ADD a 4) c)", nested, three, "4", "wants the value 4, it is 3");
    expect_miss("(IDIV (ADD a (CONST 4)) c)", nested, three, "(CONST 4)", "wants the value 4, it is 3");
    expect_miss("(IDIV 2 c)", nested, sum, "2", "wants the constant 2, it is ADD");
    /* dtype, arg, source count */
    expect_miss("(ADD:int32 a b)", sum, sum, "(ADD:int32 a b)", "its dtype index is not one the pattern allows");
    expect_miss("(ADD a b c)", sum, sum, "(ADD a b c)", "wants 3 sources, it has 2");
    expect_miss("(ADD a b c ...)", sum, sum, "(ADD a b c ...)", "wants at least 3 sources, it has 2");
    expect_miss("(DEFINE_VAR arg=(\"z\", 0, 10))", x, x, "(DEFINE_VAR arg=(\"z\", 0, 10))",
                "wants arg=(\"z\", 0, 10), it has (\"x\", 0, 10)");
}

/* the capture message names the actual ids */
static void test_capture_conflict_ids(void **state) {
    (void)state;
    RuleExplain ex = explain("(ADD a a)", sum);
    assert_int_equal(ex.verdict, RULE_NO_MATCH);
    char want[96];
    /* the straight order binds a to x first; the swapped order gets as far */
    snprintf(want, sizeof want, "a is %%%u already, here it would be %%%u", x->id, three->id);
    assert_string_equal(ex.miss.reason, want);
    assert_ptr_equal(ex.miss.node, three);
}

/* of the two orders of a commutative node, the one that matched more is reported */
static void test_commutative_furthest(void **state) {
    (void)state;
    /* straight: x against (MUL ...) fails at once; swapped: 3 against
     * (MUL ...) fails too, but (CONST 3)... both fail at the first source;
     * the straight order's miss is kept on a tie */
    expect_miss("(ADD (MUL a b) c)", sum, x, "(MUL a b)", "wants MUL, it is DEFINE_VAR");
    /* here only the swapped order gets past the first source: its miss at the second is reported */
    expect_miss("(ADD 3 (MUL a b))", sum, x, "(MUL a b)", "wants MUL, it is DEFINE_VAR");
}

static bool is_big(const UOp *u) {
    int64_t v;
    return uop_op(u) == OP_CONST && u->arg && u->arg->kind == ARG_INT && (v = u->arg->v.i) > 100;
}

static void test_predicate(void **state) {
    (void)state;
    pattern_register_predicate("big", is_big);
    expect_miss("(ADD a b@(CONST ?big))", sum, three, "b@(CONST ?big)", "?big is false for it");
}

static void test_verdicts(void **state) {
    (void)state;
    /* declined: a function that gives the node itself, for each of the matches */
    RuleExplain ex = explain("(ADD a b)", sum);
    assert_int_equal(ex.verdict, RULE_DECLINED);
    assert_int_equal(ex.matches, 2); /* both orders of a commutative node */
    assert_ptr_equal(ex.cap[0], x);  /* the first match's captures */
    assert_ptr_equal(ex.cap[1], three);
    assert_null(ex.result);
    /* rewrites, with the captures of the match applied */
    Rule *r = make_rule("(ADD a 3)", to_x, NULL);
    rule_explain(r, c, sum, NULL, &ex);
    assert_int_equal(ex.verdict, RULE_REWRITES);
    assert_ptr_equal(ex.result, x);
    assert_ptr_equal(ex.cap[0], x);
    /* the rule's statistics are left alone */
    assert_int_equal(rule_stats(r)->attempts, 0);
    assert_int_equal(rule_stats(r)->rewrites, 0);
    rule_unref(r);
    /* a template */
    r = make_rule("(ADD a b)", NULL, "(MUL a b)");
    rule_explain(r, c, sum, NULL, &ex);
    assert_int_equal(ex.verdict, RULE_REWRITES);
    assert_ptr_equal(ex.result, uop_binary(c, OP_MUL, x, three));
    rule_unref(r);
    /* a rule that fails */
    r = make_rule("(ADD a b)", failing, NULL);
    rule_explain(r, c, sum, NULL, &ex);
    assert_int_equal(ex.verdict, RULE_ERROR);
    assert_non_null(strstr(ex.error, "cannot do that"));
    rule_unref(r);
    uctx_clear_error(c);
    assert_string_equal(rule_verdict_name(RULE_NO_MATCH), "no match");
    assert_string_equal(rule_verdict_name(RULE_DECLINED), "declined");
}

/* explaining and matching agree: a miss exactly when there is no match,
 * the same first captures when there is one, and a miss that names a
 * sub-pattern of the text and a node of the graph */
static void test_agrees_with_match(void **state) {
    (void)state;
    const char *patterns[] = {"(IDIV (ADD x c@(CONST)) d)", "(SINK *s)",   "(ADD x ...)",     "[ADD x c@(CONST)]",
                              "x",                          "(ADD x x)",   "(MUL y 2)",       "({ADD MUL} a b)",
                              "(ADD:float32 a a)",          "(IDIV _ 2)",  "(ADD (MUL a b) c)", "(_ a 3)",
                              "(ADD 1.5 b)",                "(CONST 3)",   "(MOD a b)",       "(IDIV (ADD a 3) 2)"};
    const UOp *nodes[] = {x, two, three, sum, prod, nested, fsum, uop_binary(c, OP_ADD, prod, sum)};
    for (size_t i = 0; i < sizeof patterns / sizeof *patterns; i++) {
        char err[256];
        Pat *p = pattern_compile(patterns[i], err, sizeof err);
        assert_non_null(p);
        for (size_t j = 0; j < sizeof nodes / sizeof *nodes; j++) {
            const UOp *want[PAT_MAX_CAPTURES] = {0}, *got[PAT_MAX_CAPTURES] = {0};
            bool m = pattern_match(p, nodes[j], want);
            PatMiss miss;
            bool e = pat_explain(p, nodes[j], got, &miss);
            if (m != e) fail_msg("%s on node %zu: match %d, explain %d", patterns[i], j, m, e);
            if (m) {
                for (int k = 0; k < p->ncap; k++) assert_ptr_equal(want[k], got[k]);
                continue;
            }
            char sub[256], why[256];
            pat_miss_describe(p, &miss, sub, sizeof sub, why, sizeof why);
            assert_non_null(strstr(patterns[i], sub));
            assert_true(sub[0] != 0 && why[0] != 0);
            assert_true(uop_graph_has(nodes[j], miss.u) == 1);
        }
        pattern_free(p);
    }
}

/* the public form: the miss of each node, comparable by how far it got */
static void test_pattern_explain(void **state) {
    (void)state;
    char err[256];
    Pat *p = pattern_compile("(IDIV (ADD a 4) 2)", err, sizeof err);
    assert_non_null(p);
    const UOp *caps[PAT_MAX_CAPTURES];
    PatternMiss near, far;
    assert_false(pattern_explain(p, nested, caps, &near)); /* (x + 3) // 2: fails at the 4 */
    assert_ptr_equal(near.node, three);
    assert_string_equal(near.pattern, "4");
    assert_string_equal(near.reason, "wants the value 4, it is 3");
    assert_false(pattern_explain(p, sum, caps, &far)); /* x + 3: fails at the root */
    assert_ptr_equal(far.node, sum);
    assert_true(near.progress > far.progress);
    const UOp *fits = uop_binary(c, OP_IDIV, uop_binary(c, OP_ADD, y, uop_const_int(c, DT_INDEX, 4)), two);
    assert_true(pattern_explain(p, fits, caps, &near));
    assert_ptr_equal(caps[pattern_capture_slot(p, "a")], y);
    assert_int_equal(pattern_capture_count(p), 1);
    assert_string_equal(pattern_capture_name(p, 0), "a");
    assert_null(pattern_capture_name(p, 1));
    pattern_free(p);
}

/* a rule says why it declines: once per text, only when asked */
static const UOp *declines_twice(const Match *m, void *ud) {
    (void)ud;
    match_decline(m, "not today");
    MATCH_DECLINE(m, "not today");
    MATCH_DECLINE(m, "nor %s", "tomorrow");
    return NULL;
}

static void test_decline_reasons(void **state) {
    (void)state;
    Rule *r = make_rule("(ADD a b)", declines_twice, NULL);
    RuleExplain ex;
    rule_explain(r, c, sum, NULL, &ex);
    assert_int_equal(ex.verdict, RULE_DECLINED);
    assert_string_equal(ex.declined, "not today; nor tomorrow"); /* both orders said the same */
    /* applied outside k:why, the rule writes nowhere */
    const UOp *out = NULL;
    assert_int_equal(rule_apply(r, c, sum, NULL, NULL, &out), 0);
    rule_unref(r);
    /* a rule with nothing to say */
    ex = explain("(ADD a b)", sum);
    assert_string_equal(ex.declined, "");
}

/* the symbolic rules that say why: bounds that are not one value, a
 * division whose numerator spans several quotients */
static const Rule *sym_rule(const char *name) {
    const RuleSet *rs = sym_ruleset("sym");
    assert_non_null(rs);
    for (int i = 0; i < ruleset_count(rs); i++)
        if (!strcmp(rule_name(ruleset_rule(rs, i)), name)) return ruleset_rule(rs, i);
    fail_msg("no rule %s in sym", name);
    return NULL;
}

static void test_sym_decline_reasons(void **state) {
    (void)state;
    const UOp *w = uop_var(c, "w", 0, 43);
    RuleExplain ex;
    rule_explain((Rule *)sym_rule("fold_by_bounds"), c, uop_binary(c, OP_ADD, w, three), NULL, &ex);
    assert_int_equal(ex.verdict, RULE_DECLINED);
    assert_string_equal(ex.declined, "its bounds [3, 46] are not one value");
    rule_explain((Rule *)sym_rule("fold_divmod_general"), c, uop_binary(c, OP_IDIV, w, uop_const_int(c, DT_INDEX, 4)),
                 NULL, &ex);
    assert_int_equal(ex.verdict, RULE_DECLINED);
    assert_non_null(strstr(ex.declined, "cancel_divmod: the numerator's bounds [0, 43] span more than one quotient by [4, 4]"));
    /* within one quotient it folds */
    rule_explain((Rule *)sym_rule("fold_divmod_general"), c, uop_binary(c, OP_IDIV, x, uop_const_int(c, DT_INDEX, 11)),
                 NULL, &ex);
    assert_int_equal(ex.verdict, RULE_REWRITES);
    int64_t v;
    assert_true(uop_op(ex.result) == OP_CONST && (v = ex.result->arg->v.i) == 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_misses),          cmocka_unit_test(test_capture_conflict_ids),
        cmocka_unit_test(test_commutative_furthest), cmocka_unit_test(test_predicate),
        cmocka_unit_test(test_verdicts),        cmocka_unit_test(test_agrees_with_match),
        cmocka_unit_test(test_pattern_explain), cmocka_unit_test(test_decline_reasons),
        cmocka_unit_test(test_sym_decline_reasons),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
