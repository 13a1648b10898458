/* eval.h - evaluates an integer/bool expression at a point: the reference
 * the symbolic engine is checked against (u:eval{x=3} in Lua). */
#ifndef UOPDB_EVAL_H
#define UOPDB_EVAL_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "../ir/uop.h"

typedef struct EvalBinding {
    const char *name;     /* DEFINE_VAR name, SPECIAL name, or "r<axis_id>" for a RANGE */
    int64_t value;
} EvalBinding;

/* Evaluates u with the given bindings.  Values wrap to the node's dtype
 * (index is 64-bit).  False with a message in err for an unbound variable,
 * a division by zero, or an op that is not integer arithmetic. */
bool uop_eval_int(const UOp *u, const EvalBinding *b, size_t nb, int64_t *out, char *err, size_t errlen);

#endif
