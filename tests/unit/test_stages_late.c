/* test_stages_late.c - stages 11-22 on kernels built by hand: each stage's
 * output is compared with the graph it must produce (nodes are hash-consed,
 * so an equal graph is the same pointer), and whole kernels are lowered by
 * the stages, compiled by the LLVM backend and run, with exact results. */
#include <setjmp.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/backend/backend.h"
#include "core/ir/uop.h"
#include "core/stages/stages.h"
#include "core/stages/stage_rules.h"
#include "viz/listing.h"
#include "viz/tinygrad_repr.h"
#include "test_files.h"

static UCtx *c;

static int setup(void **state) {
    (void)state;
    c = uctx_new();
    return c ? 0 : -1;
}
static int teardown(void **state) {
    (void)state;
    uctx_free(c);
    return 0;
}

/* ---- constructors ---- */
static const UOp *chk(const UOp *u) {
    if (!u) fail_msg("node construction failed: %s", uctx_error(c));
    return u;
}
static const UOp *node(Op op, const DType *dt, const Arg *arg, int n, ...) {
    const UOp *s[8];
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n; i++) s[i] = va_arg(ap, const UOp *);
    va_end(ap);
    return chk(uop_new(c, op, dt, s, n, arg));
}
static const UOp *glob(int i, const DType *el, int64_t size) {
    return node(OP_DEFINE_GLOBAL, dt_ptr(el, size, ADDR_GLOBAL), arg_int(c, i), 0);
}
static const UOp *ki(const DType *dt, int64_t v) { return chk(uop_const_int(c, dt, v)); }
static const UOp *kf(double v) { return chk(uop_const_float(c, DT_FLOAT32, v)); }
static const UOp *idx(int64_t v) { return ki(DT_INDEX, v); }
static const UOp *i32(int64_t v) { return ki(DT_INT32, v); }
static const UOp *rng(const UOp *end, int axis, AxisType at) { return chk(uop_range(c, end, axis, at)); }
static const UOp *bin(Op op, const UOp *a, const UOp *b) { return chk(uop_binary(c, op, a, b)); }
static const UOp *cast(const UOp *a, const DType *dt) { return chk(uop_cast(c, a, dt)); }
static const UOp *where(const UOp *g, const UOp *a, const UOp *b) { return chk(uop_where(c, g, a, b)); }
static const UOp *ptr_index(const UOp *buf, const UOp *i) { return node(OP_INDEX, buf->dtype, NULL, 2, buf, i); }
static const UOp *val_index(const UOp *buf, const UOp *i) { return node(OP_INDEX, buf->dtype->base, NULL, 2, buf, i); }
static const UOp *gated_index(const UOp *buf, const UOp *i, const UOp *g) {
    return node(OP_INDEX, buf->dtype, NULL, 3, buf, i, g);
}
static const UOp *load(const UOp *p) { return node(OP_LOAD, p->dtype->base, NULL, 1, p); }
static const UOp *store(const UOp *p, const UOp *v) { return node(OP_STORE, DT_VOID, NULL, 2, p, v); }
static const UOp *end1(const UOp *v, const UOp *r) { return node(OP_END, DT_VOID, NULL, 2, v, r); }
static const UOp *sink1(const UOp *a) { return chk(uop_sink(c, &a, 1)); }
static const UOp *reduce(Op op, const UOp *v, const UOp *r) { return node(OP_REDUCE, v->dtype, arg_op(c, op), 2, v, r); }
static const UOp *invalid(void) { return chk(uop_const_arg(c, DT_INDEX, arg_invalid(c))); }

static const char *listing(const UOp *u) {
    static StrBuf sb;
    sb_free(&sb);
    sb_init(&sb);
    uop_listing(&sb, u, NULL);
    return sb_str(&sb);
}

/* runs stages from..to on root (native: for uopdb's renderer's op set, as
 * {transcendentals = "native"}); fails the test with the stage's message */
static const UOp *run_stages_for(const UOp *root, int from, int to, bool native) {
    char err[512] = "";
    StageCtx sc = {.c = c, .err = err, .errlen = sizeof err, .native_transcendentals = native};
    for (int n = from; n <= to; n++) {
        const UOp *next = stage_run(&sc, n, root);
        if (!next) fail_msg("stage %d (%s) failed: %s\ninput:\n%s", n, stage_get(n)->name, err, listing(root));
        root = next;
    }
    return root;
}
static const UOp *run_stages(const UOp *root, int from, int to) { return run_stages_for(root, from, to, false); }
static const UOp *run_stages_native(const UOp *root, int from, int to) { return run_stages_for(root, from, to, true); }

static void expect_same(const UOp *got, const UOp *want) {
    if (got != want) {
        char *g = strdup(listing(got));
        fail_msg("got:\n%s\nexpected:\n%s", g, listing(want));
    }
}

