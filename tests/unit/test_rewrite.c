/* test_rewrite.c - graph_rewrite (top-down, bottom-up, fixed points, loops,
 * stop_after, trace, statistics, failing rules) and line_rewrite. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "core/rewrite/rewrite.h"

typedef struct G {
    UCtx *c;
    const UOp *x, *y, *zero, *one, *two;
} G;

static int setup(void **state) {
    G *g = calloc(1, sizeof *g);
    g->c = uctx_new();
    g->x = uop_var(g->c, "x", 0, 10);
    g->y = uop_var(g->c, "y", 0, 10);
    g->zero = uop_const_int(g->c, DT_INDEX, 0);
    g->one = uop_const_int(g->c, DT_INDEX, 1);
    g->two = uop_const_int(g->c, DT_INDEX, 2);
    *state = g;
    return 0;
}

static int teardown(void **state) {
    G *g = *state;
    uctx_free(g->c);
    free(g);
    return 0;
}

static const UOp *add(G *g, const UOp *a, const UOp *b) { return uop_binary(g->c, OP_ADD, a, b); }
static const UOp *mul(G *g, const UOp *a, const UOp *b) { return uop_binary(g->c, OP_MUL, a, b); }

static RuleSet *rules(const char *name, const RuleSpec *specs, int n) {
    char err[256];
    RuleSet *rs = ruleset_from_specs(name, specs, n, err, sizeof err);
    if (!rs) fail_msg("rules did not compile: %s", err);
    return rs;
}

static const int ADD0_LINE = __LINE__ + 1;
static const RuleSpec SIMPLE[] = {RULE_TMPL("add0", "(ADD x 0)", "x"),
                                  RULE_TMPL("mul1", "(MUL x 1)", "x")};

static void test_top_down(void **state) {
    G *g = *state;
    RuleSet *rs = rules("simple", SIMPLE, 2);
    const UOp *e = mul(g, add(g, g->x, g->zero), add(g, g->y, g->zero));
    const UOp *r = graph_rewrite(g->c, e, rs, NULL);
    assert_ptr_equal(r, mul(g, g->x, g->y));
    /* nothing to do: the same root comes back */
    assert_ptr_equal(graph_rewrite(g->c, r, rs, NULL), r);
    ruleset_free(rs);
}

static void test_fixpoint(void **state) {
    G *g = *state;
    /* a result that matches again: (MUL x 1) -> (ADD x 0) -> x, nested:
     * ((x*1)+0)*1 -> x */
    static const RuleSpec specs[] = {RULE_TMPL("add0", "(ADD x 0)", "x"),
                                     RULE_TMPL("mul1_to_add0", "(MUL x 1)", "(ADD x 0)")};
    RuleSet *rs = rules("fix", specs, 2);
    const UOp *e = mul(g, add(g, mul(g, g->x, g->one), g->zero), g->one);
    Trace t;
    trace_init(&t);
    RewriteOpts o = {.trace = &t};
    assert_ptr_equal(graph_rewrite(g->c, e, rs, &o), g->x);
    /* MUL(x,1) -> ADD(x,0) -> x; the users, rebuilt as ADD(x,0) and
     * MUL(x,1), are nodes already rewritten in this pass (the memo) */
    assert_int_equal(t.nrewrites, 2);
    assert_string_equal(t.rewrites[0].rule, "mul1_to_add0");
    assert_ptr_equal(t.rewrites[0].before, mul(g, g->x, g->one));
    assert_ptr_equal(t.rewrites[0].after, add(g, g->x, g->zero));
    assert_string_equal(t.rewrites[1].rule, "add0");
    assert_ptr_equal(t.rewrites[1].before, add(g, g->x, g->zero));
    assert_ptr_equal(t.rewrites[1].after, g->x);
    trace_free(&t);
    ruleset_free(rs);
}

/* a trace that keeps rebuilds records each node rebuilt with new sources,
 * as (old, new), and only then */
