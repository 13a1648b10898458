/* gpudims.c - stage 12 for the CPU: a THREAD range (from the THREAD opt)
 * becomes SPECIAL gidx0, which the LLVM renderer reads as the kernel's
 * core_id argument, and the ENDs that closed it no longer do; the program
 * runner launches one call per core_id (kernel_threads).  GLOBAL and LOCAL
 * ranges have no hardware index on the CPU and stay loops, as in tinygrad's
 * CPU renderer, which has no local memory or workgroups. */
#include <stdlib.h>
#include "stage_rules.h"
#include "stages.h"

#define CTX (m->ctx)
#define ROOT (m->root)

static bool is_thread_range(const UOp *u) {
    if (uop_op(u) != OP_RANGE || !u->arg || u->arg->kind != ARG_TUPLE || !u->arg->n) return false;
    const Arg *t = u->arg->items[u->arg->n - 1];
    return t && t->kind == ARG_AXIS && t->v.axis == AXIS_THREAD;
}

/* RANGE(n, THREAD) -> SPECIAL(n) "gidx0" */
static const UOp *thread_to_special(const Match *m, void *ud) {
    (void)ud;
    const UOp *r = ROOT;
    if (!is_thread_range(r)) return NULL;
    return uop_intern(CTX, OP_SPECIAL, r->dtype, &r->src[0], 1, arg_str(CTX, "gidx0"), NULL);
}

/* END(x, ..., SPECIAL, ...) -> END(x, ...): a core_id is not a loop */
static const UOp *end_drops_special(const Match *m, void *ud) {
    (void)ud;
    const UOp *e = ROOT;
    int keep = 0;
    for (int i = 0; i < e->nsrc; i++) keep += !(i > 0 && uop_op(e->src[i]) == OP_SPECIAL);
    if (keep == e->nsrc) return NULL;
    const UOp **src = malloc((size_t)keep * sizeof *src);
    if (!src) return NULL;
    int k = 0;
    for (int i = 0; i < e->nsrc; i++)
        if (!(i > 0 && uop_op(e->src[i]) == OP_SPECIAL)) src[k++] = e->src[i];
    const UOp *out = keep == 1 ? e->src[0] : uop_intern(CTX, OP_END, e->dtype, src, keep, e->arg, e->tag);
    free(src);
    return out;
}

static const RuleSpec specs[] = {
    RULE_FN("thread_to_special", "(RANGE ...)", thread_to_special),
    RULE_FN("end_drops_special", "(END ...)", end_drops_special),
};

const RuleTable pm_add_gpudims_rules = RULE_TABLE(specs);
