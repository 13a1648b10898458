/* schedule_internal.h - the state the five scheduler steps share while a
 * schedule is built (see schedule.h for the steps), and the small graph
 * helpers they use.  Not part of the public interface. */
#ifndef UOPDB_SCHEDULE_INTERNAL_H
#define UOPDB_SCHEDULE_INTERNAL_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "schedule.h"
#include "sched_graph.h"
#include "shape.h"
#include "../util/u64map.h"

/* Where a kernel reads or writes: a materialised node (>= 0, its index in
 * SchedState.mat) or an input BUFFER (-1 - its index in SchedState.inputs). */
typedef int SchedRef;
#define SCHED_INPUT_REF(i) (-1 - (i))
#define SCHED_REF_IS_INPUT(r) ((r) < 0)
#define SCHED_REF_INPUT(r) (-1 - (r))

typedef struct SchedState {
    UCtx *c;
    const UOp *input;         /* the SINK as given */
    const UOp *sink;          /* the SINK being scheduled (split reductions rewrite it) */
    /* the tensor graph */
    const UOp **topo;
    size_t n;
    Shape *shapes;            /* by topo position */
    U64Map pos;               /* node id -> topo position + 1 */
    const UOp *device;        /* DEVICE for new buffers */
    /* step 1: materialised nodes, in topo order (sources first) */
    bool *materialised;       /* by topo position */
    int *out_pos;             /* by SINK source: topo position of the node its buffer holds */
    int *out_depth;           /* by SINK source: movement ops above that node (0: the source) */
    bool *inlined;            /* by topo position: a candidate for a buffer computed where it is
                                 read instead (rangeify builds it once at ranges of its own and
                                 substitutes each read's indices, as v0.12.0 removes the buffer) */
    const UOp **mat;
    int nmat;
    int *mat_of;              /* by topo position: index in mat, -1 if none */
    /* step 2 */
    const UOp **bufferize;    /* BUFFERIZE of mat[i] */
    Shape *stored;            /* by mat index: the shape its BUFFERIZE stores (mat[i]'s shape, or
                                 only the axes its value uses: v0.12.0's cleanup_dead_axes) */
    const UOp **held;         /* by mat index: the tensor node whose values its buffer holds:
                                 mat[i], or mat[i] SHRINKed to index 0 on the axes its value
                                 does not use (the tensor reads it through an EXPAND) */
    int next_range;           /* RANGE axis ids are unique over the whole schedule */
    /* step 3 */
    const UOp **buffer;       /* BUFFER(LUNIQUE) of mat[i] */
    const UOp **after;        /* AFTER(buffer, END(STORE ...)) of mat[i] */
    /* input BUFFERs in order of first use by the kernels as built */
    const UOp **inputs;
    int ninputs, cap_inputs;
    /* step 4: kernel i computes mat[i] */
    const UOp **kernel_ast;
    char (*kernel_name)[48];
    SchedRef **kernel_refs;   /* DEFINE_GLOBAL k -> what it is */
    int *kernel_nrefs;
    /* the current step */
    Trace *trace;
    char *err;
    size_t errlen;
} SchedState;

/* topo position of a tensor-graph node, -1 if not in the graph */
int sched_pos(const SchedState *st, const UOp *u);
/* shape of a tensor-graph node */
const Shape *sched_shape(const SchedState *st, const UOp *u);
/* sets the error "what at node %id (OP)" once; returns false */
bool sched_fail(SchedState *st, const UOp *u, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* records one pseudo-rule rewrite in the current step's trace */
void sched_note(SchedState *st, const char *rule, const char *file, int line, const UOp *before, const UOp *after);
#define SCHED_NOTE(st, rule, before, after) sched_note((st), (rule), __FILE__, __LINE__, (before), (after))

/* true when the shapes are the same once their size-1 dims are dropped */
bool sched_pure_unit_reshape(const Shape *from, const Shape *to);
/* The indices in shape `in` of the element at indices idx in shape `out`
 * (a RESHAPE from in to out), built as v0.12.0's apply_movement_op builds
 * them: the row-major flat position in out, unflattened in in with % and //,
 * simplified with symbolic + pm_simplify_valid + pm_drop_and_clauses.
 * false with uctx_error on failure. */
bool sched_reshape_indices(UCtx *c, const Shape *in, const Shape *out, const UOp *const *idx, const UOp **sidx);
/* The indices in x's source of the element at indices idx of x, a
 * movement op other than PAD, built as v0.12.0's apply_movement_op builds
 * them (rangeify.c); false with st->err set on failure. */
bool sched_movement_indices(SchedState *st, const UOp *x, const UOp *const *idx, const UOp **sidx);
/* The size vector of a movement op: a CONST for one dim, a VCONST else. */
const UOp *sched_shape_vector(UCtx *c, const int64_t *d, int n);
/* row-major flat index of idx in shape s (the reshape to one dim) */
const UOp *sched_flat_index(UCtx *c, const Shape *s, const UOp *const *idx);

/* Splits every REDUCE_AXIS of many elements into few in two (a reduction
 * of partials kept in a CONTIGUOUS), as v0.12.0's split_reduceop;
 * st->sink becomes the new graph and *changed says whether it changed
 * (the caller indexes it again).  split_reduce.c. */
bool sched_split_reduces(SchedState *st, bool *changed);
/* the steps; each returns false with st->err set */
bool sched_realize(SchedState *st);
bool sched_rangeify(SchedState *st);
bool sched_bufferize_to_store(SchedState *st);
bool sched_split_kernels(SchedState *st);
bool sched_make_program(SchedState *st, Schedule *s);

#endif
