/* early_mops.c - movement ops left in a kernel graph (tinygrad's pm_mops)
 * and nested pointer INDEX (pm_syntactic_sugar).
 *
 * An INDEX of a movement op indexes the op's source instead, with the index
 * expressions carried back through the op: SHRINK adds the offset, PERMUTE
 * reorders, FLIP mirrors, EXPAND pins broadcast axes to 0, PAD gates the
 * index with its valid range (Invalid outside), RESHAPE ravels the indices
 * to one number and unravels it into the source's shape.  A movement op
 * under AFTER moves out of it; one under END is dropped (END only orders). */
#include <stdio.h>
#include <string.h>
#include "stage_rules.h"
#include "early.h"
#include "../sched/shape.h"
#include "../sym/sym_helpers.h"
#include "../sym/symbolic.h"


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

/* A movement op's constant operands: the new shape (RESHAPE, EXPAND), the
 * order (PERMUTE), the flags (FLIP), begin/end (PAD, SHRINK). */
typedef struct MopArgs {
    int n;
    int64_t a[SHAPE_MAX_DIMS], b[SHAPE_MAX_DIMS];
} MopArgs;

static bool mop_args(const UOp *r, MopArgs *m) {
    int nb = 0;
    switch (uop_op(r)) {
    case OP_RESHAPE:
    case OP_EXPAND: return r->nsrc >= 2 && uop_int_vector(r->src[1], m->a, SHAPE_MAX_DIMS, &m->n);
    case OP_PERMUTE:
    case OP_FLIP: return int_tuple(r->arg, m->a, SHAPE_MAX_DIMS, &m->n);
    case OP_PAD:
    case OP_SHRINK:
        return r->nsrc >= 3 && uop_int_vector(r->src[1], m->a, SHAPE_MAX_DIMS, &m->n) &&
               uop_int_vector(r->src[2], m->b, SHAPE_MAX_DIMS, &nb) && nb == m->n;
    default: return false;
    }
}

/* The shape of a movement op's source.  Kernel buffers (DEFINE_GLOBAL,
 * DEFINE_LOCAL, DEFINE_REG) are (size,); movement ops on them are followed
 * here; anything else is asked of uop_shape. */
static bool source_shape(const UOp *u, Shape *out, char *err, size_t errlen) {
    Op op = uop_op(u);
    if ((op == OP_DEFINE_GLOBAL || op == OP_DEFINE_LOCAL || op == OP_DEFINE_REG) && dt_is_ptr(u->dtype)) {
        out->ndim = 1;
        out->d[0] = u->dtype->size;
        return true;
    }
    if (!op_is(op, OPF_MOVEMENT)) return uop_shape(u, out, err, errlen);
    Shape in;
    MopArgs m;
    if (!source_shape(u->src[0], &in, err, errlen)) return false;
    if (!mop_args(u, &m)) {
        snprintf(err, errlen, "%s %%%u: its operands are not constant", op_name(op), u->id);
        return false;
    }
    if (op != OP_RESHAPE && m.n != in.ndim) {
        snprintf(err, errlen, "%s %%%u: %d operands for a %d-d source", op_name(op), u->id, m.n, in.ndim);
        return false;
    }
    out->ndim = m.n;
    for (int i = 0; i < m.n; i++) {
        switch (op) {
        case OP_RESHAPE:
        case OP_EXPAND: out->d[i] = m.a[i]; break;
        case OP_PERMUTE:
            if (m.a[i] < 0 || m.a[i] >= in.ndim) {
                snprintf(err, errlen, "PERMUTE %%%u: invalid permutation", u->id);
                return false;
            }
            out->d[i] = in.d[m.a[i]];
            break;
        case OP_PAD: out->d[i] = in.d[i] + m.a[i] + m.b[i]; break;
        case OP_SHRINK: out->d[i] = m.b[i] - m.a[i]; break;
        default: out->d[i] = in.d[i]; break;
        }
    }
    return true;
}

static const UOp *kidx(UCtx *c, int64_t v) { return uop_const_int(c, DT_INDEX, v); }

static const UOp *simplified(UCtx *c, const UOp *u) { return u ? uop_simplify(c, u, "sym", NULL) : NULL; }

/* The index expressions of r's source, from those of r (idx[n]).  False
 * with a message in err. */
