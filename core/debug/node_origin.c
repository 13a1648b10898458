/* node_origin.c - the walk back of node_origin.h.  A node's id is larger
 * than its sources' (nodes are made after their sources), so a graph whose
 * root has a smaller id cannot hold it: most presence checks end there. */
#include "node_origin.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include "../util/interrupt.h"
#include "../util/u64map.h"

/* the rewrite points computed so far in this walk: each costs a run of its
 * stage, and a walk back through a stage asks for the same ones again */
#define ROOT_CACHE 64
typedef struct PointRoot {
    int stage;
    long r;
    const UOp *root;
} PointRoot;

typedef struct Walk {
    KernelPipeline *kp;
    char *err;
    size_t errlen;
    bool failed;
    PointRoot cache[ROOT_CACHE];
    int ncache, next; /* entries in use; the one replaced next */
} Walk;

static void walk_fail(Walk *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void walk_fail(Walk *w, const char *fmt, ...) {
    if (w->failed) return;
    w->failed = true;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->err, w->errlen, fmt, ap);
    va_end(ap);
}

/* the root at point (stage, r): r < 0 the whole stage, r = 0 the point before it */
static const UOp *root_at(Walk *w, int stage, long r) {
    if (r < 0) {
        char msg[512];
        const UOp *root = pipeline_root(w->kp, stage, msg, sizeof msg);
        if (!root) walk_fail(w, "%s", msg);
        return root;
    }
    for (int i = 0; i < w->ncache; i++)
        if (w->cache[i].stage == stage && w->cache[i].r == r) return w->cache[i].root;
    char msg[512];
    const UOp *root = pipeline_rewrite_point(w->kp, stage, (size_t)r, msg, sizeof msg);
    if (!root) {
        walk_fail(w, "%s", msg);
        return NULL;
    }
    w->cache[w->next] = (PointRoot){stage, r, root};
    w->next = (w->next + 1) % ROOT_CACHE;
    if (w->ncache < ROOT_CACHE) w->ncache++;
    return root;
}

/* 1 when node is in the graph under root, 0 when not, -1 on error */
static int graph_has(Walk *w, const UOp *root, const UOp *node) {
    if (root == node) return 1;
    if (node->id > root->id) return 0;
    size_t n;
    const UOp **t = uop_toposort(root, &n);
    if (!t) {
        walk_fail(w, "out of memory");
        return -1;
    }
    int found = 0;
    for (size_t i = 0; i < n && !found; i++) found = t[i] == node;
    free(t);
    return found;
}

static int present(Walk *w, int stage, long r, const UOp *node) {
    if (uopdb_interrupted()) {
        walk_fail(w, "interrupted");
        return -1;
    }
    const UOp *root = root_at(w, stage, r);
    return root ? graph_has(w, root, node) : -1;
}

/* The node of the graph under prev that becomes node when before is
 * replaced by after and the nodes above it are rebuilt with the new
 * sources, as the rewrite engine rebuilds them; NULL when none does. */
static const UOp *rebuilt_from(Walk *w, UCtx *c, const UOp *prev, const UOp *before, const UOp *after,
                               const UOp *node) {
    size_t n;
    const UOp **t = uop_toposort(prev, &n);
    if (!t) {
        walk_fail(w, "out of memory");
        return NULL;
    }
    U64Map made = {0};
    const UOp *found = NULL;
    for (size_t i = 0; i < n && !found && !w->failed; i++) {
        const UOp *u = t[i], *now = u;
        if (u == before) {
            now = after;
        } else {
            const UOp *small[8];
            const UOp **src = u->nsrc <= 8 ? small : malloc(u->nsrc * sizeof *src);
            if (!src) {
                walk_fail(w, "out of memory");
                break;
            }
            bool changed = false;
            for (int k = 0; k < u->nsrc; k++) {
                const UOp *m = u64map_get(&made, u->src[k]->id);
                src[k] = m ? m : u->src[k];
                changed |= src[k] != u->src[k];
            }
            if (changed && !(now = uop_with_src(c, u, src, u->nsrc)))
                walk_fail(w, "rebuilding %%%u: %s", u->id, uctx_error(c));
            if (src != small) free(src);
        }
        if (w->failed) break;
        if (now != u && !u64map_put(&made, u->id, now)) walk_fail(w, "out of memory");
        if (now == node && u != node) found = u;
    }
    u64map_free(&made);
    free(t);
    return found;
}

/* When the rewrite also let the engine rebuild the new node's sources with
 * replacements it knew from earlier rewrites, replacing one node does not
 * give node back.  Then the older node is the one of the graph before that
 * the rewrite replaced (gone after it) with node's op, dtype, arg and number
 * of sources that shares the most sources with node, when one shares more
 * than any other; NULL when none does. */
static const UOp *closest_replaced(Walk *w, const UOp *prev, const UOp *now, const UOp *node) {
    size_t n;
    const UOp **t = uop_toposort(prev, &n);
    if (!t) {
        walk_fail(w, "out of memory");
        return NULL;
    }
    const UOp *best = NULL;
    int best_shared = 0;
    bool tie = false;
    for (size_t i = 0; i < n; i++) {
        const UOp *u = t[i];
        if (u == node || u->op != node->op || u->dtype != node->dtype || u->arg != node->arg || u->tag != node->tag ||
            u->nsrc != node->nsrc)
            continue;
        int shared = 0;
        for (int k = 0; k < u->nsrc; k++) shared += u->src[k] == node->src[k];
        if (shared == 0 || shared < best_shared) continue;
        int gone = graph_has(w, now, u);
        if (gone < 0) break;
        if (gone) continue;
        tie = shared == best_shared;
        if (shared > best_shared) best = u, best_shared = shared;
    }
    free(t);
    return w->failed || tie ? NULL : best;
}

