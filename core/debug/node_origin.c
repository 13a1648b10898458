/* node_origin.c - the walk back of node_origin.h.  A node's id is larger
 * than its sources' (nodes are made after their sources), so a graph whose
 * root has a smaller id cannot hold it: most presence checks end there.
 * Which older node a rebuilt node was is read from the rewrite engine's own
 * record of its rebuilds (trace.h, keep_rebuilds) in the runs to the two
 * points around the rewrite. */
#include "node_origin.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include "../util/interrupt.h"

/* the rewrite points computed so far in this walk, with the rebuilds of
 * their runs: each costs a run of its stage, and a walk back through a
 * stage asks for the same ones again */
#define ROOT_CACHE 64
typedef struct PointRun {
    int stage;
    long r;            /* from 1 */
    const UOp *root;
    Trace trace;       /* keeps its rebuilds */
} PointRun;

typedef struct Walk {
    KernelPipeline *kp;
    char *err;
    size_t errlen;
    bool failed;
    PointRun cache[ROOT_CACHE];
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

/* the run to rewrite point (stage, r), r >= 1; NULL on error */
static const PointRun *point_run(Walk *w, int stage, long r) {
    for (int i = 0; i < w->ncache; i++)
        if (w->cache[i].stage == stage && w->cache[i].r == r) return &w->cache[i];
    PointRun *pr = &w->cache[w->next];
    if (w->ncache < ROOT_CACHE) {
        w->ncache++;
        trace_init(&pr->trace);
        pr->trace.keep_rebuilds = true;
    }
    w->next = (w->next + 1) % ROOT_CACHE;
    char msg[512];
    pr->stage = stage;
    pr->r = r;
    pr->root = pipeline_rewrite_point_traced(w->kp, stage, (size_t)r, &pr->trace, msg, sizeof msg);
    if (!pr->root) {
        pr->stage = -1; /* not a point any more */
        walk_fail(w, "%s", msg);
        return NULL;
    }
    return pr;
}

/* the root at point (stage, r): r < 0 the whole stage, r = 0 the point before it */
static const UOp *root_at(Walk *w, int stage, long r) {
    if (r <= 0) {
        char msg[512];
        const UOp *root = pipeline_root(w->kp, r < 0 ? stage : stage - 1, msg, sizeof msg);
        if (!root) walk_fail(w, "%s", msg);
        return root;
    }
    const PointRun *pr = point_run(w, stage, r);
    return pr ? pr->root : NULL;
}

static void walk_free(Walk *w) {
    for (int i = 0; i < w->ncache; i++) trace_free(&w->cache[i].trace);
}

/* what the run to point (stage, r) rebuilt into `to` (from NULL) or rebuilt
 * `from` into (to NULL); NULL when it did not (r = 0: nothing ran) */
static const UOp *rebuild_in_run(Walk *w, int stage, long r, const UOp *from, const UOp *to) {
    if (r <= 0) return NULL;
    const PointRun *pr = point_run(w, stage, r);
    if (!pr) return NULL;
    for (size_t i = 0; i < pr->trace.nrebuilds; i++) {
        const TraceRebuild *b = &pr->trace.rebuilds[i];
        if (to && b->to == to) return b->from;
        if (from && b->from == from) return b->to;
    }
    return NULL;
}

/* 1 when node is in the graph under root, 0 when not, -1 on error */
static int graph_has(Walk *w, const UOp *root, const UOp *node) {
    int found = uop_graph_has(root, node);
    if (found < 0) walk_fail(w, "out of memory");
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

/* The older node node was, when rewrite r of the stage let the engine
 * rebuild it: the node the run to point r rebuilt into it, as the run to
 * point r-1 left that node (rebuilt there too, or as it was).  NULL when
 * node is not a rebuild, or that node is not in the graph at r-1. */
static const UOp *rebuilt_from(Walk *w, int stage, long r, const UOp *node) {
    const UOp *visited = rebuild_in_run(w, stage, r, NULL, node);
    if (!visited || w->failed) return NULL;
    const UOp *older = rebuild_in_run(w, stage, r - 1, visited, NULL);
    if (w->failed) return NULL;
    if (!older) older = visited;
    int there = present(w, stage, r - 1, older);
    return there == 1 && older != node ? older : NULL;
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
    /* a stage that failed: the rewrites it made before */
    const StageResult *res = pipeline_ran(w->kp, stage);
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
    const UOp *old = rebuilt_from(w, stage, (long)hi, node);
    if (w->failed) return false;
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

static bool walk(Walk *w, int stage, long rewrite, const UOp *node, int max_steps, OriginChain *out) {
    if (!node) {
        walk_fail(w, "no node");
        return false;
    }
    int p = present(w, stage, rewrite, node);
    if (p < 0) return false;
    if (!p) {
        char at[48], hint[256];
        if (rewrite >= 0) snprintf(at, sizeof at, "%d.%ld", stage, rewrite);
        else snprintf(at, sizeof at, "%d", stage);
        pipeline_where_is(w->kp, node, hint, sizeof hint);
        walk_fail(w, "%%%u is not in the graph at point %s (%s)", node->id, at, hint);
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
        if (!explain(w, cur, stage, r, &st) || !push_step(w, out, &st)) return false;
        if (!st.from) break;
        /* the node it came from is in the graph just before that rewrite */
        stage = st.stage;
        r = (long)st.rewrite - 1;
        int there = present(w, stage, r, st.from);
        if (there < 0) return false;
        cur = there ? st.from : NULL;
        out->lost = !there;
    }
    return true;
}

bool node_origin(KernelPipeline *kp, int stage, long rewrite, const UOp *node, int max_steps, OriginChain *out,
                 char *err, size_t errlen) {
    *out = (OriginChain){0};
    Walk w = {.kp = kp, .err = err, .errlen = errlen};
    bool ok = walk(&w, stage, rewrite, node, max_steps, out);
    walk_free(&w);
    return ok;
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
