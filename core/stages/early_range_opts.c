/* early_range_opts.c - range reshaping before opts (tinygrad's
 * codegen/simplify.py):
 *
 *   pm_split_ranges     a RANGE used as r % c (c dividing its size) becomes
 *                       outer * c + inner, two RANGEs with the same axis id
 *                       and sub-ids 0 and 1, so r % c folds to inner;
 *   pm_simplify_ranges  two ranges of the same type that END (or a REDUCE)
 *                       closes together merge into one of the product size,
 *                       r0 -> m // s1, r1 -> m % s1, kept only when the
 *                       graph does not get more div/mod nodes;
 *   pm_split_store      (CPU) a store loop whose body compares its range with
 *                       constants is cut at those points into one loop per
 *                       segment, so no iteration branches.  The loops the
 *                       store closes inside itself (reduce ranges) get a
 *                       copy per segment, with the segment number as a
 *                       sub-id: a RANGE is one loop in the program, and
 *                       segments sharing one could not be ordered. */
#include <stdlib.h>
#include "stage_rules.h"
#include "early.h"
#include "ranges.h"
#include "../rewrite/rewrite.h"
#include "../sym/sym_helpers.h"
#include "../sym/symbolic.h"

/* ---- pm_split_ranges ---- */

static bool marked(const SplitRangesCtx *ctx, const UOp *r) {
    for (int i = 0; i < ctx->n; i++)
        if (ctx->range[i] == r) return true;
    return false;
}

/* r % c with c dividing r's constant size: remember r */
static const UOp *mark_range_mod(const Match *m, void *ud) {
    (void)ud;
    SplitRangesCtx *ctx = m->user;
    const UOp *r = match_get(m, "r");
    int64_t end, c;
    if (!ctx || marked(ctx, r) || ctx->n == SPLIT_RANGES_MAX) return NULL;
    if (!uop_const_int_value(r->src[0], &end) || !uop_const_int_value(match_get(m, "c"), &c)) return NULL;
    if (c <= 0 || end % c != 0) return NULL;
    ctx->range[ctx->n] = r;
    ctx->mod[ctx->n++] = c;
    return NULL;
}

/* a copy of r's arg with `sub` inserted before the axis type */
static const Arg *sub_axis_arg(UCtx *c, const Arg *a, int64_t sub) {
    if (!a || a->kind != ARG_TUPLE || a->n < 1 || a->n > 15) return NULL;
    const Arg *items[16];
    for (uint32_t i = 0; i + 1 < a->n; i++) items[i] = a->items[i];
    items[a->n - 1] = arg_int(c, sub);
    items[a->n] = a->items[a->n - 1];
    return arg_tuple(c, items, a->n + 1);
}

static const UOp *range_like(UCtx *c, const UOp *r, int64_t end, int64_t sub) {
    const UOp *src[r->nsrc];
    src[0] = uop_const_int(c, r->src[0]->dtype, end);
    for (int i = 1; i < r->nsrc; i++) src[i] = r->src[i];
    const Arg *arg = sub_axis_arg(c, r->arg, sub);
    if (!src[0] || !arg) return NULL;
    return uop_intern(c, OP_RANGE, r->dtype, src, r->nsrc, arg, r->tag);
}

/* at the SINK: every marked range becomes outer * c + inner */
static const UOp *split_marked(const Match *m, void *ud) {
    (void)ud;
    SplitRangesCtx *ctx = m->user;
    if (!ctx || !ctx->n) return NULL;
    UCtx *c = m->ctx;
    const UOp *root = m->root;
    for (int i = 0; i < ctx->n && root; i++) {
        const UOp *r = ctx->range[i];
        int64_t end, v = ctx->mod[i];
        if (!v || !uop_const_int_value(r->src[0], &end)) continue;
        const UOp *outer = range_like(c, r, end / v, 0), *inner = range_like(c, r, v, 1);
        const UOp *k = uop_const_int(c, r->dtype, v);
        const UOp *to = outer && inner && k ? uop_binary(c, OP_ADD, uop_binary(c, OP_MUL, outer, k), inner) : NULL;
        root = to ? early_replace_range(c, root, r, to, NULL, 0) : NULL;
    }
    ctx->n = 0;
    if (root) root = uop_simplify(c, root, "sym", NULL);
    if (!root) rewrite_fail(m, "split ranges: %s", uctx_error(c));
    return root;
}

static const RuleSpec SPLIT_RULES[] = {
    RULE_FN("mark_range_mod", "(MOD r@(RANGE ...) c@(CONST))", mark_range_mod),
    RULE_FN("split_marked_ranges", "(SINK ...)", split_marked),
};

