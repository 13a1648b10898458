/* linearize_point.h - the root of a point as a linear program, for the
 * linear interpreter (core/backend/linear_interp.h) to run.  A point that
 * still has REDUCE (stages 9-10 with vector opts, or inside stage 11) gets
 * stages 10 and 11 first, and a point of the gpu target stage 12 (its
 * LOCAL ranges are work items, not loops); then ENDs of several ranges
 * are split into nested single-range ENDs first (pm_split_ends, which stage
 * 19 runs: the linearizer places a node by the loops it is inside, and a
 * loop that waits only for the first range of a shared END would let an
 * accumulator's initial store fall inside it), then stages 20 (add control
 * flow) and 21 (linearize) run.  A LINEAR root is returned as it is. */
#ifndef UOPDB_LINEARIZE_POINT_H
#define UOPDB_LINEARIZE_POINT_H
#include "stages.h"

/* NULL with a message in sc->err when a stage fails. */
const UOp *stages_linearize_point(StageCtx *sc, const UOp *root);

#endif
