/* symbolic_fold.c - the first phase of the simplifier (tinygrad's
 * propagate_invalid and symbolic_simple): self folding, zero folding,
 * constant folding, bool arithmetic, casts and simple WHERE folding, plus
 * the canonical operand order of commutative index ops. */
#include <math.h>
#include "bounds.h"
#include "sym_helpers.h"
#include "sym_rules.h"

#define CTX (m->ctx)
#define ROOT (m->root)
#define GET(n) match_get(m, n)

static bool is_invalid(const UOp *u) {
    return u && uop_op(u) == OP_CONST && u->arg && u->arg->kind == ARG_INVALID;
}
static bool int_or_bool(const UOp *u) { return !dt_is_ptr(u->dtype) && (dt_is_int(u->dtype) || dt_is_bool(u->dtype)); }

/* ---- propagate_invalid ---- */
static const UOp *invalid_through_cast(const Match *m, void *ud) {
    (void)ud;
    return uop_cast(CTX, GET("x"), ROOT->dtype);
}

static bool binary_non_cmp(Op op) { return op_is(op, OPF_BINARY) && !op_is(op, OPF_COMPARISON); }

/* the captures, not the root's source order: a commutative op matches
 * with its sources swapped (the gate second), and the result puts the
 * gated value first either way, as v0.12.0 does */
static const UOp *invalid_through_alu(const Match *m, void *ud) {
    (void)ud;
    Op op = uop_op(ROOT);
    if (!op_is(op, OPF_BINARY)) return NULL;
    const UOp *cond = GET("cond"), *x = GET("x"), *y = GET("y");
    if (is_invalid(y)) return NULL;
    const UOp *inner = sym_bin(CTX, op, x, y);
    if (op_is(op, OPF_COMPARISON)) return inner;
    return inner ? uop_where(CTX, cond, inner, uop_const_arg(CTX, DT_INDEX, arg_invalid(CTX))) : NULL;
}

static const UOp *invalid_absorbs_alu(const Match *m, void *ud) {
    (void)ud;
    if (!binary_non_cmp(uop_op(ROOT))) return NULL;
    const UOp *i = GET("i"), *y = GET("y");
    if (!is_invalid(i) || y->dtype != DT_INDEX) return NULL;
    return i;
}

static const RuleSpec propagate_invalid_specs[] = {
    RULE_FN("invalid_through_cast", "(CAST (WHERE cond x Invalid))", invalid_through_cast),
    RULE_FN("invalid_through_alu", "(Binary (WHERE cond x Invalid) y)", invalid_through_alu),
    RULE_FN("invalid_absorbs_alu", "(Binary i@Invalid y)", invalid_absorbs_alu),
};
const RuleTable sym_propagate_invalid_rules = {propagate_invalid_specs,
                                                  sizeof propagate_invalid_specs / sizeof *propagate_invalid_specs};

/* ---- self folding ---- */
static const UOp *take_x(const Match *m, void *ud) { (void)ud; return GET("x"); }
static const UOp *take_base(const Match *m, void *ud) { (void)ud; return GET("base"); }

static const UOp *fold_xor_zero(const Match *m, void *ud) {
    (void)ud;
    return int_or_bool(GET("x")) ? GET("x") : NULL;
}
static const UOp *fold_div_self(const Match *m, void *ud) { (void)ud; return sym_const_like(CTX, ROOT, 1); }
static const UOp *fold_div_neg_one(const Match *m, void *ud) {
    (void)ud;
    int64_t v;
    if (!sym_const_int(GET("c"), &v) || v != -1) return NULL;
    return sym_neg(CTX, GET("x"));
}

