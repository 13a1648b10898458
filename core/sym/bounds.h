/* bounds.h - value bounds (vmin/vmax) of integer and bool expressions, with
 * tinygrad's semantics: IDIV truncates toward zero, MOD is the C remainder,
 * CAST clamps to the target range, RANGE/SPECIAL are [0, end-1], DEFINE_VAR
 * carries its own bounds, WHERE is the union.  Computed lazily and cached in
 * the node. */
#ifndef UOPDB_BOUNDS_H
#define UOPDB_BOUNDS_H
#include <stdbool.h>
#include <stdint.h>
#include "../ir/uop.h"

/* Bounds of an int/index/bool node (bools as 0/1).  Returns false for other
 * dtypes (floats, pointers, void), leaving the outputs untouched. */
bool uop_bounds(const UOp *u, int64_t *lo, int64_t *hi);

#endif
