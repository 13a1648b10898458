/* spec_verify.c - the spec verifier (see spec_verify.h for which spec a
 * point gets).  The op forms are rows of one table, in the order tinygrad
 * v0.12.0's spec matchers try them: for a node, the rows of its op (or of
 * an op class it belongs to) that belong to the spec are tried in turn and
 * the first that recognises the node decides (allowed, or broken with a
 * reason); a node no row recognises is not in the spec.  Rows marked
 * "uopdb" are checks of uopdb's own on top of tinygrad's. */
#include "spec_verify.h"
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../sym/bounds.h"
#include "../util/strbuf.h"
#include "../util/u64map.h"

/* ---- which specs a row belongs to ---- */
enum {
    SK = 1 << SPEC_KERNEL,
    SC = 1 << SPEC_CODEGEN,
    SL = 1 << SPEC_LOWERED,
    SP = 1 << SPEC_PROGRAM,
    S_GRAPH = SK | SC | SL,      /* every spec of a graph (not a linear program) */
    S_LATE = SL | SP,            /* index dtype lowered */
    S_MID = SC | SL,             /* between the stages */
    S_ALL = SK | SC | SL | SP,
};

typedef enum Verdict { V_NONE, V_OK, V_BAD } Verdict;

/* a rule's reason when it finds the node broken */
typedef struct Why {
    char text[256];
} Why;

static Verdict bad(Why *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static Verdict bad(Why *w, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->text, sizeof w->text, fmt, ap);
    va_end(ap);
    return V_BAD;
}

static const char *dts(const DType *d, char *buf) { return dt_str(d, buf, 64); }

/* ---- dtype helpers, with tinygrad's meaning ---- */
/* a UPat dtype test: the dtype itself or, for a vector, its scalar */
static bool dt_is_kind(const DType *d, const DType *want) { return d == want || (!dt_is_ptr(d) && d->scalar == want); }
static bool is_index(const DType *d) { return dt_is_kind(d, DT_INDEX); }
static bool is_bool(const DType *d) { return dt_is_kind(d, DT_BOOL); }
/* tinygrad's dtype.scalar(): a vector's element, a vector of pointers' pointer */
static const DType *dt_scalar_of(const DType *d) { return dt_is_ptr(d) ? d->ptr_scalar : d->scalar; }
/* tinygrad's dtype.vec(n) of a scalar or plain pointer; NULL when not allowed */
static const DType *dt_vec_of(const DType *d, int n) {
    if (dt_is_ptr(d)) return d->v == 1 ? dt_ptr_vec(d, n) : NULL;
    return d->count == 1 ? dt_vec(d, n) : NULL;
}
static bool is_elementwise(Op op) { return op_is_alu(op) || op == OP_CAST || op == OP_BITCAST; }
static bool is_define(Op op) { return op_is(op, OPF_DEFINE); }
static bool is_index_like_source(const UOp *s) { return is_define(uop_op(s)) || uop_op(s) == OP_AFTER; }
/* INDEX, or CAST of an INDEX (tinygrad's .or_casted()) */
static const UOp *indexed(const UOp *s) {
    if (uop_op(s) == OP_CAST && s->nsrc == 1) s = s->src[0];
    return uop_op(s) == OP_INDEX ? s : NULL;
}
static bool arg_is_int(const Arg *a) { return a && a->kind == ARG_INT; }
/* a CONST's arg has the type dtypes.as_const gives for its dtype */
static bool const_arg_fits(const Arg *a, const DType *d) {
    if (!a) return false;
    if (a->kind == ARG_INVALID) return true; /* Invalid's own rules decide */
    const DType *s = d->scalar;
    if (dt_is_float(s)) return a->kind == ARG_FLOAT;
    if (dt_is_bool(s)) return a->kind == ARG_BOOL;
    if (dt_is_int(s)) return a->kind == ARG_INT;
    return false;
}
static int64_t prod_of_axes(const Arg *a, bool *ok) {
    int64_t p = 1;
    *ok = a && a->kind == ARG_TUPLE;
    for (uint32_t i = 0; *ok && i < a->n; i++) {
        const Arg *it = a->items[i];
        if (!it || it->kind != ARG_TUPLE || it->n != 2 || !arg_is_int(it->items[1])) *ok = false;
        else p *= it->items[1]->v.i;
    }
    return p;
}

