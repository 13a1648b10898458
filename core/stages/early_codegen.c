/* early_codegen.c - kernel clean-ups before the devectorizer (tinygrad's
 * rangeify_codegen): CONTIGUOUS and NOOP wrappers go, STORE loses its arg,
 * a broadcast of an AFTER (or a GEP of one) gets the dtype of its element,
 * and a value INDEX into a broadcast local buffer becomes a LOAD of the
 * vector it reads. */
#include "stage_rules.h"
#include "early.h"

static const UOp *unwrap(const Match *m, void *ud) {
    (void)ud;
    return m->root->src[0];
}

static const UOp *strip_store_arg(const Match *m, void *ud) {
    (void)ud;
    const UOp *s = m->root;
    if (!s->arg) return NULL;
    return uop_intern(m->ctx, OP_STORE, s->dtype, s->src, s->nsrc, NULL, s->tag);
}

/* a VECTORIZE whose sources are all the same AFTER */
static const UOp *broadcast_of_after(const UOp *v) {
    if (uop_op(v) != OP_VECTORIZE || v->nsrc < 1 || uop_op(v->src[0]) != OP_AFTER) return NULL;
    for (int i = 1; i < v->nsrc; i++)
        if (v->src[i] != v->src[0]) return NULL;
    return v->src[0];
}

static const DType *vec_of(const DType *dt, int n) {
    if (n == 1) return dt;
    return dt_is_ptr(dt) ? dt_ptr_vec(dt->ptr_scalar, n) : dt_vec(dt->scalar, n);
}

/* VECTORIZE(a, a, ...) of an AFTER a: the dtype is a's, n wide */
static const UOp *fix_broadcast_dtype(const Match *m, void *ud) {
    (void)ud;
    const UOp *b = m->root, *a = broadcast_of_after(b);
    if (!a || a->dtype->count != 1 || (dt_is_ptr(a->dtype) && a->dtype->v != 1)) return NULL;
    const DType *dt = vec_of(a->dtype, b->nsrc);
    if (!dt || dt == b->dtype) return NULL;
    return uop_intern(m->ctx, OP_VECTORIZE, dt, b->src, b->nsrc, b->arg, b->tag);
}

/* GEP(a) of an AFTER a: the dtype follows a's */
static const UOp *fix_gep_dtype(const Match *m, void *ud) {
    (void)ud;
    const UOp *g = m->root, *a = g->src[0];
    int n = g->arg && g->arg->kind == ARG_TUPLE ? (int)g->arg->n : 1;
    const DType *el = dt_is_ptr(a->dtype) ? a->dtype->ptr_scalar : a->dtype->scalar;
    const DType *dt = vec_of(el, n);
    if (!dt || dt == g->dtype) return NULL;
    return uop_intern(m->ctx, OP_GEP, dt, g->src, 1, g->arg, g->tag);
}

static bool is_local_after(const UOp *a) {
    return a && uop_op(a) == OP_AFTER && uop_op(a->src[0]) == OP_DEFINE_LOCAL;
}

/* INDEX(broadcast or GEP of AFTER(DEFINE_LOCAL), i...) as a value: a LOAD
 * of the pointer INDEX */
static const UOp *load_from_local(const Match *m, void *ud) {
    (void)ud;
    const UOp *idx = m->root, *dg = idx->src[0];
    if (dt_is_ptr(idx->dtype) || !dt_is_ptr(dg->dtype)) return NULL;
    bool ok = uop_op(dg) == OP_VECTORIZE ? is_local_after(broadcast_of_after(dg))
                                         : uop_op(dg) == OP_GEP && is_local_after(dg->src[0]);
    if (!ok) return NULL;
    const UOp *ptr = uop_intern(m->ctx, OP_INDEX, dg->dtype, idx->src, idx->nsrc, NULL, idx->tag);
    const DType *vt = dt_vec(dg->dtype->base->scalar, dg->dtype->v);
    if (!ptr || !vt) return NULL;
    return uop_new(m->ctx, OP_LOAD, vt, &ptr, 1, NULL);
}

static const RuleSpec CODEGEN_RULES[] = {
    RULE_FN("drop_contiguous", "(CONTIGUOUS ...)", unwrap),
    RULE_FN("drop_noop", "(NOOP _ ...)", unwrap),
    RULE_FN("strip_store_arg", "(STORE ...)", strip_store_arg),
    RULE_FN("fix_broadcast_dtype", "(VECTORIZE (AFTER ...) ...)", fix_broadcast_dtype),
    RULE_FN("local_broadcast_load", "(INDEX (VECTORIZE (AFTER (DEFINE_LOCAL) ...) ...) ...)", load_from_local),
    RULE_FN("fix_gep_dtype", "(GEP (AFTER ...))", fix_gep_dtype),
    RULE_FN("local_gep_load", "(INDEX (GEP (AFTER (DEFINE_LOCAL) ...)) ...)", load_from_local),
};

const RuleTable rangeify_codegen_rules = RULE_TABLE(CODEGEN_RULES);
