/* llvm_render.c - renders a linear program (tinygrad's linearized UOp list
 * for the CPU) to an LLVM module with the LLVM-C builder API.
 *
 * One function `void name(buffers..., int32 vars..., int32 core_id[, report])`
 * plus a wrapper `void name__entry(void **bufs, const int32_t *vars, int32_t
 * core_id, report)` that the JIT calls.  RANGE opens a loop (a PHI counter in
 * a header block; llvm_checks.c, with its interrupt polls), END closes it;
 * IF/ENDIF become a conditional branch; DEFINE_REG and DEFINE_LOCAL are stack
 * arrays (allocas in the first block, which the O2 pipeline promotes to
 * registers); a checked kernel checks each LOAD/STORE (llvm_checks.c).  Every
 * source must come earlier in the list; anything else is reported as an
 * error naming the op and node id.  For the NVPTX backend (llvm_ptx.c) the
 * same nodes make a GPU kernel instead: no core_id, no wrapper, no polls,
 * SPECIALs from the block and thread ids, DEFINE_LOCAL in shared memory,
 * BARRIER as bar.sync. */
#include "llvm_render_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/Core.h>


/* ---- a pointer-keyed map from UOp to its rendered value ---- */

static size_t ptr_hash(const void *p) {
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 33; x *= 0xff51afd7ed558ccdull; x ^= x >> 33;
    return (size_t)x;
}

ValEntry *lr_map_find(const ValMap *m, const UOp *k) {
    if (!m->cap) return NULL;
    for (size_t i = ptr_hash(k) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        if (m->e[i].key == k) return &m->e[i];
        if (!m->e[i].key) return NULL;
    }
}

/* Inserts k (which must be absent); returns its entry, NULL on OOM. */
static ValEntry *map_insert(ValMap *m, const UOp *k) {
    if ((m->len + 1) * 2 > m->cap) {
        size_t ncap = m->cap ? m->cap * 2 : 64;
        ValEntry *ne = calloc(ncap, sizeof *ne);
        if (!ne) return NULL;
        for (size_t i = 0; i < m->cap; i++) {
            if (!m->e[i].key) continue;
            size_t j = ptr_hash(m->e[i].key) & (ncap - 1);
            while (ne[j].key) j = (j + 1) & (ncap - 1);
            ne[j] = m->e[i];
        }
        free(m->e);
        m->e = ne;
        m->cap = ncap;
    }
    size_t i = ptr_hash(k) & (m->cap - 1);
    while (m->e[i].key) i = (i + 1) & (m->cap - 1);
    m->e[i] = (ValEntry){.key = k};
    m->len++;
    return &m->e[i];
}

/* ---- errors ---- */

void lr_fail(Render *r, const UOp *u, const char *fmt, ...) {
    if (r->failed) return;
    r->failed = true;
    if (!r->err || !r->errlen) return;
    int off = 0;
    if (u) off = snprintf(r->err, r->errlen, "%s %%%u: ", op_name(uop_op(u)), u->id);
    if (off < 0) off = 0;
    if ((size_t)off >= r->errlen) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->err + off, r->errlen - (size_t)off, fmt, ap);
    va_end(ap);
}


/* ---- types and constants ---- */

static LLVMTypeRef scalar_type(Render *r, ScalarKind sk) {
    switch (sk) {
    case SK_VOID: return LLVMVoidTypeInContext(r->ctx);
    case SK_BOOL: return LLVMInt1TypeInContext(r->ctx);
    case SK_INT8: case SK_UINT8: case SK_FP8E4M3: case SK_FP8E5M2: return LLVMInt8TypeInContext(r->ctx);
    case SK_INT16: case SK_UINT16: return LLVMInt16TypeInContext(r->ctx);
    case SK_INT32: case SK_UINT32: return LLVMInt32TypeInContext(r->ctx);
    case SK_INT64: case SK_UINT64: case SK_INDEX: return LLVMInt64TypeInContext(r->ctx);
    case SK_FLOAT16: return LLVMHalfTypeInContext(r->ctx);
    case SK_BFLOAT16: return LLVMBFloatTypeInContext(r->ctx);
    case SK_FLOAT32: return LLVMFloatTypeInContext(r->ctx);
    case SK_FLOAT64: return LLVMDoubleTypeInContext(r->ctx);
    default: return NULL;
    }
}

static bool is_fp8(const DType *d) { return d->sk == SK_FP8E4M3 || d->sk == SK_FP8E5M2; }

/* LLVM type of a value of dtype d: pointers are opaque, vectors are <n x T>. */
static LLVMTypeRef value_type(Render *r, const DType *d) {
    if (dt_is_ptr(d) && d->v > 1) return LLVMVectorType(LLVMPointerTypeInContext(r->ctx, 0), (unsigned)d->v);
    if (dt_is_ptr(d)) return LLVMPointerTypeInContext(r->ctx, 0);
    LLVMTypeRef s = scalar_type(r, d->sk);
    if (!s) return NULL;
    return d->count > 1 ? LLVMVectorType(s, (unsigned)d->count) : s;
}

/* An integer constant of type t (a scalar or a vector, splatted). */
static LLVMValueRef const_int_of(LLVMTypeRef t, long long v) {
    if (LLVMGetTypeKind(t) == LLVMVectorTypeKind) {
        unsigned n = LLVMGetVectorSize(t);
        LLVMValueRef e = LLVMConstInt(LLVMGetElementType(t), (unsigned long long)v, 1);
        LLVMValueRef parts[256];
        if (n > 256) return NULL;
        for (unsigned i = 0; i < n; i++) parts[i] = e;
        return LLVMConstVector(parts, n);
    }
    return LLVMConstInt(t, (unsigned long long)v, 1);
}

static LLVMValueRef const_real_of(LLVMTypeRef t, double v) {
    if (LLVMGetTypeKind(t) == LLVMVectorTypeKind) {
        unsigned n = LLVMGetVectorSize(t);
        LLVMValueRef e = LLVMConstReal(LLVMGetElementType(t), v);
        LLVMValueRef parts[256];
        if (n > 256) return NULL;
        for (unsigned i = 0; i < n; i++) parts[i] = e;
        return LLVMConstVector(parts, n);
    }
    return LLVMConstReal(t, v);
}

/* One scalar constant of dtype d (scalar) from a numeric arg. */
static LLVMValueRef const_scalar(Render *r, const UOp *u, const DType *d, const Arg *a) {
    LLVMTypeRef t = scalar_type(r, d->sk);
    if (!a || !t || d->sk == SK_VOID) { lr_fail(r, u, "needs a numeric arg and a value dtype"); return NULL; }
    if (is_fp8(d)) { lr_fail(r, u, "fp8 constants are not supported by the LLVM backend"); return NULL; }
    double f;
    int64_t i;
    switch (a->kind) {
    case ARG_INT: i = a->v.i; f = (double)a->v.i; break;
    case ARG_FLOAT: f = a->v.f; i = dt_is_float(d) ? 0 : dt_float_to_int(d, f); break;
    case ARG_BOOL: i = a->v.b; f = a->v.b; break;
    case ARG_INVALID:
        lr_fail(r, u, "the Invalid marker has no value; stage 15 (lower index dtype) removes it before rendering");
        return NULL;
    default: lr_fail(r, u, "arg is not a number"); return NULL;
    }
    if (dt_is_float(d)) return LLVMConstReal(t, f);
    if (dt_is_bool(d)) return LLVMConstInt(t, i != 0, 0);
    return LLVMConstInt(t, (unsigned long long)i, 1);
}

static LLVMValueRef render_const(Render *r, const UOp *u) {
    const DType *d = u->dtype;
    if (dt_is_ptr(d)) { lr_fail(r, u, "a constant cannot have a pointer dtype"); return NULL; }
    int n = d->count;
    if (n > 256) { lr_fail(r, u, "vector too wide (%d)", n); return NULL; }
    LLVMValueRef parts[256];
    if (uop_op(u) == OP_VCONST) {
        if (!u->arg || u->arg->kind != ARG_TUPLE || (int)u->arg->n != n) {
            lr_fail(r, u, "needs a tuple of %d values", n);
            return NULL;
        }
        for (int i = 0; i < n; i++)
            if (!(parts[i] = const_scalar(r, u, d->scalar, u->arg->items[i]))) return NULL;
    } else {
        LLVMValueRef s = const_scalar(r, u, d->scalar, u->arg);
        if (!s) return NULL;
        if (n == 1) return s;
        for (int i = 0; i < n; i++) parts[i] = s;
    }
    return n == 1 ? parts[0] : LLVMConstVector(parts, (unsigned)n);
}

/* ---- looking up sources ---- */

static bool is_invalid_const(const UOp *u) {
    return uop_op(u) == OP_CONST && u->arg && u->arg->kind == ARG_INVALID;
}

