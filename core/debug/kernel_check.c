/* kernel_check.c - check sessions: a kernel's inputs and reference made
 * once, any number of its points run and compared (see kernel_check.h). */
#include "kernel_check.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../backend/ast_interp.h"
#include "../backend/backend.h"
#include "../backend/linear_interp.h"
#include "../backend/scalar_eval.h"
#include "../stages/linearize_point.h"
#include "../sym/bounds.h"
#include "../util/u64map.h"

struct KernelCheck {
    const Schedule *s;
    KernelPipeline *const *kps;
    int ki;
    double atol, rtol;
    void **data;    /* by program buffer */
    bool *owned;
    RefTensor ref;  /* of the kernel's output buffer */
    bool have_ref;
    char access[1024]; /* the access outside a buffer that stopped the last run, "" if none */
    CheckExecutor ran_by; /* what ran the last root (CHECK_AUTO before any) */
    double work;          /* that root's work, estimated (root_work) */
    CheckExecutor how;
};

static const char *const executor_names[] = {[CHECK_AUTO] = "auto", [CHECK_INTERPRETED] = "interpreter",
                                             [CHECK_COMPILED] = "compiled"};

const char *check_executor_name(CheckExecutor how) { return executor_names[how]; }

bool check_executor_from_name(const char *name, CheckExecutor *how) {
    for (int e = CHECK_AUTO; e <= CHECK_COMPILED; e++)
        if (name && !strcmp(name, executor_names[e])) return *how = (CheckExecutor)e, true;
    return false;
}

void kcheck_set_executor(KernelCheck *kc, CheckExecutor how) { kc->how = how; }

void kcheck_free(KernelCheck *kc) {
    if (!kc) return;
    if (kc->data && kc->owned)
        for (int b = 0; b < kc->s->nbufs; b++)
            if (kc->owned[b]) buffer_free(kc->data[b]);
    free(kc->data);
    free(kc->owned);
    if (kc->have_ref) ref_tensor_free(&kc->ref);
    free(kc);
}

/* Writes buffer b's reference into data: what the kernel that writes b
 * should have written there. */
static bool fill_from_reference(const Schedule *s, int b, void *data, RefBufferFn inputs, void *ud, char *err,
                                size_t errlen) {
    const SchedBuffer *sb = &s->bufs[b];
    RefTensor ref;
    if (!program_reference(s, sb, inputs, ud, &ref, err, errlen)) return false;
    int64_t n = shape_numel(&ref.shape);
    bool ok = n == sb->size;
    if (!ok)
        snprintf(err, errlen, "%s: its reference has %lld elements, the buffer %lld", sb->name, (long long)n,
                 (long long)sb->size);
    for (int64_t e = 0; ok && e < n; e++) {
        ScalarVal v = ref.f ? (ScalarVal){.f = ref.f[e]} : (ScalarVal){.i = ref.i[e]};
        ok = scalar_write(sb->dtype, data, (size_t)e, v);
        if (!ok) {
            char dt[32];
            snprintf(err, errlen, "%s: cannot write its reference as %s", sb->name, dt_str(sb->dtype, dt, sizeof dt));
        }
    }
    ref_tensor_free(&ref);
    return ok;
}

KernelCheck *kcheck_new(const Schedule *s, KernelPipeline *const *kps, int ki, RefBufferFn inputs, void *ud,
                        double atol, double rtol, char *err, size_t errlen) {
    if (ki < 0 || ki >= s->nkernels) {
        snprintf(err, errlen, "no kernel %d", ki + 1);
        return NULL;
    }
    KernelCheck *kc = calloc(1, sizeof *kc);
    if (!kc) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    *kc = (KernelCheck){.s = s, .kps = kps, .ki = ki, .atol = atol, .rtol = rtol};
    kc->data = calloc((size_t)s->nbufs + 1, sizeof *kc->data);
    kc->owned = calloc((size_t)s->nbufs + 1, sizeof *kc->owned);
    if (!kc->data || !kc->owned) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    /* the program's inputs from their data; the buffers kernels before ki
     * write, from their reference */
    if (!program_bind_inputs(s, kc->data, inputs, ud, err, errlen)) goto fail;
    const SchedKernel *k = &s->kernels[ki];
    for (int g = 0; g < k->nbufs; g++) {
        int b = k->bufs[g];
        if (s->bufs[b].kind == SBUF_INPUT || kc->owned[b]) continue;
        if (!program_alloc_buffer(s, b, kc->data, kc->owned, err, errlen)) goto fail;
        if (g > 0 && !fill_from_reference(s, b, kc->data[b], inputs, ud, err, errlen)) goto fail;
    }
    const SchedBuffer *out = &s->bufs[k->bufs[0]];
    if (!program_reference(s, out, inputs, ud, &kc->ref, err, errlen)) goto fail;
    kc->have_ref = true;
    return kc;
fail:
    kcheck_free(kc);
    return NULL;
}

