/* dtype.h - data types: scalars (including the abstract `index`), vectors,
 * and pointers with address space and size, with tinygrad's promotion rules.
 * DTypes are interned process-wide: the same type is always the same
 * pointer, so compare them with ==. */
#ifndef UOPDB_DTYPE_H
#define UOPDB_DTYPE_H
#include <stdbool.h>
#include <stdint.h>
#include "../util/strbuf.h"

/* Scalar kinds in tinygrad priority order (void and index share -1). */
#define SCALAR_KINDS(X) \
    X(VOID, void, -1, 0) X(INDEX, index, -1, 800) X(BOOL, bool, 0, 1) \
    X(INT8, int8, 1, 8) X(UINT8, uint8, 2, 8) X(INT16, int16, 3, 16) X(UINT16, uint16, 4, 16) \
    X(INT32, int32, 5, 32) X(UINT32, uint32, 6, 32) X(INT64, int64, 7, 64) X(UINT64, uint64, 8, 64) \
    X(FP8E4M3, fp8e4m3, 9, 8) X(FP8E5M2, fp8e5m2, 10, 8) X(FLOAT16, float16, 11, 16) \
    X(BFLOAT16, bfloat16, 12, 16) X(FLOAT32, float32, 13, 32) X(FLOAT64, float64, 14, 64)

typedef enum ScalarKind {
#define X(E, n, prio, bits) SK_##E,
    SCALAR_KINDS(X)
#undef X
    SK_COUNT
} ScalarKind;

typedef enum AddrSpace { ADDR_GLOBAL, ADDR_LOCAL, ADDR_REG } AddrSpace;
typedef enum DTypeKind { DTK_SCALAR, DTK_VEC, DTK_PTR } DTypeKind;

typedef struct DType {
    DTypeKind kind;
    ScalarKind sk;            /* element kind (of the pointee for pointers) */
    int count;                /* values per element: vec width; for ptr the pointee's count */
    const struct DType *scalar; /* scalar(): the scalar element type */
    const struct DType *base;   /* ptr: pointee type; others: self */
    AddrSpace addrspace;      /* ptr only */
    int64_t size;             /* ptr only: element count, -1 unlimited */
    int v;                    /* ptr only: vector of pointers (1 = plain pointer) */
    const struct DType *ptr_scalar; /* ptr with v>1: the v==1 pointer; else self */
} DType;

const DType *dt_scalar(ScalarKind sk);
/* vec(n) of a scalar; n==1 or void gives the scalar back; NULL if not allowed */
const DType *dt_vec(const DType *dt, int n);
const DType *dt_ptr(const DType *base, int64_t size, AddrSpace as);
const DType *dt_ptr_vec(const DType *ptr, int v);   /* vector of pointers */
/* the same element type with another vector count (scalars and vecs) */
const DType *dt_with_count(const DType *dt, int n);

#define DT_VOID    dt_scalar(SK_VOID)
#define DT_INDEX   dt_scalar(SK_INDEX)
#define DT_BOOL    dt_scalar(SK_BOOL)
#define DT_INT32   dt_scalar(SK_INT32)
#define DT_INT64   dt_scalar(SK_INT64)
#define DT_FLOAT32 dt_scalar(SK_FLOAT32)

static inline bool dt_is_ptr(const DType *d) { return d->kind == DTK_PTR; }
int dt_vcount(const DType *d);       /* count for values, v for pointers */
bool dt_is_float(const DType *d);     /* on the scalar */
bool dt_is_int(const DType *d);       /* ints and index */
bool dt_is_unsigned(const DType *d);
bool dt_is_bool(const DType *d);
int dt_bitsize(const DType *d);       /* of the scalar */
int dt_itemsize(const DType *d);      /* bytes of one element (scalar * count) */
int dt_priority(const DType *d);
/* value range of an int/bool scalar type (index: int64 range) */
int64_t dt_min_int(const DType *d);
int64_t dt_max_int(const DType *d);   /* uint64 max is clamped to INT64_MAX */

/* v wrapped to the width and signedness of an int dtype (index: 64 bits;
 * bool: v != 0), as the generated code computes it */
int64_t dt_wrap_int(const DType *d, int64_t v);
/* Numeric semantics shared by the JIT, the reference, the interpreters and
 * constant folding (docs/ARCHITECTURE.md, "Numeric semantics"):
 * a float converted to the integer dtype d truncates toward zero, as x86-64
 * converts (what tinygrad's kernels compute there): int8/16/32 and
 * uint8/16 through int32, wrapped to d's width, NaN and values out of
 * int32's range giving 0x80000000 (so 0 for the narrower ones); int64 and
 * index NaN or out of range INT64_MIN; uint32/64 NaN or out of range all
 * ones.  A uint64 result from 2^63 is returned as its two's-complement
 * int64. */
int64_t dt_float_to_int(const DType *d, double f);
/* The shift amount b of a SHL or SHR in dtype d, taken modulo d's bit width
 * (as x86 masks it): an int32 shifted by 33 shifts by 1. */
int dt_shift_amount(const DType *d, uint64_t b);

const char *sk_name(ScalarKind sk);   /* "float32" */
/* uopdb's spelling: float32, float32.vec(4), float32.ptr(9), float32.ptr(16, local) */
void dt_format(StrBuf *sb, const DType *d);
/* dt_format into a fixed buffer, for messages; returns buf */
const char *dt_str(const DType *d, char *buf, size_t n);
/* tinygrad's repr: dtypes.float, dtypes.float.vec(4), dtypes.float.ptr(16, AddrSpace.LOCAL) */
void dt_format_tinygrad(StrBuf *sb, const DType *d);
/* Parses either spelling (an optional "dtypes." prefix, all tinygrad aliases).
 * Returns the number of characters consumed, 0 on error. */
int dt_parse(const char *s, const DType **out);
/* Looks up a scalar by any of its names (float32, float, half, int, long, uchar, ...). */
bool sk_from_name(const char *s, ScalarKind *out);
/* every name and alias, for completion and uop.dtypes; NULL-terminated */
extern const char *const dt_all_names[];

const DType *dt_least_upper(const DType *a, const DType *b);
bool dt_can_lossless_cast(const DType *from, const DType *to);

#endif
