/* test_symbolic_rules.c - the float, narrowing, reduce and vector rule
 * groups of tinygrad v0.12.0's symbolic sets, row by row: each row builds an
 * input expression and, by hand, the expression tinygrad rewrites it into;
 * the row's set must give exactly that node (hash-consing makes equal
 * graphs the same pointer) and its trace must name the row's rule.  Rows
 * over floats are also evaluated before and after at a grid of points and
 * must agree to float32 precision. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/backend/scalar_eval.h"
#include "core/ir/uop.h"
#include "core/rewrite/registry.h"
#include "core/rewrite/rewrite.h"
#include "core/sym/symbolic.h"
#include "viz/listing.h"

#define DT_UINT32 dt_scalar(SK_UINT32)
#define DT_UINT64 dt_scalar(SK_UINT64)

static UCtx *c;
/* index variables; x, y, z are them cast to float32 */
static const UOp *a, *b, *d, *x, *y, *z;

static const UOp *bin(Op op, const UOp *p, const UOp *q) { return uop_binary(c, op, p, q); }
static const UOp *add(const UOp *p, const UOp *q) { return bin(OP_ADD, p, q); }
static const UOp *mul(const UOp *p, const UOp *q) { return bin(OP_MUL, p, q); }
static const UOp *recip(const UOp *p) { return uop_unary(c, OP_RECIPROCAL, p); }
static const UOp *fk(double v) { return uop_const_float(c, DT_FLOAT32, v); }
static const UOp *ik(int64_t v) { return uop_const_int(c, DT_INDEX, v); }
static const UOp *uk(int64_t v) { return uop_const_int(c, DT_UINT64, v); }
static const UOp *cast(const UOp *p, const DType *dt) { return uop_cast(c, p, dt); }
static const UOp *reduce(Op op, const UOp *val, const UOp *r) {
    const UOp *src[2] = {val, r};
    return uop_new(c, OP_REDUCE, val->dtype, src, 2, arg_op(c, op));
}
static const UOp *vec4(const UOp *p) {
    const UOp *src[4] = {p, p, p, p};
    return uop_new(c, OP_VECTORIZE, dt_vec(p->dtype, 4), src, 4, NULL);
}
static const UOp *one_minus(const UOp *p) { return add(fk(1), mul(p, fk(-1))); } /* tinygrad's 1 - p */

typedef struct Row {
    const char *set, *rule;
    bool numeric; /* evaluate before and after */
    void (*build)(const UOp **in, const UOp **want);
} Row;

/* ---- symbolic: float like terms ---- */
static void r_float_x_plus_x(const UOp **in, const UOp **want) { *in = add(x, x); *want = mul(x, fk(2)); }
static void r_float_terms(const UOp **in, const UOp **want) { *in = add(mul(x, fk(2)), mul(x, fk(0.5))); *want = mul(x, fk(2.5)); }
static void r_float_x_plus_term(const UOp **in, const UOp **want) { *in = add(x, mul(x, fk(3))); *want = mul(x, fk(4)); }
static void r_float_y_x_x(const UOp **in, const UOp **want) { *in = add(add(y, x), x); *want = add(y, mul(x, fk(2))); }

/* ---- symbolic: float negation and comparison, as v0.12.0 writes them for any dtype ---- */
/* -1*(x + 2.5) -> x*-1 + -2.5 */
static void r_float_neg_sum(const UOp **in, const UOp **want) {
    *in = mul(fk(-1), add(x, fk(2.5)));
    *want = add(mul(x, fk(-1)), fk(-2.5));
}
/* -0.5 + x < 2 -> x < 2.5 (its values are bools, compared as ints) */
static void r_float_lt_shift(const UOp **in, const UOp **want) {
    *in = bin(OP_CMPLT, add(fk(-0.5), x), fk(2));
    *want = bin(OP_CMPLT, x, fk(2.5));
}