/* tinygrad's Invalid marker, or a vector of it */
static bool is_invalid_marker(const UOp *u) {
    if (is_invalid_const(u)) return true;
    if (uop_op(u) != OP_VECTORIZE || u->nsrc == 0) return false;
    for (int i = 0; i < u->nsrc; i++)
        if (!is_invalid_const(u->src[i])) return false;
    return true;
}

/* valid.where(idx, Invalid): an index valid only where valid holds (the
 * form before stage 15 makes valid the INDEX's gate); only an INDEX takes
 * it, as its index, so it has no value of its own */
static bool is_invalid_where(const UOp *u) {
    return uop_op(u) == OP_WHERE && u->nsrc == 3 && is_invalid_marker(u->src[2]);
}

/* The rendered value of source i of u.  Constants may be used without
 * appearing in the list; anything else must come earlier. */
static LLVMValueRef src_val(Render *r, const UOp *u, int i) {
    const UOp *s = u->src[i];
    ValEntry *e = lr_map_find(&r->vals, s);
    if (!e) {
        if (uop_op(s) == OP_CONST || uop_op(s) == OP_VCONST) return render_const(r, s);
        lr_fail(r, u, "source %d is %s %%%u, which does not come before it in the program (not a linear program?)", i,
             op_name(uop_op(s)), s->id);
        return NULL;
    }
    if (!e->val && (is_invalid_marker(s) || is_invalid_where(s))) {
        lr_fail(r, u, "source %d, %s %%%u, is Invalid (where a condition fails), which has no value: only an INDEX "
                      "takes it, as its index; stage 15 (lower index dtype) makes the condition a gate", i,
                op_name(uop_op(s)), s->id);
        return NULL;
    }
    if (!e->val) {
        lr_fail(r, u, "source %d, %s %%%u, has no value", i, op_name(uop_op(s)), s->id);
        return NULL;
    }
    return e->val;
}

/* The INDEX a LOAD/STORE address comes from, looking through pointer CASTs and AFTERs. */
const UOp *lr_address_index(const UOp *p) {
    while ((uop_op(p) == OP_CAST || uop_op(p) == OP_AFTER) && p->nsrc >= 1) p = p->src[0];
    return uop_op(p) == OP_INDEX ? p : NULL;
}

static LLVMValueRef gate_of(Render *r, const UOp *addr) {
    const UOp *ix = lr_address_index(addr);
    if (!ix) return NULL;
    ValEntry *e = lr_map_find(&r->vals, ix);
    return e ? e->gate : NULL;
}

static LLVMValueRef call_intrinsic(Render *r, const char *name, LLVMTypeRef overload, LLVMValueRef *args,
                                   unsigned nargs, const char *vname) {
    unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
    if (!id) return NULL;
    LLVMValueRef fn = LLVMGetIntrinsicDeclaration(r->mod, id, &overload, 1);
    LLVMTypeRef fty = LLVMIntrinsicGetType(r->ctx, id, &overload, 1);
    return LLVMBuildCall2(r->b, fty, fn, args, nargs, vname);
}

/* ---- ALU ---- */

static bool is_unsigned_like(const DType *d) { return dt_is_unsigned(d) || dt_is_bool(d); }

/* a / b or a % b with C semantics, defined for b == 0 (gives 0) and for
 * INT_MIN / -1 (wraps), so that no input traps. */
static LLVMValueRef safe_divmod(Render *r, bool is_div, bool is_signed, LLVMValueRef a, LLVMValueRef b,
                                const char *nm) {
    LLVMTypeRef t = LLVMTypeOf(a);
    LLVMValueRef zero = LLVMConstNull(t), one = const_int_of(t, 1);
    LLVMValueRef isz = LLVMBuildICmp(r->b, LLVMIntEQ, b, zero, "");
    if (!is_signed || LLVMGetIntTypeWidth(LLVMGetTypeKind(t) == LLVMVectorTypeKind ? LLVMGetElementType(t) : t) == 1) {
        LLVMValueRef sb = LLVMBuildSelect(r->b, isz, one, b, "");
        LLVMValueRef q = is_div ? LLVMBuildUDiv(r->b, a, sb, "") : LLVMBuildURem(r->b, a, sb, "");
        return LLVMBuildSelect(r->b, isz, zero, q, nm);
    }
    LLVMValueRef m1 = const_int_of(t, -1);
    LLVMValueRef isneg1 = LLVMBuildICmp(r->b, LLVMIntEQ, b, m1, "");
    LLVMValueRef special = LLVMBuildOr(r->b, isz, isneg1, "");
    LLVMValueRef sb = LLVMBuildSelect(r->b, special, one, b, "");
    LLVMValueRef q = is_div ? LLVMBuildSDiv(r->b, a, sb, "") : LLVMBuildSRem(r->b, a, sb, "");
    LLVMValueRef neg1_result = is_div ? LLVMBuildSub(r->b, zero, a, "") : zero;
    LLVMValueRef v = LLVMBuildSelect(r->b, isneg1, neg1_result, q, "");
    return LLVMBuildSelect(r->b, isz, zero, v, nm);
}

/* Nodes from the text parser are not checked when built, so the renderer
 * checks what LLVM itself would reject. */
static bool same_dtypes(Render *r, const UOp *u, int i, int j) {
    if (u->src[i]->dtype == u->src[j]->dtype) return true;
    char b1[64], b2[64];
    dt_str(u->src[i]->dtype, b1, sizeof b1), dt_str(u->src[j]->dtype, b2, sizeof b2);
    lr_fail(r, u, "sources %d and %d have different dtypes, %s and %s", i, j, b1, b2);
    return false;
}

static LLVMValueRef render_binary(Render *r, const UOp *u, const char *nm) {
    if (!same_dtypes(r, u, 0, 1)) return NULL;
    LLVMValueRef a = src_val(r, u, 0), b = a ? src_val(r, u, 1) : NULL;
    if (!a || !b) return NULL;
    const DType *sd = u->src[0]->dtype;
    if (dt_is_ptr(sd)) { lr_fail(r, u, "pointer operands are not supported"); return NULL; }
    if (is_fp8(sd)) { lr_fail(r, u, "fp8 arithmetic is not supported by the LLVM backend"); return NULL; }
    bool fl = dt_is_float(sd), uns = is_unsigned_like(sd);
    Op op = uop_op(u);
    switch (op) {
    case OP_ADD: return fl ? LLVMBuildFAdd(r->b, a, b, nm) : LLVMBuildAdd(r->b, a, b, nm);
    case OP_SUB: return fl ? LLVMBuildFSub(r->b, a, b, nm) : LLVMBuildSub(r->b, a, b, nm);
    case OP_MUL: return fl ? LLVMBuildFMul(r->b, a, b, nm) : LLVMBuildMul(r->b, a, b, nm);
    case OP_FDIV:
        if (!fl) { lr_fail(r, u, "FDIV needs float sources"); return NULL; }
        return LLVMBuildFDiv(r->b, a, b, nm);
    case OP_IDIV:
    case OP_MOD:
        if (fl) { lr_fail(r, u, "%s needs integer sources", op_name(op)); return NULL; }
        return safe_divmod(r, op == OP_IDIV, !uns, a, b, nm);
    case OP_MAX: {
        /* tinygrad's LLVM renderer has no MAX: it becomes (a < b).where(b, a)
         * with its float "<" (ult), so NaN in b wins and NaN in a alone loses */
        LLVMValueRef lt = fl ? LLVMBuildFCmp(r->b, LLVMRealULT, a, b, "")
                             : LLVMBuildICmp(r->b, uns ? LLVMIntULT : LLVMIntSLT, a, b, "");
        return LLVMBuildSelect(r->b, lt, b, a, nm);
    }
    case OP_CMPLT:
        /* float "<" is unordered, as tinygrad renders it: true with a NaN */
        return fl ? LLVMBuildFCmp(r->b, LLVMRealULT, a, b, nm) : LLVMBuildICmp(r->b, uns ? LLVMIntULT : LLVMIntSLT, a, b, nm);
    case OP_CMPNE: return fl ? LLVMBuildFCmp(r->b, LLVMRealUNE, a, b, nm) : LLVMBuildICmp(r->b, LLVMIntNE, a, b, nm);
    case OP_CMPEQ: return fl ? LLVMBuildFCmp(r->b, LLVMRealOEQ, a, b, nm) : LLVMBuildICmp(r->b, LLVMIntEQ, a, b, nm);
    case OP_AND: case OP_OR: case OP_XOR: case OP_SHL: case OP_SHR:
        if (fl) { lr_fail(r, u, "%s needs integer or bool sources", op_name(op)); return NULL; }
        if (op == OP_AND) return LLVMBuildAnd(r->b, a, b, nm);
        if (op == OP_OR) return LLVMBuildOr(r->b, a, b, nm);
        if (op == OP_XOR) return LLVMBuildXor(r->b, a, b, nm);
        {
            /* the amount modulo the bit width (dt_shift_amount), so no shift
             * is over-wide (poison in LLVM) */
            int bits = sd->sk == SK_INDEX ? 64 : dt_bitsize(sd);
            LLVMValueRef mask = bits > 1 ? const_int_of(LLVMTypeOf(b), bits - 1) : NULL;
            if (mask) b = LLVMBuildAnd(r->b, b, mask, "");
        }
        if (op == OP_SHL) return LLVMBuildShl(r->b, a, b, nm);
        return uns ? LLVMBuildLShr(r->b, a, b, nm) : LLVMBuildAShr(r->b, a, b, nm);
    case OP_POW: {
        if (!fl) { lr_fail(r, u, "POW needs float sources"); return NULL; }
        LLVMValueRef args[2] = {a, b};
        return call_intrinsic(r, "llvm.pow", LLVMTypeOf(a), args, 2, nm);
    }
    default: lr_fail(r, u, "not supported by the LLVM backend"); return NULL;
    }
}

