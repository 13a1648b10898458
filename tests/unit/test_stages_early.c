/* test_stages_early.c - codegen stages 1-8 and 10 on kernels built by hand
 * and on the golden 3x3 matmul AST: movement ops on INDEX carried into the
 * index arithmetic, nested INDEX concatenated, range lists flattened, ranges
 * split at r % c and merged when that adds no div/mod, UPCAST/UNROLL opts
 * (and their errors), WHERE guards moved into loads, and the kernel
 * clean-ups of stage 10.  Each stage also gets a graph it must leave alone. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/rewrite/registry.h"
#include "core/backend/backend.h"
#include "core/stages/stages.h"
#include "core/sym/symbolic.h"
#include "viz/listing.h"
#include "viz/render.h"
#include "viz/tinygrad_repr.h"

static UCtx *c;
static const UOp *golden;
static char err[1024];

#include "test_files.h"

static int setup(void **state) {
    (void)state;
    c = uctx_new();
    golden = read_golden_ast(c, GOLDEN_MATMUL_AST, err, sizeof err);
    return golden ? 0 : -1;
}

static int teardown(void **state) {
    (void)state;
    ruleset_registry_free();
    uctx_free(c);
    return 0;
}

/* ---- building ---- */

static const UOp *k(int64_t v) { return uop_const_int(c, DT_INDEX, v); }
static const UOp *add(const UOp *a, const UOp *b) { return uop_binary(c, OP_ADD, a, b); }
static const UOp *mul(const UOp *a, const UOp *b) { return uop_binary(c, OP_MUL, a, b); }
static const UOp *lt(const UOp *a, const UOp *b) { return uop_binary(c, OP_CMPLT, a, b); }
static const UOp *rng(int64_t end, int64_t id, AxisType t) { return uop_range(c, k(end), id, t); }
static const UOp *buf(int n, int64_t size) { return uop_new(c, OP_DEFINE_GLOBAL, dt_ptr(DT_FLOAT32, size, ADDR_GLOBAL), NULL, 0, arg_int(c, n)); }
static const UOp *node(Op op, const DType *dt, const Arg *arg, int n, ...) {
    const UOp *src[8];
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n; i++) src[i] = va_arg(ap, const UOp *);
    va_end(ap);
    const UOp *u = uop_new(c, op, dt, src, n, arg);
    if (!u) fail_msg("building %s: %s", op_name(op), uctx_error(c));
    return u;
}
static const Arg *ints(int n, ...) {
    const Arg *items[8];
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n; i++) items[i] = arg_int(c, va_arg(ap, int));
    va_end(ap);
    return arg_tuple(c, items, (uint32_t)n);
}
static const UOp *shape(int n, ...) {
    const Arg *items[8];
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n; i++) items[i] = arg_int(c, va_arg(ap, int));
    va_end(ap);
    return uop_new(c, OP_VCONST, dt_vec(DT_INDEX, n), NULL, 0, arg_tuple(c, items, (uint32_t)n));
}
/* a value read: INDEX(b, idx...) of element dtype */
static const UOp *load(const UOp *b, int n, ...) {
    const UOp *src[8] = {b};
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n; i++) src[i + 1] = va_arg(ap, const UOp *);
    va_end(ap);
    const UOp *u = uop_new(c, OP_INDEX, DT_FLOAT32, src, n + 1, NULL);
    if (!u) fail_msg("INDEX: %s", uctx_error(c));
    return u;
}
/* SINK(END(STORE(INDEX(out, idx), value), ranges...)) */
static const UOp *kernel(const UOp *out, const UOp *idx, const UOp *value, int nr, ...) {
    const UOp *st = node(OP_STORE, DT_VOID, NULL, 2, node(OP_INDEX, out->dtype, NULL, 2, out, idx), value);
    const UOp *src[8] = {st};
    va_list ap;
    va_start(ap, nr);
    for (int i = 0; i < nr; i++) src[i + 1] = va_arg(ap, const UOp *);
    va_end(ap);
    const UOp *end = uop_new(c, OP_END, DT_VOID, src, nr + 1, NULL);
    if (!end) fail_msg("END: %s", uctx_error(c));
    return uop_sink(c, &end, 1);
}

/* ---- looking ---- */

static const char *expr(const UOp *u) {
    static char out[4][512];
    static int slot;
    StrBuf sb;
    sb_init(&sb);
    uop_render_expr(&sb, u);
    char *s = out[slot++ % 4];
    snprintf(s, 512, "%s", sb_str(&sb));
    sb_free(&sb);
    return s;
}

static void print_listing(const UOp *u) {
    StrBuf sb;
    sb_init(&sb);
    uop_listing(&sb, u, NULL);
    print_message("%s\n", sb_str(&sb));
    sb_free(&sb);
}

/* the n-th node (from 0, toposort order) with this op, NULL if none */
static const UOp *find(const UOp *root, Op op, int nth) {
    size_t n;
    const UOp **t = uop_toposort(root, &n);
    const UOp *r = NULL;
    for (size_t i = 0; i < n && !r; i++)
        if (uop_op(t[i]) == op && nth-- == 0) r = t[i];
    free(t);
    return r;
}

static int count(const UOp *root, Op op) {
    int n = 0;
    while (find(root, op, n)) n++;
    return n;
}

/* the value INDEX reading buffer number b */
static const UOp *read_of(const UOp *root, int b) {
    for (int i = 0;; i++) {
        const UOp *x = find(root, OP_INDEX, i);
        if (!x) return NULL;
        if (uop_op(x->src[0]) == OP_DEFINE_GLOBAL && x->src[0]->arg->v.i == b) return x;
    }
}

