/* test_symbolic.c - the symbolic rule sets, case by case: each row builds an
 * expression over a in [alo, ahi] and b in [blo, bhi], simplifies it, and
 * checks the rendered result and its bounds.  The expected forms are what
 * tinygrad v0.12.0 produces for the same expression (UOp.simplify, i.e. the
 * `symbolic` set); a second table covers the extra rules of `sym`. */
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
#include "core/rewrite/rewrite.h"
#include "core/sym/bounds.h"
#include "core/sym/symbolic.h"
#include "viz/render.h"

static UCtx *c;
static const UOp *a, *b;

/* ---- small constructors, named like the operations they build ---- */
static const UOp *k(int64_t v) { return uop_const_int(c, DT_INDEX, v); }
static const UOp *t(void) { return uop_const_bool(c, true); }
static const UOp *f(void) { return uop_const_bool(c, false); }
static const UOp *add(const UOp *x, const UOp *y) { return uop_binary(c, OP_ADD, x, y); }
static const UOp *mul(const UOp *x, const UOp *y) { return uop_binary(c, OP_MUL, x, y); }
static const UOp *idiv(const UOp *x, const UOp *y) { return uop_binary(c, OP_IDIV, x, y); }
static const UOp *mod(const UOp *x, const UOp *y) { return uop_binary(c, OP_MOD, x, y); }
static const UOp *mx(const UOp *x, const UOp *y) { return uop_binary(c, OP_MAX, x, y); }
static const UOp *xor(const UOp *x, const UOp *y) { return uop_binary(c, OP_XOR, x, y); }
static const UOp *lt(const UOp *x, const UOp *y) { return uop_binary(c, OP_CMPLT, x, y); }
static const UOp *ne(const UOp *x, const UOp *y) { return uop_binary(c, OP_CMPNE, x, y); }
static const UOp *land(const UOp *x, const UOp *y) { return uop_binary(c, OP_AND, x, y); }
static const UOp *lor(const UOp *x, const UOp *y) { return uop_binary(c, OP_OR, x, y); }
static const UOp *lnot(const UOp *x) { return ne(x, t()); }
static const UOp *neg(const UOp *x) { return mul(x, k(-1)); }
static const UOp *where(const UOp *cond, const UOp *x, const UOp *y) { return uop_where(c, cond, x, y); }
static const UOp *gated(const UOp *cond, const UOp *x, const UOp *unused) {
    (void)unused;
    return uop_where(c, cond, x, uop_const_arg(c, DT_INDEX, arg_invalid(c)));
}
static const UOp *cast32(const UOp *x) { return uop_cast(c, x, DT_INT32); }
static const UOp *cast64(const UOp *x) { return uop_cast(c, x, DT_INT64); }
static const UOp *rng(int64_t n) { return uop_range(c, k(n), 0, AXIS_LOOP); }

/* ---- the rows are written as calls of the constructors above; a small
 * parser turns the text into the expression ---- */
static const UOp *parse_expr(const char **p);

static void skip_space(const char **p) { while (**p == ' ') (*p)++; }

static const UOp *parse_args_and_call(const char *name, size_t len, const char **p) {
    const UOp *arg[3] = {0};
    int64_t num = 0;
    int n = 0;
    bool is_num_call = (len == 1 && name[0] == 'k') || (len == 3 && strncmp(name, "rng", 3) == 0);
    (*p)++; /* ( */
    skip_space(p);
    if (is_num_call) num = strtoll(*p, (char **)p, 10);
    else
        while (**p != ')' && n < 3) {
            arg[n++] = parse_expr(p);
            skip_space(p);
            if (**p == ',') (*p)++;
            skip_space(p);
        }
    if (**p != ')') return NULL;
    (*p)++;
#define IS(s) (len == strlen(s) && strncmp(name, s, len) == 0)
    if (IS("k")) return k(num);
    if (IS("rng")) return rng(num);
    if (IS("t")) return t();
    if (IS("f")) return f();
    if (n == 1 && IS("lnot")) return lnot(arg[0]);
    if (n == 1 && IS("neg")) return neg(arg[0]);
    if (n == 1 && IS("cast32")) return cast32(arg[0]);
    if (n == 1 && IS("cast64")) return cast64(arg[0]);
    if (n == 2 && IS("add")) return add(arg[0], arg[1]);
    if (n == 2 && IS("mul")) return mul(arg[0], arg[1]);
    if (n == 2 && IS("idiv")) return idiv(arg[0], arg[1]);
    if (n == 2 && IS("mod")) return mod(arg[0], arg[1]);
    if (n == 2 && IS("mx")) return mx(arg[0], arg[1]);
    if (n == 2 && IS("xor")) return xor(arg[0], arg[1]);
    if (n == 2 && IS("lt")) return lt(arg[0], arg[1]);
    if (n == 2 && IS("ne")) return ne(arg[0], arg[1]);
    if (n == 2 && IS("land")) return land(arg[0], arg[1]);
    if (n == 2 && IS("lor")) return lor(arg[0], arg[1]);
    if (n == 3 && IS("where")) return where(arg[0], arg[1], arg[2]);
    if (n == 3 && IS("gated")) return gated(arg[0], arg[1], arg[2]);
#undef IS
    return NULL;
}

