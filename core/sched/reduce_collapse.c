/* reduce_collapse.c - tinygrad v0.12.0's reduce_collapse: a sum over a
 * range whose value only counts or selects along it becomes arithmetic.
 * The algebra (pm_reduce_collapse's own rules):
 *   lift_add_lt / lift_mul_lt  a comparison with an ADD/MUL moves the part
 *                              without ranges to the other side
 *   bound_below/above/both     a sum of a select on r < cut is a count
 *                              times the value
 *   reduce_of_add              a sum of an ADD is the ADD of sums
 *   and_var_out                a variable in an AND of a select comes out
 *                              as a factor
 *   mul_cast_bool              x * bool.cast() is a select
 * reduce_collapse_range runs them on one range; pm_reduce_simplify's rule
 * runs it on every range of a REDUCE(ADD), as the scheduler's symbolic pass
 * does (the generic arange fold). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "reduce_collapse.h"
#include "reduce_unparented.h"
#include "sched_graph.h"
#include "../rewrite/rewrite.h"
#include "../sym/bounds.h"
#include "../sym/sym_helpers.h"
#include "../sym/symbolic.h"

#define CTX (m->ctx)
#define GET(n) match_get(m, n)

bool graph_has_op(const UOp *u, Op op) {
    size_t n = 0;
    const UOp **t = uop_toposort(u, &n);
    bool found = false;
    for (size_t i = 0; i < n && !found; i++) found = uop_op(t[i]) == op;
    free((void *)t);
    return found;
}
static bool no_range(const UOp *u) { return u && !graph_has_op(u, OP_RANGE); }

static const UOp *minimum(UCtx *c, const UOp *a, const UOp *b) {  /* -max(-a, -b), as tinygrad */
    const UOp *m1 = uop_const_int(c, a->dtype, -1);
    return uop_binary(c, OP_MUL, uop_binary(c, OP_MAX, uop_binary(c, OP_MUL, a, m1), uop_binary(c, OP_MUL, b, m1)), m1);
}
static const UOp *maximum0(UCtx *c, const UOp *a) { return uop_binary(c, OP_MAX, a, uop_const_int(c, a->dtype, 0)); }
/* a - b, as tinygrad builds it: a + b*-1 */
static const UOp *sub(UCtx *c, const UOp *a, const UOp *b) { return sym_add(c, a, sym_neg(c, b)); }
bool is_reduce_add(const UOp *u) {
    return u && uop_op(u) == OP_REDUCE && u->arg && u->arg->kind == ARG_OP && u->arg->v.op == OP_ADD;
}

/* ---- the algebra ---- */

/* (x+y).or_casted() < c -> x < c.cast(y.dtype) - y */
static const UOp *lift_add_lt(const Match *m, void *ud) {
    (void)ud;
    const UOp *x = GET("x"), *y = GET("y"), *c = GET("c");
    if (!no_range(y) || !no_range(c)) return NULL;
    return uop_binary(CTX, OP_CMPLT, x, sub(CTX, uop_cast(CTX, c, y->dtype), y));
}
/* (x*y) < c -> x < (c+y-1)//y for an integer y > 0 */
static const UOp *lift_mul_lt(const Match *m, void *ud) {
    (void)ud;
    const UOp *x = GET("x"), *y = GET("y"), *c = GET("c");
    int64_t lo, hi;
    if (!no_range(y) || !no_range(c) || !dt_is_int(y->dtype) || !uop_bounds(y, &lo, &hi) || lo <= 0) return NULL;
    const UOp *num = uop_binary(CTX, OP_ADD, uop_binary(CTX, OP_ADD, c, y), uop_const_int(CTX, c->dtype, -1));
    return uop_binary(CTX, OP_CMPLT, x, uop_binary(CTX, OP_IDIV, num, y));
}
/* the REDUCE's value is a WHERE on a comparison of its own range; what the
 * three bound rules share: the count of r for which the value is taken */
