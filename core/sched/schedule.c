/* schedule.c - schedule_build: checks the tensor graph, runs the five steps
 * (realize.c, rangeify.c, bufferize.c, kernel_split.c, program.c) and keeps
 * each step's graphs, trace and time; the helpers the steps share. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "schedule_internal.h"

int sched_pos(const SchedState *st, const UOp *u) {
    return (int)(intptr_t)u64map_get(&st->pos, u->id) - 1;
}

const Shape *sched_shape(const SchedState *st, const UOp *u) {
    int p = sched_pos(st, u);
    return p < 0 ? NULL : &st->shapes[p];
}

const UOp *sched_shape_vector(UCtx *c, const int64_t *d, int n) {
    if (n == 1) return uop_const_int(c, DT_INDEX, d[0]);
    const Arg *items[SHAPE_MAX_DIMS];
    for (int i = 0; i < n; i++) items[i] = arg_int(c, d[i]);
    return uop_new(c, OP_VCONST, dt_vec(DT_INDEX, n), NULL, 0, arg_tuple(c, items, (uint32_t)n));
}

bool sched_fail(SchedState *st, const UOp *u, const char *fmt, ...) {
    if (st->err[0]) return false;
    char what[320];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(st->err, st->errlen, "schedule: %s at node %%%u (%s)", what, u->id, op_name(uop_op(u)));
    return false;
}

void sched_note(SchedState *st, const char *rule, const char *file, int line, const UOp *before, const UOp *after) {
    if (st->trace) trace_add_rewrite(st->trace, rule, file, line, before, after, 0);
}

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static const UOp *sink_of(UCtx *c, const UOp *const *u, int n) {
    return uop_intern(c, OP_SINK, DT_VOID, u, n, NULL, NULL);
}

/* topo order, shapes and positions of st->sink (again after a rewrite) */
static bool index_graph(SchedState *st) {
    const UOp *sink = st->sink;
    free(st->topo);
    free(st->shapes);
    free(st->materialised);
    u64map_free(&st->pos);
    st->topo = uop_toposort(sink, &st->n);
    st->shapes = st->topo ? malloc(st->n * sizeof *st->shapes) : NULL;
    st->materialised = st->topo ? calloc(st->n, sizeof *st->materialised) : NULL;
    if (!st->shapes || !st->materialised) return sched_fail(st, sink, "out of memory");
    /* the SINK (the root, last) has no shape: its outputs may differ */
    st->shapes[st->n - 1].ndim = -1;
    if (!uop_shapes(st->topo, st->n - 1, st->shapes, st->err, st->errlen)) {
        char msg[512];
        snprintf(msg, sizeof msg, "schedule: %s", st->err);
        snprintf(st->err, st->errlen, "%s", msg);
        return false;
    }
    for (size_t i = 0; i < st->n; i++)
        if (!u64map_put(&st->pos, st->topo[i]->id, (const void *)(intptr_t)(i + 1)))
            return sched_fail(st, sink, "out of memory");
    return true;
}

/* checks the graph, computes shapes and positions */
static bool prepare(SchedState *st) {
    const UOp *sink = st->sink;
    if (uop_op(sink) != OP_SINK) return sched_fail(st, sink, "the graph to schedule must be a SINK of tensors");
    if (!index_graph(st)) return false;
    for (size_t i = 0; i < st->n; i++)
        if (uop_op(st->topo[i]) == OP_DEVICE && !st->device) st->device = st->topo[i];
    for (int i = 0; i < sink->nsrc; i++) {
        const Shape *s = sched_shape(st, sink->src[i]);
        if (s->ndim < 0) return sched_fail(st, sink->src[i], "a SINK source is not a tensor (it has no shape)");
        for (int d = 0; d < s->ndim; d++)
            if (s->d[d] == 0) return sched_fail(st, sink->src[i], "zero-sized tensors are not scheduled");
    }
    for (size_t i = 0; i < st->n; i++) {
        Op op = uop_op(st->topo[i]);
        if (op == OP_DEFINE_VAR || op == OP_BIND) return sched_fail(st, st->topo[i], "symbolic shapes are not supported");
        if (op == OP_BUFFER && (st->topo[i]->dtype->kind != DTK_SCALAR || st->topo[i]->dtype->sk == SK_VOID))
            return sched_fail(st, st->topo[i], "a BUFFER needs a scalar element dtype");
    }
    if (!st->device) st->device = uop_new(st->c, OP_DEVICE, DT_VOID, NULL, 0, arg_str(st->c, "CPU"));
    if (!st->device) return sched_fail(st, sink, "out of memory");
    return true;
}

/* Step 1 starts by splitting large reductions (split_reduce.c), until none
 * is left to split (a split reduction is examined again), then decides the
 * buffers. */
static bool split_and_realize(SchedState *st) {
    for (int round = 0; round < 8; round++) {
        bool changed = false;
        if (!sched_split_reduces(st, &changed)) return false;
        if (!changed) break;
        if (!index_graph(st)) return false;
    }
    return sched_realize(st);
}

