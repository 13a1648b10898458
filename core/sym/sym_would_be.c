/* sym_would_be.c - see sym_would_be.h. */
#include "sym_would_be.h"
#include "bounds.h"
#include "sym_helpers.h"

typedef __int128 i128;

static const WouldBe UNKNOWN = {false, 0, 0};

static WouldBe widen(const DType *dt, i128 lo, i128 hi) {
    int64_t dmin = dt_min_int(dt), dmax = dt_max_int(dt);
    if (lo > hi || lo < dmin || hi > dmax) return (WouldBe){true, dmin, dmax};
    return (WouldBe){true, (int64_t)lo, (int64_t)hi};
}

static bool plain_int(const DType *dt) { return !dt_is_ptr(dt) && dt_is_int(dt) && !dt_is_bool(dt); }

WouldBe wb_of(const UOp *u) {
    int64_t lo, hi;
    if (!u || !plain_int(u->dtype) || !uop_bounds(u, &lo, &hi)) return UNKNOWN;
    return (WouldBe){true, lo, hi};
}

WouldBe wb_const(int64_t v) { return (WouldBe){true, v, v}; }

WouldBe wb_add(const DType *dt, WouldBe a, WouldBe b) {
    if (!a.known || !b.known || !plain_int(dt)) return UNKNOWN;
    return widen(dt, (i128)a.lo + b.lo, (i128)a.hi + b.hi);
}

WouldBe wb_mul(const DType *dt, WouldBe a, WouldBe b) {
    if (!a.known || !b.known || !plain_int(dt)) return UNKNOWN;
    i128 p[4] = {(i128)a.lo * b.lo, (i128)a.lo * b.hi, (i128)a.hi * b.lo, (i128)a.hi * b.hi};
    i128 lo = p[0], hi = p[0];
    for (int i = 1; i < 4; i++) {
        if (p[i] < lo) lo = p[i];
        if (p[i] > hi) hi = p[i];
    }
    return widen(dt, lo, hi);
}

/* follows divides() in sym_helpers.c step by step */
static int divides_rec(const UOp *u, int64_t v, int depth, WouldBe *out) {
    if (!u || v == 0) return 0;
    if (!plain_int(u->dtype)) return -1;
    if (v == 1) {
        *out = wb_of(u);
        return out->known ? 1 : -1;
    }
    int64_t k;
    if (sym_const_int(u, &k)) {
        if (k % v != 0 || (k == INT64_MIN && v == -1) || !sym_fits(u->dtype, k / v)) return 0;
        *out = wb_const(k / v);
        return 1;
    }
    if (depth >= SYM_MAX_DEPTH) return 0;
    WouldBe d0, d1;
    if (uop_op(u) == OP_ADD) {
        int r0 = divides_rec(u->src[0], v, depth + 1, &d0);
        if (r0 <= 0) return r0;
        int r1 = divides_rec(u->src[1], v, depth + 1, &d1);
        if (r1 <= 0) return r1;
        *out = wb_add(u->dtype, d0, d1);
        return out->known ? 1 : -1;
    }
    if (uop_op(u) == OP_MUL) {
        int r0 = divides_rec(u->src[0], v, depth + 1, &d0);
        if (r0 < 0) return -1;
        if (r0 == 1) {
            *out = wb_mul(u->dtype, d0, wb_of(u->src[1]));
            return out->known ? 1 : -1;
        }
        int r1 = divides_rec(u->src[1], v, depth + 1, &d1);
        if (r1 <= 0) return r1;
        *out = wb_mul(u->dtype, wb_of(u->src[0]), d1);
        return out->known ? 1 : -1;
    }
    return 0;
}

int wb_divides(const UOp *u, int64_t v, WouldBe *out) { return divides_rec(u, v, 0, out); }
