/* test_scalar_semantics.c - the value semantics every evaluator shares
 * (scalar_eval, the reference's block loops in ref_ops), equal to what the
 * JIT computes as tinygrad v0.12.0's LLVM backend renders it: float MAX is
 * (a < b).where(b, a) with an unordered "<" (NaN on the right wins, NaN on
 * the left alone loses, MAX(-0.0, 0.0) is -0.0), float CMPLT is true when
 * either side is NaN, MULACC rounds the product and then the sum, and an
 * integer (uint64 from 2^63 included) becomes a float rounded once.  The
 * same cases run through the JIT, with validation, in
 * tests/lua/test_semantics.lua. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>
#include "core/ir/uop.h"
#include "core/backend/scalar_eval.h"
#include "core/backend/ref_ops.h"

#define F16 dt_scalar(SK_FLOAT16)
#define F64 dt_scalar(SK_FLOAT64)
#define U64 dt_scalar(SK_UINT64)

static bool same_double(double a, double b) { return memcmp(&a, &b, sizeof a) == 0 || (isnan(a) && isnan(b)); }

static double alu2(Op op, const DType *dt, double a, double b) {
    ScalarVal s[2] = {{a, 0}, {b, 0}}, out = {0, 0};
    assert_null(scalar_alu(op, dt, dt, 2, s, &out));
    return out.f;
}
static bool lt(double a, double b) {
    ScalarVal s[2] = {{a, 0}, {b, 0}}, out = {0, 0};
    assert_null(scalar_alu(OP_CMPLT, DT_BOOL, DT_FLOAT32, 2, s, &out));
    return out.i != 0;
}

static void test_max_nan(void **st) {
    (void)st;
    const DType *dts[3] = {DT_FLOAT32, F64, F16};
    for (int k = 0; k < 3; k++) {
        assert_true(isnan(alu2(OP_MAX, dts[k], 1.0, NAN)));
        assert_true(same_double(alu2(OP_MAX, dts[k], NAN, 1.0), 1.0));
        assert_true(isnan(alu2(OP_MAX, dts[k], NAN, NAN)));
        assert_true(same_double(alu2(OP_MAX, dts[k], 2.0, 3.0), 3.0));
        assert_true(same_double(alu2(OP_MAX, dts[k], 3.0, 2.0), 3.0));
        assert_true(same_double(alu2(OP_MAX, dts[k], -0.0, 0.0), -0.0));
        assert_true(same_double(alu2(OP_MAX, dts[k], 0.0, -0.0), 0.0));
    }
    assert_true(lt(NAN, 1.0));
    assert_true(lt(1.0, NAN));
    assert_true(lt(1.0, 2.0));
    assert_false(lt(2.0, 1.0));
    assert_false(lt(1.0, 1.0));
}

/* the reference's float32 block loops and reduction steps agree */
static void test_reference_blocks(void **st) {
    (void)st;
    UCtx *c = uctx_new();
    const UOp *a = uop_const_float(c, DT_FLOAT32, 1.0), *b = uop_const_float(c, DT_FLOAT32, 2.0);
    const UOp *mx = uop_binary(c, OP_MAX, a, b), *cmp = uop_binary(c, OP_CMPLT, a, b);
    assert_non_null(mx);
    assert_non_null(cmp);
    RefWord x[4] = {{.f = 1.0}, {.f = NAN}, {.f = NAN}, {.f = -0.0}};
    RefWord y[4] = {{.f = NAN}, {.f = 1.0}, {.f = NAN}, {.f = 0.0}};
    RefWord out[4];
    const RefWord *src[2] = {x, y};
    bool sf[2] = {true, true};
    unsigned char bad[4];
    assert_null(ref_block_alu(mx, src, sf, out, 4, bad));
    assert_true(isnan(out[0].f));
    assert_true(same_double(out[1].f, 1.0));
    assert_true(isnan(out[2].f));
    assert_true(same_double(out[3].f, -0.0));
    assert_null(ref_block_alu(cmp, src, sf, out, 4, bad));
    for (int t = 0; t < 3; t++) assert_int_equal(out[t].i, 1);
    assert_int_equal(out[3].i, 0);

    /* a max reduction: acc = MAX(acc, x) in index order */
    RefReduce rd = {OP_MAX, DT_FLOAT32, true};
    RefWord v1[3] = {{.f = 1.0}, {.f = NAN}, {.f = 2.0}}, v2[3] = {{.f = 1.0}, {.f = 2.0}, {.f = NAN}};
    RefWord acc = ref_reduce_identity(&rd);
    ref_reduce_serial(&rd, &acc, v1, 3);
    assert_true(same_double(acc.f, 2.0));
    acc = ref_reduce_identity(&rd);
    ref_reduce_serial(&rd, &acc, v2, 3);
    assert_true(isnan(acc.f));
    RefWord lanes[3] = {{.f = 1.0}, {.f = NAN}, {.f = 5.0}}, vals[3] = {{.f = NAN}, {.f = 2.0}, {.f = 4.0}};
    ref_reduce_lanes(&rd, lanes, vals, 3);
    assert_true(isnan(lanes[0].f));
    assert_true(same_double(lanes[1].f, 2.0));
    assert_true(same_double(lanes[2].f, 5.0));
    uctx_free(c);
}

