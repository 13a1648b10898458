/* test_spec_verify.c - the spec verifier (core/stages/spec_verify.c):
 * hand-built graphs that break one rule each are named by that rule and
 * node; well-formed kernels pass at every point; a deep chain is checked
 * without recursion; a stage whose output breaks the spec fails with
 * "stage N (name): spec: ..." when stages verify; rules inserted where they
 * would meet the linear program are refused (stage_takes_inserted_rules). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/ir/uop.h"
#include "core/rewrite/registry.h"
#include "core/stages/spec_verify.h"
#include "core/stages/stages.h"
#include "viz/listing.h"
#include "test_files.h"

#include "listing_fixture.h"

/* the node with this op (and dtype name, when given) in root's graph */
static const UOp *find(const UOp *root, Op op, const char *dtype) {
    size_t n;
    const UOp **topo = uop_toposort(root, &n);
    const UOp *found = NULL;
    char b[64];
    for (size_t i = 0; i < n; i++)
        if (uop_op(topo[i]) == op && (!dtype || !strcmp(dt_str(topo[i]->dtype, b, sizeof b), dtype))) found = topo[i];
    free((void *)topo);
    if (!found) fail_msg("no %s in the graph", op_name(op));
    return found;
}

/* text must break `rule` of spec kind at the node `bad` (found by op and dtype) */
static void expect_broken(SpecKind kind, const char *text, const char *rule, Op bad_op, const char *bad_dtype) {
    const UOp *root = parse(text);
    VerifyError e;
    if (uop_verify(root, kind, &e, NULL)) fail_msg("%s spec accepted a graph that breaks '%s':\n%s", spec_kind_name(kind), rule, text);
    if (strcmp(e.rule, rule) != 0) fail_msg("expected rule '%s', got: %s", rule, e.msg);
    const UOp *bad = find(root, bad_op, bad_dtype);
    if (e.node != bad) fail_msg("expected node %%%u (%s), got: %s", bad->id, op_name(bad_op), e.msg);
    char id[32];
    snprintf(id, sizeof id, "at %%%u = %s", bad->id, op_name(bad_op));
    if (!strstr(e.msg, id)) fail_msg("the message does not name the node (%s): %s", id, e.msg);
    if (strchr(e.msg, '\n')) fail_msg("the message is not one line: %s", e.msg);
}

/* root must break `rule` of spec kind at node bad */
static void expect_broken_at(SpecKind kind, const UOp *root, const char *rule, const UOp *bad) {
    VerifyError e;
    if (uop_verify(root, kind, &e, NULL)) fail_msg("%s spec accepted a graph that breaks '%s'", spec_kind_name(kind), rule);
    if (strcmp(e.rule, rule) != 0) fail_msg("expected rule '%s', got: %s", rule, e.msg);
    if (e.node != bad) fail_msg("expected node %%%u, got: %s", bad->id, e.msg);
}

/* a node built without uop_new's checks (the listing parser refuses these) */
static const UOp *raw(Op op, const DType *dt, const UOp *a, const UOp *b, const UOp *w) {
    const UOp *src[3] = {a, b, w};
    int n = a ? b ? w ? 3 : 2 : 1 : 0;
    return uop_intern(c, op, dt, src, n, NULL, NULL);
}
static const UOp *sink1(const UOp *u) { return uop_sink(c, &u, 1); }

static void expect_ok(SpecKind kind, const char *text) {
    VerifyError e;
    if (!uop_verify(parse(text), kind, &e, NULL)) fail_msg("%s spec refused: %s\n%s", spec_kind_name(kind), e.msg, text);
}

/* a well-formed kernel (point 0 form): out[r] = in[r] + 1 */
#define KERNEL_OK \
    "%0 = DEFINE_GLOBAL float32.ptr(4) arg=0\n" \
    "%1 = DEFINE_GLOBAL float32.ptr(4) arg=1\n" \
    "%2 = CONST index arg=4\n" \
    "%3 = RANGE index (%2) arg=(0, LOOP)\n" \
    "%4 = INDEX float32.ptr(4) (%0, %3)\n" \
    "%5 = INDEX float32 (%1, %3)\n" \
    "%6 = CONST float32 arg=1.0\n" \
    "%7 = ADD float32 (%5, %6)\n" \
    "%8 = STORE void (%4, %7)\n" \
    "%9 = END void (%8, %3)\n" \
    "%10 = SINK void (%9)\n"

