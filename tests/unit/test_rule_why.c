/* test_rule_why.c - rule_why on the golden 3x3 matmul AST with a wrong rule
 * (int32 a*b made a+b) inserted into stage 15: asked right before the
 * rewrite the stage's trace names, the rule rewrites the node into what the
 * trace says, and the stage's own rewrite of it is read back; the stage is
 * picked from the current point (the current one, the next, the last
 * before) and the rule tried at the point, the stage's input or its end;
 * with no rule named, every rule that can match the node's op, the first
 * that rewrites it the one the stage used; a rule tried before it in the
 * set takes the node first; unknown rules, a
 * near miss and a node not in the graph are one-line errors; and the probe
 * a stage runs sees its pass's context where the pass stands; a stage that
 * failed is asked at the points before its failure. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/rewrite/registry.h"
#include "core/debug/rule_why.h"

#include "golden_matmul_fixture.h"
#include "planted_rules.h"

static const UOp *mul_to_sub(const Match *m, void *ud) {
    (void)ud;
    return uop_binary(m->ctx, OP_SUB, match_get(m, "a"), match_get(m, "b"));
}

/* rewrites of stage n by rule */
static size_t count_by(KernelPipeline *kp, int n, const char *rule) {
    const Trace *t = &pipeline_result(kp, n)->trace;
    size_t found = 0;
    for (size_t i = 0; i < t->nrewrites; i++) found += !strcmp(t->rewrites[i].rule, rule);
    return found;
}

/* the first rewrite of stage n by rule, from 1; 0 when none */
static size_t first_rewrite_by(KernelPipeline *kp, int n, const char *rule) {
    const Trace *t = &pipeline_result(kp, n)->trace;
    for (size_t i = 0; i < t->nrewrites; i++)
        if (!strcmp(t->rewrites[i].rule, rule)) return i + 1;
    return 0;
}

static void test_rewrites_where_the_trace_says(void **state) {
    (void)state;
    RuleSet *rs;
    KernelPipeline *kp = planted_pipeline("mul_to_add", mul_to_add, &rs);
    char err[1024];
    assert_true(pipeline_seek(kp, 22, err, sizeof err));
    size_t k = first_rewrite_by(kp, 15, "mul_to_add");
    assert_true(k > 0);
    const TraceRewrite *tr = &pipeline_result(kp, 15)->trace.rewrites[k - 1];
    /* right before that rewrite: the rule gives what the trace says */
    RuleWhy w;
    assert_true(rule_why(kp, 15, (long)k - 1, "mul_to_add", tr->before, 0, &w, err, sizeof err));
    assert_int_equal(w.stage, 15);
    assert_int_equal(w.rewrite, (long)k - 1);
    assert_int_equal(w.nrules, 1);
    assert_int_equal(w.rules[0].ex.verdict, RULE_REWRITES);
    assert_ptr_equal(w.rules[0].ex.result, tr->after);
    assert_int_equal(w.rules[0].index, w.set_size); /* inserted after the stage's own rules */
    assert_int_equal(w.ndone, 1);
    assert_int_equal(w.done[0].rewrite, k);
    assert_string_equal(w.done[0].rule, "mul_to_add");
    assert_int_equal(w.done[0].index, w.rules[0].index);
    assert_int_equal(w.fired, count_by(kp, 15, "mul_to_add"));
    assert_true(w.fired >= 1);
    assert_int_equal(w.of, pipeline_result(kp, 15)->rewrites);
    rule_why_free(&w);
    /* from point 22 the stage is the last before that runs the rule, tried at its end */
    assert_true(rule_why(kp, 22, -1, "mul_to_add", tr->after, 0, &w, err, sizeof err));
    assert_int_equal(w.stage, 15);
    assert_int_equal(w.rewrite, -1);
    assert_int_equal(w.rules[0].ex.verdict, RULE_NO_MATCH);
    assert_ptr_equal(w.rules[0].ex.miss.node, tr->after);
    assert_string_equal(w.rules[0].ex.miss.reason, "wants MUL, it is ADD");
    assert_int_equal(w.ndone, 0);
    assert_true(w.in_output);
    rule_why_free(&w);
    /* from point 14 it is the next stage, tried at its input, where the MUL is not yet */
    assert_false(rule_why(kp, 14, -1, "mul_to_add", tr->before, 0, &w, err, sizeof err));
    assert_non_null(strstr(err, "is not in the graph at point 15.0, the input of stage 15"));
    rule_why_free(&w);
    pipeline_free(kp);
    ruleset_free(rs);
}