/* runs an interpreter on the kernel's buffers (the session's data) */
static bool run_on_buffers(KernelCheck *kc, ProgramInterpFn run, const UOp *root, char *msg, size_t msglen) {
    AccessFault fault;
    bool ok = program_run_interpreted(kc->s, kc->ki, run, root, kc->data, &fault, msg, msglen);
    if (!ok && fault.failed) snprintf(kc->access, sizeof kc->access, "%s", msg);
    return ok;
}

/* The work (node evaluations, estimated by root_work) from which a point
 * runs compiled rather than interpreted, by interpreter: compiling costs
 * 20-50 ms; the kernel-AST interpreter 17-42 ns an evaluation, the linear
 * one 7-18 (softmax 64x4096 and matmul 128, measured), so below these
 * they are faster. */
#define COMPILED_CHECK_WORK_AST (1 << 20)
#define COMPILED_CHECK_WORK_LINEAR (1 << 22)

/* A linear program compiled with bounds checks and run on the session's
 * buffers: 1 ran, 0 failed (msg says why; kc->access when an access fell
 * outside a buffer), -1 not compiled (a form the renderer does not take,
 * such as a vector of different buffers' pointers, or variables): the
 * caller interprets it instead. */
static int run_compiled(KernelCheck *kc, const UOp *lin, char *msg, size_t msglen) {
    const SchedKernel *k = &kc->s->kernels[kc->ki];
    KernelCompileOpts opts = {.checked = true};
    Kernel *kern = kernel_compile_opts(k->name, lin->src, lin->nsrc, &opts, msg, msglen);
    if (kern && kernel_num_vars(kern) > 0) { /* the runner binds no variables */
        kernel_free(kern);
        kern = NULL;
        snprintf(msg, msglen, "it has variables, which a check does not bind");
    }
    if (!kern) return -1;
    AccessFault rep;
    bool ran = program_run_compiled(kc->s, kc->ki, kern, kc->data, &rep, msg, msglen);
    kernel_free(kern);
    if (!ran && rep.failed) snprintf(kc->access, sizeof kc->access, "%s", msg);
    return ran;
}

/* a root as a linear program (core/stages/linearize_point.h); NULL with
 * msg when a stage fails */
static const UOp *linearize(KernelCheck *kc, const UOp *root, char *msg, size_t msglen) {
    KernelPipeline *kp = kc->kps[kc->ki];
    StageCtx sc = {.c = pipeline_ctx(kp), .err = msg, .errlen = msglen, .target = pipeline_options(kp).target};
    const KernelOpt *opts;
    sc.nopts = pipeline_opts(kp, &opts);
    sc.opts = opts;
    return stages_linearize_point(&sc, root);
}

/* What a root is like, for choosing what runs it. */
typedef struct RootShape {
    bool scalar;   /* the scheduler's scalar forms (REDUCE, value INDEX): the kernel-AST interpreter's */
    double work;   /* node evaluations a run makes: each node once per iteration of the loops it depends on */
} RootShape;

/* a loop's trip count, at most: a RANGE's end, a SPECIAL's size */
static double trips(const UOp *u) {
    int64_t lo, hi;
    return u->nsrc && uop_bounds(u->src[0], &lo, &hi) && hi > 1 ? (double)hi : 1;
}

/* The work of a root: each node costs its lanes times the product of the
 * trip counts of the loops (RANGEs, and the SPECIALs that number threads or
 * work groups) its value depends on, as the interpreters evaluate it (the
 * kernel-AST one again only when such a loop moves, the linear one where
 * the linearizer put it, inside those loops); a REDUCE or END closes its
 * ranges for its users.  With more than 64 loops, every node costs every
 * loop. */
