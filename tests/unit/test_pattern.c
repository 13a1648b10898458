/* test_pattern.c - the rule language: parsing (with error positions), every
 * pattern feature, templates, rules, `when` and per-rule statistics. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/rewrite/pattern.h"

typedef struct G {
    UCtx *c;
    const UOp *x, *y;           /* index vars */
    const UOp *zero, *one, *two; /* index consts */
} G;

static int setup(void **state) {
    static G g;
    g.c = uctx_new();
    g.x = uop_var(g.c, "x", 0, 10);
    g.y = uop_var(g.c, "y", 0, 10);
    g.zero = uop_const_int(g.c, DT_INDEX, 0);
    g.one = uop_const_int(g.c, DT_INDEX, 1);
    g.two = uop_const_int(g.c, DT_INDEX, 2);
    *state = &g;
    return 0;
}

static int teardown(void **state) {
    G *g = *state;
    uctx_free(g->c);
    return 0;
}

static const UOp *add(G *g, const UOp *a, const UOp *b) { return uop_binary(g->c, OP_ADD, a, b); }
static const UOp *mul(G *g, const UOp *a, const UOp *b) { return uop_binary(g->c, OP_MUL, a, b); }

/* compiles text (must succeed), matches u, frees; returns the match result
 * and the capture named cap (if any) in *got */
static bool matches(const char *text, const UOp *u, const char *cap, const UOp **got) {
    char err[256];
    Pat *p = pattern_compile(text, err, sizeof err);
    if (!p) fail_msg("pattern %s did not compile: %s", text, err);
    const UOp *caps[PAT_MAX_CAPTURES];
    bool ok = pattern_match(p, u, caps);
    if (ok && cap && got) {
        int slot = pattern_capture_slot(p, cap);
        assert_true(slot >= 0);
        *got = caps[slot];
    }
    pattern_free(p);
    return ok;
}

static void expect_error(const char *text, const char *want) {
    char err[256] = "";
    Pat *p = pattern_compile(text, err, sizeof err);
    assert_null(p);
    assert_string_equal(err, want);
}

static void test_parse_errors(void **state) {
    (void)state;
    expect_error("(ADDD x y)", "line 1, column 2: unknown op or op class 'ADDD'");
    expect_error("({Binary Nope} x y)", "line 1, column 10: unknown op or op class 'Nope'");
    expect_error("(ADD x\n  (MUL y 2)", "line 1, column 1: '(' is never closed");
    expect_error("(ADD x:foo y)", "line 1, column 8: unknown dtype 'foo'");
    expect_error("(ADD x c:CONST)", "line 1, column 10: unknown dtype 'CONST' (CONST is an op: capture a node by its op with name@(CONST))");
    expect_error("(ADD x y) z", "line 1, column 11: unexpected 'z' after the end of the pattern");
    expect_error("(ADD x y ?no_such_pred)", "line 1, column 11: unknown predicate 'no_such_pred'");
    expect_error("(ADD x\n    y]", "line 2, column 6: expected ')', found ']'");
    expect_error("({} x)", "line 1, column 2: empty op set");
    expect_error("", "line 1, column 1: unexpected end of pattern");
    expect_error("(SINK ... x)", "line 1, column 11: nothing may follow '...' or '*' except arg= and ?predicates");
}

static void test_capture_and_any(void **state) {
    G *g = *state;
    const UOp *got = NULL;
    const UOp *e = add(g, g->x, g->one);
    assert_true(matches("x", e, "x", &got));
    assert_ptr_equal(got, e);
    assert_true(matches("_", e, NULL, NULL));
    assert_true(matches("c@(CONST)", g->one, "c", &got));
    assert_ptr_equal(got, g->one);
    assert_false(matches("c@(CONST)", e, NULL, NULL));
    /* (OP) with no sources written: any sources */
    assert_true(matches("(ADD)", e, NULL, NULL));
    assert_false(matches("(MUL)", e, NULL, NULL));
}