/* with no rule named, every rule of the set that can match the node's op,
 * in set order: the first that rewrites it is the one the stage used */
static void test_every_rule(void **state) {
    (void)state;
    RuleSet *rs;
    KernelPipeline *kp = planted_pipeline("mul_to_add", mul_to_add, &rs);
    char err[1024];
    assert_true(pipeline_seek(kp, 15, err, sizeof err));
    size_t k = first_rewrite_by(kp, 15, "mul_to_add");
    const TraceRewrite *tr = &pipeline_result(kp, 15)->trace.rewrites[k - 1];
    RuleWhy w;
    assert_true(rule_why(kp, 15, (long)k - 1, NULL, tr->before, 0, &w, err, sizeof err));
    /* the stage's own set, then the planted rule */
    const RuleSet *own = ruleset_get("pm_lower_index_dtype + load_store_indexing", err, sizeof err);
    assert_non_null(own);
    int can = 0;
    for (int i = 0; i < ruleset_count(own); i++) can += rule_root_can_be(ruleset_rule(own, i), OP_MUL);
    assert_int_equal(w.set_size, ruleset_count(own) + 1);
    assert_int_equal(w.nrules, can + 1);
    const WhyRule *first = NULL;
    for (int i = 0; i < w.nrules; i++) {
        assert_true(rule_root_can_be(w.rules[i].rule, OP_MUL));
        if (i) assert_true(w.rules[i].index > w.rules[i - 1].index);
        if (!first && w.rules[i].ex.verdict == RULE_REWRITES) first = &w.rules[i];
    }
    assert_non_null(first);
    assert_string_equal(rule_name(first->rule), "mul_to_add");
    assert_ptr_equal(first->ex.result, tr->after);
    assert_int_equal(w.fired, 0); /* counted only for a rule asked by name */
    rule_why_free(&w);
    /* a hook stage has no rules to try */
    assert_false(rule_why(kp, 15, -1, NULL, tr->after, 7, &w, err, sizeof err));
    assert_string_equal(err, "stage 7 (apply opts) runs no rules (it is an algorithm, not a rule pass)");
    rule_why_free(&w);
    pipeline_free(kp);
    ruleset_free(rs);
}

static void test_errors(void **state) {
    (void)state;
    RuleSet *rs;
    KernelPipeline *kp = planted_pipeline("mul_to_add", mul_to_add, &rs);
    char err[1024];
    const UOp *root = pipeline_root(kp, 15, err, sizeof err);
    assert_non_null(root);
    RuleWhy w;
    assert_false(rule_why(kp, 15, -1, "no_such_rule_at_all", root, 0, &w, err, sizeof err));
    assert_string_equal(err, "no stage runs a rule named no_such_rule_at_all");
    rule_why_free(&w);
    assert_false(rule_why(kp, 15, -1, "mul_to_ad", root, 0, &w, err, sizeof err));
    assert_string_equal(err, "no stage runs a rule named mul_to_ad (did you mean mul_to_add?)");
    rule_why_free(&w);
    assert_false(rule_why(kp, 15, -1, "mul_to_add", root, 3, &w, err, sizeof err));
    assert_non_null(strstr(err, "stage 3 (split ranges) runs no rule named mul_to_add"));
    rule_why_free(&w);
    assert_false(rule_why(kp, 15, -1, "mul_to_add", root, 23, &w, err, sizeof err));
    assert_string_equal(err, "no stage 23: stages are 1 to 22");
    rule_why_free(&w);
    pipeline_free(kp);
    ruleset_free(rs);
}

/* a rule earlier in the set rewrites the node first: the later one would
 * rewrite it too, and the stage's rewrite names the earlier rule */
