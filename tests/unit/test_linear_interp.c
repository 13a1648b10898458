/* test_linear_interp.c - the linear-program interpreter: tinygrad v0.12.0's
 * 3x3 matmul through the real pipeline at every point from 11 to 22 (points
 * before 21 linearized by stages 20 and 21), with no opts, UPCAST, UNROLL,
 * both and THREAD, exact; scheduled programs with padding (gated loads and
 * stores) and a MAX reduction compared with the kernel-AST interpreter at
 * point 0; hand-written programs for IF/ENDIF, load alt values, vector
 * loads through a cast pointer, GEP, VECTORIZE, BITCAST, accumulators, an
 * empty loop and a two-range END; the direct paths of float32, float64 and
 * 64-bit integer arithmetic bit for bit as the general scalar semantics;
 * out-of-range accesses named with the
 * INDEX, the buffer and the loop variables; the instruction budget and the
 * interrupt; the speed on a 128x128x128 matmul; and GPU programs: work
 * items of a workgroup that exchange values through local memory across a
 * BARRIER, and a barrier some work items never reach. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "core/rewrite/registry.h"
#include "core/debug/pipeline.h"
#include "core/sched/schedule.h"
#include "core/stages/linearize_point.h"
#include "core/backend/ast_interp.h"
#include "core/backend/linear_interp.h"
#include "direct_path_cases.h"
#include "core/util/interrupt.h"
#include "viz/listing.h"
#include "viz/tinygrad_repr.h"

static UCtx *c;
static const UOp *dev, *golden;

#include "test_files.h"
#include "tensor_graph.h"

static int setup(void **state) {
    (void)state;
    c = uctx_new();
    dev = uop_new(c, OP_DEVICE, DT_VOID, NULL, 0, arg_str(c, "CPU"));
    char err[256];
    golden = read_golden_ast(c, GOLDEN_MATMUL_AST, err, sizeof err);
    return golden ? 0 : -1;
}

static int teardown(void **state) {
    (void)state;
    uctx_free(c);
    ruleset_registry_free();
    return 0;
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* point n of kp as a linear program: the LINEAR itself at 21 and 22, else
 * the point's root linearized (its ENDs split, stages 20 and 21) */
static const UOp *linear_at(KernelPipeline *kp, int n) {
    char err[1024];
    const UOp *root = pipeline_root(kp, n, err, sizeof err);
    if (!root) fail_msg("point %d: %s", n, err);
    if (uop_op(root) == OP_LINEAR) return root;
    StageCtx sc = {.c = pipeline_ctx(kp), .err = err, .errlen = sizeof err};
    const UOp *lin = stages_linearize_point(&sc, root);
    if (!lin) fail_msg("point %d: %s", n, err);
    return lin;
}

static void run_ok(const UOp *lin, void **bufs, const int64_t *sizes, int n, const char *what) {
    char err[1024];
    if (!linear_interp_run(lin, bufs, sizes, n, err, sizeof err)) fail_msg("%s: %s", what, err);
}

/* ---- the 3x3 matmul at every point, with opts ---- */

static void matmul_points(const KernelOpt *opts, int nopts, const char *label) {
    KernelPipeline *kp = pipeline_new(c, "r_3_3_3", golden);
    pipeline_set_opts(kp, opts, nopts);
    float a[9], b[9];
    for (int i = 0; i < 9; i++) a[i] = (float)(i + 1), b[i] = (float)(i + 10);
    const float want[9] = {84, 90, 96, 201, 216, 231, 318, 342, 366};
    for (int n = 11; n <= STAGE_COUNT; n++) {
        float out[9];
        for (int i = 0; i < 9; i++) out[i] = -1;
        void *bufs[3] = {out, a, b};
        int64_t sizes[3] = {9, 9, 9};
        char what[64];
        snprintf(what, sizeof what, "%s at point %d", label, n);
        run_ok(linear_at(kp, n), bufs, sizes, 3, what);
        for (int i = 0; i < 9; i++)
            if (out[i] != want[i]) fail_msg("%s: out[%d] = %g, want %g", what, i, out[i], want[i]);
    }
    pipeline_free(kp);
}

static void test_matmul_every_point(void **state) {
    (void)state;
    matmul_points(NULL, 0, "no opts");
    KernelOpt up = {OPT_UPCAST, 1, 3}, un = {OPT_UNROLL, 0, 3}, th = {OPT_THREAD, 0, 3};
    matmul_points(&up, 1, "UPCAST 1 3");
    matmul_points(&un, 1, "UNROLL 0 3");
    KernelOpt both[2] = {up, un};
    matmul_points(both, 2, "UPCAST + UNROLL");
    matmul_points(&th, 1, "THREAD 0 3");
    /* after THREAD takes axis 0, the other output range is axis 0 */
    KernelOpt all[3] = {th, {OPT_UPCAST, 0, 3}, un};
    matmul_points(all, 3, "THREAD + UPCAST + UNROLL");
}

