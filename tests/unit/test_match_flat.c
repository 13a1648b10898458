/* test_match_flat.c - the matcher's path for flat patterns (one node whose
 * sources are pattern leaves) against its general search: for every
 * pattern and node below, both give the same complete matches, with the same
 * captures, in the same order, and stop at the same one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>
#include "core/rewrite/pattern_internal.h"

#define MAX_SEEN 16

/* the complete matches the matcher offered, and which one to accept */
typedef struct Seen {
    int n, ncap, accept_at; /* accept the accept_at-th match (-1: none) */
    const UOp *caps[MAX_SEEN][PAT_MAX_CAPTURES];
    uint32_t bound[MAX_SEEN];
} Seen;

static bool record(const UOp **caps, uint32_t bound, void *ud) {
    Seen *s = ud;
    if (s->n < MAX_SEEN) {
        for (int i = 0; i < s->ncap; i++) s->caps[s->n][i] = (bound >> i) & 1 ? caps[i] : NULL;
        s->bound[s->n] = bound;
    }
    return s->n++ == s->accept_at;
}

/* runs p on u with the flat path on or off; *s gets the matches */
static bool run(Pat *p, bool flat, const UOp *u, int accept_at, Seen *s) {
    memset(s, 0, sizeof *s);
    s->ncap = p->ncap;
    s->accept_at = accept_at;
    bool saved = p->flat;
    p->flat = flat;
    const UOp *caps[PAT_MAX_CAPTURES];
    bool ok = pat_match_with(p, u, caps, record, s);
    p->flat = saved;
    return ok;
}

static void test_flat_equals_general(void **state) {
    (void)state;
    UCtx *c = uctx_new();
    const UOp *x = uop_var(c, "x", 0, 10), *y = uop_var(c, "y", -5, 5);
    const UOp *k2 = uop_const_int(c, DT_INDEX, 2), *k3 = uop_const_int(c, DT_INDEX, 3);
    const UOp *b = uop_binary(c, OP_CMPLT, x, y);
    const UOp *nodes[] = {
        uop_binary(c, OP_ADD, x, k2),  uop_binary(c, OP_ADD, k2, x),  uop_binary(c, OP_ADD, x, x),
        uop_binary(c, OP_ADD, x, y),   uop_binary(c, OP_ADD, k2, k3), uop_binary(c, OP_MUL, x, k2),
        uop_binary(c, OP_MUL, k3, y),  uop_binary(c, OP_IDIV, x, k2), uop_binary(c, OP_IDIV, k2, x),
        uop_binary(c, OP_MOD, y, k3),  uop_binary(c, OP_MAX, x, y),   uop_binary(c, OP_ADD, b, b),
        uop_where(c, b, x, y),         uop_where(c, b, x, x),         uop_unary(c, OP_NEG, x),
        uop_binary(c, OP_CMPLT, x, k3),
    };
    const char *patterns[] = {
        "(ADD _ _)",          "(ADD x c@(CONST))", "(ADD x x)",         "(ADD x y)",
        "(ADD (CONST) _)",    "(ADD 2 x)",         "(ADD x:index 2)",   "({ADD MUL} x c@(CONST))",
        "({IDIV MOD} x d)",   "(IDIV x 2)",        "(MUL c@(CONST) x)", "(MAX a b)",
        "(WHERE g a b)",      "(WHERE g a a)",     "(WHERE _ _ _)",     "(NEG x)",
        "(ADD x:bool y:bool)", "(CMPLT x c@{CONST DEFINE_VAR})",      "a@(ADD b c)",
    };
    int npat = (int)(sizeof patterns / sizeof *patterns), nnode = (int)(sizeof nodes / sizeof *nodes);
    int flat_patterns = 0, compared = 0;
    for (int i = 0; i < npat; i++) {
        char err[256];
        Pat *p = pattern_compile(patterns[i], err, sizeof err);
        if (!p) fail_msg("%s: %s", patterns[i], err);
        flat_patterns += p->flat;
        if (!p->flat) fail_msg("%s should be flat", patterns[i]);
        for (int k = 0; k < nnode; k++) {
            /* accept none (every match is offered), the first, the second */
            for (int at = -1; at < 2; at++) {
                Seen general, flat;
                bool g = run(p, false, nodes[k], at, &general), f = run(p, true, nodes[k], at, &flat);
                if (g != f || general.n != flat.n)
                    fail_msg("%s on node %d (accept %d): general %d after %d matches, flat %d after %d", patterns[i], k,
                             at, g, general.n, f, flat.n);
                for (int m = 0; m < general.n && m < MAX_SEEN; m++) {
                    if (general.bound[m] != flat.bound[m] ||
                        memcmp(general.caps[m], flat.caps[m], sizeof general.caps[m]) != 0)
                        fail_msg("%s on node %d: match %d binds differently", patterns[i], k, m);
                }
                compared += general.n;
            }
        }
        pattern_free(p);
    }
    assert_int_equal(flat_patterns, npat);
    assert_true(compared > 50); /* the cases do reach complete matches */
    uctx_free(c);
}

/* nested sources, repeats, "..." and any-order sources take the general
 * search */
static void test_not_flat(void **state) {
    (void)state;
    const char *patterns[] = {"(IDIV (ADD x c@(CONST)) d)", "(SINK *s)", "(ADD x ...)", "[ADD x c@(CONST)]", "x",
                              "(ADD x (MUL y z))"};
    for (int i = 0; i < (int)(sizeof patterns / sizeof *patterns); i++) {
        char err[256];
        Pat *p = pattern_compile(patterns[i], err, sizeof err);
        if (!p) fail_msg("%s: %s", patterns[i], err);
        if (p->flat) fail_msg("%s should not be flat", patterns[i]);
        pattern_free(p);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flat_equals_general),
        cmocka_unit_test(test_not_flat),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