/* ---- the rules ---- */
/* uopdb: after stage 15 no node has the index dtype (program_spec's rule, kept from stage 15 on) */
static Verdict r_no_index(const UOp *u, Why *w) {
    char b[64];
    return !dt_is_ptr(u->dtype) && u->dtype->scalar == DT_INDEX ? bad(w, "dtype %s not lowered", dts(u->dtype, b))
                                                                 : V_NONE;
}
static Verdict r_no_invalid_const(const UOp *u, Why *w) {
    return u->arg && u->arg->kind == ARG_INVALID ? bad(w, "Invalid left after the index dtype is lowered") : V_NONE;
}
static Verdict r_sink(const UOp *u, Why *w) {
    (void)w;
    return u->dtype == DT_VOID ? V_OK : V_NONE;
}
static Verdict r_const(const UOp *u, Why *w) {
    char b[64];
    if (u->nsrc != 0) return V_NONE;
    if (u->arg && u->arg->kind == ARG_INVALID && dt_scalar_of(u->dtype) != DT_INDEX)
        return bad(w, "Invalid of dtype %s (must be index)", dts(u->dtype, b));
    return const_arg_fits(u->arg, u->dtype) ? V_OK : bad(w, "arg does not fit dtype %s", dts(u->dtype, b));
}
static Verdict r_vconst(const UOp *u, Why *w) {
    char b[64];
    const Arg *a = u->arg;
    if (!a || a->kind != ARG_TUPLE || (int)a->n != dt_vcount(u->dtype) || a->n < 2)
        return bad(w, "needs one value per lane of %s", dts(u->dtype, b));
    for (uint32_t i = 0; i < a->n; i++) {
        if (a->items[i] && a->items[i]->kind == ARG_INVALID) {
            if (u->dtype->scalar != DT_INDEX) return bad(w, "Invalid lane in dtype %s", dts(u->dtype, b));
        } else if (!const_arg_fits(a->items[i], u->dtype)) return bad(w, "lane %u does not fit dtype %s", i, dts(u->dtype, b));
    }
    return V_OK;
}
static Verdict r_vconst_index(const UOp *u, Why *w) {
    (void)w;
    return is_index(u->dtype) ? V_OK : V_NONE;
}
static Verdict r_vconst_lowered(const UOp *u, Why *w) {
    const Arg *a = u->arg;
    for (uint32_t i = 0; a && a->kind == ARG_TUPLE && i < a->n; i++)
        if (a->items[i] && a->items[i]->kind == ARG_INVALID) return bad(w, "Invalid lane left after lowering");
    return V_NONE;
}
static Verdict r_define_var(const UOp *u, Why *w) {
    const Arg *a = u->arg;
    if (a && a->kind == ARG_TUPLE && a->n == 3 && a->items[0] && a->items[0]->kind == ARG_STR && arg_is_int(a->items[1]) &&
        arg_is_int(a->items[2]))
        return V_OK;
    return bad(w, "arg must be (name, min, max) with int bounds");
}
static Verdict r_where(const UOp *u, Why *w) {
    char b0[64], b1[64], b2[64];
    if (u->nsrc != 3 || !is_bool(u->src[0]->dtype)) return V_NONE;
    if (u->dtype == u->src[1]->dtype && u->dtype == u->src[2]->dtype) return V_OK;
    return bad(w, "dtype %s with branches %s and %s", dts(u->dtype, b0), dts(u->src[1]->dtype, b1),
               dts(u->src[2]->dtype, b2));
}
static Verdict r_where_index(const UOp *u, Why *w) { /* full_spec: an index WHERE whose false branch is an index */
    (void)w;
    return u->nsrc == 3 && is_index(u->dtype) && is_bool(u->src[0]->dtype) && is_index(u->src[2]->dtype) ? V_OK : V_NONE;
}
static Verdict r_compare(const UOp *u, Why *w) {
    char b0[64], b1[64];
    if (!is_bool(u->dtype) || u->nsrc != 2) return V_NONE;
    if (u->src[0]->dtype->base == u->src[1]->dtype->base) return V_OK;
    return bad(w, "compares %s with %s", dts(u->src[0]->dtype, b0), dts(u->src[1]->dtype, b1));
}
static Verdict r_shift(const UOp *u, Why *w) {
    char b0[64], b1[64], b2[64];
    if (u->nsrc != 2) return V_NONE;
    const DType *x = u->src[0]->dtype, *y = u->src[1]->dtype;
    if (u->dtype == x && (y == x || y == dt_scalar(SK_UINT32))) return V_OK;
    return bad(w, "dtype %s shifting %s by %s", dts(u->dtype, b0), dts(x, b1), dts(y, b2));
}
static Verdict r_int_division(const UOp *u, Why *w) {
    char b[64];
    return dt_is_int(u->dtype) ? V_NONE : bad(w, "integer division of dtype %s", dts(u->dtype, b));
}
static Verdict r_alu(const UOp *u, Why *w) {
    char b0[64], b1[64];
    for (int i = 0; i < u->nsrc; i++)
        if (u->src[i]->dtype->base != u->dtype->base)
            return bad(w, "dtype %s but source %d (%%%u) is %s", dts(u->dtype, b0), i, u->src[i]->id,
                       dts(u->src[i]->dtype, b1));
    return V_OK;
}
static Verdict r_cast(const UOp *u, Why *w) {
    if (u->nsrc != 1) return V_NONE;
    return u->arg == NULL ? V_OK : bad(w, "a cast has no arg");
}
static Verdict r_range(const UOp *u, Why *w) {
    char b0[64], b1[64];
    if (u->nsrc < 1) return V_NONE;
    if (u->dtype != u->src[0]->dtype)
        return bad(w, "dtype %s but its end is %s", dts(u->dtype, b0), dts(u->src[0]->dtype, b1));
    const Arg *a = u->arg;
    bool ok = a && a->kind == ARG_TUPLE && a->n >= 2 && a->items[a->n - 1] && a->items[a->n - 1]->kind == ARG_AXIS;
    for (uint32_t i = 0; ok && i + 1 < a->n; i++) ok = arg_is_int(a->items[i]);
    return ok ? V_OK : bad(w, "arg must be (ints..., AxisType)");
}
static Verdict r_index_of_indices(const UOp *u, Why *w) { /* shared_spec: every index source has dtype index */
    (void)w;
    for (int i = 1; i < u->nsrc; i++)
        if (u->src[i]->dtype != DT_INDEX) return V_NONE;
    return V_OK;
}
static Verdict r_end_one_range(const UOp *u, Why *w) {
    (void)w;
    return u->nsrc == 2 && uop_op(u->src[1]) == OP_RANGE ? V_OK : V_NONE;
}
static Verdict r_end_ranges(const UOp *u, Why *w) { /* kernel_spec: END of several ranges (or what they folded to) */
    (void)w;
    return u->nsrc >= 2 ? V_OK : V_NONE;
}
static Verdict r_end_unrolled(const UOp *u, Why *w) { /* the expander's END whose ranges were all unrolled */
    (void)w;
    return u->nsrc == 1 ? V_OK : V_NONE;
}
static Verdict r_end_program(const UOp *u, Why *w) {
    (void)w;
    return u->dtype == DT_VOID && u->nsrc == 2 && uop_op(u->src[1]) == OP_RANGE ? V_OK : V_NONE;
}
static Verdict r_define_global(const UOp *u, Why *w) {
    char b[64];
    return dt_is_ptr(u->dtype) && u->dtype->addrspace == ADDR_GLOBAL ? V_OK
                                                                     : bad(w, "dtype %s is not a global pointer", dts(u->dtype, b));
}
static Verdict r_define_local(const UOp *u, Why *w) {
    char b[64];
    return dt_is_ptr(u->dtype) && u->dtype->addrspace == ADDR_LOCAL ? V_OK
                                                                    : bad(w, "dtype %s is not a local pointer", dts(u->dtype, b));
}
static Verdict r_define_reg(const UOp *u, Why *w) {
    char b[64];
    if (u->nsrc != 0) return V_NONE;
    if (!arg_is_int(u->arg)) return bad(w, "arg must be an int");
    return dt_is_ptr(u->dtype) && u->dtype->addrspace == ADDR_REG ? V_OK /* uopdb: registers are pointers in reg space */
                                                                  : bad(w, "dtype %s is not a register pointer", dts(u->dtype, b));
}
static Verdict r_after_define(const UOp *u, Why *w) {
    (void)w;
    Op s = uop_op(u->src[0]);
    return is_define(s) || s == OP_AFTER ? V_OK : V_NONE;
}
static Verdict r_after_movement(const UOp *u, Why *w) {
    (void)w;
    Op s = uop_op(u->src[0]);
    return op_is(s, OPF_MOVEMENT) || s == OP_MULTI || s == OP_CONTIGUOUS ? V_OK : V_NONE;
}
static Verdict r_void(const UOp *u, Why *w) {
    (void)w;
    return u->dtype == DT_VOID ? V_OK : V_NONE;
}
static Verdict r_any(const UOp *u, Why *w) {
    (void)u, (void)w;
    return V_OK;
}
static Verdict r_wmma(const UOp *u, Why *w) {
    if (u->nsrc != 3) return V_NONE;
    return u->arg && u->arg->kind == ARG_TUPLE && u->arg->n == 8 ? V_OK : bad(w, "arg must be a tuple of 8");
}
static Verdict r_vectorize(const UOp *u, Why *w) {
    char b0[64], b1[64];
    if (u->nsrc < 2) return bad(w, "a VECTORIZE of %d sources", u->nsrc);
    if (u->nsrc != dt_vcount(u->dtype)) return bad(w, "%d sources for dtype %s", u->nsrc, dts(u->dtype, b0));
    for (int i = 0; i < u->nsrc; i++)
        if (dt_vec_of(u->src[i]->dtype, u->nsrc) != u->dtype)
            return bad(w, "dtype %s but source %d (%%%u) is %s", dts(u->dtype, b0), i, u->src[i]->id,
                       dts(u->src[i]->dtype, b1));
    return V_OK;
}
static Verdict r_vectorize_index(const UOp *u, Why *w) {
    (void)w;
    return is_index(u->dtype) && uop_op(u) == OP_VECTORIZE && u->nsrc >= 1 ? r_vectorize(u, w) : V_NONE;
}
static Verdict r_gep_scalar(const UOp *u, Why *w) {
    char b0[64], b1[64];
    if (u->nsrc != 1) return V_NONE;
    const UOp *s = u->src[0];
    if (u->dtype != dt_scalar_of(s->dtype)) return V_NONE;
    if (!u->arg || u->arg->kind != ARG_TUPLE || u->arg->n != 1 || !arg_is_int(u->arg->items[0]))
        return bad(w, "arg must be one lane");
    int64_t lane = u->arg->items[0]->v.i;
    if (lane < 0 || lane >= dt_vcount(s->dtype))
        return bad(w, "lane %lld of %s (%s)", (long long)lane, dts(s->dtype, b0), dts(u->dtype, b1));
    return V_OK;
}
static Verdict r_gep_multi(const UOp *u, Why *w) { /* full_spec: a GEP of several lanes */
    char b[64];
    if (u->nsrc != 1) return V_NONE;
    if (u->dtype == DT_VOID) return V_OK;
    if (!u->arg || u->arg->kind != ARG_TUPLE || (int)u->arg->n != dt_vcount(u->dtype))
        return bad(w, "dtype %s for %u lanes", dts(u->dtype, b), u->arg && u->arg->kind == ARG_TUPLE ? u->arg->n : 0);
    for (uint32_t i = 0; i < u->arg->n; i++)
        if (!arg_is_int(u->arg->items[i]) || u->arg->items[i]->v.i < 0 ||
            u->arg->items[i]->v.i >= dt_vcount(u->src[0]->dtype))
            return bad(w, "lane %u is not a lane of %s", i, dts(u->src[0]->dtype, b));
    return V_OK;
}
/* uopdb: a LOAD reads, a STORE writes, through a pointer */
static Verdict r_memory_through_pointer(const UOp *u, Why *w) {
    char b[64];
    const UOp *ix = indexed(u->src[0]);
    if (!ix) return V_NONE;
    if (!dt_is_ptr(u->src[0]->dtype))
        return bad(w, "%s through %%%u of dtype %s, not a pointer", uop_op(u) == OP_LOAD ? "reads" : "writes", u->src[0]->id,
                   dts(u->src[0]->dtype, b));
    return V_NONE;
}
static Verdict r_load(const UOp *u, Why *w) {
    (void)w;
    return u->nsrc == 1 && indexed(u->src[0]) ? V_OK : V_NONE;
}
static bool gated_index(const UOp *ix) { return ix && ix->nsrc == 3 && is_bool(ix->src[2]->dtype); }
static Verdict r_load_alt(const UOp *u, Why *w) { /* program_spec: LOAD(gated INDEX, alt) */
    (void)w;
    return u->nsrc == 2 && gated_index(indexed(u->src[0])) ? V_OK : V_NONE;
}
static Verdict r_store(const UOp *u, Why *w) {
    (void)w;
    return u->nsrc == 2 && indexed(u->src[0]) ? V_OK : V_NONE;
}
static Verdict r_load_store_source(const UOp *u, Why *w) { /* reached when no LOAD/STORE form matched */
    return bad(w, "source %%%u is %s, not an INDEX (or a CAST of one)", u->src[0]->id, op_name(uop_op(u->src[0])));
}
/* uopdb: an INDEX into a buffer keeps the buffer's address space */
static Verdict r_index_addrspace(const UOp *u, Why *w) {
    const DType *b = u->src[0]->dtype;
    if (!dt_is_ptr(u->dtype) || !dt_is_ptr(b) || u->dtype->addrspace == b->addrspace) return V_NONE;
    static const char *names[] = {"global", "local", "reg"};
    return bad(w, "a %s pointer into %%%u, a %s buffer", names[u->dtype->addrspace], u->src[0]->id, names[b->addrspace]);
}
/* validate_index without a solver: an index whose bounds lie wholly outside the buffer is broken */
static Verdict index_in_bounds(const UOp *u, Why *w) {
    const DType *b = u->src[0]->dtype;
    const UOp *idx = u->src[1];
    if (!dt_is_ptr(b) || b->size < 0 || u->nsrc != 2 || !dt_is_int(idx->dtype) || idx->dtype->count != 1 ||
        uop_op(idx) == OP_WHERE || (uop_op(idx) == OP_CONST && idx->arg && idx->arg->kind == ARG_INVALID))
        return V_OK;
    int64_t lo, hi;
    if (uop_bounds(idx, &lo, &hi) && (hi < 0 || lo >= b->size))
        return bad(w, "index %%%u in [%lld, %lld] is always outside its %lld elements", idx->id, (long long)lo, (long long)hi,
                   (long long)b->size);
    return V_OK;
}
static Verdict r_index_buffer(const UOp *u, Why *w) { /* shared_codegen_spec: INDEX(define, idx) */
    if (u->nsrc != 2 || !is_index_like_source(u->src[0])) return V_NONE;
    return index_in_bounds(u, w);
}
static Verdict r_index_gated(const UOp *u, Why *w) { /* program_spec: INDEX(define, idx, gate) */
    (void)w;
    return u->nsrc == 3 && is_index_like_source(u->src[0]) && is_bool(u->src[2]->dtype) ? V_OK : V_NONE;
}
static Verdict r_index_vector(const UOp *u, Why *w) { /* full_spec: INDEX of a VECTORIZE or CAST of pointers */
    (void)w;
    Op s = uop_op(u->src[0]);
    return u->nsrc >= 2 && (s == OP_VECTORIZE || s == OP_CAST || s == OP_PTRCAT) ? V_OK : V_NONE;
}
static Verdict r_special(const UOp *u, Why *w) {
    char b0[64], b1[64];
    if (u->nsrc != 1) return V_NONE;
    const DType *x = u->src[0]->dtype;
    if (x != DT_INDEX && x != DT_INT32) return V_NONE;
    if (u->dtype != x) return bad(w, "dtype %s but its size is %s", dts(u->dtype, b0), dts(x, b1));
    return u->arg && u->arg->kind == ARG_STR ? V_OK : bad(w, "arg must be a name");
}
/* kernel_spec: index math is allowed; uopdb also holds its sources to the
 * ALU rule (tinygrad lets any elementwise index op through here) */
