/* bounds.c - lazily computed value bounds (vmin/vmax), cached in each node.
 * Arithmetic is done in 128 bits; a result that leaves the dtype's range
 * could wrap at run time, so it widens to the whole range of the dtype. */
#include "bounds.h"
#include <stdlib.h>

enum { BOUNDS_UNKNOWN = 0, BOUNDS_INT = 1, BOUNDS_NONE = 2 };
typedef __int128 i128;

static bool is_int_like(const DType *d) { return !dt_is_ptr(d) && (dt_is_int(d) || dt_is_bool(d)); }

static inline unsigned state_of(const UOp *u) { return u->bounds_state & BOUNDS_STATE_MASK; }
static inline void set_state(UOp *u, unsigned st) {
    u->bounds_state = (uint8_t)((u->bounds_state & ~BOUNDS_STATE_MASK) | st);
}

static void set_bounds(UOp *u, i128 lo, i128 hi) {
    int64_t dmin = dt_min_int(u->dtype), dmax = dt_max_int(u->dtype);
    if (lo > hi || lo < dmin || hi > dmax) { lo = dmin; hi = dmax; }
    u->vmin = (int64_t)lo;
    u->vmax = (int64_t)hi;
    set_state(u, BOUNDS_INT);
}

static i128 min4(i128 a, i128 b, i128 c, i128 d) {
    i128 m = a < b ? a : b;
    m = m < c ? m : c;
    return m < d ? m : d;
}
static i128 max4(i128 a, i128 b, i128 c, i128 d) {
    i128 m = a > b ? a : b;
    m = m > c ? m : c;
    return m > d ? m : d;
}
static i128 cdiv(i128 a, i128 b) { return a / b; } /* C division truncates toward zero */

/* source bounds; sources are always computed before their users */
static bool src_bounds(const UOp *s, i128 *lo, i128 *hi) {
    if (state_of(s) != BOUNDS_INT) return false;
    *lo = s->vmin;
    *hi = s->vmax;
    return true;
}