static const UOp *parse_expr(const char **p) {
    skip_space(p);
    const char *start = *p;
    while ((**p >= 'a' && **p <= 'z') || (**p >= '0' && **p <= '9')) (*p)++;
    size_t len = (size_t)(*p - start);
    if (**p == '(') return parse_args_and_call(start, len, p);
    if (len == 1 && start[0] == 'a') return a;
    if (len == 1 && start[0] == 'b') return b;
    return NULL;
}

typedef struct Case {
    int64_t alo, ahi, blo, bhi;
    const char *text;
    const char *expect;
    int64_t lo, hi;
} Case;

#define CASE(alo, ahi, blo, bhi, expr, expect, lo, hi) {alo, ahi, blo, bhi, #expr, expect, lo, hi}

static int run_case(const Case *cs, const char *set) {
    c = uctx_new();
    a = uop_var(c, "a", cs->alo, cs->ahi);
    b = uop_var(c, "b", cs->blo, cs->bhi);
    const char *p = cs->text;
    const UOp *e = parse_expr(&p);
    int bad = 0;
    const UOp *s = e ? uop_simplify(c, e, set, NULL) : NULL;
    StrBuf sb;
    sb_init(&sb);
    if (s) uop_render_expr(&sb, s);
    int64_t lo = 0, hi = 0;
    bool has = s && uop_bounds(s, &lo, &hi);
    if (!s || strcmp(sb_str(&sb), cs->expect) != 0) {
        printf("  %s: %s -> %s, expected %s %s\n", set, cs->text, s ? sb_str(&sb) : "(error)", cs->expect,
               s ? "" : uctx_error(c));
        bad = 1;
    } else if (!has || lo != cs->lo || hi != cs->hi) {
        printf("  %s: %s -> %s has bounds [%lld, %lld], expected [%lld, %lld]\n", set, cs->text, sb_str(&sb),
               (long long)lo, (long long)hi, (long long)cs->lo, (long long)cs->hi);
        bad = 1;
    }
    sb_free(&sb);
    uctx_free(c);
    return bad;
}