static Verdict r_index_elementwise(const UOp *u, Why *w) {
    char b0[64], b1[64];
    if (!is_index(u->dtype)) return V_NONE;
    Op op = uop_op(u);
    int first = op == OP_WHERE ? 1 : 0;
    if (op_is_alu(op))
        for (int i = first; i < u->nsrc; i++)
            if (u->src[i]->dtype->base != u->dtype->base)
                return bad(w, "dtype %s but source %d (%%%u) is %s", dts(u->dtype, b0), i, u->src[i]->id,
                           dts(u->src[i]->dtype, b1));
    return V_OK;
}
static Verdict r_index_restricted(const UOp *u, Why *w) { /* full_spec: index on ADD, MUL, MOD, IDIV, MAX, CAST... */
    (void)w;
    return is_index(u->dtype) ? V_OK : V_NONE;
}
static Verdict r_contract(const UOp *u, Why *w) {
    char b[64];
    bool ok;
    int64_t p = prod_of_axes(u->arg, &ok);
    if (!ok) return bad(w, "arg must be ((axis, size), ...)");
    return u->dtype->count == p ? V_OK : bad(w, "dtype %s for %lld lanes", dts(u->dtype, b), (long long)p);
}
static Verdict r_unroll(const UOp *u, Why *w) {
    char b[64];
    bool ok;
    int64_t p = prod_of_axes(u->arg, &ok);
    if (!ok) return bad(w, "arg must be ((axis, size), ...)");
    return u->src[0]->dtype->count == p ? V_OK
                                        : bad(w, "source of dtype %s for %lld lanes", dts(u->src[0]->dtype, b), (long long)p);
}
static Verdict r_reduce(const UOp *u, Why *w) {
    for (int i = 1; i < u->nsrc; i++)
        if (u->src[i]->dtype != DT_INDEX) return bad(w, "source %d (%%%u) is not an index range", i, u->src[i]->id);
    return V_OK;
}
static Verdict r_movement_1(const UOp *u, Why *w) { /* RESHAPE/EXPAND(x, shape) */
    (void)w;
    return u->nsrc == 2 && is_index(u->src[1]->dtype) ? V_OK : V_NONE;
}
static Verdict r_movement_2(const UOp *u, Why *w) { /* PAD/SHRINK(x, before, after) */
    (void)w;
    return u->nsrc == 3 && is_index(u->src[1]->dtype) && is_index(u->src[2]->dtype) ? V_OK : V_NONE;
}
static Verdict r_movement_arg(const UOp *u, Why *w) { /* PERMUTE/FLIP(x) arg=tuple */
    (void)w;
    return u->nsrc == 1 && u->arg && u->arg->kind == ARG_TUPLE ? V_OK : V_NONE;
}
static Verdict r_ptrcat(const UOp *u, Why *w) {
    char b[64];
    int sum = 0;
    for (int i = 0; i < u->nsrc; i++) sum += u->src[i]->dtype->base->count;
    return dt_vcount(u->dtype) == sum ? V_OK : bad(w, "dtype %s for %d lanes", dts(u->dtype, b), sum);
}
static Verdict r_cat(const UOp *u, Why *w) {
    char b[64];
    int sum = 0;
    for (int i = 0; i < u->nsrc; i++) sum += dt_vcount(u->src[i]->dtype);
    return dt_vcount(u->dtype) == sum ? V_OK : bad(w, "dtype %s for %d lanes", dts(u->dtype, b), sum);
}
static Verdict r_if(const UOp *u, Why *w) {
    (void)w;
    return u->dtype == DT_VOID && u->nsrc == 2 && is_bool(u->src[0]->dtype) &&
                   (uop_op(u->src[1]) == OP_CAST || uop_op(u->src[1]) == OP_INDEX)
               ? V_OK
               : V_NONE;
}
static Verdict r_endif(const UOp *u, Why *w) {
    (void)w;
    return u->dtype == DT_VOID && u->nsrc == 1 && uop_op(u->src[0]) == OP_IF ? V_OK : V_NONE;
}

