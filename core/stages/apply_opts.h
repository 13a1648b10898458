/* apply_opts.h - internal to stage 7 (apply_opts.c, apply_opts_gpu.c): the
 * axis helpers both files use, and the gpu target's part of the stage. */
#ifndef UOPDB_APPLY_OPTS_H
#define UOPDB_APPLY_OPTS_H
#include <stdbool.h>
#include <stdint.h>
#include "stages.h"
#include "../ir/range_arg.h"

#define MAX_AXES 64

static inline int64_t axis_id_of(const UOp *r) {
    const Arg *a = r->arg;
    return a && a->kind == ARG_TUPLE && a->n && a->items[0] && a->items[0]->kind == ARG_INT ? a->items[0]->v.i : -1;
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