/* the THREAD split has a SPECIAL: every core_id runs */
static void test_thread_split_runs_every_core(void **state) {
    (void)state;
    KernelPipeline *kp = pipeline_new(c, "r_3_3_3", golden);
    KernelOpt th = {OPT_THREAD, 0, 3};
    pipeline_set_opts(kp, &th, 1);
    const UOp *lin = linear_at(kp, 22);
    bool special = false;
    for (int i = 0; i < lin->nsrc; i++) special |= uop_op(lin->src[i]) == OP_SPECIAL;
    assert_true(special);
    pipeline_free(kp);
}

/* ---- scheduled programs: point 0 in the kernel-AST interpreter is the reference ---- */

#define RESHAPE(x, ...) mop(OP_RESHAPE, x, (int64_t[]){__VA_ARGS__}, (int)(sizeof((int64_t[]){__VA_ARGS__}) / 8))
#define EXPAND(x, ...) mop(OP_EXPAND, x, (int64_t[]){__VA_ARGS__}, (int)(sizeof((int64_t[]){__VA_ARGS__}) / 8))

typedef struct Input {
    const UOp *buf;
    const float *data;
} Input;

/* schedules out (one kernel), binds its buffers, runs point 0 in ast_interp
 * and every point 11..22 in the linear interpreter: the same output, exactly */
static void kernel_points_match(const UOp *out, const Input *ins, int nins, const KernelOpt *opts, int nopts,
                                const char *label) {
    char err[1024];
    const UOp *sink = uop_sink(c, &out, 1);
    Schedule *s = schedule_build(c, sink, err, sizeof err);
    if (!s) fail_msg("%s: %s", label, err);
    assert_int_equal(s->nkernels, 1);
    const SchedKernel *k = &s->kernels[0];
    void *bufs[8] = {0};
    int64_t sizes[8];
    assert_true(k->nbufs <= 8);
    for (int g = 0; g < k->nbufs; g++) {
        const SchedBuffer *b = &s->bufs[k->bufs[g]];
        assert_ptr_equal(b->dtype, DT_FLOAT32);
        sizes[g] = b->size;
        bufs[g] = calloc((size_t)b->size, sizeof(float));
        for (int i = 0; i < nins; i++)
            if (b->kind == SBUF_INPUT && b->source == ins[i].buf) memcpy(bufs[g], ins[i].data, (size_t)b->size * sizeof(float));
    }
    size_t nout = (size_t)sizes[0];
    float *want = calloc(nout, sizeof *want);
    if (!ast_interp_run(k->ast, bufs, sizes, k->nbufs, err, sizeof err)) fail_msg("%s: ast_interp: %s", label, err);
    memcpy(want, bufs[0], nout * sizeof *want);
    KernelPipeline *kp = pipeline_new(c, k->name, k->ast);
    pipeline_set_opts(kp, opts, nopts);
    for (int n = 11; n <= STAGE_COUNT; n++) {
        for (size_t i = 0; i < nout; i++) ((float *)bufs[0])[i] = -12345;
        char what[96];
        snprintf(what, sizeof what, "%s (%s) at point %d", label, k->name, n);
        run_ok(linear_at(kp, n), bufs, sizes, k->nbufs, what);
        if (memcmp(want, bufs[0], nout * sizeof *want)) {
            for (size_t i = 0; i < nout; i++)
                if (memcmp(&want[i], &((float *)bufs[0])[i], sizeof *want))
                    fail_msg("%s: out[%zu] = %g, want %g", what, i, ((float *)bufs[0])[i], want[i]);
        }
    }
    pipeline_free(kp);
    free(want);
    for (int g = 0; g < k->nbufs; g++) free(bufs[g]);
    schedule_free(s);
}

static const float X12[12] = {0.5f, -1.25f, 3, 2, -0.75f, 1.5f, 4, -2, 0.25f, 1, -3.5f, 2.5f};

static void test_padding_gates_loads_and_stores(void **state) {
    (void)state;
    const UOp *x = buffer(100, 12, DT_FLOAT32);
    Input in = {x, X12};
    /* a pad inside a pad: loads gated by both */
    const UOp *pp = mop2(OP_PAD, mop2(OP_PAD, x, (int64_t[]){2}, (int64_t[]){1}, 1), (int64_t[]){1}, (int64_t[]){3}, 1);
    kernel_points_match(pp, &in, 1, NULL, 0, "pad of a pad");
    /* a 2-d pad, reshaped and added to its transpose */
    const UOp *p2 = mop2(OP_PAD, RESHAPE(x, 3, 4), (int64_t[]){1, 0}, (int64_t[]){0, 2}, 2);   /* (4, 6) */
    const UOp *sum = uop_binary(c, OP_ADD, RESHAPE(p2, 24), RESHAPE(with_arg_ints(OP_PERMUTE, p2, (int64_t[]){1, 0}, 2), 24));
    kernel_points_match(sum, &in, 1, NULL, 0, "padded plus transposed");
    KernelOpt up = {OPT_UPCAST, 0, 4};
    kernel_points_match(RESHAPE(p2, 4, 6), &in, 1, &up, 1, "padded, UPCAST");
}