static void test_op_sets(void **state) {
    G *g = *state;
    const UOp *a = add(g, g->x, g->y), *m = mul(g, g->x, g->y);
    const UOp *s = uop_binary(g->c, OP_MAX, g->x, g->y);
    assert_true(matches("({ADD MUL} a b)", a, NULL, NULL));
    assert_true(matches("({ADD MUL} a b)", m, NULL, NULL));
    assert_false(matches("({ADD MUL} a b)", s, NULL, NULL));
    assert_true(matches("{ADD MUL}", m, NULL, NULL));
    assert_false(matches("{ADD MUL}", g->x, NULL, NULL));
    assert_true(matches("(_ a b)", s, NULL, NULL));
    assert_false(matches("(_ a)", s, NULL, NULL));
}

static void test_dtypes(void **state) {
    G *g = *state;
    const UOp *xi = uop_cast(g->c, g->x, DT_INT32);
    const UOp *xf = uop_cast(g->c, g->x, DT_FLOAT32);
    const UOp *xu = uop_cast(g->c, g->x, dt_scalar(SK_UINT8));
    const UOp *ai = add(g, xi, xi), *ax = add(g, g->x, g->x);
    assert_true(matches("(ADD:int32 a b)", ai, NULL, NULL));
    assert_false(matches("(ADD:int32 a b)", ax, NULL, NULL));
    assert_true(matches("(ADD:{int32 index} a b)", ax, NULL, NULL));
    assert_true(matches("x:ints", xi, NULL, NULL));
    assert_true(matches("x:ints", xu, NULL, NULL));
    assert_true(matches("x:uints", xu, NULL, NULL));
    assert_false(matches("x:sints", xu, NULL, NULL));
    assert_false(matches("x:ints", g->x, NULL, NULL)); /* index is not an int class member */
    assert_true(matches("x:index", g->x, NULL, NULL));
    assert_true(matches("x:floats", xf, NULL, NULL));
    assert_false(matches("x:floats", xi, NULL, NULL));
    assert_true(matches("x:bool", uop_const_bool(g->c, true), NULL, NULL));
    assert_true(matches("(_:float32 ...)", xf, NULL, NULL));
    assert_false(matches("(_:float32 ...)", xi, NULL, NULL));
    /* a vector matches its scalar's filter */
    const UOp *vs[4] = {xf, xf, xf, xf};
    const UOp *v = uop_new(g->c, OP_VECTORIZE, dt_vec(DT_FLOAT32, 4), vs, 4, NULL);
    assert_non_null(v);
    assert_true(matches("x:float32", v, NULL, NULL));
    assert_true(matches("x:float32.vec(4)", v, NULL, NULL));
    assert_false(matches("x:float32.vec(4)", xf, NULL, NULL));
}

static void test_source_order(void **state) {
    G *g = *state;
    const UOp *got = NULL;
    /* ADD is commutative: either order */
    assert_true(matches("(ADD x (CONST 0))", add(g, g->zero, g->x), "x", &got));
    assert_ptr_equal(got, g->x);
    assert_true(matches("(ADD x (CONST 0))", add(g, g->x, g->zero), "x", &got));
    assert_ptr_equal(got, g->x);
    /* CMPLT is not */
    assert_true(matches("(CMPLT x 0)", uop_binary(g->c, OP_CMPLT, g->x, g->zero), NULL, NULL));
    assert_false(matches("(CMPLT x 0)", uop_binary(g->c, OP_CMPLT, g->zero, g->x), NULL, NULL));
    /* brackets: any order for any op */
    assert_true(matches("[CMPLT 0 x]", uop_binary(g->c, OP_CMPLT, g->x, g->zero), "x", &got));
    assert_ptr_equal(got, g->x);
    assert_true(matches("[CMPLT 0 x]", uop_binary(g->c, OP_CMPLT, g->zero, g->x), NULL, NULL));
    const UOp *cond = uop_binary(g->c, OP_CMPLT, g->x, g->y);
    const UOp *w = uop_where(g->c, cond, g->one, g->two);
    assert_true(matches("[WHERE 2 c:bool 1]", w, "c", &got));
    assert_ptr_equal(got, cond);
    assert_false(matches("[WHERE 2 c:bool 2]", w, NULL, NULL));
}

