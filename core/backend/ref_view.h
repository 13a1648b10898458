/* ref_view.h - strided views for the tensor reference (tensor_reference.c):
 * how a materialised array is seen through a chain of movement ops.
 *
 * A view maps an index of its shape to an element of the array below it:
 * offset + sum(idx[d] * stride[d]), valid where lo[d] <= idx[d] < hi[d] on
 * every dim and 0 elsewhere.  The movement ops act on views as tinygrad's
 * ShapeTracker does: EXPAND sets stride 0, PERMUTE reorders, SHRINK moves the
 * offset, PAD moves the offset back and narrows the valid ranges, FLIP negates
 * a stride, RESHAPE re-strides when the elements stay evenly spaced.  A
 * RESHAPE that a view cannot follow starts a new view over the old one's
 * shape (a RefAccess holds the chain); the caller may instead materialise
 * the reshape's source, which keeps accesses single strided views.
 *
 * Values are RefWords: a double for float dtypes, an int64 for ints and
 * bools, as scalar_eval's ScalarVal keeps them (its other field being 0). */
#ifndef UOPDB_REF_VIEW_H
#define UOPDB_REF_VIEW_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "../ir/uop.h"
#include "../sched/shape.h"

typedef union RefWord {
    double f;
    int64_t i;
} RefWord;
/* an array of RefWords is also an array of doubles or of int64s (the hot loops use that) */
_Static_assert(sizeof(RefWord) == sizeof(double) && sizeof(RefWord) == sizeof(int64_t), "RefWord is 8 bytes");

typedef struct RefView {
    int ndim;
    bool empty;        /* no element is valid (a zero dim, a pad of nothing) */
    int64_t offset;
    int64_t shape[SHAPE_MAX_DIMS];
    int64_t stride[SHAPE_MAX_DIMS];
    int64_t lo[SHAPE_MAX_DIMS], hi[SHAPE_MAX_DIMS]; /* the valid range of each dim */
} RefView;

/* The elements of data (NULL for a mask, which only tells valid from not)
 * seen through views[nviews-1] (the outermost, over the iteration space)
 * down to views[0] (over data).  An outer view's offset is an element of the
 * next view's shape in row-major order. */
typedef struct RefAccess {
    const RefWord *data;
    const RefWord *poison;  /* an array read through the same views, or NULL (tensor_reference.c) */
    int nviews;
    RefView *views;
} RefAccess;

/* the dense row-major view of shape s */
void ref_view_init(RefView *v, const Shape *s);
/* Applies movement op m (RESHAPE, EXPAND, PERMUTE, PAD, SHRINK, FLIP) giving
 * shape out.  False for a RESHAPE the view cannot express (v unchanged). */
bool ref_view_apply(RefView *v, const UOp *m, const Shape *out);

/* Loads the block idx, idx + e_b, ..., idx + (len-1) e_b of the iteration
 * space (idx[b] is the block's start; b < 0: one element) into out; invalid
 * elements are 0.  A mask access instead zeroes out's invalid elements. */
void ref_access_block(const RefAccess *a, const int64_t *idx, int b, int64_t len, RefWord *out);
/* The same block, read in place where it is len consecutive valid elements
 * of the data array (the pointer into the array is returned); else loaded
 * into out, which is returned.  *uniform is set when every element is one
 * valid element of the array: only out[0] is then written. */
const RefWord *ref_access_read(const RefAccess *a, const int64_t *idx, int b, int64_t len, RefWord *out,
                               bool *uniform);

#endif
