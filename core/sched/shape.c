/* shape.c - shape inference for tensor graphs, see shape.h. */
#include "shape.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int64_t shape_numel(const Shape *s) {
    int64_t n = 1;
    for (int i = 0; i < s->ndim; i++) n *= s->d[i];
    return n;
}

/* Whether every dim is non-negative and the dims, zeros counted as ones (so
 * strides fit too), multiply to at most SHAPE_MAX_NUMEL. */
static bool dims_fit(const int64_t *d, int n) {
    int64_t total = 1;
    for (int i = 0; i < n; i++) {
        if (d[i] < 0) return false;
        if (d[i] > 1 && total > SHAPE_MAX_NUMEL / d[i]) return false;
        if (d[i] > 1) total *= d[i];
    }
    return true;
}

bool shape_equal(const Shape *a, const Shape *b) {
    if (a->ndim != b->ndim) return false;
    for (int i = 0; i < a->ndim; i++)
        if (a->d[i] != b->d[i]) return false;
    return true;
}

void shape_format(StrBuf *sb, const Shape *s) {
    if (s->ndim < 0) { sb_puts(sb, "None"); return; }
    sb_putc(sb, '(');
    for (int i = 0; i < s->ndim; i++) sb_printf(sb, i ? ", %lld" : "%lld", (long long)s->d[i]);
    if (s->ndim == 1) sb_putc(sb, ',');
    sb_putc(sb, ')');
}

static bool const_int(const UOp *u, int64_t *v) { return uop_const_int_value(u, v); }

bool uop_int_vector(const UOp *v, int64_t *out, int max, int *n) {
    *n = 0;
    switch (uop_op(v)) {
    case OP_VCONST:
        if ((int)v->arg->n > max) return false;
        for (uint32_t i = 0; i < v->arg->n; i++) {
            const Arg *e = v->arg->items[i];
            if (!e || e->kind != ARG_INT) return false;
            out[(*n)++] = e->v.i;
        }
        return true;
    case OP_VECTORIZE:
        if (v->nsrc > max) return false;
        for (int i = 0; i < v->nsrc; i++)
            if (!const_int(v->src[i], &out[(*n)++])) return false;
        return true;
    case OP_CONST:
        if (max < 1) return false;
        *n = 1;
        return const_int(v, out);
    default: return false;
    }
}

/* an int tuple arg (PERMUTE order, REDUCE axes); bools count as 0/1 (FLIP) */
/* how many entries a shape vector carries (VCONST or VECTORIZE), -1 if none */
static int vector_len(const UOp *v) {
    if (uop_op(v) == OP_VCONST && v->arg) return (int)v->arg->n;
    if (uop_op(v) == OP_VECTORIZE) return v->nsrc;
    return -1;
}

static bool int_tuple(const Arg *a, int64_t *out, int max, int *n) {
    if (!a || a->kind != ARG_TUPLE || (int)a->n > max) return false;
    for (uint32_t i = 0; i < a->n; i++) {
        const Arg *e = a->items[i];
        if (!e || (e->kind != ARG_INT && e->kind != ARG_BOOL)) return false;
        out[i] = e->kind == ARG_INT ? e->v.i : e->v.b;
    }
    *n = (int)a->n;
    return true;
}

typedef struct ShapeCtx { char *err; size_t errlen; } ShapeCtx;

static bool failf(ShapeCtx *sc, const UOp *u, const char *what, const Shape *from, const int64_t *to, int nto) {
    StrBuf sb;
    sb_init(&sb);
    sb_puts(&sb, what);
    if (from) {
        sb_puts(&sb, ": ");
        shape_format(&sb, from);
    }
    if (to) {
        Shape t = {.ndim = nto};
        memcpy(t.d, to, (size_t)nto * sizeof *to);
        sb_puts(&sb, " -> ");
        shape_format(&sb, &t);
    }
    sb_printf(&sb, " at node %%%u (%s)", u->id, op_name(uop_op(u)));
    snprintf(sc->err, sc->errlen, "%s", sb_str(&sb));
    sb_free(&sb);
    return false;
}

