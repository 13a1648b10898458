/* program_run.c - runs a scheduled program through the JIT and validates
 * its outputs against the naive tensor reference (see program_run.h). */
#include "program_run.h"
#include "../backend/linear_interp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../backend/ast_interp.h"
#include "../backend/backend.h"
#include "../backend/scalar_eval.h"
#include "../util/interrupt.h"

/* Points data[b] of every input buffer at its host data. */
bool program_bind_inputs(const Schedule *s, void **data, RefBufferFn inputs, void *ud, char *err, size_t errlen) {
    for (int b = 0; b < s->nbufs; b++) {
        const SchedBuffer *sb = &s->bufs[b];
        if (sb->kind != SBUF_INPUT) continue;
        data[b] = (void *)inputs(ud, sb->source);
        if (!data[b]) {
            snprintf(err, errlen, "%s (BUFFER %%%u) has no data", sb->name, sb->source->id);
            return false;
        }
    }
    return true;
}

/* Allocates data[b] (owned) for buffer b. */
bool program_alloc_buffer(const Schedule *s, int b, void **data, bool *owned, char *err, size_t errlen) {
    const SchedBuffer *sb = &s->bufs[b];
    if (!(data[b] = buffer_alloc(sb->dtype, sb->size))) {
        int64_t bytes = buffer_bytes(sb->dtype, sb->size);
        if (bytes < 0 || bytes > BUFFER_HOST_LIMIT_BYTES)
            snprintf(err, errlen, "cannot allocate %s (%lld elements): more than the host buffer limit (%s)", sb->name,
                     (long long)sb->size, BUFFER_HOST_LIMIT_TEXT);
        else snprintf(err, errlen, "cannot allocate %s (%lld elements)", sb->name, (long long)sb->size);
        return false;
    }
    owned[b] = true;
    return true;
}

void program_access_message(const Schedule *s, int i, const AccessFault *f, char *out, size_t outlen) {
    const SchedKernel *k = &s->kernels[i];
    const char *bname = NULL;
    if (f->buffer_op == OP_DEFINE_GLOBAL && f->buffer >= 0 && f->buffer < k->nbufs) bname = s->bufs[k->bufs[f->buffer]].name;
    access_fault_message(f, bname, out, outlen);
}

bool program_run_compiled(const Schedule *s, int i, Kernel *kern, void **data, AccessFault *rep, char *err,
                          size_t errlen) {
    const SchedKernel *k = &s->kernels[i];
    char msg[1024];
    memset(rep, 0, sizeof *rep);
    if (kernel_num_vars(kern) > 0) {
        snprintf(err, errlen, "variables are not supported by the program runner");
        return false;
    }
    int nb = kernel_num_buffers(kern);
    void **args = calloc((size_t)nb + 1, sizeof *args);
    if (!args) {
        snprintf(err, errlen, "out of memory");
        return false;
    }
    bool ok = true;
    for (int a = 0; a < nb && ok; a++) {
        int64_t g = kernel_buffer_arg(kern, a);
        if (g < 0 || g >= k->nbufs) {
            snprintf(err, errlen, "DEFINE_GLOBAL %lld is not one of its %d buffers", (long long)g, k->nbufs);
            ok = false;
        } else {
            args[a] = data[k->bufs[g]];
        }
    }
    if (ok && !(ok = kernel_run_checked(kern, args, NULL, rep, msg, sizeof msg))) {
        if (rep->failed) program_access_message(s, i, rep, msg, sizeof msg);
        snprintf(err, errlen, "%s", msg);
    }
    free(args);
    return ok;
}

/* Runs kernel i through the JIT (all its core_ids) on data, indexed by
 * program buffer; checked: the kernel compiled with bounds checks. */
static bool jit_kernel(const Schedule *s, KernelPipeline *const *kps, int i, void **data, bool checked, char *err,
                       size_t errlen) {
    const SchedKernel *k = &s->kernels[i];
    char msg[1024];
    /* a kernel the user changed (inserted rules) or brought (a kernel AST)
     * may index out of its buffers: it always runs with bounds checks, so
     * no kernel a user can build takes the process down */
    checked = checked || pipeline_inserted_count(kps[i]) > 0 || uop_op(s->bufs[k->bufs[0]].source) == OP_DEFINE_GLOBAL;
    Kernel *kern = checked ? pipeline_kernel_checked(kps[i], msg, sizeof msg) : pipeline_kernel(kps[i], msg, sizeof msg);
    if (!kern) {
        snprintf(err, errlen, "kernel %d (%s): %s", i + 1, k->name, msg);
        return false;
    }
    AccessFault rep;
    if (program_run_compiled(s, i, kern, data, &rep, msg, sizeof msg)) return true;
    snprintf(err, errlen, "kernel %d (%s): %s", i + 1, k->name, msg);
    return false;
}