static int count_op(const UOp *root, Op op) {
    size_t n = 0;
    const UOp **t = uop_toposort(root, &n);
    int k = 0;
    for (size_t i = 0; i < n; i++) k += uop_op(t[i]) == op;
    free((void *)t);
    return k;
}
static int count_dtype(const UOp *root, ScalarKind sk) {
    size_t n = 0;
    const UOp **t = uop_toposort(root, &n);
    int k = 0;
    for (size_t i = 0; i < n; i++) k += !dt_is_ptr(t[i]->dtype) && t[i]->dtype->sk == sk;
    free((void *)t);
    return k;
}

static Kernel *compile_linear(const UOp *lin, const char *name) {
    assert_int_equal(uop_op(lin), OP_LINEAR);
    char err[512];
    Kernel *k = kernel_compile(name, lin->src, lin->nsrc, err, sizeof err);
    if (!k) fail_msg("%s: %s\n%s", name, err, listing(lin));
    return k;
}
static void run_kernel(Kernel *k, void **bufs) {
    char err[256];
    if (!kernel_run(k, bufs, NULL, err, sizeof err)) fail_msg("run: %s", err);
}

/* ================= stage 11: remove reduce ================= */

/* out[0] = sum over r < 100 of in[r] */
static const UOp *sum_kernel(void) {
    const UOp *d0 = glob(0, DT_FLOAT32, 1), *d1 = glob(1, DT_FLOAT32, 100);
    const UOp *r = rng(idx(100), 0, AXIS_REDUCE);
    return sink1(store(ptr_index(d0, idx(0)), reduce(OP_ADD, val_index(d1, r), r)));
}

static void test_remove_reduce_accumulator(void **state) {
    (void)state;
    const UOp *d0 = glob(0, DT_FLOAT32, 1), *d1 = glob(1, DT_FLOAT32, 100);
    const UOp *r = rng(idx(100), 0, AXIS_REDUCE);
    const UOp *v = val_index(d1, r);
    const UOp *got = run_stages(sum_kernel(), 11, 11);
    /* the accumulator, as tinygrad v0.12.0's reduce_to_acc builds it */
    const UOp *acc = node(OP_DEFINE_REG, dt_ptr(DT_FLOAT32, 1, ADDR_REG), arg_int(c, 0), 0);
    const UOp *z = i32(0);
    const UOp *init = store(val_index(acc, z), kf(0.0));
    const UOp *cur = val_index(node(OP_AFTER, acc->dtype, NULL, 3, acc, init, r), z);
    /* (differences: the update stores through the read's AFTER, so it stays after the init,
     * and the read after the loop follows the init too) */
    const UOp *upd = end1(store(cur, bin(OP_ADD, cur, v)), r);
    const UOp *total = val_index(node(OP_AFTER, acc->dtype, NULL, 3, acc, upd, init), z);
    expect_same(got, sink1(store(ptr_index(d0, idx(0)), total)));
}

static void test_remove_reduce_identities(void **state) {
    (void)state;
    /* MAX starts at -inf, MUL at 1; an outer loop the value lives in orders the init after it */
    const UOp *d0 = glob(0, DT_FLOAT32, 4), *d1 = glob(1, DT_FLOAT32, 12);
    const UOp *ro = rng(idx(4), 0, AXIS_LOOP), *rr = rng(idx(3), 1, AXIS_REDUCE);
    const UOp *v = val_index(d1, bin(OP_ADD, bin(OP_MUL, ro, idx(3)), rr));
    const UOp *mx = reduce(OP_MAX, v, rr), *pr = reduce(OP_MUL, v, rr);
    const UOp *got = run_stages(sink1(end1(store(ptr_index(d0, ro), bin(OP_ADD, mx, pr)), ro)), 11, 11);
    assert_int_equal(count_op(got, OP_REDUCE), 0);
    assert_int_equal(count_op(got, OP_DEFINE_REG), 2);
    const UOp *z = i32(0);
    /* the accumulators are numbered in the order the rewrite meets the REDUCEs */
    const UOp *acc0 = node(OP_DEFINE_REG, dt_ptr(DT_FLOAT32, 1, ADDR_REG), arg_int(c, 0), 0);
    const UOp *acc1 = node(OP_DEFINE_REG, dt_ptr(DT_FLOAT32, 1, ADDR_REG), arg_int(c, 1), 0);
    const UOp *want[2];
    for (int order = 0; order < 2; order++) {
        const UOp *am = order ? acc1 : acc0, *ap = order ? acc0 : acc1;
        const UOp *parts[2];
        for (int k = 0; k < 2; k++) {
            const UOp *acc = k ? ap : am;
            Op op = k ? OP_MUL : OP_MAX;
            const UOp *init = store(val_index(node(OP_AFTER, acc->dtype, NULL, 2, acc, ro), z), kf(k ? 1.0 : -INFINITY));
            const UOp *cur = val_index(node(OP_AFTER, acc->dtype, NULL, 3, acc, init, rr), z);
            const UOp *upd = end1(store(cur, bin(op, cur, v)), rr);
            parts[k] = val_index(node(OP_AFTER, acc->dtype, NULL, 3, acc, upd, init), z);
        }
        want[order] = sink1(end1(store(ptr_index(d0, ro), bin(OP_ADD, parts[0], parts[1])), ro));
    }
    if (got != want[0] && got != want[1]) fail_msg("got:\n%s", listing(got));
}