static void test_well_formed_kernel(void **state) {
    (void)state;
    expect_ok(SPEC_KERNEL, KERNEL_OK);
    expect_ok(SPEC_CODEGEN, KERNEL_OK);
}

static void test_add_of_mismatched_dtypes(void **state) {
    (void)state;
    const UOp *f = uop_const_float(c, DT_FLOAT32, 1.0), *i = uop_const_int(c, DT_INT32, 2);
    const UOp *add = raw(OP_ADD, DT_FLOAT32, f, i, NULL);
    expect_broken_at(SPEC_KERNEL, sink1(add), "ALU dtypes", add);
    expect_broken_at(SPEC_LOWERED, sink1(add), "ALU dtypes", add);
}

static void test_range_never_ended(void **state) {
    (void)state;
    /* the store's loop has no END: the RANGE is never closed */
    expect_broken(SPEC_KERNEL,
                  "%0 = DEFINE_GLOBAL float32.ptr(4) arg=0\n"
                  "%1 = CONST index arg=4\n"
                  "%2 = RANGE index (%1) arg=(0, LOOP)\n"
                  "%3 = INDEX float32.ptr(4) (%0, %2)\n"
                  "%4 = CONST float32 arg=1.0\n"
                  "%5 = STORE void (%3, %4)\n"
                  "%6 = SINK void (%5)\n",
                  "RANGE closed by END", OP_RANGE, NULL);
}

static void test_load_of_a_non_pointer(void **state) {
    (void)state;
    /* after stage 13 a LOAD reads through a pointer INDEX, never a value INDEX */
    expect_broken(SPEC_LOWERED,
                  "%0 = DEFINE_GLOBAL float32.ptr(4) arg=0\n"
                  "%1 = DEFINE_GLOBAL float32.ptr(4) arg=1\n"
                  "%2 = CONST int32 arg=4\n"
                  "%3 = RANGE int32 (%2) arg=(0, LOOP)\n"
                  "%4 = INDEX float32.ptr(4) (%0, %3)\n"
                  "%5 = INDEX float32 (%1, %3)\n"
                  "%6 = LOAD float32 (%5)\n"
                  "%7 = STORE void (%4, %6)\n"
                  "%8 = END void (%7, %3)\n"
                  "%9 = SINK void (%8)\n",
                  "LOAD through a pointer", OP_LOAD, NULL);
    /* and a LOAD of something that is no INDEX at all */
    expect_broken(SPEC_KERNEL,
                  "%0 = DEFINE_GLOBAL float32.ptr(4) arg=0\n"
                  "%1 = CONST index arg=1\n"
                  "%2 = INDEX float32.ptr(4) (%0, %1)\n"
                  "%3 = CONST float32 arg=1.0\n"
                  "%4 = LOAD float32 (%3)\n"
                  "%5 = STORE void (%2, %4)\n"
                  "%6 = SINK void (%5)\n",
                  "LOAD(INDEX)", OP_LOAD, NULL);
}

static void test_address_spaces(void **state) {
    (void)state;
    /* a DEFINE_GLOBAL whose pointer is a local one */
    expect_broken(SPEC_KERNEL,
                  "%0 = DEFINE_GLOBAL float32.ptr(4, local) arg=0\n"
                  "%1 = CONST index arg=1\n"
                  "%2 = INDEX float32.ptr(4, local) (%0, %1)\n"
                  "%3 = CONST float32 arg=1.0\n"
                  "%4 = STORE void (%2, %3)\n"
                  "%5 = SINK void (%4)\n",
                  "DEFINE_GLOBAL is a global pointer", OP_DEFINE_GLOBAL, NULL);
    /* a STORE through a local pointer into a global buffer */
    expect_broken(SPEC_KERNEL,
                  "%0 = DEFINE_GLOBAL float32.ptr(4) arg=0\n"
                  "%1 = CONST index arg=1\n"
                  "%2 = INDEX float32.ptr(4, local) (%0, %1)\n"
                  "%3 = CONST float32 arg=1.0\n"
                  "%4 = STORE void (%2, %3)\n"
                  "%5 = SINK void (%4)\n",
                  "INDEX keeps the buffer's address space", OP_INDEX, NULL);
    /* a DEFINE_LOCAL in global space */
    expect_broken(SPEC_CODEGEN,
                  "%0 = DEFINE_LOCAL float32.ptr(4) arg=0\n"
                  "%1 = SINK void (%0)\n",
                  "DEFINE_LOCAL is a local pointer", OP_DEFINE_LOCAL, NULL);
    /* a register that is not in register space */
    expect_broken(SPEC_CODEGEN,
                  "%0 = DEFINE_REG float32.ptr(1) arg=0\n"
                  "%1 = SINK void (%0)\n",
                  "DEFINE_REG", OP_DEFINE_REG, NULL);
    expect_ok(SPEC_CODEGEN,
              "%0 = DEFINE_LOCAL float32.ptr(16, local) arg=0\n"
              "%1 = DEFINE_REG float32.ptr(1, reg) arg=0\n"
              "%2 = SINK void (%0, %1)\n");
}

