/* range_arg.h - what a RANGE's arg says: its ids, then its axis type
 * ((0, LOOP); (0, 1, LOOP) after a split), and tinygrad's order of ranges
 * (Scheduler.rngs: by axis type, then by ids), which its opt axes and its
 * kernel names follow. */
#ifndef UOPDB_RANGE_ARG_H
#define UOPDB_RANGE_ARG_H
#include "uop.h"

/* The axis type of a RANGE (AXIS_COUNT for anything else). */
AxisType range_axis_type(const UOp *r);
/* tinygrad's order of RANGE args without the type (x.arg[0:-1]): the ids
 * compared in turn, a shorter prefix first.  qsort-style on two RANGEs. */
int range_ids_cmp(const UOp *a, const UOp *b);
/* range_ids_cmp as a qsort comparator on an array of RANGE pointers */
int range_ids_qsort_cmp(const void *a, const void *b);
/* tinygrad's axis_to_pos: where an axis type goes in the order of ranges,
 * LOOP (-1) first, UNROLL (5) last */
int axis_to_pos(AxisType t);
/* A RANGE's short name, as listings and messages show it: "r" and its ids
 * joined by "_" (r0, r1_2; a negative id -k as mk), or "r%ID" when its arg
 * is not a tuple of ids and an axis type. */
void range_label(const UOp *r, char *out, size_t len);
/* A loop variable's short name: a RANGE's range_label, a SPECIAL's own
 * name (gidx0, lidx1, core_id), "%ID" for anything else. */
void loop_label(const UOp *u, char *out, size_t len);
#endif