static const UOp *run(int n, const UOp *root, const KernelOpt *opts, int nopts) {
    StageCtx sc = {.c = c, .opts = opts, .nopts = nopts, .err = err, .errlen = sizeof err};
    const UOp *r = stage_run(&sc, n, root);
    if (!r) fail_msg("stage %d failed: %s", n, err);
    return r;
}

/* the message after "stage N (name): ", which must lead it */
static const char *run_fails(int n, const UOp *root, const KernelOpt *opts, int nopts) {
    StageCtx sc = {.c = c, .opts = opts, .nopts = nopts, .err = err, .errlen = sizeof err};
    err[0] = 0;
    const UOp *r = stage_run(&sc, n, root);
    if (r) {
        print_listing(r);
        fail_msg("stage %d should have failed", n);
    }
    char prefix[80];
    snprintf(prefix, sizeof prefix, "stage %d (%s): ", n, stage_get(n)->name);
    if (strncmp(err, prefix, strlen(prefix))) fail_msg("message does not name the stage: %s", err);
    return err + strlen(prefix);
}

/* ================= stage 1: early movement ops ================= */

static void test_mops_reshape(void **state) {
    (void)state;
    const UOp *r0 = rng(2, 0, AXIS_LOOP), *r1 = rng(3, 1, AXIS_LOOP);
    const UOp *in = node(OP_RESHAPE, DT_FLOAT32, NULL, 2, buf(1, 6), shape(2, 2, 3));
    const UOp *kern = kernel(buf(0, 6), add(mul(r0, k(3)), r1), load(in, 2, r0, r1), 2, r0, r1);
    const UOp *out = run(1, kern, NULL, 0);
    const UOp *rd = read_of(out, 1);
    assert_non_null(rd);
    assert_int_equal(rd->nsrc, 2);
    assert_ptr_equal(rd->dtype, DT_FLOAT32);
    assert_string_equal(expr(rd->src[1]), "(r0*3+r1)");
    assert_int_equal(count(out, OP_RESHAPE), 0);
    /* a 3-d view of 12 elements read as (4, 3) */
    const UOp *a = rng(4, 0, AXIS_LOOP), *b = rng(3, 1, AXIS_LOOP);
    const UOp *v3 = node(OP_RESHAPE, DT_FLOAT32, NULL, 2, buf(1, 12), shape(3, 2, 2, 3));
    const UOp *v2 = node(OP_RESHAPE, DT_FLOAT32, NULL, 2, v3, shape(2, 4, 3));
    out = run(1, kernel(buf(0, 12), add(mul(a, k(3)), b), load(v2, 2, a, b), 2, a, b), NULL, 0);
    assert_string_equal(expr(read_of(out, 1)->src[1]), "(r0*3+r1)");
}

static void test_mops_permute_flip_shrink_expand(void **state) {
    (void)state;
    const UOp *a = rng(3, 0, AXIS_LOOP), *b = rng(2, 1, AXIS_LOOP);
    /* buffer as (2, 3), permuted to (3, 2): [a, b] reads [b, a] */
    const UOp *v = node(OP_RESHAPE, DT_FLOAT32, NULL, 2, buf(1, 6), shape(2, 2, 3));
    const UOp *p = node(OP_PERMUTE, DT_FLOAT32, ints(2, 1, 0), 1, v);
    const UOp *out = run(1, kernel(buf(0, 6), add(mul(a, k(2)), b), load(p, 2, a, b), 2, a, b), NULL, 0);
    assert_string_equal(expr(read_of(out, 1)->src[1]), "(r1*3+r0)");

    const UOp *r = rng(6, 0, AXIS_LOOP);
    const UOp *flat = node(OP_RESHAPE, DT_FLOAT32, NULL, 2, buf(1, 6), shape(1, 6));
    const Arg *yes = arg_bool(c, true);
    const UOp *f = node(OP_FLIP, DT_FLOAT32, arg_tuple(c, &yes, 1), 1, flat);
    out = run(1, kernel(buf(0, 6), r, load(f, 1, r), 1, r), NULL, 0);
    assert_string_equal(expr(read_of(out, 1)->src[1]), "(r0*-1+5)");

    const UOp *r3 = rng(3, 0, AXIS_LOOP);
    const UOp *s = node(OP_SHRINK, DT_FLOAT32, NULL, 3, flat, shape(1, 2), shape(1, 5));
    out = run(1, kernel(buf(0, 3), r3, load(s, 1, r3), 1, r3), NULL, 0);
    assert_string_equal(expr(read_of(out, 1)->src[1]), "(r0+2)");

    /* a column (3, 1) expanded to (3, 4): the broadcast axis reads 0 */
    const UOp *i = rng(3, 0, AXIS_LOOP), *j = rng(4, 1, AXIS_LOOP);
    const UOp *col = node(OP_RESHAPE, DT_FLOAT32, NULL, 2, buf(1, 3), shape(2, 3, 1));
    const UOp *e = node(OP_EXPAND, DT_FLOAT32, NULL, 2, col, shape(2, 3, 4));
    out = run(1, kernel(buf(0, 12), add(mul(i, k(4)), j), load(e, 2, i, j), 2, i, j), NULL, 0);
    assert_string_equal(expr(read_of(out, 1)->src[1]), "r0");
}