static void test_dtype_rules(void **state) {
    (void)state;
    const UOp *f1 = uop_const_float(c, DT_FLOAT32, 1.0), *f2 = uop_const_float(c, DT_FLOAT32, 2.0);
    const UOp *i2 = uop_const_int(c, DT_INT32, 2), *l2 = uop_const_int(c, DT_INT64, 2), *t = uop_const_bool(c, true);
    const UOp *idiv = raw(OP_IDIV, DT_FLOAT32, f1, f2, NULL);
    expect_broken_at(SPEC_KERNEL, sink1(idiv), "integer division", idiv);
    const UOp *where = raw(OP_WHERE, DT_FLOAT32, t, f1, i2);
    expect_broken_at(SPEC_KERNEL, sink1(where), "WHERE dtypes", where);
    const UOp *lt = raw(OP_CMPLT, DT_BOOL, f1, i2, NULL);
    expect_broken_at(SPEC_KERNEL, sink1(lt), "comparison dtypes", lt);
    const UOp *shl = raw(OP_SHL, DT_INT32, i2, l2, NULL);
    expect_broken_at(SPEC_KERNEL, sink1(shl), "shift dtypes", shl);
    const UOp *vec = raw(OP_VECTORIZE, dt_vec(DT_FLOAT32, 3), f1, f2, NULL);
    expect_broken_at(SPEC_KERNEL, sink1(vec), "VECTORIZE", vec);
    expect_broken(SPEC_KERNEL,
                  "%0 = CONST float32 arg=3\n"
                  "%1 = SINK void (%0)\n",
                  "CONST", OP_CONST, NULL);
    const UOp *v2 = uop_intern(c, OP_VECTORIZE, dt_vec(DT_FLOAT32, 2), (const UOp *[]){f1, f2}, 2, NULL, NULL);
    const Arg *lane5 = arg_int(c, 5);
    const UOp *gep = uop_intern(c, OP_GEP, DT_FLOAT32, &v2, 1, arg_tuple(c, &lane5, 1), NULL);
    expect_broken_at(SPEC_KERNEL, sink1(gep), "GEP of one lane", gep);
    expect_broken(SPEC_KERNEL,
                  "%0 = CONST index arg=4\n"
                  "%1 = RANGE int32 (%0) arg=(0, LOOP)\n"
                  "%2 = SINK void (%1)\n",
                  "RANGE", OP_RANGE, NULL);
}

static void test_gpu_forms(void **state) {
    (void)state;
    expect_ok(SPEC_LOWERED,
              "%0 = CONST int32 arg=16\n"
              "%1 = SPECIAL int32 (%0) arg=\"gidx0\"\n"
              "%2 = BARRIER void\n"
              "%3 = SINK void (%1, %2)\n");
    expect_broken(SPEC_LOWERED,
                  "%0 = CONST int32 arg=16\n"
                  "%1 = SPECIAL int64 (%0) arg=\"gidx0\"\n"
                  "%2 = SINK void (%1)\n",
                  "SPECIAL", OP_SPECIAL, NULL);
    expect_broken(SPEC_LOWERED,
                  "%0 = BARRIER float32\n"
                  "%1 = SINK void (%0)\n",
                  "form", OP_BARRIER, NULL);
}

