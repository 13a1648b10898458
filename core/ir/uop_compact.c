/* uop_compact.c - compaction of a UOp context: a mark from the roots the
 * caller names, then a sweep of every node not reached.  Sources always have
 * smaller ids than their users, so one pass down the ids carries the marks
 * from users to sources: no recursion, no stack, however deep the graph. */
#include "uctx_internal.h"
#include <stdlib.h>

struct UCtxMarks {
    UCtx *c;
    size_t nid;       /* ids below this are covered (nodes made later are kept) */
    uint64_t *bits;   /* one bit per id */
};

UCtxMarks *uctx_marks_new(UCtx *c) {
    UCtxMarks *m = malloc(sizeof *m);
    if (!m) return NULL;
    m->c = c;
    m->nid = c->nid;
    m->bits = calloc(m->nid / 64 + 1, sizeof *m->bits);
    if (!m->bits) {
        free(m);
        return NULL;
    }
    return m;
}

void uctx_marks_free(UCtxMarks *m) {
    if (!m) return;
    free(m->bits);
    free(m);
}

static inline bool marked(const UCtxMarks *m, size_t id) { return id >= m->nid || (m->bits[id / 64] >> (id % 64) & 1); }
static inline void set_mark(UCtxMarks *m, size_t id) {
    if (id < m->nid) m->bits[id / 64] |= 1ull << (id % 64);
}

void uctx_mark(UCtxMarks *m, const UOp *u) {
    if (u) set_mark(m, u->id);
}

size_t uctx_sweep(UCtx *c, UCtxMarks *m) {
    /* a user's id is above its sources': going down, a node's mark is
     * final when it is reached */
    size_t live = c->nodes.count;
    for (size_t id = m->nid; id-- > 0;) {
        if ((id & (ID_PAGE - 1)) == ID_PAGE - 1 && !c->id_pages[id >> ID_PAGE_BITS]) {
            id -= ID_PAGE - 1; /* a page with no nodes left */
            continue;
        }
        const UOp *u = uctx_node_at(c, id);
        if (!u) continue;
        if (!marked(m, id)) {
            live--;
            continue;
        }
        for (uint32_t k = 0; k < u->nsrc; k++) set_mark(m, u->src[k]->id);
    }
    /* the new node set first: without memory for it nothing is freed */
    size_t cap = 1024;
    while (cap < 2 * (live + 1)) cap *= 2;
    uint64_t *slots = calloc(cap, sizeof *slots);
    if (!slots) {
        uctx_marks_free(m);
        return 0;
    }
    size_t freed = 0;
    for (size_t p = 0; p < c->cap_pages && (p << ID_PAGE_BITS) < m->nid; p++) {
        IdPage *ip = c->id_pages[p];
        if (!ip) continue;
        for (size_t k = 0; k < ID_PAGE; k++) {
            size_t id = (p << ID_PAGE_BITS) | k;
            const UOp *u = ip->node[k];
            if (!u || marked(m, id)) continue;
            ip->node[k] = NULL;
            ip->live--;
            arena_free_lines(&c->arena, (void *)u, sizeof(UOp) + (size_t)u->nsrc * sizeof(UOp *));
            freed++;
        }
        if (ip->live == 0 && (p + 1) << ID_PAGE_BITS <= c->nid) {
            /* no node left and no id of it still to be handed out */
            free(ip);
            c->id_pages[p] = NULL;
            c->live_pages--;
        }
    }
    uctx_marks_free(m);
    nodetable_fill(c, slots, cap);
    c->compactions++;
    c->freed_nodes += freed;
    return freed;
}

size_t uctx_compactions(const UCtx *c) { return c->compactions; }
size_t uctx_freed_nodes(const UCtx *c) { return c->freed_nodes; }