static void test_mops_pad_gates_the_index(void **state) {
    (void)state;
    /* 4 elements padded by 1 on each side, read over 6 */
    const UOp *r = rng(6, 0, AXIS_LOOP);
    const UOp *flat = node(OP_RESHAPE, DT_FLOAT32, NULL, 2, buf(1, 4), shape(1, 4));
    const UOp *p = node(OP_PAD, DT_FLOAT32, NULL, 3, flat, shape(1, 1), shape(1, 1));
    const UOp *out = run(1, kernel(buf(0, 6), r, load(p, 1, r), 1, r), NULL, 0);
    const UOp *idx = read_of(out, 1)->src[1];
    assert_int_equal(uop_op(idx), OP_WHERE);
    assert_int_equal(idx->src[2]->arg->kind, ARG_INVALID);
    assert_string_equal(expr(idx->src[1]), "(r0+-1)");
    /* valid is 1 <= r0 < 5 */
    assert_string_equal(expr(idx->src[0]), "(((r0<1)!=True)&(r0<5))");
}

static void test_mops_through_after_and_end(void **state) {
    (void)state;
    const UOp *r = rng(3, 0, AXIS_LOOP);
    const UOp *dep = node(OP_STORE, DT_VOID, NULL, 2, node(OP_INDEX, buf(2, 9)->dtype, NULL, 2, buf(2, 9), r),
                          uop_const_float(c, DT_FLOAT32, 1.0));
    const UOp *mop = node(OP_RESHAPE, buf(2, 9)->dtype, NULL, 2, buf(2, 9), shape(2, 3, 3));
    const UOp *after = node(OP_AFTER, mop->dtype, NULL, 2, mop, dep);
    const UOp *end = node(OP_END, DT_VOID, NULL, 2, mop, r);
    const UOp *root = uop_sink(c, (const UOp *[]){after, end}, 2);
    const UOp *out = run(1, root, NULL, 0);
    /* AFTER(RESHAPE(b), dep) -> RESHAPE(AFTER(b, dep)) */
    const UOp *a2 = out->src[0];
    assert_int_equal(uop_op(a2), OP_RESHAPE);
    assert_int_equal(uop_op(a2->src[0]), OP_AFTER);
    assert_ptr_equal(a2->src[0]->src[0], buf(2, 9));
    assert_ptr_equal(a2->src[0]->src[1], dep);
    assert_ptr_equal(a2->src[1], shape(2, 3, 3));
    /* END(RESHAPE(b), r) -> END(b, r) */
    assert_ptr_equal(out->src[1]->src[0], buf(2, 9));
    assert_ptr_equal(out->src[1]->src[1], r);
}

static void test_index_concat(void **state) {
    (void)state;
    const UOp *b = buf(1, 9), *i = rng(3, 0, AXIS_LOOP), *j = rng(3, 1, AXIS_LOOP);
    const UOp *inner = node(OP_INDEX, b->dtype, NULL, 2, b, i);
    const UOp *outer = node(OP_INDEX, DT_FLOAT32, NULL, 2, inner, j);
    const UOp *out = run(1, uop_sink(c, &outer, 1), NULL, 0);
    const UOp *x = out->src[0];
    assert_int_equal(x->nsrc, 3);
    assert_ptr_equal(x->src[0], b);
    assert_ptr_equal(x->src[1], i);
    assert_ptr_equal(x->src[2], j);
    assert_ptr_equal(x->dtype, DT_FLOAT32);
    /* a pointer INDEX of a pointer INDEX is not a read: left alone */
    const UOp *ptr_outer = node(OP_INDEX, b->dtype, NULL, 2, inner, j);
    const UOp *root = uop_sink(c, &ptr_outer, 1);
    assert_ptr_equal(run(1, root, NULL, 0), root);
}

static void test_mops_leaves_golden_alone(void **state) {
    (void)state;
    assert_ptr_equal(run(1, golden, NULL, 0), golden);
}

static void test_mops_wrong_index_count_fails(void **state) {
    (void)state;
    const UOp *r = rng(6, 0, AXIS_LOOP);
    const UOp *v = node(OP_RESHAPE, DT_FLOAT32, NULL, 2, buf(1, 6), shape(2, 2, 3));
    const UOp *rd = load(v, 1, r);
    const char *msg = run_fails(1, kernel(buf(0, 6), r, rd, 1, r), NULL, 0);
    char want[64];
    snprintf(want, sizeof want, "%%%u", rd->id);
    if (!strstr(msg, want) || !strstr(msg, "indexed with 1 indices")) fail_msg("message: %s", msg);
}

/* ================= stage 3: split ranges ================= */

static void test_split_ranges(void **state) {
    (void)state;
    /* out[r] = in[r % 4] over r < 12 */
    const UOp *r = rng(12, 0, AXIS_LOOP);
    const UOp *kern = kernel(buf(0, 12), r, load(buf(1, 4), 1, uop_binary(c, OP_MOD, r, k(4))), 1, r);
    const UOp *out = run(3, kern, NULL, 0);
    const UOp *end = out->src[0];
    assert_int_equal(end->nsrc, 3);
    const UOp *outer = end->src[1], *inner = end->src[2];
    assert_int_equal(uop_op(outer), OP_RANGE);
    assert_ptr_equal(outer->arg, arg_tuple(c, (const Arg *[]){arg_int(c, 0), arg_int(c, 0), arg_axis(c, AXIS_LOOP)}, 3));
    assert_ptr_equal(inner->arg, arg_tuple(c, (const Arg *[]){arg_int(c, 0), arg_int(c, 1), arg_axis(c, AXIS_LOOP)}, 3));
    assert_ptr_equal(outer->src[0], k(3));
    assert_ptr_equal(inner->src[0], k(4));
    assert_ptr_equal(read_of(out, 1)->src[1], inner); /* r % 4 is the inner range */
    assert_int_equal(count(out, OP_MOD), 0);
    /* 4 does not divide 10: left alone; so is the golden AST */
    const UOp *r10 = rng(10, 0, AXIS_LOOP);
    const UOp *k10 = kernel(buf(0, 10), r10, load(buf(1, 4), 1, uop_binary(c, OP_MOD, r10, k(4))), 1, r10);
    assert_ptr_equal(run(3, k10, NULL, 0), k10);
    assert_ptr_equal(run(3, golden, NULL, 0), golden);
}

