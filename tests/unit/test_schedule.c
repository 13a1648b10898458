/* test_schedule.c - the scheduler: tensor graphs become programs of kernels
 * that the kernel-AST interpreter runs over the program's buffers (tmps
 * allocated and freed by the program's plan), checked against the tensor
 * reference on the same graph; kernel counts and names, the 3x3 matmul
 * kernel against tinygrad v0.12.0's AST, the program text, the step traces,
 * errors and speed. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "core/rewrite/registry.h"
#include "core/ir/uop.h"
#include "core/sched/schedule.h"
#include "core/sched/shape.h"
#include "core/sym/symbolic.h"
#include "core/backend/tensor_reference.h"
#include "core/backend/ast_interp.h"
#include "viz/tinygrad_repr.h"

static UCtx *c;
static const UOp *dev;
static int setup(void **s) {
    (void)s;
    c = uctx_new();
    dev = uop_new(c, OP_DEVICE, DT_VOID, NULL, 0, arg_str(c, "CPU"));
    return 0;
}
static int teardown(void **s) { (void)s; uctx_free(c); return 0; }

/* ---- tensor-graph builders, as the Tensor front end makes them ---- */

#include "tensor_graph.h"
#define RESHAPE(x, ...) mop(OP_RESHAPE, x, (int64_t[]){__VA_ARGS__}, (int)(sizeof((int64_t[]){__VA_ARGS__}) / 8))
#define EXPAND(x, ...) mop(OP_EXPAND, x, (int64_t[]){__VA_ARGS__}, (int)(sizeof((int64_t[]){__VA_ARGS__}) / 8))
/* a scalar tensor constant broadcast to shape (d0, d1) */
static const UOp *full2(double v, int64_t d0, int64_t d1) {
    const UOp *k = uop_new(c, OP_CONST, DT_FLOAT32, &dev, 1, arg_float(c, v));
    return EXPAND(RESHAPE(k, 1, 1), d0, d1);
}
static const UOp *bin(Op op, const UOp *a, const UOp *b) { return uop_binary(c, op, a, b); }
static const UOp *sink1(const UOp *x) { return uop_sink(c, &x, 1); }
static const UOp *matmul(const UOp *a33, const UOp *b33) {
    const UOp *a = EXPAND(RESHAPE(a33, 3, 1, 3), 3, 3, 3);
    const UOp *bt = with_arg_ints(OP_PERMUTE, b33, (int64_t[]){1, 0}, 2);
    const UOp *b = EXPAND(RESHAPE(bt, 1, 3, 3), 3, 3, 3);
    return RESHAPE(reduce(OP_ADD, bin(OP_MUL, a, b), (int64_t[]){2}, 1), 3, 3);
}

/* ---- input data ---- */

