/* test_node_origin.c - node_origin on the golden 3x3 matmul AST with a
 * wrong rule (int32 a*b made a+b) inserted into stage 15: the node the rule
 * made is its result at the rewrite the stage's trace names (asked right
 * after that rewrite); an INDEX above it was rebuilt by that rewrite from the INDEX that read the MUL; every
 * step's node is in the graph after its rewrite and not before; the walk
 * ends at the kernel as scheduled or at a stage that is not a rewrite; the
 * step limit, and a node not in the graph, are reported (with the rewrite
 * points that hold a node no stage's output has); the traced run to a
 * rewrite point gives that point with its rewrites and rebuilds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/rewrite/registry.h"
#include "core/debug/node_origin.h"
#include "viz/tinygrad_repr.h"

#include "golden_matmul_fixture.h"
#include "planted_rules.h"

/* the golden matmul with the wrong rule inserted into stage 15, at stage 22 */
static KernelPipeline *planted(RuleSet **rs) {
    KernelPipeline *kp = planted_pipeline("mul_to_add", mul_to_add, rs);
    char err[512];
    assert_true(pipeline_seek(kp, 22, err, sizeof err));
    return kp;
}

static bool contains(const UOp *root, const UOp *u) {
    size_t n;
    const UOp **t = uop_toposort(root, &n);
    assert_non_null(t);
    bool found = false;
    for (size_t i = 0; i < n; i++) found |= t[i] == u;
    free(t);
    return found;
}

static const UOp *at(KernelPipeline *kp, int stage, long r) {
    char err[512];
    const UOp *root = r < 0 ? pipeline_root(kp, stage, err, sizeof err)
                            : pipeline_rewrite_point(kp, stage, (size_t)r, err, sizeof err);
    assert_non_null(root);
    return root;
}

/* every step against the points themselves */
static void check_chain(KernelPipeline *kp, const OriginChain *ch) {
    assert_true(ch->n >= 1);
    for (int i = 0; i < ch->n; i++) {
        const OriginStep *st = &ch->steps[i];
        if (i) assert_ptr_equal(st->node, ch->steps[i - 1].from);
        if (st->how == ORIGIN_SCHEDULED) {
            assert_int_equal(st->stage, 0);
            assert_true(contains(at(kp, 0, -1), st->node));
            continue;
        }
        if (st->rewrite == 0) {
            assert_int_equal(st->how, ORIGIN_STAGE);
            assert_true(contains(at(kp, st->stage, -1), st->node));
            assert_false(contains(at(kp, st->stage - 1, -1), st->node));
            continue;
        }
        assert_true(contains(at(kp, st->stage, (long)st->rewrite), st->node));
        assert_false(contains(at(kp, st->stage, (long)st->rewrite - 1), st->node));
        if (st->how == ORIGIN_STAGE) continue;
        const TraceRewrite *w = &pipeline_result(kp, st->stage)->trace.rewrites[st->rewrite - 1];
        assert_ptr_equal(st->before, w->before);
        assert_ptr_equal(st->after, w->after);
        assert_string_equal(st->rule, w->rule);
        if (st->how == ORIGIN_RULE) assert_ptr_equal(st->node, st->after);
        if (st->how == ORIGIN_PART) assert_true(st->node != st->after && contains(st->after, st->node));
        if (st->how == ORIGIN_REBUILT) {
            assert_int_equal(st->from->op, st->node->op);
            assert_ptr_equal(st->from->dtype, st->node->dtype);
            assert_true(contains(at(kp, st->stage, (long)st->rewrite - 1), st->from));
        }
    }
    OriginHow last = ch->steps[ch->n - 1].how;
    assert_true(last == ORIGIN_SCHEDULED || last == ORIGIN_STAGE || ch->truncated);
}

/* the planted rewrite in stage 15's trace: its number from 1 */
static size_t planted_rewrite(KernelPipeline *kp) {
    const Trace *t = &pipeline_result(kp, 15)->trace;
    for (size_t i = 0; i < t->nrewrites; i++)
        if (!strcmp(t->rewrites[i].rule, "mul_to_add")) return i + 1;
    fail_msg("mul_to_add never fired");
    return 0;
}

static void test_the_rule_that_made_a_node(void **state) {
    (void)state;
    RuleSet *rs;
    KernelPipeline *kp = planted(&rs);
    size_t r = planted_rewrite(kp);
    const TraceRewrite *w = &pipeline_result(kp, 15)->trace.rewrites[r - 1];
    assert_int_equal(w->after->op, OP_ADD);
    assert_true(contains(at(kp, 15, (long)r), w->after));
    OriginChain ch;
    char err[512];
    assert_true(node_origin(kp, 15, (long)r, w->after, 64, &ch, err, sizeof err));
    assert_int_equal(ch.steps[0].how, ORIGIN_RULE);
    assert_int_equal(ch.steps[0].stage, 15);
    assert_int_equal(ch.steps[0].rewrite, r);
    assert_ptr_equal(ch.steps[0].from, w->before);
    assert_string_equal(ch.steps[0].rule, "mul_to_add");
    assert_false(ch.truncated);
    assert_false(ch.lost);
    check_chain(kp, &ch);
    origin_chain_free(&ch);
    pipeline_free(kp);
    ruleset_free(rs);
}

