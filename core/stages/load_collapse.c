/* load_collapse.c - stage 2, tinygrad v0.12.0's pm_load_collapse: a sum
 * over a range r whose value selects one r, such as indexing a tensor by
 * another (sum over r of (idx != r).where(0, x[r])), becomes the selected
 * value with no loop (x[idx] where 0 <= idx < n, else 0).
 *
 * For a REDUCE(ADD) over one range, reduce_collapse_range (core/sched/
 * reduce_collapse.c: the part of the value that depends on r kept, what it
 * reads from outside made variables) rewrites it with
 * pm_reduce_load_collapse: pm_reduce_collapse (pm_reduce_unparented, the
 * reduce_collapse algebra, symbolic) and the two load rules here:
 *   reduce_load_collapse  (x + y) != c moves y; a sum over r of
 *                         (idx != r).where(0, e) is e at r = idx, guarded by
 *                         0 <= idx < n
 *   pm_load_collapse      the REDUCE rule, and (x + y) < c with y and c
 *                         free of loads becomes x < c - y (undoing the move
 *                         above where x is loaded, so no arithmetic is done
 *                         on a loaded index). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "stage_rules.h"
#include "uop_build.h"
#include "../sched/reduce_collapse.h"
#include "../sched/sched_graph.h"
#include "../sym/sym_helpers.h"
#include "../rewrite/rewrite.h"

#define CTX (m->ctx)
#define GET(n) match_get(m, n)

static bool no_range(const UOp *u) { return u && !graph_has_op(u, OP_RANGE); }
static bool no_load(const UOp *u) { return u && !graph_has_op(u, OP_INDEX); }

/* ---- reduce_load_collapse ---- */

/* (x+y).or_casted() != c -> x != c.cast(y.dtype) - y */
static const UOp *lift_add_ne(const Match *m, void *ud) {
    (void)ud;
    const UOp *x = GET("x"), *y = GET("y"), *c = GET("c");
    if (!no_range(y) || !no_range(c)) return NULL;
    return uop_binary(CTX, OP_CMPNE, x, sym_add(CTX, ub_cast(CTX, c, y->dtype), sym_neg(CTX, y)));
}

/* sum over r of (idx != r).where(0, e) -> v.where(e at r = idx (Invalid
 * outside v), 0), v = 0 <= idx < n */
static const UOp *reduce_gated_load(const Match *m, void *ud) {
    (void)ud;
    const UOp *red = m->root, *r = GET("r"), *expr = GET("expr");
    if (!is_reduce_add(red) || red->nsrc != 2) return NULL;
    const UOp *i = ub_cast(CTX, GET("idx"), r->dtype);
    const UOp *ge0 = uop_binary(CTX, OP_CMPNE, uop_binary(CTX, OP_CMPLT, i, uop_const_int(CTX, r->dtype, 0)),
                                uop_const_bool(CTX, true));
    const UOp *v = uop_binary(CTX, OP_AND, ge0, uop_binary(CTX, OP_CMPLT, i, r->src[0]));
    const UOp *at = uop_where(CTX, v, i, uop_const_arg(CTX, r->dtype, arg_invalid(CTX)));
    if (!at) return NULL;
    U64Map map = {0};
    if (!u64map_put(&map, r->id, at)) return NULL;
    const UOp *e = sched_substitute(CTX, expr, &map);
    u64map_free(&map);
    return uop_where(CTX, v, e, uop_const_int(CTX, expr->dtype, 0));
}

static const RuleSpec reduce_load_collapse_specs[] = {
    RULE_FN("lift_add_ne", "(CMPNE (ADD x y) c)", lift_add_ne),
    RULE_FN("lift_add_ne_cast", "(CMPNE (CAST (ADD x y)) c)", lift_add_ne),
    RULE_FN("reduce_gated_load", "(REDUCE (WHERE (CMPNE idx r@(RANGE)) 0 expr) r)", reduce_gated_load),
    RULE_FN("reduce_gated_load_cast", "(REDUCE (WHERE (CMPNE idx (CAST r@(RANGE))) 0 expr) r)", reduce_gated_load),
};

/* ---- pm_load_collapse ---- */

/* a REDUCE(ADD) over one range, collapsed by pm_reduce_load_collapse; the
 * value with no REDUCE, or NULL */
static const UOp *reduce_load_collapse(const Match *m, void *ud) {
    (void)ud;
    const UOp *red = m->root;
    if (!is_reduce_add(red) || red->nsrc != 2 || uop_op(red->src[1]) != OP_RANGE) return NULL;
    char why[256];
    const RuleSet *rs = ruleset_get("pm_reduce_load_collapse", why, sizeof why);
    if (!rs) { rewrite_fail(m, "%s", why); return NULL; }
    return reduce_collapse_range(CTX, red->src[0], red->src[1], rs);
}

/* (x:index + y) < c -> x < c - y when only x reads a load */
static const UOp *lt_unlift(const Match *m, void *ud) {
    (void)ud;
    const UOp *x = GET("x"), *y = GET("y"), *c = GET("c");
    if (!no_load(y) || !no_load(c) || no_load(x)) return NULL;
    return uop_binary(CTX, OP_CMPLT, x, sym_add(CTX, c, sym_neg(CTX, y)));
}

static const RuleSpec load_collapse_specs[] = {
    RULE_FN("reduce_load_collapse", "(REDUCE _ _)", reduce_load_collapse),
    RULE_FN("lt_unlift", "(CMPLT (ADD x:index y) c)", lt_unlift),
};

const RuleTable reduce_load_collapse_rules = RULE_TABLE(reduce_load_collapse_specs);
const RuleTable pm_load_collapse_rules = RULE_TABLE(load_collapse_specs);
