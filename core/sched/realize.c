/* realize.c - scheduler step 1: which tensor nodes get a buffer of their own.
 *
 * v0.12.0's rule, as its rangeify and the "debuf" cost function after it
 * decide it:
 *   - every source of the SINK is materialised (it is an output), at its
 *     base: a source that is movement ops over computed work is a view of
 *     that work's buffer, stored in the work's own order (the matmul of
 *     `(a@b).T` is stored as a@b, with its reduced axis); a view of an
 *     input BUFFER or a CONST is copied by a kernel of its own (tinygrad
 *     schedules none for it);
 *   - every CONTIGUOUS is materialised (the user asked for it);
 *   - an EXPAND that broadcasts ends the loops of the dims it broadcasts:
 *     the first elementwise op or REDUCE_AXIS below it (walking from the
 *     outputs towards the inputs through movement ops) is a candidate;
 *   - so is any computed node read by two or more consumers that read it
 *     at different indices: each node is labelled with the loops it is
 *     read in, passed down from its consumers (a new label below a
 *     REDUCE_AXIS or a movement op that re-indexes), and one whose
 *     consumers passed different labels is a candidate;
 *   - a 0-d node is never one: it has no loops to end, and is computed
 *     where it is read (v0.12.0 gives it no ranges of its own);
 *   - a candidate keeps its buffer only when what it computes holds a
 *     reduction that reads a buffer, or reads more than 3 buffers;
 *     otherwise it is computed again wherever it is read (checked sources
 *     first, once the sources' own decisions are known);
 *   - input BUFFERs are already materialised; nothing else is.
 * So a reduction stays inside the kernel when it is only combined
 * elementwise at its own index, or permuted, reshaped or padded (matmul:
 * one kernel), and gets its own kernel when its result is broadcast
 * (softmax: max, sum of exp, divide); log_softmax keeps the log of the sum
 * with the sum. */
#include <stdlib.h>
#include "schedule_internal.h"

/* does the movement op x read its source at other positions than its own? */
static bool reindexes(const SchedState *st, const UOp *x) {
    Op op = uop_op(x);
    if (!op_is(op, OPF_MOVEMENT)) return false;
    const Shape *in = sched_shape(st, x->src[0]), *out = sched_shape(st, x);
    switch (op) {
    case OP_RESHAPE: return !sched_pure_unit_reshape(in, out);
    case OP_EXPAND: case OP_SHRINK: case OP_PAD: return !shape_equal(in, out);
    case OP_PERMUTE: {
        /* a permutation that only moves size-1 dims keeps the element order */
        int last = -1;
        for (uint32_t i = 0; i < x->arg->n; i++) {
            int64_t p = x->arg->items[i]->v.i;
            if (in->d[p] == 1) continue;
            if (p < last) return true;
            last = (int)p;
        }
        return false;
    }
    case OP_FLIP:
        for (uint32_t i = 0; i < x->arg->n; i++) {
            const Arg *f = x->arg->items[i];
            if ((f->kind == ARG_BOOL ? f->v.b : f->v.i != 0) && in->d[i] > 1) return true;
        }
        return false;
    default: return true;
    }
}

/* the sources of x that are tensors (a movement op's sizes are not) */
static int tensor_srcs(const UOp *x) { return op_is(uop_op(x), OPF_MOVEMENT) ? 1 : x->nsrc; }

/* an EXPAND that broadcasts a dim to more than one element */
static bool broadcasts(const SchedState *st, const UOp *x) {
    if (uop_op(x) != OP_EXPAND) return false;
    const Shape *in = sched_shape(st, x->src[0]), *out = sched_shape(st, x);
    for (int d = 0; d < out->ndim; d++)
        if (in->d[d] != out->d[d] && out->d[d] > 1) return true;
    return false;
}

static bool elementwise_or_reduce(Op op) {
    return op == OP_REDUCE_AXIS || op == OP_CAST || op == OP_BITCAST || op_is_alu(op);
}

/* the region a kernel computes for x: x and its sources, not entering
 * materialised nodes (other than x) and input BUFFERs */
typedef struct Region {
    const SchedState *st;
    const UOp *root;
} Region;

static bool region_leaf(const UOp *u, void *ud) {
    const Region *r = ud;
    int p = sched_pos(r->st, u);
    return u != r->root && (uop_op(u) == OP_BUFFER || (p >= 0 && r->st->materialised[p]));
}

static bool is_read(const SchedState *st, const UOp *u) {
    int p = sched_pos(st, u);
    return uop_op(u) == OP_BUFFER || (p >= 0 && st->materialised[p]);
}

/* v0.12.0's cost function for a buffer it may remove: keep it when the
 * region holds a reduction reading a buffer, or reads more than 3 buffers */
static bool worth_a_buffer(const SchedState *st, const UOp *x, bool *ok) {
    Region r = {st, x};
    size_t n;
    const UOp **topo = uop_toposort_gated(x, region_leaf, &r, &n);
    if (!topo) { *ok = false; return true; }
    int reads = 0;
    bool reduce_reads = false;
    for (size_t i = 0; i < n && !reduce_reads; i++) {
        const UOp *u = topo[i];
        if (u != x && is_read(st, u)) {
            reads++;
            continue;
        }
        if (uop_op(u) != OP_REDUCE_AXIS) continue;
        Region rr = {st, u->src[0]};
        size_t m;
        const UOp **inner = uop_toposort_gated(u->src[0], region_leaf, &rr, &m);
        if (!inner) { *ok = false; break; }
        for (size_t j = 0; j < m && !reduce_reads; j++) reduce_reads = is_read(st, inner[j]);
        free(inner);
    }
    free(topo);
    return reduce_reads || reads > 3;
}

