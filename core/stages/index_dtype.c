/* index_dtype.c - stage 15 (tinygrad v0.12.0's pm_lower_index_dtype +
 * load_store_indexing, run together to a fixed point): the abstract `index`
 * dtype becomes int32 where a node's value bounds fit int32, int64
 * otherwise.
 *
 * Each lowered node is wrapped as CAST(concrete -> index), so its users still
 * see an index; a user whose index sources are all such wrappers is lowered
 * in turn (CONST first, then ALU/WHERE/RANGE/VECTORIZE/SPECIAL/DEFINE_VAR/
 * BIND) and the wrappers are finally dropped where the index is consumed:
 * INDEX takes the concrete integer (an Invalid-gated index becomes a gated
 * INDEX), and SINK/NOOP/END take the node inside the wrapper. */
#include "stages.h"
#include <stdlib.h>
#include "stage_rules.h"
#include "uop_build.h"
#include "../sym/bounds.h"

#define CTX (m->ctx)
#define ROOT (m->root)
#define GET(n) match_get(m, n)

/* the index dtype with u's vector width */
static const DType *index_like(const UOp *u) { return dt_vec(DT_INDEX, dt_vcount(u->dtype)); }

/* int64 when u's value leaves the int32 range, else int32; as wide as u */
static const DType *select_dtype(const UOp *u) {
    int64_t lo, hi;
    bool fits = uop_bounds(u, &lo, &hi) && lo >= INT32_MIN && hi <= INT32_MAX;
    return dt_vec(fits ? DT_INT32 : DT_INT64, dt_vcount(u->dtype));
}

static const DType *least_upper(const DType *a, const DType *b) {
    const DType *s = dt_least_upper(a->scalar, b->scalar);
    return s ? s : DT_INT64;
}

static const UOp *wrap(UCtx *c, const UOp *u) { return u ? ub_cast(c, u, index_like(u)) : NULL; }

static const UOp *lower_binary(const Match *m, void *ud) {
    (void)ud;
    const UOp *u = ROOT, *x = GET("x"), *y = GET("y");
    const DType *dt = least_upper(least_upper(select_dtype(u), x->dtype), y->dtype);
    const UOp *r = uop_binary(CTX, uop_op(u), ub_cast(CTX, x, dt), ub_cast(CTX, y, dt));
    return ub_cast(CTX, r, u->dtype);
}

static const UOp *lower_const(const Match *m, void *ud) {
    (void)ud;
    const UOp *u = ROOT;
    if (u->arg && u->arg->kind == ARG_INVALID) return NULL;
    const UOp *r = uop_new(CTX, uop_op(u), select_dtype(u), NULL, 0, u->arg);
    return ub_cast(CTX, r, u->dtype);
}

static const UOp *lower_where(const Match *m, void *ud) {
    (void)ud;
    const UOp *x = GET("x"), *y = GET("y");
    const DType *dt = dt_vec(least_upper(x->dtype, y->dtype), dt_vcount(x->dtype));
    return wrap(CTX, uop_where(CTX, GET("cond"), ub_cast(CTX, x, dt), ub_cast(CTX, y, dt)));
}

static const UOp *lower_range(const Match *m, void *ud) {
    (void)ud;
    const UOp *end = GET("end");
    return wrap(CTX, uop_new(CTX, OP_RANGE, end->dtype, &end, 1, ROOT->arg));
}

static const UOp *lower_vectorize(const Match *m, void *ud) {
    (void)ud;
    const UOp *v = ROOT;
    if (v->nsrc == 0) return NULL;
    const DType *dt = select_dtype(v);
    const UOp **src = malloc((size_t)v->nsrc * sizeof *src);
    if (!src) return NULL;
    for (int i = 0; i < v->nsrc; i++) src[i] = ub_cast(CTX, v->src[i]->src[0], dt->scalar);
    const UOp *r = ub_node(CTX, OP_VECTORIZE, dt, src, v->nsrc, v->arg);
    free(src);
    return wrap(CTX, r);
}

static const UOp *lower_special(const Match *m, void *ud) {
    (void)ud;
    const UOp *var = GET("var");
    return wrap(CTX, ub_node(CTX, OP_SPECIAL, DT_INT32, &var, 1, ROOT->arg));
}

