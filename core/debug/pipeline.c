/* pipeline.c - one kernel stepped through the 22 stages (see pipeline.h):
 * points 0..22 computed lazily and kept, per-stage statistics and traces,
 * the compiled kernel cached until the opts change, and where a node is,
 * the rewrite points inside the stages included. */
#include "pipeline.h"
#include "breakpoints.h"
#include "../sched/kernel_name.h"
#include "../stages/spec_verify.h"
#include "../util/interrupt.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PIPELINE_MAX_OPTS 32
#define PIPELINE_MAX_INSERTED 64

struct KernelPipeline {
    UCtx *c;
    char *name;
    char opt_name[64];     /* tinygrad's name after the opts ("" until stage 7 is named) */
    const UOp *ast;
    size_t ast_nodes;      /* nodes of point 0, counted on first use */
    KernelOpt opts[PIPELINE_MAX_OPTS];
    int nopts;
    char *opts_why;        /* why the opts were chosen, one line per decision; NULL for hand opts */
    PipelineOptions options;
    int pos;
    long rpos;             /* the rewrite inside stage pos, -1 for the whole stage */
    StageResult res[STAGE_COUNT + 1]; /* res[n] for stage n; res[0] unused */
    Kernel *kernel;
    Kernel *kernel_checked;   /* the same program compiled with bounds checks, on request */
    InsertedRules *ins;    /* user rules inserted into stages, in insertion order */
    int nins, capins;
    BreakList breaks;
};

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

KernelPipeline *pipeline_new(UCtx *c, const char *name, const UOp *ast) {
    KernelPipeline *kp = calloc(1, sizeof *kp);
    if (!kp) return NULL;
    kp->name = strdup(name ? name : "kernel");
    if (!kp->name) {
        free(kp);
        return NULL;
    }
    kp->c = c;
    kp->ast = ast;
    kp->rpos = -1;
    for (int n = 0; n <= STAGE_COUNT; n++) trace_init(&kp->res[n].trace);
    return kp;
}

/* Forgets stages from..22 and the compiled kernel. */
static void forget_from(KernelPipeline *kp, int from) {
    for (int n = from; n <= STAGE_COUNT; n++) {
        trace_free(&kp->res[n].trace);
        free(kp->res[n].error);
        memset(&kp->res[n], 0, sizeof kp->res[n]);
        trace_init(&kp->res[n].trace);
    }
    if (kp->pos >= from) kp->pos = from - 1, kp->rpos = -1;
    if (from <= 7) kp->opt_name[0] = 0;
    kernel_free(kp->kernel);
    kernel_free(kp->kernel_checked);
    kp->kernel = kp->kernel_checked = NULL;
}

void pipeline_free(KernelPipeline *kp) {
    if (!kp) return;
    forget_from(kp, 1);
    for (int n = 0; n <= STAGE_COUNT; n++) trace_free(&kp->res[n].trace);
    for (int i = 0; i < kp->nins; i++) ruleset_free(kp->ins[i].rules);
    free(kp->ins);
    breaks_free(&kp->breaks);
    free(kp->opts_why);
    free(kp->name);
    free(kp);
}

void pipeline_mark(const KernelPipeline *kp, UCtxMarks *m) {
    uctx_mark(m, kp->ast);
    for (int n = 0; n <= STAGE_COUNT; n++) {
        uctx_mark(m, kp->res[n].root);
        trace_mark(&kp->res[n].trace, m);
    }
}

const char *pipeline_name(const KernelPipeline *kp) { return kp->name; }

const char *pipeline_opt_name(KernelPipeline *kp, char *err, size_t errlen) {
    if (kp->opt_name[0]) return kp->opt_name;
    const UOp *root = pipeline_root(kp, 7, err, errlen);
    if (!root) return NULL;
    if (!kernel_shape_name(root, kp->opt_name, sizeof kp->opt_name) && !kp->opt_name[0]) {
        snprintf(err, errlen, "%s: out of memory naming the kernel", kp->name);
        return NULL;
    }
    return kp->opt_name;
}
UCtx *pipeline_ctx(const KernelPipeline *kp) { return kp->c; }
int pipeline_position(const KernelPipeline *kp) { return kp->pos; }