static void test_repeated_capture(void **state) {
    G *g = *state;
    const UOp *got = NULL;
    assert_true(matches("(ADD x x)", add(g, g->x, g->x), NULL, NULL));
    assert_false(matches("(ADD x x)", add(g, g->x, g->y), NULL, NULL));
    /* needs the swapped order outside and inside */
    const UOp *e = add(g, mul(g, g->y, g->x), g->x);
    assert_true(matches("(ADD x (MUL x y))", e, "y", &got));
    assert_ptr_equal(got, g->y);
    /* backtracking: the first way to match the inner MUL binds x wrongly */
    const UOp *f = add(g, mul(g, g->x, g->y), g->y);
    assert_true(matches("(ADD (MUL a b) b)", f, "a", &got));
    assert_ptr_equal(got, g->x);
    const UOp *f2 = add(g, mul(g, g->x, g->y), g->x);
    assert_true(matches("(ADD (MUL a b) b)", f2, "a", &got));
    assert_ptr_equal(got, g->y);
    assert_false(matches("(ADD (MUL a a) a)", f2, NULL, NULL));
}

static void test_constants(void **state) {
    G *g = *state;
    const UOp *xf = uop_cast(g->c, g->x, DT_FLOAT32);
    const UOp *b = uop_binary(g->c, OP_CMPLT, g->x, g->y);
    assert_true(matches("(ADD x 0)", add(g, g->x, g->zero), NULL, NULL));
    assert_true(matches("(ADD x 0)", add(g, xf, uop_const_float(g->c, DT_FLOAT32, 0.0)), NULL, NULL));
    assert_true(matches("(AND x 0)", uop_binary(g->c, OP_AND, b, uop_const_bool(g->c, false)), NULL, NULL));
    assert_true(matches("(AND x false)", uop_binary(g->c, OP_AND, b, uop_const_bool(g->c, false)), NULL, NULL));
    assert_false(matches("(ADD x 0)", add(g, g->x, g->one), NULL, NULL));
    assert_true(matches("1.5", uop_const_float(g->c, DT_FLOAT32, 1.5), NULL, NULL));
    assert_false(matches("1.5", g->one, NULL, NULL));
    assert_true(matches("1", uop_const_float(g->c, DT_FLOAT32, 1.0), NULL, NULL));
    assert_true(matches("-1", uop_const_int(g->c, DT_INT32, -1), NULL, NULL));
    assert_true(matches("(CONST 2)", g->two, NULL, NULL));
    assert_true(matches("c@2", g->two, NULL, NULL));
    assert_true(matches("Invalid", uop_const_arg(g->c, DT_INDEX, arg_invalid(g->c)), NULL, NULL));
    assert_false(matches("Invalid", g->zero, NULL, NULL));
    assert_false(matches("0", g->x, NULL, NULL));
    assert_true(matches("0:index", g->zero, NULL, NULL));
    assert_false(matches("0:int32", g->zero, NULL, NULL));
}

static void test_args(void **state) {
    G *g = *state;
    const UOp *end = uop_const_int(g->c, DT_INDEX, 16);
    const UOp *r = uop_range(g->c, end, 0, AXIS_REDUCE);
    const UOp *l = uop_range(g->c, end, 0, AXIS_LOOP);
    const UOp *got = NULL;
    assert_true(matches("(RANGE arg=(0, REDUCE) e)", r, "e", &got));
    assert_ptr_equal(got, end);
    assert_false(matches("(RANGE arg=(0, REDUCE) e)", l, NULL, NULL));
    assert_true(matches("(DEFINE_VAR arg=(\"x\", 0, 10))", g->x, NULL, NULL));
    assert_false(matches("(DEFINE_VAR arg=(\"x\", 0, 10))", g->y, NULL, NULL));
    assert_true(matches("(ADD arg=None a b)", add(g, g->x, g->y), NULL, NULL));
    expect_error("(RANGE arg=(0, q) e)", "line 1, column 16: bad arg: unknown name 'q' in an arg");
}