/* ================= stage 4: initial symbolic ================= */

static void test_initial_symbolic_flattens_and_simplifies(void **state) {
    (void)state;
    const UOp *r0 = rng(2, 0, AXIS_LOOP), *r1 = rng(3, 1, AXIS_LOOP);
    const UOp *idx = add(mul(r0, k(3)), r1);
    /* out[(r0*3 + r1) + 0] = in[(r0*1)], END over the expression r0*3+r1 */
    const UOp *st = node(OP_STORE, DT_VOID, NULL, 2, node(OP_INDEX, buf(0, 6)->dtype, NULL, 2, buf(0, 6), add(idx, k(0))),
                         load(buf(1, 2), 1, mul(r0, k(1))));
    const UOp *end = node(OP_END, DT_VOID, NULL, 2, st, idx);
    const UOp *out = run(4, uop_sink(c, &end, 1), NULL, 0);
    const UOp *e = out->src[0];
    assert_int_equal(e->nsrc, 3);
    assert_ptr_equal(e->src[1], r0);
    assert_ptr_equal(e->src[2], r1);
    assert_string_equal(expr(e->src[0]->src[0]->src[1]), "(r0*3+r1)");
    assert_ptr_equal(read_of(out, 1)->src[1], r0);
    assert_ptr_equal(run(4, golden, NULL, 0), golden);
}

/* ================= stage 5: simplify ranges ================= */

static void test_simplify_ranges_merges(void **state) {
    (void)state;
    /* copy of a (3, 4) buffer: the two ranges merge into one of 12 */
    const UOp *r0 = rng(3, 0, AXIS_LOOP), *r1 = rng(4, 1, AXIS_LOOP);
    const UOp *idx = add(mul(r0, k(4)), r1);
    const UOp *out = run(5, kernel(buf(0, 12), idx, load(buf(1, 12), 1, idx), 2, r0, r1), NULL, 0);
    const UOp *end = out->src[0];
    assert_int_equal(end->nsrc, 2);
    assert_ptr_equal(end->src[1], rng(12, 0, AXIS_LOOP));
    assert_ptr_equal(read_of(out, 1)->src[1], rng(12, 0, AXIS_LOOP));
    assert_int_equal(count(out, OP_IDIV) + count(out, OP_MOD), 0);
    /* the matmul's ranges would need div/mod: left alone */
    assert_ptr_equal(run(5, golden, NULL, 0), golden);
}

/* ================= stage 6: split store ================= */

static void test_split_store_cuts_at_comparisons(void **state) {
    (void)state;
    /* out[r] = r < 3 ? a[r] : b[r] over r < 8: loops over 0..3 and 3..8 */
    const UOp *r = rng(8, 0, AXIS_LOOP);
    const UOp *v = uop_where(c, lt(r, k(3)), load(buf(1, 8), 1, r), load(buf(2, 8), 1, r));
    const UOp *out = run(6, kernel(buf(0, 8), r, v, 1, r), NULL, 0);
    const UOp *g = out->src[0];
    assert_int_equal(uop_op(g), OP_GROUP);
    assert_int_equal(g->nsrc, 2);
    const UOp *lo = g->src[0]->src[1], *hi = g->src[1]->src[1];
    assert_ptr_equal(lo->src[0], k(3));
    assert_ptr_equal(hi->src[0], k(5));
    assert_ptr_equal(lo->arg, arg_tuple(c, (const Arg *[]){arg_int(c, 0), arg_int(c, 0), arg_axis(c, AXIS_LOOP)}, 3));
    assert_ptr_equal(hi->arg, arg_tuple(c, (const Arg *[]){arg_int(c, 0), arg_int(c, 1), arg_axis(c, AXIS_LOOP)}, 3));
    assert_ptr_equal(g->src[0]->src[0]->src[0]->src[1], lo);
    assert_ptr_equal(g->src[1]->src[0]->src[0]->src[1], add(hi, k(3)));
    /* no comparison of the range, or one outside it: left alone */
    const UOp *far = uop_where(c, lt(r, k(9)), load(buf(1, 8), 1, r), load(buf(2, 8), 1, r));
    const UOp *kern = kernel(buf(0, 8), r, far, 1, r);
    assert_ptr_equal(run(6, kern, NULL, 0), kern);
    assert_ptr_equal(run(6, golden, NULL, 0), golden);
}

/* out[r] = sum over j < 4 of (r < 2 ? a[r*4+j] : b[r*4+j]), r < 5 */
static const UOp *split_sum_kernel(void) {
    const UOp *r = rng(5, 0, AXIS_LOOP), *j = rng(4, 1, AXIS_REDUCE);
    const UOp *idx = add(mul(r, k(4)), j);
    const UOp *v = uop_where(c, lt(r, k(2)), load(buf(1, 20), 1, idx), load(buf(2, 20), 1, idx));
    return kernel(buf(0, 5), r, node(OP_REDUCE, DT_FLOAT32, arg_op(c, OP_ADD), 2, v, j), 1, r);
}