/* x%c + (x//c)*c and its variants with a scale and an extra term */
static bool match_div_times(const UOp *t, const UOp **x, int64_t *c, int64_t *k) {
    /* (x//c)*k */
    if (uop_op(t) != OP_MUL) return false;
    for (int i = 0; i < 2; i++) {
        const UOp *d = t->src[i];
        if (uop_op(d) == OP_IDIV && sym_const_int(d->src[1], c) && sym_const_int(t->src[1 - i], k)) {
            *x = d->src[0];
            return true;
        }
    }
    return false;
}
static bool match_mod_times(const UOp *t, const UOp **x, int64_t *c, int64_t *k) {
    /* (x%c) or (x%c)*k */
    if (uop_op(t) == OP_MOD && sym_const_int(t->src[1], c)) { *x = t->src[0]; *k = 1; return true; }
    if (uop_op(t) != OP_MUL) return false;
    for (int i = 0; i < 2; i++) {
        const UOp *d = t->src[i];
        if (uop_op(d) == OP_MOD && sym_const_int(d->src[1], c) && sym_const_int(t->src[1 - i], k)) {
            *x = d->src[0];
            return true;
        }
    }
    return false;
}
/* a and b are x%c1*c2 and (x//c1)*c3 (either order) with c1*c2 == c3: x*c2 */
static const UOp *recombine_pair(UCtx *c, const UOp *a, const UOp *b) {
    const UOp *x1, *x2;
    int64_t c1, c2, d1, c3;
    for (int s = 0; s < 2; s++) {
        const UOp *p = s ? b : a, *q = s ? a : b;
        if (match_mod_times(p, &x1, &c1, &c2) && match_div_times(q, &x2, &d1, &c3) && x1 == x2 && c1 == d1 &&
            (__int128)c1 * c2 == c3)
            return sym_mulc(c, x1, c2);
        /* ((x//a)%c) + (x//b)*c with a*c == b: x//a */
        if (uop_op(p) == OP_MOD && sym_const_int(p->src[1], &c1) && uop_op(p->src[0]) == OP_IDIV &&
            match_div_times(q, &x2, &d1, &c3) && c3 == c1) {
            int64_t a1;
            const UOp *inner = p->src[0];
            if (sym_const_int(inner->src[1], &a1) && inner->src[0] == x2 && (__int128)a1 * c1 == d1) return inner;
        }
    }
    return NULL;
}
static const UOp *fold_divmod_recombine(const Match *m, void *ud) {
    (void)ud;
    const UOp *a = ROOT->src[0], *b = ROOT->src[1];
    const UOp *r = recombine_pair(CTX, a, b);
    if (r) return r;
    /* (y + one) + other */
    for (int s = 0; s < 2; s++) {
        const UOp *sum = s ? b : a, *other = s ? a : b;
        if (uop_op(sum) != OP_ADD) continue;
        for (int i = 0; i < 2; i++) {
            r = recombine_pair(CTX, sum->src[i], other);
            if (r) return sym_add(CTX, sum->src[1 - i], r);
        }
    }
    return NULL;
}

static const UOp *fold_bool_and_const(const Match *m, void *ud) {
    (void)ud;
    const UOp *x = GET("x");
    int64_t v;
    if (!dt_is_bool(x->dtype) || !sym_const_int(GET("c"), &v)) return NULL;
    return v ? x : GET("c");
}
static const UOp *fold_bool_or_const(const Match *m, void *ud) {
    (void)ud;
    const UOp *x = GET("x");
    int64_t v;
    if (!dt_is_bool(x->dtype) || !sym_const_int(GET("c"), &v)) return NULL;
    return v ? GET("c") : x;
}
static const UOp *fold_not_not(const Match *m, void *ud) {
    (void)ud;
    return dt_is_bool(GET("x")->dtype) ? GET("x") : NULL;
}
static const UOp *fold_where_bool_identity(const Match *m, void *ud) {
    (void)ud;
    const UOp *x = GET("x");
    int64_t t, f;
    if (!dt_is_bool(x->dtype) || !dt_is_bool(ROOT->dtype) || !sym_const_int(ROOT->src[1], &t) ||
        !sym_const_int(ROOT->src[2], &f) || t == f)
        return NULL;
    return t ? x : sym_not(CTX, x);
}
static const UOp *fold_trunc_int(const Match *m, void *ud) {
    (void)ud;
    return int_or_bool(GET("x")) ? GET("x") : NULL;
}

/* ---- zero folding ---- */
static const UOp *fold_false(const Match *m, void *ud) { (void)ud; return uop_const_bool(CTX, false); }
static const UOp *fold_zero(const Match *m, void *ud) { (void)ud; return sym_const_like(CTX, ROOT, 0); }
static const UOp *fold_ne_self(const Match *m, void *ud) {
    (void)ud;
    return int_or_bool(GET("x")) && ROOT->dtype->count == 1 ? uop_const_bool(CTX, false) : NULL;
}
static const UOp *fold_mod_self(const Match *m, void *ud) {
    (void)ud;
    return int_or_bool(ROOT) ? sym_const_like(CTX, ROOT, 0) : NULL;
}

/* ---- constant folding ---- */
static int64_t wrap_to(const DType *dt, int64_t v) {
    if (dt_is_bool(dt)) return v != 0;
    int bits = dt->sk == SK_INDEX ? 64 : dt_bitsize(dt);
    if (bits >= 64) return v;
    uint64_t mask = (1ull << bits) - 1, x = (uint64_t)v & mask;
    if (!dt_is_unsigned(dt) && (x >> (bits - 1)) & 1) x |= ~mask;
    return (int64_t)x;
}