static bool shape_of(ShapeCtx *sc, const UOp *u, const Shape *const *srcs, Shape *out) {
    Op op = uop_op(u);
    out->ndim = -1;
    const Shape *ps = u->nsrc ? srcs[0] : NULL;
    int64_t a[SHAPE_MAX_DIMS], b[SHAPE_MAX_DIMS];
    int na = 0, nb = 0;
    if (op_is(op, OPF_MOVEMENT) || op == OP_REDUCE_AXIS) {
        if (ps->ndim < 0) {
            /* a RESHAPE may give a shape to a shapeless source */
            if (op == OP_RESHAPE && u->nsrc > 1 && uop_int_vector(u->src[1], a, SHAPE_MAX_DIMS, &na)) {
                out->ndim = na;
                memcpy(out->d, a, (size_t)na * sizeof *a);
                return true;
            }
            return failf(sc, u, "a movement op needs a source with a shape", NULL, NULL, 0);
        }
        switch (op) {
        case OP_RESHAPE:
        case OP_EXPAND:
            if (u->nsrc < 2 || !uop_int_vector(u->src[1], a, SHAPE_MAX_DIMS, &na)) {
                if (u->nsrc >= 2 && vector_len(u->src[1]) > SHAPE_MAX_DIMS) {
                    char what[96];
                    snprintf(what, sizeof what, "too many dimensions: %d (a shape has at most %d)",
                             vector_len(u->src[1]), SHAPE_MAX_DIMS);
                    return failf(sc, u, what, NULL, NULL, 0);
                }
                return failf(sc, u, "the new shape must be constant", NULL, NULL, 0);
            }
            if (op == OP_RESHAPE) {
                for (int i = 0; i < na; i++)
                    if (a[i] < 0) return failf(sc, u, "bad reshape (negative size)", ps, a, na);
                if (!dims_fit(a, na)) return failf(sc, u, "too many elements (at most 2^56)", ps, a, na);
                Shape want = {.ndim = na};
                memcpy(want.d, a, (size_t)na * sizeof *a);
                if (shape_numel(&want) != shape_numel(ps)) return failf(sc, u, "bad reshape", ps, a, na);
            } else {
                bool ok = na == ps->ndim;
                for (int i = 0; ok && i < na; i++) ok = ps->d[i] == a[i] || (ps->d[i] == 1 && a[i] >= 0);
                if (!ok) return failf(sc, u, "bad expand", ps, a, na);
            }
            out->ndim = na;
            memcpy(out->d, a, (size_t)na * sizeof *a);
            return true;
        case OP_PERMUTE: {
            bool ok = int_tuple(u->arg, a, SHAPE_MAX_DIMS, &na) && na == ps->ndim;
            bool seen[SHAPE_MAX_DIMS] = {false};
            for (int i = 0; ok && i < na; i++) {
                ok = a[i] >= 0 && a[i] < na && !seen[a[i]];
                if (ok) seen[a[i]] = true;
            }
            if (!ok) return failf(sc, u, "invalid permutation", ps, NULL, 0);
            out->ndim = na;
            for (int i = 0; i < na; i++) out->d[i] = ps->d[a[i]];
            return true;
        }
        case OP_PAD:
        case OP_SHRINK: {
            if (u->nsrc < 3 || !uop_int_vector(u->src[1], a, SHAPE_MAX_DIMS, &na) ||
                !uop_int_vector(u->src[2], b, SHAPE_MAX_DIMS, &nb) || na != ps->ndim || nb != na)
                return failf(sc, u, op == OP_PAD ? "invalid pad" : "invalid shrink", ps, NULL, 0);
            out->ndim = na;
            for (int i = 0; i < na; i++) {
                if (op == OP_PAD) {
                    if (a[i] < 0 || b[i] < 0) return failf(sc, u, "invalid pad (negative)", ps, NULL, 0);
                    if (__builtin_add_overflow(ps->d[i], a[i], &out->d[i]) ||
                        __builtin_add_overflow(out->d[i], b[i], &out->d[i]) || out->d[i] > SHAPE_MAX_NUMEL)
                        return failf(sc, u, "pad too large (a dimension above 2^56)", ps, NULL, 0);
                } else {
                    if (!(0 <= a[i] && a[i] <= b[i] && b[i] <= ps->d[i]))
                        return failf(sc, u, "invalid shrink", ps, NULL, 0);
                    out->d[i] = b[i] - a[i];
                }
            }
            return true;
        }
        case OP_FLIP:
            if (!int_tuple(u->arg, a, SHAPE_MAX_DIMS, &na) || na != ps->ndim)
                return failf(sc, u, "bad flip", ps, NULL, 0);
            *out = *ps;
            return true;
        case OP_REDUCE_AXIS: {
            bool ok = u->arg && u->arg->kind == ARG_TUPLE && u->arg->n == 2 &&
                      int_tuple(u->arg->items[1], a, SHAPE_MAX_DIMS, &na);
            for (int i = 0; ok && i < na; i++) ok = a[i] >= 0 && a[i] < ps->ndim;
            if (!ok) return failf(sc, u, "invalid reduce axes", ps, NULL, 0);
            *out = *ps;
            for (int i = 0; i < na; i++) out->d[a[i]] = 1;
            return true;
        }
        default: return true;
        }
    }
    switch (op) {
    case OP_BUFFER:
        if (!u->arg || u->arg->kind != ARG_INT) return failf(sc, u, "BUFFER needs its size as the arg", NULL, NULL, 0);
        out->ndim = 1;
        out->d[0] = u->arg->v.i;
        return true;
    case OP_CONST:
    case OP_DEFINE_VAR:
    case OP_BIND:
        /* a tensor constant sits on a DEVICE */
        for (int i = 0; i < u->nsrc; i++)
            if (uop_op(u->src[i]) == OP_DEVICE) { out->ndim = 0; return true; }
        return true;
    case OP_REDUCE: case OP_MSTACK: case OP_MSELECT: case OP_DETACH: case OP_CONTIGUOUS:
    case OP_CONTIGUOUS_BACKWARD: case OP_AFTER: case OP_END:
        *out = *ps;
        return true;
    case OP_BITCAST: {
        *out = *ps;
        int64_t from = dt_itemsize(u->src[0]->dtype), to = dt_itemsize(u->dtype), bytes;
        if (ps->ndim > 0 && from != to) {
            if (to <= 0) return failf(sc, u, "BITCAST to a zero-size dtype", ps, NULL, 0);
            if (__builtin_mul_overflow(ps->d[ps->ndim - 1], from, &bytes))
                return failf(sc, u, "BITCAST: too many bytes", ps, NULL, 0);
            out->d[ps->ndim - 1] = bytes / to;
        }
        return true;
    }
    default: break;
    }
    /* a SINK gathers outputs of any shapes and has none itself */
    if (op == OP_SINK) return true;
    if (op_is_alu(op) || op == OP_CAST || op == OP_COPY || op == OP_ASSIGN || op == OP_NOOP || op == OP_GROUP ||
        op == OP_STORE) {
        int n = op == OP_ASSIGN && u->nsrc > 2 ? 2 : u->nsrc;
        for (int i = 0; i < n; i++) {
            if (srcs[i]->ndim < 0) continue;
            if (out->ndim < 0) *out = *srcs[i];
            else if (!shape_equal(out, srcs[i])) {
                StrBuf sb;
                sb_init(&sb);
                sb_puts(&sb, "shape mismatch: ");
                shape_format(&sb, out);
                sb_puts(&sb, " and ");
                shape_format(&sb, srcs[i]);
                snprintf(sc->err, sc->errlen, "%s at node %%%u (%s)", sb_str(&sb), u->id, op_name(op));
                sb_free(&sb);
                return false;
            }
        }
    }
    return true;
}

