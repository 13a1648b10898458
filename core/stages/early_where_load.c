/* early_where_load.c - a WHERE that picks between a load and 0 moves its
 * condition into the load's index gate (tinygrad's pm_move_where_on_load):
 *
 *   where(c, INDEX(buf, x), 0)  ->  where(rest, INDEX(buf, x.valid(gate & moved)), 0)
 *
 * A clause of c moves when the load already has it, or when it needs no
 * range the index is not inside of and reads no buffer the index does not
 * read (no data-dependent gate).  The clauses that cannot move stay on the
 * WHERE; when all move, the WHERE folds away in the symbolic rules. */
#include <stdlib.h>
#include "stage_rules.h"
#include "early.h"
#include "../sym/sym_helpers.h"

#define MAX_CLAUSES 64
#define MAX_RANGES 128

static bool in_list(const UOp *const *l, int n, const UOp *u) {
    for (int i = 0; i < n; i++)
        if (l[i] == u) return true;
    return false;
}

static bool is_invalid(const UOp *u) {
    return uop_op(u) == OP_CONST && u->arg && u->arg->kind == ARG_INVALID;
}

/* every INDEX c reads is one x reads too */
static bool reads_only_from(const UOp *c, const UOp *x) {
    size_t nc, nx;
    const UOp **tc = uop_toposort(c, &nc), **tx = uop_toposort(x, &nx);
    bool ok = tc && tx;
    for (size_t i = 0; ok && i < nc; i++)
        if (uop_op(tc[i]) == OP_INDEX) ok = in_list(tx, (int)nx, tc[i]);
    free(tc);
    free(tx);
    return ok;
}

static const UOp *where_on_load(const Match *m, const UOp *c1) {
    UCtx *c = m->ctx;
    const UOp *buf = match_get(m, "buf"), *x = match_get(m, "x");
    if (!c1 || !sym_is_index(x) || !dt_is_ptr(buf->dtype)) return NULL;
    bool gated = uop_op(x) == OP_WHERE && is_invalid(x->src[2]);
    const UOp *c2 = gated ? x->src[0] : uop_const_bool(c, !is_invalid(x));
    const UOp *idx = gated ? x->src[1] : x;
    const UOp *cl1[MAX_CLAUSES], *cl2[MAX_CLAUSES], *xr[MAX_RANGES], *cr[MAX_RANGES];
    int n1 = sym_split(c1, OP_AND, cl1, MAX_CLAUSES), n2 = sym_split(c2, OP_AND, cl2, MAX_CLAUSES);
    int nxr = early_ranges_of(x, xr, MAX_RANGES);
    if (n1 < 0 || n2 < 0 || nxr < 0) return NULL;
    const UOp *moved[MAX_CLAUSES], *kept[MAX_CLAUSES];
    int nmoved = 0, nkept = 0, nremoved = 0;
    for (int i = 0; i < n1; i++) {
        const UOp *cl = cl1[i];
        if (in_list(cl2, n2, cl)) {
            nremoved++;
            continue;
        }
        int ncr = early_ranges_of(cl, cr, MAX_RANGES);
        bool ok = ncr >= 0;
        for (int k = 0; ok && k < ncr; k++) ok = in_list(xr, nxr, cr[k]);
        if (ok) ok = reads_only_from(cl, x);
        if (ok) {
            moved[nmoved++] = cl;
            nremoved++;
        } else {
            kept[nkept++] = cl;
        }
    }
    if (!nremoved) return NULL;
    const UOp *rest = uop_const_bool(c, true);
    for (int i = 0; i < nkept; i++) rest = sym_bin(c, OP_AND, rest, kept[i]);
    const UOp *gate = c2;
    for (int i = 0; i < nmoved; i++) gate = sym_bin(c, OP_AND, gate, moved[i]);
    const UOp *inv = uop_const_arg(c, DT_INDEX, arg_invalid(c));
    const UOp *nx = gate && inv ? uop_where(c, gate, idx, inv) : NULL;
    const UOp *isrc[2] = {buf, nx};
    const UOp *load = nx ? uop_new(c, OP_INDEX, buf->dtype->base, isrc, 2, NULL) : NULL;
    const UOp *zero = load ? sym_const_like(c, load, 0) : NULL;
    const UOp *r = rest && zero ? uop_where(c, rest, load, zero) : NULL;
    if (!r) rewrite_fail(m, "WHERE %%%u: %s", m->root->id, uctx_error(c));
    return r;
}

static const UOp *where_load_else_zero(const Match *m, void *ud) {
    (void)ud;
    return where_on_load(m, match_get(m, "c1"));
}

static const UOp *where_zero_else_load(const Match *m, void *ud) {
    (void)ud;
    return where_on_load(m, sym_not(m->ctx, match_get(m, "c1")));
}

static const RuleSpec WHERE_LOAD_RULES[] = {
    RULE_FN("where_on_load", "(WHERE c1 (INDEX buf x) 0)", where_load_else_zero),
    RULE_FN("where_not_on_load", "(WHERE c1 0 (INDEX buf x))", where_zero_else_load),
};

const RuleTable pm_move_where_on_load_rules = RULE_TABLE(WHERE_LOAD_RULES);