static void test_remove_reduce_horizontal(void **state) {
    (void)state;
    /* a float4 source reduced to a float: acc + v[0] + v[1] + v[2] + v[3] */
    const DType *f4 = dt_vec(DT_FLOAT32, 4);
    const UOp *d0 = glob(0, DT_FLOAT32, 1), *d1 = glob(1, f4, 8);
    const UOp *r = rng(idx(8), 0, AXIS_REDUCE);
    const UOp *v = val_index(d1, r);
    const UOp *red = node(OP_REDUCE, DT_FLOAT32, arg_op(c, OP_ADD), 2, v, r);
    const UOp *got = run_stages(sink1(store(ptr_index(d0, idx(0)), red)), 11, 11);
    const UOp *acc = node(OP_DEFINE_REG, dt_ptr(DT_FLOAT32, 1, ADDR_REG), arg_int(c, 0), 0), *z = i32(0);
    const UOp *init = store(val_index(acc, z), kf(0.0));
    const UOp *cur = val_index(node(OP_AFTER, acc->dtype, NULL, 3, acc, init, r), z), *sum = cur;
    for (int i = 0; i < 4; i++) {
        const Arg *a = arg_int(c, i);
        sum = bin(OP_ADD, sum, node(OP_GEP, DT_FLOAT32, arg_tuple(c, &a, 1), 1, v));
    }
    const UOp *total = val_index(node(OP_AFTER, acc->dtype, NULL, 3, acc, end1(store(cur, sum), r), init), z);
    expect_same(got, sink1(store(ptr_index(d0, idx(0)), total)));
}

/* ================= stage 13: add loads ================= */

static void test_add_loads(void **state) {
    (void)state;
    const UOp *d0 = glob(0, DT_FLOAT32, 4), *d1 = glob(1, DT_FLOAT32, 4);
    const UOp *r = rng(idx(4), 0, AXIS_LOOP);
    /* a value STORE target (as reduce_to_acc writes) loses its LOAD again */
    const UOp *in = sink1(end1(store(val_index(d0, r), bin(OP_ADD, val_index(d1, r), kf(1.0))), r));
    const UOp *got = run_stages(in, 13, 13);
    expect_same(got, sink1(end1(store(ptr_index(d0, r), bin(OP_ADD, load(ptr_index(d1, r)), kf(1.0))), r)));
    expect_same(run_stages(got, 13, 13), got);
}

/* ================= stage 15: lower index dtype ================= */

/* out[r*3 + 1] = 1.0 for r < end, out of size `size` */
static const UOp *strided_fill(int64_t end, int64_t size) {
    const UOp *d0 = glob(0, DT_FLOAT32, size);
    const UOp *r = rng(idx(end), 0, AXIS_LOOP);
    return sink1(end1(store(ptr_index(d0, bin(OP_ADD, bin(OP_MUL, r, idx(3)), idx(1))), kf(1.0)), r));
}

static void test_index_dtype_int32(void **state) {
    (void)state;
    const UOp *got = run_stages(strided_fill(100, 300), 15, 15);
    const UOp *d0 = glob(0, DT_FLOAT32, 300);
    const UOp *r = rng(i32(100), 0, AXIS_LOOP);
    const UOp *want = sink1(end1(store(ptr_index(d0, bin(OP_ADD, bin(OP_MUL, r, i32(3)), i32(1))), kf(1.0)), r));
    expect_same(got, want);
    assert_int_equal(count_dtype(got, SK_INDEX), 0);
}

static void test_index_dtype_int64(void **state) {
    (void)state;
    /* r < 3e9 needs int64 for the range and everything computed from it; no buffer is allocated */
    const int64_t n = 3000000000LL;
    const UOp *got = run_stages(strided_fill(n, 3 * n + 1), 15, 15);
    const UOp *d0 = glob(0, DT_FLOAT32, 3 * n + 1);
    const UOp *r = rng(ki(DT_INT64, n), 0, AXIS_LOOP);
    /* constants are chosen by their own value (int32) and widened where they meet an int64 */
    const UOp *i = bin(OP_ADD, bin(OP_MUL, r, cast(i32(3), DT_INT64)), cast(i32(1), DT_INT64));
    expect_same(got, sink1(end1(store(ptr_index(d0, i), kf(1.0)), r)));
    assert_int_equal(count_dtype(got, SK_INDEX), 0);
    /* stage 16 folds the widened constants */
    const UOp *i64 = bin(OP_ADD, bin(OP_MUL, r, ki(DT_INT64, 3)), ki(DT_INT64, 1));
    expect_same(run_stages(got, 16, 16), sink1(end1(store(ptr_index(d0, i64), kf(1.0)), r)));

    /* a range that fits int32 whose product does not: the range stays int32, the product is int64 */
    const UOp *big = glob(0, DT_FLOAT32, (int64_t)1 << 33);
    const UOp *r2 = rng(idx(1000000000), 0, AXIS_LOOP);
    const UOp *in2 = sink1(end1(store(ptr_index(big, bin(OP_MUL, r2, idx(8))), kf(2.0)), r2));
    const UOp *got2 = run_stages(in2, 15, 15);
    const UOp *r2l = rng(i32(1000000000), 0, AXIS_LOOP);
    const UOp *i2 = bin(OP_MUL, cast(r2l, DT_INT64), cast(i32(8), DT_INT64));
    expect_same(got2, sink1(end1(store(ptr_index(big, i2), kf(2.0)), r2l)));
    /* stage 16 folds the constant's cast */
    const UOp *got3 = run_stages(got2, 16, 16);
    expect_same(got3, sink1(end1(store(ptr_index(big, bin(OP_MUL, cast(r2l, DT_INT64), ki(DT_INT64, 8))), kf(2.0)), r2l)));
}

