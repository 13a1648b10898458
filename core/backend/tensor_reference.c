/* tensor_reference.c - the naive tensor-semantics evaluator.
 *
 * Each node's value is a function from an index to an element.  Movement
 * ops only transform the index (RESHAPE re-ravels, EXPAND pins broadcast
 * axes to 0, PERMUTE reorders, PAD answers 0 outside, SHRINK offsets, FLIP
 * mirrors); elementwise ops evaluate their sources at the same index.
 * Nodes are materialised into dense arrays where that is needed or saves
 * work: buffers, constants, reductions, CONTIGUOUS, and nodes with several
 * users (so shared subgraphs are not recomputed per element).
 *
 * Evaluating an element recurses through the nodes that are not
 * materialised, so a chain of them is also cut every REF_LAZY_DEPTH nodes by
 * materialising the node there: a graph of any depth evaluates with a
 * bounded stack.  Only a node too large to materialise (more than
 * REF_MATERIALISE_MAX elements) can leave a long chain; the stack guard
 * then stops the evaluation with an error naming the depth. */
#include "tensor_reference.h"
#include "scalar_eval.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../util/stack_guard.h"

/* the longest chain of nodes evaluated per element before one is materialised */
enum { REF_LAZY_DEPTH = 256 };
/* the most elements a node is materialised with to share or cut work */
#define REF_MATERIALISE_MAX ((int64_t)1 << 24)

typedef ScalarVal RVal;

typedef struct RNode {
    const UOp *u;
    Shape shape;
    int *src;          /* positions of the sources in the node array */
    bool is_float;
    bool materialise;
    RVal *data;        /* dense values when materialised */
} RNode;

typedef struct Ref {
    const UOp *root;
    RNode *nodes;
    size_t n;
    RefBufferFn buffers;
    void *ud;
    char *err;
    size_t errlen;
    bool failed;
    StackGuard guard;
} Ref;

static void fail(Ref *r, const UOp *u, const char *what) {
    if (r->failed) return;
    r->failed = true;
    snprintf(r->err, r->errlen, "reference: %s at node %%%u (%s)", what, u->id, op_name(uop_op(u)));
}

static RVal make_val(const DType *dt, double f, int64_t i, bool from_float) {
    return from_float ? scalar_from_float(dt, f) : scalar_from_int(dt, i);
}

static size_t ravel(const Shape *s, const int64_t *idx) {
    size_t k = 0;
    for (int d = 0; d < s->ndim; d++) k = k * (size_t)s->d[d] + (size_t)idx[d];
    return k;
}

static void unravel(const Shape *s, size_t k, int64_t *idx) {
    for (int d = s->ndim - 1; d >= 0; d--) {
        idx[d] = s->d[d] ? (int64_t)(k % (size_t)s->d[d]) : 0;
        k = s->d[d] ? k / (size_t)s->d[d] : 0;
    }
}

static RVal alu(Ref *r, const UOp *u, const RVal *s, const DType *sdt) {
    RVal z = {0, 0};
    if (uop_op(u) == OP_WHERE) return s[0].i ? s[1] : s[2];
    const char *why = scalar_alu(uop_op(u), u->dtype, sdt, u->nsrc, s, &z);
    if (why) fail(r, u, why);
    return z;
}

static RVal eval_at(Ref *r, int k, const int64_t *idx, int depth);