/* expected results from tinygrad v0.12.0's UOp.simplify (the `symbolic` set) */
static const Case symbolic_cases[] = {
    CASE(0, 10, 0, 7, add(a, k(0)), "a", 0, 10),
    CASE(0, 10, 0, 7, mul(a, k(1)), "a", 0, 10),
    CASE(0, 10, 0, 7, mul(a, k(0)), "0", 0, 0),
    CASE(0, 10, 0, 7, idiv(a, a), "1", 1, 1),
    CASE(0, 10, 0, 7, idiv(a, k(1)), "a", 0, 10),
    CASE(0, 10, 0, 7, idiv(a, k(-1)), "(a*-1)", -10, 0),
    CASE(0, 10, 0, 7, mod(mod(a, b), b), "(a%b)", INT64_MIN, INT64_MAX),
    CASE(0, 10, 0, 7, mod(a, a), "0", 0, 0),
    CASE(0, 10, 0, 7, lt(a, a), "False", 0, 0),
    CASE(0, 10, 0, 7, ne(a, a), "False", 0, 0),
    CASE(0, 10, 0, 7, xor(a, a), "0", 0, 0),
    CASE(0, 10, 0, 7, xor(a, k(0)), "a", 0, 10),
    CASE(0, 10, 0, 7, mx(a, a), "a", 0, 10),
    CASE(0, 10, 0, 7, add(k(3), k(4)), "7", 7, 7),
    CASE(0, 10, 0, 7, mul(k(-3), k(4)), "-12", -12, -12),
    CASE(0, 10, 0, 7, idiv(k(-7), k(2)), "-3", -3, -3),
    CASE(0, 10, 0, 7, mod(k(-7), k(2)), "-1", -1, -1),
    CASE(0, 10, 0, 7, lt(k(2), k(5)), "True", 1, 1),
    CASE(0, 10, 0, 7, mx(k(2), k(-5)), "2", 2, 2),
    CASE(0, 10, 0, 7, where(lt(k(1), k(0)), a, b), "b", 0, 7),
    CASE(0, 10, 0, 7, where(lt(a, k(5)), b, b), "b", 0, 7),
    CASE(0, 10, 0, 7, add(mod(a, k(4)), mul(idiv(a, k(4)), k(4))), "a", 0, 10),
    CASE(0, 10, 0, 7, add(mul(idiv(a, k(4)), k(4)), mod(a, k(4))), "a", 0, 10),
    CASE(0, 10, 0, 7, add(add(b, mod(a, k(4))), mul(idiv(a, k(4)), k(4))), "(a+b)", 0, 17),
    CASE(0, 10, 0, 7, add(mul(mod(a, k(3)), k(2)), mul(idiv(a, k(3)), k(6))), "(a*2)", 0, 20),
    CASE(0, 100, 0, 7, add(mod(idiv(a, k(2)), k(5)), mul(idiv(a, k(10)), k(5))), "(a//2)", 0, 50),
    CASE(0, 10, 0, 7, land(lt(a, k(5)), t()), "(a<5)", 0, 1),
    CASE(0, 10, 0, 7, land(lt(a, k(5)), f()), "False", 0, 0),
    CASE(0, 10, 0, 7, lor(lt(a, k(5)), t()), "True", 1, 1),
    CASE(0, 10, 0, 7, lor(lt(a, k(5)), f()), "(a<5)", 0, 1),
    CASE(0, 10, 0, 7, lnot(lnot(lt(a, k(5)))), "(a<5)", 0, 1),
    CASE(0, 10, 0, 7, where(lt(a, k(5)), t(), f()), "(a<5)", 0, 1),
    CASE(0, 10, 0, 7, where(lt(a, k(5)), f(), t()), "((a<5)!=True)", 0, 1),
    CASE(0, 10, 0, 7, lor(lt(a, k(5)), lnot(lt(a, k(5)))), "True", 1, 1),
    CASE(0, 10, 0, 7, where(lnot(lt(a, k(5))), a, b), "(b if (a<5) else a)", 0, 10),
    CASE(0, 10, 0, 7, where(lt(a, k(5)), where(lt(b, k(3)), a, b), b), "(a if ((a<5)&(b<3)) else b)", 0, 10),
    CASE(0, 10, 0, 7, add(a, a), "(a*2)", 0, 20),
    CASE(0, 10, 0, 7, add(mul(a, k(3)), mul(a, k(5))), "(a*8)", 0, 80),
    CASE(0, 10, 0, 7, add(a, mul(a, k(3))), "(a*4)", 0, 40),
    CASE(0, 10, 0, 7, add(add(b, a), a), "(b+a*2)", 0, 27),
    CASE(0, 10, 0, 7, add(add(b, mul(a, k(2))), mul(a, k(5))), "(b+a*7)", 0, 77),
    CASE(0, 10, 0, 7, add(a, neg(a)), "0", 0, 0),
    CASE(0, 10, 0, 7, add(add(a, b), neg(a)), "b", 0, 7),
    CASE(0, 10, 0, 7, add(add(a, k(3)), k(4)), "(a+7)", 7, 17),
    CASE(0, 10, 0, 7, mul(mul(a, k(3)), k(4)), "(a*12)", 0, 120),
    CASE(0, 10, 0, 7, add(add(a, k(3)), b), "(a+b+3)", 3, 20),
    CASE(0, 10, 0, 7, mul(mul(a, k(3)), b), "(a*b*3)", 0, 210),
    CASE(0, 10, 0, 7, add(b, a), "(a+b)", 0, 17),
    CASE(0, 10, 0, 7, mul(k(5), a), "(a*5)", 0, 50),
    CASE(0, 10, 0, 7, mul(k(-1), add(a, k(3))), "(a*-1+-3)", -13, -3),
    CASE(0, 10, 0, 7, mul(k(2), add(a, k(3))), "(a*2+6)", 6, 26),
    CASE(0, 10, 0, 7, mul(add(a, b), k(3)), "((a+b)*3)", 0, 51),
    CASE(0, 10, 0, 7, mul(k(-1), add(a, b)), "((a+b)*-1)", -17, 0),
    CASE(0, 10, 0, 7, mx(a, k(20)), "20", 20, 20),
    CASE(0, 10, 0, 7, mx(a, k(-5)), "a", 0, 10),
    CASE(0, 10, 0, 7, mx(a, b), "max(a, b)", 0, 10),
    CASE(0, 10, 0, 7, lt(a, k(20)), "True", 1, 1),
    CASE(0, 10, 0, 7, lt(a, k(0)), "False", 0, 0),
    CASE(0, 10, 0, 7, mod(a, k(20)), "a", 0, 10),
    CASE(0, 10, 0, 7, idiv(a, k(20)), "0", 0, 0),
    CASE(5, 9, 0, 7, idiv(a, k(5)), "1", 1, 1),
    CASE(5, 9, 0, 7, mod(a, k(5)), "(a+-5)", 0, 4),
    CASE(0, 10, 0, 7, lt(add(k(3), a), k(10)), "(a<7)", 0, 1),
    CASE(0, 10, 0, 7, lt(mul(a, k(4)), k(10)), "(a<3)", 0, 1),
    CASE(0, 10, 0, 7, lt(mul(a, k(-4)), k(-10)), "((a*-1)<-2)", 0, 1),
    CASE(0, 100, 0, 7, lt(idiv(a, k(4)), k(3)), "(a<12)", 0, 1),
    CASE(-100, 100, 0, 7, lt(idiv(a, k(4)), k(-3)), "(a<-15)", 0, 1),
    CASE(0, 10, 0, 3, lt(add(mul(a, k(4)), b), k(8)), "(a<2)", 0, 1),
    CASE(0, 10, 0, 7, lt(neg(a), neg(b)), "(b<a)", 0, 1),
    CASE(0, 100, 0, 7, idiv(idiv(a, k(3)), k(4)), "(a//12)", 0, 8),
    CASE(0, 10, 0, 3, idiv(add(mul(a, k(4)), b), k(4)), "a", 0, 10),
    CASE(0, 10, 0, 3, mod(add(mul(a, k(4)), b), k(4)), "b", 0, 3),
    CASE(0, 10, 0, 7, idiv(add(mul(a, k(4)), b), k(4)), "(a+b//4)", 0, 11),
    CASE(0, 10, 0, 7, mod(add(mul(a, k(4)), b), k(4)), "(b%4)", 0, 3),
    CASE(0, 10, 0, 7, mod(add(mod(a, k(4)), b), k(2)), "((a+b)%2)", 0, 1),
    CASE(0, 10, 0, 7, idiv(add(a, k(7)), k(4)), "((a+3)//4+1)", 1, 4),
    CASE(0, 10, 0, 7, idiv(add(mul(a, k(6)), k(4)), k(4)), "(a*3//2+1)", 1, 16),
    CASE(0, 10, 0, 7, mod(add(mul(a, k(6)), k(4)), k(4)), "(a%2*2)", 0, 2),
    CASE(0, 1, 0, 7, idiv(add(mul(a, k(5)), k(3)), k(4)), "(a*2)", 0, 2),
    CASE(0, 10, 0, 7, idiv(add(mul(a, k(8)), mul(b, k(4))), k(16)), "((a+b//2)//2)", 0, 6),
    CASE(0, 10, 1, 7, idiv(mul(a, b), b), "a", 0, 10),
    CASE(0, 10, 1, 7, mod(mul(a, b), b), "0", 0, 0),
    CASE(-10, 0, 0, 7, idiv(a, k(3)), "(a*-1//3*-1)", -3, 0),
    CASE(-10, 0, 0, 7, mod(a, k(3)), "(a*-1%3*-1)", -2, 0),
    CASE(0, 10, 0, 7, idiv(a, k(-3)), "(a//3*-1)", -3, 0),
    CASE(0, 10, 0, 7, mod(a, k(-3)), "(a%3)", 0, 2),
    CASE(-10, 10, 0, 7, idiv(add(mul(a, k(3)), b), k(3)), "((b+a*3)//3)", -10, 12),
    CASE(-10, 10, 0, 7, mod(add(mul(a, k(3)), b), k(3)), "((b+a*3)%3)", -2, 2),
    CASE(0, 10, 0, 7, idiv(add(idiv(a, k(2)), k(3)), k(2)), "((a+2)//4+1)", 1, 4),
    CASE(0, 10, 0, 7, mod(rng(16), k(16)), "r0", 0, 15),
    CASE(0, 10, 0, 7, idiv(rng(16), k(16)), "0", 0, 0),
    CASE(3, 3, 0, 7, add(a, b), "(b+3)", 3, 10),
    CASE(0, 10, 0, 7, ne(a, k(0)), "(a!=0)", 0, 1),
    CASE(0, 10, 0, 7, cast32(cast64(a)), "(int)(a)", 0, 10),
    CASE(0, 10, 0, 7, cast64(k(5)), "5", 5, 5),
    CASE(0, 10, 0, 7, ne(lt(add(a, mul(b, k(2))), k(1)), t()), "(((a+b)<1)!=True)", 0, 1),
    CASE(0, 10, 0, 7, add(where(lt(a, k(5)), k(1), b), where(lt(a, k(5)), k(2), a)), "(3 if (a<5) else (a+b))", 0, 17),
    CASE(0, 10, 0, 7, gated(lt(a, k(5)), add(a, k(1)), k(2)), "((a+1) if (a<5) else Invalid)", INT64_MIN, INT64_MAX),
    CASE(0, 10, 0, 7, add(mod(a, k(4)), mod(a, k(4))), "(a%4*2)", 0, 6),
};