/* a sum whose value turns out to be 0 only in stage 14 (a read at an Invalid
 * index): the update acc + 0 is a store of what was loaded and is dropped,
 * so the read after the loop must still follow the init, which stays in the
 * program */
static void test_remove_reduce_init_survives_folded_body(void **state) {
    (void)state;
    const UOp *d0 = glob(0, DT_FLOAT32, 1), *d1 = glob(1, DT_FLOAT32, 100);
    const UOp *r = rng(idx(100), 0, AXIS_REDUCE);
    const UOp *red = node(OP_REDUCE, DT_FLOAT32, arg_op(c, OP_ADD), 2, val_index(d1, invalid()), r);
    const UOp *lin = run_stages(sink1(store(ptr_index(d0, idx(0)), red)), 11, 22);
    assert_int_equal(uop_op(lin), OP_LINEAR);
    bool init_kept = false;
    for (int i = 0; i < lin->nsrc; i++) {
        const UOp *u = lin->src[i];
        double v;
        if (uop_op(u) == OP_STORE && dt_is_ptr(u->src[0]->dtype) && u->src[0]->dtype->addrspace == ADDR_REG &&
            uop_const_value(u->src[1], &v) && v == 0.0)
            init_kept = true;
    }
    assert_true(init_kept);
}

static void test_index_dtype_invalid_gate(void **state) {
    (void)state;
    /* INDEX(buf, (r < 3).where(r, Invalid)) becomes INDEX(buf, r, r < 3) */
    const UOp *d1 = glob(1, DT_FLOAT32, 3);
    const UOp *r = rng(idx(6), 0, AXIS_LOOP);
    const UOp *in = sink1(load(ptr_index(d1, where(bin(OP_CMPLT, r, idx(3)), r, invalid()))));
    const UOp *got = run_stages(in, 15, 15);
    const UOp *rl = rng(i32(6), 0, AXIS_LOOP);
    expect_same(got, sink1(load(gated_index(d1, rl, bin(OP_CMPLT, rl, i32(3))))));
}

/* ================= stages 16-19 ================= */

static void test_post_index_symbolic_after(void **state) {
    (void)state;
    /* AFTER keeps only what has an effect: a cast of a range is replaced by the range */
    const UOp *acc = node(OP_DEFINE_REG, dt_ptr(DT_FLOAT32, 1, ADDR_REG), arg_int(c, 0), 0);
    const UOp *r = rng(i32(4), 0, AXIS_REDUCE);
    const UOp *a = node(OP_AFTER, acc->dtype, NULL, 2, acc, cast(r, DT_INDEX));
    const UOp *got = run_stages(sink1(load(ptr_index(a, i32(0)))), 16, 16);
    expect_same(got, sink1(load(ptr_index(node(OP_AFTER, acc->dtype, NULL, 2, acc, r), i32(0)))));
}