static double root_work(const UOp *const *topo, size_t n) {
    enum { MAX_LOOPS = 64 };
    const UOp *loop[MAX_LOOPS];
    int nloops = 0;
    double all = 1;
    for (size_t i = 0; i < n; i++)
        if (uop_op(topo[i]) == OP_RANGE || uop_op(topo[i]) == OP_SPECIAL) {
            all *= trips(topo[i]);
            if (nloops < MAX_LOOPS) loop[nloops] = topo[i];
            nloops++;
        }
    uint64_t *mask = nloops <= MAX_LOOPS ? calloc(n + 1, sizeof *mask) : NULL;
    U64Map at = {0};   /* node id -> position + 1 */
    bool ok = mask != NULL;
    for (size_t i = 0; ok && i < n; i++) ok = u64map_put(&at, topo[i]->id, (const void *)(uintptr_t)(i + 1));
    double work = 0;
    for (size_t i = 0; ok && i < n; i++) {
        const UOp *u = topo[i];
        uint64_t m = 0;
        for (int j = 0; j < u->nsrc; j++) m |= mask[(uintptr_t)u64map_get(&at, u->src[j]->id) - 1];
        for (int l = 0; l < nloops; l++)
            if (loop[l] == u) m |= 1ull << l;
        double cost = dt_vcount(u->dtype) > 1 ? dt_vcount(u->dtype) : 1;   /* the interpreters go lane by lane */
        /* the program itself (a SINK, or a LINEAR listing every instruction) runs once */
        for (int l = 0; l < nloops && uop_op(u) != OP_SINK && uop_op(u) != OP_LINEAR; l++)
            if (m >> l & 1) cost *= trips(loop[l]);
        work += cost;
        if (uop_op(u) == OP_REDUCE || uop_op(u) == OP_END)
            for (int j = 1; j < u->nsrc; j++) m &= ~mask[(uintptr_t)u64map_get(&at, u->src[j]->id) - 1];
        mask[i] = m;
    }
    free(mask);
    u64map_free(&at);
    return ok ? work : (double)n * all;
}

static bool root_shape(const UOp *root, RootShape *sh) {
    size_t n;
    const UOp **topo = uop_toposort(root, &n);
    if (!topo) return false;
    bool later = uop_op(root) == OP_LINEAR;
    for (size_t i = 0; i < n; i++) {
        const UOp *u = topo[i];
        switch (uop_op(u)) {
        case OP_DEFINE_REG: case OP_DEFINE_LOCAL: case OP_AFTER: case OP_LOAD: case OP_SPECIAL: case OP_IF:
        case OP_ENDIF: case OP_BARRIER: case OP_GEP: case OP_VECTORIZE: case OP_VCONST: case OP_CAT:
        case OP_PTRCAT: case OP_MULACC: case OP_BITCAST: case OP_BUFFERIZE:
            later = true;
            break;
        default: later |= dt_vcount(u->dtype) > 1; break;
        }
    }
    sh->work = root_work(topo, n);
    free(topo);
    sh->scalar = !later;
    return true;
}

/* Runs root on the session's buffers, its output zeroed first.  The
 * kernel-AST interpreter runs the scheduler's scalar forms; a root with
 * vectors or the forms of stage 11 on (accumulators, AFTER, LOAD, SPECIAL)
 * is linearized (lowered through stages 10-11 first if it still has a
 * REDUCE) and run in the linear interpreter, as a LINEAR is.  Either is
 * compiled instead, with bounds checks, when the executor says so, or, by
 * default, on the cpu target when the run is long enough for compiling to
 * pay (a form the renderer does not take is then interpreted). */
