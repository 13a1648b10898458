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

/* UOp.bounds_state holds the bounds state in its low two bits; the bits above
 * are facts the symbolic rules learn about a node and keep on it, so a later
 * pass over the same node does not work them out again.  A fact is a property
 * of the node alone (nodes are immutable), so it holds wherever the node is
 * seen. */
#define BOUNDS_STATE_MASK 0x03u
typedef enum SymFact {
    SYM_FACT_VALID_SIMPLE = 1u << 2, /* simplify_valid leaves this conjunction as it is */
    SYM_FACT_GATED_SIMPLE = 1u << 3, /* gated_given_valid leaves this where(valid, x, Invalid) as it is */
} SymFact;
static inline bool sym_fact(const UOp *u, SymFact f) { return (u->bounds_state & f) != 0; }
static inline void sym_fact_set(const UOp *u, SymFact f) { ((UOp *)u)->bounds_state |= (uint8_t)f; }

#endif
