/* spec_verify.h - the spec verifier: checks that a graph is in the form a
 * point of the pipeline must have, after tinygrad v0.12.0's uop/spec.py
 * (shared_spec, kernel_spec, program_spec, the codegen part of full_spec),
 * written as one table row per op form, plus uopdb's structural checks
 * (every RANGE closed by an END or REDUCE, a linear program in order with
 * each RANGE used only inside its loop, IF closed by ENDIF).
 *
 * Which spec a point gets (spec_for_point): point 0, the kernel as
 * scheduled, the kernel spec (tinygrad checks it on entry to codegen);
 * points 1..15 the codegen spec (the forms the stages leave between:
 * expander vectors, UNROLL/CONTRACT, vectors of pointers, LOADs, gated
 * INDEX); points 16..20 the codegen spec with no `index` dtype and no
 * Invalid left (stage 15 lowers them, but may leave a CAST to index under
 * another CAST, which stage 16 folds, as in v0.12.0); points 21..22, the
 * LINEAR program, the program spec on each instruction (tinygrad checks it
 * after linearize). */
#ifndef UOPDB_SPEC_VERIFY_H
#define UOPDB_SPEC_VERIFY_H
#include <stdbool.h>
#include <stddef.h>
#include "../ir/uop.h"

typedef enum SpecKind {
    SPEC_KERNEL,   /* kernel_spec: the kernel AST as the scheduler makes it */
    SPEC_CODEGEN,  /* between the stages: kernel_spec + program_spec forms + full_spec's codegen forms */
    SPEC_LOWERED,  /* SPEC_CODEGEN with every index dtype lowered (no index, no Invalid) */
    SPEC_PROGRAM,  /* program_spec: a LINEAR node's instructions, in order */
    SPEC_COUNT
} SpecKind;

const char *spec_kind_name(SpecKind k);              /* "kernel", "codegen", "lowered", "program" */
bool spec_kind_from_name(const char *s, SpecKind *out);
/* The spec point n (0..22) of the pipeline must satisfy. */
SpecKind spec_for_point(int n);

typedef struct VerifyError {
    const char *rule;      /* the rule broken: "LOAD source", "RANGE closed by END", ... */
    const UOp *node;       /* the node that breaks it */
    char msg[512];         /* one line: "<rule>: <why> at %12 = LOAD float32 (%11)" */
} VerifyError;

/* Checks every node reachable from root (for SPEC_PROGRAM, root is the
 * LINEAR node and its sources are checked as the instruction list).
 * Returns true when all conform; otherwise false with err filled (err may
 * be NULL).  nodes, when not NULL, gets the number of nodes checked.
 * Iterative: any depth of graph is fine. */
bool uop_verify(const UOp *root, SpecKind kind, VerifyError *err, size_t *nodes);

/* Whether stages verify their output (stage_run): the UOPDB_VERIFY
 * environment variable set to anything but "" or "0", read once, or
 * spec_verify_set_enabled. */
bool spec_verify_enabled(void);
void spec_verify_set_enabled(bool on);

#endif