static void test_trace_rebuilds(void **state) {
    G *g = *state;
    RuleSet *rs = rules("simple", SIMPLE, 2);
    const UOp *inner = mul(g, add(g, g->x, g->zero), g->y), *e = add(g, inner, g->two);
    Trace t;
    trace_init(&t);
    RewriteOpts o = {.trace = &t};
    assert_ptr_equal(graph_rewrite(g->c, e, rs, &o), add(g, mul(g, g->x, g->y), g->two));
    assert_int_equal(t.nrewrites, 1);
    assert_int_equal(t.nrebuilds, 0);
    trace_clear(&t);
    t.keep_rebuilds = true;
    assert_ptr_equal(graph_rewrite(g->c, e, rs, &o), add(g, mul(g, g->x, g->y), g->two));
    assert_int_equal(t.nrewrites, 1);
    assert_int_equal(t.nrebuilds, 2);
    assert_ptr_equal(t.rebuilds[0].from, inner);
    assert_ptr_equal(t.rebuilds[0].to, mul(g, g->x, g->y));
    assert_ptr_equal(t.rebuilds[1].from, e);
    assert_ptr_equal(t.rebuilds[1].to, add(g, mul(g, g->x, g->y), g->two));
    trace_clear(&t);
    assert_int_equal(t.nrebuilds, 0);
    trace_free(&t);
    ruleset_free(rs);
}

static void test_bottom_up_order(void **state) {
    G *g = *state;
    RuleSet *rs = rules("simple", SIMPLE, 2);
    const UOp *e = mul(g, add(g, g->x, g->zero), g->one);
    Trace t;
    trace_init(&t);
    RewriteOpts td = {.trace = &t};
    assert_ptr_equal(graph_rewrite(g->c, e, rs, &td), g->x);
    assert_int_equal(t.nrewrites, 2);
    assert_string_equal(t.rewrites[0].rule, "add0"); /* sources first */
    assert_string_equal(t.rewrites[1].rule, "mul1");
    trace_clear(&t);
    RewriteOpts bu = {.trace = &t, .bottom_up = true};
    assert_ptr_equal(graph_rewrite(g->c, e, rs, &bu), g->x);
    assert_int_equal(t.nrewrites, 2);
    assert_string_equal(t.rewrites[0].rule, "mul1"); /* the node before its sources */
    assert_ptr_equal(t.rewrites[0].before, e);
    assert_ptr_equal(t.rewrites[0].after, add(g, g->x, g->zero));
    assert_string_equal(t.rewrites[1].rule, "add0");
    trace_free(&t);
    ruleset_free(rs);
}

static void test_bottom_up_differs(void **state) {
    G *g = *state;
    /* bottom-up distributes the MUL before its sources are visited, so the
     * sum of products is seen whole; top-down rewrites the products first */
    static const RuleSpec specs[] = {
        RULE_TMPL("mul_add", "(MUL (ADD a b) c)", "(ADD (MUL a c) (MUL b c))"),
        RULE_TMPL("add00", "(ADD (MUL x 0) (MUL y 0))", "0"),
        RULE_TMPL("mulx0", "(MUL (DEFINE_VAR) 0)", "0"),
    };
    RuleSet *rs = rules("dist", specs, 3);
    const UOp *e = mul(g, add(g, g->x, g->y), g->zero);
    RewriteOpts bu = {.bottom_up = true};
    /* bottom-up: distribute, then the sum of products is zero */
    assert_ptr_equal(graph_rewrite(g->c, e, rs, &bu), g->zero);
    assert_ptr_equal(graph_rewrite(g->c, e, rs, NULL), add(g, g->zero, g->zero));
    ruleset_free(rs);
}