static void test_more_and_repeat(void **state) {
    G *g = *state;
    const UOp *f = uop_cast(g->c, g->x, DT_FLOAT32);
    const UOp *vs[4] = {f, f, f, f};
    const UOp *v2 = uop_new(g->c, OP_VECTORIZE, dt_vec(DT_FLOAT32, 2), vs, 2, NULL);
    const UOp *v4 = uop_new(g->c, OP_VECTORIZE, dt_vec(DT_FLOAT32, 4), vs, 4, NULL);
    assert_true(matches("(VECTORIZE x ...)", v2, NULL, NULL));
    assert_true(matches("(VECTORIZE x ...)", v4, NULL, NULL));
    assert_false(matches("(VECTORIZE x y z w u ...)", v4, NULL, NULL));
    assert_false(matches("(VECTORIZE x y)", v4, NULL, NULL));
    const UOp *same[2] = {g->x, g->x}, *diff[2] = {g->x, g->y};
    const UOp *s_same = uop_sink(g->c, same, 2), *s_diff = uop_sink(g->c, diff, 2), *s_none = uop_sink(g->c, NULL, 0);
    const UOp *got = NULL;
    assert_true(matches("(SINK *s)", s_same, "s", &got));
    assert_ptr_equal(got, g->x);
    assert_false(matches("(SINK *s)", s_diff, NULL, NULL));
    assert_true(matches("(SINK *(DEFINE_VAR))", s_diff, NULL, NULL));
    assert_false(matches("(SINK *(CONST))", s_diff, NULL, NULL));
    got = g->x;
    assert_true(matches("(SINK *s)", s_none, "s", &got));
    assert_null(got);
    /* a repeat over a sub-pattern with captures: every source binds them alike */
    const UOp *a1 = add(g, g->x, g->one), *a2 = add(g, g->y, g->one), *a3 = add(g, g->x, g->two);
    const UOp *s12[2] = {a1, a2}, *s13[2] = {a1, a3};
    assert_true(matches("(SINK *(ADD _ c))", uop_sink(g->c, s12, 2), "c", &got));
    assert_ptr_equal(got, g->one);
    assert_false(matches("(SINK *(ADD _ c@(CONST)))", uop_sink(g->c, s13, 2), NULL, NULL));
    /* a wide SINK */
    enum { WIDE = 60000 }; /* a node holds at most 65535 sources */
    const UOp **many = malloc(WIDE * sizeof *many);
    for (int i = 0; i < WIDE; i++) many[i] = i % 2 ? g->x : g->y;
    const UOp *wide = uop_sink(g->c, many, WIDE);
    free(many);
    assert_non_null(wide);
    assert_true(matches("(SINK *(DEFINE_VAR))", wide, NULL, NULL));
    assert_false(matches("(SINK *s)", wide, NULL, NULL));
    assert_true(matches("(SINK *x:index)", uop_sink(g->c, same, 2), NULL, NULL));
}

static bool is_index_typed(const UOp *u) { return u->dtype == DT_INDEX; }

static void test_predicates(void **state) {
    G *g = *state;
    pattern_register_predicate("index_typed", is_index_typed);
    const UOp *xi = uop_cast(g->c, g->x, DT_INT32);
    assert_true(matches("(ADD a b ?index_typed)", add(g, g->x, g->y), NULL, NULL));
    assert_false(matches("(ADD a b ?index_typed)", add(g, xi, xi), NULL, NULL));
}

/* ---- templates and rules ---- */

static const UOp *apply(G *g, const char *pat, const char *tmpl, const UOp *u) {
    RuleSpec spec = {.name = "t", .pattern = pat, .template_text = tmpl, .file = "here.c", .line = 1};
    char err[256];
    Rule *r = rule_new(&spec, err, sizeof err);
    if (!r) fail_msg("rule did not compile: %s", err);
    const UOp *out = NULL;
    int rc = rule_apply(r, g->c, u, NULL, NULL, &out);
    rule_unref(r);
    return rc == 1 ? out : NULL;
}