/* id -> index into the toposort: ids of one graph are unique, so a sorted
 * array of (id, index) pairs and a binary search are enough */
typedef struct IdIndex { uint32_t id; uint32_t at; } IdIndex;
static int by_id(const void *x, const void *y) {
    uint32_t a = ((const IdIndex *)x)->id, b = ((const IdIndex *)y)->id;
    return a < b ? -1 : a > b;
}

bool uop_shapes(const UOp *const *topo, size_t n, Shape *shapes, char *err, size_t errlen) {
    char dummy[8];
    ShapeCtx sc = {err && errlen ? err : dummy, err && errlen ? errlen : sizeof dummy};
    sc.err[0] = 0;
    IdIndex *index = malloc((n ? n : 1) * sizeof *index);
    bool ok = index != NULL;
    if (!ok) snprintf(sc.err, sc.errlen, "out of memory");
    for (size_t i = 0; ok && i < n; i++) index[i] = (IdIndex){topo[i]->id, (uint32_t)i};
    if (ok) qsort(index, n, sizeof *index, by_id);
    const Shape *inline_srcs[16];
    for (size_t i = 0; ok && i < n; i++) {
        const UOp *x = topo[i];
        const Shape **src_shapes = x->nsrc <= 16 ? inline_srcs : malloc(x->nsrc * sizeof *src_shapes);
        if (!src_shapes) { snprintf(sc.err, sc.errlen, "out of memory"); ok = false; break; }
        for (int k = 0; k < x->nsrc; k++) {
            IdIndex key = {x->src[k]->id, 0};
            const IdIndex *hit = bsearch(&key, index, n, sizeof *index, by_id);
            src_shapes[k] = &shapes[hit->at];
        }
        ok = shape_of(&sc, x, src_shapes, &shapes[i]);
        if (src_shapes != inline_srcs) free(src_shapes);
        if (ok && shapes[i].ndim > 0 && !dims_fit(shapes[i].d, shapes[i].ndim)) {
            StrBuf sb;
            sb_init(&sb);
            shape_format(&sb, &shapes[i]);
            bool negative = false;
            for (int d = 0; d < shapes[i].ndim; d++) negative = negative || shapes[i].d[d] < 0;
            snprintf(sc.err, sc.errlen, "the shape %s %s at node %%%u (%s)", sb_str(&sb),
                     negative ? "has a negative dimension" : "has too many elements (at most 2^56)", x->id,
                     op_name(uop_op(x)));
            sb_free(&sb);
            ok = false;
        }
    }
    free(index);
    return ok;
}

Shape *uop_graph_shapes(const UOp *u, const UOp ***topo, size_t *n, char *err, size_t errlen) {
    *topo = uop_toposort(u, n);
    Shape *shapes = *topo ? malloc(*n * sizeof *shapes) : NULL;
    if (!shapes && err && errlen) snprintf(err, errlen, "out of memory");
    if (shapes && uop_shapes(*topo, *n, shapes, err, errlen)) return shapes;
    free(shapes);
    free(*topo);
    *topo = NULL;
    return NULL;
}

bool uop_shape(const UOp *u, Shape *out, char *err, size_t errlen) {
    const UOp **topo;
    size_t n;
    Shape *shapes = uop_graph_shapes(u, &topo, &n, err, errlen);
    if (!shapes) return false;
    *out = shapes[n - 1];
    free(shapes);
    free(topo);
    return true;
}