static void test_decompositions(void **state) {
    (void)state;
    const UOp *d0 = glob(0, DT_INT32, 8), *d1 = glob(1, DT_INT32, 8);
    const UOp *r = rng(i32(8), 0, AXIS_LOOP);
    const UOp *x = load(ptr_index(d1, r));   /* any int32: may be negative */
    const UOp *vals[] = {
        bin(OP_MOD, r, i32(4)),              /* r >= 0: r & 3 */
        bin(OP_MOD, x, i32(4)),              /* may be negative: stays */
        bin(OP_IDIV, r, i32(2)),             /* r >= 0: r >> 1 */
        bin(OP_MUL, x, i32(8)),              /* x << 3 */
        bin(OP_MUL, x, i32(-1)),             /* NEG x */
        bin(OP_ADD, bin(OP_MUL, x, x), r),   /* MULACC */
    };
    const UOp *wants[] = {
        bin(OP_AND, r, i32(3)),
        bin(OP_MOD, x, i32(4)),
        bin(OP_SHR, r, i32(1)),
        bin(OP_SHL, x, i32(3)),
        chk(uop_unary(c, OP_NEG, x)),
        node(OP_MULACC, DT_INT32, NULL, 3, x, x, r),
    };
    for (size_t i = 0; i < sizeof vals / sizeof *vals; i++) {
        const UOp *k = sink1(end1(store(ptr_index(d0, r), vals[i]), r));
        expect_same(run_stages_native(k, 18, 18), sink1(end1(store(ptr_index(d0, r), wants[i]), r)));
        /* tinygrad's CPU LLVM renderer has no AND, SHL, SHR, NEG or MULACC: they stay */
        expect_same(run_stages(k, 18, 18), k);
    }
    /* IDIV of a possibly negative value by 2^k: biased so it still truncates */
    const UOp *got = run_stages_native(sink1(store(ptr_index(d0, i32(0)), bin(OP_IDIV, x, i32(4)))), 18, 18);
    const UOp *bias = where(bin(OP_CMPLT, x, i32(0)), i32(3), i32(0));
    expect_same(got, sink1(store(ptr_index(d0, i32(0)), bin(OP_SHR, bin(OP_ADD, x, bias), i32(2)))));
}

static void test_final_rewrite(void **state) {
    (void)state;
    /* an END over two ranges: the larger axis id is ended first (innermost) */
    const UOp *d0 = glob(0, DT_INT32, 9);
    const UOp *r0 = rng(i32(3), 0, AXIS_LOOP), *r1 = rng(i32(3), 1, AXIS_LOOP);
    const UOp *st = store(ptr_index(d0, bin(OP_ADD, r1, bin(OP_MUL, r0, i32(3)))), i32(1));
    const UOp *e = node(OP_END, DT_VOID, NULL, 3, st, r0, r1);
    /* the decompositions run here too: for uopdb's renderer r1 + r0*3 is a
     * MULACC; tinygrad's CPU LLVM renderer has no MULACC */
    const UOp *st2 = store(ptr_index(d0, node(OP_MULACC, DT_INT32, NULL, 3, r0, i32(3), r1)), i32(1));
    expect_same(run_stages_native(sink1(e), 19, 19), sink1(end1(end1(st2, r1), r0)));
    expect_same(run_stages(sink1(e), 19, 19), sink1(end1(end1(st, r1), r0)));

    /* vector constants and multi-lane GEPs become explicit VECTORIZEs */
    const DType *i4 = dt_vec(DT_INT32, 4), *i2 = dt_vec(DT_INT32, 2);
    const Arg *items[4] = {arg_int(c, 1), arg_int(c, 2), arg_int(c, 3), arg_int(c, 4)};
    const UOp *vc = node(OP_VCONST, i4, arg_tuple(c, items, 4), 0);
    const UOp *lanes = node(OP_GEP, i2, arg_tuple(c, items + 1, 2), 1, bin(OP_MUL, vc, ki(i4, 2)));
    const UOp *got = run_stages(sink1(lanes), 19, 19);
    const UOp *vv = node(OP_VECTORIZE, i4, NULL, 4, i32(1), i32(2), i32(3), i32(4));
    const UOp *two = node(OP_VECTORIZE, i4, NULL, 4, i32(2), i32(2), i32(2), i32(2));
    const UOp *prod = bin(OP_MUL, vv, two);
    const Arg *a2 = arg_int(c, 2), *a3 = arg_int(c, 3);
    const UOp *want = node(OP_VECTORIZE, i2, NULL, 2, node(OP_GEP, DT_INT32, arg_tuple(c, &a2, 1), 1, prod),
                           node(OP_GEP, DT_INT32, arg_tuple(c, &a3, 1), 1, prod));
    expect_same(got, sink1(want));

    /* a gated load gets 0 as its alt value; a WHERE on the same gate becomes the alt value */
    const UOp *d1 = glob(1, DT_INT32, 3);
    const UOp *r = rng(i32(6), 0, AXIS_LOOP);
    const UOp *g = bin(OP_CMPLT, r, i32(3));
    const UOp *l = load(gated_index(d1, r, g));
    expect_same(run_stages(sink1(l), 19, 19), sink1(node(OP_LOAD, DT_INT32, NULL, 2, gated_index(d1, r, g), i32(0))));
    expect_same(run_stages(sink1(where(g, l, i32(-7))), 19, 19),
                sink1(node(OP_LOAD, DT_INT32, NULL, 2, gated_index(d1, r, g), i32(-7))));
}

/* ================= stage 20: add control flow ================= */

