/* reduce_unparented.h - a REDUCE over ranges its value does not use (tinygrad
 * v0.12.0's pm_reduce_unparented): the scheduler applies it to each REDUCE it
 * builds, and codegen stage 8 runs the rule set after stage 6's split has
 * made some values constant. */
#ifndef UOPDB_REDUCE_UNPARENTED_H
#define UOPDB_REDUCE_UNPARENTED_H
#include <stddef.h>
#include "../ir/uop.h"
#include "../rewrite/pattern.h"

/* red without the ranges its value does not use, the reduction over each
 * done in closed form: ADD multiplies by the range's size, MUL raises to it
 * (constant sizes only), MAX keeps the value.  With no range left the
 * result is the value itself.  Returns red when nothing changes, NULL with
 * uctx_error(c) set on failure. */
const UOp *reduce_drop_unparented(UCtx *c, const UOp *red);

/* pm_reduce_unparented as a rule set (the caller frees it); NULL + err */
RuleSet *reduce_unparented_rules(char *err, size_t errlen);
#endif
