/* test_devectorize.c - stage 14 (devectorize) on kernels as they are after
 * stage 13, written as listings, and the shared gep_pushing rules: vector
 * ALUs become scalar lanes, vector INDEXes become lane pointers folded into
 * float4 loads/stores where the lanes are consecutive and aligned, split to
 * scalars where they are not (strided, unaligned, not float, registers),
 * and vector accumulators become scalar register arrays. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/rewrite/registry.h"
#include "core/ir/uop.h"
#include "core/rewrite/rewrite.h"
#include "core/stages/stages.h"
#include "core/stages/stage_rules.h"
#include "core/sym/vector_rules.h"
#include "core/sym/symbolic.h"
#include "viz/listing.h"

#include "listing_fixture.h"

static const UOp *devectorize(const UOp *u) {
    StageCtx sc = {.c = c, .err = err, .errlen = sizeof err};
    const UOp *r = stage_run(&sc, 14, u);
    if (!r) fail_msg("devectorize: %s", err);
    return r;
}

#include "graph_query.h"

/* what the renderer cannot take is gone: vector ALUs, vector pointers,
 * PTRCAT, CAT */
static void assert_devectorized(const UOp *root) {
    size_t n;
    const UOp **topo = uop_toposort(root, &n);
    for (size_t i = 0; i < n; i++) {
        const UOp *u = topo[i];
        Op op = uop_op(u);
        bool alu = op_is(op, OPF_UNARY) || op_is(op, OPF_BINARY) || op_is(op, OPF_TERNARY) || op == OP_BITCAST ||
                   (op == OP_CAST && !dt_is_ptr(u->dtype));
        if ((alu && u->dtype->count != 1) || (dt_is_ptr(u->dtype) && u->dtype->v != 1) || op == OP_PTRCAT || op == OP_CAT ||
            op == OP_UNROLL || op == OP_CONTRACT) {
            StrBuf sb = {0};
            uop_listing(&sb, root, NULL);
            free(topo);
            fail_msg("%s %%%u is left:\n%s", op_name(op), u->id, sb.data);
        }
    }
    free(topo);
}

/* out[r*4 + l] = a[r*M + l*S] + ... with the four lanes l as a vector: the
 * form stage 13 leaves for an UPCAST of 4 (M the row stride, S the lane
 * stride, T the element type) */
static const UOp *vec_copy(const char *T, int M, int S) {
    char text[2048];
    snprintf(text, sizeof text,
             "%%0 = DEFINE_GLOBAL %s.ptr(64) arg=0\n"
             "%%1 = VECTORIZE %s.ptr(64).vec(4) (%%0, %%0, %%0, %%0)\n"
             "%%2 = CONST index arg=4\n"
             "%%3 = RANGE index (%%2) arg=(0, LOOP)\n"
             "%%4 = CONST index arg=%d\n"
             "%%5 = MUL index (%%3, %%2)\n"
             "%%6 = VECTORIZE index.vec(4) (%%5, %%5, %%5, %%5)\n"
             "%%7 = VCONST index.vec(4) arg=(0, 1, 2, 3)\n"
             "%%8 = ADD index.vec(4) (%%6, %%7)\n"
             "%%9 = INDEX %s.ptr(64).vec(4) (%%1, %%8)\n"
             "%%10 = DEFINE_GLOBAL %s.ptr(64) arg=1\n"
             "%%11 = VECTORIZE %s.ptr(64).vec(4) (%%10, %%10, %%10, %%10)\n"
             "%%12 = MUL index (%%3, %%4)\n"
             "%%13 = VECTORIZE index.vec(4) (%%12, %%12, %%12, %%12)\n"
             "%%14 = VCONST index.vec(4) arg=(0, %d, %d, %d)\n"
             "%%15 = ADD index.vec(4) (%%13, %%14)\n"
             "%%16 = INDEX %s.ptr(64).vec(4) (%%11, %%15)\n"
             "%%17 = LOAD %s.vec(4) (%%16)\n"
             "%%18 = ADD %s.vec(4) (%%17, %%17)\n"
             "%%19 = STORE void (%%9, %%18)\n"
             "%%20 = END void (%%19, %%3)\n"
             "%%21 = SINK void (%%20)\n",
             T, T, M, T, T, T, S, 2 * S, 3 * S, T, T, T);
    return parse(text);
}

