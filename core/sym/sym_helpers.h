/* sym_helpers.h - small algebra helpers the symbolic rules share: building
 * nodes (NULL-propagating), reading constants, splitting sums and products,
 * constant factors, exact division of a term, and the canonical operand
 * order.  These follow tinygrad's split_uop, const_factor, divides,
 * pop_const, divide_exact and tuplize. */
#ifndef UOPDB_SYM_HELPERS_H
#define UOPDB_SYM_HELPERS_H
#include <stdbool.h>
#include <stdint.h>
#include "../ir/uop.h"

/* Most terms a split keeps; longer sums make the rules that split give up. */
#define SYM_MAX_TERMS 64
/* Deepest chain of ADD/MUL nodes const_factor, divides and divide_exact look
 * into (they recurse): below it an expression counts as having no structure
 * (factor 1, not divisible), which is always sound. */
#define SYM_MAX_DEPTH 256

/* ---- constants ---- */
/* value of a scalar int/bool CONST */
bool sym_const_int(const UOp *u, int64_t *out);
/* a constant of u's dtype with value v (ints, index, bool, floats); NULL when
 * v does not fit an int dtype */
const UOp *sym_const_like(UCtx *c, const UOp *u, int64_t v);
bool sym_fits(const DType *dt, __int128 v);

/* ---- building (any NULL source gives NULL) ---- */
const UOp *sym_bin(UCtx *c, Op op, const UOp *a, const UOp *b);
const UOp *sym_add(UCtx *c, const UOp *a, const UOp *b);
const UOp *sym_mul(UCtx *c, const UOp *a, const UOp *b);
const UOp *sym_addc(UCtx *c, const UOp *a, int64_t v);   /* a + v (a itself when v == 0) */
const UOp *sym_mulc(UCtx *c, const UOp *a, int64_t v);   /* a * v (a itself when v == 1) */
const UOp *sym_neg(UCtx *c, const UOp *a);               /* a * -1; bools: a != true */
const UOp *sym_not(UCtx *c, const UOp *a);               /* a != true */
/* left fold of terms with ADD; 0 of dtype-of-like when n == 0 */
const UOp *sym_sum(UCtx *c, const UOp *const *t, int n, const UOp *like);

/* ---- structure ---- */
/* the leaves of a chain of op (tinygrad split_uop); -1 when more than max */
int sym_split(const UOp *u, Op op, const UOp **out, int max);
/* largest known int that divides u (tinygrad const_factor) */
int64_t sym_const_factor(const UOp *u);
/* u / v when that is exact by structure, else NULL (tinygrad divides) */
const UOp *sym_divides(UCtx *c, const UOp *u, int64_t v);
/* u without a trailing "+ const"; the const in *k (0 if none) */
const UOp *sym_pop_const(const UOp *u, int64_t *k);
/* u / v when v divides u by structure (tinygrad divide_exact), else NULL */
const UOp *sym_divide_exact(UCtx *c, const UOp *u, const UOp *v);
/* the gcd of the terms' structure (common MUL factors times the gcd of their
 * constant factors), tinygrad UOp.gcd; NULL on failure */
const UOp *sym_gcd(UCtx *c, const UOp *const *t, int n);
int64_t sym_gcd_int(int64_t a, int64_t b);

/* canonical operand order (tinygrad tuplize): negative when a sorts first */
int sym_order(const UOp *a, const UOp *b);

/* bounds, with ints of any width (bools as 0/1); false for floats */
bool sym_bounds(const UOp *u, int64_t *lo, int64_t *hi);
static inline bool sym_is_int(const UOp *u) { return !dt_is_ptr(u->dtype) && dt_is_int(u->dtype); }
static inline bool sym_is_index(const UOp *u) { return u->dtype->sk == SK_INDEX && u->dtype->count == 1 && !dt_is_ptr(u->dtype); }

#endif
