/* ast_interp.c - the kernel-AST interpreter (see ast_interp.h).
 *
 * Statements (SINK, END, STORE) are executed; values are evaluated on
 * demand and cached.  A cached value stays good until one of the RANGEs it
 * depends on moves: every node knows its ranges (a bitset; a REDUCE does not
 * depend on the ranges it closes), every range remembers the tick of its
 * last move, and a value computed at a later tick than all of its ranges'
 * moves is reused.  So loop-invariant work (a reduction inside an output
 * loop that does not use it, an index expression of outer ranges only) is
 * computed once per change of what it reads, like the hoisting the codegen
 * would do.
 *
 * What does not change from one evaluation to the next is worked out once
 * before the run (each node's op, the buffer an INDEX reads, the divisor of
 * a * RECIPROCAL(b)), and the arithmetic the inner loops of a matmul or a
 * reduction spend their time in (float32, float64 and 64-bit integer ADD,
 * SUB and MUL, float32 loads) has a direct path that gives exactly what the
 * general scalar semantics give. */
#include "ast_interp.h"
#include "division.h"
#include "scalar_eval.h"
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../util/stack_guard.h"
#include "../util/u64map.h"
#include "../util/interrupt.h"

typedef struct IVal {
    double f;        /* float dtypes */
    int64_t i;       /* ints, index and bool */
    bool invalid;    /* tinygrad's Invalid: an index that must not be used */
} IVal;

typedef struct INode {
    const UOp *u;
    int *src;             /* positions of the sources */
    int range;            /* RANGE: its number; -1 otherwise */
    uint64_t *deps;       /* ranges the value depends on */
    bool no_deps;         /* depends on no range: once computed, always good */
    int last_dep;         /* the last range it depends on, asked first: in a
                           * loop nest the inner ranges come last and move most */
    bool cached;
    uint8_t op;
    uint8_t fast;         /* its ScalarFast path (scalar_eval.h), if it has one */
    int8_t recip_side;    /* a * RECIPROCAL(b): the side of the RECIPROCAL, else -1 */
    int recip_of;         /* then: the position of b */
    int slot;             /* INDEX: its DEFINE_GLOBAL's buffer, -1 when unusable */
    uint64_t stamp;
    IVal val;
} INode;

typedef struct Interp {
    INode *nodes;
    size_t n;
    U64Map pos;
    int nranges, words;
    int64_t *rval;
    uint64_t *rmoved;
    bool *ractive;
    uint64_t tick;
    void **bufs;
    const int64_t *sizes;
    int nbufs;
    char *err;
    size_t errlen;
    AccessFault *fault;   /* an access outside a buffer, when the run stopped on one */
    bool failed;
    /* evaluation recurses along the kernel's graph; past the stack budget it
     * stops with an error rather than overflowing the stack */
    StackGuard guard;
    int depth;             /* evaluations in progress */
    const UOp *root;
} Interp;