static void compute_one(UOp *u) {
    const DType *dt = u->dtype;
    if (!is_int_like(dt)) { set_state(u, BOUNDS_NONE); return; }
    Op op = uop_op(u);
    int64_t dmin = dt_min_int(dt), dmax = dt_max_int(dt);
    i128 a0, a1, b0, b1;
    if (op_is(op, OPF_BINARY)) {
        bool ok = src_bounds(u->src[0], &a0, &a1) && src_bounds(u->src[1], &b0, &b1);
        if (!ok) {
            /* float comparison: any bool */
            set_bounds(u, dmin, dmax);
            return;
        }
        switch (op) {
        case OP_ADD: set_bounds(u, a0 + b0, a1 + b1); return;
        case OP_SUB: set_bounds(u, a0 - b1, a1 - b0); return;
        case OP_MUL: set_bounds(u, min4(a0 * b0, a0 * b1, a1 * b0, a1 * b1), max4(a0 * b0, a0 * b1, a1 * b0, a1 * b1)); return;
        case OP_AND:
            if (dt_is_bool(dt)) { set_bounds(u, a0 && b0, a1 && b1); return; }
            if (b0 == b1 && b0 >= 0 && a0 >= 0) { set_bounds(u, 0, a1 < b1 ? a1 : b1); return; }
            break;
        case OP_OR:
            if (dt_is_bool(dt)) { set_bounds(u, a0 || b0, a1 || b1); return; }
            break;
        /* a constant amount within the bit width (a wider one is taken modulo it) */
        case OP_SHL:
            if (b0 == b1 && b0 >= 0 && b0 < (dt->sk == SK_INDEX ? 64 : dt_bitsize(dt))) { set_bounds(u, a0 * ((i128)1 << b0), a1 * ((i128)1 << b0)); return; }
            break;
        case OP_SHR:
            if (b0 == b1 && b0 >= 0 && b0 < (dt->sk == SK_INDEX ? 64 : dt_bitsize(dt))) { set_bounds(u, a0 >> b0, a1 >> b0); return; }
            break;
        case OP_MOD:
            if (b0 == b1 && b0 > 0) {
                i128 c = b0;
                i128 lo = a0 > 0 ? 0 : (a0 > -c ? a0 : -(c - 1));
                i128 hi = a1 < 0 ? 0 : (a1 < c ? a1 : c - 1);
                set_bounds(u, lo, hi);
                return;
            }
            if (b0 > 0) {
                if (a0 >= 0) set_bounds(u, 0, b1 - 1);
                else if (a1 <= 0) set_bounds(u, -(b1 - 1), 0);
                else set_bounds(u, -(b1 - 1), b1 - 1);
                return;
            }
            if (b1 < 0) {
                if (a0 >= 0) set_bounds(u, 0, -b0 - 1);
                else if (a1 <= 0) set_bounds(u, -(-b0 - 1), 0);
                else set_bounds(u, -(-b0 - 1), -b0 - 1);
                return;
            }
            break;
        case OP_IDIV:
            if ((b0 > 0 && b1 > 0) || (b0 < 0 && b1 < 0)) {
                i128 v0 = cdiv(a0, b0), v1 = cdiv(a0, b1), v2 = cdiv(a1, b0), v3 = cdiv(a1, b1);
                set_bounds(u, min4(v0, v1, v2, v3), max4(v0, v1, v2, v3));
                return;
            }
            break;
        case OP_MAX: set_bounds(u, a0 > b0 ? a0 : b0, a1 > b1 ? a1 : b1); return;
        case OP_CMPLT: set_bounds(u, a1 < b0, a0 < b1); return;
        case OP_CMPNE: set_bounds(u, (a1 < b0) || (b1 < a0), !(a0 == a1 && a1 == b0 && b0 == b1)); return;
        case OP_CMPEQ: set_bounds(u, a0 == a1 && a1 == b0 && b0 == b1, !((a1 < b0) || (b1 < a0))); return;
        default: break;
        }
        set_bounds(u, dmin, dmax);
        return;
    }
    switch (op) {
    case OP_WHERE:
        if (src_bounds(u->src[1], &a0, &a1) && src_bounds(u->src[2], &b0, &b1)) {
            set_bounds(u, a0 < b0 ? a0 : b0, a1 > b1 ? a1 : b1);
            return;
        }
        break;
    case OP_DEFINE_VAR:
        if (u->arg && u->arg->kind == ARG_TUPLE && u->arg->n == 3 && u->arg->items[1]->kind == ARG_INT &&
            u->arg->items[2]->kind == ARG_INT) {
            set_bounds(u, u->arg->items[1]->v.i, u->arg->items[2]->v.i);
            return;
        }
        break;
    case OP_RANGE:
    case OP_SPECIAL:
        if (src_bounds(u->src[0], &a0, &a1)) {
            set_bounds(u, 0, a1 - 1 < 0 ? 0 : a1 - 1);
            return;
        }
        break;
    case OP_BIND:
    case OP_GEP:
        if (src_bounds(u->src[0], &a0, &a1)) { set_bounds(u, a0, a1); return; }
        break;
    case OP_UNROLL:
    case OP_VECTORIZE: {
        i128 lo = 0, hi = 0;
        bool ok = u->nsrc > 0;
        for (int i = 0; ok && i < u->nsrc; i++) {
            ok = src_bounds(u->src[i], &a0, &a1);
            if (ok && (i == 0 || a0 < lo)) lo = a0;
            if (ok && (i == 0 || a1 > hi)) hi = a1;
        }
        if (ok) { set_bounds(u, lo, hi); return; }
        break;
    }
    case OP_CONST:
        if (u->arg->kind == ARG_INT) { set_bounds(u, u->arg->v.i, u->arg->v.i); return; }
        if (u->arg->kind == ARG_BOOL) { set_bounds(u, u->arg->v.b, u->arg->v.b); return; }
        break;
    case OP_VCONST: {
        i128 lo = 0, hi = 0;
        bool ok = u->arg->n > 0;
        for (uint32_t i = 0; ok && i < u->arg->n; i++) {
            const Arg *e = u->arg->items[i];
            ok = e && (e->kind == ARG_INT || e->kind == ARG_BOOL);
            i128 v = ok ? (e->kind == ARG_INT ? e->v.i : e->v.b) : 0;
            if (ok && (i == 0 || v < lo)) lo = v;
            if (ok && (i == 0 || v > hi)) hi = v;
        }
        if (ok) { set_bounds(u, lo, hi); return; }
        break;
    }
    case OP_CAST:
        /* monotone only into signed ints and index */
        if (!dt_is_unsigned(dt) && !dt_is_bool(dt) && src_bounds(u->src[0], &a0, &a1)) {
            set_bounds(u, a0 > dmin ? a0 : dmin, a1 < dmax ? a1 : dmax);
            return;
        }
        break;
    default: break;
    }
    set_bounds(u, dmin, dmax);
}

static bool bounds_known(const UOp *u, void *ud) {
    (void)ud;
    return state_of(u) != BOUNDS_UNKNOWN;
}

bool uop_bounds(const UOp *u, int64_t *lo, int64_t *hi) {
    if (!u || !is_int_like(u->dtype)) return false;
    if (state_of(u) == BOUNDS_UNKNOWN) {
        bool srcs_ready = true;
        for (int i = 0; i < u->nsrc && srcs_ready; i++) srcs_ready = state_of(u->src[i]) != BOUNDS_UNKNOWN;
        if (srcs_ready) {
            compute_one((UOp *)u);
        } else {
            /* only the part whose bounds are not known yet: a node with
             * bounds ends the walk, so a long chain whose bounds are known
             * is not walked again for each new node above it */
            size_t n;
            const UOp **topo = uop_toposort_gated(u, bounds_known, NULL, &n);
            if (!topo) return false;
            for (size_t i = 0; i < n; i++)
                if (state_of(topo[i]) == BOUNDS_UNKNOWN) compute_one((UOp *)topo[i]);
            free(topo);
        }
    }
    if (state_of(u) != BOUNDS_INT) return false;
    *lo = u->vmin;
    *hi = u->vmax;
    return true;
}