/* ---- symbolic_simple: float division ---- */
static void r_fdiv_self(const UOp **in, const UOp **want) { *in = mul(x, recip(x)); *want = fk(1); }
static void r_fdiv_cancel(const UOp **in, const UOp **want) { *in = mul(mul(x, y), recip(y)); *want = x; }
/* ---- symbolic ---- */
static void r_fdiv_chain(const UOp **in, const UOp **want) {
    *in = mul(mul(x, recip(y)), recip(z));
    *want = mul(x, recip(mul(y, z)));
}
static void r_fdiv_chain_same(const UOp **in, const UOp **want) {
    /* (x/y)/y stays: tinygrad skips x2 is x3 */
    *in = mul(mul(x, recip(y)), recip(y));
    *want = *in;
}
/* ---- sym: reciprocals ---- */
static void r_recip_square(const UOp **in, const UOp **want) { *in = recip(mul(x, x)); *want = mul(recip(x), recip(x)); }
static void r_recip_cube(const UOp **in, const UOp **want) {
    *in = recip(mul(mul(x, x), x));
    *want = mul(mul(recip(x), recip(x)), recip(x));
}
static void r_recip_mul_const(const UOp **in, const UOp **want) { *in = recip(mul(x, fk(4))); *want = mul(recip(x), fk(0.25)); }
static void r_div_one_plus(const UOp **in, const UOp **want) {
    const UOp *dd = recip(add(fk(1), x));
    *in = mul(x, dd);
    *want = one_minus(dd);
}
static void r_div_one_plus_mul(const UOp **in, const UOp **want) {
    const UOp *dd = recip(add(fk(1), x));
    *in = mul(x, mul(dd, y));
    *want = mul(y, one_minus(dd));
}
static void r_div_one_plus_add(const UOp **in, const UOp **want) {
    const UOp *dd = recip(add(fk(1), x));
    *in = mul(x, add(dd, y));
    /* 1 + d*-1 + x*y, then the constant moved to the end (move_const_to_end) */
    *want = add(add(mul(dd, fk(-1)), mul(x, y)), fk(1));
}
/* ---- narrowing ---- */
static void r_low_mask(const UOp **in, const UOp **want) {
    const UOp *w = cast(a, DT_UINT64);
    *in = cast(bin(OP_AND, w, uk(0xFFFFFFFFll)), DT_UINT32);
    *want = cast(w, DT_UINT32);
}
static void r_mul_join_lo(const UOp **in, const UOp **want) {
    const UOp *hi = cast(a, DT_UINT64), *lo = cast(b, DT_UINT32);
    *in = cast(bin(OP_OR, mul(hi, uk(1ll << 32)), cast(lo, DT_UINT64)), DT_UINT32);
    *want = lo;
}
static void r_mul_join_hi(const UOp **in, const UOp **want) {
    const UOp *hi = cast(a, DT_UINT64), *lo = cast(b, DT_UINT32);
    *in = bin(OP_IDIV, bin(OP_OR, mul(hi, uk(1ll << 32)), cast(lo, DT_UINT64)), uk(1ll << 32));
    *want = hi;
}
static void r_shl_join_lo(const UOp **in, const UOp **want) {
    const UOp *hi = cast(a, DT_UINT64), *lo = cast(b, DT_UINT32);
    *in = cast(bin(OP_OR, bin(OP_SHL, hi, uk(32)), cast(lo, DT_UINT64)), DT_UINT32);
    *want = lo;
}
static void r_shl_join_hi(const UOp **in, const UOp **want) {
    const UOp *hi = cast(a, DT_UINT64), *lo = cast(b, DT_UINT32);
    *in = bin(OP_SHR, bin(OP_OR, bin(OP_SHL, hi, uk(32)), cast(lo, DT_UINT64)), uk(32));
    *want = hi;
}
static void r_cast_index_add(const UOp **in, const UOp **want) {
    *in = cast(add(a, ik(5)), DT_INT32);
    *want = add(cast(a, DT_INT32), uop_const_int(c, DT_INT32, 5));
}
/* ---- sym: reductions ---- */
static const UOp *red_range(void) { return uop_range(c, ik(8), 0, AXIS_REDUCE); }
static void r_reduce_const(const UOp **in, const UOp **want) {
    const UOp *r = red_range(), *v = cast(r, DT_FLOAT32);
    *in = reduce(OP_ADD, mul(v, fk(3)), r);
    *want = mul(reduce(OP_ADD, v, r), fk(3));
}
static void r_reduce_chain(const UOp **in, const UOp **want) {
    const UOp *r = red_range(), *v = cast(r, DT_FLOAT32);
    *in = reduce(OP_ADD, mul(v, y), r);
    *want = mul(reduce(OP_ADD, v, r), y);
}
static void r_reduce_chain_max(const UOp **in, const UOp **want) {
    /* a >= 0 leaves a MAX; the factor on the range stays inside */
    const UOp *r = red_range();
    *in = reduce(OP_MAX, mul(add(r, ik(1)), a), r);
    *want = mul(a, reduce(OP_MAX, add(r, ik(1)), r)); /* index operands in canonical order */
}
static void r_reduce_chain_max_signed(const UOp **in, const UOp **want) {
    /* d may be negative: it cannot leave a MAX */
    const UOp *r = red_range();
    *in = reduce(OP_MAX, mul(add(r, ik(1)), d), r);
    *want = reduce(OP_MAX, mul(d, add(r, ik(1))), r); /* only the canonical operand order */
}
static void r_reduce_chain_split(const UOp **in, const UOp **want) {
    /* in the middle of a range split the REDUCE's range is an expression of
     * the new ranges: factors that use those ranges stay inside, y leaves */
    const UOp *r0 = uop_range(c, ik(4), 0, AXIS_REDUCE), *r1 = uop_range(c, ik(6), 1, AXIS_REDUCE);
    const UOp *over = add(mul(r0, ik(6)), r1);
    const UOp *f = mul(cast(r0, DT_FLOAT32), cast(r1, DT_FLOAT32));
    *in = reduce(OP_ADD, mul(f, y), over);
    *want = mul(reduce(OP_ADD, f, over), y);
}
/* ---- sym: vectors and ENDs ---- */
static void r_alu_broadcasts(const UOp **in, const UOp **want) {
    *in = add(vec4(x), vec4(y));
    *want = vec4(add(x, y));
}
static void r_end_noop(const UOp **in, const UOp **want) {
    const UOp *nop = uop_new(c, OP_NOOP, DT_VOID, NULL, 0, NULL);
    const UOp *src[2] = {nop, uop_range(c, ik(4), 0, AXIS_LOOP)};
    *in = uop_new(c, OP_END, DT_VOID, src, 2, NULL);
    *want = nop;
}

