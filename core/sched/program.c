/* program.c - scheduler step 5: the kernels as a program.
 *
 * A kernel depends on the kernels that store what it reads.  Kahn's
 * algorithm by levels puts each kernel in generation 1 + the latest
 * generation it depends on (generation 0: reads only inputs); kernels run
 * generation by generation, in the order they were made within one.
 * Buffers: input{n} for the input BUFFERs in order of first use, tmp{n} for
 * materialised nodes that are not outputs in order of their kernel,
 * output{n} for the SINK's sources in order (a source that is a view holds
 * the buffer of its base, shared by the views of one base).  Each buffer knows the first
 * and last kernel using it, which is the alloc/free plan for tmps.
 * schedule_format prints it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "schedule_internal.h"

static SchedBuffer *add_buffer(Schedule *s, SchedBufKind kind, int n, const DType *dt, int64_t size, const UOp *src) {
    SchedBuffer *b = &s->bufs[s->nbufs++];
    static const char *const prefix[] = {"input", "tmp", "output"};
    snprintf(b->name, sizeof b->name, "%s%d", prefix[kind], n);
    b->kind = kind;
    b->dtype = dt;
    b->size = size;
    b->source = src;
    b->first_kernel = b->last_kernel = -1;
    return b;
}

/* What output i's buffer (that of mat[m]) holds, in the SINK as given: the
 * work under the source's movement ops (a split reduction may have rebuilt
 * that work in st->sink), SHRINKed as held[m] is when its buffer stores it
 * once along its dead axes; NULL when out of memory. */
static const UOp *held_in_input(SchedState *st, int i, int m) {
    const UOp *u = st->input->src[i];
    for (int d = 0; d < st->out_depth[i] && op_is(uop_op(u), OPF_MOVEMENT); d++) u = u->src[0];
    const UOp *h = st->held[m];
    if (h == st->mat[m]) return u;
    const UOp *src[3] = {u, h->src[1], h->src[2]};
    return uop_new(st->c, OP_SHRINK, u->dtype, src, 3, NULL);
}