static void test_index_lowered_and_invalid(void **state) {
    (void)state;
    expect_broken(SPEC_LOWERED,
                  "%0 = CONST index arg=4\n"
                  "%1 = CAST int32 (%0)\n"
                  "%2 = SINK void (%1)\n",
                  "index dtype lowered", OP_CONST, "index");
    expect_broken(SPEC_CODEGEN,
                  "%0 = CONST float32 arg=Invalid\n"
                  "%1 = SINK void (%0)\n",
                  "CONST", OP_CONST, NULL);
}

static void test_out_of_bounds_index(void **state) {
    (void)state;
    expect_broken(SPEC_LOWERED,
                  "%0 = DEFINE_GLOBAL float32.ptr(4) arg=0\n"
                  "%1 = CONST int32 arg=7\n"
                  "%2 = INDEX float32.ptr(4) (%0, %1)\n"
                  "%3 = CONST float32 arg=1.0\n"
                  "%4 = STORE void (%2, %3)\n"
                  "%5 = SINK void (%4)\n",
                  "INDEX into a buffer", OP_INDEX, NULL);
}

/* a linear program: out[r] = 1 for r < 4 */
#define PROGRAM_OK \
    "%0 = DEFINE_GLOBAL float32.ptr(4) arg=0\n" \
    "%1 = CONST int32 arg=4\n" \
    "%2 = CONST float32 arg=1.0\n" \
    "%3 = RANGE int32 (%1) arg=(0, LOOP)\n" \
    "%4 = INDEX float32.ptr(4) (%0, %3)\n" \
    "%5 = STORE void (%4, %2)\n" \
    "%6 = END void (%5, %3)\n" \
    "%7 = SINK void (%6)\n" \
    "%8 = LINEAR void (%0, %1, %2, %3, %4, %5, %6, %7)\n"

static void test_program_order(void **state) {
    (void)state;
    expect_ok(SPEC_PROGRAM, PROGRAM_OK);
    /* the RANGE is used after the END of its loop */
    expect_broken(SPEC_PROGRAM,
                  "%0 = DEFINE_GLOBAL float32.ptr(4) arg=0\n"
                  "%1 = CONST int32 arg=4\n"
                  "%2 = CONST float32 arg=1.0\n"
                  "%3 = RANGE int32 (%1) arg=(0, LOOP)\n"
                  "%4 = INDEX float32.ptr(4) (%0, %3)\n"
                  "%5 = STORE void (%4, %2)\n"
                  "%6 = END void (%5, %3)\n"
                  "%7 = ADD int32 (%3, %1)\n"
                  "%8 = SINK void (%6, %7)\n"
                  "%9 = LINEAR void (%0, %1, %2, %3, %4, %5, %6, %7, %8)\n",
                  "RANGE used inside its loop", OP_ADD, NULL);
    /* a loop never closed */
    expect_broken(SPEC_PROGRAM,
                  "%0 = DEFINE_GLOBAL float32.ptr(4) arg=0\n"
                  "%1 = CONST int32 arg=4\n"
                  "%2 = CONST float32 arg=1.0\n"
                  "%3 = RANGE int32 (%1) arg=(0, LOOP)\n"
                  "%4 = INDEX float32.ptr(4) (%0, %3)\n"
                  "%5 = STORE void (%4, %2)\n"
                  "%6 = SINK void (%5)\n"
                  "%7 = LINEAR void (%0, %1, %2, %3, %4, %5, %6)\n",
                  "RANGE closed by END", OP_RANGE, NULL);
    /* a source after its user */
    expect_broken(SPEC_PROGRAM,
                  "%0 = DEFINE_GLOBAL float32.ptr(4) arg=0\n"
                  "%1 = CONST int32 arg=4\n"
                  "%2 = CONST float32 arg=1.0\n"
                  "%3 = RANGE int32 (%1) arg=(0, LOOP)\n"
                  "%4 = INDEX float32.ptr(4) (%0, %3)\n"
                  "%5 = STORE void (%4, %2)\n"
                  "%6 = END void (%5, %3)\n"
                  "%7 = SINK void (%6)\n"
                  "%8 = LINEAR void (%0, %1, %3, %2, %5, %4, %6, %7)\n",
                  "program order", OP_STORE, NULL);
    /* an index dtype left in the program */
    expect_broken(SPEC_PROGRAM,
                  "%0 = CONST index arg=4\n"
                  "%1 = SINK void (%0)\n"
                  "%2 = LINEAR void (%0, %1)\n",
                  "index dtype lowered", OP_CONST, NULL);
    /* an IF without its ENDIF */
    expect_broken(SPEC_PROGRAM,
                  "%0 = DEFINE_GLOBAL float32.ptr(4) arg=0\n"
                  "%1 = CONST int32 arg=1\n"
                  "%2 = CONST bool arg=true\n"
                  "%3 = INDEX float32.ptr(4) (%0, %1, %2)\n"
                  "%4 = IF void (%2, %3)\n"
                  "%5 = CONST float32 arg=1.0\n"
                  "%6 = STORE void (%3, %5)\n"
                  "%7 = SINK void (%6)\n"
                  "%8 = LINEAR void (%0, %1, %2, %3, %4, %5, %6, %7)\n",
                  "IF closed by ENDIF", OP_IF, NULL);
    /* the program spec wants a LINEAR */
    VerifyError e;
    assert_false(uop_verify(parse(KERNEL_OK), SPEC_PROGRAM, &e, NULL));
    assert_non_null(strstr(e.msg, "LINEAR"));
}

