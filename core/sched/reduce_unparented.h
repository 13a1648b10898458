/* reduce_unparented.h - a REDUCE over ranges its value does not use (tinygrad
 * v0.12.0's pm_reduce_unparented): the scheduler applies it to each REDUCE it
 * builds, and codegen stage 8 runs the rule set after stage 6's split has
 * made some values constant. */
#ifndef UOPDB_REDUCE_UNPARENTED_H
#define UOPDB_REDUCE_UNPARENTED_H
#include <stddef.h>
#include "../ir/uop.h"
#include "../rewrite/registry.h"

/* red without the ranges its value does not use, the reduction over each
 * done in closed form: ADD multiplies by the range's size, MUL raises to it
 * (constant sizes only), MAX keeps the value (constant sizes of at least 1).  With no range left the
 * result is the value itself.  Returns red when nothing changes, NULL with
 * uctx_error(c) set on failure. */
const UOp *reduce_drop_unparented(UCtx *c, const UOp *red);

/* The value of a reduction over nothing, a CONST of dt: 0 for ADD, 1 for
 * MUL, the lowest value (-inf, the minimum integer, false) for MAX; NULL
 * for any other op. */
const UOp *reduce_identity(UCtx *c, Op op, const DType *dt);

/* the rules of pm_reduce_unparented (registered by the stages) */
extern const RuleTable pm_reduce_unparented_rules;
#endif
