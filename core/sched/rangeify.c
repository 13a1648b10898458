/* rangeify.c - scheduler step 2: movement ops become index arithmetic.
 *
 * Each materialised node gets a RANGE per dim of its shape (LOOP; a size-1
 * dim gets the index 0 instead).  Its value is then built at those indices,
 * walking the tensor graph towards the inputs with one index expression per
 * dim of the node being visited, as v0.12.0's apply_movement_op builds them:
 *   RESHAPE   the flat position in the new shape, unflattened in the old one
 *             with % and //, simplified with symbolic + pm_simplify_valid +
 *             pm_drop_and_clauses (sched_reshape_indices); adjacent
 *             RESHAPEs as one, as v0.12.0's mop_cleanup merges them
 *   EXPAND    a broadcast dim reads index 0
 *   PERMUTE   the expressions are permuted back
 *   SHRINK    i + start
 *   FLIP      (n-1) + i*-1
 *   PAD       WHERE(valid, i + -before, Invalid) with the valid
 *             before <= i < before + n simplified; the value is
 *             WHERE(AND of the gates, x, 0), and the gated index carries the
 *             gate down to every read below
 *   REDUCE_AXIS  new REDUCE ranges for the reduced dims; REDUCE(value, ranges),
 *             less the ranges the value does not use (pm_reduce_unparented)
 *   a BUFFER   INDEX(buffer, flat index)
 *   another materialised node   INDEX(its BUFFERIZE, one index per dim it
 *             stores), flattened after the symbolic pass (bufferize.c)
 *   ALU ops   the same op on the sources' values at the same indices
 * The rest of the arithmetic is simplified once, over the whole graph, by
 * the symbolic pass at the end (symbolic_pass), as v0.12.0 does after its
 * rangeify; until then each tensor node's value carries the node's id as
 * its tag, as v0.12.0 tags them (tensor_tag).
 * The result of each materialised node is BUFFERIZE(value, ranges...) with
 * the tensor node's id as its arg; reads of it are INDEX(that BUFFERIZE, i...). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "reduce_unparented.h"
#include "schedule_internal.h"
#include "../sym/symbolic.h"
#include "reduce_collapse.h"
#include "../util/stack_guard.h"

/* An elementwise node (an ALU op, CAST, CONTIGUOUS) reads its sources at
 * its own indices, so a chain of them is built with an explicit stack
 * (elementwise_at); only the nodes that change the indices (movement ops,
 * PAD, REDUCE_AXIS) recurse, under a stack guard that stops with an error
 * naming the depth rather than overflowing the stack. */

/* one elementwise node being built: its sources' values so far */
typedef struct EwFrame {
    const UOp *x;
    const UOp *const *idx;   /* the indices it is read at; NULL for a scalar */
    uint64_t mk;             /* its memo key */
    int next;                /* the next source to build */
    const UOp *v[3];
} EwFrame;

typedef struct Rangeify {
    SchedState *st;
    UCtx *c;
    const UOp *root;      /* the materialised node being built */
    U64Map memo;          /* (node id, key id) -> value; per root */
    U64Map inlined;       /* inlined node id -> SINK(its value at its own ranges, those ranges...) */
    const UOp *own_ranges_of; /* the inlined node being built at its own ranges */
    const UOp *zero, *yes;
    StackGuard guard;
    int depth;            /* value_at calls in progress, for the error */
    EwFrame *ew;          /* the elementwise stack, shared by nested builds */
    size_t ew_len, ew_cap;
} Rangeify;

static const UOp *value_at(Rangeify *R, const UOp *x, const UOp *const *idx);

static bool built(Rangeify *R, const UOp *x, const UOp *u) {
    if (u) return true;
    sched_fail(R->st, x, "rangeify could not build an index or value: %s", uctx_error(R->c));
    return false;
}

static const UOp *iconst(Rangeify *R, int64_t v) { return uop_const_int(R->c, DT_INDEX, v); }