static RVal reduce_at(Ref *r, int k, const int64_t *idx, int depth) {
    const RNode *nd = &r->nodes[k];
    const UOp *u = nd->u;
    const RNode *src = &r->nodes[nd->src[0]];
    Op rop = u->arg->items[0]->v.op;
    const DType *dt = u->dtype;
    bool fl = dt_is_float(dt);
    RVal acc = {0, 0};
    if (rop == OP_ADD) acc = make_val(dt, 0, 0, fl);
    else if (rop == OP_MUL) acc = make_val(dt, 1, 1, fl);
    else if (rop == OP_MAX) acc = fl ? (RVal){-INFINITY, 0} : (RVal){0, dt_min_int(dt)};
    else { fail(r, u, "unknown reduce op"); return acc; }
    /* iterate the reduced axes (those that are 1 here but not in the source) */
    int64_t sidx[SHAPE_MAX_DIMS];
    memcpy(sidx, idx, sizeof(int64_t) * (size_t)nd->shape.ndim);
    bool red[SHAPE_MAX_DIMS] = {false};
    const Arg *axes = u->arg->items[1];
    for (uint32_t a = 0; a < axes->n; a++) { red[axes->items[a]->v.i] = true; sidx[axes->items[a]->v.i] = 0; }
    /* an empty reduced axis leaves the identity */
    for (int d = 0; d < src->shape.ndim; d++)
        if (red[d] && src->shape.d[d] == 0) return acc;
    for (;;) {
        RVal v = eval_at(r, nd->src[0], sidx, depth + 1);
        if (r->failed) return acc;
        /* the same arithmetic as the ALU op, in the reduce's dtype */
        if (fl) {
            double res = rop == OP_ADD ? acc.f + v.f : rop == OP_MUL ? acc.f * v.f : (v.f > acc.f || isnan(v.f) ? v.f : acc.f);
            acc = make_val(dt, res, 0, true);
        } else {
            int64_t res = rop == OP_ADD ? (int64_t)((uint64_t)acc.i + (uint64_t)v.i)
                        : rop == OP_MUL ? (int64_t)((uint64_t)acc.i * (uint64_t)v.i)
                        : (dt_is_unsigned(dt) ? ((uint64_t)v.i > (uint64_t)acc.i ? v.i : acc.i) : (v.i > acc.i ? v.i : acc.i));
            acc = make_val(dt, 0, res, false);
        }
        int d = src->shape.ndim - 1;
        for (; d >= 0; d--) {
            if (!red[d]) continue;
            if (++sidx[d] < src->shape.d[d]) break;
            sidx[d] = 0;
        }
        if (d < 0) break;
    }
    return acc;
}

static RVal eval_at(Ref *r, int k, const int64_t *idx, int depth) {
    RNode *nd = &r->nodes[k];
    const UOp *u = nd->u;
    RVal z = {0, 0};
    if (nd->data) return nd->data[ravel(&nd->shape, idx)];
    if (stack_guard_exceeded(&r->guard)) {
        if (!r->failed)
            snprintf(r->err, r->errlen, "graph too deep for the reference: %zu nested nodes (limit ~%d)",
                     uop_graph_depth(r->root), depth);
        r->failed = true;
        return z;
    }
    Op op = uop_op(u);
    int64_t sidx[SHAPE_MAX_DIMS];
    const RNode *s0 = nd->src ? &r->nodes[nd->src[0]] : NULL;
    switch (op) {
    case OP_RESHAPE:
        unravel(&s0->shape, ravel(&nd->shape, idx), sidx);
        return eval_at(r, nd->src[0], sidx, depth + 1);
    case OP_EXPAND:
        for (int d = 0; d < nd->shape.ndim; d++) sidx[d] = s0->shape.d[d] == 1 ? 0 : idx[d];
        return eval_at(r, nd->src[0], sidx, depth + 1);
    case OP_PERMUTE:
        for (int d = 0; d < nd->shape.ndim; d++) sidx[u->arg->items[d]->v.i] = idx[d];
        return eval_at(r, nd->src[0], sidx, depth + 1);
    case OP_FLIP:
        for (int d = 0; d < nd->shape.ndim; d++) {
            const Arg *f = u->arg->items[d];
            bool flip = f->kind == ARG_BOOL ? f->v.b : f->v.i != 0;
            sidx[d] = flip ? nd->shape.d[d] - 1 - idx[d] : idx[d];
        }
        return eval_at(r, nd->src[0], sidx, depth + 1);
    case OP_PAD:
    case OP_SHRINK: {
        int64_t begin[SHAPE_MAX_DIMS], end[SHAPE_MAX_DIMS];
        int nb, ne;
        uop_int_vector(u->src[1], begin, SHAPE_MAX_DIMS, &nb);
        uop_int_vector(u->src[2], end, SHAPE_MAX_DIMS, &ne);
        for (int d = 0; d < nd->shape.ndim; d++) {
            sidx[d] = op == OP_PAD ? idx[d] - begin[d] : idx[d] + begin[d];
            if (sidx[d] < 0 || sidx[d] >= s0->shape.d[d]) return make_val(u->dtype, 0, 0, false);
        }
        return eval_at(r, nd->src[0], sidx, depth + 1);
    }
    case OP_CONTIGUOUS: case OP_DETACH: case OP_CONTIGUOUS_BACKWARD: case OP_COPY:
        return eval_at(r, nd->src[0], idx, depth + 1);
    case OP_CAST: {
        RVal v = eval_at(r, nd->src[0], idx, depth + 1);
        bool from_float = dt_is_float(s0->u->dtype);
        return make_val(u->dtype, v.f, v.i, from_float);
    }
    case OP_REDUCE_AXIS: return reduce_at(r, k, idx, depth);
    default: break;
    }
    if (op_is_alu(op)) {
        RVal s[3];
        for (int i = 0; i < u->nsrc && i < 3; i++) {
            /* a scalar source (shape ()) broadcasts */
            const RNode *sn = &r->nodes[nd->src[i]];
            s[i] = eval_at(r, nd->src[i], sn->shape.ndim == 0 ? NULL : idx, depth + 1);
        }
        if (r->failed) return z;
        const DType *sdt = u->nsrc > 1 && op == OP_WHERE ? u->src[1]->dtype : u->src[0]->dtype;
        return alu(r, u, s, sdt);
    }
    fail(r, u, "the reference does not evaluate this op");
    return z;
}

