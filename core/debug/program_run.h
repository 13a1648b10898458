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

/* Runs kernel ki of s at point n (0..22) of its pipeline on real data and
 * compares what it writes with the reference of the tensor node its output
 * buffer holds.  The kernels before it run through the JIT to make its
 * inputs.  Points 0..20 run in the kernel-AST interpreter (which knows the
 * scheduler's ops: RANGE, REDUCE, INDEX, STORE, END, ALU; a point it cannot
 * run, e.g. with vector ops after an UPCAST, is an error saying so); points
 * 21 and 22 are compiled and run through the JIT.  The report goes to sb
 * as program_validate writes it. */
bool program_check_kernel(const Schedule *s, KernelPipeline *const *kps, int ki, int n, RefBufferFn inputs, void *ud,
                          double atol, double rtol, ValidateReport *rep, StrBuf *sb, char *err, size_t errlen);

#endif
