/* ranges.c - the loops a node runs inside, computed for a whole graph in one
 * pass over its toposort: a node is inside the ranges its sources are inside,
 * less those it ends; a RANGE is also inside itself. */
#include "ranges.h"
#include <stdlib.h>
#include <string.h>

bool nodeset_has(const NodeSet *s, const UOp *u) {
    for (int i = 0; i < s->n; i++)
        if (s->items[i] == u) return true;
    return false;
}

bool nodeset_add(NodeSet *s, const UOp *u) {
    if (nodeset_has(s, u)) return true;
    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 4;
        const UOp **it = realloc(s->items, (size_t)cap * sizeof *it);
        if (!it) return false;
        s->items = it;
        s->cap = cap;
    }
    s->items[s->n++] = u;
    return true;
}

bool nodeset_union(NodeSet *dst, const NodeSet *src) {
    for (int i = 0; i < src->n; i++)
        if (!nodeset_add(dst, src->items[i])) return false;
    return true;
}

void nodeset_remove(NodeSet *s, const UOp *u) {
    for (int i = 0; i < s->n; i++)
        if (s->items[i] == u) {
            memmove(&s->items[i], &s->items[i + 1], (size_t)(s->n - i - 1) * sizeof *s->items);
            s->n--;
            return;
        }
}

void nodeset_free(NodeSet *s) {
    free(s->items);
    *s = (NodeSet){0};
}

bool node_table_init(NodeTable *t, const UOp *root) {
    *t = (NodeTable){0};
    t->topo = uop_toposort(root, &t->n);
    if (!t->topo) return false;
    uint32_t max_id = 0;
    for (size_t i = 0; i < t->n; i++)
        if (t->topo[i]->id > max_id) max_id = t->topo[i]->id;
    t->nids = max_id + 1;
    t->slot = calloc(t->nids, sizeof *t->slot);
    if (!t->slot) { node_table_free(t); return false; }
    for (size_t i = 0; i < t->n; i++) t->slot[t->topo[i]->id] = (int32_t)i + 1;
    return true;
}

int32_t node_table_slot(const NodeTable *t, const UOp *u) { return u && u->id < t->nids ? t->slot[u->id] - 1 : -1; }

void node_table_free(NodeTable *t) {
    free((void *)t->topo);
    free(t->slot);
    *t = (NodeTable){0};
}

static int range_start(Op op) {
    switch (op) {
    case OP_BUFFERIZE: case OP_REDUCE: case OP_END: return 1;
    case OP_STORE: return 2;
    case OP_WMMA: return 3;
    default: return -1;
    }
}

bool ended_ranges(const UOp *u, NodeSet *out) {
    int k = range_start(uop_op(u));
    if (k >= 0) {
        for (int i = k; i < u->nsrc; i++)
            if (!nodeset_add(out, u->src[i])) return false;
    } else if (uop_op(u) == OP_AFTER) {
        for (int i = 1; i < u->nsrc; i++)
            if (!ended_ranges(u->src[i], out)) return false;
    }
    return true;
}

bool range_map_init(RangeMap *m, const UOp *root) {
    *m = (RangeMap){0};
    if (!node_table_init(&m->t, root)) return false;
    m->ranges = calloc(m->t.n ? m->t.n : 1, sizeof *m->ranges);
    if (!m->ranges) { range_map_free(m); return false; }
    NodeSet ended = {0};
    for (size_t i = 0; i < m->t.n; i++) {
        const UOp *u = m->t.topo[i];
        NodeSet *r = &m->ranges[i];
        bool ok = uop_op(u) == OP_RANGE ? nodeset_add(r, u) : true;
        for (int k = 0; ok && k < u->nsrc; k++) ok = nodeset_union(r, &m->ranges[node_table_at(&m->t, u->src[k])]);
        ended.n = 0;
        ok = ok && ended_ranges(u, &ended);
        if (!ok) { nodeset_free(&ended); range_map_free(m); return false; }
        for (int k = 0; k < ended.n; k++) {
            const UOp *er = ended.items[k];
            if (er == u) continue;
            if (uop_op(er) == OP_RANGE) { nodeset_remove(r, er); continue; }
            /* a non-RANGE ended: everything it is inside is closed too */
            int32_t s = node_table_slot(&m->t, er);
            if (s < 0) continue;
            for (int j = 0; j < m->ranges[s].n; j++) nodeset_remove(r, m->ranges[s].items[j]);
        }
    }
    nodeset_free(&ended);
    return true;
}

const NodeSet *range_map_get(const RangeMap *m, const UOp *u) {
    int32_t s = node_table_slot(&m->t, u);
    return s < 0 ? NULL : &m->ranges[s];
}

void range_map_free(RangeMap *m) {
    if (m->ranges)
        for (size_t i = 0; i < m->t.n; i++) nodeset_free(&m->ranges[i]);
    free(m->ranges);
    node_table_free(&m->t);
    *m = (RangeMap){0};
}

const UOp *range_retyped(UCtx *c, const UOp *r, const UOp *end, AxisType t) {
    const Arg *a = r->arg;
    if (!a || a->kind != ARG_TUPLE || !a->n || a->n > 16) {
        uctx_set_error(c, "RANGE %%%u has no (ids..., axis type) arg", r->id);
        return NULL;
    }
    const Arg *items[16];
    for (uint32_t i = 0; i + 1 < a->n; i++) items[i] = a->items[i];
    items[a->n - 1] = arg_axis(c, t);
    const UOp *src[8];
    if (r->nsrc > 8) {
        uctx_set_error(c, "RANGE %%%u has too many sources", r->id);
        return NULL;
    }
    for (int i = 0; i < r->nsrc; i++) src[i] = r->src[i];
    if (r->nsrc) src[0] = end;
    return uop_new(c, OP_RANGE, r->dtype, src, r->nsrc, arg_tuple(c, items, a->n));
}