void pipeline_set_opts(KernelPipeline *kp, const KernelOpt *opts, int n) {
    if (n > PIPELINE_MAX_OPTS) n = PIPELINE_MAX_OPTS;
    if (n < 0) n = 0;
    if (n) memcpy(kp->opts, opts, (size_t)n * sizeof *opts);
    kp->nopts = n;
    free(kp->opts_why);
    kp->opts_why = NULL;
    forget_from(kp, 7);
}

bool pipeline_set_opts_why(KernelPipeline *kp, const char *why) {
    char *copy = why ? strdup(why) : NULL;
    if (why && !copy) return false;
    free(kp->opts_why);
    kp->opts_why = copy;
    return true;
}

const char *pipeline_opts_why(const KernelPipeline *kp) { return kp->opts_why; }

void pipeline_set_options(KernelPipeline *kp, const PipelineOptions *o) {
    if (kp->options.native_transcendentals == o->native_transcendentals && kp->options.target == o->target) return;
    int from = kp->options.target != o->target ? 7 : 18;
    kp->options = *o;
    forget_from(kp, from);
}

PipelineOptions pipeline_options(const KernelPipeline *kp) { return kp->options; }

/* the context a stage of this pipeline runs in */
static StageCtx stage_ctx(const KernelPipeline *kp, char *msg, size_t msglen) {
    return (StageCtx){.c = kp->c, .opts = kp->opts, .nopts = kp->nopts, .err = msg, .errlen = msglen,
                      .native_transcendentals = kp->options.native_transcendentals, .target = kp->options.target};
}

int pipeline_opts(const KernelPipeline *kp, const KernelOpt **opts) {
    *opts = kp->opts;
    return kp->nopts;
}

static const UOp *point_root(const KernelPipeline *kp, int n) { return n == 0 ? kp->ast : kp->res[n].root; }

/* the sets inserted into stage n, before and after, into sc */
static void inserted_sets(const KernelPipeline *kp, int n, StageCtx *sc, const RuleSet *sides[2][PIPELINE_MAX_INSERTED]) {
    int nb = 0, na = 0;
    for (int i = 0; i < kp->nins; i++)
        if (kp->ins[i].stage == n) {
            if (kp->ins[i].before) sides[0][nb++] = kp->ins[i].rules;
            else sides[1][na++] = kp->ins[i].rules;
        }
    sc->before = sides[0], sc->nbefore = nb;
    sc->after = sides[1], sc->nafter = na;
}

/* Whether rules are inserted into stage n or one before it: what they make
 * is for bisect, check and k:verify to judge, so those stages and the ones
 * after them are not verified as they run. */
static bool inserted_up_to(const KernelPipeline *kp, int n) {
    for (int i = 0; i < kp->nins; i++)
        if (kp->ins[i].stage <= n) return true;
    return false;
}

/* Runs stage n, whose input (point n-1) must exist. */
static bool run_stage(KernelPipeline *kp, int n, char *err, size_t errlen) {
    StageResult *r = &kp->res[n];
    const UOp *in = point_root(kp, n - 1);
    char msg[1024] = "";
    trace_clear(&r->trace);
    StageCtx sc = stage_ctx(kp, msg, sizeof msg);
    sc.trace = &r->trace;
    const RuleSet *sides[2][PIPELINE_MAX_INSERTED];
    inserted_sets(kp, n, &sc, sides);
    sc.verify = spec_verify_enabled() && !inserted_up_to(kp, n);
    double t0 = now_ms();
    const UOp *out = stage_run(&sc, n, in);
    double t1 = now_ms();
    free(r->error);
    r->error = NULL;
    r->failed = false;
    if (!out) {
        /* the trace keeps the rewrites made before the failure; a stage
         * stopped by Ctrl-C has not failed */
        snprintf(err, errlen, "%s", msg[0] ? msg : "failed without a message");
        r->failed = !uopdb_interrupted() && (r->error = strdup(err)) != NULL;
        r->rewrites = r->trace.nrewrites;
        return false;
    }
    r->done = true;
    r->root = out;
    r->ms = t1 - t0;
    /* the size before is the previous point's size after: one walk per stage */
    if (n > 1) r->nodes_before = kp->res[n - 1].nodes_after;
    else r->nodes_before = kp->ast_nodes ? kp->ast_nodes : (kp->ast_nodes = uop_graph_size(in));
    r->nodes_after = out == in ? r->nodes_before : uop_graph_size(out);
    r->rewrites = r->trace.nrewrites;
    r->changed = out != in;
    return true;
}