static const Row rows[] = {
    {"symbolic", "combine_like_terms", true, r_float_x_plus_x},
    {"symbolic", "combine_like_terms", true, r_float_terms},
    {"symbolic", "combine_like_terms", true, r_float_x_plus_term},
    {"symbolic", "combine_like_terms", true, r_float_y_x_x},
    {"symbolic", "distribute_neg_const", true, r_float_neg_sum},
    {"symbolic", "fold_lt_add_const", true, r_float_lt_shift},
    {"symbolic_simple", "fold_fdiv_self", true, r_fdiv_self},
    {"symbolic_simple", "fold_fdiv_cancel", true, r_fdiv_cancel},
    {"symbolic", "fold_fdiv_chain", true, r_fdiv_chain},
    {"symbolic", NULL, true, r_fdiv_chain_same},
    {"sym", "recip_of_square", true, r_recip_square},
    {"sym", "recip_of_cube", true, r_recip_cube},
    {"sym", "recip_of_mul_const", true, r_recip_mul_const},
    {"sym", "div_one_plus_self", true, r_div_one_plus},
    {"sym", "div_one_plus_self_mul", true, r_div_one_plus_mul},
    {"sym", "div_one_plus_self_add", true, r_div_one_plus_add},
    {"symbolic_simple", "cast_u32_of_low_mask", true, r_low_mask},
    {"symbolic_simple", "cast_u32_of_mul_join", true, r_mul_join_lo},
    {"symbolic_simple", "div_of_mul_join", true, r_mul_join_hi},
    {"symbolic_simple", "cast_u32_of_shl_join", true, r_shl_join_lo},
    {"symbolic_simple", "shr_of_shl_join", true, r_shl_join_hi},
    {"symbolic", "cast_index_add_const", true, r_cast_index_add},
    {"sym", "reduce_const_mul_out", true, r_reduce_const},
    {"sym", "reduce_mul_chain", true, r_reduce_chain},
    {"sym", "reduce_mul_chain", true, r_reduce_chain_max},
    {"sym", NULL, true, r_reduce_chain_max_signed},
    {"sym", "reduce_mul_chain", false, r_reduce_chain_split},
    {"sym", "alu_of_broadcasts", false, r_alu_broadcasts},
    {"sym", "end_of_empty_noop", false, r_end_noop},
};

/* ---- a small evaluator: variables bound by name, REDUCE loops over its
 * ranges, every ALU op through scalar_alu (the interpreters' semantics) ---- */
typedef struct Env {
    int64_t va, vb, vd;
    const UOp *range;
    int64_t rv;
} Env;