static int count_loads(const UOp *root, int width) {
    const UOp *l[64];
    int n = find(root, OP_LOAD, l, 64), k = 0;
    for (int i = 0; i < n && i < 64; i++) k += l[i]->dtype->count == width;
    return k;
}

static void test_float4_folded(void **state) {
    (void)state;
    const UOp *root = devectorize(vec_copy("float32", 4, 1));
    assert_devectorized(root);
    /* one float4 load through a cast pointer, four scalar x + x (each folded
     * into x * 2 by symbolic, as tinygrad folds it), one float4 store */
    const UOp *l[4], *s[4], *a[8];
    assert_int_equal(find(root, OP_LOAD, l, 4), 1);
    assert_int_equal(l[0]->dtype, dt_vec(DT_FLOAT32, 4));
    assert_int_equal(uop_op(l[0]->src[0]), OP_CAST);
    assert_int_equal(uop_op(l[0]->src[0]->src[0]), OP_INDEX);
    assert_int_equal(find(root, OP_STORE, s, 4), 1);
    assert_ptr_equal(s[0]->src[0]->dtype, dt_ptr(dt_vec(DT_FLOAT32, 4), 64, ADDR_GLOBAL));
    assert_int_equal(uop_op(s[0]->src[1]), OP_VECTORIZE);
    int na = find(root, OP_MUL, a, 8), fmuls = 0;
    for (int i = 0; i < na && i < 8; i++) fmuls += a[i]->dtype == DT_FLOAT32;
    assert_int_equal(fmuls, 4);
}

static void test_strided_lanes_split(void **state) {
    (void)state;
    /* lanes 2 apart: four scalar loads; the store stays float4 */
    const UOp *root = devectorize(vec_copy("float32", 8, 2));
    assert_devectorized(root);
    assert_int_equal(count_loads(root, 1), 4);
    assert_int_equal(count_loads(root, 4), 0);
    const UOp *s[4];
    assert_int_equal(find(root, OP_STORE, s, 4), 1);
}

static void test_unaligned_and_int_split(void **state) {
    (void)state;
    /* consecutive lanes at r*3: the address does not divide by 4 or 2 */
    const UOp *root = devectorize(vec_copy("float32", 3, 1));
    assert_devectorized(root);
    assert_int_equal(count_loads(root, 1), 4);
    /* int32 buffers are not folded at all: scalar loads and stores */
    root = devectorize(vec_copy("int32", 4, 1));
    assert_devectorized(root);
    assert_int_equal(count_loads(root, 1), 4);
    assert_int_equal(count_loads(root, 4), 0);
    const UOp *s[8];
    assert_int_equal(find(root, OP_STORE, s, 8), 4);
}

static void test_vector_accumulator(void **state) {
    (void)state;
    const UOp *root = devectorize(parse("%0 = DEFINE_REG float32.vec(3).ptr(1, reg) arg=0\n"
                                        "%1 = CONST index arg=0\n"
                                        "%2 = INDEX float32.vec(3).ptr(1, reg) (%0, %1)\n"
                                        "%3 = VCONST float32.vec(3) arg=(1.0, 2.0, 3.0)\n"
                                        "%4 = STORE void (%2, %3)\n"
                                        "%5 = SINK void (%4)\n"));
    assert_devectorized(root);
    const UOp *reg[2], *st[4];
    assert_int_equal(find(root, OP_DEFINE_REG, reg, 2), 1);
    assert_ptr_equal(reg[0]->dtype, dt_ptr(DT_FLOAT32, 3, ADDR_REG));
    assert_int_equal(find(root, OP_STORE, st, 4), 3);
    /* lane k of the value goes to element k */
    for (int i = 0; i < 3; i++) {
        const UOp *ix = st[i]->src[0];
        int64_t at;
        double v;
        assert_int_equal(uop_op(ix), OP_INDEX);
        assert_ptr_equal(ix->src[0], reg[0]);
        assert_true(uop_const_int_value(ix->src[1], &at));
        assert_true(uop_const_value(st[i]->src[1], &v));
        assert_true(v == (double)(at + 1));
    }
}

/* ---- gep_pushing ---- */

static const UOp *push(const UOp *u) {
    RewriteOpts o = {0};
    const UOp *r = graph_rewrite(c, u, sym_ruleset("gep_pushing"), &o);
    if (!r) fail_msg("gep_pushing: %s", uctx_error(c));
    return r;
}