static const UOp *lower_define_var(const Match *m, void *ud) {
    (void)ud;
    return wrap(CTX, uop_new(CTX, OP_DEFINE_VAR, DT_INT32, ROOT->src, ROOT->nsrc, ROOT->arg));
}

static const UOp *lower_bind(const Match *m, void *ud) {
    (void)ud;
    const UOp *s[2] = {GET("var"), GET("val")};
    return wrap(CTX, ub_node(CTX, OP_BIND, s[0]->dtype, s, 2, ROOT->arg));
}

/* INDEX(buf, cond.where(idx, Invalid)) -> INDEX(buf, idx, cond) */
static const UOp *lower_invalid(const Match *m, void *ud) {
    (void)ud;
    const UOp *buf = GET("buf");
    return ub_index(CTX, buf->dtype, buf, GET("idx"), GET("cond"));
}

/* INDEX(buf, CAST(int)) -> INDEX(buf, int), keeping a gate */
static const UOp *index_drop_cast(const Match *m, void *ud) {
    (void)ud;
    const UOp *buf = GET("buf");
    return ub_index(CTX, buf->dtype, buf, GET("idx"), GET("valid"));
}

/* SINK/NOOP/END take the node inside an index wrapper; so does AFTER, whose
 * extra sources only order (v0.12.0 leaves index casts of RANGEs there) */
static const UOp *consumer_drop_cast(const Match *m, void *ud) {
    (void)ud;
    const UOp *n = ROOT;
    bool change = false;
    for (int i = 0; i < n->nsrc; i++) change |= uop_op(n->src[i]) == OP_CAST && n->src[i]->dtype == DT_INDEX;
    if (!change) return NULL;
    const UOp **src = malloc((size_t)n->nsrc * sizeof *src);
    if (!src) return NULL;
    for (int i = 0; i < n->nsrc; i++) {
        const UOp *s = n->src[i];
        src[i] = uop_op(s) == OP_CAST && s->dtype == DT_INDEX ? s->src[0] : s;
    }
    const UOp *r = uop_with_src(CTX, n, src, n->nsrc);
    free(src);
    return r;
}

/* load_store_indexing: a gate that is always true is no gate */
static const UOp *drop_true_gate(const Match *m, void *ud) {
    (void)ud;
    const UOp *buf = GET("buf");
    return ub_index(CTX, buf->dtype, buf, GET("x"), NULL);
}

static const RuleSpec lower_index_specs[] = {
    RULE_FN("lower_binary", "(Binary (CAST:index x) (CAST:index y))", lower_binary),
    RULE_FN("lower_const", "({CONST VCONST}:index)", lower_const),
    RULE_FN("lower_where", "(WHERE:index cond (CAST:index x) (CAST:index y))", lower_where),
    RULE_FN("lower_range", "(RANGE (CAST:index end))", lower_range),
    RULE_FN("lower_vectorize", "(VECTORIZE *(CAST:index _))", lower_vectorize),
    RULE_FN("lower_special", "(SPECIAL (CAST:index var))", lower_special),
    RULE_FN("lower_define_var", "(DEFINE_VAR:index)", lower_define_var),
    RULE_FN("lower_bind", "(BIND (CAST:index var) (CAST:index val@(CONST)))", lower_bind),
    RULE_FN("lower_invalid", "(INDEX buf (WHERE cond idx Invalid))", lower_invalid),
    RULE_FN("index_drop_cast", "(INDEX buf (CAST idx:ints))", index_drop_cast),
    RULE_FN("index_drop_cast_gated", "(INDEX buf (CAST idx:ints) valid)", index_drop_cast),
    RULE_FN("consumer_drop_cast", "({SINK NOOP END AFTER})", consumer_drop_cast),
};

static const RuleSpec load_store_indexing_specs[] = {
    RULE_FN("drop_true_gate", "(INDEX buf x true:bool)", drop_true_gate),
};

const RuleTable pm_lower_index_dtype_rules = RULE_TABLE(lower_index_specs);
const RuleTable load_store_indexing_rules = RULE_TABLE(load_store_indexing_specs);