static bool fail(Interp *in, const UOp *u, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool fail(Interp *in, const UOp *u, const char *fmt, ...) {
    if (in->failed) return false;
    in->failed = true;
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(in->err, in->errlen, "interp: %s at node %%%u (%s)", what, u->id, op_name(uop_op(u)));
    return false;
}

/* ---- values in a dtype ---- */

static IVal from_scalar(ScalarVal x) {
    IVal v = {x.f, x.i, false};
    return v;
}
static ScalarVal to_scalar(IVal v) {
    ScalarVal x = {v.f, v.i};
    return x;
}
static IVal from_float(const DType *dt, double f) { return from_scalar(scalar_from_float(dt, f)); }
static IVal from_int(const DType *dt, int64_t i) { return from_scalar(scalar_from_int(dt, i)); }

static IVal convert(const DType *to, const DType *from, IVal x) {
    if (x.invalid) return x;
    return from_scalar(scalar_convert(to, from, to_scalar(x)));
}

static IVal read_elem(const DType *dt, const void *p, int64_t k) { return from_scalar(scalar_read(dt, p, (size_t)k)); }

static bool write_elem(const DType *dt, void *p, int64_t k, IVal v) {
    return scalar_write(dt, p, (size_t)k, to_scalar(v));
}

/* ---- ALU semantics (shared with the tensor reference) ---- */

static bool alu(Interp *in, const UOp *u, const IVal *s, IVal *out) {
    ScalarVal sv[3] = {{0, 0}, {0, 0}, {0, 0}}, r;
    for (int i = 0; i < u->nsrc && i < 3; i++) sv[i] = to_scalar(s[i]);
    const char *why = scalar_alu(uop_op(u), u->dtype, u->src[0]->dtype, u->nsrc, sv, &r);
    if (why) return fail(in, u, "%s (%s)", why, op_name(uop_op(u)));
    *out = from_scalar(r);
    return true;
}

/* ---- evaluation ---- */

static bool eval(Interp *in, int k, IVal *out);

static bool range_end(Interp *in, int k, int64_t *end) {
    IVal e;
    if (!eval(in, in->nodes[k].src[0], &e)) return false;
    if (e.invalid) return fail(in, in->nodes[k].u, "the range's end is Invalid");
    *end = e.i;
    return true;
}

static void move_range(Interp *in, int r, int64_t v) {
    in->rval[r] = v;
    in->rmoved[r] = ++in->tick;
}

/* The buffer an INDEX reads or writes: its slot, or -1 with what is wrong
 * in why (not an INDEX, not on a DEFINE_GLOBAL, no buffer given). */
static int index_slot(const Interp *in, const UOp *u, char *why, size_t len) {
    if (uop_op(u) != OP_INDEX || u->nsrc < 2) return snprintf(why, len, "a load or store needs an INDEX"), -1;
    const UOp *dg = u->src[0];
    if (uop_op(dg) != OP_DEFINE_GLOBAL || !dg->arg || dg->arg->kind != ARG_INT || !dt_is_ptr(dg->dtype))
        return snprintf(why, len, "INDEX must be on a DEFINE_GLOBAL pointer"), -1;
    int64_t s = dg->arg->v.i;
    if (s < 0 || s >= in->nbufs || !in->bufs[s])
        return snprintf(why, len, "DEFINE_GLOBAL %lld has no buffer (%d given)", (long long)s, in->nbufs), -1;
    return (int)s;
}

/* the buffer slot and element of an INDEX; *valid false for an Invalid index */
/* an access of element elem of buffer slot s outside it, through INDEX k */
static bool out_of_range(Interp *in, int k, int s, int64_t elem, bool store) {
    if (in->failed) return false;
    in->failed = true;
    AccessFault *f = in->fault;
    *f = (AccessFault){.failed = true, .store = store, .node_op = OP_INDEX, .index_id = in->nodes[k].u->id,
                       .buffer_op = OP_DEFINE_GLOBAL, .buffer = s, .index = elem, .size = in->sizes[s], .width = 1,
                       .threads = 1};
    /* the open loops, outermost first (ranges are numbered in graph order) */
    for (size_t i = 0; i < in->n; i++) {
        const INode *nd = &in->nodes[i];
        if (nd->range >= 0 && in->ractive[nd->range]) access_fault_add_node(f, nd->u, in->rval[nd->range]);
    }
    access_fault_message(f, NULL, in->err, in->errlen);
    return false;
}

static bool address(Interp *in, int k, bool store, int *slot, int64_t *elem, bool *valid) {
    const INode *nd = &in->nodes[k];
    const UOp *u = nd->u;
    int s = nd->slot;
    if (s < 0) { /* the message, which prepare_node did not keep */
        char why[96];
        index_slot(in, u, why, sizeof why);
        return fail(in, u, "%s", why);
    }
    IVal idx;
    if (!eval(in, nd->src[1], &idx)) return false;
    *valid = !idx.invalid;
    if (u->nsrc > 2) {
        IVal gate;
        if (!eval(in, nd->src[2], &gate)) return false;
        *valid = *valid && !gate.invalid && gate.i;
    }
    *slot = s;
    *elem = idx.i;
    if (*valid && (idx.i < 0 || idx.i >= in->sizes[s])) return out_of_range(in, k, s, idx.i, store);
    return true;
}

static bool load(Interp *in, int k, const DType *dt, IVal *out) {
    int slot;
    int64_t elem;
    bool valid;
    if (!address(in, k, false, &slot, &elem, &valid)) return false;
    const DType *et = in->nodes[k].u->src[0]->dtype->base;
    if (!valid) *out = from_int(dt, 0);
    else if (et->sk == dt->sk) *out = from_scalar(scalar_read_fast(et, in->bufs[slot], (size_t)elem)); /* no conversion */
    else *out = convert(dt, et, read_elem(et, in->bufs[slot], elem));
    return true;
}

static bool reduce(Interp *in, int k, IVal *out) {
    const INode *nd = &in->nodes[k];
    const UOp *u = nd->u;
    const DType *dt = u->dtype;
    Op rop = u->arg && u->arg->kind == ARG_OP ? u->arg->v.op : OP_NOOP;
    bool fl = dt_is_float(dt);
    /* the accumulation's direct path (a float32 sum: the loop this interpreter spends its time in) */
    ScalarFast acc_path = scalar_fast_path(rop, dt->sk, dt->sk, dt->sk);
    IVal acc;
    if (rop == OP_ADD) acc = from_int(dt, 0);
    else if (rop == OP_MUL) acc = from_int(dt, 1);
    else if (rop == OP_MAX) acc = fl ? (IVal){-INFINITY, 0, false} : from_int(dt, dt_min_int(dt));
    else return fail(in, u, "REDUCE needs ADD, MAX or MUL as its arg");
    int nr = u->nsrc - 1;
    int64_t end[16];
    int rs[16];
    if (nr > 16) return fail(in, u, "more than 16 ranges on one REDUCE");
    for (int i = 0; i < nr; i++) {
        rs[i] = in->nodes[nd->src[1 + i]].range;
        if (rs[i] < 0) return fail(in, u, "source %d is not a RANGE", 1 + i);
        if (in->ractive[rs[i]]) return fail(in, u, "its range %%%u is already open", u->src[1 + i]->id);
        if (!range_end(in, nd->src[1 + i], &end[i])) return false;
        if (end[i] <= 0) { *out = acc; return true; }
    }
    for (int i = 0; i < nr; i++) {
        in->ractive[rs[i]] = true;
        move_range(in, rs[i], 0);
    }
    bool ok = true;
    for (;;) {
        IVal v;
        if (uopdb_interrupted()) { ok = fail(in, u, "interrupted"); break; }
        if (!(ok = eval(in, nd->src[0], &v))) break;
        if (v.invalid) { ok = fail(in, u, "reduces an Invalid value"); break; }
        if (acc_path != SCALAR_FAST_NONE) acc = from_scalar(scalar_fast(acc_path, to_scalar(acc), to_scalar(v)));
        else if (fl) acc = from_float(dt, rop == OP_ADD ? acc.f + v.f : rop == OP_MUL ? acc.f * v.f : scalar_max_float(acc.f, v.f));
        else {
            int64_t r = rop == OP_ADD ? (int64_t)((uint64_t)acc.i + (uint64_t)v.i)
                      : rop == OP_MUL ? (int64_t)((uint64_t)acc.i * (uint64_t)v.i)
                      : (dt_is_unsigned(dt) ? ((uint64_t)v.i > (uint64_t)acc.i ? v.i : acc.i) : (v.i > acc.i ? v.i : acc.i));
            acc = from_int(dt, r);
        }
        int i = nr - 1;
        for (; i >= 0; i--) {
            if (in->rval[rs[i]] + 1 < end[i]) { move_range(in, rs[i], in->rval[rs[i]] + 1); break; }
            move_range(in, rs[i], 0);
        }
        if (i < 0) break;
    }
    for (int i = 0; i < nr; i++) in->ractive[rs[i]] = false;
    *out = acc;
    return ok;
}

/* The first n sources of an ALU op into s: 1 when all are values, 0 when
 * one is Invalid (then *out is it and the rest are not evaluated), -1 when
 * an evaluation failed. */
static inline int alu_sources(Interp *in, const INode *nd, int n, IVal *s, IVal *out) {
    for (int i = 0; i < n; i++) {
        if (!eval(in, nd->src[i], &s[i])) return -1;
        if (s[i].invalid) { *out = s[i]; return 0; }
    }
    return 1;
}

static bool compute(Interp *in, int k, IVal *out) {
    const INode *nd = &in->nodes[k];
    const UOp *u = nd->u;
    Op op = (Op)nd->op;
    if (nd->fast != SCALAR_FAST_NONE) { /* before the general dispatch: the inner loops' ops */
        IVal s[2];
        int got = alu_sources(in, nd, 2, s, out);
        if (got > 0) *out = from_scalar(scalar_fast((ScalarFast)nd->fast, to_scalar(s[0]), to_scalar(s[1])));
        return got >= 0;
    }
    switch (op) {
    case OP_CONST: {
        const Arg *a = u->arg;
        if (!a) return fail(in, u, "CONST without a value");
        if (a->kind == ARG_INVALID) *out = (IVal){0, 0, true};
        else if (a->kind == ARG_FLOAT) *out = from_float(u->dtype, a->v.f);
        else if (a->kind == ARG_INT) *out = from_int(u->dtype, a->v.i);
        else if (a->kind == ARG_BOOL) *out = from_int(u->dtype, a->v.b);
        else return fail(in, u, "CONST without a number");
        return true;
    }
    case OP_RANGE:
        if (!in->ractive[nd->range]) return fail(in, u, "RANGE used outside its loop");
        *out = from_int(u->dtype, in->rval[nd->range]);
        return true;
    case OP_INDEX:
        if (dt_is_ptr(u->dtype)) return fail(in, u, "a pointer INDEX used as a value");
        return load(in, k, u->dtype, out);
    case OP_LOAD:
        return load(in, nd->src[0], u->dtype, out);
    case OP_REDUCE: return reduce(in, k, out);
    case OP_WHERE: {
        /* both branches are evaluated, as generated code does: a load in the
         * branch not taken must be safe by its own gate */
        IVal s[3];
        for (int i = 0; i < 3; i++)
            if (!eval(in, nd->src[i], &s[i])) return false;
        *out = s[0].invalid ? s[0] : s[s[0].i ? 1 : 2];
        return true;
    }
    case OP_CAST: {
        IVal v;
        if (!eval(in, nd->src[0], &v)) return false;
        *out = convert(u->dtype, u->src[0]->dtype, v);
        return true;
    }
    default: break;
    }
    int side = nd->recip_side;
    if (side >= 0) {
        /* a * RECIPROCAL(b) is a / b (division.h) */
        IVal s[2];
        if (!eval(in, nd->src[1 - side], &s[0])) return false;
        if (s[0].invalid) { *out = s[0]; return true; }
        if (!eval(in, nd->recip_of, &s[1])) return false;
        if (s[1].invalid) { *out = s[1]; return true; }
        ScalarVal sv[2] = {to_scalar(s[0]), to_scalar(s[1])}, r;
        const char *why = scalar_alu(OP_FDIV, u->dtype, u->dtype, 2, sv, &r);
        if (why) return fail(in, u, "%s (FDIV)", why);
        *out = from_scalar(r);
        return true;
    }
    if (op_is_alu(op) && op != OP_BITCAST && u->nsrc <= 3) {
        IVal s[3];
        int got = alu_sources(in, nd, u->nsrc, s, out);
        return got > 0 ? alu(in, u, s, out) : got == 0;
    }
    return fail(in, u, "the interpreter does not evaluate this op");
}

static bool eval(Interp *in, int k, IVal *out) {
    INode *nd = &in->nodes[k];
    if (nd->cached && nd->no_deps) {
        *out = nd->val;
        return true;
    }
    if (nd->cached && in->rmoved[nd->last_dep] <= nd->stamp) {
        bool fresh = true;
        for (int w = 0; fresh && w < in->words; w++)
            for (uint64_t b = nd->deps[w]; b && fresh; b &= b - 1) fresh = in->rmoved[w * 64 + __builtin_ctzll(b)] <= nd->stamp;
        if (fresh) { *out = nd->val; return true; }
    }
    if (stack_guard_exceeded(&in->guard))
        return fail(in, nd->u, "graph too deep for the interpreter: %zu nested nodes (limit ~%d)", uop_graph_depth(in->root),
                    in->depth);
    in->depth++;
    bool ok = compute(in, k, out);
    in->depth--;
    if (!ok) return false;
    /* field by field: compute() has just written *out with scalar stores,
     * and one wide load of it would wait for them to reach the cache */
    nd->val.f = out->f;
    nd->val.i = out->i;
    nd->val.invalid = out->invalid;
    nd->stamp = in->tick;
    nd->cached = true;
    return true;
}

/* ---- statements ---- */

static bool exec(Interp *in, int k);

static bool loop(Interp *in, int k, int level) {
    const INode *nd = &in->nodes[k];
    if (level == nd->u->nsrc) return exec(in, nd->src[0]);
    int rk = nd->src[level], r = in->nodes[rk].range;
    int64_t end;
    if (r < 0) {
        /* a constant in place of a range (a size-1 dim) runs once */
        return loop(in, k, level + 1);
    }
    if (in->ractive[r]) return fail(in, nd->u, "its range %%%u is already open", in->nodes[rk].u->id);
    if (!range_end(in, rk, &end)) return false;
    in->ractive[r] = true;
    bool ok = true;
    for (int64_t v = 0; ok && v < end; v++) {
        if (uopdb_interrupted()) { ok = fail(in, nd->u, "interrupted"); break; }
        move_range(in, r, v);
        ok = loop(in, k, level + 1);
    }
    in->ractive[r] = false;
    return ok;
}

static bool exec_statement(Interp *in, int k);

static bool exec(Interp *in, int k) {
    if (stack_guard_exceeded(&in->guard))
        return fail(in, in->nodes[k].u, "graph too deep for the interpreter: %zu nested nodes (limit ~%d)",
                    uop_graph_depth(in->root), in->depth);
    in->depth++;
    bool ok = exec_statement(in, k);
    in->depth--;
    return ok;
}

static bool exec_statement(Interp *in, int k) {
    const INode *nd = &in->nodes[k];
    const UOp *u = nd->u;
    switch (uop_op(u)) {
    case OP_SINK:
    case OP_GROUP:
        for (int i = 0; i < u->nsrc; i++)
            if (!exec(in, nd->src[i])) return false;
        return true;
    case OP_END: return loop(in, k, 1);
    case OP_STORE: {
        int slot;
        int64_t elem;
        bool valid;
        if (u->nsrc < 2) return fail(in, u, "STORE needs a target and a value");
        if (!address(in, nd->src[0], true, &slot, &elem, &valid)) return false;
        IVal v;
        if (!eval(in, nd->src[1], &v)) return false;
        if (!valid) return true;
        if (v.invalid) return fail(in, u, "stores an Invalid value");
        const DType *et = u->src[0]->src[0]->dtype->base;
        if (!write_elem(et, in->bufs[slot], elem, convert(et, u->src[1]->dtype, v)))
            return fail(in, u, "cannot store to a buffer of this dtype");
        return true;
    }
    default: return fail(in, u, "not a statement (SINK, END or STORE expected)");
    }
}

/* ---- setup ---- */

/* the direct path of a scalar binary op, if it has one */
static ScalarFast fast_path(const UOp *u) {
    if (u->nsrc != 2 || u->dtype->count != 1 || dt_is_ptr(u->dtype)) return SCALAR_FAST_NONE;
    return scalar_fast_path(uop_op(u), u->dtype->sk, u->src[0]->dtype->sk, u->src[1]->dtype->sk);
}

/* what node i's evaluations share: its op, its direct path, the divisor of
 * a * RECIPROCAL(b), the buffer of an INDEX */
static void prepare_node(Interp *in, int i) {
    INode *nd = &in->nodes[i];
    const UOp *u = nd->u;
    nd->op = (uint8_t)uop_op(u);
    const UOp *recip = NULL;
    nd->recip_side = (int8_t)mul_reciprocal_side(u, &recip);
    if (nd->recip_side >= 0) {
        int dk = nd->src[nd->recip_side];
        while (in->nodes[dk].u != recip) dk = in->nodes[dk].src[0];
        nd->recip_of = in->nodes[dk].src[0];
    }
    nd->fast = (uint8_t)(nd->recip_side >= 0 ? SCALAR_FAST_NONE : fast_path(u));
    char why[96];
    nd->slot = nd->op == OP_INDEX ? index_slot(in, u, why, sizeof why) : -1;
}

bool ast_interp_run(const UOp *kernel_sink, void **bufs, const int64_t *buf_sizes, int nbufs, char *err,
                    size_t errlen) {
    return ast_interp_run_fault(kernel_sink, bufs, buf_sizes, nbufs, NULL, err, errlen);
}

bool ast_interp_run_fault(const UOp *kernel_sink, void **bufs, const int64_t *buf_sizes, int nbufs, AccessFault *fault,
                          char *err, size_t errlen) {
    char dummy[8];
    AccessFault own;
    if (!fault) fault = &own;
    *fault = (AccessFault){0};
    Interp in = {.bufs = bufs, .fault = fault, .sizes = buf_sizes, .nbufs = nbufs, .err = err && errlen ? err : dummy,
                 .errlen = err && errlen ? errlen : sizeof dummy};
    in.err[0] = 0;
    stack_guard_init(&in.guard);
    in.root = kernel_sink;
    if (!kernel_sink) {
        snprintf(in.err, in.errlen, "interp: no kernel");
        return false;
    }
    size_t n;
    const UOp **topo = uop_toposort(kernel_sink, &n);
    in.nodes = topo ? calloc(n, sizeof *in.nodes) : NULL;
    in.n = n;
    bool ok = in.nodes != NULL;
    for (size_t i = 0; ok && i < n; i++) {
        in.nodes[i].u = topo[i];
        in.nodes[i].range = -1;
        if (uop_op(topo[i]) == OP_RANGE) in.nodes[i].range = in.nranges++;
        ok = u64map_put(&in.pos, topo[i]->id, (const void *)(intptr_t)(i + 1));
    }
    in.words = (in.nranges + 63) / 64;
    in.rval = calloc((size_t)in.nranges + 1, sizeof *in.rval);
    in.rmoved = calloc((size_t)in.nranges + 1, sizeof *in.rmoved);
    in.ractive = calloc((size_t)in.nranges + 1, sizeof *in.ractive);
    uint64_t *deps = calloc(n * (size_t)in.words + 1, sizeof *deps);
    ok = ok && in.rval && in.rmoved && in.ractive && deps;
    for (size_t i = 0; ok && i < n; i++) {
        INode *nd = &in.nodes[i];
        const UOp *u = nd->u;
        nd->deps = deps + i * (size_t)in.words;
        nd->src = u->nsrc ? malloc(u->nsrc * sizeof *nd->src) : NULL;
        if (u->nsrc && !nd->src) { ok = false; break; }
        for (int s = 0; s < u->nsrc; s++) {
            nd->src[s] = (int)(intptr_t)u64map_get(&in.pos, u->src[s]->id) - 1;
            for (int w = 0; w < in.words; w++) nd->deps[w] |= in.nodes[nd->src[s]].deps[w];
        }
        if (nd->range >= 0) nd->deps[nd->range / 64] |= 1ull << (nd->range % 64);
        if (uop_op(u) == OP_REDUCE)
            for (int s = 1; s < u->nsrc; s++) {
                int r = in.nodes[nd->src[s]].range;
                if (r >= 0) nd->deps[r / 64] &= ~(1ull << (r % 64));
            }
        nd->no_deps = true;
        for (int w = 0; w < in.words; w++) {
            nd->no_deps = nd->no_deps && !nd->deps[w];
            if (nd->deps[w]) nd->last_dep = w * 64 + 63 - __builtin_clzll(nd->deps[w]);
        }
        prepare_node(&in, (int)i);
    }
    if (!ok) snprintf(in.err, in.errlen, "interp: out of memory");
    if (ok) ok = exec(&in, (int)n - 1);
    for (size_t i = 0; in.nodes && i < n; i++) free(in.nodes[i].src);
    free(deps);
    free(in.rval);
    free(in.rmoved);
    free(in.ractive);
    free(in.nodes);
    free(topo);
    u64map_free(&in.pos);
    return ok && !in.failed;
}