/* INDEX(buf, idx): a BUFFER is one-dimensional and read at its index as it
 * is (flattened first if the node read has more dims); a materialised node
 * at one index per dim of what its BUFFERIZE stores, as v0.12.0 reads it:
 * the symbolic pass simplifies each of them, gate and all, and only then
 * does bufferize_to_store flatten them into the buffer's row-major index.
 * A read under a pad is gated by the WHERE(valid, i, Invalid) its index
 * carries. */
__attribute__((noinline)) static const UOp *read_at(Rangeify *R, const UOp *x, const UOp *buf, const UOp *const *idx) {
    UCtx *c = R->c;
    const Shape *s = sched_shape(R->st, x);
    const UOp *src[1 + SHAPE_MAX_DIMS] = {buf};
    int nsrc = 1 + s->ndim;
    const int ps = sched_pos(R->st, x);
    const int m = uop_op(buf) == OP_BUFFERIZE && ps >= 0 ? R->st->mat_of[ps] : -1;
    if (m >= 0 && R->st->held[m] != x) {
        /* stored without its dead axes: read through the EXPAND (index 0)
         * and the RESHAPE to the axes it stores, as v0.12.0 reads it */
        const Shape *stored = &R->st->stored[m];
        Shape held; /* x's shape with 1 on the dead axes: the SHRINK's ends */
        if (!uop_int_vector(R->st->held[m]->src[2], held.d, SHAPE_MAX_DIMS, &held.ndim) || held.ndim != s->ndim)
            return sched_fail(R->st, x, "a buffer stored without its dead axes has no shape"), NULL;
        const UOp *eidx[SHAPE_MAX_DIMS];
        for (int d = 0; d < s->ndim; d++) eidx[d] = held.d[d] == s->d[d] ? idx[d] : R->zero;
        if (!sched_reshape_indices(c, stored, &held, eidx, src + 1)) return built(R, x, NULL), NULL;
        nsrc = 1 + stored->ndim;
    } else if (uop_op(buf) == OP_BUFFERIZE) {
        for (int d = 0; d < s->ndim; d++) src[1 + d] = idx[d];
    } else {
        src[1] = s->ndim == 1 ? idx[0] : sched_flat_index(c, s, idx);
        nsrc = 2;
        if (!built(R, x, src[1])) return NULL;
    }
    /* a 0-d node is read at index 0 of its one-element buffer */
    if (nsrc == 1) src[nsrc++] = R->zero;
    const UOp *r = uop_new(c, OP_INDEX, x->dtype, src, nsrc, NULL);
    if (built(R, x, r)) SCHED_NOTE(R->st, "rangeify_index", x, r);
    return r;
}

static const UOp *new_range(Rangeify *R, int64_t size, AxisType at) {
    return size == 1 ? R->zero : uop_range(R->c, iconst(R, size), R->st->next_range++, at);
}

static const char *movement_rule(Op op) {
    switch (op) {
    case OP_RESHAPE: return "rangeify_reshape";
    case OP_EXPAND: return "rangeify_expand";
    case OP_PERMUTE: return "rangeify_permute";
    case OP_SHRINK: return "rangeify_shrink";
    case OP_FLIP: return "rangeify_flip";
    default: return "rangeify_pad";
    }
}

/* The source indices of a movement op (not PAD), built as v0.12.0's
 * apply_movement_op builds them: a RESHAPE through sched_reshape_indices
 * (simplified there), the others as plain arithmetic left to the symbolic
 * pass: SHRINK i + start, FLIP (n-1) + i*-1, EXPAND 0 on a broadcast dim.
 * (split_reduce.c pushes indices down movement ops with it too.) */