static void test_max_reduction(void **state) {
    (void)state;
    const UOp *x = buffer(101, 12, DT_FLOAT32);
    Input in = {x, X12};
    /* max-pooling pairs of a padded vector, and the max of each row */
    const UOp *pooled = reduce(OP_MAX, RESHAPE(mop2(OP_PAD, x, (int64_t[]){1}, (int64_t[]){1}, 1), 7, 2), (int64_t[]){1}, 1);
    kernel_points_match(RESHAPE(pooled, 7), &in, 1, NULL, 0, "max pool");
    const UOp *rows = reduce(OP_MAX, RESHAPE(x, 3, 4), (int64_t[]){1}, 1);
    kernel_points_match(rows, &in, 1, NULL, 0, "row max");
    KernelOpt un = {OPT_UNROLL, 0, 2}, up = {OPT_UPCAST, 0, 3};
    kernel_points_match(rows, &in, 1, &un, 1, "row max, UNROLL");
    kernel_points_match(rows, &in, 1, &up, 1, "row max, UPCAST");
}

/* ---- hand-written programs ---- */

typedef struct Prog {
    const UOp *lst[256];
    int n;
} Prog;

static const UOp *P(Prog *p, const UOp *u) {
    if (!u) fail_msg("node construction failed: %s", uctx_error(c));
    for (int i = 0; i < p->n; i++)
        if (p->lst[i] == u) return u;
    assert_true(p->n < 256);
    p->lst[p->n++] = u;
    return u;
}
static const UOp *N(Prog *p, Op op, const DType *dt, const UOp *const *src, int nsrc, const Arg *arg) {
    return P(p, uop_new(c, op, dt, src, nsrc, arg));
}
static const UOp *glob(Prog *p, int i, const DType *dt, int64_t size) {
    return N(p, OP_DEFINE_GLOBAL, dt_ptr(dt, size, ADDR_GLOBAL), NULL, 0, arg_int(c, i));
}
static const UOp *ci(Prog *p, int64_t v) { return P(p, uop_const_int(c, DT_INT32, v)); }
static const UOp *cf(Prog *p, double v) { return P(p, uop_const_float(c, DT_FLOAT32, v)); }
static const UOp *rng(Prog *p, int64_t end, int axis) { return P(p, uop_range(c, ci(p, end), axis, AXIS_LOOP)); }
static const UOp *bin(Prog *p, Op op, const UOp *a, const UOp *b) { return P(p, uop_binary(c, op, a, b)); }
static const UOp *ix(Prog *p, const UOp *buf, const UOp *i) {
    const UOp *s[2] = {buf, i};
    return N(p, OP_INDEX, buf->dtype, s, 2, NULL);
}
static const UOp *ixg(Prog *p, const UOp *buf, const UOp *i, const UOp *gate) {
    const UOp *s[3] = {buf, i, gate};
    return N(p, OP_INDEX, buf->dtype, s, 3, NULL);
}
static const UOp *ld(Prog *p, const UOp *addr, const DType *dt) { return N(p, OP_LOAD, dt, &addr, 1, NULL); }
static const UOp *st(Prog *p, const UOp *addr, const UOp *v) {
    const UOp *s[2] = {addr, v};
    return N(p, OP_STORE, DT_VOID, s, 2, NULL);
}
static const UOp *endr(Prog *p, const UOp *v, const UOp *r) {
    const UOp *s[2] = {v, r};
    return N(p, OP_END, DT_VOID, s, 2, NULL);
}
static const UOp *linear(Prog *p) {
    const UOp *l = uop_new(c, OP_LINEAR, DT_VOID, p->lst, p->n, NULL);
    if (!l) fail_msg("LINEAR: %s", uctx_error(c));
    return l;
}

