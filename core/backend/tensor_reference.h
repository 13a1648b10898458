/* tensor_reference.h - computes a tensor graph from tensor semantics alone:
 * the independent reference that JIT results are validated against.  It
 * knows nothing of the scheduler or the codegen stages (see
 * tensor_reference.c for how it evaluates: strided views, blocks of
 * elements, sequential reductions). */
#ifndef UOPDB_TENSOR_REFERENCE_H
#define UOPDB_TENSOR_REFERENCE_H
#include <stdbool.h>
#include <stddef.h>
#include "../ir/uop.h"
#include "../sched/shape.h"

/* A dense, row-major result.  Floats are held as doubles rounded to their
 * dtype's precision, ints and bools as int64 wrapped to their dtype. */
typedef struct RefTensor {
    const DType *dtype;
    Shape shape;
    double *f;        /* float dtypes */
    int64_t *i;       /* int and bool dtypes */
} RefTensor;

/* Returns the elements of a BUFFER node, laid out in its dtype (float32 as
 * float, int32 as int32_t, bool as one byte ...), or NULL if unknown. */
typedef const void *(*RefBufferFn)(void *ud, const UOp *buffer);

/* Evaluates root.  False with a message naming the node on error (an op
 * the reference does not know, an unknown buffer, a bad shape). */
bool ref_eval(const UOp *root, RefBufferFn buffers, void *ud, RefTensor *out, char *err, size_t errlen);
void ref_tensor_free(RefTensor *t);
/* element k as a double (ints converted) */
double ref_value(const RefTensor *t, size_t k);

#endif
