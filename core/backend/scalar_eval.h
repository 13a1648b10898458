/* scalar_eval.h - scalar value semantics shared by the two interpreters (the
 * tensor reference and the kernel-AST interpreter): a value is a double for
 * float dtypes (rounded to the dtype's precision) or an int64 for ints,
 * index and bool (wrapped to the dtype); buffer elements are read and
 * written in their dtype's layout; ALU ops follow the generated code
 * (IDIV truncates, MOD is the C remainder, ints wrap). */
#ifndef UOPDB_SCALAR_EVAL_H
#define UOPDB_SCALAR_EVAL_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "../ir/uop.h"

typedef struct ScalarVal {
    double f;   /* float dtypes */
    int64_t i;  /* ints, index and bool */
} ScalarVal;

ScalarVal scalar_from_float(const DType *dt, double f);
ScalarVal scalar_from_int(const DType *dt, int64_t i);
/* x of dtype from, as dtype to (a CAST) */
ScalarVal scalar_convert(const DType *to, const DType *from, ScalarVal x);
ScalarVal scalar_read(const DType *dt, const void *p, size_t k);
/* false for a dtype without a layout */
bool scalar_write(const DType *dt, void *p, size_t k, ScalarVal v);
/* Applies op (an ALU op other than WHERE; comparisons give bool) to nsrc
 * sources of dtype src_dt, giving dtype dt.  NULL on success, otherwise what
 * went wrong ("integer division by zero", "no float semantics"). */
const char *scalar_alu(Op op, const DType *dt, const DType *src_dt, int nsrc, const ScalarVal *s, ScalarVal *out);

#endif
