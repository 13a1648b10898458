/* kernel_check.h - one kernel of a program run on real data at any point of
 * its pipeline and compared with the reference.  A check session does the
 * expensive part once: the program's inputs bound, the buffers kernels
 * before this one write filled with their reference (so the kernel is
 * judged on its own, whatever the kernels before it compute), the
 * reference of its output computed; then each root checked costs one run
 * of the kernel.  The scheduler's scalar forms (REDUCE and all) run in the
 * kernel-AST interpreter; later forms are linearized
 * (core/stages/linearize_point.h) and run in the linear interpreter; on the
 * cpu target a point that loops long enough is linearized and compiled
 * instead (CheckExecutor chooses otherwise); every access is bounds-checked
 * either way.  A form none can run is an error saying so. */
#ifndef UOPDB_KERNEL_CHECK_H
#define UOPDB_KERNEL_CHECK_H
#include "program_run.h"

typedef struct KernelCheck KernelCheck;

/* What runs a point. */
typedef enum CheckExecutor {
    CHECK_AUTO,        /* compiled when that is faster (on the cpu target, a run of 1M node evaluations or more
                        * for the kernel-AST interpreter, 4M for the linear one), else interpreted */
    CHECK_INTERPRETED, /* the kernel-AST interpreter for scalar forms, the linear interpreter for the rest */
    CHECK_COMPILED,    /* compiled with bounds checks; an error when the point cannot be */
} CheckExecutor;
/* The names k:check and k:bisect take and report: "auto", "interpreter",
 * "compiled"; check_executor_from_name is false for any other. */
const char *check_executor_name(CheckExecutor how);
bool check_executor_from_name(const char *name, CheckExecutor *how);

/* NULL + err when the inputs cannot be made (a missing input, a reference
 * that cannot be computed, out of memory). */
KernelCheck *kcheck_new(const Schedule *s, KernelPipeline *const *kps, int ki, RefBufferFn inputs, void *ud,
                        double atol, double rtol, char *err, size_t errlen);
void kcheck_free(KernelCheck *kc);
/* CHECK_AUTO until set */
void kcheck_set_executor(KernelCheck *kc, CheckExecutor how);

/* Runs root (a point of kernel ki) on the session's data, its output
 * buffer zeroed first, and compares it with the reference.  False with err
 * when the root cannot be run (the report is then not filled). */
bool kcheck_root(KernelCheck *kc, const UOp *root, ValidateReport *rep, StrBuf *sb, char *err, size_t errlen);

/* After a kcheck_root or kcheck_point that returned false: the access
 * outside a buffer that stopped the run ("INDEX %41 reads buffer 1 at 12,
 * past its 9 elements (r0=1)"), or NULL when it failed for another reason.
 * A kernel that reads or writes outside its buffers computes something
 * wrong, so a check can count it as wrong instead of as not checkable. */
const char *kcheck_bad_access(const KernelCheck *kc);
/* What ran the last root checked: CHECK_COMPILED (with bounds checks) or
 * CHECK_INTERPRETED (the kernel-AST interpreter, the linear one or the GPU
 * emulator), CHECK_AUTO before any; *work (may be NULL) its estimated node
 * evaluations, each node once per iteration of the loops its value depends
 * on, which decide between them under CHECK_AUTO. */
CheckExecutor kcheck_ran_by(const KernelCheck *kc, double *work);

/* Runs the kernel as the program runs it (compiled through the JIT; the
 * gpu target: in the emulator) on the session's data and compares its
 * output with the reference.  False with err when it cannot run. */
bool kcheck_compiled(KernelCheck *kc, ValidateReport *rep, StrBuf *sb, char *err, size_t errlen);

/* kcheck_root at rewrite point (n, r): right after rewrite r of stage n */
bool kcheck_rewrite_point(KernelCheck *kc, int n, size_t r, ValidateReport *rep, StrBuf *sb, char *err,
                          size_t errlen);

/* kcheck_root at point n (0..22) of kernel ki's pipeline */
bool kcheck_point(KernelCheck *kc, int n, ValidateReport *rep, StrBuf *sb, char *err, size_t errlen);

#endif