static void test_symbolic_table(void **state) {
    (void)state;
    int bad = 0, n = (int)(sizeof symbolic_cases / sizeof *symbolic_cases);
    for (int i = 0; i < n; i++) bad += run_case(&symbolic_cases[i], "symbolic");
    printf("  %d of %d symbolic cases differ\n", bad, n);
    assert_int_equal(bad, 0);
}

/* rules only the `sym` set has (tinygrad v0.12.0 sym) */
static const Case sym_cases[] = {
    CASE(0, 10, 0, 7, mul(add(a, b), k(3)), "(a*3+b*3)", 0, 51),
    CASE(0, 10, 0, 7, mul(k(-1), add(a, b)), "(a*-1+b*-1)", -17, 0),
    CASE(0, 10, 0, 7, ne(a, k(0)), "(bool)(a)", 0, 1),
    CASE(0, 10, 0, 7, cast32(where(lt(a, k(5)), a, b)), "((int)(a) if (a<5) else (int)(b))", 0, 10),
    CASE(0, 10, 0, 7, add(a, k(0)), "a", 0, 10),
    CASE(0, 10, 0, 7, idiv(add(mul(a, k(4)), b), k(4)), "(a+b//4)", 0, 11),
};

static void test_sym_table(void **state) {
    (void)state;
    int bad = 0, n = (int)(sizeof sym_cases / sizeof *sym_cases);
    for (int i = 0; i < n; i++) bad += run_case(&sym_cases[i], "sym");
    assert_int_equal(bad, 0);
}