/* Makes points 1..n exist; on failure the position is the last good one. */
static bool ensure(KernelPipeline *kp, int n, char *err, size_t errlen) {
    for (int i = 1; i <= n; i++) {
        if (kp->res[i].done) continue;
        if (!run_stage(kp, i, err, errlen)) {
            /* the position moves back before the failed stage, unless it
             * is one of the rewrite points the stage made before failing */
            bool inside = kp->pos == i && kp->rpos >= 0 && (size_t)kp->rpos <= kp->res[i].rewrites;
            if (kp->pos > i - 1 && !inside) kp->pos = i - 1, kp->rpos = -1;
            return false;
        }
    }
    return true;
}

bool pipeline_seek(KernelPipeline *kp, int n, char *err, size_t errlen) {
    if (n < 0 || n > STAGE_COUNT) {
        snprintf(err, errlen, "no stage %d: stages are 0 (the kernel as scheduled) to %d", n, STAGE_COUNT);
        return false;
    }
    if (!ensure(kp, n, err, errlen)) {
        int last = 0;
        while (last < STAGE_COUNT && kp->res[last + 1].done) last++;
        kp->pos = last;
        return false;
    }
    kp->pos = n;
    kp->rpos = -1;
    return true;
}

const UOp *pipeline_root(KernelPipeline *kp, int n, char *err, size_t errlen) {
    if (n < 0 || n > STAGE_COUNT) {
        snprintf(err, errlen, "no stage %d: stages are 0 (the kernel as scheduled) to %d", n, STAGE_COUNT);
        return NULL;
    }
    if (!ensure(kp, n, err, errlen)) return NULL;
    return point_root(kp, n);
}

/* The points 0..22 whose graphs have the node, as runs "0 to 6, 9" in
 * runs; how many points, -1 when out of memory. */
static int points_with(KernelPipeline *kp, const UOp *node, char *runs, size_t len) {
    size_t used = 0;
    int first = -1, points = 0;
    if (len) runs[0] = 0;
    for (int n = 0; n <= STAGE_COUNT + 1; n++) {
        char err[256];
        const UOp *root = n <= STAGE_COUNT ? pipeline_root(kp, n, err, sizeof err) : NULL;
        int has = root ? uop_graph_has(root, node) : 0;
        if (has < 0) return -1;
        if (has) {
            points++;
            if (first < 0) first = n;
            continue;
        }
        if (first >= 0 && used < len) {
            int w = first == n - 1 ? snprintf(runs + used, len - used, "%s%d", used ? ", " : "", first)
                                   : snprintf(runs + used, len - used, "%s%d to %d", used ? ", " : "", first, n - 1);
            used += w > 0 ? (size_t)w : 0;
        }
        first = -1;
        if (!root) break; /* the end, or a stage that failed */
    }
    return points;
}

/* The ids of the nodes under a node, itself included, as a bitset: a
 * source's id is smaller than its user's, so node's id bounds them. */
typedef struct IdSet {
    uint64_t *bits;
    uint32_t max;
} IdSet;

static bool idset_of_graph(const UOp *node, IdSet *s) {
    size_t n;
    const UOp **t = uop_toposort(node, &n);
    s->max = node->id;
    s->bits = t ? calloc(node->id / 64 + 1, sizeof *s->bits) : NULL;
    if (!s->bits) {
        free((void *)t);
        return false;
    }
    for (size_t i = 0; i < n; i++) s->bits[t[i]->id / 64] |= 1ull << (t[i]->id % 64);
    free((void *)t);
    return true;
}