bool program_run_interpreted(const Schedule *s, int i, ProgramInterpFn run, const UOp *root, void **data,
                             AccessFault *fault, char *err, size_t errlen) {
    const SchedKernel *k = &s->kernels[i];
    void **args = calloc((size_t)k->nbufs + 1, sizeof *args);
    int64_t *sizes = calloc((size_t)k->nbufs + 1, sizeof *sizes);
    bool ok = args && sizes;
    memset(fault, 0, sizeof *fault);
    for (int g = 0; ok && g < k->nbufs; g++) {
        args[g] = data[k->bufs[g]];
        sizes[g] = s->bufs[k->bufs[g]].size;
    }
    if (!ok) snprintf(err, errlen, "out of memory");
    else if (!(ok = run(root, args, sizes, k->nbufs, fault, err, errlen)) && fault->failed)
        program_access_message(s, i, fault, err, errlen);
    free(args);
    free(sizes);
    return ok;
}

/* Runs kernel i of the gpu target in the emulator (the linear interpreter
 * with workgroups, work items and barriers; every access checked). */
static bool emulate_kernel(const Schedule *s, KernelPipeline *const *kps, int i, void **data, char *err, size_t errlen) {
    const SchedKernel *k = &s->kernels[i];
    char msg[1024];
    const UOp *lin = pipeline_root(kps[i], STAGE_COUNT, msg, sizeof msg);
    AccessFault fault;
    if (lin && program_run_interpreted(s, i, linear_interp_run_fault, lin, data, &fault, msg, sizeof msg)) return true;
    snprintf(err, errlen, "kernel %d (%s): %s", i + 1, k->name, msg);
    return false;
}

/* a kernel runs through the JIT, or in the emulator for the gpu target */
static bool run_kernel(const Schedule *s, KernelPipeline *const *kps, int i, void **data, bool checked, char *err,
                       size_t errlen) {
    if (pipeline_options(kps[i]).target == TARGET_GPU) return emulate_kernel(s, kps, i, data, err, errlen);
    return jit_kernel(s, kps, i, data, checked, err, errlen);
}

bool program_jit_kernel(const Schedule *s, KernelPipeline *const *kps, int i, void **data, char *err, size_t errlen) {
    return run_kernel(s, kps, i, data, false, err, errlen);
}

bool program_run(const Schedule *s, KernelPipeline *const *kps, RefBufferFn inputs, void *ud, void *const *outputs,
                 char *err, size_t errlen) {
    return program_run_opts(s, kps, inputs, ud, outputs, NULL, err, errlen);
}

bool program_run_opts(const Schedule *s, KernelPipeline *const *kps, RefBufferFn inputs, void *ud,
                      void *const *outputs, const ProgramRunOpts *opts, char *err, size_t errlen) {
    bool checked = opts && opts->checked;
    void **data = calloc((size_t)s->nbufs + 1, sizeof *data);
    bool *owned = calloc((size_t)s->nbufs + 1, sizeof *owned);
    bool ok = false;
    if (!data || !owned) {
        snprintf(err, errlen, "out of memory");
        goto done;
    }
    if (!program_bind_inputs(s, data, inputs, ud, err, errlen)) goto done;
    /* an output listed twice is computed into its first storage and copied to the others after */
    for (int j = s->noutputs - 1; j >= 0; j--) data[s->outputs[j]] = outputs[j];
    for (int i = 0; i < s->nkernels; i++) {
        if (uopdb_interrupted()) {
            snprintf(err, errlen, "interrupted before kernel %d (%s)", i + 1, s->kernels[i].name);
            goto done;
        }
        /* allocate the tmp buffers this kernel is the first to use */
        for (int b = 0; b < s->nbufs; b++)
            if (s->bufs[b].kind == SBUF_TMP && s->bufs[b].first_kernel == i && !data[b] &&
                !program_alloc_buffer(s, b, data, owned, err, errlen))
                goto done;
        if (uopdb_interrupted()) {
            snprintf(err, errlen, "interrupted before kernel %d (%s)", i + 1, s->kernels[i].name);
            goto done;
        }
        if (!run_kernel(s, kps, i, data, checked, err, errlen)) goto done;
        /* free the tmp buffers whose last use this was */
        for (int b = 0; b < s->nbufs; b++) {
            if (owned[b] && s->bufs[b].last_kernel == i) {
                buffer_free(data[b]);
                data[b] = NULL;
                owned[b] = false;
            }
        }
    }
    for (int j = 0; j < s->noutputs; j++) {
        const SchedBuffer *sb = &s->bufs[s->outputs[j]];
        if (data[s->outputs[j]] != outputs[j])
            memcpy(outputs[j], data[s->outputs[j]], (size_t)sb->size * (size_t)dt_itemsize(sb->dtype));
    }
    ok = true;
done:
    if (data && owned)
        for (int b = 0; b < s->nbufs; b++)
            if (owned[b]) buffer_free(data[b]);
    free(data);
    free(owned);
    return ok;
}