static void test_two_rule_loop(void **state) {
    G *g = *state;
    static const int LA = __LINE__ + 1;
    static const RuleSpec specs[] = {RULE_TMPL("a", "(ADD x 0)", "(MUL x 1)"),
                                     RULE_TMPL("b", "(MUL x 1)", "(ADD x 0)")};
    RuleSet *rs = rules("loop", specs, 2);
    const UOp *e = add(g, g->x, g->zero);
    char want[512];
    snprintf(want, sizeof want,
             "rewrite loop at node %%%u (ADD): rules \"a\" (%s:%d) -> \"b\" (%s:%d) -> \"a\" (%s:%d) ...", e->id,
             __FILE__, LA, __FILE__, LA + 1, __FILE__, LA);
    clock_t t0 = clock();
    assert_null(graph_rewrite(g->c, e, rs, NULL));
    assert_string_equal(uctx_error(g->c), want);
    RewriteOpts bu = {.bottom_up = true};
    assert_null(graph_rewrite(g->c, e, rs, &bu));
    assert_string_equal(uctx_error(g->c), want);
    /* inside a bigger graph too */
    const UOp *big = mul(g, g->y, add(g, e, g->y));
    assert_null(graph_rewrite(g->c, big, rs, NULL));
    assert_non_null(strstr(uctx_error(g->c), "rules \"a\""));
    assert_non_null(strstr(uctx_error(g->c), "-> \"b\""));
    assert_true((double)(clock() - t0) / CLOCKS_PER_SEC < 2.0);
    ruleset_free(rs);
}

static void test_growing_loop(void **state) {
    G *g = *state;
    /* x -> x + 0 -> ... never repeats a node but depends on itself */
    static const RuleSpec specs[] = {RULE_TMPL("grow", "x@(DEFINE_VAR)", "(ADD x 0)")};
    RuleSet *rs = rules("grow", specs, 1);
    assert_null(graph_rewrite(g->c, g->x, rs, NULL));
    assert_non_null(strstr(uctx_error(g->c), "rewrite loop at node"));
    assert_non_null(strstr(uctx_error(g->c), "\"grow\""));
    /* a rule whose result contains the node it replaces */
    RewriteOpts o = {.max_rewrites = 1000};
    static const RuleSpec chain[] = {RULE_TMPL("deeper", "(MUL x c@(CONST))", "(MUL (MUL x c) c)")};
    RuleSet *rc = rules("chain", chain, 1);
    assert_null(graph_rewrite(g->c, mul(g, g->x, g->two), rc, &o));
    assert_non_null(strstr(uctx_error(g->c), "\"deeper\""));
    ruleset_free(rc);
    ruleset_free(rs);
}

static void test_stop_after(void **state) {
    G *g = *state;
    RuleSet *rs = rules("simple", SIMPLE, 2);
    const UOp *e = mul(g, add(g, g->x, g->zero), add(g, g->y, g->zero));
    Trace t;
    trace_init(&t);
    RewriteOpts o = {.stop_after = 1, .trace = &t};
    assert_ptr_equal(graph_rewrite(g->c, e, rs, &o), mul(g, g->x, add(g, g->y, g->zero)));
    assert_int_equal(t.nrewrites, 1);
    o.stop_after = 2;
    assert_ptr_equal(graph_rewrite(g->c, e, rs, &o), mul(g, g->x, g->y));
    o.stop_after = 3;
    assert_ptr_equal(graph_rewrite(g->c, e, rs, &o), mul(g, g->x, g->y));
    o.bottom_up = true;
    o.stop_after = 1;
    assert_ptr_equal(graph_rewrite(g->c, e, rs, &o), mul(g, g->x, add(g, g->y, g->zero)));
    trace_free(&t);
    ruleset_free(rs);
}

/* what the progress function saw */
typedef struct Seen {
    int calls;
    bool ordered; /* every count at least the last call's */
    RewriteProgress last;
} Seen;

static void note_progress(const RewriteProgress *p, void *ud) {
    Seen *s = ud;
    if (s->calls && (p->visits < s->last.visits || p->rewrites < s->last.rewrites ||
                     p->nodes_made < s->last.nodes_made || p->elapsed_s < s->last.elapsed_s))
        s->ordered = false;
    s->calls++;
    s->last = *p;
}