static float A[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
static float B[12] = {10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21};
static float X[12] = {0.5f, -1.25f, 3, 2, -0.75f, 1.5f, 4, -2, 0.25f, 1, -3.5f, 2.5f};
static const UOp *bufA, *bufB, *bufX;
static void make_inputs(int64_t n) {
    bufA = buffer(0, n, DT_FLOAT32);
    bufB = buffer(1, n, DT_FLOAT32);
    bufX = buffer(2, 12, DT_FLOAT32);
}
static const void *input_data(void *ud, const UOp *b) {
    (void)ud;
    return b == bufA ? (const void *)A : b == bufB ? (const void *)B : b == bufX ? (const void *)X : NULL;
}

/* ---- running a program with the interpreter ---- */

typedef struct Run {
    float **data;     /* per program buffer; tmps only while allocated */
    int nbufs;
} Run;

/* runs every kernel in program order; tmps exist only between their first
 * and last kernel, as the plan says; outputs are kept for checking */
static void run_program(const Schedule *s, Run *r) {
    r->nbufs = s->nbufs;
    r->data = calloc((size_t)s->nbufs, sizeof *r->data);
    for (int b = 0; b < s->nbufs; b++) {
        const SchedBuffer *sb = &s->bufs[b];
        assert_true(sb->dtype == DT_FLOAT32);
        if (sb->kind == SBUF_INPUT) {
            r->data[b] = malloc((size_t)sb->size * sizeof(float));
            memcpy(r->data[b], input_data(NULL, sb->source), (size_t)sb->size * sizeof(float));
        } else if (sb->kind == SBUF_OUTPUT) {
            r->data[b] = calloc((size_t)sb->size, sizeof(float));
        }
    }
    for (int k = 0; k < s->nkernels; k++) {
        const SchedKernel *kr = &s->kernels[k];
        if (k) assert_true(s->kernels[k - 1].generation <= kr->generation);
        for (int b = 0; b < s->nbufs; b++)
            if (s->bufs[b].kind == SBUF_TMP && s->bufs[b].first_kernel == k) r->data[b] = calloc((size_t)s->bufs[b].size, sizeof(float));
        void *bufs[16];
        int64_t sizes[16];
        assert_true(kr->nbufs <= 16);
        for (int i = 0; i < kr->nbufs; i++) {
            bufs[i] = r->data[kr->bufs[i]];
            sizes[i] = s->bufs[kr->bufs[i]].size;
        }
        char err[256];
        if (!ast_interp_run(kr->ast, bufs, sizes, kr->nbufs, err, sizeof err)) fail_msg("kernel %s: %s", kr->name, err);
        for (int b = 0; b < s->nbufs; b++)
            if (s->bufs[b].kind == SBUF_TMP && s->bufs[b].last_kernel == k) {
                free(r->data[b]);
                r->data[b] = NULL;
            }
    }
}

static void run_free(Run *r) {
    for (int b = 0; b < r->nbufs; b++) free(r->data[b]);
    free(r->data);
}

/* schedules sink, runs it, compares every output with ref_eval exactly */
static Schedule *check_against_reference(const UOp *sink, int want_kernels) {
    char err[512];
    Schedule *s = schedule_build(c, sink, err, sizeof err);
    if (!s) fail_msg("%s", err);
    if (want_kernels >= 0 && s->nkernels != want_kernels) {
        StrBuf sb;
        sb_init(&sb);
        schedule_format(&sb, s, NULL);
        fail_msg("%d kernels, want %d:\n%s", s->nkernels, want_kernels, sb_str(&sb));
    }
    Run r;
    run_program(s, &r);
    assert_int_equal(s->noutputs, sink->nsrc);
    for (int o = 0; o < s->noutputs; o++) {
        /* a view's buffer holds the work under its movement ops, and a work
         * that does not use an axis is held SHRINKed to index 0 on it */
        const SchedBuffer *ob = &s->bufs[s->outputs[o]];
        const UOp *held = s->output_held[o], *work = uop_op(held) == OP_SHRINK && held != sink->src[o] ? held->src[0] : held;
        const UOp *u = sink->src[o];
        while (u != work && op_is(uop_op(u), OPF_MOVEMENT)) u = u->src[0];
        assert_ptr_equal(u, work); /* under the source's movement ops */
        RefTensor t;
        if (!ref_eval(held, input_data, NULL, &t, err, sizeof err)) fail_msg("%s", err);
        assert_int_equal(ob->kind, SBUF_OUTPUT);
        assert_int_equal(ob->size, shape_numel(&t.shape));
        for (int64_t i = 0; i < ob->size; i++)
            if ((double)r.data[s->outputs[o]][i] != ref_value(&t, (size_t)i))
                fail_msg("output %d element %lld: got %.9g, reference %.9g", o, (long long)i,
                         (double)r.data[s->outputs[o]][i], ref_value(&t, (size_t)i));
        ref_tensor_free(&t);
    }
    run_free(&r);
    return s;
}

/* ---- tests ---- */

static void test_matmul_exact(void **st) {
    (void)st;
    make_inputs(9);
    const UOp *mm = matmul(RESHAPE(bufA, 3, 3), RESHAPE(bufB, 3, 3));
    Schedule *s = check_against_reference(sink1(mm), 1);
    assert_string_equal(s->kernels[0].name, "r_3_3_3");
    /* the exact numbers, from the interpreter */
    Run r;
    run_program(s, &r);
    const float want[9] = {84, 90, 96, 201, 216, 231, 318, 342, 366};
    for (int i = 0; i < 9; i++) assert_true(r.data[s->outputs[0]][i] == want[i]);
    run_free(&r);
    schedule_free(s);
}


static const UOp *shrink(const UOp *x, const int64_t *a, const int64_t *b, int n) { return mop2(OP_SHRINK, x, a, b, n); }
static const UOp *pad(const UOp *x, const int64_t *a, const int64_t *b, int n) { return mop2(OP_PAD, x, a, b, n); }

static void test_elementwise_broadcast(void **st) {
    (void)st;
    make_inputs(12);
    const UOp *a = RESHAPE(bufA, 3, 4);
    /* B's first row broadcast down, X's first column broadcast across */
    const UOp *row = EXPAND(shrink(RESHAPE(bufB, 3, 4), (int64_t[]){0, 0}, (int64_t[]){1, 4}, 2), 3, 4);
    const UOp *col = EXPAND(shrink(RESHAPE(bufX, 3, 4), (int64_t[]){0, 0}, (int64_t[]){3, 1}, 2), 3, 4);
    const UOp *sum = bin(OP_ADD, bin(OP_MUL, a, full2(2, 3, 4)), bin(OP_MUL, row, col));
    /* a cast round trip and a WHERE: truncate toward zero where a < 7 */
    const UOp *trunc = uop_cast(c, uop_cast(c, sum, DT_INT32), DT_FLOAT32);
    const UOp *out = uop_where(c, bin(OP_CMPLT, a, full2(7, 3, 4)), trunc, sum);
    Schedule *s = check_against_reference(sink1(out), 1);
    assert_string_equal(s->kernels[0].name, "E_3_4");
    assert_int_equal(s->kernels[0].nbufs, 4);
    assert_int_equal(s->nbufs, 4);
    schedule_free(s);
    /* a broadcast scalar alone: a kernel without inputs */
    s = check_against_reference(sink1(full2(1.5, 2, 3)), 1);
    assert_string_equal(s->kernels[0].name, "E_2_3");
    assert_int_equal(s->kernels[0].nbufs, 1);
    schedule_free(s);
}

/* v0.12.0's cleanup_dead_axes: a value that does not use an axis of its
 * tensor is stored once along it, and its readers read index 0 there */
static void test_dead_axes_stored_once(void **st) {
    (void)st;
    make_inputs(12);
    /* row sums of A broadcast across, plus 1: the output does not use its
     * second axis, so its buffer holds 3 elements, not 12 */
    const UOp *sums = reduce(OP_ADD, RESHAPE(bufA, 3, 4), (int64_t[]){1}, 1);
    const UOp *wide = bin(OP_ADD, EXPAND(sums, 3, 4), full2(1, 3, 4));
    Schedule *s = check_against_reference(sink1(wide), 2);
    const SchedBuffer *ob = &s->bufs[s->outputs[0]];
    assert_int_equal(ob->size, 3);
    assert_int_equal(uop_op(ob->source), OP_SHRINK);
    assert_ptr_equal(ob->source->src[0], wide);
    assert_ptr_equal(s->output_held[0], ob->source);
    Run r;
    run_program(s, &r);
    const float want[3] = {1 + 2 + 3 + 4 + 1, 5 + 6 + 7 + 8 + 1, 9 + 10 + 11 + 12 + 1};
    for (int i = 0; i < 3; i++) assert_true(r.data[s->outputs[0]][i] == want[i]);
    run_free(&r);
    schedule_free(s);
    /* a temporary stored once and read by a later kernel at index 0 on its
     * dead axis: (wide, kept in a buffer by its two readers) * A + wide */
    const UOp *a = RESHAPE(bufA, 3, 4);
    const UOp *rows = reduce(OP_ADD, bin(OP_MUL, wide, a), (int64_t[]){1}, 1);
    const UOp *both[2] = {rows, wide};
    s = check_against_reference(uop_sink(c, both, 2), 3);
    int once = 0;
    for (int b = 0; b < s->nbufs; b++)
        if (s->bufs[b].kind != SBUF_INPUT && uop_op(s->bufs[b].source) == OP_SHRINK) {
            assert_int_equal(s->bufs[b].size, 3);
            once++;
        }
    assert_int_equal(once, 1);
    run_program(s, &r);
    for (int i = 0; i < 3; i++) {
        float dot = 0;
        for (int j = 0; j < 4; j++) dot += want[i] * A[i * 4 + j];
        assert_true(r.data[s->outputs[0]][i] == dot);
    }
    run_free(&r);
    schedule_free(s);
    /* a split reduction rebuilds the work in the graph it schedules; what
     * the output holds is still named in the graph as given */
    const UOp *big = reduce(OP_ADD, RESHAPE(buffer(3, 4 * 40000, DT_FLOAT32), 4, 40000), (int64_t[]){1}, 1);
    const UOp *wide_big = bin(OP_ADD, EXPAND(big, 4, 3), full2(1, 4, 3));
    char err[256];
    s = schedule_build(c, sink1(wide_big), err, sizeof err);
    if (!s) fail_msg("%s", err);
    assert_int_equal(s->nkernels, 3);
    assert_int_equal(s->bufs[s->outputs[0]].size, 4);
    assert_int_equal(uop_op(s->output_held[0]), OP_SHRINK);
    assert_ptr_equal(s->output_held[0]->src[0], wide_big);
    assert_ptr_not_equal(s->bufs[s->outputs[0]].source->src[0], wide_big); /* the rebuilt work */
    schedule_free(s);
    /* a CONTIGUOUS is stored whole, as v0.12.0 always runs it whole */
    s = check_against_reference(sink1(uop_new(c, OP_CONTIGUOUS, DT_FLOAT32, &wide, 1, NULL)), 2);
    assert_int_equal(s->bufs[s->outputs[0]].size, 12);
    schedule_free(s);
}

static void test_permuted_flipped_padded_inputs(void **st) {
    (void)st;
    make_inputs(12);
    const UOp *at = with_arg_ints(OP_PERMUTE, RESHAPE(bufA, 3, 4), (int64_t[]){1, 0}, 2);        /* (4, 3) */
    const UOp *p = pad(RESHAPE(bufX, 3, 4), (int64_t[]){1, 0}, (int64_t[]){0, 2}, 2);            /* (4, 6) */
    const UOp *w = shrink(p, (int64_t[]){0, 1}, (int64_t[]){4, 4}, 2);                          /* (4, 3) */
    const UOp *f = with_arg_ints(OP_FLIP, w, (int64_t[]){1, 0}, 2);
    Schedule *s = check_against_reference(sink1(bin(OP_ADD, bin(OP_MUL, at, f), f)), 1);
    assert_string_equal(s->kernels[0].name, "E_4_3");
    schedule_free(s);
    /* a pad inside a pad: reads stay gated by both (the interpreter checks bounds) */
    const UOp *pp = pad(pad(bufA, (int64_t[]){2}, (int64_t[]){1}, 1), (int64_t[]){1}, (int64_t[]){3}, 1);
    s = check_against_reference(sink1(pp), 1);
    assert_string_equal(s->kernels[0].name, "E_19");
    schedule_free(s);
    /* a padded tensor reshaped: the valid is carried through // and % */
    const UOp *pr = RESHAPE(pad(RESHAPE(bufA, 3, 4), (int64_t[]){1, 0}, (int64_t[]){0, 2}, 2), 24);
    s = check_against_reference(sink1(bin(OP_ADD, pr, RESHAPE(with_arg_ints(OP_PERMUTE, RESHAPE(pr, 4, 6), (int64_t[]){1, 0}, 2), 24))), 1);
    schedule_free(s);
    /* permute of a 3-d view */
    const UOp *p3 = with_arg_ints(OP_PERMUTE, RESHAPE(bufB, 2, 3, 2), (int64_t[]){2, 0, 1}, 3);
    s = check_against_reference(sink1(p3), 1);
    assert_string_equal(s->kernels[0].name, "E_2_2_3");
    schedule_free(s);
}

static void test_reductions_inner_and_outer(void **st) {
    (void)st;
    make_inputs(12);
    const UOp *a = RESHAPE(bufA, 3, 4), *x = RESHAPE(bufX, 3, 4);
    const UOp *outs[5] = {
        reduce(OP_ADD, a, (int64_t[]){1}, 1),                   /* (3, 1) */
        reduce(OP_ADD, x, (int64_t[]){0}, 1),                   /* (1, 4) */
        reduce(OP_MAX, x, (int64_t[]){0, 1}, 2),                /* (1, 1) */
        reduce(OP_MUL, shrink(x, (int64_t[]){0, 0}, (int64_t[]){3, 2}, 2), (int64_t[]){0}, 1),
        /* a reduction of a reduction: nested, one kernel */
        reduce(OP_ADD, reduce(OP_MAX, a, (int64_t[]){1}, 1), (int64_t[]){0}, 1),
    };
    Schedule *s = check_against_reference(uop_sink(c, outs, 5), 5);
    const char *names[5] = {"r_3_4", "r_4_3", "r_3_4n1", "r_2_3", "r_3_4n2"};
    for (int i = 0; i < 5; i++) assert_string_equal(s->kernels[i].name, names[i]);
    assert_int_equal(s->ngenerations, 1);
    assert_int_equal(s->noutputs, 5);
    for (int i = 0; i < 5; i++) {
        char want[24];
        snprintf(want, sizeof want, "output%d", i);
        assert_string_equal(s->bufs[s->outputs[i]].name, want);
    }
    /* the nested one has a REDUCE inside a REDUCE */
    const UOp *store = s->kernels[4].ast->src[0];
    assert_int_equal(uop_op(store), OP_STORE);
    assert_int_equal(uop_op(store->src[1]), OP_REDUCE);
    assert_int_equal(uop_op(store->src[1]->src[0]), OP_REDUCE);
    schedule_free(s);
}

/* the number of nodes with this op in u's graph */
static int count_op(const UOp *u, Op op) {
    size_t n;
    const UOp **t = uop_toposort(u, &n);
    int k = 0;
    for (size_t i = 0; i < n; i++) k += uop_op(t[i]) == op;
    free(t);
    return k;
}

static void test_reduce_over_broadcast_dims(void **st) {
    (void)st;
    make_inputs(12);
    const UOp *row = RESHAPE(bufA, 1, 12);
    const UOp *outs[3] = {
        reduce(OP_ADD, EXPAND(row, 5, 12), (int64_t[]){0}, 1),                           /* 5 * a */
        reduce(OP_MAX, EXPAND(row, 5, 12), (int64_t[]){0}, 1),                           /* a */
        reduce(OP_ADD, EXPAND(RESHAPE(bufA, 3, 1, 4), 3, 6, 4), (int64_t[]){1, 2}, 2),  /* 6 * row sums */
    };
    Schedule *s = check_against_reference(uop_sink(c, outs, 3), 3);
    /* a reduction over a broadcast dim is done without a loop over it */
    assert_int_equal(count_op(s->kernels[0].ast, OP_REDUCE), 0);
    assert_int_equal(count_op(s->kernels[1].ast, OP_REDUCE), 0);
    assert_int_equal(count_op(s->kernels[2].ast, OP_REDUCE), 1);
    size_t n;
    const UOp **t = uop_toposort(s->kernels[2].ast, &n);
    for (size_t i = 0; i < n; i++)
        if (uop_op(t[i]) == OP_REDUCE) assert_int_equal(t[i]->nsrc, 2); /* the value and the one range it reads */
    free(t);
    Run r;
    run_program(s, &r);
    for (int i = 0; i < 12; i++) {
        assert_true(r.data[s->outputs[0]][i] == 5 * A[i]);
        assert_true(r.data[s->outputs[1]][i] == A[i]);
    }
    const float sums[3] = {60, 156, 252};
    for (int i = 0; i < 3; i++) assert_true(r.data[s->outputs[2]][i] == sums[i]);
    run_free(&r);
    schedule_free(s);
}

/* softmax over the last axis of a (rows, cols) tensor */
static const UOp *softmax_of(const UOp *x, int64_t rows, int64_t cols) {
    const UOp *m = EXPAND(reduce(OP_MAX, x, (int64_t[]){1}, 1), rows, cols);
    const UOp *e = uop_unary(c, OP_EXP2, bin(OP_SUB, x, m));
    const UOp *sum = EXPAND(reduce(OP_ADD, e, (int64_t[]){1}, 1), rows, cols);
    return bin(OP_FDIV, e, sum);
}

static void test_softmax_three_kernels(void **st) {
    (void)st;
    make_inputs(12);
    Schedule *s = check_against_reference(sink1(softmax_of(RESHAPE(bufX, 3, 4), 3, 4)), 3);
    assert_string_equal(s->kernels[0].name, "r_3_4");
    assert_string_equal(s->kernels[1].name, "r_3_4n1");
    assert_string_equal(s->kernels[2].name, "E_3_4");
    for (int k = 0; k < 3; k++) assert_int_equal(s->kernels[k].generation, k);
    assert_int_equal(s->ngenerations, 3);
    /* input0, tmp0 (max), tmp1 (sum), output0 */
    assert_int_equal(s->nbufs, 4);
    assert_int_equal(s->bufs[1].kind, SBUF_TMP);
    assert_int_equal(s->bufs[1].size, 3);
    assert_int_equal(s->bufs[1].first_kernel, 0);
    assert_int_equal(s->bufs[1].last_kernel, 2);
    assert_int_equal(s->bufs[2].first_kernel, 1);
    assert_int_equal(s->bufs[2].last_kernel, 2);
    assert_int_equal(s->bufs[0].first_kernel, 0);
    assert_int_equal(s->bufs[0].last_kernel, 2);
    StrBuf sb;
    sb_init(&sb);
    schedule_format(&sb, s, NULL);
    assert_string_equal(sb_str(&sb),
                        "input0 float32[12]  tmp0 float32[3]  tmp1 float32[3]  output0 float32[12]\n"
                        "generation 0\n"
                        "  alloc tmp0\n"
                        "  r_3_4(tmp0, input0)\n"
                        "generation 1\n"
                        "  alloc tmp1\n"
                        "  r_3_4n1(tmp1, input0, tmp0)\n"
                        "generation 2\n"
                        "  E_3_4(output0, input0, tmp0, tmp1)\n"
                        "  free tmp0\n"
                        "  free tmp1\n");
    /* the names with opts follow the calls where they differ */
    const char *opt_names[3] = {"r_3_4", "r_3_4n1_x", NULL};
    sb_free(&sb);
    sb_init(&sb);
    schedule_format(&sb, s, opt_names);
    assert_non_null(strstr(sb_str(&sb), "  r_3_4(tmp0, input0)\n"));
    assert_non_null(strstr(sb_str(&sb), "  r_3_4n1(tmp1, input0, tmp0)  # r_3_4n1_x with its opts\n"));
    assert_non_null(strstr(sb_str(&sb), "  E_3_4(output0, input0, tmp0, tmp1)\n"));
    sb_free(&sb);
    schedule_free(s);
}

static void test_composites(void **st) {
    (void)st;
    make_inputs(9);
    /* softmax of a matmul: the scaled matmul is read at other indices by the
     * max and by the subtraction and holds a reduction, so it gets a kernel of
     * its own before softmax's three (tinygrad v0.12.0 schedules 4 too) */
    Schedule *s = check_against_reference(sink1(softmax_of(bin(OP_MUL, matmul(RESHAPE(bufA, 3, 3), RESHAPE(bufB, 3, 3)), full2(0.01, 3, 3)), 3, 3)), 4);
    assert_string_equal(s->kernels[0].name, "r_3_3_3");
    schedule_free(s);
    /* max-pooling pairs of a padded vector */
    const UOp *pooled = reduce(OP_MAX, RESHAPE(pad(bufX, (int64_t[]){1}, (int64_t[]){1}, 1), 7, 2), (int64_t[]){1}, 1);
    s = check_against_reference(sink1(RESHAPE(pooled, 7)), 1);
    assert_string_equal(s->kernels[0].name, "r_7_2");
    schedule_free(s);
    /* a matrix minus its column means, scaled by its row sums: two reductions
     * broadcast along different axes */
    const UOp *x = RESHAPE(bufX, 3, 4);
    const UOp *colmean = EXPAND(bin(OP_MUL, reduce(OP_ADD, x, (int64_t[]){0}, 1), full2(1.0 / 3, 1, 4)), 3, 4);
    const UOp *rowsum = EXPAND(reduce(OP_ADD, x, (int64_t[]){1}, 1), 3, 4);
    s = check_against_reference(sink1(bin(OP_MUL, bin(OP_SUB, x, colmean), rowsum)), 3);
    assert_int_equal(s->ngenerations, 2);
    assert_int_equal(s->kernels[0].generation, 0);
    assert_int_equal(s->kernels[1].generation, 0);
    assert_int_equal(s->kernels[2].generation, 1);
    schedule_free(s);
}

static void test_deep_graphs(void **st) {
    (void)st;
    make_inputs(12);
    /* a chain of 1000 elementwise ops schedules into one kernel */
    const UOp *x = RESHAPE(bufX, 3, 4), *one = full2(1, 3, 4);
    for (int i = 0; i < 1000; i++) x = bin(i % 2 ? OP_ADD : OP_MAX, x, one);
    Schedule *s = check_against_reference(sink1(x), 1);
    schedule_free(s);
    /* elementwise chains are built without recursion: 100000 ops are one kernel */
    for (int i = 0; i < 100000; i++) x = bin(OP_ADD, x, one);
    char err[256];
    s = schedule_build(c, sink1(x), err, sizeof err);
    if (!s) fail_msg("%s", err);
    assert_int_equal(s->nkernels, 1);
    schedule_free(s);
    /* adjacent RESHAPEs are one (v0.12.0's mop_cleanup): a chain of 100000
     * is read in one step, without recursion */
    const UOp *m = RESHAPE(bufX, 3, 4);
    for (int i = 0; i < 50000; i++) m = RESHAPE(RESHAPE(m, 12), 3, 4);
    s = check_against_reference(sink1(bin(OP_ADD, m, one)), 1);
    schedule_free(s);
    /* other movement ops recurse: a chain too deep for the stack is refused
     * with a message naming the depth, not a crash */
    m = RESHAPE(bufX, 3, 4);
    for (int i = 0; i < 50000; i++) m = with_arg_ints(OP_PERMUTE, with_arg_ints(OP_PERMUTE, m, (int64_t[]){1, 0}, 2), (int64_t[]){1, 0}, 2);
    assert_null(schedule_build(c, sink1(m), err, sizeof err));
    if (!strstr(err, "graph too deep for the scheduler: 100004 nested nodes (limit ~")) fail_msg("%s", err);
}

static void test_format_matmul(void **st) {
    (void)st;
    make_inputs(9);
    char err[256];
    Schedule *s = schedule_build(c, sink1(matmul(RESHAPE(bufA, 3, 3), RESHAPE(bufB, 3, 3))), err, sizeof err);
    if (!s) fail_msg("%s", err);
    StrBuf sb;
    sb_init(&sb);
    schedule_format(&sb, s, NULL);
    assert_string_equal(sb_str(&sb),
                        "input0 float32[9]  input1 float32[9]  output0 float32[9]\n"
                        "generation 0\n"
                        "  r_3_3_3(output0, input0, input1)\n");
    sb_free(&sb);
    schedule_free(s);
}

/* does the step's trace have a rewrite by this rule? */
static int fired(const SchedStep *step, const char *rule) {
    int n = 0;
    for (size_t i = 0; i < step->trace.nrewrites; i++) n += strcmp(step->trace.rewrites[i].rule, rule) == 0;
    return n;
}

/* a sum of 2^20 elements is split in two kernels in step 1 (v0.12.0's
 * split_reduceop): 256 partial sums of 4096, then their sum; 2^14 is not */
static void test_large_reduce_split(void **st) {
    (void)st;
    char err[256];
    const UOp *big = buffer(0, 1 << 20, DT_FLOAT32);
    Schedule *s = schedule_build(c, sink1(reduce(OP_ADD, big, (int64_t[]){0}, 1)), err, sizeof err);
    if (!s) fail_msg("%s", err);
    assert_int_equal(fired(&s->steps[0], "split_reduceop"), 1);
    assert_int_equal(s->nkernels, 2);
    schedule_free(s);
    const UOp *small = buffer(1, 1 << 14, DT_FLOAT32);
    s = schedule_build(c, sink1(reduce(OP_ADD, small, (int64_t[]){0}, 1)), err, sizeof err);
    if (!s) fail_msg("%s", err);
    assert_int_equal(fired(&s->steps[0], "split_reduceop"), 0);
    assert_int_equal(s->nkernels, 1);
    schedule_free(s);
}

static void test_steps_and_traces(void **st) {
    (void)st;
    make_inputs(12);
    char err[256];
    const UOp *sink = sink1(softmax_of(RESHAPE(bufX, 3, 4), 3, 4));
    Schedule *s = schedule_build(c, sink, err, sizeof err);
    if (!s) fail_msg("%s", err);
    assert_int_equal(s->nsteps, 5);
    const char *names[5] = {"realize", "rangeify", "bufferize to store", "split kernels", "program"};
    for (int i = 0; i < 5; i++) {
        assert_string_equal(s->steps[i].name, names[i]);
        assert_non_null(s->steps[i].purpose);
        assert_int_equal(s->steps[i].trace.npasses, 1);
        assert_ptr_equal(s->steps[i].trace.passes[0].root_before, s->steps[i].before);
        assert_ptr_equal(s->steps[i].trace.passes[0].root_after, s->steps[i].after);
        assert_true(s->steps[i].ms >= 0);
        if (i) assert_ptr_equal(s->steps[i].before, s->steps[i - 1].after);
    }
    assert_ptr_equal(s->steps[0].before, sink);
    assert_int_equal(fired(&s->steps[0], "realize_reduce"), 2);
    assert_int_equal(fired(&s->steps[0], "realize_output"), 1);
    assert_int_equal(fired(&s->steps[1], "rangeify_reduce"), 2);
    assert_true(fired(&s->steps[1], "rangeify_expand") >= 2);
    /* the reshaped input, read at other indices by the max, the exp and the
     * divide, is built once at ranges of its own and substituted into each */
    assert_int_equal(fired(&s->steps[1], "rangeify_index"), 3);
    assert_true(fired(&s->steps[1], "rangeify_inline") >= 3);
    assert_int_equal(fired(&s->steps[1], "rangeify_bufferize"), 3);
    assert_int_equal(fired(&s->steps[2], "bufferize_to_store"), 3);
    assert_int_equal(fired(&s->steps[3], "split_kernel"), 3);
    /* what each step left */
    const UOp *r = s->steps[1].after, *b = s->steps[2].after, *k = s->steps[3].after;
    assert_int_equal(r->nsrc, 3);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(uop_op(r->src[i]), OP_BUFFERIZE);
        assert_int_equal(uop_op(b->src[i]), OP_AFTER);
        assert_int_equal(uop_op(b->src[i]->src[0]), OP_BUFFER);
        assert_int_equal(uop_op(b->src[i]->src[1]), OP_END);
        assert_int_equal(uop_op(k->src[i]), OP_SINK);
    }
    /* the divide reads the two earlier stores through their AFTERs */
    size_t n;
    const UOp **topo = uop_toposort(b->src[2], &n);
    int afters = 0;
    for (size_t i = 0; i < n; i++) afters += uop_op(topo[i]) == OP_AFTER;
    free(topo);
    assert_int_equal(afters, 3);
    schedule_free(s);
}

