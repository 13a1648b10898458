/* vector_rules.h - small vector constructors the symbolic rules and the
 * stages share (a lane or lanes of a vector, a broadcast, a vector
 * constant).  Their rules, gep_pushing (GEP through VECTORIZE/VCONST/CONST/
 * ALU/CAT, GEP of GEP, identity GEPs, VECTORIZE of GEPs of one vector, as in
 * tinygrad v0.12.0's symbolic.py), are registered by symbolic.c. */
#ifndef UOPDB_VECTOR_RULES_H
#define UOPDB_VECTOR_RULES_H
#include "../rewrite/pattern.h"

/* the most lanes a vector built by these stages may have */
#define VEC_MAX_LANES 1024

/* tinygrad's dtype.scalar(): a pointer without its vector width, else the
 * scalar element type */
const DType *vec_scalar_type(const DType *dt);
/* tinygrad's dtype.scalar().vec(n) (n == 1: the scalar) */
const DType *vec_type(const DType *dt, int n);

/* Lanes of u (tinygrad's u.gep(lanes)): a lane of a VECTORIZE is its
 * source, of a VCONST or CONST a scalar CONST; lane 0 of a one-lane value is
 * the value; a void value (a STORE unrolled) is returned as is.  Otherwise a
 * GEP.  NULL + uctx_error on a bad lane. */
const UOp *vec_gep(UCtx *c, const UOp *u, const int *lanes, int n);
const UOp *vec_lane(UCtx *c, const UOp *u, int lane);
/* u repeated n times (VECTORIZE); u itself when n == 1 */
const UOp *vec_broadcast(UCtx *c, const UOp *u, int n);
/* a constant of dtype dt with n lane values: a CONST when they are all
 * equal, else a VCONST */
const UOp *vec_const(UCtx *c, const DType *dt, const Arg *const *vals, int n);
/* (v0, v1, ...) as a tuple arg; and back (-1 when a is not a tuple of ints
 * or has more than max items) */
const Arg *vec_int_tuple(UCtx *c, const int *v, int n);
int vec_tuple_ints(const Arg *a, int *out, int max);
#endif