static void test_progress(void **state) {
    G *g = *state;
    RuleSet *rs = rules("simple", SIMPLE, 2);
    /* a balanced sum of 3000 terms (x * k + 0) * 1: about 15k nodes, each
     * term rewritten twice */
    enum { TERMS = 3000 };
    const UOp *terms[TERMS];
    for (int i = 0; i < TERMS; i++)
        terms[i] = mul(g, add(g, mul(g, g->x, uop_const_int(g->c, DT_INDEX, i + 2)), g->zero), g->one);
    for (int n = TERMS; n > 1; n = (n + 1) / 2)
        for (int i = 0; i < n; i += 2) terms[i / 2] = i + 1 < n ? add(g, terms[i], terms[i + 1]) : terms[i];
    size_t nodes = uop_graph_size(terms[0]);
    Seen seen = {.ordered = true};
    RewriteOpts o = {.name = "tidy", .progress = note_progress, .progress_ud = &seen};
    size_t made0 = uctx_node_count(g->c);
    assert_non_null(graph_rewrite(g->c, terms[0], rs, &o));
    size_t made = uctx_node_count(g->c) - made0;
    /* each node is visited once and has at least two entries (before and
     * after its sources), so there are calls every REWRITE_PROGRESS_EVERY */
    assert_true((size_t)seen.calls >= 2 * nodes / REWRITE_PROGRESS_EVERY);
    assert_true(seen.ordered);
    assert_string_equal(seen.last.pass, "tidy");
    assert_true(seen.last.visits > 0 && seen.last.visits <= nodes + made);
    assert_true(seen.last.rewrites > 0 && seen.last.rewrites <= 2 * TERMS);
    assert_true(seen.last.nodes_made <= made);
    /* a small rewrite ends before the first call */
    Seen small = {.ordered = true};
    o.progress_ud = &small;
    assert_ptr_equal(graph_rewrite(g->c, add(g, g->x, g->zero), rs, &o), g->x);
    assert_int_equal(small.calls, 0);
    ruleset_free(rs);
}

static void test_trace_and_stats(void **state) {
    G *g = *state;
    RuleSet *rs = rules("simple", SIMPLE, 2);
    Rule *add0 = ruleset_rule(rs, 0), *mul1 = ruleset_rule(rs, 1);
    const UOp *inner = add(g, g->x, g->zero);
    const UOp *e = mul(g, inner, g->one);
    Trace t;
    trace_init(&t);
    RewriteOpts o = {.trace = &t, .name = "cleanup", .timing = true};
    assert_ptr_equal(graph_rewrite(g->c, e, rs, &o), g->x);
    RewriteOpts o2 = {.trace = &t};
    assert_ptr_equal(graph_rewrite(g->c, g->x, rs, &o2), g->x);
    ruleset_free(rs); /* the trace keeps its own copies of the names */
    assert_int_equal(t.npasses, 2);
    assert_string_equal(t.passes[0].name, "cleanup");
    assert_ptr_equal(t.passes[0].root_before, e);
    assert_ptr_equal(t.passes[0].root_after, g->x);
    assert_int_equal(t.passes[0].first_rewrite, 0);
    assert_int_equal(t.passes[0].nrewrites, 2);
    assert_string_equal(t.passes[1].name, "simple");
    assert_int_equal(t.passes[1].nrewrites, 0);
    assert_int_equal(t.passes[1].first_rewrite, 2);
    assert_int_equal(t.nrewrites, 2);
    assert_string_equal(t.rewrites[0].rule, "add0");
    assert_string_equal(t.rewrites[0].file, __FILE__);
    assert_int_equal(t.rewrites[0].line, ADD0_LINE);
    assert_ptr_equal(t.rewrites[0].before, inner);
    assert_ptr_equal(t.rewrites[0].after, g->x);
    assert_int_equal(t.rewrites[0].pass, 0);
    assert_string_equal(t.rewrites[1].rule, "mul1");
    assert_ptr_equal(t.rewrites[1].before, mul(g, g->x, g->one));
    trace_free(&t);
    (void)add0;
    (void)mul1;
}

