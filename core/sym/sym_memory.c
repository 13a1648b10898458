/* sym_memory.c - the load/store folding rules of tinygrad v0.12.0's `sym`:
 * a store of what was just loaded from the same address does nothing, a
 * store of where(gate, alt, load of the same address) becomes a store gated
 * by that condition, and a load or store at an Invalid index (a read or write
 * that padding or a gate proved never happens) becomes 0 or nothing; an END
 * of a store folded to nothing is nothing. */
#include <stdlib.h>
#include "sym_rules.h"

#define CTX (m->ctx)
#define ROOT (m->root)
#define GET(n) match_get(m, n)

/* a zero of dtype dt (a vector of zeros for a vector dtype) */
static const UOp *zero_like(UCtx *c, const DType *dt) {
    const DType *s = dt->scalar;
    const UOp *z = dt_is_float(s) ? uop_const_float(c, s, 0.0)
                   : dt_is_bool(s) ? uop_const_bool(c, false)
                                   : uop_const_int(c, s, 0);
    if (!z || dt->count <= 1) return z;
    const UOp *lanes[64];
    int n = dt->count < 64 ? dt->count : 64;
    for (int i = 0; i < n; i++) lanes[i] = z;
    return uop_intern(c, OP_VECTORIZE, dt, lanes, n, NULL, NULL);
}

static const UOp *noop(UCtx *c) { return uop_intern(c, OP_NOOP, DT_VOID, NULL, 0, NULL, NULL); }

static const UOp *store_of_own_load(const Match *m, void *ud) {
    (void)ud;
    return noop(CTX);
}

/* store(i, where(gate, alt, load(i))) -> store(index(buf, where(gate, idx, Invalid)), alt) */
static const UOp *store_gated_by_where(const Match *m, void *ud) {
    (void)ud;
    const UOp *st = ROOT, *i = GET("i");
    if (i->nsrc != 2) return NULL; /* already gated */
    const UOp *inv = uop_const_arg(CTX, i->src[1]->dtype, arg_invalid(CTX));
    if (!inv) return NULL;
    const UOp *w[3] = {GET("gate"), i->src[1], inv};
    const UOp *gated_idx = uop_intern(CTX, OP_WHERE, i->src[1]->dtype, w, 3, NULL, NULL);
    const UOp *isrc[2] = {i->src[0], gated_idx};
    const UOp *ni = uop_intern(CTX, OP_INDEX, i->dtype, isrc, 2, i->arg, i->tag);
    const UOp **src = malloc((size_t)st->nsrc * sizeof *src);
    if (!src) return NULL;
    src[0] = ni;
    src[1] = GET("alt");
    for (int k = 2; k < st->nsrc; k++) src[k] = st->src[k];
    const UOp *r = uop_intern(CTX, OP_STORE, st->dtype, src, st->nsrc, st->arg, st->tag);
    free(src);
    return r;
}

static const UOp *invalid_load_is_zero(const Match *m, void *ud) {
    (void)ud;
    return zero_like(CTX, ROOT->dtype);
}

static const UOp *invalid_store_does_nothing(const Match *m, void *ud) {
    (void)ud;
    return noop(CTX);
}

/* an END of a NOOP without sources (a store folded away) is that NOOP */
static const UOp *end_of_empty_noop(const Match *m, void *ud) {
    (void)ud;
    const UOp *n = GET("noop");
    return n->nsrc == 0 ? n : NULL;
}

static const RuleSpec memory_specs[] = {
    RULE_FN("store_of_own_load", "(STORE i@(INDEX ...) (LOAD i) ...)", store_of_own_load),
    RULE_FN("store_gated_by_where", "(STORE i@(INDEX ...) (WHERE gate alt (LOAD i)) ...)", store_gated_by_where),
    RULE_FN("invalid_load_is_zero", "(LOAD (INDEX _ Invalid) ...)", invalid_load_is_zero),
    RULE_FN("invalid_load_is_zero_cast", "(LOAD (CAST (INDEX _ Invalid)) ...)", invalid_load_is_zero),
    RULE_FN("invalid_store_does_nothing", "(STORE (INDEX _ Invalid) ...)", invalid_store_does_nothing),
    RULE_FN("invalid_store_does_nothing_cast", "(STORE (CAST (INDEX _ Invalid)) ...)", invalid_store_does_nothing),
    RULE_FN("end_of_empty_noop", "(END noop@(NOOP) ...)", end_of_empty_noop),
};
const RuleTable sym_memory_rules = {memory_specs, sizeof memory_specs / sizeof *memory_specs};