static void test_realize_rule(void **st) {
    (void)st;
    make_inputs(12);
    const UOp *a = RESHAPE(bufA, 3, 4);
    const UOp *sum1 = reduce(OP_ADD, a, (int64_t[]){1}, 1);
    /* dropping the size-1 dim keeps the reduction inline */
    Schedule *s = check_against_reference(sink1(bin(OP_MUL, RESHAPE(sum1, 3), RESHAPE(sum1, 3))), 1);
    schedule_free(s);
    /* an output that is a permute that moves data, a flip, a shrink of the
     * reduction: its buffer holds the reduction in its own order, and the
     * output is a view of it (tinygrad v0.12.0 realizes a SINK source's base) */
    const UOp *sum2 = reduce(OP_ADD, RESHAPE(bufA, 2, 3, 2), (int64_t[]){2}, 1);   /* (2, 3, 1) */
    const UOp *views[3] = {with_arg_ints(OP_PERMUTE, sum2, (int64_t[]){1, 0, 2}, 3),
                           with_arg_ints(OP_FLIP, sum1, (int64_t[]){1, 0}, 2),
                           shrink(sum1, (int64_t[]){1, 0}, (int64_t[]){3, 1}, 2)};
    for (int v = 0; v < 3; v++) {
        s = check_against_reference(sink1(views[v]), 1);
        assert_ptr_equal(s->output_held[0], views[v]->src[0]);
        assert_ptr_equal(s->bufs[s->outputs[0]].source, views[v]->src[0]);
        schedule_free(s);
    }
    /* used inside the kernel, the reduction is computed at the moved indices */
    const UOp *twice = bin(OP_ADD, views[0], views[0]);
    s = check_against_reference(sink1(twice), 1);
    assert_ptr_equal(s->output_held[0], twice);
    schedule_free(s);
    /* under a reshape too, the output holds the reduction (tinygrad's x.base) */
    s = check_against_reference(sink1(RESHAPE(sum2, 6)), 1);
    assert_ptr_equal(s->output_held[0], sum2);
    assert_ptr_equal(s->bufs[s->outputs[0]].source, sum2);
    schedule_free(s);
    /* a view of an input is copied: the output holds the view itself */
    const UOp *at = with_arg_ints(OP_PERMUTE, RESHAPE(bufA, 3, 4), (int64_t[]){1, 0}, 2);
    s = check_against_reference(sink1(at), 1);
    assert_ptr_equal(s->output_held[0], at);
    schedule_free(s);
    /* broadcast, it gets a kernel of its own, read by the next */
    s = check_against_reference(sink1(bin(OP_ADD, EXPAND(sum1, 3, 4), a)), 2);
    assert_int_equal(s->bufs[1].kind, SBUF_TMP);
    schedule_free(s);
    /* an elementwise op on it, then broadcast: the op is kept with the reduction */
    s = check_against_reference(sink1(bin(OP_ADD, EXPAND(uop_unary(c, OP_SQRT, sum1), 3, 4), a)), 2);
    assert_int_equal(uop_op(s->bufs[1].source), OP_SQRT);
    schedule_free(s);
    /* read at two different indices, it has a kernel; a cheap node read so is recomputed */
    const UOp *t = with_arg_ints(OP_PERMUTE, RESHAPE(sum2, 2, 3), (int64_t[]){1, 0}, 2);
    s = check_against_reference(sink1(bin(OP_ADD, RESHAPE(t, 6), RESHAPE(RESHAPE(sum2, 2, 3), 6))), 2);
    schedule_free(s);
    const UOp *cheap = uop_unary(c, OP_SQRT, RESHAPE(bufB, 3, 4));
    const UOp *ct = with_arg_ints(OP_PERMUTE, cheap, (int64_t[]){1, 0}, 2);
    s = check_against_reference(sink1(bin(OP_ADD, RESHAPE(ct, 12), RESHAPE(cheap, 12))), 1);
    schedule_free(s);
    /* CONTIGUOUS is a kernel of its own, read by the next */
    const UOp *cont = uop_new(c, OP_CONTIGUOUS, DT_FLOAT32, &a, 1, NULL);
    s = check_against_reference(sink1(bin(OP_ADD, cont, full2(1, 3, 4))), 2);
    assert_string_equal(s->bufs[1].name, "tmp0");
    assert_ptr_equal(s->bufs[1].source, cont);
    schedule_free(s);
    /* an input as an output: a copy kernel; one node twice: one buffer */
    const UOp *two[2] = {bufA, bufA};
    s = check_against_reference(uop_sink(c, two, 2), 1);
    assert_int_equal(s->outputs[0], s->outputs[1]);
    assert_ptr_equal(s->bufs[0].source, bufA);
    schedule_free(s);
    /* a shared elementwise node feeding two outputs: each kernel computes it */
    const UOp *e = uop_unary(c, OP_SQRT, RESHAPE(bufB, 3, 4));
    const UOp *pair[2] = {bin(OP_ADD, e, a), reduce(OP_ADD, e, (int64_t[]){0, 1}, 2)};
    s = check_against_reference(uop_sink(c, pair, 2), 2);
    schedule_free(s);
}