/* ---- the table ---- */
typedef enum Match { M_OP, M_CLASS, M_ALL } Match;
typedef struct SpecRow {
    Match match;
    Op op;            /* M_OP */
    uint32_t flags;   /* M_CLASS: op_is(op, flags); 0 with M_CLASS: elementwise */
    unsigned specs;   /* S* bits */
    const char *rule; /* the name an error gives */
    Verdict (*check)(const UOp *u, Why *w);
} SpecRow;

#define ROW(OP, SPECS, RULE, FN) {M_OP, OP_##OP, 0, SPECS, RULE, FN}
#define CLASS(FLAGS, SPECS, RULE, FN) {M_CLASS, OP_SINK, FLAGS, SPECS, RULE, FN}
#define ANY(SPECS, RULE, FN) {M_ALL, OP_SINK, 0, SPECS, RULE, FN}

static const SpecRow spec_rows[] = {
    /* uopdb: forms no spec allows, found before anything allows them */
    ANY(S_LATE, "index dtype lowered", r_no_index),
    ROW(CONST, S_LATE, "Invalid lowered", r_no_invalid_const),
    ROW(VCONST, S_LATE, "Invalid lowered", r_vconst_lowered),
    ROW(INDEX, S_ALL, "INDEX keeps the buffer's address space", r_index_addrspace),
    ROW(LOAD, S_MID | SP, "LOAD through a pointer", r_memory_through_pointer),
    ROW(STORE, S_LATE, "STORE through a pointer", r_memory_through_pointer),
    /* program_spec (and, once lowered, between the late stages) */
    ROW(INDEX, S_MID | SP, "INDEX with a gate", r_index_gated),
    ROW(LOAD, S_MID | SP, "LOAD with an alt value", r_load_alt),
    ROW(END, SP, "END closes one RANGE", r_end_program),
    ROW(IF, SP, "IF(gate, index)", r_if),
    ROW(ENDIF, SP, "ENDIF(IF)", r_endif),
    /* full_spec's codegen forms, between the stages */
    ROW(NOOP, S_MID, "NOOP", r_any),
    ROW(UNROLL, S_MID | SK, "UNROLL lanes", r_unroll),
    ROW(CONTRACT, S_MID | SK, "CONTRACT lanes", r_contract),
    ROW(GEP, S_MID, "GEP lanes", r_gep_multi),
    ROW(PTRCAT, S_MID, "PTRCAT lanes", r_ptrcat),
    ROW(CAT, S_MID, "CAT lanes", r_cat),
    ROW(INDEX, S_MID, "INDEX of a vector of pointers", r_index_vector),
    ROW(WHERE, SC, "WHERE on index", r_where_index),
    ROW(SPECIAL, SC, "index math", r_index_restricted),
    ROW(AFTER, S_MID, "AFTER", r_any),
    ROW(END, S_MID, "END of unrolled ranges", r_end_unrolled),
    /* kernel_spec */
    CLASS(0, SK | SC, "index math", r_index_elementwise),  /* uopdb: with the ALU rule's sources */
    /* (tinygrad also lets CONST, RANGE and DEFINE_VAR of index through
     * here; uopdb holds them to their own rules below) */
    ROW(END, S_GRAPH, "END closes RANGEs", r_end_ranges),
    ROW(BUFFERIZE, SK | SC, "BUFFERIZE", r_any),
    ROW(REDUCE, SK | SC, "REDUCE over index ranges", r_reduce),
    ROW(RESHAPE, SK | SC, "movement op", r_movement_1),
    ROW(EXPAND, SK | SC, "movement op", r_movement_1),
    ROW(PAD, SK | SC, "movement op", r_movement_2),
    ROW(SHRINK, SK | SC, "movement op", r_movement_2),
    ROW(PERMUTE, SK | SC, "movement op", r_movement_arg),
    ROW(FLIP, SK | SC, "movement op", r_movement_arg),
    ROW(VECTORIZE, SK | SC, "VECTORIZE of index", r_vectorize_index),
    ROW(VCONST, SK | SC, "VCONST of index", r_vconst_index),
    ROW(AFTER, SK | SC, "AFTER on a movement op", r_after_movement),
    ROW(CUSTOM_KERNEL, SK | SC, "CUSTOM_KERNEL", r_any),
    /* shared_codegen_spec */
    ROW(DEFINE_GLOBAL, S_ALL, "DEFINE_GLOBAL is a global pointer", r_define_global),
    ROW(DEFINE_LOCAL, S_ALL, "DEFINE_LOCAL is a local pointer", r_define_local),
    ROW(DEFINE_REG, S_ALL, "DEFINE_REG", r_define_reg),
    ROW(AFTER, S_ALL, "AFTER on a buffer", r_after_define),
    ROW(GROUP, S_ALL, "GROUP", r_void),
    ROW(WMMA, S_ALL, "WMMA", r_wmma),
    ROW(VECTORIZE, S_ALL, "VECTORIZE", r_vectorize),
    ROW(GEP, S_ALL, "GEP of one lane", r_gep_scalar),
    ROW(LOAD, S_ALL, "LOAD(INDEX)", r_load),
    ROW(STORE, S_ALL, "STORE(INDEX, value)", r_store),
    ROW(CUSTOM, S_ALL, "CUSTOM", r_any),
    ROW(CUSTOMI, S_ALL, "CUSTOM", r_any),
    ROW(INDEX, S_ALL, "INDEX into a buffer", r_index_buffer),
    ROW(SPECIAL, S_ALL, "SPECIAL", r_special),
    ROW(BARRIER, S_ALL, "BARRIER", r_void),
    /* shared_spec */
    ROW(SINK, S_ALL, "SINK", r_sink),
    ROW(CONST, S_ALL, "CONST", r_const),
    ROW(VCONST, S_ALL, "VCONST", r_vconst),
    ROW(DEFINE_VAR, S_ALL, "DEFINE_VAR", r_define_var),
    ROW(WHERE, S_ALL, "WHERE dtypes", r_where),
    CLASS(OPF_COMPARISON, S_ALL, "comparison dtypes", r_compare),
    ROW(SHL, S_ALL, "shift dtypes", r_shift),
    ROW(SHR, S_ALL, "shift dtypes", r_shift),
    ROW(IDIV, S_ALL, "integer division", r_int_division),
    ROW(MOD, S_ALL, "integer division", r_int_division),
    CLASS(OPF_ALU, S_ALL, "ALU dtypes", r_alu),
    ROW(CAST, S_ALL, "CAST", r_cast),
    ROW(BITCAST, S_ALL, "CAST", r_cast),
    ROW(RANGE, S_ALL, "RANGE", r_range),
    ROW(INDEX, S_ALL, "INDEX of index sources", r_index_of_indices),
    ROW(END, S_ALL, "END closes a RANGE", r_end_one_range),
    /* no other form of these: name what they need */
    ROW(LOAD, S_ALL, "LOAD(INDEX)", r_load_store_source),
    ROW(STORE, S_ALL, "STORE(INDEX, value)", r_load_store_source),
};
#define NROWS (sizeof spec_rows / sizeof spec_rows[0])