static void test_out_of_range_names_index_and_loops(void **state) {
    (void)state;
    /* out[r0*4 + r1] = in[r0*3 + r1] for r0 < 3, r1 < 4: reads in[9] at r0=2, r1=3 */
    Prog p = {0};
    const UOp *d0 = glob(&p, 0, DT_FLOAT32, 12), *d1 = glob(&p, 1, DT_FLOAT32, 9);
    const UOp *r0 = rng(&p, 3, 0), *r1 = rng(&p, 4, 1);
    const UOp *bad = ix(&p, d1, bin(&p, OP_ADD, bin(&p, OP_MUL, r0, ci(&p, 3)), r1));
    const UOp *v = ld(&p, bad, DT_FLOAT32);
    const UOp *s = st(&p, ix(&p, d0, bin(&p, OP_ADD, bin(&p, OP_MUL, r0, ci(&p, 4)), r1)), v);
    const UOp *e = endr(&p, endr(&p, s, r1), r0);
    P(&p, uop_sink(c, &e, 1));
    float out[12], in[9] = {0};
    void *bufs[2] = {out, in};
    int64_t sizes[2] = {12, 9};
    char err[512], want[256];
    AccessFault f;
    assert_false(linear_interp_run_fault(linear(&p), bufs, sizes, 2, &f, err, sizeof err));
    /* the words a compiled kernel with bounds checks uses (access_fault.h) */
    snprintf(want, sizeof want, "INDEX %%%u reads buffer 1 at 9, past its 9 elements (r0=2, r1=3)", bad->id);
    assert_string_equal(err, want);
    assert_true(f.failed && !f.store && f.index_id == bad->id && f.buffer_op == OP_DEFINE_GLOBAL && f.buffer == 1);
    assert_true(f.index == 9 && f.size == 9 && f.width == 1 && f.nranges == 2);
    assert_true(f.range_id[0] == r0->id && f.range_value[0] == 2 && f.range_id[1] == r1->id && f.range_value[1] == 3);
    /* a store below the start: out[r1 - 2] */
    Prog q = {0};
    d0 = glob(&q, 0, DT_FLOAT32, 12);
    r1 = rng(&q, 4, 1);
    const UOp *neg = ix(&q, d0, bin(&q, OP_ADD, r1, ci(&q, -2)));
    e = endr(&q, st(&q, neg, cf(&q, 1)), r1);
    P(&q, uop_sink(c, &e, 1));
    assert_false(linear_interp_run_fault(linear(&q), bufs, sizes, 1, &f, err, sizeof err));
    snprintf(want, sizeof want, "INDEX %%%u writes buffer 0 at -2, before the start of its 12 elements (r1=0)", neg->id);
    assert_string_equal(err, want);
    assert_true(f.failed && f.store);
    /* a vector load through a cast pointer past the end: 4 elements at 8 */
    Prog w = {0};
    d0 = glob(&w, 0, DT_FLOAT32, 12);
    d1 = glob(&w, 1, DT_FLOAT32, 9);
    const UOp *at8 = ix(&w, d1, ci(&w, 8));
    const UOp *vp = P(&w, uop_cast(c, at8, dt_ptr(dt_vec(DT_FLOAT32, 4), 9, ADDR_GLOBAL)));
    const UOp *v4 = ld(&w, vp, dt_vec(DT_FLOAT32, 4));
    const UOp *g0 = N(&w, OP_GEP, DT_FLOAT32, &v4, 1, arg_tuple(c, (const Arg *[]){arg_int(c, 0)}, 1));
    const UOp *s0 = st(&w, ix(&w, d0, ci(&w, 0)), g0);
    P(&w, uop_sink(c, &s0, 1));
    assert_false(linear_interp_run(linear(&w), bufs, sizes, 2, err, sizeof err));
    snprintf(want, sizeof want, "INDEX %%%u reads 4 elements of buffer 1 at 8, past its 9 elements", at8->id);
    assert_string_equal(err, want);
}

/* out[i] = in[i-1] where 1 <= i < 4 (alt 5 elsewhere), stored under IF(i < 5);
 * then the max of in[0..8] through vector loads into a register, its bits */