static bool exec_int(Op op, const DType *dt, const int64_t *v, int n, int64_t *out) {
    uint64_t a = (uint64_t)v[0], b = n > 1 ? (uint64_t)v[1] : 0;
    int64_t r;
    switch (op) {
    case OP_NEG: r = (int64_t)(0 - a); break;
    case OP_ADD: r = (int64_t)(a + b); break;
    case OP_SUB: r = (int64_t)(a - b); break;
    case OP_MUL: r = (int64_t)(a * b); break;
    case OP_IDIV:
        if (v[1] == 0 || (v[0] == INT64_MIN && v[1] == -1)) return false;
        r = v[0] / v[1];
        break;
    case OP_MOD:
        if (v[1] == 0 || (v[0] == INT64_MIN && v[1] == -1)) return false;
        r = v[0] % v[1];
        break;
    case OP_MAX: r = v[0] > v[1] ? v[0] : v[1]; break;
    case OP_CMPLT: *out = v[0] < v[1]; return true;
    case OP_CMPNE: *out = v[0] != v[1]; return true;
    case OP_CMPEQ: *out = v[0] == v[1]; return true;
    case OP_AND: r = (int64_t)(a & b); break;
    case OP_OR: r = (int64_t)(a | b); break;
    case OP_XOR: r = (int64_t)(a ^ b); break;
    /* the amount modulo the bit width, as the JIT and the reference shift */
    case OP_SHL: r = (int64_t)(a << dt_shift_amount(dt, b)); break;
    case OP_SHR: r = dt_is_unsigned(dt) ? (int64_t)(a >> dt_shift_amount(dt, b)) : v[0] >> dt_shift_amount(dt, b); break;
    case OP_WHERE: r = v[0] ? v[1] : v[2]; break;
    default: return false;
    }
    *out = wrap_to(dt, r);
    return true;
}

static bool exec_float(Op op, const double *v, double *out) {
    switch (op) {
    case OP_NEG: *out = -v[0]; return true;
    case OP_SQRT: *out = sqrt(v[0]); return true;
    case OP_EXP2: *out = exp2(v[0]); return true;
    case OP_LOG2: *out = v[0] < 0 ? NAN : log2(v[0]); return true;
    case OP_SIN: *out = sin(v[0]); return true;
    case OP_TRUNC: *out = trunc(v[0]); return true;
    case OP_RECIPROCAL: *out = 1.0 / v[0]; return true;
    case OP_ADD: *out = v[0] + v[1]; return true;
    case OP_SUB: *out = v[0] - v[1]; return true;
    case OP_MUL: *out = v[0] * v[1]; return true;
    case OP_FDIV: *out = v[0] / v[1]; return true;
    /* as the generated code computes them (tinygrad's LLVM backend): MAX is
     * (a < b).where(b, a) and float "<" is true when either side is NaN */
    case OP_MAX: *out = v[0] >= v[1] ? v[0] : v[1]; return true;
    case OP_CMPLT: *out = !(v[0] >= v[1]); return true;
    case OP_CMPNE: *out = v[0] != v[1]; return true;
    case OP_CMPEQ: *out = v[0] == v[1]; return true;
    case OP_WHERE: *out = v[0] != 0 ? v[1] : v[2]; return true;
    default: return false;
    }
}

static const UOp *fold_const_alu(const Match *m, void *ud) {
    (void)ud;
    const UOp *u = ROOT;
    Op op = uop_op(u);
    if (u->nsrc > 3 || op == OP_THREEFRY || u->dtype->count != 1) return NULL;
    bool all_int = true;
    int64_t iv[3];
    double fv[3];
    for (int i = 0; i < u->nsrc; i++) {
        const UOp *s = u->src[i];
        if (uop_op(s) != OP_CONST || s->dtype->count != 1 || !s->arg) return NULL;
        if (s->arg->kind == ARG_INT || s->arg->kind == ARG_BOOL) {
            iv[i] = s->arg->kind == ARG_INT ? s->arg->v.i : s->arg->v.b;
            fv[i] = (double)iv[i];
            if (!(op == OP_WHERE && i == 0) && dt_is_float(s->dtype)) all_int = false;
        } else if (s->arg->kind == ARG_FLOAT) {
            fv[i] = s->arg->v.f;
            all_int = false;
        } else return NULL;
    }
    bool float_ops = dt_is_float(op_is(op, OPF_COMPARISON) || op == OP_WHERE ? u->src[u->nsrc - 1]->dtype : u->dtype);
    if (!float_ops && all_int) {
        int64_t r;
        if (!exec_int(op, u->src[u->nsrc - 1]->dtype, iv, u->nsrc, &r)) return NULL;
        return sym_const_like(CTX, u, dt_is_bool(u->dtype) ? r != 0 : wrap_to(u->dtype, r));
    }
    if (!float_ops) return NULL;
    int sk = u->src[u->nsrc - 1]->dtype->sk;
    if (sk != SK_FLOAT32 && sk != SK_FLOAT64) return NULL;
    double r;
    if (!exec_float(op, fv, &r)) return NULL;
    if (dt_is_bool(u->dtype)) return uop_const_bool(CTX, r != 0);
    /* as v0.12.0 folds: the result in double precision, not rounded to the
     * dtype (a float32 1/15 stays 0.06666666666666667); the renderer rounds */
    return uop_const_float(CTX, u->dtype, r);
}