static void test_spec_for_point(void **state) {
    (void)state;
    assert_int_equal(spec_for_point(0), SPEC_KERNEL);
    for (int n = 1; n <= 15; n++) assert_int_equal(spec_for_point(n), SPEC_CODEGEN);
    for (int n = 16; n <= 20; n++) assert_int_equal(spec_for_point(n), SPEC_LOWERED);
    assert_int_equal(spec_for_point(21), SPEC_PROGRAM);
    assert_int_equal(spec_for_point(22), SPEC_PROGRAM);
    SpecKind k;
    assert_true(spec_kind_from_name("lowered", &k));
    assert_int_equal(k, SPEC_LOWERED);
    assert_false(spec_kind_from_name("tensor", &k));
}

/* every point of the golden 3x3 matmul, as the stages make it, meets its spec */
static void test_every_point_of_a_kernel(void **state) {
    (void)state;
    const UOp *ast = read_golden_ast(c, GOLDEN_MATMUL_AST, err, sizeof err);
    if (!ast) fail_msg("golden: %s", err);
    KernelOpt opts[] = {{OPT_UPCAST, 1, 3}, {OPT_UNROLL, 0, 3}};
    for (int withopts = 0; withopts < 2; withopts++) {
        StageCtx sc = {.c = c, .err = err, .errlen = sizeof err, .opts = withopts ? opts : NULL, .nopts = withopts ? 2 : 0};
        const UOp *u = ast;
        VerifyError e;
        size_t nodes = 0;
        if (!uop_verify(u, spec_for_point(0), &e, &nodes)) fail_msg("point 0: %s", e.msg);
        assert_true(nodes > 10);
        for (int n = 1; n <= STAGE_COUNT; n++) {
            u = stage_run(&sc, n, u);
            if (!u) fail_msg("stage %d: %s", n, err);
            if (!uop_verify(u, spec_for_point(n), &e, &nodes)) fail_msg("point %d: %s", n, e.msg);
        }
    }
}

/* a deep chain: the check is iterative */
static void test_deep_chain(void **state) {
    (void)state;
    const UOp *x = uop_const_float(c, DT_FLOAT32, 1.0), *one = x;
    for (int i = 0; i < 200000; i++) x = uop_binary(c, OP_ADD, x, one);
    const UOp *root = uop_sink(c, &x, 1);
    VerifyError e;
    size_t nodes = 0;
    assert_true(uop_verify(root, SPEC_KERNEL, &e, &nodes));
    assert_int_equal(nodes, 200002);
}

/* a rule that brings an index dtype back after stage 15 */
static const UOp *index_again(const Match *m, void *ud) {
    (void)ud;
    const UOp *a = uop_cast(m->ctx, match_get(m, "a"), DT_INDEX), *b = uop_cast(m->ctx, match_get(m, "b"), DT_INDEX);
    return uop_cast(m->ctx, uop_binary(m->ctx, OP_ADD, a, b), DT_INT32);
}