static bool run_root(KernelCheck *kc, const UOp *root, char *msg, size_t msglen) {
    RootShape sh;
    if (!root_shape(root, &sh)) return snprintf(msg, msglen, "out of memory"), false;
    kc->work = sh.work;
    kc->ran_by = CHECK_COMPILED;
    bool cpu = pipeline_options(kc->kps[kc->ki]).target == TARGET_CPU;
    if (kc->how == CHECK_COMPILED && !cpu)
        return snprintf(msg, msglen, "the gpu target's points run in the GPU emulator, not compiled"), false;
    const UOp *lin = NULL;
    double pays = sh.scalar ? COMPILED_CHECK_WORK_AST : COMPILED_CHECK_WORK_LINEAR;
    if (kc->how == CHECK_COMPILED || (kc->how == CHECK_AUTO && cpu && sh.work >= pays)) {
        char why[900];
        int ran = -1;
        if ((lin = linearize(kc, root, why, sizeof why))) ran = run_compiled(kc, lin, why, sizeof why);
        if (ran >= 0 || kc->how == CHECK_COMPILED) {
            snprintf(msg, msglen, "%s%s", ran < 0 ? "cannot be compiled: " : "", why);
            return ran > 0;
        }
    }
    kc->ran_by = CHECK_INTERPRETED;
    if (sh.scalar) return run_on_buffers(kc, ast_interp_run_fault, root, msg, msglen);
    if (!lin && !(lin = linearize(kc, root, msg, msglen))) return false;
    return run_on_buffers(kc, linear_interp_run_fault, lin, msg, msglen);
}

/* zeroes the kernel's output: a kernel that forgets to write an element
 * must not pass on a previous run's value */
static void zero_output(KernelCheck *kc) {
    const SchedBuffer *out = &kc->s->bufs[kc->s->kernels[kc->ki].bufs[0]];
    memset(kc->data[kc->s->kernels[kc->ki].bufs[0]], 0, (size_t)out->size * (size_t)dt_itemsize(out->dtype));
}

/* label: where root is, for messages (" at stage 11") */
static bool check_root(KernelCheck *kc, const UOp *root, const char *label, ValidateReport *rep, StrBuf *sb, char *err,
                       size_t errlen) {
    const SchedKernel *k = &kc->s->kernels[kc->ki];
    const SchedBuffer *out = &kc->s->bufs[k->bufs[0]];
    zero_output(kc);
    char msg[1024];
    kc->access[0] = 0;
    bool ran = run_root(kc, root, msg, sizeof msg);
    if (!ran) {
        snprintf(err, errlen, "kernel %d (%s)%s: %s", kc->ki + 1, k->name, label, msg);
        return false;
    }
    return program_compare(out, kc->data[k->bufs[0]], &kc->ref, kc->atol, kc->rtol, rep, sb, err, errlen);
}

const char *kcheck_bad_access(const KernelCheck *kc) { return kc->access[0] ? kc->access : NULL; }
CheckExecutor kcheck_ran_by(const KernelCheck *kc, double *work) {
    if (work) *work = kc->work;
    return kc->ran_by;
}

bool kcheck_root(KernelCheck *kc, const UOp *root, ValidateReport *rep, StrBuf *sb, char *err, size_t errlen) {
    return check_root(kc, root, "", rep, sb, err, errlen);
}

bool kcheck_compiled(KernelCheck *kc, ValidateReport *rep, StrBuf *sb, char *err, size_t errlen) {
    const SchedKernel *k = &kc->s->kernels[kc->ki];
    const SchedBuffer *out = &kc->s->bufs[k->bufs[0]];
    zero_output(kc);
    return program_jit_kernel(kc->s, kc->kps, kc->ki, kc->data, err, errlen) &&
           program_compare(out, kc->data[k->bufs[0]], &kc->ref, kc->atol, kc->rtol, rep, sb, err, errlen);
}

bool kcheck_point(KernelCheck *kc, int n, ValidateReport *rep, StrBuf *sb, char *err, size_t errlen) {
    const UOp *root = pipeline_root(kc->kps[kc->ki], n, err, errlen);
    char label[32];
    snprintf(label, sizeof label, " at stage %d", n);
    return root && check_root(kc, root, label, rep, sb, err, errlen);
}

bool kcheck_rewrite_point(KernelCheck *kc, int n, size_t r, ValidateReport *rep, StrBuf *sb, char *err,
                          size_t errlen) {
    const UOp *root = pipeline_rewrite_point(kc->kps[kc->ki], n, r, err, errlen);
    char label[48];
    snprintf(label, sizeof label, " at rewrite %d.%zu", n, r);
    return root && check_root(kc, root, label, rep, sb, err, errlen);
}
