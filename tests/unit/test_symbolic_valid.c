/* test_symbolic_valid.c - simplification under a validity condition: a gated
 * index where(valid, x, Invalid) simplified with the bounds valid implies,
 * and conjunctions of clauses with implied or repeated clauses dropped.  The
 * expected forms are what tinygrad v0.12.0's `sym` produces for the same
 * expression.  A randomized check confirms that where valid holds the value
 * of the gated expression does not change. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/rewrite/registry.h"
#include "core/ir/uop.h"
#include "core/sym/bounds.h"
#include "core/sym/eval.h"
#include "core/sym/symbolic.h"
#include "core/util/strbuf.h"
#include "viz/render.h"

static UCtx *c;
static const UOp *a, *b, *r0, *r1;

static const UOp *k(int64_t v) { return uop_const_int(c, DT_INDEX, v); }
static const UOp *add(const UOp *x, const UOp *y) { return uop_binary(c, OP_ADD, x, y); }
static const UOp *mul(const UOp *x, const UOp *y) { return uop_binary(c, OP_MUL, x, y); }
static const UOp *idiv(const UOp *x, const UOp *y) { return uop_binary(c, OP_IDIV, x, y); }
static const UOp *mod(const UOp *x, const UOp *y) { return uop_binary(c, OP_MOD, x, y); }
static const UOp *mx(const UOp *x, const UOp *y) { return uop_binary(c, OP_MAX, x, y); }
static const UOp *lt(const UOp *x, const UOp *y) { return uop_binary(c, OP_CMPLT, x, y); }
static const UOp *land(const UOp *x, const UOp *y) { return uop_binary(c, OP_AND, x, y); }
static const UOp *lnot(const UOp *x) { return uop_binary(c, OP_CMPNE, x, uop_const_bool(c, true)); }
static const UOp *gated(const UOp *cond, const UOp *x) {
    return uop_where(c, cond, x, uop_const_arg(c, DT_INDEX, arg_invalid(c)));
}

static int setup(void **state) {
    (void)state;
    c = uctx_new();
    a = uop_var(c, "a", 0, 10);
    b = uop_var(c, "b", 0, 7);
    r0 = uop_range(c, k(4), 0, AXIS_LOOP);
    r1 = uop_range(c, k(3), 1, AXIS_LOOP);
    return c && a && b && r0 && r1 ? 0 : -1;
}
static int teardown(void **state) {
    (void)state;
    ruleset_registry_free();
    uctx_free(c);
    return 0;
}

static void check(const UOp *e, const char *want) {
    assert_non_null(e);
    const UOp *s = uop_simplify(c, e, "sym", NULL);
    if (!s) fail_msg("simplify failed: %s", uctx_error(c));
    StrBuf sb;
    sb_init(&sb);
    uop_render_expr(&sb, s);
    if (strcmp(sb_str(&sb), want) != 0) fail_msg("got  %s\nwant %s", sb_str(&sb), want);
    sb_free(&sb);
}

/* ---- gated expressions ---- */
static void test_upper_bound_drops_mod(void **state) {
    (void)state;
    check(gated(lt(a, k(3)), mod(a, k(4))), "(a if (a<3) else Invalid)");
}
static void test_upper_bound_folds_div(void **state) {
    (void)state;
    check(gated(lt(a, k(3)), idiv(a, k(4))), "(0 if (a<3) else Invalid)");
}
static void test_lower_bound_folds_max(void **state) {
    (void)state;
    check(gated(lnot(lt(a, k(5))), mx(a, k(3))), "(a if ((a<5)!=True) else Invalid)");
}
static void test_lower_bound_shifts_div(void **state) {
    (void)state;
    check(gated(lnot(lt(a, k(5))), idiv(add(a, k(-5)), k(5))), "((a//5+-1) if ((a<5)!=True) else Invalid)");
}
static void test_gated_index_mod(void **state) {
    (void)state;
    check(gated(lt(r0, k(3)), mod(add(r0, mul(r1, k(3))), k(9))), "((r1*3+r0) if (r0<3) else Invalid)");
}
static void test_gated_index_two_clauses(void **state) {
    (void)state;
    check(gated(land(lt(r0, k(3)), lt(r1, k(2))), idiv(add(r0, mul(r1, k(3))), k(9))),
          "(0 if ((r0<3)&(r1<2)) else Invalid)");
}
static void test_two_sided_bound(void **state) {
    (void)state;
    const UOp *v = land(lnot(lt(a, k(2))), lt(a, k(4)));
    check(gated(v, add(mod(add(a, k(-2)), k(2)), idiv(a, k(2)))), "((a+-1) if (((a<2)!=True)&(a<4)) else Invalid)");
}
static void test_unhelpful_valid_keeps_expression(void **state) {
    (void)state;
    check(gated(lt(a, k(9)), mod(a, k(4))), "((a%4) if (a<9) else Invalid)");
}