static void test_split_store_copies_inner_ranges(void **state) {
    (void)state;
    /* each segment sums over its own copy of the reduce range: a RANGE is
     * one loop, and two loops cannot share it */
    const UOp *j = rng(4, 1, AXIS_REDUCE);
    const UOp *out = run(6, split_sum_kernel(), NULL, 0);
    const UOp *g = out->src[0];
    assert_int_equal(uop_op(g), OP_GROUP);
    assert_int_equal(g->nsrc, 2);
    const UOp *red0 = find(g->src[0], OP_REDUCE, 0), *red1 = find(g->src[1], OP_REDUCE, 0);
    assert_non_null(red0);
    assert_non_null(red1);
    const UOp *j0 = red0->src[1], *j1 = red1->src[1];
    assert_true(j0 != j && j1 != j && j0 != j1);
    assert_ptr_equal(j0->src[0], k(4));
    assert_ptr_equal(j0->arg, arg_tuple(c, (const Arg *[]){arg_int(c, 1), arg_int(c, 0), arg_axis(c, AXIS_REDUCE)}, 3));
    assert_ptr_equal(j1->arg, arg_tuple(c, (const Arg *[]){arg_int(c, 1), arg_int(c, 1), arg_axis(c, AXIS_REDUCE)}, 3));
    for (int i = 0; find(out, OP_RANGE, i); i++) assert_true(find(out, OP_RANGE, i) != j);
}

/* ================= stage 7: apply opts ================= */

static void test_opts_none_is_identity(void **state) {
    (void)state;
    assert_ptr_equal(run(7, golden, NULL, 0), golden);
}

static void test_opts_upcast_whole_axis(void **state) {
    (void)state;
    KernelOpt up = {OPT_UPCAST, 1, 3};
    const UOp *out = run(7, golden, &up, 1);
    const UOp *u = rng(3, 3, AXIS_UPCAST); /* fresh id: ranges 0..2 exist */
    const UOp *end = out->src[0];
    assert_int_equal(end->nsrc, 3);
    assert_ptr_equal(end->src[1], rng(3, 1, AXIS_LOOP));
    assert_ptr_equal(end->src[2], u);
    assert_string_equal(expr(end->src[0]->src[0]->src[1]), "(r1*3+r3)");
    assert_string_equal(expr(read_of(out, 2)->src[1]), "(r0*3+r3)");
    assert_null(find(out, OP_RANGE, 3)); /* r2 is gone: r0, r1, r3 */
}

static void test_opts_upcast_split(void **state) {
    (void)state;
    const UOp *r = rng(6, 0, AXIS_LOOP);
    const UOp *kern = kernel(buf(0, 6), r, load(buf(1, 6), 1, r), 1, r);
    KernelOpt up = {OPT_UPCAST, 0, 2};
    const UOp *out = run(7, kern, &up, 1);
    const UOp *end = out->src[0];
    assert_int_equal(end->nsrc, 3);
    assert_ptr_equal(end->src[1], rng(3, 0, AXIS_LOOP));
    assert_ptr_equal(end->src[2], rng(2, 1, AXIS_UPCAST));
    assert_string_equal(expr(read_of(out, 1)->src[1]), "(r0*2+r1)");
    /* the outer range keeps counting as an output range: split it again */
    KernelOpt two[2] = {{OPT_UPCAST, 0, 2}, {OPT_UPCAST, 0, 3}};
    out = run(7, kern, two, 2);
    end = out->src[0];
    assert_int_equal(end->nsrc, 3);
    assert_ptr_equal(end->src[1], rng(3, 2, AXIS_UPCAST));
    assert_ptr_equal(end->src[2], rng(2, 1, AXIS_UPCAST));
    assert_string_equal(expr(read_of(out, 1)->src[1]), "(r2*2+r1)");
}

static void test_opts_unroll_reduce(void **state) {
    (void)state;
    KernelOpt un = {OPT_UNROLL, 0, 0}; /* 0: the whole range */
    const UOp *out = run(7, golden, &un, 1);
    const UOp *red = find(out, OP_REDUCE, 0);
    assert_int_equal(red->nsrc, 2);
    assert_ptr_equal(red->src[1], rng(3, 3, AXIS_UNROLL));
    assert_string_equal(expr(read_of(out, 1)->src[1]), "(r1*3+r3)");
    /* in order: UPCAST gets id 3, UNROLL id 4 */
    KernelOpt both[2] = {{OPT_UPCAST, 1, 3}, {OPT_UNROLL, 0, 3}};
    out = run(7, golden, both, 2);
    assert_ptr_equal(find(out, OP_REDUCE, 0)->src[1], rng(3, 4, AXIS_UNROLL));
    assert_ptr_equal(out->src[0]->src[2], rng(3, 3, AXIS_UPCAST));
}

static void test_opts_errors(void **state) {
    (void)state;
    KernelOpt bad_axis = {OPT_UPCAST, 2, 3};
    assert_string_equal(run_fails(7, golden, &bad_axis, 1), "UPCAST axis 2: the kernel has 2 output ranges");
    KernelOpt bad_reduce = {OPT_UNROLL, 1, 3};
    assert_string_equal(run_fails(7, golden, &bad_reduce, 1), "UNROLL axis 1: the kernel has 1 reduce range");
    KernelOpt neg = {OPT_UPCAST, -1, 3};
    assert_string_equal(run_fails(7, golden, &neg, 1), "UPCAST axis -1: the kernel has 2 output ranges");
    char want[160];
    const UOp *r2 = rng(3, 2, AXIS_LOOP);
    KernelOpt nodiv = {OPT_UPCAST, 1, 2};
    snprintf(want, sizeof want, "UPCAST axis 1: amount 2 does not divide the size 3 of range %%%u", r2->id);
    assert_string_equal(run_fails(7, golden, &nodiv, 1), want);
    KernelOpt big = {OPT_UNROLL, 0, 4};
    snprintf(want, sizeof want, "UNROLL axis 0: amount 4 is more than the size 3 of range %%%u",
             rng(3, 0, AXIS_REDUCE)->id);
    assert_string_equal(run_fails(7, golden, &big, 1), want);
    /* the second opt fails once the first used the axis up */
    KernelOpt twice[2] = {{OPT_UNROLL, 0, 3}, {OPT_UNROLL, 0, 3}};
    assert_string_equal(run_fails(7, golden, twice, 2), "UNROLL axis 0: the kernel has 0 reduce ranges");
}