static void test_earlier_rule_takes_the_node(void **state) {
    (void)state;
    RuleSet *late, *early = planted_set("mul_to_sub", mul_to_sub);
    KernelPipeline *kp = planted_pipeline("mul_to_add", mul_to_add, &late);
    char err[1024];
    assert_true(pipeline_insert(kp, 15, early, true, err, sizeof err));
    assert_true(pipeline_seek(kp, 15, err, sizeof err));
    assert_int_equal(first_rewrite_by(kp, 15, "mul_to_add"), 0);
    size_t k = first_rewrite_by(kp, 15, "mul_to_sub");
    assert_true(k > 0);
    const TraceRewrite *tr = &pipeline_result(kp, 15)->trace.rewrites[k - 1];
    RuleWhy w;
    assert_true(rule_why(kp, 15, (long)k - 1, "mul_to_add", tr->before, 0, &w, err, sizeof err));
    assert_int_equal(w.rules[0].ex.verdict, RULE_REWRITES);
    assert_int_equal(uop_op(w.rules[0].ex.result), OP_ADD);
    assert_int_equal(w.ndone, 1);
    assert_string_equal(w.done[0].rule, "mul_to_sub");
    assert_int_equal(w.done[0].index, 1);
    assert_true(w.done[0].index < w.rules[0].index);
    assert_int_equal(w.fired, 0);
    rule_why_free(&w);
    pipeline_free(kp);
    ruleset_free(late);
    ruleset_free(early);
}

/* a stage that failed is asked at the points before its failure; it has no end */
static void test_failed_stage(void **state) {
    (void)state;
    RuleSet *rs;
    KernelPipeline *kp = planted_pipeline("grow_mul", grow_mul, &rs);
    char err[1024];
    assert_false(pipeline_seek(kp, 15, err, sizeof err));
    const StageResult *f = pipeline_failure(kp, 15);
    assert_non_null(f);
    size_t k = 0;
    while (strcmp(f->trace.rewrites[k].rule, "grow_mul") != 0) k++;
    const UOp *before = f->trace.rewrites[k].before, *after = f->trace.rewrites[k].after;
    RuleWhy w;
    assert_true(rule_why(kp, 15, (long)k, "grow_mul", before, 0, &w, err, sizeof err));
    assert_int_equal(w.rules[0].ex.verdict, RULE_REWRITES);
    assert_ptr_equal(w.rules[0].ex.result, after);
    assert_non_null(w.failed);
    assert_non_null(strstr(w.failed, "rewrite loop"));
    assert_int_equal(w.of, pipeline_failure(kp, 15)->trace.nrewrites);
    assert_false(w.in_output);
    rule_why_free(&w);
    /* its end does not exist */
    assert_false(rule_why(kp, 15, -1, "grow_mul", before, 0, &w, err, sizeof err));
    char want[96];
    snprintf(want, sizeof want, "ask at one of the rewrite points before it failed (:goto 15.%zu)",
             pipeline_failure(kp, 15)->trace.nrewrites);
    assert_non_null(strstr(err, want));
    rule_why_free(&w);
    pipeline_free(kp);
    ruleset_free(rs);
}

typedef struct Seen {
    int calls;
    void *user;
    int set_size;
} Seen;

static void record(const RuleSet *rs, void *user, void *ud) {
    Seen *s = ud;
    s->calls++;
    s->user = user;
    s->set_size = ruleset_count(rs);
}

/* the probe runs inside the pass: with the pass's context where it has one */
static void test_probe_sees_the_pass(void **state) {
    (void)state;
    KernelPipeline *kp = pipeline_new(c, "r_3_3_3", ast);
    char err[1024];
    assert_true(pipeline_seek(kp, 22, err, sizeof err));
    Seen s = {0};
    assert_true(pipeline_probe(kp, 11, -1, record, &s, err, sizeof err)); /* remove reduce: ReduceContext */
    assert_int_equal(s.calls, 1);
    assert_non_null(s.user);
    assert_true(s.set_size > 0);
    s = (Seen){0};
    assert_true(pipeline_probe(kp, 11, 0, record, &s, err, sizeof err)); /* its input: the context made, no rewrite */
    assert_int_equal(s.calls, 1);
    assert_non_null(s.user);
    s = (Seen){0};
    assert_true(pipeline_probe(kp, 15, 2, record, &s, err, sizeof err)); /* no context */
    assert_int_equal(s.calls, 1);
    assert_null(s.user);
    s = (Seen){0};
    assert_true(pipeline_probe(kp, 7, -1, record, &s, err, sizeof err)); /* a hook: no rule pass */
    assert_int_equal(s.calls, 0);
    /* probing leaves the points as they were */
    assert_int_equal(pipeline_position(kp), 22);
    pipeline_free(kp);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rewrites_where_the_trace_says),
        cmocka_unit_test(test_every_rule),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_earlier_rule_takes_the_node),
        cmocka_unit_test(test_probe_sees_the_pass),
        cmocka_unit_test(test_failed_stage),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
