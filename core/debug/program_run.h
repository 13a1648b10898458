/* program_run.h - runs a scheduled program: compiles each kernel through its
 * pipeline (all 22 stages, then LLVM), allocates each tmp buffer before the
 * first kernel that uses it and frees it after the last, runs the kernels in
 * order, and checks outputs against the tensor reference. */
#ifndef UOPDB_PROGRAM_RUN_H
#define UOPDB_PROGRAM_RUN_H
#include <stdbool.h>
#include <stddef.h>
#include "../sched/schedule.h"
#include "pipeline.h"
#include "../util/strbuf.h"
#include "../backend/tensor_reference.h"

/* Runs s.  kps[i] is kernel i's pipeline; inputs gives the host data of
 * input BUFFER nodes; outputs[j] is caller storage for output j (bufs
 * s->outputs[j], dtype and size from s->bufs).  False with a message naming
 * the kernel or buffer on failure. */
bool program_run(const Schedule *s, KernelPipeline *const *kps, RefBufferFn inputs, void *ud, void *const *outputs,
                 char *err, size_t errlen);

typedef struct ProgramRunOpts {
    /* every kernel compiled with bounds checks (pipeline_kernel_checked): an
     * access outside its buffer stops the run with a message naming the
     * kernel, the INDEX, the buffer, the offset and the loop counters.
     * Kernels with inserted rules and kernels made from a kernel AST always
     * run checked. */
    bool checked;
} ProgramRunOpts;
/* program_run with options (NULL: none).  Either stops with "interrupted"
 * when the interrupt flag (core/util/interrupt.h) is set before or during a
 * kernel. */
bool program_run_opts(const Schedule *s, KernelPipeline *const *kps, RefBufferFn inputs, void *ud,
                      void *const *outputs, const ProgramRunOpts *opts, char *err, size_t errlen);

typedef struct ValidateReport {
    bool ok;
    size_t checked, mismatches;
    double max_abs_diff;
    double atol, rtol;      /* the tolerance used: |got-want| <= atol + rtol*|want| */
} ValidateReport;

/* Compares output j (data in dtype, as program_run wrote it) with ref_eval
 * of the tensor node it computes.  Appends a readable report to sb (one
 * line, plus the first differing elements with their indices). */
bool program_validate(const Schedule *s, int j, const void *data, RefBufferFn inputs, void *ud, double atol,
                      double rtol, ValidateReport *rep, StrBuf *sb, char *err, size_t errlen);

/* The reference of buffer b: the tensor reference of the tensor node it
 * holds, or, in a program made from a kernel AST (schedule_from_kernel),
 * the kernel as imported run in the interpreter. */
bool program_reference(const Schedule *s, const SchedBuffer *b, RefBufferFn inputs, void *ud, RefTensor *out,
                       char *err, size_t errlen);

/* Compares buffer b's data (in its dtype) with a reference already
 * computed; the report goes to sb as program_validate writes it. */
bool program_compare(const SchedBuffer *b, const void *data, const RefTensor *ref, double atol, double rtol,
                     ValidateReport *rep, StrBuf *sb, char *err, size_t errlen);

/* The pieces program_run is made of, for the kernel checks (data[] and
 * owned[] are indexed by program buffer): input buffers bound to their
 * host data, a buffer allocated, kernel i run through the JIT. */
bool program_bind_inputs(const Schedule *s, void **data, RefBufferFn inputs, void *ud, char *err, size_t errlen);
bool program_alloc_buffer(const Schedule *s, int b, void **data, bool *owned, char *err, size_t errlen);
bool program_jit_kernel(const Schedule *s, KernelPipeline *const *kps, int i, void **data, char *err, size_t errlen);
/* Runs kern, compiled from a point of kernel i, on data (all its core_ids).
 * False with err; when an access of a checked kernel fell outside its
 * buffer, rep->failed is set and err names the access and the program
 * buffer ("INDEX %41 reads buffer 1 (input0) at 12, past its 9 elements
 * (r0=1)"). */
bool program_run_compiled(const Schedule *s, int i, Kernel *kern, void **data, AccessFault *rep, char *err,
                          size_t errlen);
/* An interpreter (ast_interp_run_fault, linear_interp_run_fault) run on
 * root, a program of kernel i, over data (by program buffer).  False with
 * err; when an access fell outside a buffer, fault->failed is set and err
 * is program_access_message's words. */
typedef bool (*ProgramInterpFn)(const UOp *root, void **bufs, const int64_t *sizes, int nbufs, AccessFault *fault,
                                char *err, size_t errlen);
bool program_run_interpreted(const Schedule *s, int i, ProgramInterpFn run, const UOp *root, void **data,
                             AccessFault *fault, char *err, size_t errlen);
/* The words for a failed access of kernel i (access_fault.h), its
 * DEFINE_GLOBAL named by the program buffer it is ("buffer 1 (input0)"),
 * whichever executor ran it. */
void program_access_message(const Schedule *s, int i, const AccessFault *f, char *out, size_t outlen);

#endif