static const UOp *counted(const Match *m, const UOp *count) {
    const UOp *val = GET("val");
    if (!is_reduce_add(m->root) || m->root->nsrc != 2 || !no_range(val)) return NULL;
    return uop_binary(CTX, OP_MUL, uop_cast(CTX, count, val->dtype), val);
}
static const UOp *bound_below(const Match *m, void *ud) {  /* sum over r of (r < cut).where(0, val) */
    (void)ud;
    const UOp *n = GET("r")->src[0];
    return counted(m, minimum(CTX, maximum0(CTX, sub(CTX, n, GET("cut"))), n));
}
static const UOp *bound_both(const Match *m, void *ud) {   /* sum of (!(r < lower) & (r < upper)).where(val, 0) */
    (void)ud;
    const UOp *n = GET("r")->src[0];
    const UOp *span = sub(CTX, minimum(CTX, GET("upper"), n), maximum0(CTX, GET("lower")));
    return counted(m, minimum(CTX, maximum0(CTX, span), n));
}
static const UOp *bound_above(const Match *m, void *ud) {  /* sum over r of (r < cut).where(val, 0) */
    (void)ud;
    const UOp *n = GET("r")->src[0];
    return counted(m, minimum(CTX, maximum0(CTX, GET("cut")), n));
}
/* REDUCE(x+y) over the same ranges -> REDUCE(x) + REDUCE(y) */
static const UOp *reduce_of_add(const Match *m, void *ud) {
    (void)ud;
    const UOp *red = m->root;
    if (!is_reduce_add(red)) return NULL;
    const UOp *src[64];
    if (red->nsrc > 64) return NULL;
    memcpy(src, red->src, (size_t)red->nsrc * sizeof *src);
    src[0] = GET("x");
    const UOp *a = uop_with_src(CTX, red, src, red->nsrc);
    src[0] = GET("y");
    const UOp *b = uop_with_src(CTX, red, src, red->nsrc);
    return uop_binary(CTX, OP_ADD, a, b);
}
/* REDUCE((var & y).where(c, 0)) -> REDUCE(y.where(c, 0)) * var.cast(c.dtype) */
static const UOp *and_var_out(const Match *m, void *ud) {
    (void)ud;
    const UOp *red = m->root, *c = GET("c");
    if (!is_reduce_add(red) || red->nsrc > 64) return NULL;
    const UOp *src[64];
    memcpy(src, red->src, (size_t)red->nsrc * sizeof *src);
    src[0] = uop_where(CTX, GET("y"), c, red->src[0]->src[2]);
    const UOp *r = uop_with_src(CTX, red, src, red->nsrc);
    return uop_binary(CTX, OP_MUL, r, uop_cast(CTX, GET("x"), c->dtype));
}
/* x * gate.cast() -> gate.where(x, 0) */
static const UOp *mul_cast_bool(const Match *m, void *ud) {
    (void)ud;
    const UOp *x = GET("x");
    return uop_where(CTX, GET("gate"), x, uop_const_int(CTX, x->dtype, 0));
}

static const RuleSpec reduce_collapse_specs[] = {
    RULE_FN("lift_add_lt", "(CMPLT (ADD x y) c)", lift_add_lt),
    RULE_FN("lift_add_lt_cast", "(CMPLT (CAST (ADD x y)) c)", lift_add_lt),
    RULE_FN("lift_mul_lt", "(CMPLT (MUL x y) c)", lift_mul_lt),
    RULE_FN("bound_below", "(REDUCE (WHERE (CMPLT r@(RANGE) cut) 0 val) r)", bound_below),
    RULE_FN("bound_both", "(REDUCE (WHERE (AND (CMPNE (CMPLT r lower) true) (CMPLT r@(RANGE) upper)) val 0) r)", bound_both),
    RULE_FN("bound_above", "(REDUCE (WHERE (CMPLT r@(RANGE) cut) val 0) r)", bound_above),
    RULE_FN("reduce_of_add", "(REDUCE (ADD x y) ...)", reduce_of_add),
    RULE_FN("and_var_out", "(REDUCE (WHERE (AND x@(DEFINE_VAR) y) c 0) ...)", and_var_out),
    RULE_FN("mul_cast_bool", "(MUL x (CAST gate:bool))", mul_cast_bool),
};

/* ---- one range ---- */