/* per spec, per op: the rows that apply, in table order (built once) */
#define MAX_ROWS_PER_OP 24
static uint8_t row_list[SPEC_COUNT][OP_COUNT][MAX_ROWS_PER_OP];
static uint8_t row_count[SPEC_COUNT][OP_COUNT];
static pthread_once_t rows_once = PTHREAD_ONCE_INIT;

static bool row_matches_op(const SpecRow *r, Op op) {
    switch (r->match) {
    case M_OP: return r->op == op;
    case M_CLASS: return r->flags ? op_is(op, r->flags) : is_elementwise(op);
    case M_ALL: return true;
    }
    return false;
}

static void build_rows(void) {
    for (int k = 0; k < SPEC_COUNT; k++)
        for (int op = 0; op < OP_COUNT; op++)
            for (size_t i = 0; i < NROWS; i++)
                if ((spec_rows[i].specs & (1u << k)) && row_matches_op(&spec_rows[i], (Op)op) && row_count[k][op] < MAX_ROWS_PER_OP)
                    row_list[k][op][row_count[k][op]++] = (uint8_t)i;
}

/* ---- names ---- */
static const char *const kind_names[SPEC_COUNT] = {"kernel", "codegen", "lowered", "program"};
const char *spec_kind_name(SpecKind k) { return k < SPEC_COUNT ? kind_names[k] : "?"; }
bool spec_kind_from_name(const char *s, SpecKind *out) {
    for (int k = 0; k < SPEC_COUNT; k++)
        if (s && strcmp(s, kind_names[k]) == 0) {
            *out = (SpecKind)k;
            return true;
        }
    return false;
}
SpecKind spec_for_point(int n) {
    if (n <= 0) return SPEC_KERNEL;
    if (n < 16) return SPEC_CODEGEN;
    if (n < 21) return SPEC_LOWERED;
    return SPEC_PROGRAM;
}

