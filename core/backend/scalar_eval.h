/* scalar_eval.h - scalar value semantics shared by the interpreters (the
 * tensor reference, the kernel-AST and the linear-program interpreters): a
 * value is a double for float dtypes (rounded to the dtype's precision) or an int64 for ints,
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
/* an integer (signed, or unsigned: a uint64 above 2^63) as dtype dt; to a
 * float it is rounded once, as LLVM's sitofp and uitofp round */
ScalarVal scalar_from_int(const DType *dt, int64_t i);
ScalarVal scalar_from_uint(const DType *dt, uint64_t u);
/* x of dtype from, as dtype to (a CAST) */
ScalarVal scalar_convert(const DType *to, const DType *from, ScalarVal x);
ScalarVal scalar_read(const DType *dt, const void *p, size_t k);
/* false for a dtype without a layout */
bool scalar_write(const DType *dt, void *p, size_t k, ScalarVal v);
/* Float MAX as tinygrad's LLVM backend computes it: MAX(a, b) is
 * (a < b).where(b, a) with an unordered "<" (true when either side is NaN),
 * so a NaN in b gives NaN, a NaN in a alone gives b, and MAX(-0.0, 0.0) is
 * a, -0.0.  This is a >= b ? a : b. */
static inline double scalar_max_float(double a, double b) { return a >= b ? a : b; }

/* Applies op (an ALU op other than WHERE; comparisons give bool) to nsrc
 * sources of dtype src_dt, giving dtype dt.  NULL on success, otherwise what
 * went wrong ("integer division by zero", "no float semantics"). */
const char *scalar_alu(Op op, const DType *dt, const DType *src_dt, int nsrc, const ScalarVal *s, ScalarVal *out);

/* The arithmetic the interpreters' inner loops spend their time in, with a
 * direct path that gives exactly what scalar_alu gives: ADD, SUB and MUL on
 * float32 (rounded after the op), float64, and index or int64 (wrapping).
 * scalar_fast_path says whether an op has one (SCALAR_FAST_NONE: use
 * scalar_alu); the interpreters ask once per node, before they run. */
typedef enum ScalarFast {
    SCALAR_FAST_NONE,
    SCALAR_FAST_F32_ADD, SCALAR_FAST_F32_SUB, SCALAR_FAST_F32_MUL,
    SCALAR_FAST_F64_ADD, SCALAR_FAST_F64_SUB, SCALAR_FAST_F64_MUL,
    SCALAR_FAST_I64_ADD, SCALAR_FAST_I64_SUB, SCALAR_FAST_I64_MUL,
} ScalarFast;

/* the direct path of op on sources of scalar kinds a and b giving kind out */
ScalarFast scalar_fast_path(Op op, ScalarKind out, ScalarKind a, ScalarKind b);

static inline ScalarVal scalar_fast(ScalarFast f, ScalarVal a, ScalarVal b) {
    uint64_t x = (uint64_t)a.i, y = (uint64_t)b.i;
    switch (f) {
    case SCALAR_FAST_F32_ADD: return (ScalarVal){(double)(float)(a.f + b.f), 0};
    case SCALAR_FAST_F32_SUB: return (ScalarVal){(double)(float)(a.f - b.f), 0};
    case SCALAR_FAST_F32_MUL: return (ScalarVal){(double)(float)(a.f * b.f), 0};
    case SCALAR_FAST_F64_ADD: return (ScalarVal){a.f + b.f, 0};
    case SCALAR_FAST_F64_SUB: return (ScalarVal){a.f - b.f, 0};
    case SCALAR_FAST_F64_MUL: return (ScalarVal){a.f * b.f, 0};
    case SCALAR_FAST_I64_ADD: return (ScalarVal){0, (int64_t)(x + y)};
    case SCALAR_FAST_I64_SUB: return (ScalarVal){0, (int64_t)(x - y)};
    case SCALAR_FAST_I64_MUL: return (ScalarVal){0, (int64_t)(x * y)};
    case SCALAR_FAST_NONE: break;
    }
    return (ScalarVal){0, 0};
}

/* scalar_read with the float32 read, the one inner loops make most, inlined */
static inline ScalarVal scalar_read_fast(const DType *dt, const void *p, size_t k) {
    return dt->sk == SK_FLOAT32 ? (ScalarVal){((const float *)p)[k], 0} : scalar_read(dt, p, k);
}

#endif