static void test_gates_vectors_and_registers(void **state) {
    (void)state;
    Prog p = {0};
    const UOp *d0 = glob(&p, 0, DT_FLOAT32, 6), *d1 = glob(&p, 1, DT_FLOAT32, 8), *d2 = glob(&p, 2, DT_INT32, 2);
    const UOp *i = rng(&p, 6, 0);
    const UOp *ok = bin(&p, OP_AND, bin(&p, OP_CMPLT, ci(&p, 0), i), bin(&p, OP_CMPLT, i, ci(&p, 4)));
    const UOp *src = ixg(&p, d1, bin(&p, OP_ADD, i, ci(&p, -1)), ok);
    const UOp *ls[2] = {src, cf(&p, 5)};
    const UOp *v = N(&p, OP_LOAD, DT_FLOAT32, ls, 2, NULL);
    const UOp *g = bin(&p, OP_CMPLT, i, ci(&p, 5));
    const UOp *dst = ixg(&p, d0, i, g);
    const UOp *ifs[2] = {g, dst};
    const UOp *mif = N(&p, OP_IF, DT_VOID, ifs, 2, NULL);
    const UOp *s = st(&p, dst, v);
    N(&p, OP_ENDIF, DT_VOID, &mif, 1, NULL);
    const UOp *e0 = endr(&p, s, i);
    /* acc = -inf; for j < 2: acc = max(acc, max of in[4j..4j+3]) */
    const UOp *reg = N(&p, OP_DEFINE_REG, dt_ptr(DT_FLOAT32, 1, ADDR_REG), NULL, 0, arg_int(c, 0));
    const UOp *r0 = ix(&p, reg, ci(&p, 0));
    const UOp *init = st(&p, r0, cf(&p, -INFINITY));
    const UOp *j = rng(&p, 2, 1);
    const UOp *as[3] = {reg, init, j};
    const UOp *racc = ix(&p, N(&p, OP_AFTER, reg->dtype, as, 3, NULL), ci(&p, 0));
    const UOp *acc = ld(&p, racc, DT_FLOAT32);
    const UOp *vp = P(&p, uop_cast(c, ix(&p, d1, bin(&p, OP_MUL, j, ci(&p, 4))), dt_ptr(dt_vec(DT_FLOAT32, 4), 8, ADDR_GLOBAL)));
    const UOp *v4 = ld(&p, vp, dt_vec(DT_FLOAT32, 4));
    const UOp *gp[4];
    for (int k = 0; k < 4; k++) gp[k] = N(&p, OP_GEP, DT_FLOAT32, &v4, 1, arg_tuple(c, (const Arg *[]){arg_int(c, 3 - k)}, 1));
    /* reversed into a vector and back, pairwise max of the halves */
    const UOp *rv = N(&p, OP_VECTORIZE, dt_vec(DT_FLOAT32, 4), gp, 4, NULL);
    const UOp *lo = N(&p, OP_GEP, dt_vec(DT_FLOAT32, 2), &rv, 1, arg_tuple(c, (const Arg *[]){arg_int(c, 0), arg_int(c, 1)}, 2));
    const UOp *hi = N(&p, OP_GEP, dt_vec(DT_FLOAT32, 2), &rv, 1, arg_tuple(c, (const Arg *[]){arg_int(c, 2), arg_int(c, 3)}, 2));
    const UOp *m2 = bin(&p, OP_MAX, lo, hi);
    const UOp *m2a = N(&p, OP_GEP, DT_FLOAT32, &m2, 1, arg_tuple(c, (const Arg *[]){arg_int(c, 0)}, 1));
    const UOp *m2b = N(&p, OP_GEP, DT_FLOAT32, &m2, 1, arg_tuple(c, (const Arg *[]){arg_int(c, 1)}, 1));
    const UOp *upd = st(&p, racc, bin(&p, OP_MAX, acc, bin(&p, OP_MAX, m2a, m2b)));
    const UOp *e1 = endr(&p, upd, j);
    const UOp *fs[3] = {reg, e1, init};
    const UOp *res = ld(&p, ix(&p, N(&p, OP_AFTER, reg->dtype, fs, 3, NULL), ci(&p, 0)), DT_FLOAT32);
    const UOp *s1 = st(&p, ix(&p, d2, ci(&p, 0)), N(&p, OP_BITCAST, DT_INT32, &res, 1, NULL));
    /* an empty loop: its body never runs; then a MULACC and a WHERE */
    const UOp *z = rng(&p, 0, 2);
    const UOp *e2 = endr(&p, st(&p, ix(&p, d2, z), ci(&p, 99)), z);
    const UOp *ma[3] = {ci(&p, 6), ci(&p, 7), ci(&p, -2)};
    const UOp *mac = N(&p, OP_MULACC, DT_INT32, ma, 3, NULL);
    const UOp *s2 = st(&p, ix(&p, d2, ci(&p, 1)), P(&p, uop_where(c, bin(&p, OP_CMPLT, mac, ci(&p, 100)), mac, ci(&p, 0))));
    const UOp *all[5] = {e0, s1, e2, s2};
    P(&p, uop_sink(c, all, 4));
    float out[6] = {-1, -1, -1, -1, -1, -1}, in[8] = {7, 8, 9, -3, 2.5f, 11, -20, 0};
    int32_t ints[2] = {0, 0};
    void *bufs[3] = {out, in, ints};
    int64_t sizes[3] = {6, 8, 2};
    run_ok(linear(&p), bufs, sizes, 3, "gates, vectors, registers");
    const float want[6] = {5, 7, 8, 9, 5, -1};
    for (int k = 0; k < 6; k++)
        if (out[k] != want[k]) fail_msg("out[%d] = %g, want %g", k, out[k], want[k]);
    float eleven = 11;
    int32_t bits;
    memcpy(&bits, &eleven, 4);
    assert_int_equal(ints[0], bits);
    assert_int_equal(ints[1], 40);
}