static bool index_through(UCtx *c, const UOp *r, const UOp *const *idx, int n, const UOp **out, int *nout,
                          char *err, size_t errlen) {
    Op op = uop_op(r);
    Shape in;
    MopArgs m;
    if (!source_shape(r->src[0], &in, err, errlen)) return false;
    if (!mop_args(r, &m)) {
        snprintf(err, errlen, "%s %%%u: its operands are not constant", op_name(op), r->id);
        return false;
    }
    if (n != m.n || (op != OP_RESHAPE && m.n != in.ndim)) {
        snprintf(err, errlen, "%s %%%u of %d dims is indexed with %d indices", op_name(op), r->id, m.n, n);
        return false;
    }
    *nout = op == OP_RESHAPE ? in.ndim : n;
    switch (op) {
    case OP_SHRINK:
        for (int i = 0; i < n; i++) out[i] = m.a[i] == 0 ? idx[i] : sym_addc(c, idx[i], m.a[i]);
        break;
    case OP_PERMUTE:
        for (int i = 0; i < n; i++) {
            if (m.a[i] < 0 || m.a[i] >= n) {
                snprintf(err, errlen, "PERMUTE %%%u: invalid permutation", r->id);
                return false;
            }
            out[m.a[i]] = idx[i];
        }
        break;
    case OP_FLIP:
        for (int i = 0; i < n; i++) out[i] = m.a[i] ? sym_add(c, kidx(c, in.d[i] - 1), sym_neg(c, idx[i])) : idx[i];
        break;
    case OP_EXPAND:
        for (int i = 0; i < n; i++) out[i] = in.d[i] == m.a[i] ? idx[i] : sym_const_like(c, idx[i], 0);
        break;
    case OP_PAD:
        for (int i = 0; i < n; i++) {
            if (m.a[i] == 0 && m.b[i] == 0) {
                out[i] = idx[i];
                continue;
            }
            /* valid where begin <= i < begin + size */
            const UOp *ge = sym_not(c, sym_bin(c, OP_CMPLT, idx[i], kidx(c, m.a[i])));
            const UOp *lt = sym_bin(c, OP_CMPLT, idx[i], kidx(c, in.d[i] + m.a[i]));
            const UOp *valid = simplified(c, sym_bin(c, OP_AND, ge, lt));
            const UOp *inv = uop_const_arg(c, DT_INDEX, arg_invalid(c));
            out[i] = valid && inv ? uop_where(c, valid, sym_addc(c, idx[i], -m.a[i]), inv) : NULL;
        }
        break;
    case OP_RESHAPE: {
        /* ravel the output indices, then unravel into the source's shape */
        const UOp *flat = kidx(c, 0);
        int64_t acc = 1;
        for (int i = n - 1; i >= 0; i--) {
            flat = sym_add(c, flat, sym_bin(c, OP_MUL, idx[i], kidx(c, acc)));
            acc *= m.a[i];
        }
        for (int i = in.ndim - 1; i >= 0; i--) {
            out[i] = simplified(c, sym_bin(c, OP_MOD, flat, kidx(c, in.d[i])));
            flat = sym_bin(c, OP_IDIV, flat, kidx(c, in.d[i]));
        }
        break;
    }
    default:
        snprintf(err, errlen, "%%%u is not a movement op", r->id);
        return false;
    }
    for (int i = 0; i < *nout; i++)
        if (!out[i]) {
            snprintf(err, errlen, "%s %%%u: %s", op_name(op), r->id, uctx_error(c));
            return false;
        }
    return true;
}

/* INDEX(mop(x), i...) -> INDEX(x, i'...) */
static const UOp *index_on_mop(const Match *m, void *ud) {
    (void)ud;
    const UOp *idx = m->root, *r = match_get(m, "r");
    const UOp *out[SHAPE_MAX_DIMS + 1];
    int nout = 0;
    char err[300];
    if (idx->nsrc - 1 > SHAPE_MAX_DIMS) {
        rewrite_fail(m, "INDEX %%%u has too many indices", idx->id);
        return NULL;
    }
    if (!index_through(m->ctx, r, idx->src + 1, idx->nsrc - 1, out + 1, &nout, err, sizeof err)) {
        rewrite_fail(m, "INDEX %%%u: %s", idx->id, err);
        return NULL;
    }
    out[0] = r->src[0];
    return uop_intern(m->ctx, OP_INDEX, idx->dtype, out, nout + 1, idx->arg, idx->tag);
}

/* AFTER(mop(x), deps...) -> mop(AFTER(x, deps...)) */
static const UOp *mop_out_of_after(const Match *m, void *ud) {
    (void)ud;
    const UOp *a = m->root, *r = match_get(m, "r");
    const UOp *asrc[a->nsrc];
    asrc[0] = r->src[0];
    for (int i = 1; i < a->nsrc; i++) asrc[i] = a->src[i];
    const UOp *after = uop_intern(m->ctx, OP_AFTER, a->dtype, asrc, a->nsrc, a->arg, NULL);
    if (!after) return NULL;
    const UOp *rsrc[r->nsrc];
    rsrc[0] = after;
    for (int i = 1; i < r->nsrc; i++) rsrc[i] = r->src[i];
    return uop_intern(m->ctx, uop_op(r), r->dtype, rsrc, r->nsrc, r->arg, a->tag);
}

/* END(mop(x), ranges...) -> END(x, ranges...) */
static const UOp *mop_out_of_end(const Match *m, void *ud) {
    (void)ud;
    const UOp *e = m->root;
    const UOp *src[e->nsrc];
    src[0] = match_get(m, "r")->src[0];
    for (int i = 1; i < e->nsrc; i++) src[i] = e->src[i];
    return uop_with_src(m->ctx, e, src, e->nsrc);
}

/* INDEX(INDEX(buf, i) as a pointer, j) -> INDEX(buf, i, j) */
static const UOp *concat_index(const Match *m, void *ud) {
    (void)ud;
    const UOp *outer = m->root, *inner = match_get(m, "inner");
    if (!dt_is_ptr(inner->dtype) || dt_is_ptr(outer->dtype)) return NULL;
    int n = inner->nsrc + outer->nsrc - 1;
    const UOp *src[n];
    for (int i = 0; i < inner->nsrc; i++) src[i] = inner->src[i];
    for (int i = 1; i < outer->nsrc; i++) src[inner->nsrc + i - 1] = outer->src[i];
    return uop_with_src(m->ctx, outer, src, n);
}

static const RuleSpec MOPS_RULES[] = {
    RULE_FN("mop_on_index", "(INDEX r@{Movement} ...)", index_on_mop),
    RULE_FN("mop_out_of_after", "(AFTER r@{Movement} ...)", mop_out_of_after),
    RULE_FN("mop_out_of_end", "(END r@{Movement} ...)", mop_out_of_end),
};

static const RuleSpec SUGAR_RULES[] = {
    RULE_FN("index_concat", "(INDEX inner@(INDEX ...) ...)", concat_index),
};

const RuleTable pm_mops_rules = RULE_TABLE(MOPS_RULES);
const RuleTable pm_syntactic_sugar_rules = RULE_TABLE(SUGAR_RULES);