/* ================= stage 8: post-opt symbolic ================= */

static void test_where_moves_into_load(void **state) {
    (void)state;
    const UOp *r = rng(4, 0, AXIS_LOOP);
    const UOp *zero = uop_const_float(c, DT_FLOAT32, 0.0);
    const UOp *cond = lt(r, k(2));
    const UOp *kern = kernel(buf(0, 4), r, uop_where(c, cond, load(buf(1, 4), 1, r), zero), 1, r);
    const UOp *out = run(8, kern, NULL, 0);
    const UOp *val = out->src[0]->src[0]->src[1];
    assert_int_equal(uop_op(val), OP_INDEX); /* the WHERE is gone */
    const UOp *g = val->src[1];
    assert_int_equal(uop_op(g), OP_WHERE);
    assert_ptr_equal(g->src[0], cond);
    assert_ptr_equal(g->src[1], r);
    assert_int_equal(g->src[2]->arg->kind, ARG_INVALID);
    /* where(c, 0, load): the gate is !c */
    kern = kernel(buf(0, 4), r, uop_where(c, cond, zero, load(buf(1, 4), 1, r)), 1, r);
    out = run(8, kern, NULL, 0);
    val = out->src[0]->src[0]->src[1];
    assert_int_equal(uop_op(val), OP_INDEX);
    assert_string_equal(expr(val->src[1]->src[0]), "((r0<2)!=True)");
}

static void test_where_stays_when_it_cannot_move(void **state) {
    (void)state;
    const UOp *zero = uop_const_float(c, DT_FLOAT32, 0.0);
    /* the condition needs a range the read is not inside of */
    const UOp *r0 = rng(4, 0, AXIS_LOOP), *r1 = rng(4, 1, AXIS_LOOP);
    const UOp *val = uop_where(c, lt(r1, k(2)), load(buf(1, 4), 1, r0), zero);
    const UOp *kern = kernel(buf(0, 16), add(mul(r0, k(4)), r1), val, 2, r0, r1);
    assert_ptr_equal(run(8, kern, NULL, 0), kern);
    /* a data-dependent condition */
    const UOp *dd = lt(load(buf(2, 4), 1, r0), uop_const_float(c, DT_FLOAT32, 1.0));
    kern = kernel(buf(0, 4), r0, uop_where(c, dd, load(buf(1, 4), 1, r0), zero), 1, r0);
    assert_ptr_equal(run(8, kern, NULL, 0), kern);
    assert_ptr_equal(run(8, golden, NULL, 0), golden);
}

/* REDUCE(op, value, ranges...) */
static const UOp *reduce(Op op, const UOp *v, int n, const UOp *r0, const UOp *r1) {
    return n == 1 ? node(OP_REDUCE, v->dtype, arg_op(c, op), 2, v, r0) : node(OP_REDUCE, v->dtype, arg_op(c, op), 3, v, r0, r1);
}

static void test_postopt_drops_unused_reduce_ranges(void **state) {
    (void)state;
    const UOp *r = rng(3, 0, AXIS_LOOP), *j = rng(4, 1, AXIS_REDUCE), *q = rng(2, 2, AXIS_REDUCE);
    const UOp *a = load(buf(1, 3), 1, r);
    /* a[r] summed over j (unused) is a[r] * 4 */
    const UOp *out = run(8, kernel(buf(0, 3), r, reduce(OP_ADD, a, 1, j, NULL), 1, r), NULL, 0);
    assert_int_equal(count(out, OP_REDUCE), 0);
    assert_ptr_equal(out->src[0]->src[0]->src[1], mul(a, uop_const_float(c, DT_FLOAT32, 4.0)));
    /* its product over j is a[r] ** 4, by squaring */
    out = run(8, kernel(buf(0, 3), r, reduce(OP_MUL, a, 1, j, NULL), 1, r), NULL, 0);
    assert_int_equal(count(out, OP_REDUCE), 0);
    assert_ptr_equal(out->src[0]->src[0]->src[1], mul(mul(a, a), mul(a, a)));
    /* its maximum is a[r] */
    out = run(8, kernel(buf(0, 3), r, reduce(OP_MAX, a, 1, j, NULL), 1, r), NULL, 0);
    assert_ptr_equal(out->src[0]->src[0]->src[1], a);
    /* a sum over j and q of b[r*2+q]: q stays, j becomes * 4 */
    const UOp *b = load(buf(1, 6), 1, add(mul(r, k(2)), q));
    out = run(8, kernel(buf(0, 3), r, reduce(OP_ADD, b, 2, j, q), 1, r), NULL, 0);
    const UOp *red = find(out, OP_REDUCE, 0);
    assert_non_null(red);
    assert_int_equal(red->nsrc, 2);
    assert_ptr_equal(red->src[1], q);
    assert_ptr_equal(out->src[0]->src[0]->src[1], mul(red, uop_const_float(c, DT_FLOAT32, 4.0)));
    /* a padded segment's sum of zeros folds to 0 */
    const UOp *zero = uop_const_float(c, DT_FLOAT32, 0.0);
    out = run(8, kernel(buf(0, 3), r, reduce(OP_ADD, zero, 1, j, NULL), 1, r), NULL, 0);
    assert_ptr_equal(out->src[0]->src[0]->src[1], zero);
    /* every range used: left alone */
    const UOp *used = kernel(buf(0, 3), r, reduce(OP_ADD, b, 1, q, NULL), 1, r);
    assert_ptr_equal(run(8, used, NULL, 0), used);
}