/* the trace keeps its own copy of each rule and file name, found again by
 * the caller's address; an address reused for another name (a freed Lua
 * rule's) still gets that other name */
static void test_trace_names(void **state) {
    G *g = *state;
    Trace tr;
    trace_init(&tr);
    char name[16] = "rule_a";
    const UOp *u = uop_const_int(g->c, DT_INDEX, 1);
    for (int i = 0; i < 3; i++) assert_true(trace_add_rewrite(&tr, name, __FILE__, __LINE__, u, u, 0));
    strcpy(name, "rule_b");
    assert_true(trace_add_rewrite(&tr, name, __FILE__, __LINE__, u, u, 0));
    strcpy(name, "rule_a");
    assert_true(trace_add_rewrite(&tr, name, __FILE__, __LINE__, u, u, 0));
    assert_int_equal(tr.nrewrites, 5);
    assert_string_equal(tr.rewrites[2].rule, "rule_a");
    assert_string_equal(tr.rewrites[3].rule, "rule_b");
    assert_string_equal(tr.rewrites[4].rule, "rule_a");
    assert_ptr_equal(tr.rewrites[0].rule, tr.rewrites[4].rule); /* one copy per name */
    assert_ptr_not_equal(tr.rewrites[0].rule, name);
    assert_int_equal(tr.nstrings, 3); /* rule_a, rule_b, the file */
    trace_clear(&tr);
    assert_true(trace_add_rewrite(&tr, name, __FILE__, __LINE__, u, u, 0));
    assert_string_equal(tr.rewrites[0].rule, "rule_a");
    trace_free(&tr);
}

static void test_stats_counts(void **state) {
    G *g = *state;
    RuleSet *rs = rules("simple", SIMPLE, 2);
    /* nodes: x, 0, x+0, 1, (x+0)*1 then x*1 after the source changed */
    const UOp *e = mul(g, add(g, g->x, g->zero), g->one);
    assert_ptr_equal(graph_rewrite(g->c, e, rs, NULL), g->x);
    RuleStats *a = rule_stats(ruleset_rule(rs, 0)), *m = rule_stats(ruleset_rule(rs, 1));
    assert_int_equal(a->attempts, 1); /* only ADD nodes are offered to add0 */
    assert_int_equal(a->matches, 1);
    assert_int_equal(a->rewrites, 1);
    assert_int_equal(m->attempts, 1);
    assert_int_equal(m->rewrites, 1);
    ruleset_free(rs);
}

/* The rules a node's shape rules out are skipped from a per-thread cache:
 * a rule added to a set after the set was used is still offered, and a
 * skipped rule still counts the attempt. */
static void test_shape_cache(void **state) {
    G *g = *state;
    RuleSet *rs = rules("shapes", SIMPLE, 1); /* add0 only */
    const UOp *e = add(g, g->x, g->two);      /* (ADD var const): add0 is tried, does not fire */
    assert_ptr_equal(graph_rewrite(g->c, e, rs, NULL), e);
    char err[256];
    RuleSpec more = RULE_TMPL("add2", "(ADD x 2)", "x");
    Rule *r = rule_new(&more, err, sizeof err);
    assert_non_null(r);
    assert_true(ruleset_add(rs, r));
    rule_unref(r);
    /* the same shape again, now with a rule for it */
    assert_ptr_equal(graph_rewrite(g->c, e, rs, NULL), g->x);
    /* (ADD y x): add2 is ruled out by the source ops (no CONST source)
     * without running the matcher, and still counted */
    RuleStats before = *rule_stats(ruleset_rule(rs, 1));
    const UOp *sum = add(g, g->y, g->x);
    assert_ptr_equal(graph_rewrite(g->c, sum, rs, NULL), sum);
    RuleStats *after = rule_stats(ruleset_rule(rs, 1));
    assert_int_equal(after->attempts, before.attempts + 1);
    assert_int_equal(after->matches, before.matches);
    ruleset_free(rs);
}