static bool idset_has(const IdSet *s, const UOp *u) {
    return u->id <= s->max && (s->bits[u->id / 64] >> (u->id % 64) & 1);
}

/* The rewrite points found to hold a node, as runs "15.3, 15.5 to 15.9"
 * (two runs that touch are one), and the end of the first run. */
typedef struct PointRuns {
    char text[96];
    size_t used;
    long points;          /* how many points */
    int stage;            /* the run being added to (0: none yet) */
    size_t from, to;
    int first_stage;      /* the end of the first run: first_stage.first_end */
    size_t first_end;
} PointRuns;

static void runs_flush(PointRuns *pr) {
    if (!pr->stage) return;
    if (!pr->first_stage) pr->first_stage = pr->stage, pr->first_end = pr->to;
    if (pr->used < sizeof pr->text) {
        size_t left = sizeof pr->text - pr->used;
        const char *sep = pr->used ? ", " : "";
        int w = pr->from == pr->to ? snprintf(pr->text + pr->used, left, "%s%d.%zu", sep, pr->stage, pr->from)
                                   : snprintf(pr->text + pr->used, left, "%s%d.%zu to %d.%zu", sep, pr->stage, pr->from,
                                              pr->stage, pr->to);
        pr->used += w > 0 ? (size_t)w : 0;
    }
    pr->stage = 0;
}

static void runs_add(PointRuns *pr, int n, size_t from, size_t to) {
    pr->points += (long)(to - from + 1);
    if (pr->stage == n && from == pr->to + 1) {
        pr->to = to;
        return;
    }
    runs_flush(pr);
    pr->stage = n, pr->from = from, pr->to = to;
}

/* 1 when node is in the graph at rewrite point n.r, 0 when not, -1 with err */
static int point_has(KernelPipeline *kp, int n, size_t r, const UOp *node, char *err, size_t errlen) {
    if (uopdb_interrupted()) {
        snprintf(err, errlen, "interrupted");
        return -1;
    }
    const UOp *root = pipeline_rewrite_point(kp, n, r, err, errlen);
    int has = root ? uop_graph_has(root, node) : -1;
    if (root && has < 0) snprintf(err, errlen, "out of memory");
    return has;
}

/* Adds to pr the rewrite points inside stage n (after its first rewrite,
 * before its end) that hold node, which its input (point n.0) lacks.
 * Between two rewrites of a pass the graph changes only around the node
 * rewritten: rewrite j puts (the result of) after_j in place of before_j
 * and rebuilds the users of before_j up to the root.  So the node can leave
 * the graph at rewrite j only when before_j is under it (it is rebuilt) or
 * it is under before_j (it may lose its last user), which the trace tells.
 * Between two such rewrites it can come in but not leave: one run of the
 * stage to the last point before the next such rewrite says whether it is
 * there, and when it is, a bisection of those points says since when.
 * False with err when a point cannot be computed or memory runs out. */
static bool points_inside(KernelPipeline *kp, int n, const UOp *node, const IdSet *under, PointRuns *pr, char *err,
                          size_t errlen) {
    const StageResult *res = pipeline_ran(kp, n);
    if (!res) return true;
    size_t total = res->trace.nrewrites;
    size_t lo = 0; /* the first point of the current stretch */
    for (size_t j = 1; j <= total + 1; j++) {
        if (j <= total) {
            const UOp *before = res->trace.rewrites[j - 1].before;
            int goes = idset_has(under, before) ? 1 : uop_graph_has(before, node);
            if (goes < 0) {
                snprintf(err, errlen, "out of memory");
                return false;
            }
            if (!goes) continue;
        }
        /* points lo..j-1: the node can come in there but not leave; the
         * end of a stage that finished lacks it, so the last stretch of
         * such a stage does too */
        size_t hi = j - 1;
        bool stage_end = j == total + 1 && res->done;
        if (hi >= 1 && !stage_end) {
            int has = point_has(kp, n, hi, node, err, errlen);
            if (has < 0) return false;
            if (has) {
                size_t l = lo ? lo : 1, h = hi;
                while (l < h) {
                    size_t m = l + (h - l) / 2;
                    int there = point_has(kp, n, m, node, err, errlen);
                    if (there < 0) return false;
                    if (there) h = m;
                    else l = m + 1;
                }
                runs_add(pr, n, l, hi);
            }
        }
        lo = j;
    }
    return true;
}