static void test_gep_pushing(void **state) {
    (void)state;
    const UOp *g = parse("%0 = DEFINE_GLOBAL float32.ptr(8) arg=0\n"
                         "%1 = CONST index arg=0\n"
                         "%2 = INDEX float32.ptr(8) (%0, %1)\n"
                         "%3 = CAST float32.vec(4).ptr(8) (%2)\n"
                         "%4 = LOAD float32.vec(4) (%3)\n"
                         "%5 = LOAD float32.vec(4) (%3, %1)\n"
                         "%6 = SINK void (%4, %5)\n");
    const UOp *x = g->src[0], *y = g->src[1];
    const Arg *a3 = arg_int(c, 3), *a1 = arg_int(c, 1), *a0 = arg_int(c, 0), *a2 = arg_int(c, 2);
    const DType *f = DT_FLOAT32, *f2 = dt_vec(DT_FLOAT32, 2), *f4 = dt_vec(DT_FLOAT32, 4);
    /* GEP of GEP: lanes composed */
    const UOp *rev = uop_new(c, OP_GEP, f4, &x, 1, arg_tuple(c, (const Arg *[]){a3, a2, a1, a0}, 4));
    const UOp *gg = uop_new(c, OP_GEP, f, &rev, 1, arg_tuple(c, &a0, 1));
    const UOp *r = push(gg);
    assert_int_equal(uop_op(r), OP_GEP);
    assert_ptr_equal(r->src[0], x);
    assert_int_equal(r->arg->items[0]->v.i, 3);
    /* GEP of GEP in order is the vector */
    assert_ptr_equal(push(uop_new(c, OP_GEP, f4, &rev, 1, rev->arg)), x);
    /* GEP through an ALU */
    const UOp *sum = uop_binary(c, OP_ADD, x, y);
    r = push(uop_new(c, OP_GEP, f, &sum, 1, arg_tuple(c, &a1, 1)));
    assert_int_equal(uop_op(r), OP_ADD);
    assert_ptr_equal(r->dtype, f);
    assert_int_equal(uop_op(r->src[0]), OP_GEP);
    assert_int_equal(r->src[0]->arg->items[0]->v.i, 1);
    /* VECTORIZE of lanes of one vector is a GEP of it */
    const UOp *l2 = uop_new(c, OP_GEP, f, &x, 1, arg_tuple(c, &a2, 1)), *l0 = uop_new(c, OP_GEP, f, &x, 1, arg_tuple(c, &a0, 1));
    r = push(uop_new(c, OP_VECTORIZE, f2, (const UOp *[]){l2, l0}, 2, NULL));
    assert_int_equal(uop_op(r), OP_GEP);
    assert_int_equal(r->arg->n, 2);
    assert_int_equal(r->arg->items[0]->v.i, 2);
    assert_int_equal(r->arg->items[1]->v.i, 0);
    /* GEP of VECTORIZE and of VCONST */
    const UOp *v = uop_new(c, OP_VECTORIZE, f2, (const UOp *[]){l2, l0}, 2, NULL);
    assert_ptr_equal(push(uop_new(c, OP_GEP, f, &v, 1, arg_tuple(c, &a1, 1))), l0);
    const UOp *k = uop_new(c, OP_VCONST, dt_vec(DT_INDEX, 4), NULL, 0,
                           arg_tuple(c, (const Arg *[]){a0, a1, a2, a3}, 4));
    r = push(uop_new(c, OP_GEP, dt_vec(DT_INDEX, 2), &k, 1, arg_tuple(c, (const Arg *[]){a3, a1}, 2)));
    assert_int_equal(uop_op(r), OP_VCONST);
    assert_int_equal(r->arg->items[0]->v.i, 3);
    assert_int_equal(r->arg->items[1]->v.i, 1);
    /* CAT of two vectors: one VECTORIZE of their lanes */
    const UOp *cat = uop_new(c, OP_CAT, dt_vec(DT_FLOAT32, 8), (const UOp *[]){x, y}, 2, NULL);
    r = push(cat);
    assert_int_equal(uop_op(r), OP_VECTORIZE);
    assert_int_equal(r->nsrc, 8);
    assert_ptr_equal(r->src[5]->src[0], y);
    assert_int_equal(r->src[5]->arg->items[0]->v.i, 1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_float4_folded),
        cmocka_unit_test(test_strided_lanes_split),
        cmocka_unit_test(test_unaligned_and_int_split),
        cmocka_unit_test(test_vector_accumulator),
        cmocka_unit_test(test_gep_pushing),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
