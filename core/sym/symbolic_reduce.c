/* symbolic_reduce.c - the REDUCE rules of tinygrad v0.12.0's sym: factors of
 * a reduced product that do not depend on the reduction's ranges move out
 * of the loop.
 *   reduce_const_mul_out  sum(x*c) -> sum(x)*c (c a scalar constant)
 *   reduce_mul_chain      sum(a*b*...) -> sum(inside)*outside, for ADD and
 *                         MAX (for MAX only factors that are never negative)
 *                         when the REDUCE keeps its source's dtype */
#include <stdlib.h>
#include "bounds.h"
#include "sym_helpers.h"
#include "sym_rules.h"

#define CTX (m->ctx)
#define ROOT (m->root)
#define GET(n) match_get(m, n)

static Op reduce_op(const UOp *r) { return r->arg && r->arg->kind == ARG_OP ? r->arg->v.op : OP_COUNT; }

/* the REDUCE r with src[0] replaced by x */
static const UOp *reduce_of(UCtx *c, const UOp *r, const UOp *x) {
    const UOp *small[16];
    const UOp **src = r->nsrc <= 16 ? small : malloc((size_t)r->nsrc * sizeof *src);
    if (!src) return NULL;
    src[0] = x;
    for (int i = 1; i < r->nsrc; i++) src[i] = r->src[i];
    const UOp *out = uop_with_src(c, r, src, r->nsrc);
    if (src != small) free(src);
    return out;
}

static const UOp *reduce_const_mul_out(const Match *m, void *ud) {
    (void)ud;
    const UOp *r = ROOT, *c = GET("c");
    if (reduce_op(r) != OP_ADD || c->dtype->count != 1) return NULL;
    const UOp *inner = reduce_of(CTX, r, GET("x"));
    if (!inner) return NULL;
    /* c's value as a constant of the REDUCE's dtype */
    const UOp *k = NULL;
    if (c->arg->kind == ARG_FLOAT) k = uop_const_float(CTX, r->dtype, c->arg->v.f);
    else if (c->arg->kind == ARG_INT) k = uop_const_int(CTX, r->dtype, c->arg->v.i);
    else if (c->arg->kind == ARG_BOOL) k = uop_const_int(CTX, r->dtype, c->arg->v.b);
    return k ? uop_binary(CTX, OP_MUL, inner, k) : NULL;
}

/* is u one of the REDUCE's ranges?  A source that is a RANGE is itself; a
 * source that is an expression of ranges (the middle of a substitution, as
 * the range splitting simplifies before the ranges are flattened) counts
 * every RANGE in it. */
static bool is_reduce_range(const UOp *r, const UOp *u, const UOp *const *const *parts, const size_t *nparts) {
    for (int j = 1; j < r->nsrc; j++) {
        if (r->src[j] == u) return true;
        if (uop_op(u) != OP_RANGE || uop_op(r->src[j]) == OP_RANGE) continue;
        for (size_t i = 0; i < nparts[j]; i++)
            if (parts[j][i] == u) return true;
    }
    return false;
}

/* does m depend on any of the REDUCE's ranges? */
enum { MAX_REDUCE_SRCS = 64 };

static bool uses_reduce_range(const UOp *r, const UOp *m, bool *failed) {
    size_t n = 0;
    const UOp **topo = uop_toposort(m, &n);
    const UOp **parts[MAX_REDUCE_SRCS] = {0};
    size_t nparts[MAX_REDUCE_SRCS] = {0};
    bool found = false;
    if (!topo || r->nsrc > MAX_REDUCE_SRCS) { *failed = true; found = true; }
    for (int j = 1; !found && j < r->nsrc; j++)
        if (uop_op(r->src[j]) != OP_RANGE && !(parts[j] = uop_toposort(r->src[j], &nparts[j]))) *failed = found = true;
    for (size_t i = 0; i < n && !found; i++) found = is_reduce_range(r, topo[i], (const UOp *const *const *)parts, nparts);
    for (int j = 1; j < r->nsrc && j < MAX_REDUCE_SRCS; j++) free(parts[j]);
    free(topo);
    return found;
}

/* tinygrad's prod(): 1 * f0 * f1 * ... */
static const UOp *product(UCtx *c, const UOp *const *f, int n, const UOp *like) {
    const UOp *acc = sym_const_like(c, like, 1);
    for (int i = 0; i < n && acc; i++) acc = uop_binary(c, OP_MUL, acc, f[i]);
    return acc;
}

static const UOp *reduce_mul_chain(const Match *m, void *ud) {
    (void)ud;
    const UOp *r = ROOT;
    Op op = reduce_op(r);
    if ((op != OP_ADD && op != OP_MAX) || r->dtype != r->src[0]->dtype) return NULL;
    const UOp *f[SYM_MAX_TERMS], *inside[SYM_MAX_TERMS], *outside[SYM_MAX_TERMS];
    int n = sym_split(r->src[0], OP_MUL, f, SYM_MAX_TERMS), ni = 0, no = 0;
    if (n < 0) return NULL;
    bool failed = false;
    for (int i = 0; i < n; i++) {
        int64_t lo, hi;
        bool nonneg = op != OP_MAX || (uop_bounds(f[i], &lo, &hi) && lo >= 0);
        if (!uses_reduce_range(r, f[i], &failed) && nonneg) outside[no++] = f[i];
        else inside[ni++] = f[i];
    }
    if (failed || no == 0) return NULL;
    const UOp *in = ni ? product(CTX, inside, ni, r->src[0]) : sym_const_like(CTX, r->src[0], 1);
    const UOp *red = in ? reduce_of(CTX, r, in) : NULL;
    const UOp *out = product(CTX, outside, no, r->src[0]);
    return red && out ? uop_binary(CTX, OP_MUL, red, out) : NULL;
}

static const RuleSpec reduce_specs[] = {
    RULE_FN("reduce_const_mul_out", "(REDUCE (MUL x c@(CONST)) ...)", reduce_const_mul_out),
    RULE_FN("reduce_mul_chain", "(REDUCE (MUL _ _) ...)", reduce_mul_chain),
};
const RuleTable sym_reduce_rules = RULE_TABLE(reduce_specs);