/* END of two ranges (before stage 19 splits them), innermost first */
static void test_two_range_end(void **state) {
    (void)state;
    Prog p = {0};
    const UOp *d0 = glob(&p, 0, DT_INT32, 12);
    const UOp *r0 = rng(&p, 3, 0), *r1 = rng(&p, 4, 1);
    const UOp *k = bin(&p, OP_ADD, bin(&p, OP_MUL, r0, ci(&p, 4)), r1);
    const UOp *s = st(&p, ix(&p, d0, k), bin(&p, OP_ADD, bin(&p, OP_MUL, r0, ci(&p, 10)), r1));
    const UOp *es[3] = {s, r0, r1};
    const UOp *e = N(&p, OP_END, DT_VOID, es, 3, NULL);
    P(&p, uop_sink(c, &e, 1));
    int32_t out[12] = {0};
    void *bufs[1] = {out};
    int64_t sizes[1] = {12};
    run_ok(linear(&p), bufs, sizes, 1, "two-range END");
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 4; b++) assert_int_equal(out[a * 4 + b], a * 10 + b);
}

/* out[i] = (a[i] op b[i]) op a[i] as a linear program */
static void direct_path_run(const DType *dt, Op op, const void *a, const void *b, int n, void *res) {
    Prog p = {0};
    const UOp *d0 = glob(&p, 0, dt, n), *d1 = glob(&p, 1, dt, n), *d2 = glob(&p, 2, dt, n);
    const UOp *r = rng(&p, n, 0);
    const UOp *x = ld(&p, ix(&p, d1, r), dt), *y = ld(&p, ix(&p, d2, r), dt);
    const UOp *e = endr(&p, st(&p, ix(&p, d0, r), bin(&p, op, bin(&p, op, x, y), x)), r);
    P(&p, uop_sink(c, &e, 1));
    void *bufs[3] = {res, (void *)a, (void *)b};
    int64_t sizes[3] = {n, n, n};
    run_ok(linear(&p), bufs, sizes, 3, "direct path");
}

static void test_direct_paths(void **state) {
    (void)state;
    direct_path_cases(direct_path_run);
}

static void test_errors_name_the_node(void **state) {
    (void)state;
    char err[512], want[256];
    int64_t sizes[2] = {4, 4};
    float a[4], b[4];
    void *bufs[2] = {a, b};
    /* a buffer that is not given */
    Prog p = {0};
    const UOp *d3 = glob(&p, 3, DT_FLOAT32, 4);
    const UOp *s = st(&p, ix(&p, d3, ci(&p, 0)), cf(&p, 1));
    P(&p, uop_sink(c, &s, 1));
    assert_false(linear_interp_run(linear(&p), bufs, sizes, 2, err, sizeof err));
    snprintf(want, sizeof want, "interp: DEFINE_GLOBAL %%%u: buffer 3 is not given (2 buffers)", d3->id);
    assert_string_equal(err, want);
    /* a source that comes later */
    Prog q = {0};
    const UOp *d0 = uop_new(c, OP_DEFINE_GLOBAL, dt_ptr(DT_FLOAT32, 4, ADDR_GLOBAL), NULL, 0, arg_int(c, 0));
    const UOp *x = ix(&q, d0, ci(&q, 0));
    P(&q, d0);
    AccessFault f;
    assert_false(linear_interp_run_fault(linear(&q), bufs, sizes, 2, &f, err, sizeof err));
    snprintf(want, sizeof want, "interp: INDEX %%%u: source 0 is DEFINE_GLOBAL %%%u, which does not come before it", x->id, d0->id);
    assert_true(strncmp(err, want, strlen(want)) == 0);
    assert_false(f.failed); /* an error, not an access outside a buffer */
    /* variables */
    Prog v = {0};
    const UOp *var = P(&v, uop_var(c, "n", 0, 10));
    assert_false(linear_interp_run(linear(&v), bufs, sizes, 2, err, sizeof err));
    snprintf(want, sizeof want, "interp: DEFINE_VAR %%%u: variables (DEFINE_VAR) are not supported by the interpreter", var->id);
    assert_string_equal(err, want);
    /* integer division by zero, with the loop variable */
    Prog z = {0};
    const UOp *g = glob(&z, 0, DT_INT32, 4);
    const UOp *r = rng(&z, 4, 0);
    const UOp *dz = bin(&z, OP_IDIV, ci(&z, 12), bin(&z, OP_ADD, r, ci(&z, -2)));
    const UOp *e = endr(&z, st(&z, ix(&z, g, r), dz), r);
    P(&z, uop_sink(c, &e, 1));
    int32_t o[4];
    void *ob[1] = {o};
    assert_false(linear_interp_run(linear(&z), ob, sizes, 1, err, sizeof err));
    snprintf(want, sizeof want, "interp: IDIV %%%u: integer division by zero (r0=2)", dz->id);
    assert_string_equal(err, want);
    /* not a LINEAR */
    assert_false(linear_interp_run(golden, bufs, sizes, 2, err, sizeof err));
    assert_non_null(strstr(err, "not a LINEAR program"));
}

/* a loop of 2^40 iterations */
static const UOp *endless(void) {
    Prog p = {0};
    const UOp *g = glob(&p, 0, DT_INT64, 1);
    const UOp *r = P(&p, uop_range(c, P(&p, uop_const_int(c, DT_INT64, 1ll << 40)), 0, AXIS_LOOP));
    const UOp *e = endr(&p, st(&p, ix(&p, g, P(&p, uop_const_int(c, DT_INT64, 0))), r), r);
    P(&p, uop_sink(c, &e, 1));
    return linear(&p);
}