/* what an output's buffer holds: the computed work under the SINK source
 * x's movement ops (x itself when it is not a movement op); x when that
 * work is an input BUFFER or a CONST.  *depth is the number of movement
 * ops above what it holds. */
static const UOp *output_base(const UOp *x, int *depth) {
    const UOp *b = x;
    int n = 0;
    for (; op_is(uop_op(b), OPF_MOVEMENT); b = b->src[0]) n++;
    Op op = uop_op(b);
    bool view = op != OP_BUFFER && op != OP_CONST && op != OP_DEVICE;
    *depth = view ? n : 0;
    return view ? b : x;
}

bool sched_realize(SchedState *st) {
    size_t n = st->n;
    size_t nout = st->sink->nsrc ? (size_t)st->sink->nsrc : 1;
    free(st->out_pos);
    free(st->out_depth);
    st->out_pos = malloc(nout * sizeof *st->out_pos);
    st->out_depth = malloc(nout * sizeof *st->out_depth);
    if (!st->out_pos || !st->out_depth) return sched_fail(st, st->sink, "out of memory");
    bool *ending = calloc(n ? n : 1, sizeof *ending);      /* a broadcast above, not yet ended */
    /* the loops a node is read in, as a label: its consumers pass it
     * theirs, or new ones where they reduce or re-index it; mixed when
     * two consumers passed different ones */
    size_t *read_in = calloc(n ? n : 1, sizeof *read_in);
    bool *mixed = calloc(n ? n : 1, sizeof *mixed);
    bool *candidate = calloc(n ? n : 1, sizeof *candidate);
    size_t next_loops = 1;
    bool ok = ending && read_in && mixed && candidate;
    for (int i = 0; ok && i < st->sink->nsrc; i++) {
        const UOp *x = output_base(st->sink->src[i], &st->out_depth[i]);
        int p = sched_pos(st, x);
        if (!st->materialised[p]) SCHED_NOTE(st, "realize_output", x, x);
        st->materialised[p] = true;
        st->out_pos[i] = p;
    }
    /* consumers come after their sources in the toposort, so walking it
     * backwards sees every consumer of a node before the node itself */
    for (size_t i = n; ok && i-- > 0;) {
        const UOp *x = st->topo[i];
        Op op = uop_op(x);
        if (op == OP_CONTIGUOUS && !st->materialised[i]) {
            st->materialised[i] = true;
            SCHED_NOTE(st, "realize_contiguous", x, x);
        }
        if (st->shapes[i].ndim < 0 || op == OP_SINK) continue;
        bool computed = op != OP_BUFFER && op != OP_CONST && op != OP_DEVICE;
        /* a 0-d node has no loops of its own to end: the broadcast above
         * ends at it without a buffer, and its consumers cannot read it at
         * different indices, so its work is computed where it is read */
        bool scalar = st->shapes[i].ndim == 0;
        bool ends_here = ending[i] && elementwise_or_reduce(op);
        if (!st->materialised[i] && computed && !scalar && (ends_here || mixed[i])) {
            st->materialised[i] = candidate[i] = true;
            SCHED_NOTE(st, op == OP_REDUCE_AXIS ? "realize_reduce" : "realize_shared", x, x);
        }
        /* a materialised node starts new loops: the broadcast above ends there */
        bool pass = (!st->materialised[i] && ending[i] && !(scalar && ends_here)) || broadcasts(st, x);
        size_t loops = st->materialised[i] || !read_in[i] ? next_loops++ : read_in[i];
        size_t passed = op == OP_REDUCE_AXIS || reindexes(st, x) ? next_loops++ : loops;
        for (int k = 0; k < tensor_srcs(x); k++) {
            int p = sched_pos(st, x->src[k]);
            if (p < 0) continue;
            ending[p] |= pass;
            if (!read_in[p]) read_in[p] = passed;
            else if (read_in[p] != passed) mixed[p] = true;
        }
    }
    /* the cost function, sources first: a candidate whose work is cheap is
     * computed where it is read instead */
    free(st->inlined);
    st->inlined = calloc(n ? n : 1, sizeof *st->inlined);
    ok = ok && st->inlined;
    for (size_t i = 0; ok && i < n; i++) {
        if (!candidate[i]) continue;
        if (!worth_a_buffer(st, st->topo[i], &ok) && ok) {
            st->materialised[i] = false;
            st->inlined[i] = true;
            SCHED_NOTE(st, "realize_undone_cheap", st->topo[i], st->topo[i]);
        }
    }
    free(ending);
    free(read_in);
    free(mixed);
    free(candidate);
    if (!ok) return sched_fail(st, st->sink, "out of memory");
    int count = 0;
    for (size_t i = 0; i < n; i++) count += st->materialised[i] && uop_op(st->topo[i]) != OP_SINK;
    st->mat = malloc((count ? (size_t)count : 1) * sizeof *st->mat);
    st->mat_of = malloc((n ? n : 1) * sizeof *st->mat_of);
    if (!st->mat || !st->mat_of) return sched_fail(st, st->sink, "out of memory");
    for (size_t i = 0; i < n; i++) {
        st->mat_of[i] = -1;
        if (st->materialised[i] && uop_op(st->topo[i]) != OP_SINK) {
            st->mat_of[i] = st->nmat;
            st->mat[st->nmat++] = st->topo[i];
        }
    }
    return true;
}