/* ---- conjunctions ---- */
static void test_implied_clause_dropped(void **state) {
    (void)state;
    check(land(lt(a, k(3)), lt(a, k(5))), "(a<3)");
}
static void test_weaker_clause_first_is_kept(void **state) {
    (void)state;
    check(land(lt(a, k(5)), lt(a, k(3))), "((a<5)&(a<3))");
}
static void test_duplicate_clause_dropped(void **state) {
    (void)state;
    check(land(land(lt(a, k(3)), lt(b, k(2))), lt(a, k(3))), "((a<3)&(b<2))");
}
static void test_contradiction_is_false(void **state) {
    (void)state;
    check(land(lt(a, k(3)), lnot(lt(a, k(5)))), "False");
}
static void test_simplex_clause_dropped(void **state) {
    (void)state;
    check(land(lnot(lt(add(a, b), k(1))), lnot(lt(mx(a, b), k(1)))), "(((a+b)<1)!=True)");
}
static void test_clause_over_other_expression_kept(void **state) {
    (void)state;
    check(land(lt(b, k(2)), lt(add(mul(b, k(4)), a), k(12))), "((b<2)&((a+b*4)<12))");
}

/* ---- randomized: where valid holds, the value does not change ---- */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t next_rand(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}
static int64_t pick(int64_t lo, int64_t hi) { return lo + (int64_t)(next_rand() % (uint64_t)(hi - lo + 1)); }

static const UOp *random_term(int depth) {
    int r = (int)pick(0, depth > 0 ? 6 : 2);
    switch (r) {
    case 0: return a;
    case 1: return b;
    case 2: return k(pick(-6, 12));
    case 3: return add(random_term(depth - 1), random_term(depth - 1));
    case 4: return mul(random_term(depth - 1), k(pick(-3, 5)));
    case 5: return idiv(random_term(depth - 1), k(pick(1, 9)));
    default: return mod(random_term(depth - 1), k(pick(1, 9)));
    }
}
static const UOp *random_clause(void) {
    const UOp *x = pick(0, 2) ? (pick(0, 1) ? a : b) : random_term(1);
    const UOp *cmp = lt(x, k(pick(-2, 12)));
    return pick(0, 1) ? cmp : lnot(cmp);
}

static void test_random_gated_values_preserved(void **state) {
    (void)state;
    int checked = 0;
    for (int iter = 0; iter < 400; iter++) {
        const UOp *valid = random_clause();
        for (int j = (int)pick(0, 2); j > 0; j--) valid = land(valid, random_clause());
        const UOp *x = random_term(3);
        const UOp *e = uop_where(c, valid, x, k(-1000));
        const UOp *g = gated(valid, x);
        assert_non_null(e);
        assert_non_null(g);
        const UOp *se = uop_simplify(c, e, "sym", NULL);
        const UOp *sg = uop_simplify(c, g, "sym", NULL);
        if (!se || !sg) fail_msg("simplify failed: %s", uctx_error(c));
        /* the gated form loses its value where valid fails; take the
         * simplified index out of the WHERE when it kept one */
        const UOp *sx = uop_op(sg) == OP_WHERE ? sg->src[1] : sg;
        for (int64_t av = 0; av <= 10; av++)
            for (int64_t bv = 0; bv <= 7; bv++) {
                EvalBinding bind[2] = {{"a", av}, {"b", bv}};
                char err[128];
                int64_t ok, want, got;
                if (!uop_eval_int(valid, bind, 2, &ok, err, sizeof err)) fail_msg("eval valid: %s", err);
                if (!ok) continue;
                bool w = uop_eval_int(x, bind, 2, &want, err, sizeof err);
                if (!w) continue; /* e.g. division by zero in the original */
                if (!uop_eval_int(se, bind, 2, &got, err, sizeof err)) fail_msg("eval where: %s", err);
                if (got != want) fail_msg("where: a=%lld b=%lld got %lld want %lld", (long long)av, (long long)bv,
                                          (long long)got, (long long)want);
                if (uop_op(sx) == OP_CONST && sx->arg && sx->arg->kind == ARG_INVALID)
                    fail_msg("gated index became Invalid though valid holds at a=%lld b=%lld", (long long)av,
                             (long long)bv);
                if (!uop_eval_int(sx, bind, 2, &got, err, sizeof err)) fail_msg("eval gated: %s", err);
                if (got != want) fail_msg("gated: a=%lld b=%lld got %lld want %lld", (long long)av, (long long)bv,
                                          (long long)got, (long long)want);
                checked++;
            }
    }
    assert_true(checked > 1000);
}