/* ================= stage 10: add local buffers ================= */

static void test_codegen_cleanups(void **state) {
    (void)state;
    const UOp *r = rng(4, 0, AXIS_LOOP);
    const UOp *v = node(OP_CONTIGUOUS, DT_FLOAT32, NULL, 1, node(OP_NOOP, DT_FLOAT32, NULL, 1, load(buf(1, 4), 1, r)));
    const UOp *st = node(OP_STORE, DT_VOID, arg_int(c, 7), 2, node(OP_INDEX, buf(0, 4)->dtype, NULL, 2, buf(0, 4), r), v);
    const UOp *end = node(OP_END, DT_VOID, NULL, 2, st, r);
    const UOp *out = run(10, uop_sink(c, &end, 1), NULL, 0);
    const UOp *st2 = out->src[0]->src[0];
    assert_null(st2->arg);
    assert_ptr_equal(st2->src[1], load(buf(1, 4), 1, r));
    assert_int_equal(count(out, OP_CONTIGUOUS) + count(out, OP_NOOP), 0);
    assert_ptr_equal(run(10, golden, NULL, 0), golden);
}

static void test_codegen_bufferize_is_an_error(void **state) {
    (void)state;
    const UOp *r = rng(4, 0, AXIS_LOOP);
    const UOp *b = node(OP_BUFFERIZE, DT_FLOAT32, NULL, 2, load(buf(1, 4), 1, r), r);
    const UOp *root = uop_sink(c, &b, 1);
    char want[64];
    snprintf(want, sizeof want, "BUFFERIZE %%%u", b->id);
    if (!strstr(run_fails(10, root, NULL, 0), want)) fail_msg("message: %s", err);
}

/* ================= all 22 stages, compiled and run ================= */

/* Runs ast through every stage, compiles and runs it on bufs (DEFINE_GLOBAL
 * order, float32). */
static void execute(const UOp *ast, const KernelOpt *opts, int nopts, float **bufs, int nbufs) {
    const UOp *lin = stages_run_all(c, ast, opts, nopts, err, sizeof err);
    if (!lin) fail_msg("stages: %s", err);
    Kernel *kn = kernel_compile("k", lin->src, lin->nsrc, err, sizeof err);
    if (!kn) fail_msg("compile: %s", err);
    assert_int_equal(kernel_num_buffers(kn), nbufs);
    void *ptrs[8];
    for (int i = 0; i < nbufs; i++) ptrs[kernel_buffer_arg(kn, i)] = bufs[i];
    bool ok = kernel_run(kn, ptrs, NULL, err, sizeof err);
    kernel_free(kn);
    if (!ok) fail_msg("run: %s", err);
}

static void fill(float *a, int n, float first) {
    for (int i = 0; i < n; i++) a[i] = first + (float)i;
}

static void test_run_transpose_through_permute(void **state) {
    (void)state;
    const UOp *i = rng(3, 0, AXIS_LOOP), *j = rng(3, 1, AXIS_LOOP);
    const UOp *v = node(OP_RESHAPE, DT_FLOAT32, NULL, 2, buf(1, 9), shape(2, 3, 3));
    const UOp *t = node(OP_PERMUTE, DT_FLOAT32, ints(2, 1, 0), 1, v);
    const UOp *ast = kernel(buf(0, 9), add(mul(i, k(3)), j), load(t, 2, i, j), 2, i, j);
    float out[9] = {0}, a[9];
    fill(a, 9, 1);
    execute(ast, NULL, 0, (float *[]){out, a}, 2);
    for (int r = 0; r < 3; r++)
        for (int q = 0; q < 3; q++) assert_true(out[r * 3 + q] == a[q * 3 + r]);
}

static void test_run_split_store_and_ranges(void **state) {
    (void)state;
    const UOp *r = rng(8, 0, AXIS_LOOP);
    const UOp *v = uop_where(c, lt(r, k(3)), load(buf(1, 8), 1, r), load(buf(2, 8), 1, r));
    float out[12] = {0}, a[12], b[12];
    fill(a, 12, 1);
    fill(b, 12, 50);
    execute(kernel(buf(0, 8), r, v, 1, r), NULL, 0, (float *[]){out, a, b}, 3);
    for (int q = 0; q < 8; q++) assert_true(out[q] == (q < 3 ? a[q] : b[q]));
    /* out[r] = in[r % 4] over 12 (split ranges) */
    const UOp *r12 = rng(12, 0, AXIS_LOOP);
    execute(kernel(buf(0, 12), r12, load(buf(1, 4), 1, uop_binary(c, OP_MOD, r12, k(4))), 1, r12), NULL, 0,
            (float *[]){out, a}, 2);
    for (int q = 0; q < 12; q++) assert_true(out[q] == a[q % 4]);
    /* a (3, 4) copy (merged ranges) */
    const UOp *r0 = rng(3, 0, AXIS_LOOP), *r1 = rng(4, 1, AXIS_LOOP), *idx = add(mul(r0, k(4)), r1);
    memset(out, 0, sizeof out);
    execute(kernel(buf(0, 12), idx, load(buf(1, 12), 1, idx), 2, r0, r1), NULL, 0, (float *[]){out, b}, 2);
    for (int q = 0; q < 12; q++) assert_true(out[q] == b[q]);
}

