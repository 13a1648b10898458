/* planted_rules.h - the wrong rules the debugger's unit tests plant in a
 * stage of the golden 3x3 matmul (int32 index arithmetic, stage 15):
 * mul_to_add makes a*b a+b (a wrong kernel), grow_mul makes a*b (a*1)*b,
 * whose new a*1 it rewrites into a node containing itself (a stage that
 * fails with a rewrite loop).  Include after pattern.h. */
#ifndef UOPDB_PLANTED_RULES_H
#define UOPDB_PLANTED_RULES_H

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

#endif