static void free_state(SchedState *st) {
    for (int i = 0; st->kernel_refs && i < st->nmat; i++) free(st->kernel_refs[i]);
    free(st->kernel_refs);
    free(st->kernel_nrefs);
    free(st->kernel_name);
    free(st->kernel_ast);
    free(st->inputs);
    free(st->after);
    free(st->buffer);
    free(st->bufferize);
    free(st->stored);
    free(st->held);
    free(st->mat_of);
    free(st->mat);
    free(st->out_pos);
    free(st->out_depth);
    free(st->inlined);
    free(st->materialised);
    free(st->shapes);
    free(st->topo);
    u64map_free(&st->pos);
}

typedef bool (*StepFn)(SchedState *st);

static const struct {
    const char *name, *purpose;
} step_info[5] = {
    {"realize", "split large reductions in two; decide which tensors get a buffer: outputs, CONTIGUOUS, broadcast or shared work holding a reduction"},
    {"rangeify", "movement ops become index arithmetic on RANGEs; materialised nodes become BUFFERIZE"},
    {"bufferize to store", "BUFFERIZE becomes a STORE into a new BUFFER, ended over its ranges"},
    {"split kernels", "each store becomes a kernel on DEFINE_GLOBALs, ranges renumbered"},
    {"program", "kernels ordered in Kahn generations; buffers named; alloc/free plan"},
};

/* what a step left: a SINK of its results */
static const UOp *step_root(SchedState *st, int step, const Schedule *s) {
    switch (step) {
    case 0: return sink_of(st->c, st->mat, st->nmat);
    case 1: return sink_of(st->c, st->bufferize, st->nmat);
    case 2: return sink_of(st->c, st->after, st->nmat);
    case 3: return sink_of(st->c, st->kernel_ast, st->nmat);
    default: {
        const UOp **ks = malloc((s->nkernels ? (size_t)s->nkernels : 1) * sizeof *ks);
        if (!ks) return NULL;
        for (int i = 0; i < s->nkernels; i++) ks[i] = s->kernels[i].ast;
        const UOp *r = sink_of(st->c, ks, s->nkernels);
        free(ks);
        return r;
    }
    }
}

Schedule *schedule_build(UCtx *c, const UOp *sink, char *err, size_t errlen) {
    char dummy[8];
    SchedState st = {.c = c, .input = sink, .sink = sink, .err = err && errlen ? err : dummy, .errlen = err && errlen ? errlen : sizeof dummy};
    st.err[0] = 0;
    if (!sink) {
        snprintf(st.err, st.errlen, "schedule: no graph");
        return NULL;
    }
    Schedule *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(st.err, st.errlen, "schedule: out of memory");
        return NULL;
    }
    bool ok = prepare(&st);
    const UOp *before = sink;
    for (int i = 0; ok && i < 5; i++) {
        SchedStep *step = &s->steps[i];
        step->name = step_info[i].name;
        step->purpose = step_info[i].purpose;
        trace_init(&step->trace);
        s->nsteps = i + 1;
        st.trace = &step->trace;
        uint64_t t0 = now_ns();
        trace_begin_pass(&step->trace, step->name, NULL, before);
        switch (i) {
        case 0: ok = split_and_realize(&st); break;
        case 1: ok = sched_rangeify(&st); break;
        case 2: ok = sched_bufferize_to_store(&st); break;
        case 3: ok = sched_split_kernels(&st); break;
        default: ok = sched_make_program(&st, s); break;
        }
        const UOp *after = ok ? step_root(&st, i, s) : NULL;
        if (ok && !after) ok = sched_fail(&st, sink, "could not build the step's root: %s", uctx_error(c));
        uint64_t ns = now_ns() - t0;
        trace_end_pass(&step->trace, after, ns);
        step->before = before;
        step->after = after;
        step->ms = (double)ns / 1e6;
        before = after;
    }
    free_state(&st);
    if (!ok) {
        if (!st.err[0]) snprintf(st.err, st.errlen, "schedule: failed");
        schedule_free(s);
        return NULL;
    }
    return s;
}

void schedule_mark(const Schedule *s, UCtxMarks *m) {
    for (int i = 0; i < s->nsteps; i++) {
        uctx_mark(m, s->steps[i].before);
        uctx_mark(m, s->steps[i].after);
        trace_mark(&s->steps[i].trace, m);
    }
    for (int i = 0; i < s->nkernels; i++) uctx_mark(m, s->kernels[i].ast);
    for (int i = 0; i < s->nbufs; i++) uctx_mark(m, s->bufs[i].source);
    for (int i = 0; s->output_held && i < s->noutputs; i++) uctx_mark(m, s->output_held[i]);
}

void schedule_free(Schedule *s) {
    if (!s) return;
    for (int i = 0; i < s->nsteps; i++) trace_free(&s->steps[i].trace);
    for (int i = 0; i < s->nkernels; i++) free(s->kernels[i].bufs);
    free(s->kernels);
    free(s->bufs);
    free(s->outputs);
    free(s->output_held);
    free(s);
}
