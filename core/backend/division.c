/* division.c - which float MULs are divisions (see division.h). */
#include "division.h"

static bool is_view(Op op) {
    return op == OP_RESHAPE || op == OP_EXPAND || op == OP_PERMUTE || op == OP_SHRINK || op == OP_FLIP;
}

/* the RECIPROCAL below s, or NULL */
static const UOp *reciprocal_below(const UOp *s, const DType *want) {
    enum { MOST = 64 };
    const DType *casts[MOST];
    int ncasts = 0;
    for (int steps = 0; uop_op(s) != OP_RECIPROCAL; steps++) {
        Op op = uop_op(s);
        if (steps >= MOST || s->nsrc < 1) return NULL;
        if (op == OP_CAST) casts[ncasts++] = s->dtype;
        else if (!is_view(op) && op != OP_DETACH && op != OP_CONTIGUOUS_BACKWARD) return NULL;
        s = s->src[0];
    }
    const DType *rdt = s->dtype;
    if (rdt != want || s->nsrc != 1) return NULL;
    for (int i = 0; i < ncasts; i++)
        if (casts[i] != rdt && !dt_can_lossless_cast(rdt, casts[i])) return NULL;
    if (inlined_const(s->src[0]) && (rdt->scalar->sk == SK_FLOAT32 || rdt->scalar->sk == SK_FLOAT64)) return NULL;
    return s;
}

const UOp *inlined_const(const UOp *s) {
    while (s->nsrc >= 1 && (is_view(uop_op(s)) || uop_op(s) == OP_CAST || uop_op(s) == OP_DETACH ||
                            uop_op(s) == OP_CONTIGUOUS_BACKWARD))
        s = s->src[0];
    return uop_op(s) == OP_CONST || uop_op(s) == OP_VCONST ? s : NULL;
}

int mul_reciprocal_side(const UOp *u, const UOp **recip) {
    if (uop_op(u) != OP_MUL || u->nsrc != 2 || !dt_is_float(u->dtype)) return -1;
    for (int side = 1; side >= 0; side--) {
        const UOp *r = reciprocal_below(u->src[side], u->dtype);
        if (r) {
            *recip = r;
            return side;
        }
    }
    return -1;
}