static void test_run_split_store_with_reduce(void **state) {
    (void)state;
    float out[5] = {0}, a[20], b[20];
    fill(a, 20, 1);
    fill(b, 20, 100);
    execute(split_sum_kernel(), NULL, 0, (float *[]){out, a, b}, 3);
    for (int r = 0; r < 5; r++) {
        float want = 0;
        for (int j = 0; j < 4; j++) want += r < 2 ? a[r * 4 + j] : b[r * 4 + j];
        if (out[r] != want) fail_msg("out[%d] = %g, want %g", r, out[r], want);
    }
    /* with the reduce unrolled by 2 in both segments */
    KernelOpt unroll[2] = {{OPT_UNROLL, 0, 2}, {OPT_UNROLL, 0, 2}};
    memset(out, 0, sizeof out);
    execute(split_sum_kernel(), unroll, 2, (float *[]){out, a, b}, 3);
    for (int r = 0; r < 5; r++) {
        float want = 0;
        for (int j = 0; j < 4; j++) want += r < 2 ? a[r * 4 + j] : b[r * 4 + j];
        if (out[r] != want) fail_msg("unrolled: out[%d] = %g, want %g", r, out[r], want);
    }
}

static void test_run_where_on_load(void **state) {
    (void)state;
    const UOp *r = rng(4, 0, AXIS_LOOP);
    const UOp *zero = uop_const_float(c, DT_FLOAT32, 0.0);
    float out[4], a[4];
    fill(out, 4, 100);
    fill(a, 4, 1);
    execute(kernel(buf(0, 4), r, uop_where(c, lt(r, k(2)), load(buf(1, 4), 1, r), zero), 1, r), NULL, 0,
            (float *[]){out, a}, 2);
    for (int q = 0; q < 4; q++) assert_true(out[q] == (q < 2 ? a[q] : 0.0f));
}

static void test_run_matmul_with_opts(void **state) {
    (void)state;
    const KernelOpt sets[][2] = {
        {{OPT_UPCAST, 0, 3}, {OPT_UPCAST, 0, 3}}, /* second: the only output range left */
        {{OPT_UPCAST, 1, 3}, {OPT_UNROLL, 0, 3}},
        {{OPT_UPCAST, 0, 0}, {OPT_UNROLL, 0, 0}},
    };
    const int nset[] = {1, 2, 2};
    for (size_t s = 0; s < sizeof nset / sizeof *nset; s++) {
        float out[9] = {0}, a[9], b[9];
        fill(a, 9, 1);
        fill(b, 9, 10);
        execute(golden, sets[s], nset[s], (float *[]){out, a, b}, 3);
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) {
                float want = 0;
                for (int q = 0; q < 3; q++) want += a[i * 3 + q] * b[q * 3 + j];
                if (out[i * 3 + j] != want) fail_msg("opt set %zu: out[%d][%d] = %g, want %g", s, i, j, out[i * 3 + j], want);
            }
    }
    /* 6 elements upcast by 2: outer loop of 3 */
    const UOp *r = rng(6, 0, AXIS_LOOP);
    float out[6] = {0}, a[6];
    fill(a, 6, 1);
    KernelOpt up = {OPT_UPCAST, 0, 2};
    execute(kernel(buf(0, 6), r, uop_binary(c, OP_MUL, load(buf(1, 6), 1, r), uop_const_float(c, DT_FLOAT32, 2.0)), 1, r),
            &up, 1, (float *[]){out, a}, 2);
    for (int q = 0; q < 6; q++) assert_true(out[q] == 2 * a[q]);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mops_reshape),
        cmocka_unit_test(test_mops_permute_flip_shrink_expand),
        cmocka_unit_test(test_mops_pad_gates_the_index),
        cmocka_unit_test(test_mops_through_after_and_end),
        cmocka_unit_test(test_index_concat),
        cmocka_unit_test(test_mops_leaves_golden_alone),
        cmocka_unit_test(test_mops_wrong_index_count_fails),
        cmocka_unit_test(test_split_ranges),
        cmocka_unit_test(test_initial_symbolic_flattens_and_simplifies),
        cmocka_unit_test(test_simplify_ranges_merges),
        cmocka_unit_test(test_split_store_cuts_at_comparisons),
        cmocka_unit_test(test_split_store_copies_inner_ranges),
        cmocka_unit_test(test_opts_none_is_identity),
        cmocka_unit_test(test_opts_upcast_whole_axis),
        cmocka_unit_test(test_opts_upcast_split),
        cmocka_unit_test(test_opts_unroll_reduce),
        cmocka_unit_test(test_opts_errors),
        cmocka_unit_test(test_where_moves_into_load),
        cmocka_unit_test(test_where_stays_when_it_cannot_move),
        cmocka_unit_test(test_postopt_drops_unused_reduce_ranges),
        cmocka_unit_test(test_codegen_cleanups),
        cmocka_unit_test(test_codegen_bufferize_is_an_error),
        cmocka_unit_test(test_run_transpose_through_permute),
        cmocka_unit_test(test_run_split_store_and_ranges),
        cmocka_unit_test(test_run_split_store_with_reduce),
        cmocka_unit_test(test_run_where_on_load),
        cmocka_unit_test(test_run_matmul_with_opts),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