int pipeline_where_is(KernelPipeline *kp, const UOp *node, char *out, size_t len) {
    char runs[96];
    int n = points_with(kp, node, runs, sizeof runs);
    if (n < 0) { snprintf(out, len, "out of memory"); return -1; }
    if (n) {
        snprintf(out, len, "it is in the graph at point%s %s", n > 1 ? "s" : "", runs);
        return n;
    }
    /* only inside stages, between two of their rewrites */
    IdSet under;
    if (!idset_of_graph(node, &under)) { snprintf(out, len, "out of memory"); return -1; }
    PointRuns pr = {.used = 0};
    char err[256] = "";
    bool ok = true;
    for (int s = 1; s <= STAGE_COUNT && ok; s++) ok = points_inside(kp, s, node, &under, &pr, err, sizeof err);
    free(under.bits);
    if (!ok) {
        snprintf(out, len, "it is at none of points 0 to %d; looking inside the stages: %s", STAGE_COUNT, err);
        return strcmp(err, "out of memory") ? 0 : -1;
    }
    runs_flush(&pr);
    if (pr.points) {
        snprintf(out, len, "it is at point%s %s: :goto %d.%zu", pr.points > 1 ? "s" : "", pr.text, pr.first_stage,
                 pr.first_end);
        return 0;
    }
    /* made by a rewrite and rewritten again before the point after it */
    for (int s = 1; s <= STAGE_COUNT; s++) {
        const StageResult *res = pipeline_ran(kp, s);
        for (size_t i = 0; res && i < res->trace.nrewrites; i++) {
            int has = uop_graph_has(res->trace.rewrites[i].after, node);
            if (has < 0) { snprintf(out, len, "out of memory"); return -1; }
            if (has) {
                snprintf(out, len, "it is at none of points 0 to %d; it first appears in the result of rewrite %d.%zu (rule %s)",
                         STAGE_COUNT, s, i + 1, res->trace.rewrites[i].rule);
                return 0;
            }
        }
    }
    snprintf(out, len, "it is at no point of this kernel");
    return 0;
}

const StageResult *pipeline_result(const KernelPipeline *kp, int n) {
    if (n < 1 || n > STAGE_COUNT || !kp->res[n].done) return NULL;
    return &kp->res[n];
}

const StageResult *pipeline_failure(const KernelPipeline *kp, int n) {
    if (n < 1 || n > STAGE_COUNT || !kp->res[n].failed || !kp->res[n].error) return NULL;
    return &kp->res[n];
}

const StageResult *pipeline_ran(const KernelPipeline *kp, int n) {
    const StageResult *r = pipeline_result(kp, n);
    return r ? r : pipeline_failure(kp, n);
}

/* compiles the final program (checked: with bounds checks) into *slot */
static Kernel *compile_final(KernelPipeline *kp, bool checked, Kernel **slot, char *err, size_t errlen) {
    if (*slot) return *slot;
    if (kp->options.target == TARGET_GPU) {
        snprintf(err, errlen, "%s: a kernel of the gpu target has no host code: it runs in the GPU emulator", kp->name);
        return NULL;
    }
    const UOp *lin = pipeline_root(kp, STAGE_COUNT, err, errlen);
    if (!lin) return NULL;
    if (uop_op(lin) != OP_LINEAR) {
        snprintf(err, errlen, "stage %d did not produce a linear program (got %s %%%u)", STAGE_COUNT,
                 op_name(uop_op(lin)), lin->id);
        return NULL;
    }
    /* the function is named as tinygrad names it, after the opts */
    const char *fname = pipeline_opt_name(kp, err, errlen);
    if (!fname) return NULL;
    char msg[1024];
    KernelCompileOpts opts = {.checked = checked};
    *slot = kernel_compile_opts(fname, lin->src, lin->nsrc, &opts, msg, sizeof msg);
    if (!*slot) snprintf(err, errlen, "compiling %s%s: %s", kp->name, checked ? " with bounds checks" : "", msg);
    return *slot;
}