static void test_templates(void **state) {
    G *g = *state;
    const UOp *e = add(g, g->x, g->zero);
    assert_ptr_equal(apply(g, "(ADD x 0)", "x", e), g->x);
    assert_ptr_equal(apply(g, "(ADD x 0)", "(MUL x 2)", e), mul(g, g->x, g->two));
    /* the comparison's constant takes the operand's dtype; the result is bool */
    assert_ptr_equal(apply(g, "(ADD x 0)", "(CMPLT x 5)", e),
                     uop_binary(g->c, OP_CMPLT, g->x, uop_const_int(g->c, DT_INDEX, 5)));
    assert_ptr_equal(apply(g, "(ADD x 0)", "(CAST:float32 x)", e), uop_cast(g->c, g->x, DT_FLOAT32));
    /* a bare constant takes the matched root's dtype */
    assert_ptr_equal(apply(g, "(MUL x 0)", "0", mul(g, g->x, g->zero)), g->zero);
    assert_ptr_equal(apply(g, "(ADD x 0)", "(CONST 7:int32)", e), uop_const_int(g->c, DT_INT32, 7));
    assert_ptr_equal(apply(g, "(ADD x 0)", "7:int32", e), uop_const_int(g->c, DT_INT32, 7));
    const UOp *xf = uop_cast(g->c, g->x, DT_FLOAT32);
    assert_ptr_equal(apply(g, "(ADD x x)", "(MUL x 2)", add(g, xf, xf)),
                     mul(g, xf, uop_const_float(g->c, DT_FLOAT32, 2.0)));
    /* WHERE: condition constant is bool, branch constants take the branch dtype */
    const UOp *cond = uop_binary(g->c, OP_CMPLT, g->x, g->y);
    assert_ptr_equal(apply(g, "(ADD x y)", "(WHERE (CMPLT x y) x 0)", add(g, g->x, g->y)),
                     uop_where(g->c, cond, g->x, g->zero));
    /* arg= on a new node */
    const UOp *end = uop_const_int(g->c, DT_INDEX, 16);
    assert_ptr_equal(apply(g, "(ADD e 0)", "(RANGE e arg=(3, LOOP))", add(g, end, g->zero)),
                     uop_range(g->c, end, 3, AXIS_LOOP));
    /* a template result equal to the matched node is no rewrite */
    assert_null(apply(g, "(MUL x 1)", "(MUL x 1)", mul(g, g->x, g->one)));
}

static void test_template_errors(void **state) {
    (void)state;
    char err[256];
    RuleSpec spec = {.name = "t", .pattern = "(ADD x 0)", .template_text = "(MUL y 2)", .file = "f.c", .line = 3};
    assert_null(rule_new(&spec, err, sizeof err));
    assert_string_equal(err, "rule \"t\": template line 1, column 6: the pattern does not capture 'y'");
    spec.template_text = "({ADD MUL} x x)";
    assert_null(rule_new(&spec, err, sizeof err));
    assert_string_equal(err, "rule \"t\": template line 1, column 1: a template node needs exactly one op");
    spec.template_text = "(MUL x";
    assert_null(rule_new(&spec, err, sizeof err));
    assert_string_equal(err, "rule \"t\": template line 1, column 1: '(' is never closed");
    spec.template_text = NULL;
    assert_null(rule_new(&spec, err, sizeof err));
    assert_string_equal(err, "rule \"t\": needs either a template or a rewrite function (it has neither)");
    spec.template_text = "x";
    spec.pattern = "(ADD x 0";
    assert_null(rule_new(&spec, err, sizeof err));
    assert_string_equal(err, "rule \"t\": pattern line 1, column 1: '(' is never closed");
}

static void test_template_build_error(void **state) {
    G *g = *state;
    /* IDIV of floats is ill-formed: the rule fails with a message naming it */
    RuleSpec spec = {.name = "bad_div", .pattern = "(ADD x y)", .template_text = "(IDIV x y)", .file = "f.c", .line = 9};
    char err[256];
    Rule *r = rule_new(&spec, err, sizeof err);
    assert_non_null(r);
    const UOp *xf = uop_cast(g->c, g->x, DT_FLOAT32);
    const UOp *out = NULL;
    assert_int_equal(rule_apply(r, g->c, add(g, xf, xf), NULL, NULL, &out), -1);
    assert_string_equal(uctx_error(g->c),
                        "rule \"bad_div\" (f.c:9): template: IDIV: needs integer sources, got float32");
    rule_unref(r);
}

static const UOp *swap_fn(const Match *m, void *ud) {
    (void)ud;
    const UOp *a = match_get(m, "a"), *b = match_get(m, "b");
    if (!a || !b) return NULL;
    return uop_binary(m->ctx, OP_SUB, b, a);
}

static bool when_b_is_const(const Match *m, void *ud) {
    (void)ud;
    return uop_op(match_get(m, "b")) == OP_CONST;
}

