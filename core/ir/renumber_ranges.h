/* renumber_ranges.h - the numbering of a graph's RANGEs made canonical, so
 * that two kernels that differ only in the axis ids their scheduler handed
 * out compare equal.  The golden-AST tests compare uopdb's kernels with
 * tinygrad's this way. */
#ifndef UOPDB_RENUMBER_RANGES_H
#define UOPDB_RENUMBER_RANGES_H
#include "uop.h"

/* The graph of root with each distinct RANGE's arg (ids..., axis type)
 * replaced by (k, axis type), k = 0, 1, ... in the order the RANGEs first
 * appear in the post-order toposort (sources in order, so the order depends
 * only on the graph's shape, not on the ids).  A RANGE whose arg is not a
 * tuple ending in an axis type keeps its arg.  Returns NULL with
 * uctx_error(c) set when out of memory. */
const UOp *uop_renumber_ranges(UCtx *c, const UOp *root);

#endif