/* ---- errors ---- */
static void describe(char *buf, size_t len, const UOp *u) {
    StrBuf sb;
    sb_init(&sb);
    char b[64];
    sb_printf(&sb, "%%%u = %s %s", u->id, op_name(uop_op(u)), dts(u->dtype, b));
    if (u->nsrc) {
        sb_puts(&sb, " (");
        for (int i = 0; i < u->nsrc && i < 8; i++) sb_printf(&sb, "%s%%%u", i ? ", " : "", u->src[i]->id);
        if (u->nsrc > 8) sb_printf(&sb, ", ... %d sources", u->nsrc);
        sb_putc(&sb, ')');
    }
    if (u->arg) {
        sb_puts(&sb, " arg=");
        arg_format(&sb, u->arg);
    }
    snprintf(buf, len, "%s", sb_str(&sb));
    if (strlen(sb_str(&sb)) >= len && len > 4) memcpy(buf + len - 4, "...", 4);
    sb_free(&sb);
}

static bool fail(VerifyError *err, const char *rule, const UOp *u, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static bool fail(VerifyError *err, const char *rule, const UOp *u, const char *fmt, ...) {
    if (!err) return false;
    char why[256], node[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    describe(node, sizeof node, u);
    err->rule = rule;
    err->node = u;
    snprintf(err->msg, sizeof err->msg, "%s: %s at %s", rule, why, node);
    return false;
}

/* one node against the rows of its spec */
static bool check_node(const UOp *u, SpecKind kind, VerifyError *err) {
    Op op = uop_op(u);
    Why w = {""};
    for (int i = 0; i < row_count[kind][op]; i++) {
        const SpecRow *r = &spec_rows[row_list[kind][op][i]];
        Verdict v = r->check(u, &w);
        if (v == V_OK) return true;
        if (v == V_BAD) return fail(err, r->rule, u, "%s", w.text);
    }
    return fail(err, "form", u, "no rule of the %s spec allows this %s", kind_names[kind], op_name(op));
}

/* ---- structure ---- */
/* graphs: every RANGE is closed by an END or a REDUCE (or a BUFFERIZE) that lists it */
static bool check_ranges_closed(const UOp **topo, size_t n, VerifyError *err) {
    U64Map closed = {0};
    bool ok = true;
    for (size_t i = 0; i < n && ok; i++) {
        Op op = uop_op(topo[i]);
        if (op != OP_END && op != OP_REDUCE && op != OP_BUFFERIZE) continue;
        for (int s = 1; s < topo[i]->nsrc; s++)
            if (uop_op(topo[i]->src[s]) == OP_RANGE && !u64map_put(&closed, topo[i]->src[s]->id, topo[i])) ok = false;
    }
    if (!ok) {
        u64map_free(&closed);
        return fail(err, "memory", topo[n - 1], "out of memory");
    }
    for (size_t i = 0; i < n && ok; i++)
        if (uop_op(topo[i]) == OP_RANGE && !u64map_get(&closed, topo[i]->id))
            ok = fail(err, "RANGE closed by END", topo[i], "no END or REDUCE closes this RANGE");
    u64map_free(&closed);
    return ok;
}

/* a linear program: sources before users, loops and IFs nested and closed,
 * a RANGE used only inside its loop */
static bool check_program_order(const UOp *lin, VerifyError *err) {
    size_t n = lin->nsrc;
    U64Map pos = {0}, ended = {0};
    const UOp **open = malloc((n + 1) * sizeof *open);
    size_t depth = 0;
    bool ok = open != NULL;
    for (size_t i = 0; i < n && ok; i++) ok = u64map_put(&pos, lin->src[i]->id, (const void *)(uintptr_t)(i + 1));
    if (!ok) {
        free(open);
        u64map_free(&pos);
        return fail(err, "memory", lin, "out of memory");
    }
    for (size_t i = 0; i < n && ok; i++) {
        const UOp *u = lin->src[i];
        Op op = uop_op(u);
        for (int s = 0; s < u->nsrc && ok; s++) {
            const UOp *x = u->src[s];
            uintptr_t p = (uintptr_t)u64map_get(&pos, x->id);
            if (!p) ok = fail(err, "program order", u, "source %%%u is not an instruction of the program", x->id);
            else if (p - 1 >= i) ok = fail(err, "program order", u, "source %%%u comes after its user", x->id);
            else if (uop_op(x) == OP_RANGE && op != OP_END && u64map_get(&ended, x->id))
                ok = fail(err, "RANGE used inside its loop", u, "uses %%%u after the END of its loop", x->id);
        }
        if (!ok) break;
        if (op == OP_RANGE || op == OP_IF) open[depth++] = u;
        else if (op == OP_END || op == OP_ENDIF) {
            const UOp *closes = u->nsrc >= (op == OP_END ? 2 : 1) ? u->src[op == OP_END ? 1 : 0] : NULL;
            if (!depth) ok = fail(err, "loops nested", u, "closes %%%u, which is not open", closes ? closes->id : 0);
            else if (open[depth - 1] != closes)
                ok = fail(err, "loops nested", u, "closes %%%u but %%%u is the innermost open %s", closes ? closes->id : 0,
                          open[depth - 1]->id, uop_op(open[depth - 1]) == OP_RANGE ? "loop" : "IF");
            else {
                depth--;
                if (op == OP_END && !u64map_put(&ended, closes->id, u)) ok = fail(err, "memory", u, "out of memory");
            }
        }
    }
    if (ok && depth)
        ok = fail(err, uop_op(open[depth - 1]) == OP_RANGE ? "RANGE closed by END" : "IF closed by ENDIF", open[depth - 1],
                  "never closed");
    free(open);
    u64map_free(&pos);
    u64map_free(&ended);
    return ok;
}

bool uop_verify(const UOp *root, SpecKind kind, VerifyError *err, size_t *nodes) {
    if (err) {
        err->rule = NULL;
        err->node = NULL;
        err->msg[0] = '\0';
    }
    if (nodes) *nodes = 0;
    if (!root || kind >= SPEC_COUNT) return fail(err, "input", root, "nothing to verify");
    pthread_once(&rows_once, build_rows);
    if (kind == SPEC_PROGRAM) {
        if (uop_op(root) != OP_LINEAR)
            return fail(err, "program", root, "the program spec checks a LINEAR program, not a %s", op_name(uop_op(root)));
        if (nodes) *nodes = root->nsrc;
        for (int i = 0; i < root->nsrc; i++)
            if (!check_node(root->src[i], kind, err)) return false;
        return check_program_order(root, err);
    }
    size_t n = 0;
    const UOp **topo = uop_toposort(root, &n);
    if (!topo) return fail(err, "memory", root, "out of memory");
    if (nodes) *nodes = n;
    bool ok = true;
    for (size_t i = 0; i < n && ok; i++) ok = check_node(topo[i], kind, err);
    if (ok) ok = check_ranges_closed(topo, n, err);
    free((void *)topo);
    return ok;
}

/* ---- the switch for stage_run ---- */
static int verify_state = -1; /* -1: not read yet */
static pthread_once_t env_once = PTHREAD_ONCE_INIT;
static void read_env(void) {
    const char *e = getenv("UOPDB_VERIFY");
    if (verify_state < 0) verify_state = e && *e && strcmp(e, "0") != 0;
}
bool spec_verify_enabled(void) {
    pthread_once(&env_once, read_env);
    return verify_state > 0;
}
void spec_verify_set_enabled(bool on) {
    pthread_once(&env_once, read_env);
    verify_state = on;
}
