/* range_arg.c - a RANGE's ids and axis type, and tinygrad's order of
 * ranges (range_arg.h). */
#include "range_arg.h"
#include <stdio.h>

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

void range_label(const UOp *r, char *out, size_t len) {
    if (!len) return;
    const Arg *a = r->arg;
    bool ids = a && a->kind == ARG_TUPLE && a->n >= 2;
    for (uint32_t i = 0; ids && i + 1 < a->n; i++) ids = a->items[i] && a->items[i]->kind == ARG_INT;
    if (!ids) {
        snprintf(out, len, "r%%%u", r->id);
        return;
    }
    size_t off = (size_t)snprintf(out, len, "r");
    for (uint32_t i = 0; i + 1 < a->n && off < len; i++) {
        int64_t v = a->items[i]->v.i;
        const char *sep = i ? "_" : "";
        int w = v >= 0 ? snprintf(out + off, len - off, "%s%lld", sep, (long long)v)
                       : snprintf(out + off, len - off, "%sm%llu", sep, (unsigned long long)(-(v + 1)) + 1);
        if (w > 0) off += (size_t)w;
    }
}

void loop_label(const UOp *u, char *out, size_t len) {
    if (!len) return;
    const Arg *a = u->arg;
    if (uop_op(u) == OP_RANGE) range_label(u, out, len);
    else if (uop_op(u) == OP_SPECIAL && a && a->kind == ARG_STR) snprintf(out, len, "%.*s", (int)a->n, a->v.s);
    else snprintf(out, len, "%%%u", u->id);
}