static bool push_step(Walk *w, OriginChain *out, const OriginStep *st) {
    OriginStep *s = realloc(out->steps, (size_t)(out->n + 1) * sizeof *s);
    if (!s) {
        walk_fail(w, "out of memory");
        return false;
    }
    out->steps = s;
    out->steps[out->n++] = *st;
    return true;
}

/* One step: node is in the graph at (stage, r); finds where it first
 * appears and how.  Fills *st; false on error. */
static bool explain(Walk *w, const UOp *node, int stage, long r, OriginStep *st) {
    *st = (OriginStep){.node = node};
    if (r == 0) {
        stage--;
        r = -1;
    }
    /* back over the stages whose input already has it */
    while (stage > 0) {
        int p = present(w, stage - 1, -1, node);
        if (p < 0) return false;
        if (!p) break;
        stage--;
        r = -1;
    }
    st->stage = stage;
    if (stage == 0) {
        st->how = ORIGIN_SCHEDULED;
        return true;
    }
    const StageResult *res = pipeline_result(w->kp, stage);
    if (!res) {
        walk_fail(w, "stage %d has not run", stage);
        return false;
    }
    size_t total = res->trace.nrewrites;
    st->of = total;
    size_t top = r >= 0 && (size_t)r < total ? (size_t)r : total;
    if (top == 0) {
        st->how = ORIGIN_STAGE;
        return true;
    }
    /* absent after lo rewrites, present after hi.  Going back from hi in
     * growing steps first: the node a step came from is most often made
     * a few rewrites before the one that made the step's node */
    size_t lo = 0, hi = top;
    for (size_t step = 1; hi - lo > 1; step *= 2) {
        size_t m = step < hi - lo ? hi - step : lo + 1;
        int p = present(w, stage, (long)m, node);
        if (p < 0) return false;
        if (!p) {
            lo = m;
            break;
        }
        hi = m;
    }
    /* then bisect to adjacent ones */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        int p = present(w, stage, (long)mid, node);
        if (p < 0) return false;
        if (p) hi = mid;
        else lo = mid;
    }
    const TraceRewrite *rw = &res->trace.rewrites[hi - 1];
    st->rewrite = hi;
    st->rule = rw->rule;
    st->file = rw->file;
    st->line = rw->line;
    st->before = rw->before;
    st->after = rw->after;
    if (node == rw->after) {
        st->how = ORIGIN_RULE;
        st->from = rw->before;
        return true;
    }
    int part = graph_has(w, rw->after, node);
    if (part < 0) return false;
    if (part) {
        st->how = ORIGIN_PART;
        st->from = rw->before;
        return true;
    }
    const UOp *prev = root_at(w, stage, (long)hi - 1);
    if (!prev) return false;
    const UOp *old = rebuilt_from(w, pipeline_ctx(w->kp), prev, rw->before, rw->after, node);
    if (w->failed) return false;
    if (!old) {
        const UOp *now = root_at(w, stage, (long)hi);
        if (!now) return false;
        old = closest_replaced(w, prev, now, node);
        if (w->failed) return false;
    }
    if (old) {
        st->how = ORIGIN_REBUILT;
        st->from = old;
        return true;
    }
    /* there after this rewrite, but neither made nor rebuilt by it: the
     * stage's own code between or after its rewrites made it */
    st->how = ORIGIN_STAGE;
    st->rule = st->file = NULL;
    st->line = 0;
    st->before = st->after = NULL;
    return true;
}

bool node_origin(KernelPipeline *kp, int stage, long rewrite, const UOp *node, int max_steps, OriginChain *out,
                 char *err, size_t errlen) {
    *out = (OriginChain){0};
    Walk w = {.kp = kp, .err = err, .errlen = errlen};
    if (!node) {
        walk_fail(&w, "no node");
        return false;
    }
    int p = present(&w, stage, rewrite, node);
    if (p < 0) return false;
    if (!p) {
        if (rewrite >= 0)
            walk_fail(&w, "%%%u is not in the graph at point %d.%ld (go to a point whose graph has it)", node->id,
                      stage, rewrite);
        else walk_fail(&w, "%%%u is not in the graph at point %d (go to a point whose graph has it)", node->id, stage);
        return false;
    }
    const UOp *cur = node;
    long r = rewrite;
    while (cur) {
        if (out->n == max_steps) {
            out->truncated = true;
            break;
        }
        OriginStep st;
        if (!explain(&w, cur, stage, r, &st) || !push_step(&w, out, &st)) return false;
        if (!st.from) break;
        /* the node it came from is in the graph just before that rewrite */
        stage = st.stage;
        r = (long)st.rewrite - 1;
        int there = present(&w, stage, r, st.from);
        if (there < 0) return false;
        cur = there ? st.from : NULL;
        out->lost = !there;
    }
    return true;
}

void origin_chain_free(OriginChain *c) {
    free(c->steps);
    *c = (OriginChain){0};
}

const char *origin_how_name(OriginHow how) {
    switch (how) {
    case ORIGIN_SCHEDULED: return "scheduled";
    case ORIGIN_RULE: return "rule";
    case ORIGIN_PART: return "part";
    case ORIGIN_REBUILT: return "rebuilt";
    case ORIGIN_STAGE: return "stage";
    }
    return "?";
}