static void format_index(StrBuf *sb, const Shape *sh, size_t k) {
    int64_t idx[SHAPE_MAX_DIMS];
    for (int d = sh->ndim - 1; d >= 0; d--) {
        idx[d] = sh->d[d] ? (int64_t)(k % (size_t)sh->d[d]) : 0;
        k = sh->d[d] ? k / (size_t)sh->d[d] : 0;
    }
    sb_putc(sb, '[');
    for (int d = 0; d < sh->ndim; d++) sb_printf(sb, "%s%lld", d ? ", " : "", (long long)idx[d]);
    sb_putc(sb, ']');
}

/* The smallest relative tolerance a float dtype can be held to: four units
 * in the last place. Low-precision transcendentals (tinygrad's decompositions
 * computed in float16) land one or two ulps from the correctly rounded
 * reference, far beyond a float32-sized rtol. */
static double dtype_rtol_floor(const DType *dt) {
    switch (dt->sk) {
    case SK_FLOAT16: return 4 * 0x1p-10;
    case SK_BFLOAT16: return 4 * 0x1p-7;
    case SK_FP8E4M3: return 4 * 0x1p-3;
    case SK_FP8E5M2: return 4 * 0x1p-2;
    default: return 0;
    }
}

bool program_compare(const SchedBuffer *b, const void *data, const RefTensor *refp, double atol, double rtol,
                     ValidateReport *rep, StrBuf *sb, char *err, size_t errlen) {
    const RefTensor ref = *refp;
    rtol = fmax(rtol, dtype_rtol_floor(b->dtype));
    memset(rep, 0, sizeof *rep);
    rep->atol = atol;
    rep->rtol = rtol;
    size_t n = (size_t)shape_numel(&ref.shape);
    if ((int64_t)n != b->size) {
        snprintf(err, errlen, "%s: the reference has %zu elements, the program wrote %lld", b->name, n,
                 (long long)b->size);
        return false;
    }
    bool exact = !dt_is_float(b->dtype);
    const int show = 5;
    StrBuf bad;
    sb_init(&bad);
    for (size_t k = 0; k < n; k++) {
        double want = ref_value(&ref, k), got = buffer_read_double(b->dtype, data, k);
        double diff = fabs(got - want);
        bool same = exact ? got == want
                          : (isnan(want) ? isnan(got) : (isinf(want) ? got == want : diff <= atol + rtol * fabs(want)));
        if (!isnan(diff) && diff > rep->max_abs_diff) rep->max_abs_diff = diff;
        rep->checked++;
        if (!same) {
            if (rep->mismatches < (size_t)show) {
                sb_puts(&bad, "\n    at ");
                format_index(&bad, &ref.shape, k);
                sb_printf(&bad, ": got %.9g, want %.9g", got, want);
            }
            rep->mismatches++;
        }
    }
    rep->ok = rep->mismatches == 0;
    StrBuf shp;
    sb_init(&shp);
    shape_format(&shp, &ref.shape);
    if (rep->ok) {
        sb_printf(sb, "%s %s %s: %zu %s the reference", b->name, sk_name(b->dtype->sk), sb_str(&shp), rep->checked,
                  rep->checked == 1 ? "element matches" : "elements match");
        if (exact) sb_puts(sb, " exactly");
        else sb_printf(sb, " (max abs diff %.3g; tolerance %.3g + %.3g*|ref|)", rep->max_abs_diff, atol, rtol);
    } else {
        sb_printf(sb, "%s %s %s: %zu of %zu elements differ from the reference", b->name, sk_name(b->dtype->sk),
                  sb_str(&shp), rep->mismatches, rep->checked);
        if (!exact) sb_printf(sb, " (tolerance %.3g + %.3g*|ref|)", atol, rtol);
        sb_puts(sb, sb_str(&bad));
        if (rep->mismatches > (size_t)show) sb_printf(sb, "\n    ... and %zu more", rep->mismatches - show);
    }
    sb_free(&shp);
    sb_free(&bad);
    return true;
}