Kernel *pipeline_kernel(KernelPipeline *kp, char *err, size_t errlen) {
    return compile_final(kp, false, &kp->kernel, err, errlen);
}

Kernel *pipeline_kernel_checked(KernelPipeline *kp, char *err, size_t errlen) {
    return compile_final(kp, true, &kp->kernel_checked, err, errlen);
}

bool pipeline_insert(KernelPipeline *kp, int n, const RuleSet *rules, bool before, char *err, size_t errlen) {
    if (n < 1 || n > STAGE_COUNT) {
        snprintf(err, errlen, "no stage %d: rules go into stages 1 to %d", n, STAGE_COUNT);
        return false;
    }
    if (!stage_takes_inserted_rules(n, before, err, errlen)) return false;
    if (kp->nins >= PIPELINE_MAX_INSERTED) {
        snprintf(err, errlen, "at most %d inserted rule sets", PIPELINE_MAX_INSERTED);
        return false;
    }
    if (kp->nins == kp->capins) {
        int cap = kp->capins ? kp->capins * 2 : 4;
        InsertedRules *a = realloc(kp->ins, (size_t)cap * sizeof *a);
        if (!a) {
            snprintf(err, errlen, "out of memory");
            return false;
        }
        kp->ins = a, kp->capins = cap;
    }
    RuleSet *own = ruleset_concat(ruleset_name(rules), rules, NULL);
    if (!own) {
        snprintf(err, errlen, "out of memory");
        return false;
    }
    kp->ins[kp->nins++] = (InsertedRules){.stage = n, .before = before, .rules = own};
    forget_from(kp, n);
    return true;
}

int pipeline_remove(KernelPipeline *kp, int n, const char *name) {
    int k = 0, removed = 0;
    for (int i = 0; i < kp->nins; i++) {
        InsertedRules *r = &kp->ins[i];
        if (r->stage == n && (!name || !strcmp(ruleset_name(r->rules), name))) {
            ruleset_free(r->rules);
            removed++;
        } else {
            kp->ins[k++] = *r;
        }
    }
    kp->nins = k;
    if (removed) forget_from(kp, n);
    return removed;
}

int pipeline_inserted_count(const KernelPipeline *kp) { return kp->nins; }
const InsertedRules *pipeline_inserted(const KernelPipeline *kp, int i) {
    return i >= 0 && i < kp->nins ? &kp->ins[i] : NULL;
}

/* what a run of a stage again hands its rule pass: a probe (StageCtx.probe), or none */
typedef struct Probe {
    void (*fn)(const RuleSet *rs, void *user, void *ud);
    void *ud;
    bool first;
} Probe;

/* stage n run again on point n-1, stopping after r rewrites (0: to its end),
 * into trace (may be NULL), with the probe (may be NULL) */
static const UOp *rerun_stage(KernelPipeline *kp, int n, size_t r, Trace *trace, const Probe *probe, char *err,
                              size_t errlen) {
    char msg[1024] = "";
    StageCtx sc = stage_ctx(kp, msg, sizeof msg);
    sc.stop_after = r;
    sc.trace = trace;
    if (probe) sc.probe = probe->fn, sc.probe_ud = probe->ud, sc.probe_first = probe->first;
    const RuleSet *sides[2][PIPELINE_MAX_INSERTED];
    inserted_sets(kp, n, &sc, sides);
    const UOp *out = stage_run(&sc, n, point_root(kp, n - 1));
    if (!out) snprintf(err, errlen, "%s", msg[0] ? msg : "failed without a message");
    return out;
}

static bool rewrite_stage_ok(int n, char *err, size_t errlen) {
    if (n >= 1 && n <= STAGE_COUNT) return true;
    snprintf(err, errlen, "no stage %d: rewrite points are in stages 1 to %d", n, STAGE_COUNT);
    return false;
}

/* Whether rewrite point (n, r) can be computed: stage n ran, or it failed
 * with at least r rewrites made before (r = -1: its end, which a failed
 * stage does not have).  False + err otherwise. */
