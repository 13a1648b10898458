/* scalar_eval.c - scalar value semantics shared by the interpreters (see
 * scalar_eval.h). */
#include "scalar_eval.h"

#include "backend.h"

#include <math.h>
#include <string.h>

static double round_float(const DType *dt, double v) {
    switch (dt->sk) {
    case SK_FLOAT32: return (double)(float)v;
    case SK_FLOAT16: return (double)(_Float16)v;
    case SK_BFLOAT16: return isnan(v) ? v : bf16_to_double(bf16_from_double(v));
    default: return v;
    }
}

ScalarVal scalar_from_float(const DType *dt, double f) {
    ScalarVal v = {0, 0};
    if (dt_is_float(dt)) v.f = round_float(dt, f);
    else if (dt_is_bool(dt)) v.i = f != 0;
    /* truncation, as x86-64 converts (dt_float_to_int) */
    else v.i = dt_float_to_int(dt, f);
    return v;
}

/* An integer to a float dtype rounded once, as LLVM's sitofp/uitofp do:
 * going through double first would round twice for integers above 2^53. */
static double int_to_float(const DType *dt, int64_t i, bool is_unsigned) {
    uint64_t u = (uint64_t)i;
    switch (dt->sk) {
    case SK_FLOAT32: return is_unsigned ? (double)(float)u : (double)(float)i;
    case SK_FLOAT16: return is_unsigned ? (double)(_Float16)u : (double)(_Float16)i;
    case SK_FLOAT64: return is_unsigned ? (double)u : (double)i;
    /* bfloat16 through float, as the renderer casts it */
    default: return round_float(dt, is_unsigned ? (double)(float)u : (double)(float)i);
    }
}

ScalarVal scalar_from_int(const DType *dt, int64_t i) {
    ScalarVal v = {0, 0};
    if (dt_is_float(dt)) v.f = int_to_float(dt, i, false);
    else if (dt_is_bool(dt)) v.i = i != 0;
    else v.i = dt_wrap_int(dt, i);
    return v;
}

ScalarVal scalar_from_uint(const DType *dt, uint64_t u) {
    if (dt_is_float(dt)) return (ScalarVal){int_to_float(dt, (int64_t)u, true), 0};
    return scalar_from_int(dt, (int64_t)u);
}

ScalarVal scalar_convert(const DType *to, const DType *from, ScalarVal x) {
    if (dt_is_float(from)) return scalar_from_float(to, x.f);
    if (dt_is_unsigned(from)) return scalar_from_uint(to, (uint64_t)x.i);
    return scalar_from_int(to, x.i);
}

ScalarVal scalar_read(const DType *dt, const void *p, size_t k) {
    switch (dt->sk) {
    case SK_BOOL: return scalar_from_int(dt, ((const unsigned char *)p)[k]);
    case SK_INT8: return scalar_from_int(dt, ((const int8_t *)p)[k]);
    case SK_UINT8: return scalar_from_int(dt, ((const uint8_t *)p)[k]);
    case SK_INT16: return scalar_from_int(dt, ((const int16_t *)p)[k]);
    case SK_UINT16: return scalar_from_int(dt, ((const uint16_t *)p)[k]);
    case SK_INT32: return scalar_from_int(dt, ((const int32_t *)p)[k]);
    case SK_UINT32: return scalar_from_int(dt, ((const uint32_t *)p)[k]);
    case SK_INT64: case SK_INDEX: return scalar_from_int(dt, ((const int64_t *)p)[k]);
    case SK_UINT64: return scalar_from_int(dt, (int64_t)((const uint64_t *)p)[k]);
    case SK_FLOAT16: return scalar_from_float(dt, (double)((const _Float16 *)p)[k]);
    case SK_BFLOAT16: return scalar_from_float(dt, bf16_to_double(((const uint16_t *)p)[k]));
    case SK_FLOAT32: return scalar_from_float(dt, ((const float *)p)[k]);
    case SK_FLOAT64: return scalar_from_float(dt, ((const double *)p)[k]);
    default: return scalar_from_int(dt, 0);
    }
}

bool scalar_write(const DType *dt, void *p, size_t k, ScalarVal v) {
    switch (dt->sk) {
    case SK_BOOL: ((unsigned char *)p)[k] = v.i != 0; return true;
    case SK_INT8: ((int8_t *)p)[k] = (int8_t)v.i; return true;
    case SK_UINT8: ((uint8_t *)p)[k] = (uint8_t)v.i; return true;
    case SK_INT16: ((int16_t *)p)[k] = (int16_t)v.i; return true;
    case SK_UINT16: ((uint16_t *)p)[k] = (uint16_t)v.i; return true;
    case SK_INT32: ((int32_t *)p)[k] = (int32_t)v.i; return true;
    case SK_UINT32: ((uint32_t *)p)[k] = (uint32_t)v.i; return true;
    case SK_INT64: case SK_INDEX: ((int64_t *)p)[k] = v.i; return true;
    case SK_UINT64: ((uint64_t *)p)[k] = (uint64_t)v.i; return true;
    case SK_FLOAT16: ((_Float16 *)p)[k] = (_Float16)v.f; return true;
    case SK_BFLOAT16: ((uint16_t *)p)[k] = bf16_from_double(v.f); return true;
    case SK_FLOAT32: ((float *)p)[k] = (float)v.f; return true;
    case SK_FLOAT64: ((double *)p)[k] = v.f; return true;
    default: return false;
    }
}