static void test_control_flow(void **state) {
    (void)state;
    const UOp *d0 = glob(0, DT_INT32, 3), *d1 = glob(1, DT_INT32, 3);
    /* two loops side by side in the SINK: the second waits for the first's END */
    const UOp *ra = rng(i32(3), 0, AXIS_LOOP), *rb = rng(i32(3), 1, AXIS_LOOP);
    const UOp *ea = end1(store(ptr_index(d0, ra), i32(1)), ra), *eb = end1(store(ptr_index(d1, rb), i32(2)), rb);
    const UOp *ss[2] = {ea, eb};
    const UOp *got = run_stages(chk(uop_sink(c, ss, 2)), 20, 20);
    const UOp *rb2 = node(OP_RANGE, DT_INT32, rb->arg, 2, i32(3), ea);
    const UOp *want[2] = {ea, end1(store(ptr_index(d1, rb2), i32(2)), rb2)};
    expect_same(got, chk(uop_sink(c, want, 2)));

    /* nested loops: the inner RANGE waits for the outer one */
    const UOp *ro = rng(i32(3), 0, AXIS_LOOP), *ri = rng(i32(3), 1, AXIS_LOOP);
    const UOp *d2 = glob(0, DT_INT32, 9);
    const UOp *st = store(ptr_index(d2, bin(OP_ADD, bin(OP_MUL, ro, i32(3)), ri)), i32(5));
    const UOp *got2 = run_stages(sink1(end1(end1(st, ri), ro)), 20, 20);
    const UOp *ri2 = node(OP_RANGE, DT_INT32, ri->arg, 2, i32(3), ro);
    const UOp *st2 = store(ptr_index(d2, bin(OP_ADD, bin(OP_MUL, ro, i32(3)), ri2)), i32(5));
    expect_same(got2, sink1(end1(end1(st2, ri2), ro)));
}

static void test_control_flow_range_in_two_loops(void **state) {
    (void)state;
    /* one RANGE ended by two ENDs: the error names the range and both ENDs */
    const UOp *d0 = glob(0, DT_INT32, 3), *d1 = glob(1, DT_INT32, 3);
    const UOp *r = rng(i32(3), 0, AXIS_LOOP);
    const UOp *ea = end1(store(ptr_index(d0, r), i32(1)), r), *eb = end1(store(ptr_index(d1, r), i32(2)), r);
    const UOp *ss[2] = {ea, eb};
    char err[512] = "", want[200];
    StageCtx sc = {.c = c, .err = err, .errlen = sizeof err};
    assert_null(stage_run(&sc, 20, chk(uop_sink(c, ss, 2))));
    snprintf(want, sizeof want, "RANGE %%%u is ended by END %%%u and END %%%u: one loop cannot be in two places", r->id,
             ea->id, eb->id);
    if (!strstr(err, want)) fail_msg("message: %s\nwanted: %s", err, want);
}

/* ================= stage 21: linearize ================= */

static void test_linearize_order(void **state) {
    (void)state;
    const UOp *d0 = glob(0, DT_FLOAT32, 4), *d1 = glob(1, DT_FLOAT32, 4);
    const UOp *r = rng(i32(4), 0, AXIS_LOOP);
    const UOp *li = ptr_index(d1, r), *ld = load(li), *sum = bin(OP_ADD, ld, kf(1.0));
    const UOp *si = ptr_index(d0, r), *st = store(si, sum), *e = end1(st, r), *s = sink1(e);
    const UOp *lin = run_stages(s, 21, 21);
    assert_int_equal(uop_op(lin), OP_LINEAR);
    assert_int_equal(lin->nsrc, 12);
    /* buffers by arg, then constants, then the loop with loads before the math and the store last */
    const UOp *want[12] = {d0, d1, NULL, NULL, r, li, ld, si, sum, st, e, s};
    for (int i = 0; i < 12; i++)
        if (want[i] && lin->src[i] != want[i]) fail_msg("instruction %d is wrong:\n%s", i, listing(lin));
    assert_true((lin->src[2] == i32(4) && lin->src[3] == kf(1.0)) || (lin->src[3] == i32(4) && lin->src[2] == kf(1.0)));
}

/* ================= stage 22: IF/ENDIF ================= */

static void test_cleanup_ifendif(void **state) {
    (void)state;
    const UOp *d0 = glob(0, DT_INT32, 6);
    const UOp *r = rng(i32(6), 0, AXIS_LOOP);
    const UOp *g = bin(OP_CMPLT, r, i32(3));
    const UOp *gi = gated_index(d0, r, g);
    const UOp *st = store(gi, i32(9)), *e = end1(st, r), *s = sink1(e);
    const UOp *prog[] = {d0, i32(6), i32(3), i32(9), r, g, gi, st, e, s};
    const UOp *lin = chk(uop_new(c, OP_LINEAR, DT_VOID, prog, 10, NULL));
    const UOp *got = run_stages(lin, 22, 22);
    const UOp *mif = node(OP_IF, DT_VOID, NULL, 2, g, gi), *eif = node(OP_ENDIF, DT_VOID, NULL, 1, mif);
    const UOp *want[] = {d0, i32(6), i32(3), i32(9), r, g, gi, mif, st, eif, e, s};
    expect_same(got, chk(uop_new(c, OP_LINEAR, DT_VOID, want, 12, NULL)));

    /* an IF already in the program is an error that names it */
    const UOp *bad[] = {d0, i32(6), i32(3), i32(9), r, g, gi, mif, st, e, s};
    char err[512] = "";
    StageCtx sc = {.c = c, .err = err, .errlen = sizeof err};
    assert_null(stage_run(&sc, 22, chk(uop_new(c, OP_LINEAR, DT_VOID, bad, 11, NULL))));
    char id[32];
    snprintf(id, sizeof id, "IF %%%u", mif->id);
    if (!strstr(err, id)) fail_msg("message does not name the IF: %s", err);
}

