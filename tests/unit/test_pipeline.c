/* test_pipeline.c - a kernel stepped through the 22 stages: points kept and
 * reached lazily, stage results (nodes, rewrites, changed), opts forgetting
 * the stages from 7 on, errors for bad stage numbers, the rewrite points of
 * a stage that failed (up to its failure; one stopped by Ctrl-C has not
 * failed), and the golden 3x3
 * matmul AST compiled and run with exact results, with and without opts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/rewrite/registry.h"
#include "core/debug/pipeline.h"
#include "core/util/interrupt.h"
#include "viz/tinygrad_repr.h"

#include "golden_matmul_fixture.h"
#include "planted_rules.h"

static void test_positions_and_results(void **state) {
    (void)state;
    KernelPipeline *kp = pipeline_new(c, "r_3_3_3", ast);
    char err[512];
    assert_int_equal(pipeline_position(kp), 0);
    assert_ptr_equal(pipeline_root(kp, 0, err, sizeof err), ast);
    assert_null(pipeline_result(kp, 1)); /* nothing ran yet */
    assert_true(pipeline_seek(kp, 4, err, sizeof err));
    assert_int_equal(pipeline_position(kp), 4);
    for (int n = 1; n <= 4; n++) assert_non_null(pipeline_result(kp, n));
    assert_null(pipeline_result(kp, 5)); /* lazily: only as far as asked */
    const StageResult *r4 = pipeline_result(kp, 4);
    assert_int_equal(r4->nodes_after, uop_graph_size(r4->root));
    assert_int_equal(r4->changed, r4->root != pipeline_result(kp, 3)->root);
    /* back is free: the same root as before */
    const UOp *at4 = r4->root;
    assert_true(pipeline_seek(kp, 2, err, sizeof err));
    assert_int_equal(pipeline_position(kp), 2);
    assert_true(pipeline_seek(kp, 4, err, sizeof err));
    assert_ptr_equal(pipeline_result(kp, 4)->root, at4);
    /* bad stage numbers */
    assert_false(pipeline_seek(kp, 23, err, sizeof err));
    assert_string_equal(err, "no stage 23: stages are 0 (the kernel as scheduled) to 22");
    assert_false(pipeline_seek(kp, -1, err, sizeof err));
    assert_int_equal(pipeline_position(kp), 4);
    pipeline_free(kp);
}

/* a stage that fails keeps the rewrites it made before, and their points
 * can be visited; the stage runs again when it is asked for itself */
static void test_failed_stage_points(void **state) {
    (void)state;
    RuleSet *rs;
    KernelPipeline *kp = planted_pipeline("grow_mul", grow_mul, &rs);
    char err[1024];
    assert_false(pipeline_seek(kp, 15, err, sizeof err));
    assert_non_null(strstr(err, "rewrite loop"));
    assert_int_equal(pipeline_position(kp), 14);
    assert_null(pipeline_result(kp, 15));
    const StageResult *f = pipeline_failure(kp, 15);
    assert_non_null(f);
    assert_string_equal(f->error, err);
    assert_null(pipeline_failure(kp, 14));
    size_t made = f->trace.nrewrites;
    assert_true(made > 1);
    assert_int_equal(f->rewrites, made);
    assert_ptr_equal(pipeline_ran(kp, 15), f);
    assert_ptr_equal(pipeline_ran(kp, 14), pipeline_result(kp, 14));
    /* the first rewrite of the planted rule: its point holds its result */
    size_t k = 0;
    while (k < made && strcmp(f->trace.rewrites[k].rule, "grow_mul") != 0) k++;
    assert_true(k < made);
    const UOp *after = f->trace.rewrites[k].after;
    assert_true(pipeline_seek_rewrite(kp, 15, k + 1, err, sizeof err));
    assert_int_equal(pipeline_position(kp), 15);
    assert_int_equal(pipeline_rewrite_position(kp), (long)k + 1);
    const UOp *root = pipeline_rewrite_point(kp, 15, k + 1, err, sizeof err);
    assert_non_null(root);
    assert_int_equal(uop_graph_has(root, after), 1);
    assert_ptr_equal(pipeline_rewrite_point(kp, 15, 0, err, sizeof err), pipeline_root(kp, 14, err, sizeof err));
    /* past the rewrites it made: the failure, and the position stays */
    assert_false(pipeline_seek_rewrite(kp, 15, made + 1, err, sizeof err));
    assert_non_null(strstr(err, "rewrite loop"));
    assert_non_null(strstr(err, "rewrites before it failed"));
    assert_int_equal(pipeline_position(kp), 15);
    assert_int_equal(pipeline_rewrite_position(kp), (long)k + 1);
    /* the stage asked for itself runs again and fails again: the position stays at the point inside it */
    assert_null(pipeline_root(kp, 15, err, sizeof err));
    assert_int_equal(pipeline_position(kp), 15);
    /* without the rule the stage runs, and no failure is left */
    assert_int_equal(pipeline_remove(kp, 15, NULL), 1);
    assert_true(pipeline_seek(kp, 15, err, sizeof err));
    assert_null(pipeline_failure(kp, 15));
    pipeline_free(kp);
    ruleset_free(rs);
}

