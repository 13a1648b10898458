/* linearize.c - stages 20-22 of tinygrad v0.12.0's codegen:
 *   20 add control flow   loops that are siblings (ended inside the same END
 *                         or the SINK) are ordered: each RANGE gets the END
 *                         of the sibling before it as an extra source, and
 *                         the first nested RANGE gets its parent RANGE
 *   21 linearize          a priority toposort: nodes that run fewer times
 *                         first, then by op priority (defines, consts and
 *                         loads early, stores late, ENDs as late as they
 *                         can be), then by structure; the result is a LINEAR
 *                         node whose sources are the instructions in order
 *   22 cleanup IF/ENDIF   line_rewrite: a STORE through a gated INDEX becomes
 *                         IF(gate) / STORE / ENDIF; an IF or ENDIF already in
 *                         the program is an error */
#include "stages.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ranges.h"
#include "stage_rules.h"
#include "../rewrite/rewrite.h"
#include "../sym/bounds.h"
#include "../sym/sym_helpers.h"

/* ================= stage 20: add control flow ================= */

/* The extra source each RANGE gets: edges[i] is the node RANGE range[i] must wait for. */
typedef struct CFG {
    const UOp **range, **dep;
    int n, cap;
} CFG;

static bool cfg_add(CFG *g, const UOp *r, const UOp *dep) {
    for (int i = 0; i < g->n; i++)
        if (g->range[i] == r) { g->dep[i] = dep; return true; }
    if (g->n == g->cap) {
        int cap = g->cap ? 2 * g->cap : 8;
        const UOp **a = realloc(g->range, (size_t)cap * sizeof *a);
        if (!a) return false;
        g->range = a;
        const UOp **b = realloc(g->dep, (size_t)cap * sizeof *b);
        if (!b) return false;
        g->dep = b;
        g->cap = cap;
    }
    g->range[g->n] = r;
    g->dep[g->n++] = dep;
    return true;
}

static void cfg_free(CFG *g) {
    free(g->range);
    free(g->dep);
}

typedef struct SortItem {
    const UOp *end;
    int key, pos;
} SortItem;

static int by_key(const void *pa, const void *pb) {
    const SortItem *a = pa, *b = pb;
    if (a->key != b->key) return a->key < b->key ? -1 : 1;
    return a->pos - b->pos;   /* stable */
}

/* Builds the edges (tinygrad's CFGContext).  deps[u]: the RANGEs and ENDs u
 * depends on; an END x is nested in the first END (or the SINK) after it
 * that depends on x and whose range x depends on. */
