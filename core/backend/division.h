/* division.h - a float MUL by a RECIPROCAL is a division, rounded once, in
 * every evaluator (the tensor reference, the kernel-AST interpreter, the
 * linear-program interpreter).
 *
 * tinygrad's Tensor divides as a * b.reciprocal(), and the codegen's late
 * rewrites (stage 18, as tinygrad's for a backend with FDIV) turn a * (1/b)
 * into a / b wherever the reciprocal is computed in the kernel of the MUL, so
 * the JIT rounds the quotient once where a multiply by the rounded reciprocal
 * would round twice (a float16 ulp apart, more than validation allows).
 * Evaluating the MUL as that division at every point keeps the reference,
 * every stage and the JIT equal. */
#ifndef UOPDB_DIVISION_H
#define UOPDB_DIVISION_H
#include "../ir/uop.h"

/* For a float MUL u: the side (1 first, then 0) whose source is a RECIPROCAL
 * reached through what leaves it in the MUL's kernel unchanged (movement ops
 * other than PAD, which become index arithmetic; DETACH and
 * CONTIGUOUS_BACKWARD; CASTs that give the value back unchanged, as the
 * front end's broadcast through float32), with that RECIPROCAL in *recip; the
 * other side is the numerator and (*recip)->src[0] the denominator.  -1 when
 * u is not such a MUL, or when the reciprocal is of a float32 or float64
 * constant, which the constant folder computes before stage 18 (the kernel
 * then multiplies). */
int mul_reciprocal_side(const UOp *u, const UOp **recip);

/* The CONST or VCONST that s is, reached through what leaves a value
 * unchanged in its user's kernel (as above: movement ops other than PAD,
 * DETACH, CONTIGUOUS_BACKWARD, CASTs), or NULL: a constant tensor, which
 * tinygrad inlines into that kernel, so its rewrites see the constant
 * there.  The tensor reference folds a float x * 0 by it. */
const UOp *inlined_const(const UOp *s);

#endif