/* a rule that stops its stage as Ctrl-C does: the request made, an error */
static const UOp *ctrl_c(const Match *m, void *ud) {
    (void)ud;
    uopdb_interrupt_request();
    rewrite_fail(m, "interrupted");
    return NULL;
}

/* a stage stopped by Ctrl-C has not failed: nothing is kept as its failure */
static void test_interrupted_stage_is_not_a_failure(void **state) {
    (void)state;
    RuleSet *rs;
    KernelPipeline *kp = planted_pipeline("ctrl_c", ctrl_c, &rs);
    char err[1024];
    uopdb_interrupt_clear();
    bool ran = pipeline_seek(kp, 15, err, sizeof err);
    bool kept = pipeline_failure(kp, 15) || pipeline_ran(kp, 15);
    uopdb_interrupt_clear(); /* before any assertion, so later tests run uninterrupted */
    assert_false(ran);
    assert_non_null(strstr(err, "interrupted"));
    assert_false(kept);
    pipeline_free(kp);
    ruleset_free(rs);
}

static void test_opts_forget_later_stages(void **state) {
    (void)state;
    KernelPipeline *kp = pipeline_new(c, "r_3_3_3", ast);
    char err[512];
    assert_true(pipeline_seek(kp, 10, err, sizeof err));
    KernelOpt up = {OPT_UPCAST, 1, 3};
    pipeline_set_opts(kp, &up, 1);
    assert_non_null(pipeline_result(kp, 6));
    assert_null(pipeline_result(kp, 7));
    assert_int_equal(pipeline_position(kp), 6);
    const KernelOpt *o;
    assert_int_equal(pipeline_opts(kp, &o), 1);
    assert_int_equal(o[0].amount, 3);
    pipeline_free(kp);
}

/* runs the golden matmul AST through all stages and the JIT */
static void run_matmul(const KernelOpt *opts, int nopts) {
    KernelPipeline *kp = pipeline_new(c, "r_3_3_3", ast);
    pipeline_set_opts(kp, opts, nopts);
    char err[1024];
    Kernel *k = pipeline_kernel(kp, err, sizeof err);
    if (!k) fail_msg("%s", err);
    float out[9] = {0}, a[9], b[9];
    for (int i = 0; i < 9; i++) {
        a[i] = (float)(i + 1);
        b[i] = (float)(i + 10);
    }
    void *bufs[3] = {out, a, b};
    assert_int_equal(kernel_num_buffers(k), 3);
    /* ABI order is DEFINE_GLOBAL order: 0 = output */
    for (int i = 0; i < 3; i++) assert_int_equal(kernel_buffer_arg(k, i), i);
    assert_true(kernel_run(k, bufs, NULL, err, sizeof err));
    const float want[9] = {84, 90, 96, 201, 216, 231, 318, 342, 366};
    for (int i = 0; i < 9; i++) assert_true(out[i] == want[i]);
    assert_int_equal(uop_op(pipeline_result(kp, STAGE_COUNT)->root), OP_LINEAR);
    pipeline_free(kp);
}

