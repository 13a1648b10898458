/* kernel_name.c - a kernel's name as tinygrad v0.12.0 gives it: "r" when
 * the kernel has a REDUCE, "E" when not, then the size of each range that
 * runs more than once, in tinygrad's order of axes (Scheduler.rngs): LOOP,
 * then GLOBAL and THREAD, LOCAL and GROUP_REDUCE, UPCAST, REDUCE, UNROLL,
 * and by range ids within one position.  tinygrad names a kernel so once its
 * opts are applied, so the name of a kernel with opts shows them
 * (r_512_512_512 with UPCAST 1 4, UPCAST 0 4, UNROLL 0 4 is
 * r_128_128_4_4_128_4). */
#include <stdio.h>
#include <stdlib.h>
#include "kernel_name.h"

int axis_to_pos(AxisType t) {
    switch (t) {
    case AXIS_OUTER: return -2;
    case AXIS_LOOP: return -1;
    case AXIS_GLOBAL: case AXIS_THREAD: return 0;
    case AXIS_WARP: return 1;
    case AXIS_LOCAL: case AXIS_GROUP_REDUCE: return 2;
    case AXIS_UPCAST: return 3;
    case AXIS_REDUCE: return 4;
    case AXIS_UNROLL: return 5;
    default: return 6;
    }
}

static AxisType axis_of(const UOp *r) {
    const Arg *a = r->arg;
    return a && a->kind == ARG_TUPLE && a->n > 0 && a->items[a->n - 1]->kind == ARG_AXIS ? a->items[a->n - 1]->v.axis
                                                                                       : AXIS_LOOP;
}

/* tinygrad's sort key: the position, then the ids (arg[0:-1]) in turn */
static int by_position(const void *pa, const void *pb) {
    const UOp *a = *(const UOp *const *)pa, *b = *(const UOp *const *)pb;
    int x = axis_to_pos(axis_of(a)), y = axis_to_pos(axis_of(b));
    if (x != y) return x < y ? -1 : 1;
    int na = a->arg && a->arg->kind == ARG_TUPLE ? a->arg->n - 1 : 0, nb = b->arg && b->arg->kind == ARG_TUPLE ? b->arg->n - 1 : 0;
    for (int i = 0; i < na && i < nb; i++) {
        int64_t u = a->arg->items[i]->v.i, v = b->arg->items[i]->v.i;
        if (u != v) return u < v ? -1 : 1;
    }
    return na < nb ? -1 : na > nb;
}

bool kernel_shape_name(const UOp *root, char *out, size_t outlen) {
    if (!outlen) return false;
    out[0] = 0;
    size_t n = 0;
    const UOp **topo = uop_toposort(root, &n);
    if (!topo) return false;
    const UOp **ranges = malloc((n ? n : 1) * sizeof *ranges);
    if (!ranges) { free(topo); return false; }
    bool reduce = false;
    int nr = 0;
    for (size_t i = 0; i < n; i++) {
        Op op = uop_op(topo[i]);
        reduce |= op == OP_REDUCE || op == OP_REDUCE_AXIS;
        int64_t size;
        /* a range of one iteration (vmax 0) is not named; one of unknown size is */
        if (op == OP_RANGE && !(uop_const_int_value(topo[i]->src[0], &size) && size <= 1)) ranges[nr++] = topo[i];
    }
    qsort(ranges, (size_t)nr, sizeof *ranges, by_position);
    size_t len = (size_t)snprintf(out, outlen, "%s", reduce ? "r" : "E");
    for (int i = 0; i < nr && len < outlen; i++) {
        int64_t size;
        const UOp *s = ranges[i]->src[0];
        if (uop_const_int_value(s, &size)) len += (size_t)snprintf(out + len, outlen - len, "_%lld", (long long)size);
        else if (uop_op(s) == OP_DEFINE_VAR && s->arg && s->arg->kind == ARG_TUPLE && s->arg->n > 0 &&
                 s->arg->items[0]->kind == ARG_STR)
            len += (size_t)snprintf(out + len, outlen - len, "_%s", s->arg->items[0]->v.s);
        else len += (size_t)snprintf(out + len, outlen - len, "_x"); /* tinygrad renders the expression */
    }
    free(ranges);
    free(topo);
    return len < outlen;
}