static bool cfg_build(CFG *g, const UOp *sink, char *why, size_t whylen) {
    NodeTable t;
    if (!node_table_init(&t, sink)) { snprintf(why, whylen, "out of memory"); return false; }
    NodeSet *deps = calloc(t.n ? t.n : 1, sizeof *deps);
    const UOp **parent = calloc(t.n ? t.n : 1, sizeof *parent);   /* by slot of an END: its nesting END/SINK */
    const UOp **ended_by = calloc(t.n ? t.n : 1, sizeof *ended_by); /* by slot of a RANGE: the END that ends it */
    NodeSet order = {0};   /* ENDs in the order they got a parent */
    bool ok = deps && parent && ended_by, shared = false;
    for (size_t i = 0; ok && i < t.n; i++) {
        const UOp *u = t.topo[i];
        /* a RANGE is one loop: two ENDs of it would need it in two places */
        for (int k = 1; uop_op(u) == OP_END && k < u->nsrc; k++) {
            const UOp *r = u->src[k];
            int32_t rs = node_table_at(&t, r);
            if (uop_op(r) != OP_RANGE || rs < 0) continue;
            if (ended_by[rs] && ended_by[rs] != u) {
                snprintf(why, whylen, "RANGE %%%u is ended by END %%%u and END %%%u: one loop cannot be in two places",
                         r->id, ended_by[rs]->id, u->id);
                ok = false;
                shared = true;
                break;
            }
            ended_by[rs] = u;
        }
        if (!ok) break;
        for (int k = 0; ok && k < u->nsrc; k++) ok = nodeset_union(&deps[i], &deps[node_table_at(&t, u->src[k])]);
        Op op = uop_op(u);
        if (ok && (op == OP_END || op == OP_SINK)) {
            for (int k = 0; ok && k < deps[i].n; k++) {
                const UOp *x = deps[i].items[k];
                int32_t xs = node_table_at(&t, x);
                if (uop_op(x) != OP_END || parent[xs]) continue;
                if (op == OP_SINK || (u->nsrc > 1 && nodeset_has(&deps[xs], u->src[1]))) {
                    parent[xs] = u;
                    ok = nodeset_add(&order, x);
                }
            }
        }
        if (ok && (op == OP_RANGE || op == OP_END)) ok = nodeset_add(&deps[i], u);
    }
    /* siblings: the ENDs nested in the same parent, in the order they were nested */
    SortItem *items = ok ? malloc((size_t)(order.n ? order.n : 1) * sizeof *items) : NULL;
    ok = ok && items;
    NodeSet parents = {0};
    bool cycle = shared;
    for (int i = 0; ok && i < order.n; i++) ok = nodeset_add(&parents, parent[node_table_at(&t, order.items[i])]);
    for (int p = 0; ok && p < parents.n; p++) {
        const UOp *k = parents.items[p];
        int n = 0;
        for (int i = 0; i < order.n; i++)
            if (parent[node_table_at(&t, order.items[i])] == k) items[n].end = order.items[i], items[n].pos = n, n++;
        /* a sibling that depends on more of the others goes later */
        for (int i = 0; i < n; i++) {
            const NodeSet *d = &deps[node_table_at(&t, items[i].end)];
            items[i].key = 0;
            for (int j = 0; j < n; j++) items[i].key += nodeset_has(d, items[j].end);
        }
        qsort(items, (size_t)n, sizeof *items, by_key);
        for (int i = 0; ok && i < n; i++) {
            const UOp *y = items[i].end, *x;
            if (i == 0) {
                if (uop_op(k) == OP_SINK) continue;
                x = k->src[1];   /* the first nested loop waits for its parent's RANGE */
            } else x = items[i - 1].end;
            if (y->nsrc < 2) continue;
            const UOp *yr = y->src[1];
            /* x must not already depend on y's range, or the edge closes a cycle */
            int32_t xs = node_table_at(&t, x);
            if (x == yr || (xs >= 0 && nodeset_has(&deps[xs], yr))) {
                snprintf(why, whylen, "ordering END %%%u after %s %%%u would make a cycle", y->id, op_name(uop_op(x)),
                         x->id);
                ok = false;
                cycle = true;
                break;
            }
            ok = cfg_add(g, yr, x);
        }
    }
    if (!ok && !cycle) snprintf(why, whylen, "out of memory");
    nodeset_free(&parents);
    nodeset_free(&order);
    free(items);
    if (deps)
        for (size_t i = 0; i < t.n; i++) nodeset_free(&deps[i]);
    free(deps);
    free(parent);
    free(ended_by);
    node_table_free(&t);
    return ok;
}

static const UOp *range_after_sibling(const Match *m, void *ud) {
    (void)ud;
    const CFG *g = m->user;
    const UOp *r = m->root;
    for (int i = 0; i < g->n; i++)
        if (g->range[i] == r) {
            const UOp **src = malloc((size_t)(r->nsrc + 1) * sizeof *src);
            if (!src) return NULL;
            memcpy(src, r->src, (size_t)r->nsrc * sizeof *src);
            src[r->nsrc] = g->dep[i];
            const UOp *nr = uop_with_src(m->ctx, r, src, r->nsrc + 1);
            free(src);
            return nr;
        }
    return NULL;
}

static const RuleSpec control_flow_specs[] = {
    RULE_FN("range_after_sibling", "(RANGE)", range_after_sibling),
};

/* ================= stage 22: IF/ENDIF for gated stores ================= */

static const UOp *if_in_graph(const Match *m, void *ud) {
    (void)ud;
    rewrite_fail(m, "%s %%%u: IF/ENDIF are not allowed in the graph before linearizing", op_name(uop_op(m->root)),
                 m->root->id);
    return NULL;
}