/* ---- facts kept on nodes ---- */
/* A valid-based simplification that finds nothing is remembered on the node;
 * one that rewrites is not, and simplifying again gives the same nodes. */
static void test_unchanged_results_are_remembered(void **state) {
    (void)state;
    const UOp *v = land(lt(a, k(9)), lt(b, k(5)));
    const UOp *g = gated(v, mod(a, k(4)));
    assert_false(sym_fact(v, SYM_FACT_VALID_SIMPLE));
    assert_false(sym_fact(g, SYM_FACT_GATED_SIMPLE));
    const UOp *s1 = uop_simplify(c, g, "sym", NULL);
    assert_ptr_equal(s1, g);
    assert_true(sym_fact(v, SYM_FACT_VALID_SIMPLE));
    assert_true(sym_fact(g, SYM_FACT_GATED_SIMPLE));
    assert_ptr_equal(uop_simplify(c, g, "sym", NULL), g);

    const UOp *changing = gated(lt(r0, k(3)), mod(add(r0, mul(r1, k(3))), k(9)));
    const UOp *s2 = uop_simplify(c, changing, "sym", NULL);
    assert_ptr_not_equal(s2, changing);
    assert_false(sym_fact(changing, SYM_FACT_GATED_SIMPLE));
    size_t before = uctx_node_count(c);
    assert_ptr_equal(uop_simplify(c, changing, "sym", NULL), s2);
    assert_int_equal(uctx_node_count(c), before); /* the second time builds nothing new */
}

/* facts share a byte with the bounds state: neither disturbs the other */
static void test_facts_keep_bounds(void **state) {
    (void)state;
    const UOp *x = add(mul(b, k(3)), k(2)); /* [2, 23] */
    sym_fact_set(x, SYM_FACT_VALID_SIMPLE);
    int64_t lo = 0, hi = 0;
    assert_true(uop_bounds(x, &lo, &hi));
    assert_int_equal(lo, 2);
    assert_int_equal(hi, 23);
    assert_true(sym_fact(x, SYM_FACT_VALID_SIMPLE));
    assert_false(sym_fact(x, SYM_FACT_GATED_SIMPLE));
    const UOp *y = add(x, k(5)); /* bounds first, then a fact */
    assert_true(uop_bounds(y, &lo, &hi));
    sym_fact_set(y, SYM_FACT_GATED_SIMPLE);
    assert_true(uop_bounds(y, &lo, &hi));
    assert_int_equal(lo, 7);
    assert_int_equal(hi, 28);
    assert_true(sym_fact(y, SYM_FACT_GATED_SIMPLE));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_upper_bound_drops_mod),
        cmocka_unit_test(test_upper_bound_folds_div),
        cmocka_unit_test(test_lower_bound_folds_max),
        cmocka_unit_test(test_lower_bound_shifts_div),
        cmocka_unit_test(test_gated_index_mod),
        cmocka_unit_test(test_gated_index_two_clauses),
        cmocka_unit_test(test_two_sided_bound),
        cmocka_unit_test(test_unhelpful_valid_keeps_expression),
        cmocka_unit_test(test_implied_clause_dropped),
        cmocka_unit_test(test_weaker_clause_first_is_kept),
        cmocka_unit_test(test_duplicate_clause_dropped),
        cmocka_unit_test(test_contradiction_is_false),
        cmocka_unit_test(test_simplex_clause_dropped),
        cmocka_unit_test(test_clause_over_other_expression_kept),
        cmocka_unit_test(test_random_gated_values_preserved),
        cmocka_unit_test(test_unchanged_results_are_remembered),
        cmocka_unit_test(test_facts_keep_bounds),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