bool sched_movement_indices(SchedState *st, const UOp *x, const UOp *const *idx, const UOp **sidx) {
    UCtx *c = st->c;
    const Shape *in = sched_shape(st, x->src[0]), *out = sched_shape(st, x);
    const UOp *zero = uop_const_int(c, DT_INDEX, 0);
    bool ok = zero != NULL;
    switch (uop_op(x)) {
    case OP_RESHAPE:
        ok = ok && sched_reshape_indices(c, in, out, idx, sidx);
        break;
    case OP_EXPAND:
        for (int d = 0; d < in->ndim; d++) sidx[d] = in->d[d] == out->d[d] ? idx[d] : zero;
        break;
    case OP_PERMUTE:
        for (int d = 0; d < out->ndim; d++) sidx[x->arg->items[d]->v.i] = idx[d];
        break;
    case OP_FLIP:
        for (int d = 0; ok && d < in->ndim; d++) {
            const Arg *f = x->arg->items[d];
            bool flip = f->kind == ARG_BOOL ? f->v.b : f->v.i != 0;
            sidx[d] = flip ? uop_binary(c, OP_ADD, uop_const_int(c, DT_INDEX, in->d[d] - 1),
                                        uop_binary(c, OP_MUL, idx[d], uop_const_int(c, DT_INDEX, -1)))
                           : idx[d];
            ok = sidx[d] != NULL;
        }
        break;
    case OP_SHRINK: {
        int64_t begin[SHAPE_MAX_DIMS];
        int nb;
        uop_int_vector(x->src[1], begin, SHAPE_MAX_DIMS, &nb);
        for (int d = 0; ok && d < in->ndim; d++) {
            sidx[d] = begin[d] == 0 ? idx[d] : uop_binary(c, OP_ADD, idx[d], uop_const_int(c, DT_INDEX, begin[d]));
            ok = sidx[d] != NULL;
        }
        break;
    }
    default: return sched_fail(st, x, "not a movement op");
    }
    if (!ok) sched_fail(st, x, "rangeify could not build an index or value: %s", uctx_error(c));
    return ok;
}

/* A padded dim i reads i - before where before <= i < before + n, as
 * v0.12.0 writes it: the valid ((i < before) != true) & (i < before + n),
 * simplified, gates the index, WHERE(valid, i + -before, Invalid), and the
 * PAD's value is WHERE(the AND of its index gates, x, 0). */
__attribute__((noinline)) static const UOp *pad_at(Rangeify *R, const UOp *x, const UOp *const *idx) {
    UCtx *c = R->c;
    const Shape *in = sched_shape(R->st, x->src[0]);
    int64_t before[SHAPE_MAX_DIMS], after[SHAPE_MAX_DIMS];
    int nb, na;
    uop_int_vector(x->src[1], before, SHAPE_MAX_DIMS, &nb);
    uop_int_vector(x->src[2], after, SHAPE_MAX_DIMS, &na);
    const UOp *sidx[SHAPE_MAX_DIMS];
    const UOp *invalid = uop_const_arg(c, DT_INDEX, arg_invalid(c));
    const UOp *all_valid = R->yes;
    for (int d = 0; d < in->ndim; d++) {
        sidx[d] = idx[d];
        if (before[d] != 0 || after[d] != 0) {
            const UOp *ge = uop_binary(c, OP_CMPNE, uop_binary(c, OP_CMPLT, idx[d], iconst(R, before[d])), R->yes);
            const UOp *v = uop_binary(c, OP_AND, ge, uop_binary(c, OP_CMPLT, idx[d], iconst(R, in->d[d] + before[d])));
            v = v ? uop_simplify(c, v, "symbolic + pm_simplify_valid", NULL) : NULL;
            const UOp *shifted = uop_binary(c, OP_ADD, idx[d], iconst(R, -before[d]));
            sidx[d] = v && shifted && invalid ? uop_where(c, v, shifted, invalid) : NULL;
            if (!built(R, x, sidx[d])) return NULL;
        }
        /* get_valid: the gate of a gated index, true for a plain one */
        const UOp *g = uop_op(sidx[d]) == OP_WHERE && sidx[d]->src[2] == invalid ? sidx[d]->src[0] : R->yes;
        all_valid = uop_binary(c, OP_AND, all_valid, g);
        if (!built(R, x, all_valid)) return NULL;
    }
    const UOp *v = value_at(R, x->src[0], sidx);
    if (!v) return NULL;
    const UOp *zero = uop_const_int(c, x->dtype, 0);
    const UOp *r = zero ? uop_where(c, all_valid, v, zero) : NULL;
    if (built(R, x, r)) SCHED_NOTE(R->st, "rangeify_pad", x, r);
    return r;
}