/* MULACC: the product is rounded to the dtype before the add */
static void test_mulacc_rounds_twice(void **st) {
    (void)st;
    /* half: 1.0009765625 * 1.5009765625 = 1.50244236..., rounded to half
     * 1.5029296875; minus 1.0009765625 gives 0.501953125 (exact in half);
     * a single rounding of the exact result would give 0.50146484375 */
    ScalarVal s[3] = {{1025.0 / 1024, 0}, {1537.0 / 1024, 0}, {-(1025.0 / 1024), 0}}, out = {0, 0};
    assert_null(scalar_alu(OP_MULACC, F16, F16, 3, s, &out));
    double prod = (double)(_Float16)((1025.0 / 1024) * (1537.0 / 1024));
    assert_true(same_double(out.f, (double)(_Float16)(prod - 1025.0 / 1024)));
    assert_true(same_double(out.f, 0.501953125));
    /* float32: (1 + 2^-12)^2 = 1 + 2^-11 + 2^-24 rounds (a tie, to even) to
     * 1 + 2^-11, so minus 1 is 2^-11; one rounding would keep the 2^-24 */
    double e = 1.0 + 0x1p-12;
    ScalarVal t[3] = {{e, 0}, {e, 0}, {-1.0, 0}};
    assert_null(scalar_alu(OP_MULACC, DT_FLOAT32, DT_FLOAT32, 3, t, &out));
    assert_true(same_double(out.f, 0x1p-11));
}

/* integers to floats: unsigned above 2^63 stays positive, one rounding */
static void test_int_to_float(void **st) {
    (void)st;
    uint64_t big[4] = {UINT64_MAX, 1ull << 63, (1ull << 63) + (1ull << 39) + 1, 12345};
    double want64[4] = {0x1p64, 0x1p63, 0x1p63 + 0x1p39, 12345.0};
    double want32[4] = {0x1p64, 0x1p63, 0x1p63 + 0x1p40, 12345.0};
    for (int k = 0; k < 4; k++) {
        ScalarVal x = {0, (int64_t)big[k]};
        assert_true(same_double(scalar_convert(F64, U64, x).f, want64[k]));
        assert_true(same_double(scalar_convert(DT_FLOAT32, U64, x).f, want32[k]));
        RefWord w64 = {.i = (int64_t)big[k]}, w32 = {.i = (int64_t)big[k]}, w16 = {.i = (int64_t)big[k]};
        ref_block_cast(F64, U64, &w64, 1);
        ref_block_cast(DT_FLOAT32, U64, &w32, 1);
        ref_block_cast(F16, U64, &w16, 1);
        assert_true(same_double(w64.f, want64[k]));
        assert_true(same_double(w32.f, want32[k]));
        /* beyond half's range: +inf, never negative */
        assert_true(same_double(w16.f, k < 3 ? INFINITY : 12344.0));
    }
    /* and back: a float from 2^63 to uint64 keeps its value (fptoui) */
    assert_true((uint64_t)scalar_convert(U64, F64, (ScalarVal){0x1p63 + 0x1p40, 0}).i == (1ull << 63) + (1ull << 40));
    RefWord back = {.f = 0x1p64 - 0x1p11};
    ref_block_cast(U64, F64, &back, 1);
    assert_true((uint64_t)back.i == UINT64_MAX - 2047);
    /* int64 above 2^53 to float32: one rounding, not two through double */
    ScalarVal s = {0, (1ll << 62) + (1ll << 38) + 1};
    assert_true(same_double(scalar_convert(DT_FLOAT32, DT_INT64, s).f, 0x1p62 + 0x1p39));
    RefWord w = {.i = s.i};
    ref_block_cast(DT_FLOAT32, DT_INT64, &w, 1);
    assert_true(same_double(w.f, 0x1p62 + 0x1p39));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_max_nan),
        cmocka_unit_test(test_reference_blocks),
        cmocka_unit_test(test_mulacc_rounds_twice),
        cmocka_unit_test(test_int_to_float),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