static void test_budget(void **state) {
    (void)state;
    int64_t x = 0, size = 1;
    void *bufs[1] = {&x};
    char err[512];
    linear_interp_set_budget(1000000);
    assert_false(linear_interp_run(endless(), bufs, &size, 1, err, sizeof err));
    assert_non_null(strstr(err, "interp: "));
    assert_non_null(strstr(err, "the interpreter's budget"));
    assert_non_null(strstr(err, "(r0="));
    /* a program split over 2^40 cores, each run short: bounded all the same */
    Prog p = {0};
    const UOp *g = glob(&p, 0, DT_INT64, 1);
    const UOp *cores = P(&p, uop_const_int(c, DT_INT32, 1ll << 40));
    const UOp *sp = N(&p, OP_SPECIAL, DT_INT32, &cores, 1, arg_str(c, "gidx0"));
    const UOp *s = st(&p, ix(&p, g, ci(&p, 0)), P(&p, uop_cast(c, sp, DT_INT64)));
    P(&p, uop_sink(c, &s, 1));
    assert_false(linear_interp_run(linear(&p), bufs, &size, 1, err, sizeof err));
    linear_interp_set_budget(0);
    assert_non_null(strstr(err, "the interpreter's budget"));
}

static volatile int interp_done;
static void *interrupter(void *ud) {
    (void)ud;
    usleep(20000);
    while (!interp_done) {
        uopdb_interrupt_request();
        usleep(1000);
    }
    return NULL;
}

static void test_interrupt(void **state) {
    (void)state;
    int64_t x = 0, size = 1;
    void *bufs[1] = {&x};
    char err[512];
    const UOp *lin = endless();
    interp_done = 0;
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, interrupter, NULL), 0);
    bool ok = linear_interp_run(lin, bufs, &size, 1, err, sizeof err);
    interp_done = 1;
    pthread_join(t, NULL);
    uopdb_interrupt_clear();
    assert_false(ok);
    assert_non_null(strstr(err, "interrupted"));
}

/* ---- speed: a 128x128x128 matmul ---- */

static void test_matmul_128_speed(void **state) {
    (void)state;
    enum { M = 128 };
    const UOp *ba = buffer(200, M * M, DT_FLOAT32), *bb = buffer(201, M * M, DT_FLOAT32);
    const UOp *a = EXPAND(RESHAPE(ba, M, 1, M), M, M, M);
    const UOp *bt = with_arg_ints(OP_PERMUTE, RESHAPE(bb, M, M), (int64_t[]){1, 0}, 2);
    const UOp *b = EXPAND(RESHAPE(bt, 1, M, M), M, M, M);
    const UOp *mm = RESHAPE(reduce(OP_ADD, uop_binary(c, OP_MUL, a, b), (int64_t[]){2}, 1), M, M);
    char err[1024];
    const UOp *sink = uop_sink(c, &mm, 1);
    Schedule *s = schedule_build(c, sink, err, sizeof err);
    if (!s) fail_msg("%s", err);
    const SchedKernel *k = &s->kernels[0];
    float *A = malloc(sizeof(float) * M * M), *B = malloc(sizeof(float) * M * M), *C = malloc(sizeof(float) * M * M);
    for (int i = 0; i < M * M; i++) A[i] = (float)(i % 7) - 3, B[i] = (float)(i % 5) * 0.5f;
    void *bufs[3] = {C, NULL, NULL};
    int64_t sizes[3] = {M * M, M * M, M * M};
    for (int g = 1; g < 3; g++) bufs[g] = s->bufs[k->bufs[g]].source == ba ? (void *)A : (void *)B;
    const KernelOpt none[1] = {{0}}, opts[2] = {{OPT_UPCAST, 1, 4}, {OPT_UNROLL, 0, 4}};
    for (int variant = 0; variant < 2; variant++) {
        KernelPipeline *kp = pipeline_new(c, k->name, k->ast);
        pipeline_set_opts(kp, variant ? opts : none, variant ? 2 : 0);
        const UOp *lin = linear_at(kp, 22);
        double t0 = now_ms();
        run_ok(lin, bufs, sizes, 3, "128x128x128 matmul");
        double ms = now_ms() - t0;
        print_message("128x128x128 matmul (%s) interpreted in %.1f ms\n", variant ? "UPCAST 4, UNROLL 4" : "no opts", ms);
        for (int i = 0; i < M; i += 17)
            for (int j = 0; j < M; j += 13) {
                double want = 0;
                for (int r = 0; r < M; r++) want += (double)A[i * M + r] * B[j + r * M];
                if (C[i * M + j] != (float)want) fail_msg("C[%d][%d] = %g, want %g", i, j, C[i * M + j], want);
            }
        pipeline_free(kp);
    }
    free(A), free(B), free(C);
    schedule_free(s);
}