static void test_stage_fails_on_a_broken_output(void **state) {
    (void)state;
    const UOp *ast = read_golden_ast(c, GOLDEN_MATMUL_AST, err, sizeof err);
    if (!ast) fail_msg("golden: %s", err);
    const RuleSpec spec[] = {RULE_FN("index_again", "(ADD:int32 a b)", index_again)};
    RuleSet *bad = ruleset_from_specs("index_again", spec, 1, err, sizeof err);
    assert_non_null(bad);
    const RuleSet *after[] = {bad};
    StageCtx sc = {.c = c, .err = err, .errlen = sizeof err, .verify = true};
    const UOp *u = ast;
    for (int n = 1; n <= 16; n++) {
        u = stage_run(&sc, n, u);
        if (!u) fail_msg("stage %d: %s", n, err);
    }
    /* stage 17 with the rule inserted: its output has index dtypes again */
    sc.after = after, sc.nafter = 1;
    const UOp *out = stage_run(&sc, 17, u);
    assert_null(out);
    if (!strstr(err, "stage 17 (pre-matcher): spec: index dtype lowered:") || !strstr(err, "CAST index"))
        fail_msg("unexpected error: %s", err);
    /* without verification the same stage runs */
    sc.verify = false;
    assert_non_null(stage_run(&sc, 17, u));
    /* rules never meet the linear program: after stage 21's linearize, or in stage 22 */
    char why[300];
    assert_true(stage_takes_inserted_rules(20, false, why, sizeof why));
    assert_true(stage_takes_inserted_rules(21, true, why, sizeof why));
    assert_false(stage_takes_inserted_rules(21, false, why, sizeof why));
    assert_string_equal(why, "rules after stage 21 (linearize) would run on the linear program, where rules cannot run; "
                             "insert them at stage 21 with {before = true}, or earlier");
    assert_false(stage_takes_inserted_rules(22, true, why, sizeof why));
    sc.after = NULL, sc.nafter = 0;
    for (int n = 18; n <= 21; n++) {
        u = stage_run(&sc, n, u);
        if (!u) fail_msg("stage %d: %s", n, err);
    }
    sc.after = after, sc.nafter = 1;
    assert_null(stage_run(&sc, 22, u));
    if (!strstr(err, "stage 22 (cleanup IF/ENDIF): rules in stage 22 (cleanup IF/ENDIF) would run on the linear program"))
        fail_msg("unexpected error: %s", err);
    ruleset_free(bad);

    /* a kernel that breaks the kernel spec fails at stage 1's input */
    const UOp *ix = parse("%0 = DEFINE_GLOBAL float32.ptr(4) arg=0\n"
                          "%1 = CONST index arg=1\n"
                          "%2 = INDEX float32.ptr(4) (%0, %1)\n");
    const UOp *mul = raw(OP_MUL, DT_FLOAT32, uop_const_float(c, DT_FLOAT32, 1.0), uop_const_int(c, DT_INT32, 1), NULL);
    const UOp *broken = sink1(raw(OP_STORE, DT_VOID, ix, mul, NULL));
    StageCtx sc2 = {.c = c, .err = err, .errlen = sizeof err, .verify = true};
    assert_null(stage_run(&sc2, 1, broken));
    if (!strstr(err, "stage 1 (early movement ops): spec of its input (point 0, kernel spec): ALU dtypes:"))
        fail_msg("unexpected error: %s", err);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_well_formed_kernel),
        cmocka_unit_test(test_add_of_mismatched_dtypes),
        cmocka_unit_test(test_range_never_ended),
        cmocka_unit_test(test_load_of_a_non_pointer),
        cmocka_unit_test(test_address_spaces),
        cmocka_unit_test(test_dtype_rules),
        cmocka_unit_test(test_gpu_forms),
        cmocka_unit_test(test_index_lowered_and_invalid),
        cmocka_unit_test(test_out_of_bounds_index),
        cmocka_unit_test(test_program_order),
        cmocka_unit_test(test_spec_for_point),
        cmocka_unit_test(test_every_point_of_a_kernel),
        cmocka_unit_test(test_deep_chain),
        cmocka_unit_test(test_stage_fails_on_a_broken_output),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