static bool point_reachable(KernelPipeline *kp, int n, long r, char *err, size_t errlen) {
    if (!rewrite_stage_ok(n, err, errlen)) return false;
    /* a stage that failed is not run again here (ensure runs it again when
     * the stage itself is asked for): its trace, which callers may be
     * reading, stays as it is */
    bool failed_here = kp->res[n].failed && (n == 1 || kp->res[n - 1].done);
    if (!failed_here && ensure(kp, n, err, errlen)) return true;
    const StageResult *f = pipeline_failure(kp, n);
    if (!f || (n > 1 && !kp->res[n - 1].done)) return false; /* a stage before n failed */
    size_t made = f->rewrites;
    if (r >= 0 && (size_t)r <= made) return true;
    snprintf(err, errlen, "%s; it made %zu rewrite%s before it failed, and the points before the failure can be visited",
             f->error, made, made == 1 ? "" : "s");
    return false;
}

/* the stop_after that reaches point (n, r): r, or 0 (the whole stage) for
 * its end, or r past the rewrites of a stage that finished */
static size_t stop_for(const KernelPipeline *kp, int n, long r) {
    return r > 0 && (!kp->res[n].done || (size_t)r < kp->res[n].rewrites) ? (size_t)r : 0;
}

const UOp *pipeline_rewrite_point(KernelPipeline *kp, int n, size_t r, char *err, size_t errlen) {
    long at = (long)(r > LONG_MAX ? LONG_MAX : r);
    if (!point_reachable(kp, n, at, err, errlen)) return NULL;
    if (r == 0) return point_root(kp, n - 1);
    if (stop_for(kp, n, at) == 0) return kp->res[n].root;
    return rerun_stage(kp, n, r, NULL, NULL, err, errlen);
}

const UOp *pipeline_rewrite_point_traced(KernelPipeline *kp, int n, size_t r, Trace *trace, char *err,
                                         size_t errlen) {
    trace_clear(trace);
    long at = (long)(r > LONG_MAX ? LONG_MAX : r);
    if (!point_reachable(kp, n, at, err, errlen)) return NULL;
    if (r == 0) return point_root(kp, n - 1);
    return rerun_stage(kp, n, stop_for(kp, n, at), trace, NULL, err, errlen);
}

bool pipeline_probe(KernelPipeline *kp, int n, long r, void (*probe)(const RuleSet *rs, void *user, void *ud),
                    void *ud, char *err, size_t errlen) {
    if (!point_reachable(kp, n, r, err, errlen)) return false;
    Probe p = {probe, ud, r == 0};
    return rerun_stage(kp, n, stop_for(kp, n, r), NULL, &p, err, errlen) != NULL;
}

const UOp *pipeline_complete_stage(KernelPipeline *kp, int n, const UOp *root, char *err, size_t errlen) {
    char msg[1024] = "";
    StageCtx sc = stage_ctx(kp, msg, sizeof msg);
    const UOp *out = stage_run(&sc, n, root);
    if (!out) snprintf(err, errlen, "%s", msg[0] ? msg : "failed without a message");
    return out;
}

bool pipeline_rewrite_in_range(const KernelPipeline *kp, int n, size_t r, char *err, size_t errlen) {
    const StageResult *res = pipeline_ran(kp, n);
    if (!res || r <= res->rewrites) return true;
    snprintf(err, errlen, "stage %d made %zu rewrite%s: rewrite points are %d.0 to %d.%zu", n, res->rewrites,
             res->rewrites == 1 ? "" : "s", n, n, res->rewrites);
    return false;
}

bool pipeline_seek_rewrite(KernelPipeline *kp, int n, size_t r, char *err, size_t errlen) {
    if (!pipeline_rewrite_point(kp, n, r, err, errlen) || !pipeline_rewrite_in_range(kp, n, r, err, errlen))
        return false;
    kp->pos = n;
    kp->rpos = (long)r;
    return true;
}

long pipeline_rewrite_position(const KernelPipeline *kp) { return kp->rpos; }

BreakList *pipeline_breaks(KernelPipeline *kp) { return &kp->breaks; }
