/* range_arg.c - a RANGE's ids and axis type, and tinygrad's order of
 * ranges (range_arg.h). */
#include "range_arg.h"

AxisType range_axis_type(const UOp *r) {
    const Arg *a = r->arg;
    if (uop_op(r) != OP_RANGE || !a || a->kind != ARG_TUPLE || !a->n || !a->items[a->n - 1] ||
        a->items[a->n - 1]->kind != ARG_AXIS)
        return AXIS_COUNT;
    return a->items[a->n - 1]->v.axis;
}

int range_ids_cmp(const UOp *a, const UOp *b) {
    const Arg *x = a->arg, *y = b->arg;
    uint32_t nx = x && x->kind == ARG_TUPLE ? x->n : 0, ny = y && y->kind == ARG_TUPLE ? y->n : 0;
    uint32_t i = 0;
    for (; i < nx && i < ny; i++) {
        const Arg *p = x->items[i], *q = y->items[i];
        bool pi = p && p->kind == ARG_INT, qi = q && q->kind == ARG_INT;
        if (!pi || !qi) {
            if (pi != qi) return pi ? 1 : -1;   /* the shorter id list (its type comes first) sorts first */
            return 0;
        }
        if (p->v.i != q->v.i) return p->v.i < q->v.i ? -1 : 1;
    }
    return (nx > ny) - (nx < ny);
}

int range_ids_qsort_cmp(const void *a, const void *b) {
    return range_ids_cmp(*(const UOp *const *)a, *(const UOp *const *)b);
}

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
