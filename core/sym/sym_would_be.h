/* sym_would_be.h - value bounds of the nodes that the algebra helpers of
 * sym_helpers.h would build, computed without building them.  A rule that
 * builds a candidate only to look at its bounds (the div/mod folding does,
 * many times per node) asks here first and builds only the candidate it
 * returns, which keeps the context from filling with nodes nothing uses.
 * The arithmetic is that of bounds.c (a result that leaves its dtype's range
 * widens to the whole range), so the answers are those of the built node. */
#ifndef UOPDB_SYM_WOULD_BE_H
#define UOPDB_SYM_WOULD_BE_H
#include <stdbool.h>
#include <stdint.h>
#include "../ir/uop.h"

/* bounds of a would-be node: known is false when they cannot be told
 * without building it (then the caller builds, as before) */
typedef struct WouldBe {
    bool known;
    int64_t lo, hi;
} WouldBe;

/* bounds of an existing node (unknown for floats and bools) */
WouldBe wb_of(const UOp *u);
WouldBe wb_const(int64_t v);
/* a + b and a * b in dtype dt */
WouldBe wb_add(const DType *dt, WouldBe a, WouldBe b);
WouldBe wb_mul(const DType *dt, WouldBe a, WouldBe b);
/* sym_divides(u, v): 1 with the bounds of its result, 0 when it gives NULL,
 * -1 when that cannot be told without building it */
int wb_divides(const UOp *u, int64_t v, WouldBe *out);

#endif
