/* sym_helpers.c - algebra helpers shared by the symbolic rule sets: node
 * building that passes NULL through, constants, sum/product splitting,
 * constant factors, exact division by structure, and operand order. */
#include "sym_helpers.h"
#include <string.h>
#include "bounds.h"

bool sym_const_int(const UOp *u, int64_t *out) {
    if (!u || uop_op(u) != OP_CONST || u->dtype->count != 1 || dt_is_ptr(u->dtype) || !u->arg) return false;
    if (u->arg->kind == ARG_INT) { *out = u->arg->v.i; return true; }
    if (u->arg->kind == ARG_BOOL) { *out = u->arg->v.b; return true; }
    return false;
}

bool sym_fits(const DType *dt, __int128 v) {
    if (dt_is_float(dt)) return true;
    return v >= dt_min_int(dt) && v <= dt_max_int(dt);
}

const UOp *sym_const_like(UCtx *c, const UOp *u, int64_t v) {
    if (!u) return NULL;
    const DType *dt = u->dtype;
    if (dt_is_ptr(dt)) return NULL;
    if (dt_is_bool(dt) && dt->count == 1) return uop_const_bool(c, v != 0);
    if (dt_is_float(dt)) return uop_const_float(c, dt, (double)v);
    if (!sym_fits(dt, v)) return NULL;
    return uop_const_int(c, dt, v);
}

const UOp *sym_bin(UCtx *c, Op op, const UOp *a, const UOp *b) {
    if (!a || !b) return NULL;
    return uop_binary(c, op, a, b);
}
const UOp *sym_add(UCtx *c, const UOp *a, const UOp *b) { return sym_bin(c, OP_ADD, a, b); }
const UOp *sym_mul(UCtx *c, const UOp *a, const UOp *b) { return sym_bin(c, OP_MUL, a, b); }

const UOp *sym_addc(UCtx *c, const UOp *a, int64_t v) {
    if (!a) return NULL;
    return v == 0 ? a : sym_add(c, a, sym_const_like(c, a, v));
}
const UOp *sym_mulc(UCtx *c, const UOp *a, int64_t v) {
    if (!a) return NULL;
    return v == 1 ? a : sym_mul(c, a, sym_const_like(c, a, v));
}
const UOp *sym_not(UCtx *c, const UOp *a) {
    if (!a) return NULL;
    return sym_bin(c, OP_CMPNE, a, uop_const_bool(c, true));
}
const UOp *sym_neg(UCtx *c, const UOp *a) {
    if (!a) return NULL;
    if (dt_is_bool(a->dtype)) return sym_not(c, a);
    return sym_mul(c, a, sym_const_like(c, a, -1));
}

const UOp *sym_sum(UCtx *c, const UOp *const *t, int n, const UOp *like) {
    if (n == 0) return sym_const_like(c, like, 0);
    const UOp *acc = t[0];
    for (int i = 1; i < n && acc; i++) acc = sym_add(c, acc, t[i]);
    return acc;
}

/* Each op node on the way down has a leaf beside the path, so a node depth
 * levels down means at least depth + 1 leaves: past depth max the split has
 * already failed, which keeps the recursion that shallow on any graph. */
static int split_into(const UOp *u, Op op, const UOp **out, int n, int max, int depth) {
    if (n < 0 || depth >= max) return -1;
    if (uop_op(u) == op && u->nsrc == 2) {
        n = split_into(u->src[0], op, out, n, max, depth + 1);
        return split_into(u->src[1], op, out, n, max, depth + 1);
    }
    if (n >= max) return -1;
    out[n] = u;
    return n + 1;
}
int sym_split(const UOp *u, Op op, const UOp **out, int max) { return max > 0 ? split_into(u, op, out, 0, max, 0) : -1; }

int64_t sym_gcd_int(int64_t a, int64_t b) {
    uint64_t x = a < 0 ? -(uint64_t)a : (uint64_t)a, y = b < 0 ? -(uint64_t)b : (uint64_t)b;
    while (y) { uint64_t t = x % y; x = y; y = t; }
    return x > INT64_MAX ? 0 : (int64_t)x;
}