static LLVMValueRef render_unary(Render *r, const UOp *u, const char *nm) {
    LLVMValueRef a = src_val(r, u, 0);
    if (!a) return NULL;
    const DType *d = u->src[0]->dtype;
    if (is_fp8(d)) { lr_fail(r, u, "fp8 arithmetic is not supported by the LLVM backend"); return NULL; }
    bool fl = dt_is_float(d);
    Op op = uop_op(u);
    if (op == OP_NEG) {
        if (fl) return LLVMBuildFNeg(r->b, a, nm);
        return dt_is_bool(d) ? LLVMBuildNot(r->b, a, nm) : LLVMBuildNeg(r->b, a, nm);
    }
    if (op == OP_TRUNC && !fl) return a;
    if (!fl) { lr_fail(r, u, "needs a float source, got an integer"); return NULL; }
    if (op == OP_RECIPROCAL) return LLVMBuildFDiv(r->b, const_real_of(LLVMTypeOf(a), 1.0), a, nm);
    const char *in = op == OP_EXP2 ? "llvm.exp2" : op == OP_LOG2 ? "llvm.log2" : op == OP_SIN ? "llvm.sin"
                   : op == OP_SQRT ? "llvm.sqrt" : op == OP_TRUNC ? "llvm.trunc" : NULL;
    if (!in) { lr_fail(r, u, "not supported by the LLVM backend"); return NULL; }
    return call_intrinsic(r, in, LLVMTypeOf(a), &a, 1, nm);
}

/* A float to an integer dtype as x86-64 converts it (dt_float_to_int): the
 * value x86 gives where LLVM's plain fptosi/fptoui, which tinygrad emits,
 * would be poison.  The conversion is LLVM's plain one on a value made to
 * lie in range first (0 where it does not), so it is defined for every
 * value and stays one vector instruction (the saturating intrinsics are
 * split into scalar code on x86), then a select of the out-of-range answer:
 *   int8/16/32, uint8/16: through int32; NaN, below -2^31 or from 2^31:
 *   0x80000000, then truncated
 *   int64, index: NaN, below -2^63 or from 2^63: INT64_MIN
 *   uint32/64: NaN, -1 and below, or from 2^32 / 2^64: all ones */
static LLVMValueRef render_float_to_int(Render *r, LLVMValueRef a, const DType *to, const char *nm) {
    LLVMTypeRef at = LLVMTypeOf(a), tt = value_type(r, to);
    bool is_vec = LLVMGetTypeKind(at) == LLVMVectorTypeKind;
    unsigned lanes = is_vec ? LLVMGetVectorSize(at) : 1;
    int bits = to->sk == SK_INDEX ? 64 : dt_bitsize(to);
    bool is_unsigned = dt_is_unsigned(to) && bits >= 32;
    int via = is_unsigned || bits >= 64 ? bits : 32;
    LLVMTypeRef it = LLVMIntTypeInContext(r->ctx, (unsigned)via);
    if (is_vec) it = LLVMVectorType(it, lanes);
    /* the range the conversion is defined on, false for NaN */
    double lo = is_unsigned ? -1.0 : -ldexp(1.0, via - 1), hi = ldexp(1.0, is_unsigned ? via : via - 1);
    LLVMValueRef above = LLVMBuildFCmp(r->b, is_unsigned ? LLVMRealOGT : LLVMRealOGE, a, const_real_of(at, lo), "");
    LLVMValueRef below = LLVMBuildFCmp(r->b, LLVMRealOLT, a, const_real_of(at, hi), "");
    LLVMValueRef ok = LLVMBuildAnd(r->b, above, below, "");
    LLVMValueRef in_range = LLVMBuildSelect(r->b, ok, a, LLVMConstNull(at), "");
    LLVMValueRef conv = is_unsigned ? LLVMBuildFPToUI(r->b, in_range, it, "") : LLVMBuildFPToSI(r->b, in_range, it, "");
    long long out_of_range = is_unsigned ? -1 : via == 64 ? INT64_MIN : INT32_MIN;
    LLVMValueRef v = LLVMBuildSelect(r->b, ok, conv, const_int_of(it, out_of_range), via == bits ? nm : "");
    return via == bits ? v : LLVMBuildTrunc(r->b, v, tt, nm);
}

/* CAST with C semantics; to bool means != 0. */
static LLVMValueRef render_cast(Render *r, const UOp *u, const char *nm) {
    LLVMValueRef a = src_val(r, u, 0);
    if (!a) return NULL;
    const DType *from = u->src[0]->dtype, *to = u->dtype;
    if (dt_is_ptr(to) || dt_is_ptr(from)) {
        if (dt_is_ptr(to) && dt_is_ptr(from)) return a;
        lr_fail(r, u, "cannot cast between a pointer and a value");
        return NULL;
    }
    char b1[64], b2[64];
    if (from->count != to->count) {
        dt_str(from, b1, sizeof b1), dt_str(to, b2, sizeof b2);
        lr_fail(r, u, "cannot cast %s to %s: vector widths differ", b1, b2);
        return NULL;
    }
    if (is_fp8(from) || is_fp8(to)) { lr_fail(r, u, "fp8 casts are not supported by the LLVM backend"); return NULL; }
    if (to->sk == SK_VOID || from->sk == SK_VOID) { lr_fail(r, u, "cannot cast void"); return NULL; }
    LLVMTypeRef tt = value_type(r, to);
    if (dt_is_bool(to)) {
        if (dt_is_bool(from)) return a;
        LLVMValueRef z = LLVMConstNull(LLVMTypeOf(a));
        return dt_is_float(from) ? LLVMBuildFCmp(r->b, LLVMRealUNE, a, z, nm) : LLVMBuildICmp(r->b, LLVMIntNE, a, z, nm);
    }
    if (tt == LLVMTypeOf(a)) return a;   /* int32 <-> uint32 etc. */
    if (dt_is_float(from) && dt_is_float(to)) {
        int fb = dt_bitsize(from), tb = dt_bitsize(to);
        if (fb == tb) {   /* half <-> bfloat: through float */
            LLVMValueRef f = LLVMBuildFPExt(r->b, a, value_type(r, dt_vec(DT_FLOAT32, to->count)), "");
            return LLVMBuildFPTrunc(r->b, f, tt, nm);
        }
        return tb > fb ? LLVMBuildFPExt(r->b, a, tt, nm) : LLVMBuildFPTrunc(r->b, a, tt, nm);
    }
    if (dt_is_float(from)) return render_float_to_int(r, a, to, nm);
    if (dt_is_float(to)) return is_unsigned_like(from) ? LLVMBuildUIToFP(r->b, a, tt, nm) : LLVMBuildSIToFP(r->b, a, tt, nm);
    int fb = dt_bitsize(from), tb = dt_bitsize(to);
    if (from->sk == SK_INDEX) fb = 64;
    if (to->sk == SK_INDEX) tb = 64;
    if (tb < fb) return LLVMBuildTrunc(r->b, a, tt, nm);
    return is_unsigned_like(from) ? LLVMBuildZExt(r->b, a, tt, nm) : LLVMBuildSExt(r->b, a, tt, nm);
}