static const UOp *failing_fn(const Match *m, void *ud) {
    (void)ud;
    rewrite_fail(m, "cannot handle %%%u", m->root->id);
    return NULL;
}

static void test_failing_rule(void **state) {
    G *g = *state;
    static const int L = __LINE__ + 1;
    static const RuleSpec specs[] = {RULE_FN("picky", "(ADD x 0)", failing_fn)};
    RuleSet *rs = rules("picky", specs, 1);
    const UOp *e = mul(g, add(g, g->x, g->zero), g->two);
    assert_null(graph_rewrite(g->c, e, rs, NULL));
    char want[256];
    snprintf(want, sizeof want, "rule \"picky\" (%s:%d): cannot handle %%%u", __FILE__, L, add(g, g->x, g->zero)->id);
    assert_string_equal(uctx_error(g->c), want);
    /* a trace names the rule whose error stopped the rewrite */
    Trace t;
    trace_init(&t);
    RewriteOpts o = {.trace = &t};
    assert_null(graph_rewrite(g->c, e, rs, &o));
    assert_string_equal(t.error_rule, "picky");
    assert_string_equal(t.error_file, __FILE__);
    assert_int_equal(t.error_line, L);
    trace_clear(&t);
    assert_null(t.error_rule);
    trace_free(&t);
    ruleset_free(rs);
}

static const UOp *user_fn(const Match *m, void *ud) {
    (void)ud;
    int *count = m->user;
    ++*count;
    return NULL;
}

static void test_user_pointer(void **state) {
    G *g = *state;
    static const RuleSpec specs[] = {RULE_FN("count", "x", user_fn)};
    RuleSet *rs = rules("count", specs, 1);
    int count = 0;
    RewriteOpts o = {.user = &count};
    const UOp *e = add(g, g->x, g->zero);
    assert_ptr_equal(graph_rewrite(g->c, e, rs, &o), e);
    assert_int_equal(count, 3); /* x, 0 and the ADD, once each */
    ruleset_free(rs);
}

/* (MUL a 2) becomes three instructions: c0 = 0, t = a + a, t + c0 */
static const UOp *expand_fn(const Match *m, void *ud) {
    (void)ud;
    const UOp *a = match_get(m, "a");
    const UOp *c0 = uop_const_int(m->ctx, a->dtype, 0);
    const UOp *t = uop_binary(m->ctx, OP_ADD, a, a);
    const UOp *t2 = uop_binary(m->ctx, OP_ADD, t, c0);
    const UOp *lst[3] = {c0, t, t2};
    return uop_new(m->ctx, OP_LINEAR, DT_VOID, lst, 3, arg_int(m->ctx, 2));
}

static void test_line_rewrite(void **state) {
    G *g = *state;
    static const RuleSpec specs[] = {RULE_FN("expand", "(MUL a 2)", expand_fn),
                                     RULE_TMPL("unused", "(ADD (ADD a a) 0)", "(MUL a 2)")};
    RuleSet *rs = rules("lines", specs, 1);
    const UOp *m = mul(g, g->x, g->two);
    const UOp *s = uop_sink(g->c, &m, 1);
    const UOp *lst[4] = {g->x, g->two, m, s};
    const UOp **out = NULL;
    size_t n = 0;
    Trace t;
    trace_init(&t);
    RewriteOpts o = {.trace = &t};
    assert_true(line_rewrite(g->c, lst, 4, rs, &o, &out, &n));
    assert_int_equal(n, 6);
    const UOp *t1 = add(g, g->x, g->x), *t2 = add(g, t1, g->zero);
    assert_ptr_equal(out[0], g->x);
    assert_ptr_equal(out[1], g->two);
    assert_ptr_equal(out[2], g->zero);
    assert_ptr_equal(out[3], t1);
    assert_ptr_equal(out[4], t2);
    assert_ptr_equal(out[5], uop_sink(g->c, &t2, 1));
    assert_int_equal(t.nrewrites, 1);
    assert_string_equal(t.rewrites[0].rule, "expand");
    free(out);
    /* an instruction whose source is not earlier in the list */
    const UOp *bad[2] = {m, g->x};
    assert_false(line_rewrite(g->c, bad, 2, rs, NULL, &out, &n));
    assert_non_null(strstr(uctx_error(g->c), "is not earlier in the list"));
    trace_free(&t);
    ruleset_free(rs);
}