static int64_t const_factor(const UOp *u, int depth) {
    int64_t v;
    if (sym_const_int(u, &v)) return v;
    if (depth >= SYM_MAX_DEPTH) return 1;
    if (uop_op(u) == OP_ADD) return sym_gcd_int(const_factor(u->src[0], depth + 1), const_factor(u->src[1], depth + 1));
    if (uop_op(u) == OP_MUL) {
        if (sym_const_int(u->src[0], &v)) return v;
        if (sym_const_int(u->src[1], &v)) return v;
    }
    return 1;
}
int64_t sym_const_factor(const UOp *u) { return const_factor(u, 0); }

static const UOp *divides(UCtx *c, const UOp *u, int64_t v, int depth) {
    if (!u || v == 0) return NULL;
    if (v == 1) return u;
    int64_t k;
    if (sym_const_int(u, &k)) return (k % v == 0 && !(k == INT64_MIN && v == -1)) ? sym_const_like(c, u, k / v) : NULL;
    if (depth >= SYM_MAX_DEPTH) return NULL;
    if (uop_op(u) == OP_ADD) {
        const UOp *d0 = divides(c, u->src[0], v, depth + 1), *d1 = d0 ? divides(c, u->src[1], v, depth + 1) : NULL;
        return d1 ? sym_add(c, d0, d1) : NULL;
    }
    if (uop_op(u) == OP_MUL) {
        const UOp *d0 = divides(c, u->src[0], v, depth + 1);
        if (d0) return sym_mul(c, d0, u->src[1]);
        const UOp *d1 = divides(c, u->src[1], v, depth + 1);
        if (d1) return sym_mul(c, u->src[0], d1);
    }
    return NULL;
}
const UOp *sym_divides(UCtx *c, const UOp *u, int64_t v) { return divides(c, u, v, 0); }

const UOp *sym_pop_const(const UOp *u, int64_t *k) {
    if (uop_op(u) == OP_ADD && sym_const_int(u->src[1], k)) return u->src[0];
    *k = 0;
    return u;
}

/* factor and constant of a product: u = fac * k */
static const UOp *pop_mul_const(const UOp *u, int64_t *k) {
    if (uop_op(u) == OP_MUL && sym_const_int(u->src[1], k)) return u->src[0];
    *k = 1;
    return u;
}

/* product of t[0..n) times k (k omitted when 1); like gives the dtype */
static const UOp *product(UCtx *c, const UOp *const *t, int n, int64_t k, const UOp *like) {
    const UOp *acc = n ? t[0] : NULL;
    for (int i = 1; i < n && acc; i++) acc = sym_mul(c, acc, t[i]);
    if (!acc) return n ? NULL : sym_const_like(c, like, k);
    return sym_mulc(c, acc, k);
}

static const UOp *divide_product(UCtx *c, const UOp *u, const UOp *v);

static const UOp *divide_exact(UCtx *c, const UOp *u, const UOp *v, int depth) {
    if (!u || !v) return NULL;
    if (u == v) return sym_const_like(c, u, 1);
    int64_t k;
    if (sym_const_int(v, &k)) return sym_divides(c, u, k);
    if (depth >= SYM_MAX_DEPTH) return NULL;
    if (uop_op(u) == OP_ADD) {
        const UOp *s0 = divide_exact(c, u->src[0], v, depth + 1), *s1 = s0 ? divide_exact(c, u->src[1], v, depth + 1) : NULL;
        return s1 ? sym_add(c, s0, s1) : NULL;
    }
    if (uop_op(u) == OP_MUL) return divide_product(c, u, v);
    return NULL;
}
const UOp *sym_divide_exact(UCtx *c, const UOp *u, const UOp *v) { return divide_exact(c, u, v, 0); }

/* u / v for a product u, by its factors (kept out of divide_exact so the
 * recursion's frames stay small) */
__attribute__((noinline)) static const UOp *divide_product(UCtx *c, const UOp *u, const UOp *v) {
    int64_t k1, k2;
    const UOp *fac = pop_mul_const(u, &k1), *dfac = pop_mul_const(v, &k2);
    if (k2 == 0 || k1 % k2 != 0) return NULL;
    const UOp *a[SYM_MAX_TERMS], *b[SYM_MAX_TERMS];
    int na = sym_split(fac, OP_MUL, a, SYM_MAX_TERMS), nb = sym_split(dfac, OP_MUL, b, SYM_MAX_TERMS);
    if (na < 0 || nb < 0) return NULL;
    bool used[SYM_MAX_TERMS] = {0};
    for (int j = 0; j < nb; j++) {
        int i = 0;
        while (i < na && (used[i] || a[i] != b[j])) i++;
        if (i == na) return NULL;
        used[i] = true;
    }
    const UOp *rest[SYM_MAX_TERMS];
    int nr = 0;
    for (int i = 0; i < na; i++)
        if (!used[i]) rest[nr++] = a[i];
    return product(c, rest, nr, k1 / k2, u);
}