static LLVMValueRef render_bitcast(Render *r, const UOp *u, const char *nm) {
    LLVMValueRef a = src_val(r, u, 0);
    if (!a) return NULL;
    const DType *from = u->src[0]->dtype, *to = u->dtype;
    if (dt_is_ptr(from) || dt_is_ptr(to)) {
        if (dt_is_ptr(from) && dt_is_ptr(to)) return a;
        lr_fail(r, u, "cannot bitcast between a pointer and a value");
        return NULL;
    }
    if (dt_itemsize(from) != dt_itemsize(to)) {
        char b1[64], b2[64];
        dt_str(from, b1, sizeof b1), dt_str(to, b2, sizeof b2);
        lr_fail(r, u, "cannot bitcast %s to %s: sizes differ", b1, b2);
        return NULL;
    }
    if (from->sk == SK_BOOL || to->sk == SK_BOOL) {
        /* a bool is an i1 held in a byte: through i8, nonzero bytes read as true */
        if (from->sk == to->sk) return a;
        LLVMTypeRef byte = LLVMInt8TypeInContext(r->ctx);
        int w = dt_vcount(to);
        if (w > 1) byte = LLVMVectorType(byte, (unsigned)w);
        if (from->sk == SK_BOOL) return LLVMBuildBitCast(r->b, LLVMBuildZExt(r->b, a, byte, ""), value_type(r, to), nm);
        return LLVMBuildICmp(r->b, LLVMIntNE, LLVMBuildBitCast(r->b, a, byte, ""), LLVMConstNull(byte), nm);
    }
    return LLVMBuildBitCast(r->b, a, value_type(r, to), nm);
}

static LLVMValueRef render_gep(Render *r, const UOp *u, const char *nm) {
    LLVMValueRef a = src_val(r, u, 0);
    if (!a) return NULL;
    const Arg *arg = u->arg;
    int w = dt_vcount(u->src[0]->dtype);
    if (dt_is_ptr(u->src[0]->dtype)) { lr_fail(r, u, "GEP of a vector of pointers is not supported"); return NULL; }
    if (!arg || arg->kind != ARG_TUPLE || arg->n == 0 || arg->n > 256) { lr_fail(r, u, "needs a tuple of element indices"); return NULL; }
    LLVMTypeRef i32 = LLVMInt32TypeInContext(r->ctx);
    LLVMValueRef mask[256];
    for (uint32_t i = 0; i < arg->n; i++) {
        const Arg *it = arg->items[i];
        if (!it || it->kind != ARG_INT || it->v.i < 0 || it->v.i >= w) {
            lr_fail(r, u, "element %u is out of range for a vector of %d", i, w);
            return NULL;
        }
        mask[i] = LLVMConstInt(i32, (unsigned long long)it->v.i, 0);
    }
    if (dt_is_ptr(u->dtype) || dt_vcount(u->dtype) != (int)arg->n || u->dtype->scalar != u->src[0]->dtype->scalar) {
        lr_fail(r, u, "its dtype must be %u elements of its source's type", arg->n);
        return NULL;
    }
    if (w == 1) {   /* a scalar: GEP 0 is the value itself; several give a splat */
        if (arg->n == 1) return a;
        LLVMValueRef v = LLVMGetPoison(value_type(r, u->dtype));
        for (uint32_t i = 0; i < arg->n; i++) v = LLVMBuildInsertElement(r->b, v, a, LLVMConstInt(i32, i, 0), "");
        return v;
    }
    if (arg->n == 1) return LLVMBuildExtractElement(r->b, a, mask[0], nm);
    return LLVMBuildShuffleVector(r->b, a, LLVMGetPoison(LLVMTypeOf(a)), LLVMConstVector(mask, arg->n), nm);
}

/* A vector of pointers: one buffer's pointer in every lane (the expander's
 * form before stage 14 devectorizes it), indexed lane by lane by INDEX and
 * loaded or stored lane by lane. */
static LLVMValueRef render_pointer_vector(Render *r, const UOp *u, const char *nm) {
    if (u->dtype->v != u->nsrc) {
        lr_fail(r, u, "a VECTORIZE of %d pointers needs a vector count of %d", u->nsrc, u->nsrc);
        return NULL;
    }
    for (int i = 1; i < u->nsrc; i++)
        if (u->src[i] != u->src[0]) { lr_fail(r, u, "vectors of different pointers are not supported"); return NULL; }
    if (u->src[0]->dtype != u->dtype->ptr_scalar) { lr_fail(r, u, "its sources are not pointers of its type"); return NULL; }
    LLVMValueRef p = src_val(r, u, 0);
    if (!p) return NULL;
    LLVMTypeRef i32 = LLVMInt32TypeInContext(r->ctx);
    LLVMValueRef v = LLVMGetPoison(value_type(r, u->dtype));
    for (int i = 0; i < u->nsrc; i++)
        v = LLVMBuildInsertElement(r->b, v, p, LLVMConstInt(i32, (unsigned)i, 0), i + 1 == u->nsrc ? nm : "");
    return v;
}

static LLVMValueRef render_vectorize(Render *r, const UOp *u, const char *nm) {
    LLVMTypeRef t = value_type(r, u->dtype);
    if (dt_is_ptr(u->dtype)) return render_pointer_vector(r, u, nm);
    if (u->nsrc == 0 || dt_vcount(u->dtype) != u->nsrc) {
        lr_fail(r, u, "a VECTORIZE of %d sources needs a vector count of %d", u->nsrc, u->nsrc);
        return NULL;
    }
    if (u->nsrc == 1) return src_val(r, u, 0);
    LLVMTypeRef i32 = LLVMInt32TypeInContext(r->ctx);
    LLVMValueRef v = LLVMGetPoison(t);
    for (int i = 0; i < u->nsrc; i++) {
        LLVMValueRef s = src_val(r, u, i);
        if (!s) return NULL;
        if (u->src[i]->dtype != u->dtype->scalar) { lr_fail(r, u, "source %d is not a scalar of the vector's type", i); return NULL; }
        v = LLVMBuildInsertElement(r->b, v, s, LLVMConstInt(i32, (unsigned)i, 0), i + 1 == u->nsrc ? nm : "");
    }
    return v;
}

/* ---- memory ---- */

static unsigned scalar_align(const DType *d) {
    int s = dt_itemsize(d->scalar ? d->scalar : d);
    return s > 0 ? (unsigned)s : 1;
}

static LLVMValueRef load_lanes(Render *r, const UOp *mem, const DType *pd, LLVMValueRef p, LLVMValueRef gate,
                               const DType *vd, const char *nm);
static LLVMValueRef load_one(Render *r, const UOp *mem, const DType *vd, LLVMValueRef p, LLVMValueRef gate,
                             LLVMValueRef alt, int lane, const char *nm);

static LLVMValueRef render_index(Render *r, const UOp *u, ValEntry *self, const char *nm) {
    const DType *pd = u->src[0]->dtype;
    if (!dt_is_ptr(pd)) { lr_fail(r, u, "source 0 must be a pointer (DEFINE_GLOBAL, DEFINE_REG, DEFINE_LOCAL)"); return NULL; }
    LLVMValueRef base = src_val(r, u, 0);
    if (!base) return NULL;
    if (u->nsrc == 1) return base;
    /* a value INDEX (the scheduler's form, before stage 13 adds the LOADs)
     * loads what it addresses */
    bool value = !dt_is_ptr(u->dtype);
    if (value && (pd->v == 1 ? u->dtype != pd->base
                             : u->dtype->scalar != pd->base->scalar || pd->base->count != 1 || u->dtype->count != pd->v)) {
        lr_fail(r, u, "a value INDEX loads what its pointer points to (a lane each, for a vector of pointers)");
        return NULL;
    }
    if (!value && pd->v > 1 && u->dtype != pd) {
        lr_fail(r, u, "a vector of pointers is indexed into a vector of pointers");
        return NULL;
    }
    /* an index that is Invalid where a condition fails: the condition gates */
    const UOp *ix = u->src[1], *ixgate = NULL;
    if (is_invalid_where(ix)) ixgate = ix->src[0], ix = ix->src[1];
    const DType *id = ix->dtype;
    if (!dt_is_int(id) || id->count != pd->v || dt_is_ptr(id)) {
        char b[64];
        dt_str(id, b, sizeof b);
        lr_fail(r, u, "the index (source 1) must be %s integer, got %s", pd->v > 1 ? "a vector of one" : "a scalar", b);
        return NULL;
    }
    LLVMValueRef idx = ixgate ? src_val(r, u->src[1], 1) : src_val(r, u, 1);
    if (!idx) return NULL;
    for (int g = 0; g < 2; g++) {
        const UOp *gu = g == 0 ? ixgate : u->nsrc >= 3 ? u->src[2] : NULL;
        if (!gu) continue;
        if (!dt_is_bool(gu->dtype) || dt_is_ptr(gu->dtype) || (gu->dtype->count != 1 && gu->dtype->count != pd->v)) {
            lr_fail(r, u, "the gate must be a bool (a bool a lane, for a vector of pointers)");
            return NULL;
        }
        LLVMValueRef gv = g == 0 ? src_val(r, u->src[1], 0) : src_val(r, u, 2);
        if (!gv) return NULL;
        if (self->gate && LLVMTypeOf(self->gate) != LLVMTypeOf(gv)) {
            lr_fail(r, u, "its two gates differ in width");
            return NULL;
        }
        self->gate = self->gate ? LLVMBuildAnd(r->b, self->gate, gv, "") : gv;
    }
    LLVMTypeRef et = value_type(r, pd->base);
    if (!et || pd->base->sk == SK_VOID) { lr_fail(r, u, "cannot index a pointer to void"); return NULL; }
    self->offset = idx;
    LLVMValueRef addr = LLVMBuildGEP2(r->b, et, base, &idx, 1, value ? "" : nm);
    if (!value) return addr;
    self->addr = addr;
    if (pd->v > 1) return load_lanes(r, u, pd, addr, self->gate, u->dtype, nm);
    return load_one(r, u, u->dtype, addr, self->gate, self->gate ? LLVMConstNull(et) : NULL, -1, nm);
}