/* The tag of the value built for tensor node x until the symbolic pass
 * after rangeify is done: v0.12.0 tags each tensor node before its
 * rangeify and removes the tags after, so values of two tensor nodes that
 * rangeify to the same expression stay two nodes for that pass */
static const Arg *tensor_tag(Rangeify *R, const UOp *x) { return arg_int(R->c, x->id); }

__attribute__((noinline)) static const UOp *reduce_at(Rangeify *R, const UOp *x, const UOp *const *idx) {
    UCtx *c = R->c;
    Op rop = x->arg->items[0]->v.op;
    if (rop != OP_ADD && rop != OP_MAX && rop != OP_MUL)
        return sched_fail(R->st, x, "reduce op %s is not ADD, MAX or MUL", op_name(rop)), NULL;
    const Shape *in = sched_shape(R->st, x->src[0]);
    const UOp *sidx[SHAPE_MAX_DIMS], *src[SHAPE_MAX_DIMS + 1];
    bool red[SHAPE_MAX_DIMS] = {false};
    const Arg *axes = x->arg->items[1];
    for (uint32_t a = 0; a < axes->n; a++) red[axes->items[a]->v.i] = true;
    /* a reduction over an empty axis is the identity (v0.12.0 folds it before rangeify) */
    for (int d = 0; d < in->ndim; d++)
        if (red[d] && in->d[d] == 0) {
            const UOp *id = reduce_identity(c, rop, x->dtype);
            if (!built(R, x, id)) return NULL;
            SCHED_NOTE(R->st, "reduce_empty", x, id);
            return id;
        }
    int nr = 0;
    for (int d = 0; d < in->ndim; d++) {
        if (!red[d]) { sidx[d] = idx[d]; continue; }
        sidx[d] = new_range(R, in->d[d], AXIS_REDUCE);
        if (!built(R, x, sidx[d])) return NULL;
        if (sidx[d] != R->zero) src[1 + nr++] = sidx[d];
    }
    const UOp *v = value_at(R, x->src[0], sidx);
    if (!v || nr == 0) return v;
    src[0] = v;
    const UOp *r = uop_new_tagged(c, OP_REDUCE, x->dtype, src, 1 + nr, arg_op(c, rop), tensor_tag(R, x));
    if (!built(R, x, r)) return NULL;
    SCHED_NOTE(R->st, "rangeify_reduce", x, r);
    /* ranges the value does not use (a reduced broadcast dim) go */
    const UOp *d = reduce_drop_unparented(c, r);
    if (!built(R, x, d)) return NULL;
    if (d != r) SCHED_NOTE(R->st, "reduce_unparented", x, d);
    return d;
}

/* a candidate for a buffer that is computed where it is read (see inline_at) */
static bool is_inlined(Rangeify *R, const UOp *x) {
    const int ps = sched_pos(R->st, x);
    return ps >= 0 && R->st->inlined && R->st->inlined[ps] && x != R->own_ranges_of;
}

/* a node built from its sources at its own indices (elementwise_at builds
 * these); false for a materialised node other than the root, which is read */
static bool is_elementwise(Rangeify *R, const UOp *x) {
    if (is_inlined(R, x)) return false;
    Op op = uop_op(x);
    bool ew = op == OP_CONTIGUOUS || op == OP_DETACH || op == OP_CONTIGUOUS_BACKWARD ||
              ((op_is_alu(op) || op == OP_CAST || op == OP_BITCAST) && x->nsrc <= 3);
    if (!ew) return false;
    const int ps = sched_pos(R->st, x);
    return !(ps >= 0 && R->st->mat_of[ps] >= 0 && x != R->root);
}

/* a movement op that is neither materialised nor the node being built: its
 * value is its source's at other indices */
static bool is_plain_movement(Rangeify *R, const UOp *x) {
    const int ps = sched_pos(R->st, x);
    return ps >= 0 && R->st->mat_of[ps] < 0 && !is_inlined(R, x) && x != R->root;
}