/* ================= whole kernels: stages 11-22, compiled and run ================= */

static void test_sum_1_to_100(void **state) {
    (void)state;
    const UOp *lin = run_stages(sum_kernel(), 11, 22);
    Kernel *k = compile_linear(lin, "r_100");
    float *out = buffer_alloc(DT_FLOAT32, 1), *in = buffer_alloc(DT_FLOAT32, 100);
    for (int i = 0; i < 100; i++) in[i] = (float)(i + 1);
    void *bufs[2] = {out, in};
    run_kernel(k, bufs);
    assert_true(out[0] == 5050.0f);
    buffer_free(out), buffer_free(in);
    kernel_free(k);
}

static void test_padded_read(void **state) {
    (void)state;
    /* out[r] = r < 3 ? in[r] : 0 for r < 6, written as tinygrad's Invalid-gated index */
    const UOp *d0 = glob(0, DT_INT32, 6), *d1 = glob(1, DT_INT32, 3);
    const UOp *r = rng(idx(6), 0, AXIS_LOOP);
    const UOp *v = val_index(d1, where(bin(OP_CMPLT, r, idx(3)), r, invalid()));
    const UOp *lin = run_stages(sink1(end1(store(ptr_index(d0, r), bin(OP_ADD, v, ki(DT_INT32, 100))), r)), 11, 22);
    Kernel *k = compile_linear(lin, "E_pad");
    int32_t *out = buffer_alloc(DT_INT32, 6), *in = buffer_alloc(DT_INT32, 3);
    in[0] = 7, in[1] = 8, in[2] = 9;
    void *bufs[2] = {out, in};
    run_kernel(k, bufs);
    const int32_t want[6] = {107, 108, 109, 100, 100, 100};
    assert_memory_equal(out, want, sizeof want);
    buffer_free(out), buffer_free(in);
    kernel_free(k);
}

static void test_elementwise(void **state) {
    (void)state;
    const UOp *d0 = glob(0, DT_FLOAT32, 16), *d1 = glob(1, DT_FLOAT32, 16), *d2 = glob(2, DT_FLOAT32, 16);
    const UOp *r = rng(idx(16), 0, AXIS_LOOP);
    const UOp *v = bin(OP_MUL, bin(OP_ADD, val_index(d1, r), val_index(d2, r)), kf(0.5));
    const UOp *lin = run_stages(sink1(end1(store(ptr_index(d0, r), v), r)), 1, 22);
    Kernel *k = compile_linear(lin, "E_16");
    float *o = buffer_alloc(DT_FLOAT32, 16), *a = buffer_alloc(DT_FLOAT32, 16), *b = buffer_alloc(DT_FLOAT32, 16);
    for (int i = 0; i < 16; i++) a[i] = (float)i, b[i] = (float)(3 * i + 1);
    void *bufs[3] = {o, a, b};
    run_kernel(k, bufs);
    for (int i = 0; i < 16; i++)
        if (o[i] != (a[i] + b[i]) * 0.5f) fail_msg("o[%d] = %g", i, o[i]);
    buffer_free(o), buffer_free(a), buffer_free(b);
    kernel_free(k);
}

static void test_sum_of_range(void **state) {
    (void)state;
    /* out[0] = sum over r < 100 of float(r + 1): an index cast to float after lowering */
    const UOp *d0 = glob(0, DT_FLOAT32, 1);
    const UOp *r = rng(idx(100), 0, AXIS_REDUCE);
    const UOp *v = cast(bin(OP_ADD, r, idx(1)), DT_FLOAT32);
    const UOp *lin = run_stages(sink1(store(ptr_index(d0, idx(0)), reduce(OP_ADD, v, r))), 11, 22);
    assert_int_equal(count_dtype(lin, SK_INDEX), 0);
    Kernel *k = compile_linear(lin, "r_100_range");
    float *out = buffer_alloc(DT_FLOAT32, 1);
    void *bufs[1] = {out};
    run_kernel(k, bufs);
    assert_true(out[0] == 5050.0f);
    buffer_free(out);
    kernel_free(k);
}

