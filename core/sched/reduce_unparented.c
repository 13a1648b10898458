/* reduce_unparented.c - drops the ranges of a REDUCE that its value does not
 * use (tinygrad v0.12.0's pm_reduce_unparented).  Summing a value that does
 * not change over a loop of n iterations is value * n, its product is
 * value ** n, its maximum is the value; a bool reduced by any of them is
 * itself. */
#include "reduce_unparented.h"
#include <math.h>
#include <stdlib.h>

const UOp *reduce_identity(UCtx *c, Op op, const DType *dt) {
    switch (op) {
    case OP_ADD: return uop_const_int(c, dt, 0);
    case OP_MUL: return uop_const_int(c, dt, 1);
    case OP_MAX:
        if (dt_is_float(dt)) return uop_const_float(c, dt, -INFINITY);
        if (dt_is_bool(dt)) return uop_const_int(c, dt, 0);
        return uop_const_int(c, dt, dt_min_int(dt->scalar));
    default: return NULL;
    }
}

/* whether q is in the graph of u */
static bool uses(const UOp *u, const UOp *q, bool *failed) {
    size_t n;
    const UOp **t = uop_toposort(u, &n);
    if (!t) { *failed = true; return true; }
    bool found = false;
    for (size_t i = 0; i < n && !found; i++) found = t[i] == q;
    free((void *)t);
    return found;
}

/* the range's size as a constant of dtype dt, or a cast of it */
static const UOp *size_as(UCtx *c, const UOp *r, const DType *dt) {
    int64_t n;
    if (uop_const_int_value(r->src[0], &n)) return dt_is_float(dt) ? uop_const_float(c, dt, (double)n) : uop_const_int(c, dt, n);
    return uop_cast(c, r->src[0], dt);
}

/* x ** n by squaring (n >= 1) */
static const UOp *power(UCtx *c, const UOp *x, int64_t n) {
    const UOp *result = NULL;
    while (x && n > 0) {
        if (n & 1) result = result ? uop_binary(c, OP_MUL, result, x) : x;
        n >>= 1;
        if (n) x = uop_binary(c, OP_MUL, x, x);
    }
    return x ? result : NULL;
}

const UOp *reduce_drop_unparented(UCtx *c, const UOp *red) {
    if (uop_op(red) != OP_REDUCE || red->nsrc < 2 || !red->arg || red->arg->kind != ARG_OP) return red;
    Op op = red->arg->v.op;
    const UOp *val = red->src[0];
    if ((op != OP_ADD && op != OP_MUL && op != OP_MAX) || val->dtype != red->dtype || red->dtype->count != 1) return red;
    const UOp **keep = malloc((size_t)red->nsrc * sizeof *keep);
    const UOp **drop = malloc((size_t)red->nsrc * sizeof *drop);
    if (!keep || !drop) {
        free(keep);
        free(drop);
        uctx_set_error(c, "out of memory");
        return NULL;
    }
    int nkeep = 1, ndrop = 0;
    bool failed = false;
    keep[0] = val;
    for (int i = 1; i < red->nsrc; i++) {
        const UOp *r = red->src[i];
        int64_t n;
        /* a loop that may run zero times leaves the identity, not the value, for MUL and MAX */
        bool closed_form = uop_op(r) == OP_RANGE && (op == OP_ADD || (uop_const_int_value(r->src[0], &n) && n >= 1));
        if (closed_form && !uses(val, r, &failed)) drop[ndrop++] = r;
        else keep[nkeep++] = r;
    }
    const UOp *out = red;
    if (failed) {
        uctx_set_error(c, "out of memory");
        out = NULL;
    } else if (ndrop) {
        out = nkeep > 1 ? uop_intern(c, OP_REDUCE, red->dtype, keep, nkeep, red->arg, red->tag) : val;
        for (int i = 0; out && i < ndrop && !dt_is_bool(red->dtype); i++) {
            if (op == OP_ADD) out = uop_binary(c, OP_MUL, out, size_as(c, drop[i], red->dtype));
            else if (op == OP_MUL) {
                int64_t n = 1;
                uop_const_int_value(drop[i]->src[0], &n);
                out = power(c, out, n);
            }
        }
    }
    free(keep);
    free(drop);
    return out;
}

static const UOp *reduce_unparented(const Match *m, void *ud) {
    (void)ud;
    const UOp *r = reduce_drop_unparented(m->ctx, m->root);
    if (!r) rewrite_fail(m, "REDUCE %%%u: dropping unused ranges: %s", m->root->id, uctx_error(m->ctx));
    return r == m->root ? NULL : r;
}

static const RuleSpec specs[] = {
    RULE_FN("reduce_unparented", "(REDUCE)", reduce_unparented),
};

const RuleTable pm_reduce_unparented_rules = RULE_TABLE(specs);