static bool eval(const UOp *u, Env *env, ScalarVal *out) {
    Op op = uop_op(u);
    if (op == OP_DEFINE_VAR) {
        const char *name = u->arg->items[0]->v.s;
        *out = scalar_from_int(DT_INDEX, name[0] == 'a' ? env->va : name[0] == 'b' ? env->vb : env->vd);
        return true;
    }
    if (op == OP_CONST) {
        *out = u->arg->kind == ARG_FLOAT ? scalar_from_float(u->dtype, u->arg->v.f)
                                         : scalar_from_int(u->dtype, u->arg->kind == ARG_INT ? u->arg->v.i : u->arg->v.b);
        return true;
    }
    if (op == OP_RANGE) {
        if (u != env->range) return false;
        *out = scalar_from_int(DT_INDEX, env->rv);
        return true;
    }
    if (op == OP_REDUCE) {
        const UOp *r = u->src[1];
        int64_t n = r->src[0]->arg->v.i;
        ScalarVal acc = {0}, v;
        Op rop = u->arg->v.op;
        for (int64_t i = 0; i < n; i++) {
            env->range = r;
            env->rv = i;
            if (!eval(u->src[0], env, &v)) return false;
            if (i == 0) acc = v;
            else {
                ScalarVal two[2] = {acc, v};
                if (scalar_alu(rop, u->dtype, u->dtype, 2, two, &acc)) return false;
            }
        }
        *out = acc;
        return true;
    }
    ScalarVal s[3];
    for (int i = 0; i < u->nsrc; i++)
        if (!eval(u->src[i], env, &s[i])) return false;
    if (op == OP_CAST) { *out = scalar_convert(u->dtype, u->src[0]->dtype, s[0]); return true; }
    if (op == OP_WHERE) { *out = s[0].i ? s[1] : s[2]; return true; }
    return scalar_alu(op, u->dtype, u->src[0]->dtype, u->nsrc, s, out) == NULL;
}

/* before and after agree at every point of a grid (floats to float32
 * precision, ints exactly) */
static int check_numeric(const Row *row, const UOp *in, const UOp *out) {
    int bad = 0;
    for (int64_t va = 1; va <= 9; va += 2)
        for (int64_t vb = 1; vb <= 7; vb += 3)
            for (int64_t vd = -5; vd <= 5; vd += 5) {
                Env e1 = {va, vb, vd, NULL, 0}, e2 = e1;
                ScalarVal p, q;
                if (!eval(in, &e1, &p) || !eval(out, &e2, &q)) {
                    printf("  %s: cannot evaluate\n", row->rule);
                    return 1;
                }
                bool same = dt_is_float(in->dtype) ? p.f == q.f || (isnan(p.f) && isnan(q.f)) ||
                                                         fabs(p.f - q.f) <= 1e-6 * fmax(1.0, fabs(p.f))
                                                   : p.i == q.i;
                if (!same) {
                    printf("  %s: at a=%lld b=%lld d=%lld: %.9g before, %.9g after\n", row->rule, (long long)va,
                           (long long)vb, (long long)vd, dt_is_float(in->dtype) ? p.f : (double)p.i,
                           dt_is_float(in->dtype) ? q.f : (double)q.i);
                    bad = 1;
                }
            }
    return bad;
}

static int run_row(const Row *row) {
    c = uctx_new();
    a = uop_var(c, "a", 1, 10);
    b = uop_var(c, "b", 1, 10);
    d = uop_var(c, "d", -5, 5);
    x = cast(a, DT_FLOAT32);
    y = cast(b, DT_FLOAT32);
    z = cast(d, DT_FLOAT32);
    const UOp *in = NULL, *want = NULL;
    row->build(&in, &want);
    Trace tr;
    trace_init(&tr);
    const UOp *out = in && want ? uop_simplify(c, in, row->set, &tr) : NULL;
    int bad = 0;
    if (!out) {
        printf("  %s: %s\n", row->rule ? row->rule : "(no rule)", uctx_error(c));
        bad = 1;
    } else if (out != want) {
        StrBuf sb;
        sb_init(&sb);
        sb_puts(&sb, "got:\n");
        uop_listing(&sb, out, NULL);
        sb_puts(&sb, "expected:\n");
        uop_listing(&sb, want, NULL);
        printf("  %s (%s): wrong result\n%s", row->rule ? row->rule : "(no rule)", row->set, sb_str(&sb));
        sb_free(&sb);
        bad = 1;
    }
    bool fired = row->rule == NULL;
    for (size_t i = 0; row->rule && i < tr.nrewrites; i++) fired |= strcmp(tr.rewrites[i].rule, row->rule) == 0;
    if (!fired) {
        printf("  %s (%s): the rule did not fire\n", row->rule, row->set);
        bad = 1;
    }
    if (!bad && row->numeric) bad = check_numeric(row, in, out);
    trace_free(&tr);
    uctx_free(c);
    return bad;
}

static void test_rule_rows(void **state) {
    (void)state;
    int bad = 0, n = (int)(sizeof rows / sizeof *rows);
    for (int i = 0; i < n; i++) bad += run_row(&rows[i]);
    printf("  %d of %d rows differ\n", bad, n);
    assert_int_equal(bad, 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rule_rows),
    };
    int r = cmocka_run_group_tests(tests, NULL, NULL);
    ruleset_registry_free();
    return r;
}