const RuleTable pm_split_ranges_rules = RULE_TABLE(SPLIT_RULES);

/* ---- pm_simplify_ranges ---- */

static size_t count_divmod(const UOp *u) {
    size_t n, k = 0;
    const UOp **t = uop_toposort(u, &n);
    for (size_t i = 0; t && i < n; i++) k += uop_op(t[i]) == OP_IDIV || uop_op(t[i]) == OP_MOD;
    free(t);
    return k;
}

static bool list_has(const UOp *const *l, int n, const UOp *u) {
    for (int i = 0; i < n; i++)
        if (l[i] == u) return true;
    return false;
}

#define MAX_REDUCES 64
#define MAX_RNG 64

/* whether r0 and r1 are inside of the same REDUCEs of u's graph */
static bool same_reduces(const UOp *u, const UOp *r0, const UOp *r1) {
    size_t n;
    const UOp **t = uop_toposort(u, &n);
    bool ok = t != NULL;
    for (size_t i = 0; ok && i < n; i++) {
        if (uop_op(t[i]) != OP_REDUCE) continue;
        const UOp *rs[MAX_RNG];
        int k = early_ranges_of(t[i], rs, MAX_RNG);
        ok = k >= 0 && list_has(rs, k, r0) == list_has(rs, k, r1);
    }
    free(t);
    return ok;
}

/* u with r0 and r1 merged, simplified; NULL when that fails */
static const UOp *try_merge(UCtx *c, const RuleSet *merge_set, const UOp *u, const UOp *r0, const UOp *r1) {
    const UOp *s0 = r0->src[0], *s1 = r1->src[0];
    const UOp *src[r0->nsrc];
    src[0] = uop_binary(c, OP_MUL, s0, s1);
    for (int i = 1; i < r0->nsrc; i++) src[i] = r0->src[i];
    const UOp *merged = src[0] ? uop_with_src(c, r0, src, r0->nsrc) : NULL;
    if (!merged) return NULL;
    const UOp *x = early_replace_range(c, u, r0, uop_binary(c, OP_IDIV, merged, s1), NULL, 0);
    if (x) x = early_replace_range(c, x, r1, uop_binary(c, OP_MOD, merged, s1), NULL, 0);
    if (!x) return NULL;
    RewriteOpts o = {.name = "check merge"};
    return graph_rewrite(c, x, merge_set, &o);
}

/* whether u (an END or REDUCE) still closes r */
static bool closes(const UOp *u, const UOp *r) {
    for (int i = early_range_start(uop_op(u)); i < u->nsrc; i++)
        if (u->src[i] == r) return true;
    return false;
}

static const UOp *merge_adjacent(const Match *m, void *ud) {
    (void)ud;
    UCtx *c = m->ctx;
    char err[200];
    const RuleSet *merge_set = ruleset_get("symbolic + pm_flatten_range", err, sizeof err);
    if (!merge_set) {
        rewrite_fail(m, "%s", err);
        return NULL;
    }
    const UOp *u = m->root;
    int off = early_range_start(uop_op(u));
    int n = u->nsrc - off;
    if (n < 2) return NULL;
    const UOp *ended[n];
    for (int i = 0; i < n; i++) ended[i] = u->src[off + i];
    bool is_end = uop_op(u) == OP_END;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            if (is_end ? j != i + 1 : j == i) continue;
            const UOp *r0 = ended[i], *r1 = ended[j];
            if (uop_op(r0) != OP_RANGE || uop_op(r1) != OP_RANGE || range_axis_type(r0) != range_axis_type(r1)) continue;
            /* a range an earlier merge replaced is gone: merging it again
             * would only grow the other range (and the loop count) */
            if (!closes(u, r0) || !closes(u, r1)) continue;
            if (!same_reduces(u, r0, r1)) continue;
            const UOp *nu = try_merge(c, merge_set, u, r0, r1);
            if (!nu) {
                rewrite_fail(m, "merging ranges %%%u and %%%u: %s", r0->id, r1->id, uctx_error(c));
                return NULL;
            }
            if (count_divmod(nu) <= count_divmod(u)) u = nu;
        }
    return u;
}

static const RuleSpec SIMPLIFY_RULES[] = {
    RULE_FN("merge_adjacent_ranges", "({END REDUCE} ...)", merge_adjacent),
};

const RuleTable pm_simplify_ranges_rules = RULE_TABLE(SIMPLIFY_RULES);