/* ---- bool arithmetic ---- */
static const UOp *bool_to(const Match *m, Op op) {
    const UOp *x = GET("x"), *y = GET("y");
    if (!dt_is_bool(x->dtype) || !dt_is_bool(y->dtype)) return NULL;
    return sym_bin(CTX, op, x, y);
}
static const UOp *fold_bool_mul_to_and(const Match *m, void *ud) { (void)ud; return bool_to(m, OP_AND); }
static const UOp *fold_bool_add_to_or(const Match *m, void *ud) { (void)ud; return bool_to(m, OP_OR); }

static const UOp *fold_mul_zero(const Match *m, void *ud) {
    (void)ud;
    const UOp *x = GET("x");
    if (dt_is_float(ROOT->dtype)) {
        double v;
        bool special = uop_op(x) == OP_CONST && uop_const_value(x, &v) && (isnan(v) || isinf(v));
        return uop_const_float(CTX, ROOT->dtype, special ? NAN : 0.0);
    }
    return sym_const_like(CTX, ROOT, 0);
}

/* ---- casts ---- */
static const UOp *fold_cast_const(const Match *m, void *ud) {
    (void)ud;
    const UOp *cst = GET("c");
    const DType *to = ROOT->dtype;
    if (to->count != 1 || dt_is_ptr(to) || !cst->arg) return NULL;
    const Arg *a = cst->arg;
    if (dt_is_float(to)) {
        /* a half or bfloat16 constant keeps its double, as v0.12.0's const_like keeps the Python float */
        double v;
        if (a->kind == ARG_INT && dt_is_int(cst->dtype)) {
            /* rounded once, as sitofp/uitofp: a uint64 from 2^63 is positive,
             * and a 64-bit value does not go through double on its way to float32 */
            int64_t i = a->v.i;
            bool uns = dt_is_unsigned(cst->dtype);
            if (to->sk == SK_FLOAT32) v = uns ? (double)(float)(uint64_t)i : (double)(float)i;
            else v = uns ? (double)(uint64_t)i : (double)i;
        } else if (!uop_const_value(cst, &v)) {
            return NULL; /* a float is not rounded to float32: v0.12.0's const_like keeps the value */
        }
        return uop_const_float(CTX, to, v);
    }
    if (dt_is_bool(to)) {
        double v;
        return uop_const_value(cst, &v) ? uop_const_bool(CTX, v != 0) : NULL;
    }
    if (!dt_is_int(to)) return NULL;
    int64_t v;
    if (a->kind == ARG_INT || a->kind == ARG_BOOL) v = a->kind == ARG_INT ? a->v.i : a->v.b;
    else if (a->kind == ARG_FLOAT) {
        v = dt_float_to_int(to, a->v.f);   /* as x86-64 converts */
    } else return NULL;
    return uop_const_int(CTX, to, wrap_to(to, v));
}
static const UOp *fold_cast_noop(const Match *m, void *ud) {
    (void)ud;
    return ROOT->dtype == ROOT->src[0]->dtype ? ROOT->src[0] : NULL;
}
static const UOp *fold_cast_roundtrip(const Match *m, void *ud) {
    (void)ud;
    const UOp *x = GET("x"), *a = ROOT->src[0];
    return x->dtype == ROOT->dtype && dt_can_lossless_cast(ROOT->dtype, a->dtype) ? x : NULL;
}

