/* shape.h - shapes of tensor-graph nodes, with tinygrad v0.12.0's rules:
 * BUFFER is (size,), a CONST on a DEVICE is (), movement ops reshape,
 * expand, permute, pad, shrink and flip, REDUCE_AXIS keeps reduced axes as
 * 1, elementwise ops need equal shapes.  Late (kernel) ops have no shape. */
#ifndef UOPDB_SHAPE_H
#define UOPDB_SHAPE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "../ir/uop.h"
#include "../util/strbuf.h"

#define SHAPE_MAX_DIMS 16
/* The most elements a shape may have (zero dims counted as one), so that
 * element counts, strides and byte sizes never overflow int64. */
#define SHAPE_MAX_NUMEL ((int64_t)1 << 56)

typedef struct Shape {
    int ndim;                    /* -1: the node has no shape */
    int64_t d[SHAPE_MAX_DIMS];
} Shape;

/* The shape of u.  False with a message in err ("bad reshape: (2, 3) ->
 * (4, 2) at node %7") when the graph is ill-shaped. */
bool uop_shape(const UOp *u, Shape *out, char *err, size_t errlen);
/* Shapes of every node of a toposort (uop_toposort order) into out[n]. */
bool uop_shapes(const UOp *const *topo, size_t n, Shape *out, char *err, size_t errlen);
/* u's toposort (*topo, *n) and the shape of each of its nodes, in that
 * order; the caller frees both arrays.  NULL (nothing to free) with a
 * message in err when out of memory or ill-shaped. */
Shape *uop_graph_shapes(const UOp *u, const UOp ***topo, size_t *n, char *err, size_t errlen);
int64_t shape_numel(const Shape *s);     /* product of the dims; 1 for () */
bool shape_equal(const Shape *a, const Shape *b);
void shape_format(StrBuf *sb, const Shape *s); /* (2, 3), (5,), () or None */

/* Reads the integer vector a movement op carries in a source (VCONST,
 * VECTORIZE of CONSTs, or a scalar CONST).  False if it is not constant. */
bool uop_int_vector(const UOp *v, int64_t *out, int max, int *n);

#endif