/* (MUL x 2) -> x' + x', where x' is x rewritten by a graph_rewrite of its
 * own with the same rules: rewrites nest as deep as the graph */
static const UOp *nested_fn(const Match *m, void *ud) {
    const RuleSet *const *rs = ud;
    const UOp *x = match_get(m, "x");
    const UOp *inner = graph_rewrite(m->ctx, x, *rs, NULL);
    if (!inner) { rewrite_fail(m, "inner rewrite: %s", uctx_error(m->ctx)); return NULL; }
    return uop_binary(m->ctx, OP_ADD, inner, inner);
}

static void test_nested_rewrites(void **state) {
    G *g = *state;
    static RuleSet *self;
    RuleSpec specs[] = {{.name = "nest", .pattern = "(MUL x 2)", .fn = nested_fn, .ud = &self, .file = __FILE__,
                         .line = __LINE__}};
    self = rules("nested", specs, 1);
    /* deeper than the engine keeps spare buffers for */
    const UOp *e = g->x, *want = g->x;
    for (int i = 0; i < 20; i++) {
        e = mul(g, add(g, e, g->one), g->two);
        want = add(g, add(g, want, g->one), add(g, want, g->one));
    }
    assert_ptr_equal(graph_rewrite(g->c, e, self, NULL), want);
    /* and again, with the buffers now reused */
    assert_ptr_equal(graph_rewrite(g->c, e, self, NULL), want);
    assert_ptr_equal(graph_rewrite(g->c, want, self, NULL), want);
    ruleset_free(self);
}

/* what one rewrite learned about a node is not seen by the next one */
static void test_calls_do_not_share_memo(void **state) {
    G *g = *state;
    RuleSet *zero = rules("add0", SIMPLE, 1);
    static const RuleSpec other_specs[] = {RULE_TMPL("add0_to_mul", "(ADD x 0)", "(MUL x 2)")};
    RuleSet *other = rules("other", other_specs, 1);
    const UOp *inner = add(g, g->x, g->zero), *e = add(g, inner, g->y);
    for (int round = 0; round < 3; round++) {
        assert_ptr_equal(graph_rewrite(g->c, e, zero, NULL), add(g, g->x, g->y));
        assert_ptr_equal(graph_rewrite(g->c, e, other, NULL), add(g, mul(g, g->x, g->two), g->y));
        assert_ptr_equal(graph_rewrite(g->c, inner, other, &(RewriteOpts){.bottom_up = true}), mul(g, g->x, g->two));
    }
    ruleset_free(zero);
    ruleset_free(other);
}