LLVMBasicBlockRef lr_new_block(Render *r, const char *what, const UOp *u) {
    char nm[48];
    snprintf(nm, sizeof nm, "%s%u", what, u->id);
    return LLVMAppendBasicBlockInContext(r->ctx, r->fn, nm);
}

/* Loads a vd from p for mem (a LOAD or value INDEX; lane >= 0: through that
 * lane of a vector of pointers), checked, and only where gate is true when
 * there is one (alt elsewhere). */
static LLVMValueRef load_one(Render *r, const UOp *mem, const DType *vd, LLVMValueRef p, LLVMValueRef gate,
                             LLVMValueRef alt, int lane, const char *nm) {
    LLVMTypeRef t = value_type(r, vd);
    LLVMBasicBlockRef from = LLVMGetInsertBlock(r->b), yes = NULL, done = NULL;
    if (gate) {
        yes = lr_new_block(r, "load_gated", mem);
        done = lr_new_block(r, "load_done", mem);
        LLVMBuildCondBr(r->b, gate, yes, done);
        LLVMPositionBuilderAtEnd(r->b, yes);
    }
    lr_check_access(r, mem, vd, lane);
    LLVMValueRef v = LLVMBuildLoad2(r->b, t, p, gate ? "" : nm);
    LLVMSetAlignment(v, scalar_align(vd));
    if (!gate) return v;
    yes = LLVMGetInsertBlock(r->b);   /* the check may have moved it */
    LLVMBuildBr(r->b, done);
    LLVMPositionBuilderAtEnd(r->b, done);
    LLVMValueRef phi = LLVMBuildPhi(r->b, t, nm);
    LLVMValueRef vals[2] = {v, alt};
    LLVMBasicBlockRef blocks[2] = {yes, from};
    LLVMAddIncoming(phi, vals, blocks, 2);
    return phi;
}

/* Stores v (a vd) to p for mem, as load_one loads. */
static void store_one(Render *r, const UOp *mem, const DType *vd, LLVMValueRef p, LLVMValueRef v, LLVMValueRef gate,
                      int lane) {
    LLVMBasicBlockRef done = NULL;
    if (gate) {
        LLVMBasicBlockRef yes = lr_new_block(r, "store_gated", mem);
        done = lr_new_block(r, "store_done", mem);
        LLVMBuildCondBr(r->b, gate, yes, done);
        LLVMPositionBuilderAtEnd(r->b, yes);
    }
    lr_check_access(r, mem, vd, lane);
    LLVMSetAlignment(LLVMBuildStore(r->b, v, p), scalar_align(vd));
    if (gate) {
        LLVMBuildBr(r->b, done);
        LLVMPositionBuilderAtEnd(r->b, done);
    }
}

/* Whether a vector of pd pointers accesses values vd one scalar a lane. */
static bool lanes_fit(Render *r, const UOp *mem, const DType *pd, const DType *vd) {
    if (pd->v <= 256 && vd->count == pd->v && vd->scalar == pd->base->scalar && pd->base->count == 1) return true;
    lr_fail(r, mem, "a vector of %d pointers to %s accesses one scalar a lane", pd->v, sk_name(pd->base->sk));
    return false;
}

LLVMValueRef lr_extract(Render *r, LLVMValueRef v, int l) {
    return LLVMBuildExtractElement(r->b, v, LLVMConstInt(LLVMInt32TypeInContext(r->ctx), (unsigned)l, 0), "");
}

/* lane l of a gate: a bool vector has one a lane, a bool is every lane's */
static LLVMValueRef lane_gate(Render *r, LLVMValueRef gate, int l) {
    if (!gate || LLVMGetTypeKind(LLVMTypeOf(gate)) != LLVMVectorTypeKind) return gate;
    return lr_extract(r, gate, l);
}

/* A load through p, a vector of pointers of dtype pd: a lane at a time,
 * each checked and gated by its lane of gate (0 where it is false). */
static LLVMValueRef load_lanes(Render *r, const UOp *mem, const DType *pd, LLVMValueRef p, LLVMValueRef gate,
                               const DType *vd, const char *nm) {
    if (!lanes_fit(r, mem, pd, vd)) return NULL;
    LLVMValueRef v = LLVMGetPoison(value_type(r, vd)), zero = LLVMConstNull(value_type(r, vd->scalar));
    LLVMTypeRef i32 = LLVMInt32TypeInContext(r->ctx);
    for (int l = 0; l < vd->count; l++) {
        LLVMValueRef x = load_one(r, mem, vd->scalar, lr_extract(r, p, l), lane_gate(r, gate, l), zero, l, "");
        v = LLVMBuildInsertElement(r->b, v, x, LLVMConstInt(i32, (unsigned)l, 0), l + 1 == vd->count ? nm : "");
    }
    return v;
}

static void store_lanes(Render *r, const UOp *mem, const DType *pd, LLVMValueRef p, LLVMValueRef gate, LLVMValueRef v) {
    const DType *vd = mem->src[1]->dtype;
    if (!lanes_fit(r, mem, pd, vd)) return;
    for (int l = 0; l < vd->count; l++)
        store_one(r, mem, vd->scalar, lr_extract(r, p, l), lr_extract(r, v, l), lane_gate(r, gate, l), l);
}

static LLVMValueRef render_load(Render *r, const UOp *u, const char *nm) {
    if (!dt_is_ptr(u->src[0]->dtype)) { lr_fail(r, u, "source 0 must be an address (INDEX)"); return NULL; }
    if (dt_is_ptr(u->dtype) || u->dtype->sk == SK_VOID) { lr_fail(r, u, "needs a value dtype"); return NULL; }
    LLVMValueRef p = src_val(r, u, 0);
    if (!p) return NULL;
    LLVMValueRef gate = gate_of(r, u->src[0]);
    if (u->src[0]->dtype->v > 1) return load_lanes(r, u, u->src[0]->dtype, p, gate, u->dtype, nm);
    LLVMValueRef alt = NULL;
    if (gate && u->nsrc >= 2 && u->src[1]->dtype == u->dtype) {
        if (!(alt = src_val(r, u, 1))) return NULL;
    } else if (gate) {
        alt = LLVMConstNull(value_type(r, u->dtype));
    }
    return load_one(r, u, u->dtype, p, gate, alt, -1, nm);
}

static void render_store(Render *r, const UOp *u) {
    /* through a value INDEX (before stage 13): to the address it loaded from */
    const ValEntry *vx = uop_op(u->src[0]) == OP_INDEX ? lr_map_find(&r->vals, u->src[0]) : NULL;
    LLVMValueRef through = vx ? vx->addr : NULL;
    if (!dt_is_ptr(u->src[0]->dtype) && !through) { lr_fail(r, u, "source 0 must be an address (INDEX)"); return; }
    if (dt_is_ptr(u->src[1]->dtype) || u->src[1]->dtype->sk == SK_VOID) { lr_fail(r, u, "source 1 must be a value"); return; }
    LLVMValueRef p = through ? through : src_val(r, u, 0), v = p ? src_val(r, u, 1) : NULL;
    if (!v) return;
    const DType *pd = through ? u->src[0]->src[0]->dtype : u->src[0]->dtype;
    LLVMValueRef gate = gate_of(r, u->src[0]);
    if (pd->v > 1) store_lanes(r, u, pd, p, gate, v);
    else store_one(r, u, u->src[1]->dtype, p, v, gate, -1);
}

static LLVMValueRef render_stack_array(Render *r, const UOp *u, const char *nm) {
    const DType *d = u->dtype;
    if (!dt_is_ptr(d) || d->base->sk == SK_VOID) { lr_fail(r, u, "needs a pointer dtype with a size, e.g. float32.ptr(4, reg)"); return NULL; }
    if (d->size <= 0 || d->size > (1 << 24)) { lr_fail(r, u, "needs a size between 1 and 16777216, got %lld", (long long)d->size); return NULL; }
    LLVMTypeRef at = LLVMArrayType2(value_type(r, d->base), (uint64_t)d->size);
    LLVMValueRef a = LLVMBuildAlloca(r->ab, at, nm);
    LLVMSetAlignment(a, 16);
    return a;
}

/* ---- control flow ---- */

