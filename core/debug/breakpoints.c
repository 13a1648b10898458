/* breakpoints.c - breakpoint lists and the search for the next rewrite
 * that hits one (see breakpoints.h). */
#include "breakpoints.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void breaks_init(BreakList *bl) { memset(bl, 0, sizeof *bl); }

static void bp_free(Breakpoint *bp) {
    free(bp->rule);
    free(bp->text);
    if (bp->ud_free) bp->ud_free(bp->ud);
}

void breaks_free(BreakList *bl) {
    for (int i = 0; i < bl->n; i++) bp_free(&bl->items[i]);
    free(bl->items);
    breaks_init(bl);
}

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

int breaks_add(BreakList *bl, const Breakpoint *bp) {
    if (bl->n == bl->cap) {
        int cap = bl->cap ? bl->cap * 2 : 4;
        Breakpoint *a = realloc(bl->items, (size_t)cap * sizeof *a);
        if (!a) return 0;
        bl->items = a, bl->cap = cap;
    }
    Breakpoint b = *bp;
    b.id = ++bl->next_id;
    b.rule = dup_or_null(bp->rule);
    b.text = dup_or_null(bp->text);
    if ((bp->rule && !b.rule) || (bp->text && !b.text)) {
        free(b.rule), free(b.text);
        return 0;
    }
    bl->items[bl->n++] = b;
    return b.id;
}

bool breaks_delete(BreakList *bl, int id) {
    for (int i = 0; i < bl->n; i++)
        if (bl->items[i].id == id) {
            bp_free(&bl->items[i]);
            memmove(&bl->items[i], &bl->items[i + 1], (size_t)(bl->n - i - 1) * sizeof *bl->items);
            bl->n--;
            return true;
        }
    return false;
}

/* whether node id is u or among its sources, transitively (ids only grow
 * from sources to users, so a walk stops below the id) */
static bool contains(const UOp *u, unsigned id) {
    if (u->id == id) return true;
    if (u->id < id) return false;
    size_t n;
    const UOp **t = uop_toposort(u, &n);
    bool found = false;
    for (size_t i = 0; t && i < n && !found; i++) found = t[i]->id == id;
    free(t);
    return found;
}

static int hits(const Breakpoint *bp, const TraceRewrite *w, char *err, size_t errlen) {
    switch (bp->kind) {
    case BREAK_RULE: return !strcmp(bp->rule, w->rule);
    case BREAK_OP: return uop_op(w->before) == bp->op || uop_op(w->after) == bp->op;
    case BREAK_NODE: return contains(w->before, bp->node) || contains(w->after, bp->node);
    case BREAK_WHEN: return bp->when(bp->ud, w->before, w->after, err, errlen);
    }
    return 0;
}

int dbg_continue(KernelPipeline *kp, const BreakList *bl, int stage, long rewrite, BreakHit *hit, char *err,
                 size_t errlen) {
    if (bl->n == 0) {
        snprintf(err, errlen, "no breakpoints: set one with :break rule NAME, :break op OP or :break node ID");
        return -1;
    }
    /* the first rewrite to look at: the one after the current point */
    int n = rewrite < 0 ? stage + 1 : stage;
    size_t first = rewrite < 0 ? 0 : (size_t)rewrite;
    for (; n <= STAGE_COUNT; n++, first = 0) {
        if (n < 1) continue;
        if (!pipeline_root(kp, n, err, errlen)) return -1;
        const Trace *t = &pipeline_result(kp, n)->trace;
        for (size_t i = first; i < t->nrewrites; i++)
            for (int b = 0; b < bl->n; b++) {
                int h = hits(&bl->items[b], &t->rewrites[i], err, errlen);
                if (h < 0) return -1;
                if (h) {
                    *hit = (BreakHit){.stage = n, .rewrite = i + 1, .id = bl->items[b].id};
                    return 1;
                }
            }
    }
    return 0;
}
