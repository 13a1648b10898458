/* arg.h - the `arg` of a UOp: a small immutable value (int, float, bool,
 * string, op, axis type, dtype, Invalid, or a tuple of these), interned in
 * the UOp context so that equal args are the same pointer.  A NULL arg is
 * tinygrad's None. */
#ifndef UOPDB_ARG_H
#define UOPDB_ARG_H
#include <stdbool.h>
#include <stdint.h>
#include "ops.h"
#include "dtype.h"
#include "../util/strbuf.h"

/* AxisType of a RANGE, in tinygrad order */
#define AXIS_TYPES(X) X(GLOBAL, 'g') X(WARP, 'w') X(LOCAL, 'l') X(LOOP, 'L') X(GROUP_REDUCE, 'G') \
    X(REDUCE, 'R') X(UPCAST, 'u') X(UNROLL, 'r') X(THREAD, 't') X(OUTER, 'O') X(PLACEHOLDER, 'P')
typedef enum AxisType {
#define X(n, letter) AXIS_##n,
    AXIS_TYPES(X)
#undef X
    AXIS_COUNT
} AxisType;
const char *axis_name(AxisType a);     /* "REDUCE" */
char axis_letter(AxisType a);          /* tinygrad's one-letter code, 'R' */
bool axis_from_name(const char *s, AxisType *out); /* "REDUCE" or "AxisType.REDUCE" */

typedef enum ArgKind {
    ARG_INT, ARG_FLOAT, ARG_BOOL, ARG_STR, ARG_OP, ARG_AXIS, ARG_DTYPE, ARG_INVALID, ARG_TUPLE
} ArgKind;

typedef struct Arg {
    ArgKind kind;
    uint32_t n;          /* tuple length; string length */
    uint64_t hash;
    union {
        int64_t i;
        double f;
        bool b;
        const char *s;
        Op op;
        AxisType axis;
        const DType *dt;
    } v;
    const struct Arg *items[]; /* tuple elements */
} Arg;

struct UCtx;
const Arg *arg_int(struct UCtx *c, int64_t v);
const Arg *arg_float(struct UCtx *c, double v);
const Arg *arg_bool(struct UCtx *c, bool v);
const Arg *arg_str(struct UCtx *c, const char *s);
const Arg *arg_strn(struct UCtx *c, const char *s, size_t n);
const Arg *arg_op(struct UCtx *c, Op op);
const Arg *arg_axis(struct UCtx *c, AxisType a);
const Arg *arg_dtype(struct UCtx *c, const DType *dt);
const Arg *arg_invalid(struct UCtx *c);
/* items may contain NULL (None) */
const Arg *arg_tuple(struct UCtx *c, const Arg *const *items, uint32_t n);
/* Structural equality, for args from different contexts. */
bool arg_equal(const Arg *a, const Arg *b);
/* Copies an arg (possibly from another context) into c. */
const Arg *arg_import(struct UCtx *c, const Arg *a);

/* uopdb's spelling, which the listing parser reads back:
 * 3, -1.5, inf, nan, true, Invalid, "gidx0", Ops.ADD, REDUCE (an axis type), float32 (a dtype),
 * (1, 2, REDUCE), None inside tuples */
void arg_format(StrBuf *sb, const Arg *a);
/* Python's repr as tinygrad prints it: 3, 1.5, inf, True, 'gidx0', Ops.ADD,
 * AxisType.REDUCE, dtypes.float, Invalid, (1, 2), (3,) */
void arg_format_python(StrBuf *sb, const Arg *a);

/* A double as Python's repr writes it: shortest digits that read back,
 * fixed notation for exponents -4..15 ("1000000.0", "0.0001"), scientific
 * otherwise ("1e+16"), nan/inf/-inf.  Both arg spellings use it. */
void format_python_float(StrBuf *sb, double f);

/* Parses an arg in uopdb's spelling (what arg_format writes); also accepts
 * the Python spelling (True, 'str', AxisType.X, dtypes.float).  Returns the
 * number of characters consumed, 0 on error with a message in err.  "None"
 * parses to *out == NULL. */
int arg_parse(struct UCtx *c, const char *text, const Arg **out, char *err, size_t errlen);

#endif