bool lr_push_block(Render *r, Block b) {
    if (r->depth == r->cap) {
        int ncap = r->cap ? r->cap * 2 : 8;
        Block *ns = realloc(r->stack, (size_t)ncap * sizeof *ns);
        if (!ns) { lr_fail(r, NULL, "out of memory"); return false; }
        r->stack = ns;
        r->cap = ncap;
    }
    r->stack[r->depth++] = b;
    return true;
}

static LLVMValueRef render_range(Render *r, const UOp *u, const char *nm) {
    const DType *d = u->src[0]->dtype;
    if (!dt_is_int(d) || d->count != 1 || dt_is_ptr(d)) { lr_fail(r, u, "its end (source 0) must be a scalar integer"); return NULL; }
    LLVMValueRef end = src_val(r, u, 0);
    if (!end) return NULL;
    return lr_open_loop(r, u, end, nm);
}

/* END closes the RANGEs among its sources, innermost first. */
static void render_end(Render *r, const UOp *u) {
    int nranges = 0;
    for (int i = 0; i < u->nsrc; i++)
        if (uop_op(u->src[i]) == OP_RANGE) {
            nranges++;
            if (!lr_map_find(&r->vals, u->src[i])) {
                lr_fail(r, u, "ends RANGE %%%u, which does not come before it in the program", u->src[i]->id);
                return;
            }
        }
    if (!nranges) { lr_fail(r, u, "needs a RANGE source (the loop it ends)"); return; }
    for (int closed = 0; closed < nranges; closed++) {
        if (!r->depth) { lr_fail(r, u, "no loop is open here"); return; }
        const Block *top = &r->stack[r->depth - 1];
        bool mine = false;
        for (int i = 0; i < u->nsrc; i++) mine |= u->src[i] == top->op;
        if (!mine) {
            if (uop_op(top->op) == OP_IF) lr_fail(r, u, "IF %%%u is still open (ENDIF missing before END)", top->op->id);
            else lr_fail(r, u, "the innermost open loop is RANGE %%%u, which this END does not end", top->op->id);
            return;
        }
        lr_close_loop(r);
    }
}

static void render_if(Render *r, const UOp *u) {
    if (!dt_is_bool(u->src[0]->dtype) || u->src[0]->dtype->count != 1) { lr_fail(r, u, "the gate (source 0) must be a bool"); return; }
    LLVMValueRef g = src_val(r, u, 0);
    if (!g) return;
    LLVMBasicBlockRef body = lr_new_block(r, "if", u), skip = lr_new_block(r, "endif", u);
    LLVMBuildCondBr(r->b, g, body, skip);
    LLVMPositionBuilderAtEnd(r->b, body);
    lr_push_block(r, (Block){.op = u, .exit = skip, .range_slot = -1});
}

static void render_endif(Render *r, const UOp *u) {
    if (!r->depth || r->stack[r->depth - 1].op != u->src[0]) {
        if (uop_op(u->src[0]) != OP_IF) lr_fail(r, u, "source 0 must be the IF it ends");
        else if (!r->depth) lr_fail(r, u, "IF %%%u is not open", u->src[0]->id);
        else lr_fail(r, u, "%s %%%u is still open inside IF %%%u", op_name(uop_op(r->stack[r->depth - 1].op)),
                  r->stack[r->depth - 1].op->id, u->src[0]->id);
        return;
    }
    Block *bl = &r->stack[--r->depth];
    LLVMBuildBr(r->b, bl->exit);
    LLVMPositionBuilderAtEnd(r->b, bl->exit);
}

/* ---- parameters ---- */

static LLVMValueRef int_to(Render *r, LLVMValueRef v, const DType *d, const char *nm) {
    LLVMTypeRef t = value_type(r, d);
    unsigned w = LLVMGetIntTypeWidth(t), have = LLVMGetIntTypeWidth(LLVMTypeOf(v));
    if (w == have) return v;
    return w > have ? LLVMBuildSExt(r->b, v, t, nm) : LLVMBuildTrunc(r->b, v, t, nm);
}

static int cmp_global_arg(const void *a, const void *b) {
    const UOp *x = *(const UOp *const *)a, *y = *(const UOp *const *)b;
    int64_t ax = x->arg ? x->arg->v.i : 0, ay = y->arg ? y->arg->v.i : 0;
    return ax < ay ? -1 : ax > ay;
}

/* Collects DEFINE_GLOBALs (sorted by arg) and DEFINE_VARs (in order). */
static bool collect_params(Render *r, const UOp *const *lst, size_t n) {
    r->globals = calloc(n ? n : 1, sizeof *r->globals);
    r->vars = calloc(n ? n : 1, sizeof *r->vars);
    if (!r->globals || !r->vars) { lr_fail(r, NULL, "out of memory"); return false; }
    for (size_t i = 0; i < n; i++) {
        const UOp *u = lst[i];
        if (!u) { lr_fail(r, NULL, "entry %zu of the program is missing", i); return false; }
        if (uop_op(u) == OP_DEFINE_GLOBAL) {
            if (!u->arg || u->arg->kind != ARG_INT) { lr_fail(r, u, "needs an integer arg (the buffer number)"); return false; }
            if (!dt_is_ptr(u->dtype) || u->dtype->v != 1 || u->dtype->base->sk == SK_VOID) {
                lr_fail(r, u, "needs a pointer dtype, e.g. float32.ptr(16)");
                return false;
            }
            for (int j = 0; j < r->nglob; j++)
                if (r->globals[j]->arg->v.i == u->arg->v.i && r->globals[j] != u) {
                    lr_fail(r, u, "buffer number %lld is also used by DEFINE_GLOBAL %%%u", (long long)u->arg->v.i,
                         r->globals[j]->id);
                    return false;
                }
            r->globals[r->nglob++] = u;
        } else if (uop_op(u) == OP_DEFINE_VAR) {
            const Arg *a = u->arg;
            if (!a || a->kind != ARG_TUPLE || a->n < 1 || !a->items[0] || a->items[0]->kind != ARG_STR) {
                lr_fail(r, u, "needs the arg (name, min, max)");
                return false;
            }
            if (!dt_is_int(u->dtype) || u->dtype->count != 1 || dt_is_ptr(u->dtype)) { lr_fail(r, u, "needs an integer dtype"); return false; }
            r->vars[r->nvar++] = u;
        }
    }
    qsort(r->globals, (size_t)r->nglob, sizeof *r->globals, cmp_global_arg);
    return true;
}

static bool fill_signature(Render *r, KernelSignature *sig) {
    sig->nbuf = r->nglob;
    sig->nvar = r->nvar;
    sig->bufs = calloc((size_t)r->nglob + 1, sizeof *sig->bufs);
    sig->vars = calloc((size_t)r->nvar + 1, sizeof *sig->vars);
    if (!sig->bufs || !sig->vars) return false;
    for (int i = 0; i < r->nglob; i++) {
        const DType *d = r->globals[i]->dtype;
        sig->bufs[i] = (KernelBufferInfo){d->base, d->size, r->globals[i]->arg->v.i};
    }
    for (int i = 0; i < r->nvar; i++) {
        const Arg *a = r->vars[i]->arg;
        sig->vars[i].name = strndup(a->items[0]->v.s, a->items[0]->n);
        if (!sig->vars[i].name) return false;
        sig->vars[i].lo = INT32_MIN;
        sig->vars[i].hi = INT32_MAX;
        if (a->n >= 3 && a->items[1] && a->items[1]->kind == ARG_INT) sig->vars[i].lo = a->items[1]->v.i;
        if (a->n >= 3 && a->items[2] && a->items[2]->kind == ARG_INT) sig->vars[i].hi = a->items[2]->v.i;
    }
    return true;
}

void kernel_signature_free(KernelSignature *sig) {
    if (!sig) return;
    for (int i = 0; sig->vars && i < sig->nvar; i++) free(sig->vars[i].name);
    free(sig->vars);
    free(sig->bufs);
    free(sig->sites);
    free(sig->ranges);
    *sig = (KernelSignature){0};
}

void llvm_entry_name(const char *kernel_name, char *out, size_t outlen) {
    snprintf(out, outlen, "%s__entry", kernel_name);
}

/* ---- the NVPTX forms of SPECIAL, DEFINE_LOCAL and BARRIER ---- */

static LLVMValueRef ptx_sreg(Render *r, const char *reg, char dim) {
    char name[48];
    snprintf(name, sizeof name, "llvm.nvvm.read.ptx.sreg.%s.%c", reg, dim);
    LLVMTypeRef i32 = LLVMInt32TypeInContext(r->ctx);
    LLVMValueRef fn = LLVMGetNamedFunction(r->mod, name);
    LLVMTypeRef fty = LLVMFunctionType(i32, NULL, 0, 0);
    if (!fn) fn = LLVMAddFunction(r->mod, name, fty);
    return LLVMBuildCall2(r->b, fty, fn, NULL, 0, "");
}