static const UOp *compute_at(Rangeify *R, const UOp *x, const UOp *const *idx) {
    UCtx *c = R->c;
    Op op = uop_op(x);
    const int ps = sched_pos(R->st, x);
    if (op == OP_BUFFER) return read_at(R, x, x, idx);
    if (ps >= 0 && R->st->mat_of[ps] >= 0 && x != R->root) {
        const UOp *buf = R->st->bufferize[R->st->mat_of[ps]];
        if (!buf) return sched_fail(R->st, x, "a materialised node read before it is built"), NULL;
        return read_at(R, x, buf, idx);
    }
    if (op == OP_CONST) {
        const UOp *r = uop_const_arg(c, x->dtype, x->arg);
        return built(R, x, r) ? r : NULL;
    }
    if (op == OP_PAD) return pad_at(R, x, idx);
    if (op_is(op, OPF_MOVEMENT)) {
        const UOp *sidx[SHAPE_MAX_DIMS], *src = x->src[0];
        /* adjacent RESHAPEs are one, as v0.12.0 merges them before its
         * rangeify (mop_cleanup): the indices go from x's shape to the
         * shape under them in one step */
        while (op == OP_RESHAPE && uop_op(src) == OP_RESHAPE && is_plain_movement(R, src)) src = src->src[0];
        if (src != x->src[0]) {
            if (!sched_reshape_indices(c, sched_shape(R->st, src), sched_shape(R->st, x), idx, sidx))
                return sched_fail(R->st, x, "rangeify could not build an index: %s", uctx_error(c)), NULL;
        } else if (!sched_movement_indices(R->st, x, idx, sidx)) {
            return NULL;
        }
        const UOp *r = value_at(R, src, sidx);
        if (r) SCHED_NOTE(R->st, movement_rule(op), x, r);
        return r;
    }
    if (op == OP_REDUCE_AXIS) return reduce_at(R, x, idx);
    return sched_fail(R->st, x, "the scheduler does not know this op"), NULL;
}

/* The value of x at idx when it needs no building (a CONST, or
 * in the memo): 1 with *out set.  Otherwise 0 with its memo key in *mk, or
 * -1 on error. */
static int value_known(Rangeify *R, const UOp *x, const UOp *const *idx, const UOp **out,
                       uint64_t *mk) {
    if (uop_op(x) == OP_CONST && x != R->root) {
        /* the same everywhere, with or without a DEVICE (a shape) */
        *out = uop_const_arg(R->c, x->dtype, x->arg);
        return built(R, x, *out) ? 1 : -1;
    }
    const Shape *s = sched_shape(R->st, x);
    if (!s) return sched_fail(R->st, x, "not part of the scheduled graph"), -1;
    if (s->ndim < 0) return sched_fail(R->st, x, "not a tensor (no shape)"), -1;
    /* the memo key: the indices as one interned node */
    const UOp *key = uop_intern(R->c, OP_SINK, DT_VOID, idx, s->ndim, NULL, NULL);
    if (!built(R, x, key)) return -1;
    *mk = (uint64_t)x->id << 32 | key->id;
    *out = u64map_get(&R->memo, *mk);
    return *out ? 1 : 0;
}

static bool remember(Rangeify *R, const UOp *x, uint64_t mk, const UOp *r) {
    return u64map_put(&R->memo, mk, r) || sched_fail(R->st, x, "out of memory");
}

static bool ew_push(Rangeify *R, const UOp *x, const UOp *const *idx, uint64_t mk) {
    if (R->ew_len == R->ew_cap) {
        size_t cap = R->ew_cap ? R->ew_cap * 2 : 64;
        EwFrame *f = realloc(R->ew, cap * sizeof *f);
        if (!f) return sched_fail(R->st, x, "out of memory");
        R->ew = f;
        R->ew_cap = cap;
    }
    R->ew[R->ew_len++] = (EwFrame){.x = x, .idx = idx, .mk = mk};
    return true;
}

static const UOp *value_build(Rangeify *R, const UOp *x, const UOp *const *idx, uint64_t mk);

/* x and the elementwise nodes below it, sources first, with an explicit
 * stack; the other sources through value_build.  mk is x's memo key. */