static void test_rule_fn_when_and_stats(void **state) {
    G *g = *state;
    RuleSpec spec = {.name = "swap", .pattern = "(ADD a b)", .fn = swap_fn, .when = when_b_is_const,
                     .file = "f.c", .line = 4};
    char err[256];
    Rule *r = rule_new(&spec, err, sizeof err);
    assert_non_null(r);
    assert_string_equal(rule_name(r), "swap");
    assert_string_equal(rule_file(r), "f.c");
    assert_int_equal(rule_line(r), 4);
    assert_int_equal(rule_capture_count(r), 2);
    assert_int_equal(rule_capture_slot(r, "b"), 1);
    assert_string_equal(rule_capture_name(r, 0), "a");
    assert_int_equal(rule_capture_slot(r, "zz"), -1);
    const UOp *out = NULL;
    /* written order has b = x (not a const); the swapped order has b = 2 */
    assert_int_equal(rule_apply(r, g->c, add(g, g->two, g->x), NULL, NULL, &out), 1);
    assert_ptr_equal(out, uop_binary(g->c, OP_SUB, g->two, g->x));
    /* no order makes b a const */
    assert_int_equal(rule_apply(r, g->c, add(g, g->x, g->y), NULL, NULL, &out), 0);
    /* no match at all */
    assert_int_equal(rule_apply(r, g->c, mul(g, g->x, g->y), NULL, NULL, &out), 0);
    RuleStats *st = rule_stats(r);
    assert_int_equal(st->attempts, 3);
    assert_int_equal(st->matches, 2);
    assert_int_equal(st->rewrites, 1);
    rule_unref(r);
}

/* match_get by a name held in a buffer whose contents change between calls:
 * the same pointer must still find the capture by its current name */
static const UOp *sub_via_buffer(const Match *m, void *ud) {
    char *name = ud;
    strcpy(name, "a");
    const UOp *a = match_get(m, name);
    strcpy(name, "b");
    const UOp *b = match_get(m, name);
    strcpy(name, "zz");
    if (match_get(m, name)) return NULL;
    strcpy(name, "a");
    if (match_get(m, name) != a) return NULL;
    return a && b ? uop_binary(m->ctx, OP_SUB, a, b) : NULL;
}

static void test_match_get_by_name(void **state) {
    G *g = *state;
    char buf[8];
    RuleSpec spec = {.name = "sub", .pattern = "(MUL a b@(CONST))", .fn = sub_via_buffer, .ud = buf, .file = "f.c"};
    char err[256];
    Rule *r = rule_new(&spec, err, sizeof err);
    assert_non_null(r);
    const UOp *out = NULL;
    for (int i = 0; i < 3; i++) {
        assert_int_equal(rule_apply(r, g->c, mul(g, g->x, g->two), NULL, NULL, &out), 1);
        assert_ptr_equal(out, uop_binary(g->c, OP_SUB, g->x, g->two));
        /* commutative: the constant is found in the other order too */
        assert_int_equal(rule_apply(r, g->c, mul(g, g->two, g->y), NULL, NULL, &out), 1);
        assert_ptr_equal(out, uop_binary(g->c, OP_SUB, g->y, g->two));
    }
    rule_unref(r);
}

/* commutative sources: orders whose ops cannot match are skipped, the others
 * are tried written order first */
static void test_commutative_orders(void **state) {
    G *g = *state;
    const UOp *m = mul(g, g->x, g->y), *got = NULL;
    assert_true(matches("(ADD (MUL a b) c)", add(g, m, g->two), "c", &got));
    assert_ptr_equal(got, g->two);
    assert_true(matches("(ADD (MUL a b) c)", add(g, g->two, m), "c", &got));
    assert_ptr_equal(got, g->two);
    assert_false(matches("(ADD (MUL a b) c)", add(g, g->x, g->y), NULL, NULL));
    assert_false(matches("(ADD (MUL a b) 2)", add(g, m, g->one), NULL, NULL));
    assert_true(matches("(ADD 1 (MUL a b))", add(g, m, g->one), "a", &got));
    assert_ptr_equal(got, g->x);
    /* both orders possible: the written one wins */
    const UOp *m2 = mul(g, g->y, g->two);
    assert_true(matches("(ADD (MUL a b) c)", add(g, m, m2), "c", &got));
    assert_ptr_equal(got, m2);
    assert_true(matches("(ADD (MUL a b) c)", add(g, m2, m), "c", &got));
    assert_ptr_equal(got, m);
    /* "..." keeps the written order only */
    assert_false(matches("(ADD 2 ...)", add(g, g->x, g->two), NULL, NULL));
    assert_true(matches("(ADD 2 ...)", add(g, g->two, g->x), NULL, NULL));
}