/* gidxN: the block id, lidxN: the thread id, idxN: the global id, in dim x, y, z */
static LLVMValueRef ptx_special(Render *r, const UOp *u) {
    const Arg *a = u->arg;
    const char *s = a && a->kind == ARG_STR ? a->v.s : "";
    size_t n = a && a->kind == ARG_STR ? a->n : 0;
    char dim = n && s[n - 1] >= '0' && s[n - 1] <= '2' ? "xyz"[s[n - 1] - '0'] : 0;
    if (!dim || n < 4) {
        lr_fail(r, u, "a SPECIAL for the GPU is gidx, lidx or idx with a dim 0..2, not \"%.*s\"", (int)n, s);
        return NULL;
    }
    if (!strncmp(s, "gidx", 4)) return ptx_sreg(r, "ctaid", dim);
    if (!strncmp(s, "lidx", 4)) return ptx_sreg(r, "tid", dim);
    LLVMValueRef block = ptx_sreg(r, "ctaid", dim), size = ptx_sreg(r, "ntid", dim);
    return LLVMBuildAdd(r->b, LLVMBuildMul(r->b, block, size, ""), ptx_sreg(r, "tid", dim), "");
}

/* an array in shared memory, used through a generic pointer */
static LLVMValueRef ptx_shared_array(Render *r, const UOp *u, const char *nm) {
    const DType *d = u->dtype;
    if (!dt_is_ptr(d) || d->base->sk == SK_VOID || d->size <= 0 || d->size > (1 << 24)) {
        lr_fail(r, u, "needs a pointer dtype with a size, e.g. float32.ptr(16, local)");
        return NULL;
    }
    LLVMTypeRef at = LLVMArrayType2(value_type(r, d->base), (uint64_t)d->size);
    LLVMValueRef g = LLVMAddGlobalInAddressSpace(r->mod, at, nm, 3);
    LLVMSetInitializer(g, LLVMGetUndef(at));
    LLVMSetLinkage(g, LLVMInternalLinkage);
    LLVMSetAlignment(g, 16);
    return LLVMBuildAddrSpaceCast(r->b, g, LLVMPointerTypeInContext(r->ctx, 0), nm);
}

static void ptx_barrier(Render *r) {
    LLVMTypeRef fty = LLVMFunctionType(LLVMVoidTypeInContext(r->ctx), NULL, 0, 0);
    LLVMValueRef fn = LLVMGetNamedFunction(r->mod, "llvm.nvvm.barrier0");
    if (!fn) fn = LLVMAddFunction(r->mod, "llvm.nvvm.barrier0", fty);
    LLVMBuildCall2(r->b, fty, fn, NULL, 0, "");
}

/* ---- one node ---- */

static const char *value_prefix(Op op) {
    switch (op) {
    case OP_DEFINE_GLOBAL: return "data";
    case OP_DEFINE_REG: return "reg";
    case OP_DEFINE_LOCAL: return "local";
    case OP_RANGE: return "ridx";
    case OP_LOAD: return "val";
    case OP_INDEX: return "addr";
    case OP_SPECIAL: return "gidx";
    default: return "alu";
    }
}

static void render_node(Render *r, const UOp *u, ValEntry *self) {
    char nm[32];
    Op op = uop_op(u);
    snprintf(nm, sizeof nm, "%s%u", value_prefix(op), u->id);
    LLVMValueRef v = NULL;
    if (op_is_alu(op) && op != OP_WHERE && op != OP_MULACC && (u->dtype->count > 256 || dt_is_ptr(u->dtype))) {
        lr_fail(r, u, "unsupported dtype");
        return;
    }
    if (op == OP_BARRIER && r->ptx) {
        ptx_barrier(r);
        return;
    }
    switch (op) {
    case OP_SINK: case OP_NOOP: case OP_GROUP: case OP_BARRIER:
        if (op == OP_NOOP && u->nsrc >= 1 && u->dtype->sk != SK_VOID) v = src_val(r, u, 0);
        break;
    case OP_AFTER: v = src_val(r, u, 0); break;
    case OP_DEFINE_GLOBAL:
        for (int i = 0; i < r->nglob; i++)
            if (r->globals[i] == u) v = LLVMGetParam(r->fn, (unsigned)i);
        LLVMSetValueName2(v, nm, strlen(nm));
        break;
    case OP_DEFINE_VAR:
        for (int i = 0; i < r->nvar; i++)
            if (r->vars[i] == u) v = int_to(r, LLVMGetParam(r->fn, (unsigned)(r->nglob + i)), u->dtype, nm);
        break;
    case OP_SPECIAL:
        if (!dt_is_int(u->dtype) || u->dtype->count != 1 || dt_is_ptr(u->dtype)) { lr_fail(r, u, "needs an integer dtype"); return; }
        v = int_to(r, r->ptx ? ptx_special(r, u) : r->core_id, u->dtype, nm);
        break;
    case OP_DEFINE_LOCAL:
        v = r->ptx ? ptx_shared_array(r, u, nm) : render_stack_array(r, u, nm);
        break;
    case OP_DEFINE_REG: v = render_stack_array(r, u, nm); break;
    case OP_CONST: case OP_VCONST:
        if (!is_invalid_marker(u)) v = render_const(r, u);
        break;
    case OP_INDEX: v = render_index(r, u, self, nm); break;
    case OP_LOAD: v = render_load(r, u, nm); break;
    case OP_STORE: render_store(r, u); break;
    case OP_RANGE: v = render_range(r, u, nm); break;
    case OP_END: render_end(r, u); break;
    case OP_IF: render_if(r, u); break;
    case OP_ENDIF: render_endif(r, u); break;
    case OP_CAST: v = render_cast(r, u, nm); break;
    case OP_BITCAST: v = render_bitcast(r, u, nm); break;
    case OP_GEP: v = render_gep(r, u, nm); break;
    case OP_VECTORIZE:
        if (!is_invalid_marker(u)) v = render_vectorize(r, u, nm);
        break;
    case OP_WHERE: {
        if (is_invalid_where(u)) break;   /* an INDEX takes it apart (render_index) */
        const DType *cd = u->src[0]->dtype;
        if (!same_dtypes(r, u, 1, 2)) return;
        if (!dt_is_bool(cd) || dt_is_ptr(cd) || (cd->count != 1 && cd->count != dt_vcount(u->src[1]->dtype))) {
            lr_fail(r, u, "the condition (source 0) must be a bool or a bool vector as wide as the branches");
            return;
        }
        LLVMValueRef c = src_val(r, u, 0), a = c ? src_val(r, u, 1) : NULL, b = a ? src_val(r, u, 2) : NULL;
        if (b) v = LLVMBuildSelect(r->b, c, a, b, nm);
        break;
    }
    case OP_MULACC: {
        if (!same_dtypes(r, u, 0, 1) || !same_dtypes(r, u, 0, 2)) return;
        LLVMValueRef a = src_val(r, u, 0), b = a ? src_val(r, u, 1) : NULL, c = b ? src_val(r, u, 2) : NULL;
        if (!c) break;
        if (is_fp8(u->dtype)) { lr_fail(r, u, "fp8 arithmetic is not supported by the LLVM backend"); return; }
        bool fl = dt_is_float(u->dtype);
        LLVMValueRef m = fl ? LLVMBuildFMul(r->b, a, b, "") : LLVMBuildMul(r->b, a, b, "");
        v = fl ? LLVMBuildFAdd(r->b, m, c, nm) : LLVMBuildAdd(r->b, m, c, nm);
        break;
    }
    case OP_EXP2: case OP_LOG2: case OP_SIN: case OP_SQRT: case OP_RECIPROCAL: case OP_NEG: case OP_TRUNC:
        v = render_unary(r, u, nm);
        break;
    case OP_ADD: case OP_MUL: case OP_SHL: case OP_SHR: case OP_IDIV: case OP_MAX: case OP_MOD: case OP_CMPLT:
    case OP_CMPNE: case OP_CMPEQ: case OP_XOR: case OP_OR: case OP_AND: case OP_SUB: case OP_FDIV: case OP_POW:
        if (u->nsrc != 2) { lr_fail(r, u, "needs 2 sources, got %d", u->nsrc); return; }
        v = render_binary(r, u, nm);
        break;
    default:
        if (op_group(op) == OPG_SCHED || op_group(op) == OPG_MOVEMENT || op_group(op) == OPG_REDUCE ||
            op == OP_UNROLL || op == OP_CONTRACT || op == OP_CAT || op == OP_PTRCAT || op == OP_BIND)
            lr_fail(r, u, "not supported by the LLVM backend: it must be lowered by the codegen stages before rendering");
        else
            lr_fail(r, u, "not supported by the LLVM backend");
        return;
    }
    if (r->failed) return;
    /* a node's value must have its dtype's LLVM type (unchecked nodes from
     * the text parser could say otherwise and confuse later users) */
    if (v && u->dtype->sk != SK_VOID && LLVMTypeOf(v) != value_type(r, u->dtype)) {
        char b[64];
        dt_str(u->dtype, b, sizeof b);
        lr_fail(r, u, "its dtype %s does not match the type of what it computes (check the dtypes of its sources)", b);
        return;
    }
    self->val = v;
}