bool sched_make_program(SchedState *st, Schedule *s) {
    int nk = st->nmat;
    size_t nm = nk ? (size_t)nk : 1;
    int *gen = calloc(nm, sizeof *gen), *order = malloc(nm * sizeof *order);
    int *mat_buf = malloc(nm * sizeof *mat_buf), *in_buf = malloc(((size_t)st->ninputs + 1) * sizeof *in_buf);
    bool *is_output = calloc(nm, sizeof *is_output);
    s->kernels = calloc(nm, sizeof *s->kernels);
    s->bufs = calloc(nm + (size_t)st->ninputs, sizeof *s->bufs);
    s->outputs = calloc(st->sink->nsrc ? (size_t)st->sink->nsrc : 1, sizeof *s->outputs);
    s->output_held = calloc(st->sink->nsrc ? (size_t)st->sink->nsrc : 1, sizeof *s->output_held);
    bool ok = gen && order && mat_buf && in_buf && is_output && s->kernels && s->bufs && s->outputs && s->output_held;
    if (!ok) sched_fail(st, st->sink, "out of memory");
    /* generations: a kernel only reads stores made before it (toposort) */
    int ngen = 0;
    for (int i = 0; ok && i < nk; i++) {
        for (int r = 1; r < st->kernel_nrefs[i]; r++) {
            SchedRef ref = st->kernel_refs[i][r];
            if (!SCHED_REF_IS_INPUT(ref) && gen[ref] + 1 > gen[i]) gen[i] = gen[ref] + 1;
        }
        if (gen[i] + 1 > ngen) ngen = gen[i] + 1;
    }
    int ne = 0;
    for (int g = 0; ok && g < ngen; g++)
        for (int i = 0; i < nk; i++)
            if (gen[i] == g) order[ne++] = i;
    /* buffers: inputs by first use, then tmps, then outputs */
    for (int i = 0; ok && i < st->sink->nsrc; i++) is_output[st->mat_of[st->out_pos[i]]] = true;
    for (int k = 0; ok && k <= st->ninputs; k++) in_buf[k] = -1;
    int nin = 0, ntmp = 0, nout = 0;
    for (int e = 0; ok && e < ne; e++) {
        int i = order[e];
        for (int r = 1; r < st->kernel_nrefs[i]; r++) {
            SchedRef ref = st->kernel_refs[i][r];
            if (!SCHED_REF_IS_INPUT(ref) || in_buf[SCHED_REF_INPUT(ref)] >= 0) continue;
            const UOp *b = st->inputs[SCHED_REF_INPUT(ref)];
            in_buf[SCHED_REF_INPUT(ref)] = s->nbufs;
            add_buffer(s, SBUF_INPUT, nin++, b->dtype, b->arg->v.i, b);
        }
    }
    for (int e = 0; ok && e < ne; e++) {
        int i = order[e];
        if (is_output[i]) continue;
        mat_buf[i] = s->nbufs;
        add_buffer(s, SBUF_TMP, ntmp++, st->mat[i]->dtype, shape_numel(&st->stored[i]), st->held[i]);
    }
    for (int i = 0; ok && i < st->sink->nsrc; i++) {
        int m = st->mat_of[st->out_pos[i]];
        bool seen = false;
        for (int j = 0; j < i; j++) seen |= st->out_pos[j] == st->out_pos[i];
        if (!seen) {
            mat_buf[m] = s->nbufs;
            add_buffer(s, SBUF_OUTPUT, nout++, st->mat[m]->dtype, shape_numel(&st->stored[m]), st->held[m]);
        }
        if (!(s->output_held[s->noutputs] = held_in_input(st, i, m))) {
            ok = sched_fail(st, st->mat[m], "out of memory");
            break;
        }
        s->outputs[s->noutputs++] = mat_buf[m];
    }
    /* kernels in execution order, their buffers, and the alloc/free plan */
    for (int e = 0; ok && e < ne; e++) {
        int i = order[e];
        SchedKernel *k = &s->kernels[s->nkernels++];
        snprintf(k->name, sizeof k->name, "%s", st->kernel_name[i]);
        k->ast = st->kernel_ast[i];
        k->generation = gen[i];
        k->nbufs = st->kernel_nrefs[i];
        k->bufs = malloc((size_t)k->nbufs * sizeof *k->bufs);
        if (!k->bufs) { ok = sched_fail(st, st->mat[i], "out of memory"); break; }
        for (int r = 0; r < k->nbufs; r++) {
            SchedRef ref = st->kernel_refs[i][r];
            int b = SCHED_REF_IS_INPUT(ref) ? in_buf[SCHED_REF_INPUT(ref)] : mat_buf[ref];
            k->bufs[r] = b;
            if (s->bufs[b].first_kernel < 0) s->bufs[b].first_kernel = e;
            s->bufs[b].last_kernel = e;
        }
        SCHED_NOTE(st, "kahn_generation", k->ast, k->ast);
    }
    s->ngenerations = ngen;
    free(gen);
    free(order);
    free(mat_buf);
    free(in_buf);
    free(is_output);
    return ok;
}

void schedule_format(StrBuf *sb, const Schedule *s, const char *const *opt_names) {
    for (int b = 0; b < s->nbufs; b++) {
        const SchedBuffer *x = &s->bufs[b];
        StrBuf dt;
        sb_init(&dt);
        dt_format(&dt, x->dtype);
        sb_printf(sb, "%s%s %s[%lld]", b ? "  " : "", x->name, sb_str(&dt), (long long)x->size);
        sb_free(&dt);
    }
    sb_putc(sb, '\n');
    for (int e = 0; e < s->nkernels; e++) {
        const SchedKernel *k = &s->kernels[e];
        if (e == 0 || s->kernels[e - 1].generation != k->generation) sb_printf(sb, "generation %d\n", k->generation);
        for (int b = 0; b < s->nbufs; b++)
            if (s->bufs[b].kind == SBUF_TMP && s->bufs[b].first_kernel == e) sb_printf(sb, "  alloc %s\n", s->bufs[b].name);
        sb_printf(sb, "  %s(", k->name);
        for (int r = 0; r < k->nbufs; r++) sb_printf(sb, "%s%s", r ? ", " : "", s->bufs[k->bufs[r]].name);
        sb_putc(sb, ')');
        if (opt_names && opt_names[e] && strcmp(opt_names[e], k->name)) sb_printf(sb, "  # %s with its opts", opt_names[e]);
        sb_putc(sb, '\n');
        for (int b = 0; b < s->nbufs; b++)
            if (s->bufs[b].kind == SBUF_TMP && s->bufs[b].last_kernel == e) sb_printf(sb, "  free %s\n", s->bufs[b].name);
    }
}