static const UOp *elementwise_at(Rangeify *R, const UOp *x, const UOp *const *idx, uint64_t mk) {
    const size_t base = R->ew_len;
    if (!ew_push(R, x, idx, mk)) return NULL;
    const UOp *r = NULL;
    while (R->ew_len > base) {
        EwFrame *f = &R->ew[R->ew_len - 1];
        const UOp *u = f->x;
        Op op = uop_op(u);
        bool pass = op == OP_CONTIGUOUS || op == OP_DETACH || op == OP_CONTIGUOUS_BACKWARD;
        int n = pass ? 1 : u->nsrc;
        if (f->next < n) {
            /* the next source: known, another elementwise node, or built by value_at */
            const UOp *s = u->src[f->next], *const *sidx = f->idx;
            if (!pass) {
                const Shape *sh = sched_shape(R->st, s);
                if (!sh || sh->ndim < 0) { sched_fail(R->st, u, "source %d is not a tensor", f->next); break; }
                if (sh->ndim == 0) sidx = NULL;
            }
            uint64_t smk;
            const UOp *v;
            int k = value_known(R, s, sidx, &v, &smk);
            if (k < 0) break;
            if (k == 0 && is_elementwise(R, s)) {
                if (!ew_push(R, s, sidx, smk)) break;
                continue;
            }
            if (k == 0 && !(v = value_build(R, s, sidx, smk))) break;
            R->ew[R->ew_len - 1].v[R->ew[R->ew_len - 1].next++] = v;
            continue;
        }
        r = pass ? f->v[0] : uop_intern(R->c, op, u->dtype, f->v, u->nsrc, u->arg, tensor_tag(R, u));
        if (!built(R, u, r) || !remember(R, u, f->mk, r)) { r = NULL; break; }
        R->ew_len--;
        if (R->ew_len > base) {
            EwFrame *p = &R->ew[R->ew_len - 1];
            p->v[p->next++] = r;
        }
    }
    bool ok = R->ew_len == base; /* every failure leaves frames on the stack */
    R->ew_len = base;
    return ok ? r : NULL;
}

/* substitution stops at reads of buffers: their indices are their own */
static bool is_read_of_buffer(const UOp *u) {
    Op op = uop_op(u);
    return op == OP_BUFFERIZE || op == OP_BUFFER;
}

/* A node that realize made a candidate for a buffer (read at different
 * indices) and then left without one is built as v0.12.0 builds it: once,
 * at RANGEs of its own, as if it had its buffer, and each read substitutes
 * its indices for those RANGEs (v0.12.0's remove_bufferize) rather than
 * pushing them through its movement ops, so what a read's gate would let
 * those ops simplify stays as v0.12.0 leaves it.  A reduction in the value
 * keeps its REDUCE ranges in every read, as v0.12.0's substitution does. */
static const UOp *inline_at(Rangeify *R, const UOp *x, const UOp *const *idx) {
    UCtx *c = R->c;
    const UOp *own = u64map_get(&R->inlined, x->id); /* SINK(value, ranges...) */
    const Shape *s = sched_shape(R->st, x);
    if (!own) {
        const UOp *src[1 + SHAPE_MAX_DIMS];
        for (int d = 0; d < s->ndim; d++)
            if (!built(R, x, src[1 + d] = new_range(R, s->d[d], AXIS_LOOP))) return NULL;
        const UOp *saved = R->own_ranges_of;
        R->own_ranges_of = x;
        src[0] = value_at(R, x, src + 1);
        R->own_ranges_of = saved;
        if (!src[0]) return NULL;
        own = uop_intern(c, OP_SINK, DT_VOID, src, 1 + s->ndim, NULL, NULL);
        if (!built(R, x, own)) return NULL;
        if (!u64map_put(&R->inlined, x->id, own)) return sched_fail(R->st, x, "out of memory"), NULL;
    }
    U64Map map = {0};
    bool ok = true;
    for (int d = 0; ok && d < s->ndim; d++)
        if (uop_op(own->src[1 + d]) == OP_RANGE) ok = u64map_put(&map, own->src[1 + d]->id, idx[d]);
    const UOp *r = ok ? sched_substitute_stop(c, own->src[0], &map, is_read_of_buffer) : NULL;
    u64map_free(&map);
    if (!ok) return sched_fail(R->st, x, "out of memory"), NULL;
    if (built(R, x, r)) SCHED_NOTE(R->st, "rangeify_inline", x, r);
    return r;
}