/* ---- the function and its entry wrapper ---- */

static bool add_entry_wrapper(Render *r, const char *name, LLVMTypeRef kfty) {
    LLVMTypeRef ptr = LLVMPointerTypeInContext(r->ctx, 0), i32 = LLVMInt32TypeInContext(r->ctx);
    LLVMTypeRef ps[4] = {ptr, ptr, i32, ptr};
    LLVMTypeRef fty = LLVMFunctionType(LLVMVoidTypeInContext(r->ctx), ps, 4, 0);
    char ename[512];
    llvm_entry_name(name, ename, sizeof ename);
    LLVMValueRef fn = LLVMAddFunction(r->mod, ename, fty);
    LLVMBuilderRef b = LLVMCreateBuilderInContext(r->ctx);
    LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(r->ctx, fn, "entry"));
    int nargs = r->nglob + r->nvar + 1 + r->checked;
    LLVMValueRef *args = calloc((size_t)nargs, sizeof *args);
    if (!args) { LLVMDisposeBuilder(b); lr_fail(r, NULL, "out of memory"); return false; }
    LLVMTypeRef i64 = LLVMInt64TypeInContext(r->ctx);
    for (int i = 0; i < r->nglob; i++) {
        LLVMValueRef ix = LLVMConstInt(i64, (unsigned)i, 0);
        LLVMValueRef slot = LLVMBuildGEP2(b, ptr, LLVMGetParam(fn, 0), &ix, 1, "");
        args[i] = LLVMBuildLoad2(b, ptr, slot, "");
    }
    for (int i = 0; i < r->nvar; i++) {
        LLVMValueRef ix = LLVMConstInt(i64, (unsigned)i, 0);
        LLVMValueRef slot = LLVMBuildGEP2(b, i32, LLVMGetParam(fn, 1), &ix, 1, "");
        args[r->nglob + i] = LLVMBuildLoad2(b, i32, slot, "");
    }
    args[r->nglob + r->nvar] = LLVMGetParam(fn, 2);
    if (r->checked) args[nargs - 1] = LLVMGetParam(fn, 3);
    LLVMBuildCall2(b, kfty, r->fn, args, (unsigned)nargs, "");
    LLVMBuildRetVoid(b);
    LLVMDisposeBuilder(b);
    free(args);
    return true;
}

static void add_nounwind(Render *r, LLVMValueRef fn) {
    unsigned kind = LLVMGetEnumAttributeKindForName("nounwind", 8);
    LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(r->ctx, kind, 0));
}

static bool render_program(struct LLVMOpaqueContext *ctx, const char *name, const UOp *const *lst, size_t n,
                           bool checked, bool ptx, struct LLVMOpaqueModule **out, KernelSignature *sig, char *err,
                           size_t errlen) {
    *out = NULL;
    *sig = (KernelSignature){.checked = checked};
    if (err && errlen) err[0] = 0;
    Render R = {.ctx = ctx, .err = err, .errlen = errlen, .checked = checked, .ptx = ptx, .sig = sig}, *r = &R;
    if (!name || !name[0]) name = "kernel";
    if (!lst && n) { lr_fail(r, NULL, "no program"); return false; }
    if (!collect_params(r, lst, n) || !lr_scan_loops(r, lst, n)) goto done;

    r->mod = LLVMModuleCreateWithNameInContext(name, ctx);
    int np = r->nglob + r->nvar + !ptx + checked;   /* buffers, variables, core_id [, report] */
    LLVMTypeRef *pt = calloc((size_t)np, sizeof *pt);
    if (!pt) { lr_fail(r, NULL, "out of memory"); goto done; }
    for (int i = 0; i < r->nglob; i++) pt[i] = LLVMPointerTypeInContext(ctx, 0);
    for (int i = r->nglob; i < r->nglob + r->nvar + !ptx; i++) pt[i] = LLVMInt32TypeInContext(ctx);
    if (checked) pt[np - 1] = LLVMPointerTypeInContext(ctx, 0);
    LLVMTypeRef kfty = LLVMFunctionType(LLVMVoidTypeInContext(ctx), pt, (unsigned)np, 0);
    free(pt);
    r->fn = LLVMAddFunction(r->mod, name, kfty);
    add_nounwind(r, r->fn);
    for (int i = 0; i < r->nvar; i++) {
        const Arg *s = r->vars[i]->arg->items[0];
        LLVMSetValueName2(LLVMGetParam(r->fn, (unsigned)(r->nglob + i)), s->v.s, s->n);
    }
    if (!ptx) {
        r->core_id = LLVMGetParam(r->fn, (unsigned)(r->nglob + r->nvar));
        LLVMSetValueName2(r->core_id, "core_id", 7);
    } else {
        /* marked a kernel: !nvvm.annotations = !{!{ptr @name, !"kernel", i32 1}} */
        LLVMMetadataRef md[3] = {LLVMValueAsMetadata(r->fn), LLVMMDStringInContext2(ctx, "kernel", 6),
                                 LLVMValueAsMetadata(LLVMConstInt(LLVMInt32TypeInContext(ctx), 1, 0))};
        LLVMAddNamedMetadataOperand(r->mod, "nvvm.annotations",
                                    LLVMMetadataAsValue(ctx, LLVMMDNodeInContext2(ctx, md, 3)));
    }
    if (checked) {
        r->report = LLVMGetParam(r->fn, (unsigned)(np - 1));
        LLVMSetValueName2(r->report, "report", 6);
    }

    LLVMBasicBlockRef allocas = LLVMAppendBasicBlockInContext(ctx, r->fn, "entry");
    LLVMBasicBlockRef start = LLVMAppendBasicBlockInContext(ctx, r->fn, "start");
    r->b = LLVMCreateBuilderInContext(ctx);
    r->ab = LLVMCreateBuilderInContext(ctx);
    LLVMPositionBuilderAtEnd(r->ab, allocas);
    LLVMPositionBuilderAtEnd(r->b, start);

    for (size_t i = 0; i < n && !r->failed; i++) {
        const UOp *u = lst[i];
        if (lr_map_find(&r->vals, u)) { lr_fail(r, u, "appears twice in the program (entries must be unique)"); break; }
        ValEntry *self = map_insert(&r->vals, u);
        if (!self) { lr_fail(r, NULL, "out of memory"); break; }
        render_node(r, u, self);
    }
    if (!r->failed && r->depth) {
        const UOp *open = r->stack[r->depth - 1].op;
        lr_fail(r, open, uop_op(open) == OP_RANGE ? "has no END (the loop is never closed)" : "has no ENDIF");
    }
    if (r->failed) goto done;
    LLVMBuildRetVoid(r->b);
    LLVMBuildBr(r->ab, start);
    if (!ptx && !add_entry_wrapper(r, name, kfty)) goto done;

    char *msg = NULL;
    if (LLVMVerifyModule(r->mod, LLVMReturnStatusAction, &msg)) {
        lr_fail(r, NULL, "LLVM rejected the rendered module: %s", msg ? msg : "(no message)");
        LLVMDisposeMessage(msg);
        goto done;
    }
    LLVMDisposeMessage(msg);
    if (!fill_signature(r, sig)) { lr_fail(r, NULL, "out of memory"); goto done; }

done:
    if (r->b) LLVMDisposeBuilder(r->b);
    if (r->ab) LLVMDisposeBuilder(r->ab);
    free(r->vals.e);
    free(r->stack);
    free(r->globals);
    free(r->vars);
    free(r->outer);
    if (r->failed) {
        if (r->mod) LLVMDisposeModule(r->mod);
        kernel_signature_free(sig);
        return false;
    }
    *out = r->mod;
    return true;
}

bool llvm_render_program(struct LLVMOpaqueContext *ctx, const char *name, const UOp *const *lst, size_t n,
                         bool checked, struct LLVMOpaqueModule **out, KernelSignature *sig, char *err, size_t errlen) {
    return render_program(ctx, name, lst, n, checked, false, out, sig, err, errlen);
}

bool llvm_render_ptx_program(struct LLVMOpaqueContext *ctx, const char *name, const UOp *const *lst, size_t n,
                             struct LLVMOpaqueModule **out, char *err, size_t errlen) {
    KernelSignature sig;
    bool ok = render_program(ctx, name, lst, n, false, true, out, &sig, err, errlen);
    if (ok) kernel_signature_free(&sig);
    return ok;
}