static bool materialise(Ref *r, int k) {
    RNode *nd = &r->nodes[k];
    const UOp *u = nd->u;
    size_t numel = (size_t)shape_numel(&nd->shape);
    RVal *data = calloc(numel ? numel : 1, sizeof *data);
    if (!data) { fail(r, u, "out of memory"); return false; }
    if (uop_op(u) == OP_BUFFER) {
        const void *p = r->buffers ? r->buffers(r->ud, u) : NULL;
        if (!p) { free(data); fail(r, u, "no data for this buffer"); return false; }
        for (size_t e = 0; e < numel; e++) data[e] = scalar_read(u->dtype, p, e);
    } else if (uop_op(u) == OP_CONST) {
        const Arg *a = u->arg;
        if (a->kind == ARG_FLOAT) data[0] = make_val(u->dtype, a->v.f, 0, true);
        else if (a->kind == ARG_INT) data[0] = make_val(u->dtype, 0, a->v.i, false);
        else if (a->kind == ARG_BOOL) data[0] = make_val(u->dtype, 0, a->v.b, false);
        else { free(data); fail(r, u, "a CONST without a value"); return false; }
    } else {
        int64_t idx[SHAPE_MAX_DIMS];
        for (size_t e = 0; e < numel && !r->failed; e++) {
            unravel(&nd->shape, e, idx);
            data[e] = eval_at(r, k, idx, 0);
        }
    }
    nd->data = data;
    return !r->failed;
}