static const UOp *gated_store_to_if(const Match *m, void *ud) {
    (void)ud;
    const UOp *st = m->root, *addr = st->src[0];
    const UOp *ix = uop_op(addr) == OP_CAST ? addr->src[0] : addr;
    if (uop_op(ix) != OP_INDEX || ix->nsrc != 3 || ix->src[2]->dtype != DT_BOOL) return NULL;
    const UOp *is[2] = {ix->src[2], addr};
    const UOp *mif = uop_new(m->ctx, OP_IF, DT_VOID, is, 2, NULL);
    const UOp *eif = mif ? uop_new(m->ctx, OP_ENDIF, DT_VOID, &mif, 1, NULL) : NULL;
    if (!eif) return NULL;
    const UOp *lines[3] = {mif, st, eif};
    return uop_new(m->ctx, OP_LINEAR, DT_VOID, lines, 3, arg_int(m->ctx, 1));
}

static const RuleSpec cleanup_specs[] = {
    RULE_FN("if_in_graph", "({IF ENDIF})", if_in_graph),
    RULE_FN("gated_store_to_if", "(STORE (INDEX _ _ _) _ ...)", gated_store_to_if),
    RULE_FN("gated_store_to_if_cast", "(STORE (CAST (INDEX _ _ _)) _ ...)", gated_store_to_if),
};

const RuleTable pm_add_control_flow_rules = RULE_TABLE(control_flow_specs);
const RuleTable pm_linearize_cleanups_rules = RULE_TABLE(cleanup_specs);

/* tinygrad's CFGContext(sink): which loop each RANGE must wait for */
static bool cfg_init(void *ctx, const UOp *root, const StageCtx *sc, char *why, size_t whylen) {
    (void)sc;
    return cfg_build(ctx, root, why, whylen);
}
static void cfg_release(void *ctx) { cfg_free(ctx); }
const StageContext control_flow_context = {.name = "CFGContext", .size = sizeof(CFG), .init = cfg_init,
                                           .release = cfg_release};

/* ================= stage 21: linearize ================= */

typedef struct Prio {
    double run_count;
    int priority;
    const UOp *u;
    int pos;     /* position in the toposort */
} Prio;

static int op_priority(Op op) {
    switch (op) {
    case OP_DEFINE_GLOBAL: return -20;
    case OP_DEFINE_VAR: return -19;
    case OP_DEFINE_LOCAL: return -18;
    case OP_DEFINE_REG: return -17;
    case OP_CONST: return -10;
    case OP_LOAD: return -1;
    case OP_STORE: return 1;
    case OP_RANGE: return 5;
    case OP_END: return -5;
    default: return 0;
    }
}

/* DEFINE_GLOBAL is ordered by its arg, DEFINE_VAR by its (name, ...) arg */
static int extra_cmp(const UOp *a, const UOp *b) {
    const Arg *x = a->arg, *y = b->arg;
    if (!x || !y) return 0;
    if (x->kind == ARG_INT && y->kind == ARG_INT) return (x->v.i > y->v.i) - (x->v.i < y->v.i);
    if (x->kind == ARG_TUPLE && y->kind == ARG_TUPLE && x->n && y->n && x->items[0] && y->items[0] &&
        x->items[0]->kind == ARG_STR && y->items[0]->kind == ARG_STR)
        return strcmp(x->items[0]->v.s, y->items[0]->v.s);
    return 0;
}

static int prio_cmp(const void *pa, const void *pb) {
    const Prio *a = pa, *b = pb;
    if (a->run_count != b->run_count) return a->run_count < b->run_count ? -1 : 1;
    if (a->priority != b->priority) return a->priority < b->priority ? -1 : 1;
    Op oa = uop_op(a->u), ob = uop_op(b->u);
    if (oa == ob && (oa == OP_DEFINE_GLOBAL || oa == OP_DEFINE_VAR)) {
        int r = extra_cmp(a->u, b->u);
        if (r) return r;
    }
    int r = sym_order(a->u, b->u);
    return r ? r : a->pos - b->pos;
}

/* max-heap of slots by nkey */
typedef struct Heap {
    int32_t *a;
    int n;
} Heap;