const UOp *reduce_collapse_range(UCtx *c, const UOp *u, const UOp *r, const RuleSet *rs) {
    if (!u || !r || uop_op(r) != OP_RANGE || !rs) return NULL;
    size_t n = 0;
    const UOp **t = uop_toposort(u, &n);
    if (!t) return NULL;
    /* the nodes that depend on r */
    U64Map dep = {0}, fwd = {0}, back = {0};
    const UOp *out = NULL;
    bool ok = true;
    int nvars = 0;
    for (size_t i = 0; i < n && ok; i++) {
        bool d = t[i] == r;
        for (int k = 0; k < t[i]->nsrc && !d; k++) d = u64map_get(&dep, t[i]->src[k]->id) != NULL;
        if (!d) continue;
        if (uop_op(t[i]) == OP_STORE || uop_op(t[i]) == OP_REDUCE) { ok = false; break; }
        ok = u64map_put(&dep, t[i]->id, t[i]);
    }
    /* without a select on something of r no rule can remove it (see the header) */
    bool hopeful = !u64map_get(&dep, u->id);
    for (size_t i = 0; i < n && ok && !hopeful; i++)
        hopeful = u64map_get(&dep, t[i]->id) &&
                  (uop_op(t[i]) == OP_WHERE || (uop_op(t[i]) == OP_CAST && dt_is_bool(t[i]->src[0]->dtype)));
    ok = ok && hopeful;
    /* what they read from outside becomes a variable */
    for (size_t i = 0; i < n && ok; i++) {
        if (!u64map_get(&dep, t[i]->id)) continue;
        for (int k = 0; k < t[i]->nsrc && ok; k++) {
            const UOp *s = t[i]->src[k];
            Op o = uop_op(s);
            if (u64map_get(&dep, s->id) || u64map_get(&fwd, s->id) || o == OP_CONST || o == OP_VCONST ||
                o == OP_DEFINE_GLOBAL || o == OP_DEFINE_LOCAL || o == OP_DEFINE_VAR)
                continue;
            int64_t lo, hi;
            char name[32];
            snprintf(name, sizeof name, "in%d", nvars++);
            const Arg *items[3] = {arg_str(c, name), NULL, NULL};
            if (dt_is_float(s->dtype) || !uop_bounds(s, &lo, &hi)) {
                items[1] = arg_float(c, -1.0 / 0.0), items[2] = arg_float(c, 1.0 / 0.0);
                if (!dt_is_float(s->dtype)) { ok = false; break; }
            } else {
                items[1] = arg_int(c, lo), items[2] = arg_int(c, hi);
            }
            const UOp *var = uop_new(c, OP_DEFINE_VAR, s->dtype, NULL, 0, arg_tuple(c, items, 3));
            ok = var && u64map_put(&fwd, s->id, var) && u64map_put(&back, var->id, s);
        }
    }
    free((void *)t);
    if (ok) {
        const UOp *body = sched_substitute(c, u, &fwd);
        const UOp *fx = body ? uop_new(c, OP_REDUCE, u->dtype, (const UOp *[]){body, r}, 2, arg_op(c, OP_ADD)) : NULL;
        RewriteOpts o = {.name = "reduce_collapse"};
        const UOp *sink = fx ? graph_rewrite(c, fx, rs, &o) : NULL;
        if (sink && no_range(sink)) out = sched_substitute(c, sink, &back);
    }
    u64map_free(&dep), u64map_free(&fwd), u64map_free(&back);
    uctx_clear_error(c);
    return out;
}

/* ---- pm_reduce_simplify: every range of a sum ---- */

/* REDUCE(ADD) of u over its ranges -> u with each range collapsed in turn,
 * or nothing when one of them stays */
static const UOp *reduce_simplify(const Match *m, void *ud) {
    (void)ud;
    const UOp *red = m->root, *u = red->src[0];
    if (!is_reduce_add(red) || red->nsrc < 2) return NULL;
    char why[256];
    const RuleSet *rs = ruleset_get("pm_reduce_collapse", why, sizeof why);
    if (!rs) { rewrite_fail(m, "%s", why); return NULL; }
    for (int i = 1; i < red->nsrc && u; i++) u = reduce_collapse_range(CTX, u, red->src[i], rs);
    return u;
}

static const RuleSpec reduce_simplify_specs[] = {
    RULE_FN("reduce_collapse", "(REDUCE u ...)", reduce_simplify),
};

const RuleTable reduce_collapse_rules = RULE_TABLE(reduce_collapse_specs);
static const RuleTable reduce_simplify_rules = RULE_TABLE(reduce_simplify_specs);

static const RuleTable *const unparented_list[] = {&pm_reduce_unparented_rules};
static const RuleTable *const collapse_list[] = {&reduce_collapse_rules};
static const RuleTable *const simplify_list[] = {&reduce_simplify_rules};
static const RuleSetDef SCHED_SETS[] = {
    {"pm_reduce_unparented", NULL, RULE_TABLES(unparented_list),
     "a reduction over ranges its value does not use becomes arithmetic"},
    {"reduce_collapse", NULL, RULE_TABLES(collapse_list),
     "a sum over a range moved out of comparisons, counted, split over ADD (pm_reduce_collapse's own rules)"},
    {"pm_reduce_collapse", "pm_reduce_unparented + reduce_collapse + symbolic", NULL, 0,
     "pm_reduce_unparented + reduce_collapse + symbolic: a REDUCE whose loop the algebra removes"},
    {"pm_reduce_simplify", "pm_reduce_unparented", RULE_TABLES(simplify_list),
     "pm_reduce_unparented + a sum whose every range pm_reduce_collapse removes (the scheduler's arange fold)"},
};

static void register_sets(void) {
    char err[256];
    sym_register_rulesets();
    if (!ruleset_register(SCHED_SETS, (int)(sizeof SCHED_SETS / sizeof *SCHED_SETS), err, sizeof err))
        fprintf(stderr, "uopdb: %s\n", err);
}

void sched_register_rulesets(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, register_sets);
}