static void test_matmul_exact(void **state) {
    (void)state;
    run_matmul(NULL, 0);
}

static void test_matmul_upcast_exact(void **state) {
    (void)state;
    KernelOpt up = {OPT_UPCAST, 1, 3};
    run_matmul(&up, 1);
}

static void test_matmul_unroll_exact(void **state) {
    (void)state;
    KernelOpt un = {OPT_UNROLL, 0, 3};
    run_matmul(&un, 1);
}

static void test_stage_table(void **state) {
    (void)state;
    stages_register_rulesets();
    for (int n = 1; n <= STAGE_COUNT; n++) {
        const Stage *st = stage_get(n);
        assert_non_null(st);
        assert_int_equal(st->number, n);
        if (st->kind == STAGE_REWRITE || st->kind == STAGE_LINE_REWRITE) {
            char err[300];
            assert_non_null(st->rules);
            if (!ruleset_get(st->rules, err, sizeof err)) fail_msg("stage %d: %s", n, err);
        }
        if (st->kind == STAGE_HOOK) assert_true(st->hook && st->hook_name);
        if (st->status != STAGE_WRITTEN) assert_non_null(st->note); /* says why */
    }
    assert_null(stage_get(0));
    assert_null(stage_get(23));
    assert_true(stage_get(1)->bottom_up && stage_get(20)->bottom_up && !stage_get(4)->bottom_up);
    assert_string_equal(stage_get(15)->name, "lower index dtype");
}

static bool set_has_rule(const RuleSet *rs, const char *name) {
    for (int i = 0; i < ruleset_count(rs); i++)
        if (!strcmp(rule_name(ruleset_rule(rs, i)), name)) return true;
    return false;
}

/* what each stage ran (its trace) is what its row names: the pass, the
 * rule set, and only rules of that set */
static void test_rows_are_what_runs(void **state) {
    (void)state;
    KernelOpt opts[2] = {{OPT_UPCAST, 1, 3}, {OPT_UNROLL, 0, 3}};
    KernelPipeline *kp = pipeline_new(c, "r_3_3_3", ast);
    pipeline_set_opts(kp, opts, 2);
    char err[512];
    assert_true(pipeline_seek(kp, STAGE_COUNT, err, sizeof err));
    int fired = 0;
    for (int n = 1; n <= STAGE_COUNT; n++) {
        const Stage *st = stage_get(n);
        const StageResult *r = pipeline_result(kp, n);
        if (st->kind == STAGE_PASS) {
            assert_false(r->changed);
            assert_int_equal(r->trace.npasses, 0);
            continue;
        }
        if (st->kind == STAGE_HOOK) continue;
        const RuleSet *rs = ruleset_get(st->rules, err, sizeof err);
        assert_non_null(rs);
        if (r->trace.npasses != 1) fail_msg("stage %d: %zu passes, the row names one", n, r->trace.npasses);
        assert_string_equal(r->trace.passes[0].name, st->pass_name);
        assert_string_equal(r->trace.passes[0].rules, ruleset_name(rs));
        for (size_t i = 0; i < r->trace.nrewrites; i++, fired++)
            if (!set_has_rule(rs, r->trace.rewrites[i].rule))
                fail_msg("stage %d ran rule %s, not in %s", n, r->trace.rewrites[i].rule, st->rules);
    }
    assert_true(fired > 20);
    pipeline_free(kp);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stage_table),
        cmocka_unit_test(test_rows_are_what_runs),
        cmocka_unit_test(test_positions_and_results),
        cmocka_unit_test(test_opts_forget_later_stages),
        cmocka_unit_test(test_failed_stage_points),
        cmocka_unit_test(test_interrupted_stage_is_not_a_failure),
        cmocka_unit_test(test_matmul_exact),
        cmocka_unit_test(test_matmul_upcast_exact),
        cmocka_unit_test(test_matmul_unroll_exact),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
