/* kernel_program.c - a program of one kernel from a kernel AST (a SINK of
 * STOREs over DEFINE_GLOBALs, as the scheduler or tinygrad makes it), so a
 * kernel imported from tinygrad is stepped and run like a scheduled one.
 * Each DEFINE_GLOBAL is a buffer: an output when the kernel stores to it,
 * an input otherwise; its source is the DEFINE_GLOBAL itself (there is no
 * tensor graph), so its reference is the kernel as imported. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "schedule.h"

/* the DEFINE_GLOBAL an INDEX (or a CAST of one) points into, else NULL */
static const UOp *global_of(const UOp *u) {
    while (u && (uop_op(u) == OP_CAST || uop_op(u) == OP_INDEX)) u = u->nsrc ? u->src[0] : NULL;
    return u && uop_op(u) == OP_DEFINE_GLOBAL ? u : NULL;
}

Schedule *schedule_from_kernel(UCtx *c, const UOp *ast, const char *name, char *err, size_t errlen) {
    (void)c;
    if (!ast || uop_op(ast) != OP_SINK) {
        snprintf(err, errlen, "a kernel AST is a SINK of STOREs, got %s", ast ? op_name(uop_op(ast)) : "nothing");
        return NULL;
    }
    size_t n;
    const UOp **topo = uop_toposort(ast, &n);
    if (!topo) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    /* DEFINE_GLOBALs by their number; which of them are stored to */
    int max = -1;
    for (size_t i = 0; i < n; i++) {
        const UOp *u = topo[i];
        if (uop_op(u) != OP_DEFINE_GLOBAL) continue;
        if (!u->arg || u->arg->kind != ARG_INT || u->arg->v.i < 0 || u->arg->v.i > 1000 || !dt_is_ptr(u->dtype)) {
            snprintf(err, errlen, "DEFINE_GLOBAL %%%u: its arg must be its number (0..1000) and its dtype a pointer",
                     u->id);
            free(topo);
            return NULL;
        }
        if (u->arg->v.i > max) max = (int)u->arg->v.i;
    }
    if (max < 0) {
        snprintf(err, errlen, "the kernel has no DEFINE_GLOBAL: nothing to run it on");
        free(topo);
        return NULL;
    }
    const UOp **globals = calloc((size_t)max + 1, sizeof *globals);
    bool *stored = calloc((size_t)max + 1, sizeof *stored);
    Schedule *s = calloc(1, sizeof *s);
    if (s) {
        s->kernels = calloc(1, sizeof *s->kernels);
        s->bufs = calloc((size_t)max + 1, sizeof *s->bufs);
        s->outputs = calloc((size_t)max + 1, sizeof *s->outputs);
        if (s->kernels) s->kernels[0].bufs = calloc((size_t)max + 1, sizeof *s->kernels[0].bufs);
    }
    if (!globals || !stored || !s || !s->kernels || !s->bufs || !s->outputs || !s->kernels[0].bufs) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    for (size_t i = 0; i < n; i++) {
        const UOp *u = topo[i];
        if (uop_op(u) == OP_DEFINE_GLOBAL) {
            int g = (int)u->arg->v.i;
            if (globals[g] && globals[g] != u) {
                snprintf(err, errlen, "two DEFINE_GLOBALs numbered %d (%%%u and %%%u)", g, globals[g]->id, u->id);
                goto fail;
            }
            globals[g] = u;
        } else if (uop_op(u) == OP_STORE && u->nsrc >= 1) {
            const UOp *g = global_of(u->src[0]);
            if (g) stored[g->arg->v.i] = true;
        }
    }
    int nin = 0, nout = 0;
    for (int g = 0; g <= max; g++) {
        if (!globals[g]) {
            snprintf(err, errlen, "DEFINE_GLOBALs must be numbered 0..%d without gaps: %d is missing", max, g);
            goto fail;
        }
        const DType *pt = globals[g]->dtype;
        if (pt->size <= 0 || pt->base->count != 1) {
            snprintf(err, errlen, "DEFINE_GLOBAL %%%u: its pointer needs a size and a scalar element type", globals[g]->id);
            goto fail;
        }
        SchedBuffer *b = &s->bufs[g];
        snprintf(b->name, sizeof b->name, "%s%d", stored[g] ? "output" : "input", stored[g] ? nout : nin);
        b->kind = stored[g] ? SBUF_OUTPUT : SBUF_INPUT;
        b->dtype = pt->base;
        b->size = pt->size;
        b->source = globals[g];
        b->first_kernel = b->last_kernel = 0;
        if (stored[g]) s->outputs[nout++] = g;
        else nin++;
        s->kernels[0].bufs[g] = g;
    }
    if (nout == 0) {
        snprintf(err, errlen, "the kernel stores to no DEFINE_GLOBAL: it has no output");
        goto fail;
    }
    s->nbufs = max + 1;
    s->noutputs = nout;
    s->nkernels = 1;
    s->ngenerations = 1;
    s->kernels[0].ast = ast;
    s->kernels[0].nbufs = max + 1;
    snprintf(s->kernels[0].name, sizeof s->kernels[0].name, "%s", name && *name ? name : "kernel");
    free(topo);
    free(globals);
    free(stored);
    return s;
fail:
    free(topo);
    free(globals);
    free(stored);
    schedule_free(s);
    return NULL;
}