static void test_errors_name_the_node(void **st) {
    (void)st;
    make_inputs(12);
    char err[256];
    char want[32];
    /* a bad reshape */
    const UOp *bad = RESHAPE(bufA, 5, 3);
    assert_null(schedule_build(c, sink1(bad), err, sizeof err));
    snprintf(want, sizeof want, "%%%u", bad->id);
    assert_non_null(strstr(err, "bad reshape"));
    assert_non_null(strstr(err, want));
    /* not a SINK */
    const UOp *a = RESHAPE(bufA, 3, 4);
    assert_null(schedule_build(c, a, err, sizeof err));
    snprintf(want, sizeof want, "%%%u (RESHAPE)", a->id);
    assert_non_null(strstr(err, want));
    /* an op the scheduler does not know */
    const UOp *bc = uop_new(c, OP_NOOP, a->dtype, &a, 1, NULL);
    assert_non_null(bc);
    assert_null(schedule_build(c, sink1(bc), err, sizeof err));
    snprintf(want, sizeof want, "%%%u (NOOP)", bc->id);
    assert_non_null(strstr(err, "does not know"));
    assert_non_null(strstr(err, want));
    /* a reduce op that is not ADD/MAX/MUL */
    const UOp *rs = reduce(OP_SUB, a, (int64_t[]){1}, 1);
    assert_null(schedule_build(c, sink1(rs), err, sizeof err));
    snprintf(want, sizeof want, "%%%u (REDUCE_AXIS)", rs->id);
    assert_non_null(strstr(err, want));
    /* a SINK source that is not a tensor */
    const UOp *v = uop_var(c, "n", 1, 4);
    assert_null(schedule_build(c, sink1(v), err, sizeof err));
    snprintf(want, sizeof want, "%%%u", v->id);
    assert_non_null(strstr(err, want));
    assert_null(schedule_build(c, NULL, err, sizeof err));
}