const UOp *sym_gcd(UCtx *c, const UOp *const *t, int n) {
    if (n <= 0) return NULL;
    const UOp *common[SYM_MAX_TERMS];
    int ncommon = 0;
    int64_t g = 0;
    for (int i = 0; i < n; i++) {
        int64_t f = sym_const_factor(t[i]);
        if (f == 0) return NULL;
        const UOp *term = sym_divides(c, t[i], f);
        if (!term) return NULL;
        g = sym_gcd_int(g, f);
        const UOp *parts[SYM_MAX_TERMS];
        int np = sym_split(term, OP_MUL, parts, SYM_MAX_TERMS);
        if (np < 0) return NULL;
        if (i == 0) {
            memcpy(common, parts, (size_t)np * sizeof *parts);
            ncommon = np;
            continue;
        }
        bool used[SYM_MAX_TERMS] = {0};
        int keep = 0;
        for (int j = 0; j < ncommon; j++) {
            int k = 0;
            while (k < np && (used[k] || parts[k] != common[j])) k++;
            if (k < np) { used[k] = true; common[keep++] = common[j]; }
        }
        ncommon = keep;
    }
    /* a constant 1 left from divides is not a factor worth keeping */
    int keep = 0;
    for (int j = 0; j < ncommon; j++) {
        int64_t v;
        if (!sym_const_int(common[j], &v)) common[keep++] = common[j];
    }
    if (g == 0) return NULL;
    return product(c, common, keep, g, t[0]);
}

static int cmp_i64(int64_t a, int64_t b) { return a < b ? -1 : a > b; }

static int arg_order(const Arg *a, const Arg *b) {
    if (a == b) return 0;
    if (!a || !b) return a ? 1 : -1;
    if (a->kind != b->kind) return cmp_i64(a->kind, b->kind);
    switch (a->kind) {
    case ARG_INT: return cmp_i64(a->v.i, b->v.i);
    case ARG_FLOAT: return a->v.f < b->v.f ? -1 : a->v.f > b->v.f;
    case ARG_BOOL: return cmp_i64(a->v.b, b->v.b);
    case ARG_STR: { int r = strcmp(a->v.s, b->v.s); return r < 0 ? -1 : r > 0; }
    case ARG_OP: return cmp_i64(a->v.op, b->v.op);
    case ARG_AXIS: return cmp_i64(a->v.axis, b->v.axis);
    case ARG_DTYPE: return cmp_i64(a->v.dt->sk * 1000 + a->v.dt->count, b->v.dt->sk * 1000 + b->v.dt->count);
    case ARG_INVALID: return 0;
    case ARG_TUPLE:
        for (uint32_t i = 0; i < a->n && i < b->n; i++) {
            int r = arg_order(a->items[i], b->items[i]);
            if (r) return r;
        }
        return cmp_i64(a->n, b->n);
    }
    return 0;
}

static int order_rec(const UOp *a, const UOp *b, int depth) {
    if (a == b) return 0;
    if (a->op != b->op) return cmp_i64(a->op, b->op);
    int r = arg_order(a->arg, b->arg);
    if (r) return r;
    if (a->dtype != b->dtype) {
        r = cmp_i64(a->dtype->sk * 1000 + a->dtype->count, b->dtype->sk * 1000 + b->dtype->count);
        if (r) return r;
    }
    if (depth > 48) return cmp_i64(a->id, b->id);
    for (int i = 0; i < a->nsrc && i < b->nsrc; i++) {
        r = order_rec(a->src[i], b->src[i], depth + 1);
        if (r) return r;
    }
    if (a->nsrc != b->nsrc) return cmp_i64(a->nsrc, b->nsrc);
    return cmp_i64(a->id, b->id);
}
int sym_order(const UOp *a, const UOp *b) { return order_rec(a, b, 0); }

bool sym_bounds(const UOp *u, int64_t *lo, int64_t *hi) { return u && uop_bounds(u, lo, hi); }
