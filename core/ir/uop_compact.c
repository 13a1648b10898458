/* uop_compact.c - compaction of a UOp context: a mark from the roots the
 * caller names, then a sweep of every node not reached.  Sources always have
 * smaller ids than their users, so one pass down the ids carries the marks
 * from users to sources: no recursion, no stack, however deep the graph.
 * Then the args no live node uses (as its arg, its tag, or inside a tuple of
 * those) are freed too. */
#include "uctx_internal.h"
#include <stdlib.h>
#include <string.h>

/* ---- a set of pointers, for the args in use ---- */

typedef struct PtrSet {
    const void **slots;
    size_t cap, count;     /* cap is a power of two, at most half full */
} PtrSet;

static size_t ptr_slot(const void *p, size_t mask) {
    uint64_t h = (uint64_t)(uintptr_t)p * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 20) & mask;
}

static bool ptrset_has(const PtrSet *s, const void *p) {
    if (!s->cap) return false;
    for (size_t i = ptr_slot(p, s->cap - 1);; i = (i + 1) & (s->cap - 1)) {
        if (!s->slots[i]) return false;
        if (s->slots[i] == p) return true;
    }
}

/* adds p; *added says whether it was new; false when out of memory */
static bool ptrset_add(PtrSet *s, const void *p, bool *added) {
    if ((s->count + 1) * 2 > s->cap) {
        size_t ncap = s->cap ? s->cap * 2 : 1024;
        const void **ns = calloc(ncap, sizeof *ns);
        if (!ns) return false;
        for (size_t i = 0; i < s->cap; i++) {
            if (!s->slots[i]) continue;
            size_t j = ptr_slot(s->slots[i], ncap - 1);
            while (ns[j]) j = (j + 1) & (ncap - 1);
            ns[j] = s->slots[i];
        }
        free(s->slots);
        s->slots = ns;
        s->cap = ncap;
    }
    size_t i = ptr_slot(p, s->cap - 1);
    while (s->slots[i] && s->slots[i] != p) i = (i + 1) & (s->cap - 1);
    *added = !s->slots[i];
    if (*added) {
        s->slots[i] = p;
        s->count++;
    }
    return true;
}

/* the args of the live nodes, tuples' items included (an explicit stack:
 * tuples may nest deeply); false when out of memory */
static bool args_in_use(const UCtx *c, PtrSet *used) {
    size_t cap = 256, sp = 0;
    const Arg **stack = malloc(cap * sizeof *stack);
    if (!stack) return false;
    bool ok = true;
    for (size_t p = 0; ok && p < c->cap_pages; p++) {
        const IdPage *ip = c->id_pages[p];
        for (size_t k = 0; ok && ip && k < ID_PAGE; k++) {
            const UOp *u = ip->node[k];
            if (!u) continue;
            stack[sp++] = u->arg;
            stack[sp++] = u->tag;
            while (ok && sp) {
                const Arg *a = stack[--sp];
                bool added;
                if (!a) continue;
                if (!(ok = ptrset_add(used, a, &added)) || !added || a->kind != ARG_TUPLE) continue;
                if (sp + a->n + 2 > cap) {
                    while (sp + a->n + 2 > cap) cap *= 2;
                    const Arg **ns = realloc(stack, cap * sizeof *ns);
                    if (!(ok = ns != NULL)) break;
                    stack = ns;
                }
                for (uint32_t i = 0; i < a->n; i++) stack[sp++] = a->items[i];
            }
        }
    }
    free(stack);
    return ok;
}

/* Frees the args no live node uses and rebuilds the arg set; returns how
 * many (0, freeing nothing, when out of memory). */
static size_t sweep_args(UCtx *c) {
    PtrSet used = {0};
    PtrTable *t = &c->args;
    size_t freed = 0;
    if (!t->cap || !args_in_use(c, &used)) goto out;
    size_t ncap = 1024;
    while ((used.count + 1) * 4 > ncap * 3) ncap *= 2;
    PtrSlot *ns = calloc(ncap, sizeof *ns);
    if (!ns) goto out;
    for (size_t i = 0; i < t->cap; i++) {
        const Arg *a = t->slots[i].p;
        if (!a) continue;
        if (ptrset_has(&used, a)) {
            size_t j = t->slots[i].hash & (ncap - 1);
            while (ns[j].p) j = (j + 1) & (ncap - 1);
            ns[j] = t->slots[i];
            continue;
        }
        if (a->kind == ARG_STR) arena_free_block(&c->arena, (void *)a->v.s, a->n + 1);
        arena_free_block(&c->arena, (void *)a, sizeof(Arg) + (a->kind == ARG_TUPLE ? a->n : 0) * sizeof(Arg *));
        freed++;
    }
    free(t->slots);
    t->slots = ns;
    t->cap = ncap;
    t->count -= freed;
out:
    free(used.slots);
    return freed;
}

/* ---- nodes ---- */

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
    /* from the newest node: one made after the marks began counts as
     * marked, and so do its sources */
    for (size_t id = c->nid; id-- > 0;) {
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
    memset(c->const_cache, 0, sizeof c->const_cache);
    memset(c->recent, 0, sizeof c->recent);
    nodetable_fill(c, slots, cap);
    c->freed_args += sweep_args(c);
    c->compactions++;
    c->freed_nodes += freed;
    return freed;
}

size_t uctx_compactions(const UCtx *c) { return c->compactions; }
size_t uctx_freed_nodes(const UCtx *c) { return c->freed_nodes; }
size_t uctx_freed_args(const UCtx *c) { return c->freed_args; }