/* the reference of a buffer of a program made from a kernel AST: the kernel
 * as imported, run in the interpreter on copies of the inputs */
static bool kernel_reference(const Schedule *s, const SchedBuffer *want, RefBufferFn inputs, void *ud, RefTensor *out,
                             char *err, size_t errlen) {
    const SchedKernel *k = &s->kernels[0];
    void **bufs = calloc((size_t)k->nbufs + 1, sizeof *bufs);
    int64_t *sizes = calloc((size_t)k->nbufs + 1, sizeof *sizes);
    bool ok = bufs && sizes;
    if (!ok) snprintf(err, errlen, "out of memory");
    const void *result = NULL;
    for (int g = 0; ok && g < k->nbufs; g++) {
        const SchedBuffer *b = &s->bufs[k->bufs[g]];
        sizes[g] = b->size;
        if (!(bufs[g] = buffer_alloc(b->dtype, b->size))) {
            snprintf(err, errlen, "cannot allocate %s for the reference", b->name);
            ok = false;
            break;
        }
        if (b->kind == SBUF_INPUT) {
            const void *src = inputs(ud, b->source);
            if (!src) {
                snprintf(err, errlen, "%s (DEFINE_GLOBAL %%%u) has no data", b->name, b->source->id);
                ok = false;
                break;
            }
            memcpy(bufs[g], src, (size_t)buffer_bytes(b->dtype, b->size));
        }
        if (b == want) result = bufs[g];
    }
    char msg[1024];
    AccessFault fault;
    if (ok && !(ok = ast_interp_run_fault(k->ast, bufs, sizes, k->nbufs, &fault, msg, sizeof msg))) {
        if (fault.failed) program_access_message(s, 0, &fault, msg, sizeof msg);
        snprintf(err, errlen, "the reference (the kernel as imported, interpreted): %s", msg);
    }
    if (ok && result) {
        memset(out, 0, sizeof *out);
        out->dtype = want->dtype;
        out->shape.ndim = 1;
        out->shape.d[0] = want->size;
        bool fl = dt_is_float(want->dtype);
        size_t n = (size_t)want->size;
        if (fl) out->f = malloc((n ? n : 1) * sizeof *out->f);
        else out->i = malloc((n ? n : 1) * sizeof *out->i);
        if (!out->f && !out->i) {
            snprintf(err, errlen, "out of memory");
            ok = false;
        }
        for (size_t e = 0; ok && e < n; e++) {
            ScalarVal v = scalar_read(want->dtype, result, e);
            if (fl) out->f[e] = v.f;
            else out->i[e] = v.i;
        }
    }
    for (int g = 0; bufs && g < k->nbufs; g++) buffer_free(bufs[g]);
    free(bufs);
    free(sizes);
    return ok && result;
}

bool program_reference(const Schedule *s, const SchedBuffer *b, RefBufferFn inputs, void *ud, RefTensor *out,
                       char *err, size_t errlen) {
    if (uop_op(b->source) == OP_DEFINE_GLOBAL) return kernel_reference(s, b, inputs, ud, out, err, errlen);
    return ref_eval(b->source, inputs, ud, out, err, errlen);
}

/* compares buffer b's data with its reference */
static bool validate_buffer(const Schedule *s, const SchedBuffer *b, const void *data, RefBufferFn inputs, void *ud,
                            double atol, double rtol, ValidateReport *rep, StrBuf *sb, char *err, size_t errlen) {
    RefTensor ref;
    if (!program_reference(s, b, inputs, ud, &ref, err, errlen)) return false;
    bool ok = program_compare(b, data, &ref, atol, rtol, rep, sb, err, errlen);
    ref_tensor_free(&ref);
    return ok;
}

bool program_validate(const Schedule *s, int j, const void *data, RefBufferFn inputs, void *ud, double atol,
                      double rtol, ValidateReport *rep, StrBuf *sb, char *err, size_t errlen) {
    return validate_buffer(s, &s->bufs[s->outputs[j]], data, inputs, ud, atol, rtol, rep, sb, err, errlen);
}