/* ---- pm_split_store (CPU) ---- */

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* r with `sub` added to its axis id: the same loop, for another segment */
static const UOp *range_copy(UCtx *c, const UOp *r, int64_t sub) {
    const Arg *arg = sub_axis_arg(c, r->arg, sub);
    return arg ? uop_intern(c, OP_RANGE, r->dtype, r->src, r->nsrc, arg, r->tag) : NULL;
}

/* the ranges closed inside the store's graph (by a REDUCE, END or inner
 * STORE), r aside: they start and finish within one iteration of r */
static bool closed_inside(const UOp *const *t, size_t n, const UOp *r, NodeSet *out) {
    for (size_t i = 0; i + 1 < n; i++) {
        NodeSet e = {0};
        bool ok = ended_ranges(t[i], &e);
        for (int k = 0; ok && k < e.n; k++)
            if (uop_op(e.items[k]) == OP_RANGE && e.items[k] != r) ok = nodeset_add(out, e.items[k]);
        nodeset_free(&e);
        if (!ok) return false;
    }
    return true;
}

/* one segment: the store with r -> nr + start, and its inner loops copied */
static const UOp *segment_store(UCtx *c, const UOp *store, const UOp *r, const UOp *nr, int64_t start,
                                const NodeSet *inner, int64_t seg) {
    const UOp *st = early_replace_range(c, store, r, sym_addc(c, nr, start), NULL, 0);
    for (int k = 0; st && k < inner->n; k++) {
        const UOp *q = inner->items[k], *nq = range_copy(c, q, seg);
        st = nq ? early_replace_range(c, st, q, nq, NULL, 0) : NULL;
    }
    return st;
}

/* END(STORE, r) where the store compares r < c for constants c inside r's
 * size: one END per segment between the cut points, in a GROUP */
static const UOp *cut_store_range(const Match *m, void *ud) {
    (void)ud;
    UCtx *c = m->ctx;
    const UOp *store = match_get(m, "store"), *r = match_get(m, "r");
    int64_t end;
    if (uop_op(r) != OP_RANGE || !uop_const_int_value(r->src[0], &end)) return NULL;
    size_t n;
    const UOp **t = uop_toposort(store, &n);
    if (!t) return NULL;
    int64_t *cuts = malloc((n + 2) * sizeof *cuts);
    int ncut = 0;
    if (cuts) {
        cuts[ncut++] = 0;
        cuts[ncut++] = end;
        for (size_t i = 0; i < n; i++) {
            int64_t v;
            if (uop_op(t[i]) == OP_CMPLT && t[i]->src[0] == r && uop_const_int_value(t[i]->src[1], &v) && v > 0 &&
                v < end)
                cuts[ncut++] = v;
        }
    }
    NodeSet inner = {0};
    bool inner_ok = ncut > 2 && closed_inside(t, n, r, &inner);
    free(t);
    if (ncut <= 2 || !inner_ok) {
        free(cuts);
        nodeset_free(&inner);
        if (ncut > 2) rewrite_fail(m, "cutting range %%%u: out of memory", r->id);
        return NULL;
    }
    qsort(cuts, (size_t)ncut, sizeof *cuts, cmp_i64);
    int k = 1;
    for (int i = 1; i < ncut; i++)
        if (cuts[i] != cuts[k - 1]) cuts[k++] = cuts[i];
    ncut = k;
    const UOp *ends[ncut];
    int nend = 0;
    for (int i = 0; i + 1 < ncut; i++) {
        const UOp *nr = range_like(c, r, cuts[i + 1] - cuts[i], i);
        const UOp *st = nr ? segment_store(c, store, r, nr, cuts[i], &inner, i) : NULL;
        const UOp *src[2] = {st, nr};
        ends[nend] = st ? uop_new(c, OP_END, DT_VOID, src, 2, NULL) : NULL;
        if (!ends[nend++]) {
            free(cuts);
            nodeset_free(&inner);
            rewrite_fail(m, "cutting range %%%u: %s", r->id, uctx_error(c));
            return NULL;
        }
    }
    free(cuts);
    nodeset_free(&inner);
    return uop_new(c, OP_GROUP, DT_VOID, ends, nend, NULL);
}

static const RuleSpec SPLIT_STORE_RULES[] = {
    RULE_FN("cut_store_range", "(END store@(STORE ...) r@(RANGE ...))", cut_store_range),
};

const RuleTable pm_split_store_rules = RULE_TABLE(SPLIT_STORE_RULES);

const StageContext split_ranges_context = {.name = "SplitRangesCtx", .size = sizeof(SplitRangesCtx)};