/* x at idx, which is not in the memo (mk is its key) */
static const UOp *value_build(Rangeify *R, const UOp *x, const UOp *const *idx, uint64_t mk) {
    if (is_inlined(R, x)) {
        const UOp *r = inline_at(R, x, idx);
        return r && remember(R, x, mk, r) ? r : NULL;
    }
    if (is_elementwise(R, x)) return elementwise_at(R, x, idx, mk);
    if (stack_guard_exceeded(&R->guard))
        return sched_fail(R->st, x, "graph too deep for the scheduler: %zu nested nodes (limit ~%d)",
                          uop_graph_depth(R->st->sink), R->depth), NULL;
    R->depth++;
    const UOp *r = compute_at(R, x, idx);
    R->depth--;
    return r && remember(R, x, mk, r) ? r : NULL;
}

static const UOp *value_at(Rangeify *R, const UOp *x, const UOp *const *idx) {
    const UOp *r;
    uint64_t mk;
    int k = value_known(R, x, idx, &r, &mk);
    if (k) return k > 0 ? r : NULL;
    return value_build(R, x, idx, mk);
}

/* the gate of the walk over a value: another buffer's ranges are its own */
static bool uses_no_buffer(const UOp *u, void *ud) {
    (void)ud;
    return is_read_of_buffer(u);
}

/* A materialised node whose value does not use the RANGE of an axis (a
 * gradient of a broadcast, a sum added to its own transpose) is stored
 * once along that axis, as v0.12.0's cleanup_dead_axes stores it: the
 * BUFFERIZE keeps the RANGEs of the axes the value uses, st->stored[i]
 * is their shape, and st->held[i] is the node SHRINKed to index 0 on the
 * others (what the buffer holds; the tensor is its EXPAND).  Not for a
 * CONTIGUOUS or a COPY (v0.12.0 always runs those whole) nor for a
 * constant (see below).  src and *nsrc are the BUFFERIZE's sources,
 * changed in place. */
static bool drop_dead_axes(Rangeify *R, int i, const UOp **src, int *nsrc) {
    SchedState *st = R->st;
    const UOp *m = st->mat[i];
    const Shape *s = sched_shape(st, m);
    if (uop_op(m) == OP_CONTIGUOUS || uop_op(m) == OP_COPY) return true;
    bool any_range = false;
    for (int d = 0; d < s->ndim; d++) any_range |= uop_op(src[1 + d]) == OP_RANGE;
    if (!any_range) return true;
    size_t n = 0;
    const UOp **topo = uop_toposort_gated(src[0], uses_no_buffer, NULL, &n);
    if (!topo) return sched_fail(st, m, "out of memory");
    bool live[SHAPE_MAX_DIMS] = {false}, dead = false, reads = false;
    for (size_t k = 0; k < n; k++) {
        reads |= uop_op(topo[k]) == OP_INDEX;
        if (uop_op(topo[k]) == OP_RANGE)
            for (int d = 0; d < s->ndim; d++) live[d] |= topo[k] == src[1 + d];
    }
    free(topo);
    for (int d = 0; d < s->ndim; d++) dead |= uop_op(src[1 + d]) == OP_RANGE && !live[d];
    /* a value that reads no buffer is a constant: v0.12.0 makes no kernel
     * for it, and the copy uopdb makes fills the whole tensor */
    if (!dead || !reads) return true;
    /* the BUFFERIZE keeps the live RANGEs; its shape is theirs */
    int64_t begin[SHAPE_MAX_DIMS], end[SHAPE_MAX_DIMS];
    Shape *stored = &st->stored[i];
    stored->ndim = 0;
    int k = 1;
    for (int d = 0; d < s->ndim; d++) {
        begin[d] = 0;
        end[d] = live[d] ? s->d[d] : 1;
        if (!live[d]) continue;
        stored->d[stored->ndim++] = s->d[d];
        src[k++] = src[1 + d];
    }
    *nsrc = k;
    const UOp *ssrc[3] = {m, sched_shape_vector(R->c, begin, s->ndim), sched_shape_vector(R->c, end, s->ndim)};
    const UOp *held = ssrc[1] && ssrc[2] ? uop_new(R->c, OP_SHRINK, m->dtype, ssrc, 3, NULL) : NULL;
    if (!built(R, m, held)) return false;
    st->held[i] = held;
    return true;
}