bool ref_eval(const UOp *root, RefBufferFn buffers, void *ud, RefTensor *out, char *err, size_t errlen) {
    char dummy[8];
    Ref r = {.root = root, .buffers = buffers, .ud = ud, .err = err && errlen ? err : dummy,
             .errlen = err && errlen ? errlen : sizeof dummy};
    r.err[0] = 0;
    stack_guard_init(&r.guard);
    memset(out, 0, sizeof *out);
    size_t n;
    const UOp **topo = uop_toposort(root, &n);
    Shape *shapes = topo ? malloc(n * sizeof *shapes) : NULL;
    r.nodes = topo ? calloc(n, sizeof *r.nodes) : NULL;
    int *users = topo ? calloc(n, sizeof *users) : NULL;
    int *lazy = topo ? calloc(n, sizeof *lazy) : NULL; /* nodes evaluated per element from here down */
    r.n = n;
    bool ok = shapes && r.nodes && users && lazy;
    if (!ok) snprintf(r.err, r.errlen, "reference: out of memory");
    if (ok) ok = uop_shapes(topo, n, shapes, r.err, r.errlen);
    if (ok && shapes[n - 1].ndim < 0) { snprintf(r.err, r.errlen, "reference: the root has no shape (not a tensor)"); ok = false; }
    /* positions of sources: ids of one graph are unique, look them up by a
     * map from id to position built over the toposort */
    uint32_t maxid = root->id;
    int *pos = ok ? malloc(((size_t)maxid + 1) * sizeof *pos) : NULL;
    if (ok && !pos) { snprintf(r.err, r.errlen, "reference: out of memory"); ok = false; }
    for (size_t i = 0; ok && i < n; i++) pos[topo[i]->id] = (int)i;
    for (size_t i = 0; ok && i < n; i++) {
        RNode *nd = &r.nodes[i];
        nd->u = topo[i];
        nd->shape = shapes[i];
        nd->is_float = dt_is_float(topo[i]->dtype);
        if (topo[i]->nsrc) {
            nd->src = malloc(topo[i]->nsrc * sizeof *nd->src);
            if (!nd->src) { snprintf(r.err, r.errlen, "reference: out of memory"); ok = false; break; }
            for (int s = 0; s < topo[i]->nsrc; s++) {
                nd->src[s] = pos[topo[i]->src[s]->id];
                users[nd->src[s]]++;
            }
        }
    }
    for (size_t i = 0; ok && i < n; i++) {
        RNode *nd = &r.nodes[i];
        Op op = uop_op(nd->u);
        if (nd->shape.ndim < 0) continue; /* shape sources of movement ops are not evaluated */
        for (int s = 0; s < nd->u->nsrc; s++) {
            const RNode *sn = &r.nodes[nd->src[s]];
            if (sn->shape.ndim >= 0 && !sn->materialise && lazy[nd->src[s]] > lazy[i]) lazy[i] = lazy[nd->src[s]];
        }
        lazy[i]++;
        bool small = shape_numel(&nd->shape) <= REF_MATERIALISE_MAX;
        nd->materialise = op == OP_BUFFER || op == OP_CONST || op == OP_REDUCE_AXIS || op == OP_CONTIGUOUS ||
                          i == n - 1 || (users[i] > 1 && small) || (lazy[i] >= REF_LAZY_DEPTH && small);
        if (op == OP_DEFINE_VAR || op == OP_BIND) { fail(&r, nd->u, "symbolic shapes are not supported"); ok = false; }
        if (ok && nd->materialise) ok = materialise(&r, (int)i);
    }
    if (ok) {
        RNode *rt = &r.nodes[n - 1];
        size_t numel = (size_t)shape_numel(&rt->shape);
        out->dtype = rt->u->dtype;
        out->shape = rt->shape;
        if (rt->is_float) out->f = malloc((numel ? numel : 1) * sizeof *out->f);
        else out->i = malloc((numel ? numel : 1) * sizeof *out->i);
        if (!out->f && !out->i) { snprintf(r.err, r.errlen, "reference: out of memory"); ok = false; }
        for (size_t e = 0; ok && e < numel; e++) {
            if (rt->is_float) out->f[e] = rt->data[e].f;
            else out->i[e] = rt->data[e].i;
        }
    }
    for (size_t i = 0; r.nodes && i < n; i++) {
        free(r.nodes[i].src);
        free(r.nodes[i].data);
    }
    free(pos);
    free(lazy);
    free(users);
    free(r.nodes);
    free(shapes);
    free(topo);
    return ok;
}

void ref_tensor_free(RefTensor *t) {
    free(t->f);
    free(t->i);
    memset(t, 0, sizeof *t);
}

double ref_value(const RefTensor *t, size_t k) { return t->f ? t->f[k] : (double)t->i[k]; }
