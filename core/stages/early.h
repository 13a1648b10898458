/* early.h - the rule sets and helpers of the early codegen stages (1-8, 10):
 * movement ops on INDEX (pm_mops), nested INDEX (pm_syntactic_sugar), range
 * lists of REDUCE/STORE/END (pm_flatten_range, pm_split_ranges,
 * pm_simplify_ranges), WHERE guards moved into loads
 * (pm_move_where_on_load) and the kernel clean-ups of rangeify_codegen.
 * Their rule tables are in stage_rules.h; this header holds the helpers the
 * rule functions share. */
#ifndef UOPDB_EARLY_H
#define UOPDB_EARLY_H
#include <stdbool.h>
#include <stddef.h>
#include "../ir/uop.h"
#include "../rewrite/pattern.h"

/* The context pm_split_ranges needs: the ranges seen as r % c, with c. */
#define SPLIT_RANGES_MAX 64
typedef struct SplitRangesCtx {
    int n;
    const UOp *range[SPLIT_RANGES_MAX];
    int64_t mod[SPLIT_RANGES_MAX];      /* 0: marked "do not split" */
} SplitRangesCtx;

/* First source that is a range of a node that ends ranges (tinygrad's
 * range_start: REDUCE 1, STORE 2, END 1, BUFFERIZE 1, WMMA 3); -1 for
 * other ops. */
int early_range_start(Op op);

/* The RANGE nodes of root's graph (each once, toposort order) into a
 * malloc'd array; NULL with *n = 0 when there are none or out of memory. */
const UOp **early_all_ranges(const UOp *root, size_t *n);

/* tinygrad's UOp.ranges: the RANGEs u is inside of (those in its graph that
 * no REDUCE/STORE/END/AFTER on the way ends).  Up to max into out; returns
 * the count, -1 when there are more or out of memory. */
int early_ranges_of(const UOp *u, const UOp **out, int max);

/* Rebuilds root with node `from` replaced by `to` everywhere, except in the
 * range slots of REDUCE/STORE/END, where `from` becomes the nrange ranges
 * in `ranges` (none when nrange is 0); with ranges NULL, range slots get
 * `to` like every other use.  NULL + uctx_error on failure. */
const UOp *early_replace_range(UCtx *c, const UOp *root, const UOp *from, const UOp *to,
                               const UOp *const *ranges, int nrange);

#endif