static void heap_push(Heap *h, const int32_t *nkey, int32_t s) {
    int i = h->n++;
    h->a[i] = s;
    while (i > 0) {
        int p = (i - 1) / 2;
        if (nkey[h->a[p]] >= nkey[h->a[i]]) break;
        int32_t t = h->a[p];
        h->a[p] = h->a[i], h->a[i] = t, i = p;
    }
}

static int32_t heap_pop(Heap *h, const int32_t *nkey) {
    int32_t top = h->a[0];
    h->a[0] = h->a[--h->n];
    int i = 0;
    for (;;) {
        int l = 2 * i + 1, r = l + 1, b = i;
        if (l < h->n && nkey[h->a[l]] > nkey[h->a[b]]) b = l;
        if (r < h->n && nkey[h->a[r]] > nkey[h->a[b]]) b = r;
        if (b == i) break;
        int32_t t = h->a[b];
        h->a[b] = h->a[i], h->a[i] = t, i = b;
    }
    return top;
}

const UOp *stage_linearize(StageCtx *sc, const UOp *root) {
    if (uop_op(root) != OP_SINK) return stage_fail(sc, "linearize: the root %s %%%u is not a SINK", op_name(uop_op(root)), root->id);
    RangeMap rm;
    if (!range_map_init(&rm, root)) return stage_fail(sc, "linearize: out of memory");
    size_t n = rm.t.n;
    if (n > 65535) {
        range_map_free(&rm);
        return stage_fail(sc, "linearize: %zu instructions do not fit one LINEAR node (65535 at most)", n);
    }
    Prio *pr = malloc(n * sizeof *pr);
    int32_t *nkey = calloc(n, sizeof *nkey), *out_degree = calloc(n, sizeof *out_degree);
    Heap h = {malloc(n * sizeof *h.a), 0};
    const UOp **lst = malloc(n * sizeof *lst);
    if (!pr || !nkey || !out_degree || !h.a || !lst) {
        free(pr), free(nkey), free(out_degree), free(h.a), free((void *)lst);
        range_map_free(&rm);
        return stage_fail(sc, "linearize: out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        const UOp *u = rm.t.topo[i];
        for (int k = 0; k < u->nsrc; k++) out_degree[node_table_at(&rm.t, u->src[k])]++;
        /* nodes that run more often (inside more or longer loops) go later */
        double run_count = 1;
        const NodeSet *rs = &rm.ranges[i];
        for (int k = 0; k < rs->n; k++) {
            int64_t lo, hi;
            run_count *= uop_bounds(rs->items[k], &lo, &hi) ? (double)hi + 1 : 1;
        }
        pr[i] = (Prio){run_count, op_priority(uop_op(u)), u, (int)i};
    }
    qsort(pr, n, sizeof *pr, prio_cmp);
    for (size_t i = 0; i < n; i++) nkey[pr[i].pos] = (int32_t)i;
    /* from the root down, the ready node with the highest key first; reversed at the end */
    size_t nl = 0;
    heap_push(&h, nkey, (int32_t)(n - 1));
    while (h.n) {
        int32_t s = heap_pop(&h, nkey);
        const UOp *u = rm.t.topo[s];
        lst[nl++] = u;
        for (int k = 0; k < u->nsrc; k++) {
            int32_t vs = node_table_at(&rm.t, u->src[k]);
            if (--out_degree[vs] == 0) heap_push(&h, nkey, vs);
        }
    }
    for (size_t i = 0; i < nl / 2; i++) {
        const UOp *t = lst[i];
        lst[i] = lst[nl - 1 - i], lst[nl - 1 - i] = t;
    }
    const UOp *lin = nl == n ? uop_new(sc->c, OP_LINEAR, DT_VOID, lst, (int)nl, NULL) : NULL;
    free(pr), free(nkey), free(out_degree), free(h.a), free((void *)lst);
    range_map_free(&rm);
    if (nl != n) return stage_fail(sc, "linearize: only %zu of %zu nodes could be placed", nl, n);
    if (!lin) return stage_fail(sc, "linearize: %s", uctx_error(sc->c));
    return lin;
}