const char *scalar_alu(Op op, const DType *dt, const DType *sdt, int nsrc, const ScalarVal *s, ScalarVal *out) {
    bool fl = dt_is_float(sdt);
    if (op_is(op, OPF_COMPARISON)) {
        bool r;
        /* float CMPLT is LLVM's unordered "ult", as tinygrad renders it: true
         * when either side is NaN; CMPNE is "une" and CMPEQ "oeq" */
        if (fl) r = op == OP_CMPLT ? !(s[0].f >= s[1].f) : op == OP_CMPNE ? s[0].f != s[1].f : s[0].f == s[1].f;
        else if (dt_is_unsigned(sdt) && op == OP_CMPLT) r = (uint64_t)s[0].i < (uint64_t)s[1].i;
        else r = op == OP_CMPLT ? s[0].i < s[1].i : op == OP_CMPNE ? s[0].i != s[1].i : s[0].i == s[1].i;
        *out = scalar_from_int(dt, r);
        return NULL;
    }
    if (fl) {
        double a = s[0].f, b = nsrc > 1 ? s[1].f : 0, r;
        switch (op) {
        case OP_ADD: r = a + b; break;
        case OP_SUB: r = a - b; break;
        case OP_MUL: r = a * b; break;
        case OP_FDIV: r = a / b; break;
        case OP_MAX: r = scalar_max_float(a, b); break;
        case OP_NEG: r = -a; break;
        case OP_RECIPROCAL: r = 1.0 / a; break;
        case OP_SQRT: r = sqrt(a); break;
        case OP_EXP2: r = exp2(a); break;
        case OP_LOG2: r = log2(a); break;
        case OP_SIN: r = sin(a); break;
        case OP_TRUNC: r = trunc(a); break;
        case OP_POW: r = pow(a, b); break;
        /* the renderer draws MULACC as a multiply and an add, each rounded to
         * the dtype (no fusing, as tinygrad's LLVM code for a*b+c) */
        case OP_MULACC: r = round_float(dt, a * b) + s[2].f; break;
        default: return "no float semantics for this op";
        }
        *out = scalar_from_float(dt, r);
        return NULL;
    }
    uint64_t a = (uint64_t)s[0].i, b = nsrc > 1 ? (uint64_t)s[1].i : 0;
    int64_t r;
    switch (op) {
    case OP_ADD: r = (int64_t)(a + b); break;
    case OP_SUB: r = (int64_t)(a - b); break;
    case OP_MUL: r = (int64_t)(a * b); break;
    case OP_NEG: r = (int64_t)(0 - a); break;
    case OP_TRUNC: r = s[0].i; break; /* an integer is its own truncation, as the renderer has it */
    case OP_MULACC: r = (int64_t)(a * b + (uint64_t)s[2].i); break;
    case OP_AND: r = (int64_t)(a & b); break;
    case OP_OR: r = (int64_t)(a | b); break;
    case OP_XOR: r = (int64_t)(a ^ b); break;
    /* the amount modulo the bit width, as the renderer masks it */
    case OP_SHL: r = (int64_t)(a << dt_shift_amount(dt, b)); break;
    case OP_SHR: r = dt_is_unsigned(dt) ? (int64_t)(a >> dt_shift_amount(dt, b)) : s[0].i >> dt_shift_amount(dt, b); break;
    case OP_MAX: r = dt_is_unsigned(dt) ? (int64_t)(a > b ? a : b) : (s[0].i > s[1].i ? s[0].i : s[1].i); break;
    case OP_IDIV:
    case OP_MOD:
        if (b == 0) return "integer division by zero";
        if (dt_is_unsigned(dt)) r = (int64_t)(op == OP_IDIV ? a / b : a % b);
        else if (s[0].i == INT64_MIN && s[1].i == -1) r = op == OP_IDIV ? INT64_MIN : 0;
        else r = op == OP_IDIV ? s[0].i / s[1].i : s[0].i % s[1].i;
        break;
    case OP_POW: {
        /* repeated squaring, wrapping like the MULs it becomes */
        if (!dt_is_unsigned(sdt) && s[1].i < 0) return "integer POW with a negative exponent";
        uint64_t acc = 1, sq = a;
        for (uint64_t e = b; e; e >>= 1, sq *= sq)
            if (e & 1) acc *= sq;
        r = (int64_t)acc;
        break;
    }
    default: return "no integer semantics for this op";
    }
    *out = scalar_from_int(dt, r);
    return NULL;
}

ScalarFast scalar_fast_path(Op op, ScalarKind out, ScalarKind a, ScalarKind b) {
    if ((op != OP_ADD && op != OP_SUB && op != OP_MUL) || out != a || out != b) return SCALAR_FAST_NONE;
    int which = op == OP_ADD ? 0 : op == OP_SUB ? 1 : 2;
    if (out == SK_FLOAT32) return (ScalarFast)(SCALAR_FAST_F32_ADD + which);
    if (out == SK_FLOAT64) return (ScalarFast)(SCALAR_FAST_F64_ADD + which);
    if (out == SK_INDEX || out == SK_INT64) return (ScalarFast)(SCALAR_FAST_I64_ADD + which);
    return SCALAR_FAST_NONE;
}