/* a concatenation dispatches each op to the first set's rules, then the second's */
static void test_concat_dispatch_order(void **state) {
    G *g = *state;
    static const RuleSpec sub_specs[] = {RULE_TMPL("to_sub", "(ADD x y)", "(SUB x y)")};
    static const RuleSpec mul_specs[] = {RULE_TMPL("to_mul", "(ADD x y)", "(MUL x y)"),
                                         RULE_TMPL("mul1", "(MUL x 1)", "x")};
    static const RuleSpec any_specs[] = {RULE_TMPL("idx_to_max", "(_:index x 2)", "(MAX x 2)")};
    RuleSet *s = rules("sub", sub_specs, 1), *m = rules("mul", mul_specs, 2), *any = rules("any", any_specs, 1);
    RuleSet *sm = ruleset_concat("sm", s, m), *ms = ruleset_concat("ms", m, s);
    RuleSet *anym = ruleset_concat("anym", any, m), *many = ruleset_concat("many", m, any);
    const UOp *e = add(g, g->x, g->y);
    assert_ptr_equal(graph_rewrite(g->c, e, sm, NULL), uop_binary(g->c, OP_SUB, g->x, g->y));
    assert_ptr_equal(graph_rewrite(g->c, e, ms, NULL), mul(g, g->x, g->y));
    /* the second set's rules for other ops are there too */
    assert_ptr_equal(graph_rewrite(g->c, add(g, mul(g, g->x, g->one), g->y), sm, NULL),
                     uop_binary(g->c, OP_SUB, g->x, g->y));
    /* a rule whose root can be any op comes first or last as its set does */
    const UOp *e2 = add(g, g->x, g->two);
    assert_ptr_equal(graph_rewrite(g->c, e2, anym, NULL), uop_binary(g->c, OP_MAX, g->x, g->two));
    assert_ptr_equal(graph_rewrite(g->c, e2, many, &(RewriteOpts){.stop_after = 1}), mul(g, g->x, g->two));
    assert_int_equal(ruleset_count(anym), 3);
    ruleset_free(s);
    ruleset_free(m);
    ruleset_free(any);
    ruleset_free(sm);
    ruleset_free(ms);
    ruleset_free(anym);
    ruleset_free(many);
}

static void test_speed(void **state) {
    (void)state;
    /* ((x + 0) * 2 + 0) * 2 ...: a million distinct (ADD e 0) to remove */
    UCtx *c = uctx_new();
    const UOp *x = uop_var(c, "x", 0, 10), *zero = uop_const_int(c, DT_INDEX, 0);
    const UOp *two = uop_const_int(c, DT_INDEX, 2), *e = x, *want = x;
    enum { N = 1000000 };
    for (int i = 0; i < N; i++) {
        e = uop_binary(c, OP_MUL, uop_binary(c, OP_ADD, e, zero), two);
        want = uop_binary(c, OP_MUL, want, two);
    }
    static const RuleSpec specs[] = {RULE_TMPL("add0", "(ADD x 0)", "x")};
    RuleSet *rs = rules("speed", specs, 1);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    assert_ptr_equal(graph_rewrite(c, e, rs, NULL), want);
    clock_gettime(CLOCK_MONOTONIC, &b);
    double s = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
    printf("  graph_rewrite: %d rewrites in %.3f s (%.2f M rewrites/s)\n", N, s, N / s / 1e6);
    assert_int_equal(rule_stats(ruleset_rule(rs, 0))->rewrites, N);
    ruleset_free(rs);
    uctx_free(c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_top_down, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fixpoint, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bottom_up_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bottom_up_differs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_two_rule_loop, setup, teardown),
        cmocka_unit_test_setup_teardown(test_growing_loop, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stop_after, setup, teardown),
        cmocka_unit_test_setup_teardown(test_progress, setup, teardown),
        cmocka_unit_test_setup_teardown(test_trace_and_stats, setup, teardown),
        cmocka_unit_test_setup_teardown(test_trace_names, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stats_counts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failing_rule, setup, teardown),
        cmocka_unit_test_setup_teardown(test_user_pointer, setup, teardown),
        cmocka_unit_test_setup_teardown(test_line_rewrite, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nested_rewrites, setup, teardown),
        cmocka_unit_test_setup_teardown(test_calls_do_not_share_memo, setup, teardown),
        cmocka_unit_test_setup_teardown(test_concat_dispatch_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_shape_cache, setup, teardown),
        cmocka_unit_test_setup_teardown(test_trace_rebuilds, setup, teardown),
        cmocka_unit_test(test_speed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