/* every rule is named, and the names show in the trace */
static void test_trace_names_rules(void **state) {
    (void)state;
    c = uctx_new();
    a = uop_var(c, "a", 0, 10);
    Trace tr;
    trace_init(&tr);
    const UOp *s = uop_simplify(c, add(add(a, k(0)), a), "sym", &tr);
    assert_non_null(s);
    bool saw_zero = false, saw_combine = false;
    for (size_t i = 0; i < tr.nrewrites; i++) {
        saw_zero |= strcmp(tr.rewrites[i].rule, "fold_add_zero") == 0;
        saw_combine |= strcmp(tr.rewrites[i].rule, "combine_like_terms") == 0;
    }
    assert_true(saw_zero);
    assert_true(saw_combine);
    trace_free(&tr);
    uctx_free(c);
}

static void test_ruleset_names(void **state) {
    (void)state;
    const char *names[] = {"propagate_invalid", "symbolic_simple", "commutative", "symbolic", "sym", "gep_pushing"};
    for (int i = 0; i < 6; i++) assert_non_null(sym_ruleset(names[i]));
    assert_string_equal(ruleset_name(sym_ruleset("symbolic")), "symbolic");
    assert_true(ruleset_count(sym_ruleset("sym")) > ruleset_count(sym_ruleset("symbolic")));
    assert_true(ruleset_count(sym_ruleset("symbolic")) > ruleset_count(sym_ruleset("symbolic_simple")));
    assert_null(sym_ruleset("no_such_set"));
    c = uctx_new();
    assert_null(uop_simplify(c, k(1), "no_such_set", NULL));
    assert_non_null(strstr(uctx_error(c), "unknown rule set 'no_such_set'"));
    uctx_free(c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_symbolic_table),
        cmocka_unit_test(test_sym_table),
        cmocka_unit_test(test_trace_names_rules),
        cmocka_unit_test(test_ruleset_names),
    };
    int r = cmocka_run_group_tests(tests, NULL, NULL);
    ruleset_registry_free();
    return r;
}