/* tinygrad's pass after rangeify: the whole graph, values and indices, is
 * simplified with `symbolic + pm_reduce_simplify` (constants folded, casts
 * and comparisons of constants gone, like terms combined, ranges a sum does
 * not use dropped, a sum that only counts along its range made arithmetic:
 * the arange fold).  Its rewrites go into the step's trace under their rule
 * names. */
static bool symbolic_pass(SchedState *st) {
    if (!st->nmat) return true;
    const UOp *root = uop_intern(st->c, OP_SINK, DT_VOID, st->bufferize, st->nmat, NULL, NULL);
    Trace t;
    trace_init(&t);
    sched_register_rulesets();
    const UOp *r = root ? uop_simplify(st->c, root, "symbolic + pm_reduce_simplify", st->trace ? &t : NULL) : NULL;
    if (r) r = sched_remove_tags(st->c, r);
    for (size_t i = 0; r && i < t.nrewrites; i++) {
        const TraceRewrite *w = &t.rewrites[i];
        sched_note(st, w->rule, w->file, w->line, w->before, w->after);
    }
    trace_free(&t);
    if (!r) return sched_fail(st, st->sink, "symbolic simplification after rangeify: %s", uctx_error(st->c));
    if (uop_op(r) != OP_SINK || r->nsrc != st->nmat) return sched_fail(st, st->sink, "symbolic simplification changed the outputs");
    for (int i = 0; i < st->nmat; i++) {
        if (uop_op(r->src[i]) != OP_BUFFERIZE) return sched_fail(st, st->mat[i], "symbolic simplification removed a BUFFERIZE");
        st->bufferize[i] = r->src[i];
    }
    return true;
}

bool sched_rangeify(SchedState *st) {
    Rangeify R = {.st = st, .c = st->c};
    stack_guard_init(&R.guard);
    R.zero = iconst(&R, 0);
    R.yes = uop_const_bool(st->c, true);
    size_t nm = st->nmat ? (size_t)st->nmat : 1;
    st->bufferize = calloc(nm, sizeof *st->bufferize);
    st->stored = calloc(nm, sizeof *st->stored);
    st->held = calloc(nm, sizeof *st->held);
    if (!st->bufferize || !st->stored || !st->held || !R.zero || !R.yes) return sched_fail(st, st->sink, "out of memory");
    bool ok = true;
    for (int i = 0; ok && i < st->nmat; i++) {
        const UOp *m = st->mat[i];
        const Shape *s = sched_shape(st, m);
        const UOp *src[1 + SHAPE_MAX_DIMS];
        for (int d = 0; ok && d < s->ndim; d++) {
            src[1 + d] = new_range(&R, s->d[d], AXIS_LOOP);
            ok = built(&R, m, src[1 + d]);
        }
        if (!ok) break;
        R.root = m;
        u64map_free(&R.memo);
        src[0] = value_at(&R, m, src + 1);
        if (!(ok = src[0] != NULL)) break;
        st->held[i] = m;
        st->stored[i] = *s;
        int nsrc = 1 + s->ndim;
        if (!(ok = drop_dead_axes(&R, i, src, &nsrc))) break;
        st->bufferize[i] = uop_new(st->c, OP_BUFFERIZE, m->dtype, src, nsrc, arg_int(st->c, m->id));
        if (!(ok = built(&R, m, st->bufferize[i]))) break;
        if (st->held[i] != m) SCHED_NOTE(st, "cleanup_dead_axes", m, st->held[i]);
        SCHED_NOTE(st, "rangeify_bufferize", m, st->bufferize[i]);
    }
    u64map_free(&R.memo);
    u64map_free(&R.inlined);
    free(R.ew);
    return ok && symbolic_pass(st);
}