/* counts its calls and never rewrites */
static const UOp *count_calls(const Match *m, void *ud) {
    (void)m;
    (*(int *)ud)++;
    return NULL;
}

/* A commutative node whose pattern sources capture nothing gives the same
 * match in both orders: the function runs once.  With captures, the swapped
 * order is a different match and the function runs for each; an order whose
 * sources cannot match still falls through to the other. */
static void test_commutative_calls(void **state) {
    G *g = *state;
    int calls = 0;
    const char *patterns[] = {"(ADD _ _)", "(ADD a b)", "(ADD (CONST) _)", "(ADD _:index _)",
                              "(ADD x:index _)"};
    int want[] = {1, 2, 1, 1, 2};
    for (int k = 0; k < 5; k++) {
        RuleSpec spec = {.name = "count", .pattern = patterns[k], .fn = count_calls, .ud = &calls, .file = "f.c"};
        char err[256];
        Rule *r = rule_new(&spec, err, sizeof err);
        assert_non_null(r);
        const UOp *out = NULL;
        calls = 0;
        /* the constant is second: "(ADD (CONST) _)" matches only swapped */
        assert_int_equal(rule_apply(r, g->c, add(g, g->x, g->two), NULL, NULL, &out), 0);
        if (calls != want[k]) fail_msg("%s: %d calls, want %d", patterns[k], calls, want[k]);
        rule_unref(r);
    }
}

static void test_rulesets(void **state) {
    (void)state;
    RuleSpec specs[] = {
        RULE_TMPL("add0", "(ADD x 0)", "x"),
        RULE_TMPL("mul1", "(MUL x 1)", "x"),
    };
    char err[256];
    RuleSet *a = ruleset_from_specs("a", specs, 2, err, sizeof err);
    assert_non_null(a);
    assert_int_equal(ruleset_count(a), 2);
    assert_string_equal(ruleset_name(a), "a");
    assert_string_equal(rule_name(ruleset_rule(a, 1)), "mul1");
    assert_string_equal(rule_file(ruleset_rule(a, 0)), __FILE__);
    RuleSpec more[] = {RULE_TMPL("any", "x:floats", "x")};
    RuleSet *b = ruleset_from_specs("b", more, 1, err, sizeof err);
    RuleSet *ab = ruleset_concat("ab", a, b);
    ruleset_free(a); /* the concatenation keeps its own references */
    ruleset_free(b);
    assert_int_equal(ruleset_count(ab), 3);
    assert_string_equal(rule_name(ruleset_rule(ab, 2)), "any");
    assert_null(ruleset_rule(ab, 3));
    ruleset_free(ab);
    RuleSpec bad[] = {RULE_TMPL("ok", "(ADD x 0)", "x"), RULE_TMPL("broken", "(ADD x", "x")};
    assert_null(ruleset_from_specs("bad", bad, 2, err, sizeof err));
    assert_string_equal(err, "rule \"broken\": pattern line 1, column 1: '(' is never closed");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_errors),
        cmocka_unit_test(test_capture_and_any),
        cmocka_unit_test(test_op_sets),
        cmocka_unit_test(test_dtypes),
        cmocka_unit_test(test_source_order),
        cmocka_unit_test(test_repeated_capture),
        cmocka_unit_test(test_constants),
        cmocka_unit_test(test_args),
        cmocka_unit_test(test_more_and_repeat),
        cmocka_unit_test(test_predicates),
        cmocka_unit_test(test_templates),
        cmocka_unit_test(test_template_errors),
        cmocka_unit_test(test_template_build_error),
        cmocka_unit_test(test_rule_fn_when_and_stats),
        cmocka_unit_test(test_rulesets),
        cmocka_unit_test(test_match_get_by_name),
        cmocka_unit_test(test_commutative_orders),
        cmocka_unit_test(test_commutative_calls),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
