/* ref_ops.h - the tensor reference's arithmetic on blocks of elements
 * (tensor_reference.c evaluates a node for up to REF_BLOCK elements at a
 * time): ALU ops, casts and the steps of a reduction.  Every result is what
 * scalar_eval gives element by element (scalar_alu, scalar_from_float,
 * scalar_from_int): the common dtypes and ops have loops written with the
 * same expressions, everything else goes through scalar_eval itself. */
#ifndef UOPDB_REF_OPS_H
#define UOPDB_REF_OPS_H
#include <stdbool.h>
#include <stdint.h>
#include "../ir/uop.h"
#include "ref_view.h"

/* the most elements of one block */
enum { REF_BLOCK = 256 };

/* out[t] = op(src[0][t], ...) for t < len; out overlaps no source.  src_float[k]
 * says whether source k holds doubles.  NULL when every element is done;
 * otherwise what went wrong ("integer division by zero"), bad[t] set to
 * whether element t failed (its value then 0) and the others done. */
const char *ref_block_alu(const UOp *u, const RefWord *const *src, const bool *src_float, RefWord *out, int64_t len,
                          unsigned char *bad);
/* the same with op in place of u's op (u gives the dtypes and the number of
 * sources): the reference computes a float MUL by a RECIPROCAL as FDIV */
const char *ref_block_alu_as(Op op, const UOp *u, const RefWord *const *src, const bool *src_float, RefWord *out,
                             int64_t len, unsigned char *bad);
/* x[t] = CAST to dtype `to` of x[t] (dtype `from`) */
void ref_block_cast(const DType *to, const DType *from, RefWord *x, int64_t len);
/* x[t] = BITCAST to dtype `to` of x[t] (dtype `from`, of the same itemsize): its bytes read as `to` */
void ref_block_bitcast(const DType *to, const DType *from, RefWord *x, int64_t len);

/* A reduction (REDUCE_AXIS op rop in dtype dt) folds its source's values,
 * each in the order of the reduced elements, into accumulators that start at
 * the identity (0, 1, or the lowest value of dt). */
typedef struct RefReduce {
    Op op;
    const DType *dt;
    bool src_float;     /* the source holds doubles */
} RefReduce;

/* false for a reduce op the reference does not know */
bool ref_reduce_known(Op rop);
RefWord ref_reduce_identity(const RefReduce *rd);
/* acc[t] = acc[t] op v[t] for t < len (acc and v do not overlap) */
void ref_reduce_lanes(const RefReduce *rd, RefWord *acc, const RefWord *v, int64_t len);
/* Whether a float32 or float64 MUL (computed as op; src_float as for
 * ref_block_alu) whose values a float64 sum rd folds in can be done with
 * ref_mul_sum_lanes: the same results without the block of products. */
bool ref_mul_sum_fusable(Op op, const UOp *mul, const bool *src_float, const RefReduce *rd);
/* acc[t] = acc[t] + mul(x[t], y[t]) for t < len, the product rounded to mul's
 * dtype as ref_block_alu rounds it; a uniform x holds the one value of all its
 * elements in x[0] (likewise y); acc overlaps neither */
void ref_mul_sum_lanes(const UOp *mul, RefWord *acc, const RefWord *x, bool x_uniform, const RefWord *y,
                       bool y_uniform, int64_t len);
/* *acc = (((*acc op v[0]) op v[1]) ...) op v[len-1] */
void ref_reduce_serial(const RefReduce *rd, RefWord *acc, const RefWord *v, int64_t len);

#endif