static void test_a_node_rebuilt_above_it(void **state) {
    (void)state;
    RuleSet *rs;
    KernelPipeline *kp = planted(&rs);
    size_t r = planted_rewrite(kp);
    const TraceRewrite *w = &pipeline_result(kp, 15)->trace.rewrites[r - 1];
    /* an INDEX of the graph right after the rewrite that reads through the wrong ADD */
    size_t n;
    const UOp **t = uop_toposort(at(kp, 15, (long)r), &n);
    assert_non_null(t);
    const UOp *index = NULL;
    for (size_t i = 0; i < n && !index; i++)
        if (t[i]->op == OP_INDEX && contains(t[i], w->after)) index = t[i];
    free(t);
    assert_non_null(index);
    OriginChain ch;
    char err[512];
    assert_true(node_origin(kp, 15, (long)r, index, 64, &ch, err, sizeof err));
    check_chain(kp, &ch);
    const OriginStep *rebuilt = NULL;
    for (int i = 0; i < ch.n; i++)
        if (ch.steps[i].how == ORIGIN_REBUILT && ch.steps[i].stage == 15 && ch.steps[i].rewrite == r)
            rebuilt = &ch.steps[i];
    assert_non_null(rebuilt);
    assert_ptr_equal(rebuilt->before, w->before);
    assert_ptr_equal(rebuilt->after, w->after);
    assert_true(contains(rebuilt->from, w->before));
    assert_false(contains(rebuilt->from, w->after));
    origin_chain_free(&ch);
    pipeline_free(kp);
    ruleset_free(rs);
}

static void test_limits_and_errors(void **state) {
    (void)state;
    RuleSet *rs;
    KernelPipeline *kp = planted(&rs);
    size_t r = planted_rewrite(kp);
    const UOp *made = pipeline_result(kp, 15)->trace.rewrites[r - 1].after;
    OriginChain ch;
    char err[512];
    /* one step only: the walk says it stopped with more to go */
    assert_true(node_origin(kp, 15, (long)r, made, 1, &ch, err, sizeof err));
    assert_int_equal(ch.n, 1);
    assert_true(ch.truncated);
    origin_chain_free(&ch);
    /* not from one rewrite before it */
    assert_false(node_origin(kp, 15, (long)r - 1, made, 64, &ch, err, sizeof err));
    char want[160];
    snprintf(want, sizeof want, "%%%u is not in the graph at point 15.%zu (it is in the graph at point 15)", made->id,
             r - 1);
    assert_string_equal(err, want);
    origin_chain_free(&ch);
    /* the traced run to a rewrite point: the same root, its rewrites and its rebuilds */
    Trace t;
    trace_init(&t);
    t.keep_rebuilds = true;
    assert_ptr_equal(pipeline_rewrite_point_traced(kp, 15, r, &t, err, sizeof err), at(kp, 15, (long)r));
    assert_int_equal(t.nrewrites, r);
    assert_true(t.nrebuilds > 0); /* the users of the rewritten MUL */
    size_t total = pipeline_result(kp, 15)->rewrites;
    assert_ptr_equal(pipeline_rewrite_point_traced(kp, 15, total + 5, &t, err, sizeof err), at(kp, 15, -1));
    assert_int_equal(t.nrewrites, total);
    trace_free(&t);
    /* a node of no point */
    const UOp *stray = uop_var(c, "stray", 0, 9);
    assert_false(node_origin(kp, 22, -1, stray, 64, &ch, err, sizeof err));
    snprintf(want, sizeof want, "%%%u is not in the graph at point 22 (it is at no point of this kernel)", stray->id);
    assert_string_equal(err, want);
    origin_chain_free(&ch);
    /* a node made inside stage 15 and rewritten there: the rewrite points
     * that hold it, which are the points between the rewrite whose result
     * has it and the rewrite of it, and where to stand */
    const Trace *t15 = &pipeline_result(kp, 15)->trace;
    const UOp *mul = t15->rewrites[r - 1].before;
    size_t made_at = 0;
    while (made_at < r - 1 && !uop_graph_has(t15->rewrites[made_at].after, mul)) made_at++;
    assert_true(made_at < r - 1);
    for (size_t p = 1; p < total; p++) assert_int_equal(contains(at(kp, 15, (long)p), mul), p > made_at && p < r);
    assert_false(node_origin(kp, 22, -1, mul, 64, &ch, err, sizeof err));
    if (made_at + 1 == r - 1)
        snprintf(want, sizeof want, "%%%u is not in the graph at point 22 (it is at point 15.%zu: :goto 15.%zu)", mul->id,
                 r - 1, r - 1);
    else
        snprintf(want, sizeof want, "%%%u is not in the graph at point 22 (it is at points 15.%zu to 15.%zu: :goto 15.%zu)",
                 mul->id, made_at + 1, r - 1, r - 1);
    assert_string_equal(err, want);
    origin_chain_free(&ch);
    /* the AST's own nodes: one step, scheduled */
    assert_true(node_origin(kp, 0, -1, ast, 64, &ch, err, sizeof err));
    assert_int_equal(ch.n, 1);
    assert_int_equal(ch.steps[0].how, ORIGIN_SCHEDULED);
    assert_string_equal(origin_how_name(ch.steps[0].how), "scheduled");
    origin_chain_free(&ch);
    pipeline_free(kp);
    ruleset_free(rs);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_rule_that_made_a_node),
        cmocka_unit_test(test_a_node_rebuilt_above_it),
        cmocka_unit_test(test_limits_and_errors),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
