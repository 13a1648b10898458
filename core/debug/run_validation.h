/* run_validation.h - validating a run of a program: each output compared
 * with its reference, and, when one differs in a program of several
 * kernels, the first kernel that is wrong on its own named, so a wrong
 * result leads to the kernel to bisect. */
#ifndef UOPDB_RUN_VALIDATION_H
#define UOPDB_RUN_VALIDATION_H
#include "kernel_check.h"

typedef struct RunValidation {
    bool ok;             /* every output matches its reference */
    size_t mismatches;   /* differing elements over all outputs */
    int first_wrong;     /* the first kernel wrong on its own (0-based); -1: none found, or not looked for */
} RunValidation;

/* Compares output j of a run (outputs[j], as program_run wrote it) with its
 * reference for every j, a "validate: " report each in sb.  When one
 * differs and the program has several kernels, each kernel in turn is run
 * compiled, as the run ran it, on the reference of its inputs: the first
 * whose output differs from its own reference is named, with its
 * comparison (or its run's error), else sb says that each kernel is right
 * on its own.  False with err when a reference cannot be computed. */
bool program_validate_run(const Schedule *s, KernelPipeline *const *kps, void *const *outputs, RefBufferFn inputs,
                          void *ud, double atol, double rtol, RunValidation *out, StrBuf *sb, char *err,
                          size_t errlen);

#endif
