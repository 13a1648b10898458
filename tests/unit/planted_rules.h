/* planted_rules.h - the wrong rules the debugger's unit tests plant in a
 * stage of the golden 3x3 matmul (int32 index arithmetic, stage 15):
 * mul_to_add makes a*b a+b (a wrong kernel), grow_mul makes a*b (a*1)*b,
 * whose new a*1 it rewrites into a node containing itself (a stage that
 * fails with a rewrite loop); and the pipeline with one of them planted.
 * Include after cmocka.h and golden_matmul_fixture.h. */
#ifndef UOPDB_PLANTED_RULES_H
#define UOPDB_PLANTED_RULES_H
#include "core/debug/pipeline.h"

static inline const UOp *mul_to_add(const Match *m, void *ud) {
    (void)ud;
    return uop_binary(m->ctx, OP_ADD, match_get(m, "a"), match_get(m, "b"));
}

static inline const UOp *grow_mul(const Match *m, void *ud) {
    (void)ud;
    const UOp *a = match_get(m, "a");
    return uop_binary(m->ctx, OP_MUL, uop_binary(m->ctx, OP_MUL, a, uop_const_int(m->ctx, a->dtype, 1)),
                      match_get(m, "b"));
}

/* a set of one rule, `name`, on (MUL:int32 a b) */
static inline RuleSet *planted_set(const char *name, RewriteFn fn) {
    RuleSpec spec[] = {{.name = name, .pattern = "(MUL:int32 a b)", .fn = fn, .file = __FILE__, .line = __LINE__}};
    char err[512];
    RuleSet *rs = ruleset_from_specs(name, spec, 1, err, sizeof err);
    assert_non_null(rs);
    return rs;
}

/* the golden matmul with that rule inserted into stage 15, after its own
 * rules; *rs is the set, for the caller to free after the pipeline */
static inline KernelPipeline *planted_pipeline(const char *name, RewriteFn fn, RuleSet **rs) {
    *rs = planted_set(name, fn);
    KernelPipeline *kp = pipeline_new(c, "r_3_3_3", ast);
    char err[512];
    assert_true(pipeline_insert(kp, 15, *rs, false, err, sizeof err));
    return kp;
}

#endif