static void test_fast(void **st) {
    (void)st;
    make_inputs(9);
    char err[256];
    const UOp *sink = sink1(matmul(RESHAPE(bufA, 3, 3), RESHAPE(bufB, 3, 3)));
    schedule_free(schedule_build(c, sink, err, sizeof err)); /* builds the sym rule sets once */
    struct timespec t0, t1;
    int runs = 200;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < runs; i++) {
        Schedule *s = schedule_build(c, sink, err, sizeof err);
        assert_non_null(s);
        schedule_free(s);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ms = ((double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6) / runs;
#if defined(__SANITIZE_ADDRESS__)
    double limit = 10;
#else
    double limit = 1;
#endif
    if (ms >= limit) fail_msg("the 3x3 matmul took %.3f ms to schedule (limit %.1f)", ms, limit);
}

#include "test_files.h"

/* u with the RANGEs in from[] replaced by to[] */
static const UOp *replace_ranges(const UOp *u, const UOp *const *from, const UOp *const *to, int n) {
    for (int i = 0; i < n; i++)
        if (u == from[i]) return to[i];
    if (!u->nsrc) return u;
    const UOp *src[16];
    assert_true(u->nsrc <= 16);
    for (int i = 0; i < u->nsrc; i++) src[i] = replace_ranges(u->src[i], from, to, n);
    return uop_with_src(c, u, src, u->nsrc);
}

/* the kernel with its ranges numbered by role: the END's ranges in order,
 * then the REDUCE's; index expressions simplified with sym */
static const UOp *canonical_kernel(const UOp *k) {
    const UOp *end = k->src[0];
    assert_int_equal(uop_op(end), OP_END);
    const UOp *store = end->src[0], *red = store->src[1];
    assert_int_equal(uop_op(red), OP_REDUCE);
    const UOp *from[8], *to[8];
    int n = 0;
    for (int i = 1; i < end->nsrc; i++, n++) from[n] = end->src[i];
    for (int i = 1; i < red->nsrc; i++, n++) from[n] = red->src[i];
    for (int i = 0; i < n; i++) {
        const Arg *a = from[i]->arg;
        to[i] = uop_range(c, from[i]->src[0], 100 + i, a->items[a->n - 1]->v.axis);
    }
    const UOp *r = replace_ranges(k, from, to, n);
    return uop_simplify(c, r, "sym", NULL);
}

static void test_matmul_matches_tinygrad_ast(void **st) {
    (void)st;
    char err[512];
    const UOp *golden = read_golden_ast(c, GOLDEN_MATMUL_AST, err, sizeof err);
    if (!golden) fail_msg("%s", err);
    make_inputs(9);
    Schedule *s = schedule_build(c, sink1(matmul(RESHAPE(bufA, 3, 3), RESHAPE(bufB, 3, 3))), err, sizeof err);
    if (!s) fail_msg("%s", err);
    const UOp *mine = canonical_kernel(s->kernels[0].ast), *theirs = canonical_kernel(golden);
    if (mine != theirs) {
        StrBuf a, b;
        sb_init(&a);
        sb_init(&b);
        uop_to_tinygrad(&a, s->kernels[0].ast, err, sizeof err);
        uop_to_tinygrad(&b, golden, err, sizeof err);
        fail_msg("the kernel differs from tinygrad's:\n%s\ntinygrad:\n%s", sb_str(&a), sb_str(&b));
    }
    /* the same ops, dtypes and DEFINE_GLOBAL order: A is buffer 1, B buffer 2 */
    assert_int_equal(s->kernels[0].nbufs, 3);
    assert_ptr_equal(s->bufs[s->kernels[0].bufs[1]].source, bufA);
    assert_ptr_equal(s->bufs[s->kernels[0].bufs[2]].source, bufB);
    schedule_free(s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_matmul_exact, setup, teardown),
        cmocka_unit_test_setup_teardown(test_matmul_matches_tinygrad_ast, setup, teardown),
        cmocka_unit_test_setup_teardown(test_elementwise_broadcast, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dead_axes_stored_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_permuted_flipped_padded_inputs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reductions_inner_and_outer, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reduce_over_broadcast_dims, setup, teardown),
        cmocka_unit_test_setup_teardown(test_softmax_three_kernels, setup, teardown),
        cmocka_unit_test_setup_teardown(test_composites, setup, teardown),
        cmocka_unit_test_setup_teardown(test_deep_graphs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_format_matmul, setup, teardown),
        cmocka_unit_test_setup_teardown(test_steps_and_traces, setup, teardown),
        cmocka_unit_test_setup_teardown(test_realize_rule, setup, teardown),
        cmocka_unit_test_setup_teardown(test_errors_name_the_node, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fast, setup, teardown),
        cmocka_unit_test_setup_teardown(test_large_reduce_split, setup, teardown),
    };
    int rc = cmocka_run_group_tests_name("schedule", tests, NULL, NULL);
    ruleset_registry_free();
    return rc;
}
