/* load_collapse.c - stage 2, tinygrad v0.12.0's pm_load_collapse: a sum
 * over a range r whose value selects one r, such as indexing a tensor by
 * another (sum over r of (idx != r).where(0, x[r])), becomes the selected
 * value with no loop (x[idx] where 0 <= idx < n, else 0).
 *
 * For a REDUCE(ADD) over one range, the nodes of its value that depend on r
 * are kept, everything else they read is replaced by a DEFINE_VAR with its
 * bounds (so "does not depend on a range" is a question of the graph
 * alone), the REDUCE of that is rewritten with pm_reduce_load_collapse
 * (pm_reduce_unparented, the reduce_collapse algebra below, symbolic, and
 * the two load rules), and when no RANGE is left the variables are
 * replaced back.  The rules:
 *   reduce_collapse       a comparison with an ADD/MUL moves the part
 *                         without ranges to the other side; a sum of a
 *                         select on r < cut (from below, above, or both)
 *                         is a count times the value; a sum of an ADD is
 *                         the ADD of sums; a variable in an AND of a select
 *                         comes out as a factor; x * bool.cast() is a select
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
#include "../rewrite/rewrite.h"
#include "../sym/bounds.h"
#include "../util/u64map.h"

#define CTX (m->ctx)
#define GET(n) match_get(m, n)

/* whether u's graph (u included) has a node of op */
static bool graph_has(const UOp *u, Op op) {
    size_t n = 0;
    const UOp **t = uop_toposort(u, &n);
    bool found = false;
    for (size_t i = 0; i < n && !found; i++) found = uop_op(t[i]) == op;
    free((void *)t);
    return found;
}
static bool no_range(const UOp *u) { return u && !graph_has(u, OP_RANGE); }
static bool no_load(const UOp *u) { return u && !graph_has(u, OP_INDEX); }

/* root with every node in map (by id) replaced by its value */
static const UOp *substitute(UCtx *c, const UOp *root, const U64Map *map) {
    size_t n = 0;
    const UOp **t = uop_toposort(root, &n);
    if (!t) return NULL;
    U64Map done = {0};
    const UOp *out = NULL;
    for (size_t i = 0; i < n; i++) {
        const UOp *u = t[i], *r = u64map_get(map, u->id);
        if (!r) {
            const UOp *src[256];
            bool changed = false;
            for (int k = 0; k < u->nsrc && k < 256; k++) {
                const UOp *s = u64map_get(&done, u->src[k]->id);
                src[k] = s ? s : u->src[k];
                changed |= src[k] != u->src[k];
            }
            r = changed && u->nsrc <= 256 ? uop_with_src(c, u, src, u->nsrc) : u;
        }
        if (!r || !u64map_put(&done, u->id, r)) break;
        if (i + 1 == n) out = r;
    }
    u64map_free(&done);
    free((void *)t);
    return out;
}

static const UOp *minimum(UCtx *c, const UOp *a, const UOp *b) {  /* -max(-a, -b), as tinygrad */
    const UOp *m1 = uop_const_int(c, a->dtype, -1);
    return uop_binary(c, OP_MUL, uop_binary(c, OP_MAX, uop_binary(c, OP_MUL, a, m1), uop_binary(c, OP_MUL, b, m1)), m1);
}
static const UOp *maximum0(UCtx *c, const UOp *a) { return uop_binary(c, OP_MAX, a, uop_const_int(c, a->dtype, 0)); }
static const UOp *sub(UCtx *c, const UOp *a, const UOp *b) {
    return uop_binary(c, OP_ADD, a, uop_binary(c, OP_MUL, b, uop_const_int(c, b->dtype, -1)));
}
static bool is_reduce_add(const UOp *u) {
    return u && uop_op(u) == OP_REDUCE && u->arg && u->arg->kind == ARG_OP && u->arg->v.op == OP_ADD;
}

/* ---- reduce_collapse ---- */

/* (x+y).or_casted() < c -> x < c.cast(y.dtype) - y */
static const UOp *lift_add_lt(const Match *m, void *ud) {
    (void)ud;
    const UOp *x = GET("x"), *y = GET("y"), *c = GET("c");
    if (!no_range(y) || !no_range(c)) return NULL;
    return uop_binary(CTX, OP_CMPLT, x, sub(CTX, ub_cast(CTX, c, y->dtype), y));
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
    return uop_binary(CTX, OP_MUL, ub_cast(CTX, count, val->dtype), val);
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
    return uop_binary(CTX, OP_MUL, r, ub_cast(CTX, GET("x"), c->dtype));
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

/* ---- reduce_load_collapse ---- */

/* (x+y).or_casted() != c -> x != c.cast(y.dtype) - y */
static const UOp *lift_add_ne(const Match *m, void *ud) {
    (void)ud;
    const UOp *x = GET("x"), *y = GET("y"), *c = GET("c");
    if (!no_range(y) || !no_range(c)) return NULL;
    return uop_binary(CTX, OP_CMPNE, x, sub(CTX, ub_cast(CTX, c, y->dtype), y));
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
    const UOp *e = substitute(CTX, expr, &map);
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

/* the REDUCE with its value's outside inputs as variables, rewritten by
 * pm_reduce_load_collapse; the value with no REDUCE, or NULL */
static const UOp *reduce_load_collapse(const Match *m, void *ud) {
    (void)ud;
    UCtx *c = CTX;
    const UOp *red = m->root, *u = red->src[0], *r = red->src[1];
    if (!is_reduce_add(red) || red->nsrc != 2 || uop_op(r) != OP_RANGE) return NULL;
    char why[256];
    const RuleSet *rs = ruleset_get("pm_reduce_load_collapse", why, sizeof why);
    if (!rs) { rewrite_fail(m, "%s", why); return NULL; }
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
    /* Every rule that removes r needs a select on something of r (a WHERE,
     * or a bool cast that mul_cast_bool makes one), unless the value does
     * not use r at all; without one the attempt would only fill the context
     * with nodes (and shift the ids of every later node), so it stops here.
     * (symbolic alone can cancel r, as in r - r; stage 8's
     * pm_reduce_unparented then drops that loop.) */
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
        const UOp *body = substitute(c, u, &fwd);
        const UOp *fx = body ? uop_new(c, OP_REDUCE, red->dtype, (const UOp *[]){body, r}, 2, red->arg) : NULL;
        RewriteOpts o = {.name = "reduce_collapse"};
        const UOp *sink = fx ? graph_rewrite(c, fx, rs, &o) : NULL;
        if (sink && no_range(sink)) out = substitute(c, sink, &back);
    }
    u64map_free(&dep), u64map_free(&fwd), u64map_free(&back);
    uctx_clear_error(c);
    return out;
}

/* (x:index + y) < c -> x < c - y when only x reads a load */
static const UOp *lt_unlift(const Match *m, void *ud) {
    (void)ud;
    const UOp *x = GET("x"), *y = GET("y"), *c = GET("c");
    if (!no_load(y) || !no_load(c) || no_load(x)) return NULL;
    return uop_binary(CTX, OP_CMPLT, x, sub(CTX, c, y));
}

static const RuleSpec load_collapse_specs[] = {
    RULE_FN("reduce_load_collapse", "(REDUCE _ _)", reduce_load_collapse),
    RULE_FN("lt_unlift", "(CMPLT (ADD x:index y) c)", lt_unlift),
};

const RuleTable reduce_collapse_rules = RULE_TABLE(reduce_collapse_specs);
const RuleTable reduce_load_collapse_rules = RULE_TABLE(reduce_load_collapse_specs);
const RuleTable pm_load_collapse_rules = RULE_TABLE(load_collapse_specs);
