/* direct_path_cases.h - the cases the interpreters' direct arithmetic paths
 * (scalar_fast in core/backend/scalar_eval.h) are tested on: for ADD, SUB
 * and MUL on float32, float64 and int64, edge values (rounding to float32,
 * NaN, infinities, -0.0, denormals, wrapping) run as out[i] = (a[i] op
 * b[i]) op a[i] by an interpreter, and every element compared bit for bit
 * with what scalar_alu composes.  Include after cmocka.h. */
#ifndef UOPDB_TEST_DIRECT_PATH_CASES_H
#define UOPDB_TEST_DIRECT_PATH_CASES_H
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "core/backend/scalar_eval.h"

/* runs out[i] = (a[i] op b[i]) op a[i] for i < n in the interpreter under test */
typedef void (*DirectPathRun)(const DType *dt, Op op, const void *a, const void *b, int n, void *out);

static void direct_path_expect(const DType *dt, Op op, const void *a, const void *b, int n, const unsigned char *res) {
    size_t esz = (size_t)dt_itemsize(dt);
    for (int k = 0; k < n; k++) {
        ScalarVal x[2] = {scalar_read(dt, a, (size_t)k), scalar_read(dt, b, (size_t)k)}, r1, r2;
        assert_null(scalar_alu(op, dt, dt, 2, x, &r1));
        ScalarVal y[2] = {r1, x[0]};
        assert_null(scalar_alu(op, dt, dt, 2, y, &r2));
        unsigned char want[8];
        assert_true(scalar_write(dt, want, 0, r2));
        if (memcmp(res + (size_t)k * esz, want, esz))
            fail_msg("%s %s element %d: the direct path differs from scalar_alu", sk_name(dt->sk), op_name(op), k);
    }
}

static void direct_path_cases(DirectPathRun run) {
    static const Op ops[3] = {OP_ADD, OP_SUB, OP_MUL};
    static const float fa[8] = {1.0f, 0x1p-30f, -0.0f, INFINITY, NAN, 3.4e38f, 1e-45f, 0.1f};
    static const float fb[8] = {0x1p-30f, 1.0f, -0.0f, -INFINITY, 2.0f, 3.4e38f, 0.5f, 0.2f};
    static const double da[8] = {1.0, 0x1p-60, -0.0, INFINITY, NAN, 1.7e308, 5e-324, 0.1};
    static const double db[8] = {0x1p-60, 1.0, -0.0, -INFINITY, 2.0, 1.7e308, 0.5, 0.2};
    static const int64_t ia[6] = {INT64_MAX, INT64_MIN, -1, 0, 3037000500, 7};
    static const int64_t ib[6] = {1, -1, INT64_MIN, 5, 3037000500, -9};
    const struct { const DType *dt; const void *a, *b; int n; } cases[3] = {
        {DT_FLOAT32, fa, fb, 8}, {dt_scalar(SK_FLOAT64), da, db, 8}, {DT_INT64, ia, ib, 6}};
    for (int o = 0; o < 3; o++)
        for (int k = 0; k < 3; k++) {
            unsigned char res[64] = {0};
            run(cases[k].dt, ops[o], cases[k].a, cases[k].b, cases[k].n, res);
            direct_path_expect(cases[k].dt, ops[o], cases[k].a, cases[k].b, cases[k].n, res);
        }
}

#endif