static void test_sibling_loops_and_variable(void **state) {
    (void)state;
    /* out0[r] = 3*r for r < n; then out1[s] = out0[s] + 1 for s < 4, in a second loop */
    const UOp *d0 = glob(0, DT_INT32, 8), *d1 = glob(1, DT_INT32, 4);
    const UOp *n = chk(uop_var(c, "n", 1, 8));
    const UOp *r = rng(n, 0, AXIS_LOOP), *s2 = rng(idx(4), 1, AXIS_LOOP);
    const UOp *e0 = end1(store(ptr_index(d0, r), cast(bin(OP_MUL, r, idx(3)), DT_INT32)), r);
    const UOp *rd = val_index(node(OP_AFTER, d0->dtype, NULL, 2, d0, e0), s2);
    const UOp *e1 = end1(store(ptr_index(d1, s2), bin(OP_ADD, rd, i32(1))), s2);
    const UOp *lin = run_stages(sink1(e1), 11, 22);
    Kernel *k = compile_linear(lin, "E_two_loops");
    assert_int_equal(kernel_num_vars(k), 1);
    int32_t *o0 = buffer_alloc(DT_INT32, 8), *o1 = buffer_alloc(DT_INT32, 4);
    void *bufs[2] = {o0, o1};
    int32_t vars[1] = {5};
    char err[256];
    if (!kernel_run(k, bufs, vars, err, sizeof err)) fail_msg("run: %s", err);
    const int32_t w0[8] = {0, 3, 6, 9, 12, 0, 0, 0}, w1[4] = {1, 4, 7, 10};
    assert_memory_equal(o0, w0, sizeof w0);
    assert_memory_equal(o1, w1, sizeof w1);
    buffer_free(o0), buffer_free(o1);
    kernel_free(k);
}

/* the golden 3x3 matmul AST through all 22 stages, with and without opts */
static void matmul_with(const KernelOpt *opts, int nopts, const char *name) {
    char err[512];
    const UOp *ast = read_golden_ast(c, GOLDEN_MATMUL_AST, err, sizeof err);
    if (!ast) fail_msg("import: %s", err);
    const UOp *lin = stages_run_all(c, ast, opts, nopts, err, sizeof err);
    if (!lin) fail_msg("%s: %s", name, err);
    Kernel *k = compile_linear(lin, name);
    float *C = buffer_alloc(DT_FLOAT32, 9), *A = buffer_alloc(DT_FLOAT32, 9), *B = buffer_alloc(DT_FLOAT32, 9);
    for (int i = 0; i < 9; i++) A[i] = (float)(i + 1), B[i] = (float)(i + 10);
    void *bufs[3] = {C, A, B};
    run_kernel(k, bufs);
    const float want[9] = {84, 90, 96, 201, 216, 231, 318, 342, 366};
    for (int i = 0; i < 9; i++)
        if (C[i] != want[i]) fail_msg("%s: C[%d] = %g, expected %g", name, i, C[i], want[i]);
    buffer_free(A), buffer_free(B), buffer_free(C);
    kernel_free(k);
}

static void test_matmul_golden(void **state) {
    (void)state;
    matmul_with(NULL, 0, "r_3_3_3");
}
static void test_matmul_golden_upcast(void **state) {
    (void)state;
    const KernelOpt o = {OPT_UPCAST, 1, 3};
    matmul_with(&o, 1, "r_3_3_3_upcast");
}
static void test_matmul_golden_unroll(void **state) {
    (void)state;
    const KernelOpt o = {OPT_UNROLL, 0, 3};
    matmul_with(&o, 1, "r_3_3_3_unroll");
}

static int teardown_all(void **state) {
    (void)state;
    ruleset_registry_free();
    return 0;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_remove_reduce_accumulator, setup, teardown),
        cmocka_unit_test_setup_teardown(test_remove_reduce_identities, setup, teardown),
        cmocka_unit_test_setup_teardown(test_remove_reduce_horizontal, setup, teardown),
        cmocka_unit_test_setup_teardown(test_remove_reduce_init_survives_folded_body, setup, teardown),
        cmocka_unit_test_setup_teardown(test_add_loads, setup, teardown),
        cmocka_unit_test_setup_teardown(test_index_dtype_int32, setup, teardown),
        cmocka_unit_test_setup_teardown(test_index_dtype_int64, setup, teardown),
        cmocka_unit_test_setup_teardown(test_index_dtype_invalid_gate, setup, teardown),
        cmocka_unit_test_setup_teardown(test_post_index_symbolic_after, setup, teardown),
        cmocka_unit_test_setup_teardown(test_decompositions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_final_rewrite, setup, teardown),
        cmocka_unit_test_setup_teardown(test_control_flow, setup, teardown),
        cmocka_unit_test_setup_teardown(test_control_flow_range_in_two_loops, setup, teardown),
        cmocka_unit_test_setup_teardown(test_linearize_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cleanup_ifendif, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sum_1_to_100, setup, teardown),
        cmocka_unit_test_setup_teardown(test_padded_read, setup, teardown),
        cmocka_unit_test_setup_teardown(test_elementwise, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sum_of_range, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sibling_loops_and_variable, setup, teardown),
        cmocka_unit_test_setup_teardown(test_matmul_golden, setup, teardown),
        cmocka_unit_test_setup_teardown(test_matmul_golden_upcast, setup, teardown),
        cmocka_unit_test_setup_teardown(test_matmul_golden_unroll, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, teardown_all);
}