/* ---- GPU programs: workgroups, work items, local memory, barriers ---- */

/* two workgroups of four work items: item l of group g stores g*10 + l into
 * local[l], waits at the barrier, then writes local[(l + 1) % 4] out.  Run
 * one item after another without the barrier, item 0 would read local[1]
 * before item 1 wrote it. */
static const char *EXCHANGE =
    "%0 = DEFINE_GLOBAL int32.ptr(8) arg=0\n"
    "%1 = DEFINE_LOCAL int32.ptr(4, local) arg=0\n"
    "%2 = CONST int32 arg=4\n"
    "%3 = CONST int32 arg=2\n"
    "%4 = CONST int32 arg=10\n"
    "%5 = CONST int32 arg=1\n"
    "%6 = SPECIAL int32 (%3) arg=\"gidx0\"\n"
    "%7 = SPECIAL int32 (%2) arg=\"lidx0\"\n"
    "%8 = INDEX int32.ptr(4, local) (%1, %7)\n"
    "%9 = MUL int32 (%6, %4)\n"
    "%10 = ADD int32 (%9, %7)\n"
    "%11 = STORE void (%8, %10)\n"
    "%12 = BARRIER void (%11)\n"
    "%13 = AFTER int32.ptr(4, local) (%1, %12)\n"
    "%14 = ADD int32 (%7, %5)\n"
    "%15 = MOD int32 (%14, %2)\n"
    "%16 = INDEX int32.ptr(4, local) (%13, %15)\n"
    "%17 = LOAD int32 (%16)\n"
    "%18 = MUL int32 (%6, %2)\n"
    "%19 = ADD int32 (%18, %7)\n"
    "%20 = INDEX int32.ptr(8) (%0, %19)\n"
    "%21 = STORE void (%20, %17)\n"
    "%22 = LINEAR void (%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, "
    "%20, %21)\n";

static void test_gpu_barrier_exchange(void **state) {
    (void)state;
    char err[512];
    const UOp *lin = uop_parse_listing(c, EXCHANGE, err, sizeof err);
    if (!lin) fail_msg("listing: %s", err);
    int32_t out[8];
    memset(out, 0xff, sizeof out);
    void *bufs[1] = {out};
    int64_t sizes[1] = {8};
    run_ok(lin, bufs, sizes, 1, "exchange");
    for (int g = 0; g < 2; g++)
        for (int l = 0; l < 4; l++) assert_int_equal(out[g * 4 + l], g * 10 + (l + 1) % 4);
}

/* the barrier inside IF lidx0 < 2: items 2 and 3 finish while 0 and 1 wait */
static void test_gpu_barrier_not_reached_by_all(void **state) {
    (void)state;
    char err[512];
    const UOp *lin = uop_parse_listing(c,
        "%0 = DEFINE_GLOBAL int32.ptr(4) arg=0\n"
        "%1 = CONST int32 arg=4\n"
        "%2 = CONST int32 arg=2\n"
        "%3 = SPECIAL int32 (%1) arg=\"lidx0\"\n"
        "%4 = CMPLT bool (%3, %2)\n"
        "%5 = IF void (%4)\n"
        "%6 = BARRIER void (%5)\n"
        "%7 = ENDIF void (%5)\n"
        "%8 = INDEX int32.ptr(4) (%0, %3)\n"
        "%9 = STORE void (%8, %3)\n"
        "%10 = LINEAR void (%0, %1, %2, %3, %4, %5, %6, %7, %8, %9)\n",
        err, sizeof err);
    if (!lin) fail_msg("listing: %s", err);
    int32_t out[4] = {0};
    void *bufs[1] = {out};
    int64_t sizes[1] = {4};
    assert_false(linear_interp_run(lin, bufs, sizes, 1, err, sizeof err));
    if (!strstr(err, "work item 2 has finished but work item 0 waits at a barrier") || !strstr(err, "lidx0=2"))
        fail_msg("message: %s", err);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matmul_every_point),
        cmocka_unit_test(test_thread_split_runs_every_core),
        cmocka_unit_test(test_padding_gates_loads_and_stores),
        cmocka_unit_test(test_max_reduction),
        cmocka_unit_test(test_out_of_range_names_index_and_loops),
        cmocka_unit_test(test_gates_vectors_and_registers),
        cmocka_unit_test(test_two_range_end),
        cmocka_unit_test(test_direct_paths),
        cmocka_unit_test(test_errors_name_the_node),
        cmocka_unit_test(test_budget),
        cmocka_unit_test(test_interrupt),
        cmocka_unit_test(test_matmul_128_speed),
        cmocka_unit_test(test_gpu_barrier_exchange),
        cmocka_unit_test(test_gpu_barrier_not_reached_by_all),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
