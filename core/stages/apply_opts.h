/* apply_opts.h - internal to stage 7 (apply_opts.c, apply_opts_gpu.c): the
 * axis helpers both files use, and the gpu target's part of the stage. */
#ifndef UOPDB_APPLY_OPTS_H
#define UOPDB_APPLY_OPTS_H
#include <stdbool.h>
#include <stdint.h>
#include "stages.h"

#define MAX_AXES 64

static inline AxisType axis_type_of(const UOp *r) {
    const Arg *a = r->arg;
    if (!a || a->kind != ARG_TUPLE || !a->n || !a->items[a->n - 1] || a->items[a->n - 1]->kind != ARG_AXIS)
        return AXIS_COUNT;
    return a->items[a->n - 1]->v.axis;
}

static inline int64_t axis_id_of(const UOp *r) {
    const Arg *a = r->arg;
    return a && a->kind == ARG_TUPLE && a->n && a->items[0] && a->items[0]->kind == ARG_INT ? a->items[0]->v.i : -1;
}

/* axis-id order: the int items of the arg, compared in turn */
static inline int cmp_axis(const void *pa, const void *pb) {
    const Arg *a = (*(const UOp *const *)pa)->arg, *b = (*(const UOp *const *)pb)->arg;
    uint32_t n = a->n < b->n ? a->n : b->n;
    for (uint32_t i = 0; i < n; i++) {
        const Arg *x = a->items[i], *y = b->items[i];
        if (!x || !y || x->kind != ARG_INT || y->kind != ARG_INT) break;
        if (x->v.i != y->v.i) return x->v.i < y->v.i ? -1 : 1;
    }
    return (a->n > b->n) - (a->n < b->n);
}

static inline bool range_size(const UOp *r, int64_t *out) { return uop_const_int_value(r->src[0], out); }

/* The gpu target: the output's LOOP ranges become GLOBAL. */
const UOp *opts_loops_to_global(StageCtx *sc, const UOp *root);

/* The gpu target: picks the range opt o acts on as tinygrad does and checks
 * the opt; *r and *amount are then the range and amount to split by, or,
 * for an opt that is no split (PADTO, SWAP, NOLOCALS), *r is NULL and *out
 * the kernel after it.  False with a message in sc->err when the opt does
 * not apply. */
bool opts_gpu_pick(StageCtx *sc, const UOp *root, const KernelOpt *o, bool dont_use_locals, const UOp **r,
                   int64_t *amount, const UOp **out);

#endif
