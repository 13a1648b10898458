/* symbolic_late.c - the rules of tinygrad v0.12.0's `symbolic` that matter
 * only once kernels have effects and concrete integer types: an AFTER
 * depends only on effects (a plain value among its dependencies is replaced
 * by its sources; an AFTER of nothing is its value), and int64 math whose
 * operands and result fit int32 is done in int32. */
#include <stdint.h>
#include <stdlib.h>
#include "bounds.h"
#include "sym_rules.h"

#define CTX (m->ctx)
#define ROOT (m->root)
#define GET(n) match_get(m, n)

/* tinygrad: only RANGE/STORE/KERNEL/BARRIER/END/UNROLL are effects */
static bool is_effect(const UOp *u) {
    Op op = uop_op(u);
    return op == OP_RANGE || op == OP_STORE || op == OP_KERNEL || op == OP_BARRIER || op == OP_END || op == OP_UNROLL;
}

static const UOp *after_effects_only(const Match *m, void *ud) {
    (void)ud;
    const UOp *a = ROOT;
    bool change = false;
    int n = 1;
    for (int i = 1; i < a->nsrc; i++) {
        if (is_effect(a->src[i])) n++;
        else n += a->src[i]->nsrc, change = true;
    }
    if (!change) return NULL;
    const UOp **src = malloc((size_t)n * sizeof *src);
    if (!src) return NULL;
    int k = 0;
    src[k++] = a->src[0];
    for (int i = 1; i < a->nsrc; i++) {
        const UOp *d = a->src[i];
        if (is_effect(d)) src[k++] = d;
        else
            for (int j = 0; j < d->nsrc; j++) src[k++] = d->src[j];
    }
    const UOp *r = uop_with_src(CTX, a, src, k);
    free(src);
    return r;
}

static const UOp *after_alone(const Match *m, void *ud) { (void)ud; return GET("s"); }

static bool overflows_int32(const UOp *u) {
    int64_t lo, hi;
    return !uop_bounds(u, &lo, &hi) || lo < INT32_MIN || hi > INT32_MAX;
}

static const UOp *long_math_in_int(const Match *m, void *ud) {
    (void)ud;
    const UOp *u = ROOT, *x = GET("x"), *y = GET("y");
    if (overflows_int32(u) || overflows_int32(x) || overflows_int32(y)) return NULL;
    const UOp *r = uop_binary(CTX, uop_op(u), uop_cast(CTX, x, DT_INT32), uop_cast(CTX, y, DT_INT32));
    return r ? uop_cast(CTX, r, u->dtype) : NULL;
}

static const RuleSpec after_long_specs[] = {
    RULE_FN("long_math_in_int", "(Binary x:int64 y:int64)", long_math_in_int),
    RULE_FN("after_effects_only", "(AFTER)", after_effects_only),
    RULE_FN("after_alone", "(AFTER s)", after_alone),
};

const RuleTable sym_after_long_rules = RULE_TABLE(after_long_specs);