/* ---- simple WHERE folding ---- */
static const UOp *take_val(const Match *m, void *ud) { (void)ud; return GET("val"); }
static const UOp *fold_where_const_gate(const Match *m, void *ud) {
    (void)ud;
    int64_t g;
    double f;
    if (sym_const_int(GET("gate"), &g)) return g ? GET("t") : GET("f");
    if (GET("gate")->dtype->count == 1 && uop_const_value(GET("gate"), &f)) return f != 0 ? GET("t") : GET("f");
    return NULL;
}
static const UOp *fold_where_nested_same_else(const Match *m, void *ud) {
    (void)ud;
    const UOp *a = GET("a"), *b = GET("b");
    if (a->dtype != b->dtype) return NULL;
    return uop_where(CTX, sym_bin(CTX, OP_AND, a, b), GET("c"), GET("d"));
}

static const RuleSpec simple_specs[] = {
    RULE_FN("fold_add_zero", "(ADD x 0)", take_x),
    RULE_FN("fold_mul_one", "(MUL x 1)", take_x),
    RULE_FN("fold_xor_zero", "(XOR x 0)", fold_xor_zero),
    RULE_FN("fold_div_self", "(IDIV x x)", fold_div_self),
    RULE_FN("fold_div_one", "(IDIV x 1)", take_x),
    RULE_FN("fold_div_neg_one", "(IDIV x c@(CONST))", fold_div_neg_one),
    RULE_FN("fold_mod_mod", "(MOD base@(MOD _ y) y)", take_base),
    RULE_FN("fold_divmod_recombine", "(ADD _ _)", fold_divmod_recombine),
    RULE_FN("fold_bool_and_const", "(AND x c@(CONST))", fold_bool_and_const),
    RULE_FN("fold_bool_or_const", "(OR x c@(CONST))", fold_bool_or_const),
    RULE_FN("fold_idempotent", "({AND OR MAX} x x)", take_x),
    RULE_FN("fold_not_not", "(CMPNE (CMPNE x true) true)", fold_not_not),
    RULE_FN("fold_where_bool_identity", "(WHERE x (CONST) (CONST))", fold_where_bool_identity),
    RULE_FN("fold_trunc_int", "(TRUNC x)", fold_trunc_int),
    RULE_FN("fold_lt_self", "(CMPLT x x)", fold_false),
    RULE_FN("fold_mod_self", "(MOD x x)", fold_mod_self),
    RULE_FN("fold_xor_self", "(XOR x x)", fold_zero),
    RULE_FN("fold_ne_self", "(CMPNE x x)", fold_ne_self),
    RULE_FN("fold_const_unary", "({EXP2 LOG2 SIN SQRT RECIPROCAL NEG TRUNC} (CONST))", fold_const_alu),
    RULE_FN("fold_const_binary", "(Binary (CONST) (CONST))", fold_const_alu),
    RULE_FN("fold_const_ternary", "({WHERE MULACC} (CONST) (CONST) (CONST))", fold_const_alu),
    RULE_FN("fold_bool_mul_to_and", "(MUL x y)", fold_bool_mul_to_and),
    RULE_FN("fold_bool_add_to_or", "(ADD x:bool y:bool)", fold_bool_add_to_or),
    RULE_FN("fold_bool_max_to_or", "(MAX x:bool y:bool)", fold_bool_add_to_or),
    RULE_FN("fold_mul_zero", "(MUL x 0)", fold_mul_zero),
    RULE_FN("fold_cast_const", "(CAST c@(CONST))", fold_cast_const),
    RULE_FN("fold_cast_noop", "({CAST BITCAST} _)", fold_cast_noop),
    RULE_FN("fold_cast_roundtrip", "(CAST (CAST x))", fold_cast_roundtrip),
    RULE_FN("fold_where_same", "(WHERE _ val val)", take_val),
    RULE_FN("fold_where_const_gate", "(WHERE gate@(CONST) t f)", fold_where_const_gate),
    RULE_FN("fold_where_nested_same_else", "(WHERE a (WHERE b c d) d)", fold_where_nested_same_else),
};
const RuleTable sym_simple_rules = {simple_specs, sizeof simple_specs / sizeof *simple_specs};

/* ---- canonical operand order ---- */
static const UOp *commute_index_operands(const Match *m, void *ud) {
    (void)ud;
    const UOp *u = ROOT;
    if (!sym_is_index(u) || sym_order(u->src[1], u->src[0]) >= 0) return NULL;
    const UOp *src[2] = {u->src[1], u->src[0]};
    return uop_with_src(CTX, u, src, 2);
}
static const RuleSpec commutative_specs[] = {
    RULE_FN("commute_index_operands", "({ADD MUL MAX XOR OR AND} _ _)", commute_index_operands),
};
const RuleTable sym_commutative_rules = {commutative_specs, sizeof commutative_specs / sizeof *commutative_specs};
