/* pipeline.c - one kernel stepped through the 22 stages (see pipeline.h):
 * points 0..22 computed lazily and kept, per-stage statistics and traces,
 * and the compiled kernel cached until the opts change. */
#include "pipeline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PIPELINE_MAX_OPTS 32

struct KernelPipeline {
    UCtx *c;
    char *name;
    const UOp *ast;
    size_t ast_nodes;      /* nodes of point 0, counted on first use */
    KernelOpt opts[PIPELINE_MAX_OPTS];
    int nopts;
    int pos;
    StageResult res[STAGE_COUNT + 1]; /* res[n] for stage n; res[0] unused */
    Kernel *kernel;
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
    for (int n = 0; n <= STAGE_COUNT; n++) trace_init(&kp->res[n].trace);
    return kp;
}

/* Forgets stages from..22 and the compiled kernel. */
static void forget_from(KernelPipeline *kp, int from) {
    for (int n = from; n <= STAGE_COUNT; n++) {
        trace_free(&kp->res[n].trace);
        memset(&kp->res[n], 0, sizeof kp->res[n]);
        trace_init(&kp->res[n].trace);
    }
    if (kp->pos >= from) kp->pos = from - 1;
    if (kp->kernel) {
        kernel_free(kp->kernel);
        kp->kernel = NULL;
    }
}

void pipeline_free(KernelPipeline *kp) {
    if (!kp) return;
    forget_from(kp, 1);
    for (int n = 0; n <= STAGE_COUNT; n++) trace_free(&kp->res[n].trace);
    free(kp->name);
    free(kp);
}

const char *pipeline_name(const KernelPipeline *kp) { return kp->name; }
UCtx *pipeline_ctx(const KernelPipeline *kp) { return kp->c; }
int pipeline_position(const KernelPipeline *kp) { return kp->pos; }

void pipeline_set_opts(KernelPipeline *kp, const KernelOpt *opts, int n) {
    if (n > PIPELINE_MAX_OPTS) n = PIPELINE_MAX_OPTS;
    if (n < 0) n = 0;
    if (n) memcpy(kp->opts, opts, (size_t)n * sizeof *opts);
    kp->nopts = n;
    forget_from(kp, 7);
}

int pipeline_opts(const KernelPipeline *kp, const KernelOpt **opts) {
    *opts = kp->opts;
    return kp->nopts;
}

static const UOp *point_root(const KernelPipeline *kp, int n) { return n == 0 ? kp->ast : kp->res[n].root; }

/* Runs stage n, whose input (point n-1) must exist. */
static bool run_stage(KernelPipeline *kp, int n, char *err, size_t errlen) {
    StageResult *r = &kp->res[n];
    const UOp *in = point_root(kp, n - 1);
    char msg[1024] = "";
    trace_clear(&r->trace);
    StageCtx sc = {.c = kp->c, .opts = kp->opts, .nopts = kp->nopts, .trace = &r->trace, .err = msg,
                   .errlen = sizeof msg};
    double t0 = now_ms();
    const UOp *out = stage_run(&sc, n, in);
    double t1 = now_ms();
    if (!out) {
        snprintf(err, errlen, "%s", msg[0] ? msg : "failed without a message");
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
            if (kp->pos > i - 1) kp->pos = i - 1;
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

const StageResult *pipeline_result(const KernelPipeline *kp, int n) {
    if (n < 1 || n > STAGE_COUNT || !kp->res[n].done) return NULL;
    return &kp->res[n];
}

Kernel *pipeline_kernel(KernelPipeline *kp, char *err, size_t errlen) {
    if (kp->kernel) return kp->kernel;
    const UOp *lin = pipeline_root(kp, STAGE_COUNT, err, errlen);
    if (!lin) return NULL;
    if (uop_op(lin) != OP_LINEAR) {
        snprintf(err, errlen, "stage %d did not produce a linear program (got %s %%%u)", STAGE_COUNT,
                 op_name(uop_op(lin)), lin->id);
        return NULL;
    }
    char msg[1024];
    kp->kernel = kernel_compile(kp->name, lin->src, lin->nsrc, msg, sizeof msg);
    if (!kp->kernel) snprintf(err, errlen, "compiling %s: %s", kp->name, msg);
    return kp->kernel;
}
