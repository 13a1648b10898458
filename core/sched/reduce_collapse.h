/* reduce_collapse.h - a sum over a range removed by algebra (tinygrad
 * v0.12.0's reduce_collapse and pm_reduce_collapse): the scheduler's
 * symbolic pass runs it on every REDUCE(ADD) (pm_reduce_simplify, the
 * generic arange fold), and codegen stage 2 on a REDUCE over one range
 * with its load rules added (pm_load_collapse). */
#ifndef UOPDB_REDUCE_COLLAPSE_H
#define UOPDB_REDUCE_COLLAPSE_H
#include <stdbool.h>
#include "../ir/uop.h"
#include "../rewrite/registry.h"

/* The value of REDUCE(ADD) of u over range r with no r left, or NULL when
 * the rules of rs (a pm_reduce_collapse) cannot remove it.  What the part
 * of u that depends on r reads from outside becomes a DEFINE_VAR with its
 * bounds while rs runs, so "free of ranges" is a question of the graph
 * alone; the inputs are put back in the result.  Every rule that removes r
 * needs a select on something of r (a WHERE, or a bool cast that the
 * algebra makes one), unless u does not use r: without one nothing is
 * tried, so no nodes are made (symbolic alone can cancel r, as in r - r;
 * pm_reduce_unparented then drops that loop). */
const UOp *reduce_collapse_range(UCtx *c, const UOp *u, const UOp *r, const RuleSet *rs);

/* helpers the load rules of stage 2 share with the algebra */
bool graph_has_op(const UOp *u, Op op);   /* whether u's graph (u included) has a node of op */
bool is_reduce_add(const UOp *u);

/* Registers the scheduler's sets: pm_reduce_unparented, reduce_collapse,
 * pm_reduce_collapse (pm_reduce_unparented + reduce_collapse + symbolic)
 * and pm_reduce_simplify (pm_reduce_unparented + the rule that collapses
 * every range of a sum).  Idempotent. */
void sched_register_rulesets(void);
#endif
