/* tensor_reference.c - the tensor-semantics evaluator, with plain loops over
 * whole tensors.
 *
 * Some nodes are materialised into dense row-major arrays: buffers,
 * constants, reductions, CONTIGUOUS, the root, nodes with several users (so
 * shared subgraphs are computed once), and every REF_LAZY_DEPTH-th node of a
 * chain of the others.  A materialised node is computed from its region:
 * itself and the nodes below it, down to materialised ones.  The region is
 * compiled into a small stack program (RInstr) evaluated for a block of up to
 * REF_BLOCK elements at a time, along one axis of the region's iteration
 * space:
 *
 * - movement ops cost nothing per element: the chain of movement ops from a
 *   materialised node up to the region's root becomes one strided view of
 *   its array (ref_view.c), read a block at a time (LOAD: in place when
 *   the block is consecutive elements of the array, as one value when it
 *   repeats one element, filled out only for an op that needs it); a PAD over
 *   arithmetic also zeroes what it adds (MASK), since an op of zeros need not
 *   be zero; a RESHAPE that a view cannot follow materialises its source
 *   first, or, for a source too large for that, reads through a chain of
 *   views;
 * - elementwise ops compute a block from their sources' blocks (ref_ops.c),
 *   rounding to their dtype after every op as scalar_eval does, so no
 *   intermediate product (a matmul's n^3 products) is ever stored whole;
 * - a REDUCE_AXIS folds its source's blocks into accumulators, each output
 *   element's in the order of its reduced elements (sequential over the
 *   reduced axes in row-major order): either a block of outputs at once
 *   for each of up to REF_TILE_ROWS rows of another kept axis, one reduced
 *   element after the other (a float sum of a float MUL adds the products
 *   without storing them, ref_mul_sum_lanes), or one output at a time, a
 *   block of its reduced elements after the other;
 * - an element whose op fails (an integer division by zero) fails the
 *   evaluation only if the result reads it, as element-by-element
 *   evaluation would have it (poison, see Ref).
 *
 * Compiling a region recurses over its nodes, whose depth materialising every
 * REF_LAZY_DEPTH-th node bounds; only nodes too large to materialise (more
 * than REF_MATERIALISE_MAX elements) can make a long chain, and the stack
 * guard then stops with an error naming the depth.  The loops poll the
 * interrupt flag every REF_POLL elements. */
#include "tensor_reference.h"
#include "division.h"
#include "ref_ops.h"
#include "ref_view.h"
#include "scalar_eval.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../util/interrupt.h"
#include "../util/stack_guard.h"

/* the longest chain of nodes evaluated per element before one is materialised */
enum { REF_LAZY_DEPTH = 256 };
/* the most elements a node is materialised with to share or cut work */
#define REF_MATERIALISE_MAX ((int64_t)1 << 24)
/* the most elements a RESHAPE's source is materialised with when a view
 * cannot follow the reshape; a larger one is read through a chain of views
 * (a build may lower it to test that path) */
#ifndef REF_RESHAPE_MATERIALISE_MAX
#define REF_RESHAPE_MATERIALISE_MAX REF_MATERIALISE_MAX
#endif
/* the most instructions of one region (a DAG of huge shared nodes unfolds) */
enum { REF_MAX_INSTRS = 1 << 20 };
/* the most rows of outputs a reduction computes together (see run_reduce) */
enum { REF_TILE_ROWS = 8 };
/* elements evaluated between two polls of the interrupt flag */
enum { REF_POLL = 1 << 16 };

typedef struct RNode {
    const UOp *u;
    Shape shape;
    int *src;          /* positions of the sources in the node array */
    bool is_float;
    bool materialise;
    bool lenient;      /* materialised for a RESHAPE: elements that failed are kept as poison */
    RefWord *data;     /* dense values when materialised */
    RefWord *poison;   /* a lenient node's failed elements (see Ref), or NULL */
} RNode;

/* LOAD pushes a block read through an access; MASK zeroes the top block
 * where an access is not valid; ALU pops its sources and pushes the result;
 * CAST and BITCAST convert the top block */
enum { RI_LOAD, RI_MASK, RI_ALU, RI_CAST, RI_BITCAST };
typedef struct RInstr {
    unsigned char kind;
    unsigned char nsrc;
    Op op;              /* ALU: the op computed (a MUL by a reciprocal computes FDIV) */
    bool src_float[3];
    int node;
    int access;
    int64_t code;       /* ALU: the poison code of its error, once it has failed */
} RInstr;

/* a region compiled into a program, and the state of compiling it */
typedef struct Prog {
    RInstr *ins;
    size_t nins, capins;
    RefAccess *acc;
    size_t nacc, capacc;
    int *path;          /* the movement ops from the region's root to the node compiled */
    size_t npath, cappath;
    int sp, maxsp;      /* the stack's depth in blocks while compiling, and its most */
    int need;           /* a node to materialise before this region can compile, or -1 */
    int through_recip;  /* compiling a division's divisor below the RECIPROCAL's users: the
                           nodes on its path may be materialised with 1/y, not y, so a
                           RESHAPE a view cannot follow is read through a chain of views */
    RefWord *stack;     /* maxsp + 1 blocks */
    RefWord **own;      /* the block each stack position owns (maxsp of them) */
    const RefWord **vs; /* what each position holds: its own block, or a block of a
                           materialised array read in place (ref_access_read) */
    bool *uniform;      /* position k's elements are all own[k][0] (see block) */
    RefWord *spare;     /* the block no position owns: an op's result goes there */
    RefWord *pstack;    /* the poison of each block (valid where flag[k]) */
    bool *flag;         /* whether block k has poison */
    unsigned char bad[REF_BLOCK];
    /* the first failed element in the order of per-element evaluation (the
     * output element's offset, then the reduced element's index), its code */
    bool failed;
    int64_t fail_out, fail_red, fail_code;
} Prog;

typedef struct Ref {
    const UOp *root;
    RNode *nodes;
    size_t n;
    RefBufferFn buffers;
    void *ud;
    char *err;
    size_t errlen;
    bool failed;
    int64_t since_poll;
    StackGuard guard;
    /* Poison: an element whose op failed (an integer division by zero) is
     * an error only where the result needs it.  A PAD's padding never
     * evaluates its source, but here the block around it is evaluated in
     * whole; a RESHAPE's source materialised whole has elements the result
     * may never read.  So a failed element carries a code (1 + an index into
     * these: the node and what went wrong) through the ops after it, MASK
     * clears it, and it fails the evaluation only in the value of a node
     * materialised for itself. */
    const UOp **pnode;
    const char **pwhy;
    size_t npoison, cappoison;
} Ref;

static bool fail(Ref *r, const UOp *u, const char *what) {
    if (r->failed) return false;
    r->failed = true;
    snprintf(r->err, r->errlen, "reference: %s at node %%%u (%s)", what, u->id, op_name(uop_op(u)));
    return false;
}

static bool fail_plain(Ref *r, const char *what) {
    if (r->failed) return false;
    r->failed = true;
    snprintf(r->err, r->errlen, "reference: %s", what);
    return false;
}

static bool grow(void **p, size_t *cap, size_t n, size_t size) {
    if (n < *cap) return true;
    size_t c = *cap ? *cap * 2 : 16;
    void *q = realloc(*p, c * size);
    if (!q) return false;
    *p = q;
    *cap = c;
    return true;
}

/* ---------------------------------------------------------------- compiling a region */

static bool emit(Ref *r, Prog *g, int kind, int node, int access) {
    RNode *nd = &r->nodes[node];
    if (g->nins >= REF_MAX_INSTRS) return fail(r, nd->u, "the expression is too large to evaluate");
    if (!grow((void **)&g->ins, &g->capins, g->nins, sizeof *g->ins)) return fail(r, nd->u, "out of memory");
    RInstr in = {.kind = (unsigned char)kind, .node = node, .access = access};
    if (kind == RI_ALU) {
        in.op = uop_op(nd->u);
        in.nsrc = (unsigned char)(nd->u->nsrc < 3 ? nd->u->nsrc : 3);
        for (int k = 0; k < in.nsrc; k++) in.src_float[k] = r->nodes[nd->src[k]].is_float;
        g->sp -= in.nsrc - 1;
    } else if (kind == RI_LOAD) {
        g->sp++;
    }
    if (g->sp > g->maxsp) g->maxsp = g->sp;
    g->ins[g->nins++] = in;
    return true;
}

/* An access to data (of shape `start`; NULL for a mask that starts as PAD
 * node pad of a dense array of shape `start`) through the movement ops on
 * the path, from the deepest up to the region's root. */
static bool emit_access(Ref *r, Prog *g, int node, const RefWord *data, const RefWord *poison, const Shape *start,
                        int pad, int kind) {
    int nv = 1, capv = 1;
    RefView *views = malloc((size_t)capv * sizeof *views);
    if (!views) return fail(r, r->nodes[node].u, "out of memory");
    ref_view_init(&views[0], start);
    if (pad >= 0) ref_view_apply(&views[0], r->nodes[pad].u, &r->nodes[pad].shape);
    for (size_t p = g->npath; p-- > 0;) {
        const RNode *m = &r->nodes[g->path[p]];
        if (ref_view_apply(&views[nv - 1], m->u, &m->shape)) continue;
        /* a RESHAPE the view cannot follow: its source is materialised
         * first, or, too large for that, seen through a view of its own */
        const RNode *s = &r->nodes[m->src[0]];
        if (!g->through_recip && shape_numel(&s->shape) <= REF_RESHAPE_MATERIALISE_MAX) {
            g->need = m->src[0];
            free(views);
            return false;
        }
        if (nv == capv) {
            RefView *more = realloc(views, (size_t)(capv *= 2) * sizeof *views);
            if (!more) { free(views); return fail(r, m->u, "out of memory"); }
            views = more;
        }
        ref_view_init(&views[nv], &s->shape);
        ref_view_apply(&views[nv], m->u, &m->shape);
        nv++;
    }
    if (!grow((void **)&g->acc, &g->capacc, g->nacc, sizeof *g->acc)) {
        free(views);
        return fail(r, r->nodes[node].u, "out of memory");
    }
    g->acc[g->nacc] = (RefAccess){.data = data, .poison = poison, .nviews = nv, .views = views};
    return emit(r, g, kind, node, (int)g->nacc++);
}

static bool is_movement(Op op) {
    return op == OP_RESHAPE || op == OP_EXPAND || op == OP_PERMUTE || op == OP_PAD || op == OP_SHRINK || op == OP_FLIP;
}

static bool is_passthrough(Op op) {
    return op == OP_CONTIGUOUS || op == OP_DETACH || op == OP_CONTIGUOUS_BACKWARD || op == OP_COPY;
}

/* whether k is zero wherever its view of materialised nodes reads nothing:
 * only movement ops, pass-throughs and casts down to a materialised node */
static bool zero_preserving(const Ref *r, int k) {
    for (;;) {
        const RNode *nd = &r->nodes[k];
        if (nd->data) return true;
        Op op = uop_op(nd->u);
        if (!is_movement(op) && !is_passthrough(op) && op != OP_CAST) return false;
        k = nd->src[0];
    }
}

static bool too_deep(Ref *r, int depth) {
    if (!r->failed)
        snprintf(r->err, r->errlen, "graph too deep for the reference: %zu nested nodes (limit ~%d)",
                 uop_graph_depth(r->root), depth);
    r->failed = true;
    return false;
}

static bool compile(Ref *r, Prog *g, int k, int depth);

static bool const_is_zero(const UOp *c) {
    const Arg *a = c->arg;
    return a && ((a->kind == ARG_FLOAT && a->v.f == 0) || (a->kind == ARG_INT && a->v.i == 0) ||
                 (a->kind == ARG_BOOL && !a->v.b));
}

/* A float MUL of a constant zero and something not constant is +0.0 here,
 * whatever the other factor holds (NaN, an infinity, a negative number), as
 * tinygrad's symbolic_simple folds x * 0 before any kernel runs; compiled
 * as 0 * 0 so the sign is the fold's.  *done false with nothing emitted
 * when k is not one. */
static bool compile_times_zero(Ref *r, Prog *g, int k, int depth, bool *done) {
    const RNode *nd = &r->nodes[k];
    const UOp *u = nd->u;
    *done = false;
    if (uop_op(u) != OP_MUL || !dt_is_float(u->dtype)) return true;
    const UOp *c0 = inlined_const(u->src[0]), *c1 = inlined_const(u->src[1]);
    if ((c0 != NULL) == (c1 != NULL)) return true;
    int zero = c0 ? 0 : 1;
    if (!const_is_zero(c0 ? c0 : c1)) return true;
    *done = true;
    return compile(r, g, nd->src[zero], depth + 1) && compile(r, g, nd->src[zero], depth + 1) &&
           emit(r, g, RI_ALU, k, -1);
}

/* a float MUL by a reciprocal, compiled as FDIV (division.h); *done false
 * with nothing emitted when k is not one */
static bool compile_division(Ref *r, Prog *g, int k, int depth, bool *done) {
    const RNode *nd = &r->nodes[k];
    const UOp *recip = NULL;
    int side = mul_reciprocal_side(nd->u, &recip);
    *done = side >= 0;
    if (side < 0) return true;
    if (!compile(r, g, nd->src[1 - side], depth + 1)) return false;
    /* down to the reciprocal: its movement ops go on the path */
    size_t npath = g->npath;
    int rk = nd->src[side];
    while (r->nodes[rk].u != recip) {
        if (is_movement(uop_op(r->nodes[rk].u))) {
            if (!grow((void **)&g->path, &g->cappath, g->npath, sizeof *g->path)) return fail(r, nd->u, "out of memory");
            g->path[g->npath++] = rk;
        }
        rk = r->nodes[rk].src[0];
    }
    g->through_recip++;
    bool ok = compile(r, g, r->nodes[rk].src[0], depth + 1);
    g->through_recip--;
    g->npath = npath;
    if (!ok || !emit(r, g, RI_ALU, k, -1)) return false;
    g->ins[g->nins - 1].op = OP_FDIV;
    return true;
}

/* compiles node k (reached through g->path) in post-order */
static bool compile(Ref *r, Prog *g, int k, int depth) {
    if (stack_guard_exceeded(&r->guard)) return too_deep(r, depth);
    const RNode *nd = &r->nodes[k];
    const UOp *u = nd->u;
    if (nd->data) return emit_access(r, g, k, nd->data, nd->poison, &nd->shape, -1, RI_LOAD);
    Op op = uop_op(u);
    if (is_movement(op)) {
        if (!grow((void **)&g->path, &g->cappath, g->npath, sizeof *g->path)) return fail(r, u, "out of memory");
        g->path[g->npath++] = k;
        bool ok = compile(r, g, nd->src[0], depth + 1);
        g->npath--;
        /* a PAD of arithmetic: what the pad adds is 0, whatever the op makes of 0 */
        if (ok && op == OP_PAD && !zero_preserving(r, nd->src[0]))
            ok = emit_access(r, g, k, NULL, NULL, &r->nodes[nd->src[0]].shape, k, RI_MASK);
        return ok;
    }
    if (is_passthrough(op)) return compile(r, g, nd->src[0], depth + 1);
    if (op == OP_CAST) return compile(r, g, nd->src[0], depth + 1) && emit(r, g, RI_CAST, k, -1);
    if (op == OP_BITCAST) {
        if (dt_itemsize(u->dtype) != dt_itemsize(u->src[0]->dtype) || dt_itemsize(u->dtype) > 8)
            return fail(r, u, "BITCAST between dtypes of different sizes");
        return compile(r, g, nd->src[0], depth + 1) && emit(r, g, RI_BITCAST, k, -1);
    }
    if (op_is_alu(op)) {
        bool division, times_zero;
        if (!compile_times_zero(r, g, k, depth, &times_zero)) return false;
        if (times_zero) return true;
        if (!compile_division(r, g, k, depth, &division)) return false;
        if (division) return true;
        for (int i = 0; i < u->nsrc && i < 3; i++)
            if (!compile(r, g, nd->src[i], depth + 1)) return false;
        return emit(r, g, RI_ALU, k, -1);
    }
    return fail(r, u, "the reference does not evaluate this op");
}

static void prog_free(Prog *g) {
    for (size_t i = 0; i < g->nacc; i++) free(g->acc[i].views);
    free(g->acc);
    free(g->ins);
    free(g->path);
    free(g->stack);
    free(g->own);
    free(g->uniform);
    free(g->vs);
    free(g->pstack);
    free(g->flag);
    memset(g, 0, sizeof *g);
}

/* compiles the region of expression root k; false with g->need >= 0 when a
 * node must be materialised first */
static bool prog_compile(Ref *r, Prog *g, int k) {
    memset(g, 0, sizeof *g);
    g->need = -1;
    if (!compile(r, g, k, 0)) return false;
    size_t blocks = (size_t)(g->maxsp ? g->maxsp : 1);
    g->stack = malloc((blocks + 1) * REF_BLOCK * sizeof *g->stack);
    g->own = malloc(blocks * sizeof *g->own);
    g->uniform = calloc(blocks, sizeof *g->uniform);
    g->vs = malloc(blocks * sizeof *g->vs);
    g->pstack = malloc(blocks * REF_BLOCK * sizeof *g->pstack);
    g->flag = calloc(blocks, sizeof *g->flag);
    if (!g->stack || !g->own || !g->uniform || !g->vs || !g->pstack || !g->flag) return fail(r, r->nodes[k].u, "out of memory");
    for (size_t b = 0; b < blocks; b++) g->vs[b] = g->own[b] = g->stack + b * REF_BLOCK;
    g->spare = g->stack + blocks * REF_BLOCK;
    return true;
}

/* ---------------------------------------------------------------- running a region */

/* the len elements of position k: a uniform block is filled out first */
static const RefWord *block(Prog *g, int k, int64_t len) {
    if (g->uniform[k]) {
        RefWord *o = g->own[k];
        for (int64_t t = 1; t < len; t++) o[t] = o[0];
        g->uniform[k] = false;
    }
    return g->vs[k];
}

/* block k, to be changed in place: a block read in place is copied first */
static RefWord *writable_slot(Prog *g, int k, int64_t len) {
    block(g, k, len);
    if (g->vs[k] != g->own[k]) {
        memcpy(g->own[k], g->vs[k], (size_t)len * sizeof *g->own[k]);
        g->vs[k] = g->own[k];
    }
    return g->own[k];
}
static RefWord *pslot(Prog *g, int k) { return g->pstack + (size_t)k * REF_BLOCK; }

/* marks block k as having poison, starting from none */
static RefWord *poison_block(Prog *g, int k, int64_t len) {
    RefWord *p = pslot(g, k);
    if (!g->flag[k]) memset(p, 0, (size_t)len * sizeof *p);
    g->flag[k] = true;
    return p;
}

static bool run_alu(Ref *r, Prog *g, RInstr *in, int sp, int64_t len) {
    const RefWord *src[3];
    for (int k = 0; k < in->nsrc; k++) {
        src[k] = block(g, sp + k, len);
        /* an element keeps the first poison of its sources, in evaluation order */
        if (k > 0 && g->flag[sp + k]) {
            RefWord *p0 = poison_block(g, sp, len), *pk = pslot(g, sp + k);
            for (int64_t t = 0; t < len; t++)
                if (!p0[t].i) p0[t] = pk[t];
        }
    }
    const UOp *u = r->nodes[in->node].u;
    /* the result goes to the spare block, which position sp then owns; the
     * block it owned is the spare once its sources are read */
    RefWord *out = g->spare;
    g->spare = g->own[sp];
    g->own[sp] = out;
    g->vs[sp] = out;
    g->uniform[sp] = false;
    const char *why = ref_block_alu_as(in->op, u, src, in->src_float, out, len, g->bad);
    if (!why) return true;
    if (!in->code) {
        if (!grow((void **)&r->pnode, &r->cappoison, r->npoison, sizeof *r->pnode)) return fail(r, u, "out of memory");
        const char **w = realloc(r->pwhy, r->cappoison * sizeof *w);
        if (!w) return fail(r, u, "out of memory");
        r->pwhy = w;
        r->pnode[r->npoison] = u;
        r->pwhy[r->npoison] = why;
        in->code = (int64_t)++r->npoison;
    }
    RefWord *p0 = poison_block(g, sp, len);
    for (int64_t t = 0; t < len; t++)
        if (g->bad[t] && !p0[t].i) p0[t].i = in->code;
    return true;
}

/* Evaluates the block idx + t e_b (t < len; b < 0: the element idx) with
 * the first nins instructions of the region; with all of them, into position
 * 0 (its poison in pslot 0 where flag[0]).  False on failure. */
static bool run_block(Ref *r, Prog *g, const int64_t *idx, int b, int64_t len, size_t nins) {
    int sp = 0;
    for (size_t i = 0; i < nins; i++) {
        RInstr *in = &g->ins[i];
        const RefAccess *a = in->kind == RI_LOAD || in->kind == RI_MASK ? &g->acc[in->access] : NULL;
        switch (in->kind) {
        case RI_LOAD:
            g->vs[sp] = ref_access_read(a, idx, b, len, g->own[sp], &g->uniform[sp]);
            g->flag[sp] = false;
            if (a->poison) {
                RefAccess pa = *a;
                pa.data = a->poison;
                RefWord *p = pslot(g, sp);
                ref_access_block(&pa, idx, b, len, p);
                for (int64_t t = 0; t < len && !g->flag[sp]; t++) g->flag[sp] = p[t].i != 0;
            }
            sp++;
            break;
        case RI_MASK:
            ref_access_block(a, idx, b, len, writable_slot(g, sp - 1, len));
            if (g->flag[sp - 1]) ref_access_block(a, idx, b, len, pslot(g, sp - 1));
            break;
        case RI_CAST: {
            const UOp *u = r->nodes[in->node].u;
            ref_block_cast(u->dtype, u->src[0]->dtype, writable_slot(g, sp - 1, len), len);
            break;
        }
        case RI_BITCAST: {
            const UOp *u = r->nodes[in->node].u;
            ref_block_bitcast(u->dtype, u->src[0]->dtype, writable_slot(g, sp - 1, len), len);
            break;
        }
        default:
            sp -= in->nsrc;
            if (!run_alu(r, g, in, sp, len)) return false;
            sp++;
        }
    }
    r->since_poll += len + (int64_t)g->nins;
    if (r->since_poll >= REF_POLL) {
        r->since_poll = 0;
        if (uopdb_interrupted()) return fail_plain(r, "interrupted");
    }
    return true;
}

/* The poison left in the result block: kept when keep is lenient (the
 * block is len elements at base, stride sb, of its array); else the
 * earliest failed element, by its output offset (base + t sb) and reduced
 * index (red + t rstep), becomes the region's error when it ends.  Element
 * by element evaluation would have stopped at that one. */
static bool settle_poison(Ref *r, Prog *g, RNode *keep, int64_t base, int64_t sb, int64_t red, int64_t rstep,
                          int64_t len) {
    if (!g->flag[0]) return true;
    const RefWord *p = pslot(g, 0);
    if (keep && keep->lenient) {
        if (!keep->poison) keep->poison = calloc((size_t)shape_numel(&keep->shape), sizeof *keep->poison);
        if (!keep->poison) return fail(r, keep->u, "out of memory");
        for (int64_t t = 0; t < len; t++) keep->poison[base + t * sb] = p[t];
        return true;
    }
    for (int64_t t = 0; t < len; t++) {
        if (!p[t].i) continue;
        int64_t o = base + t * sb, e = red + t * rstep;
        if (!g->failed || o < g->fail_out || (o == g->fail_out && e < g->fail_red)) {
            g->failed = true;
            g->fail_out = o;
            g->fail_red = e;
            g->fail_code = p[t].i;
        }
    }
    return true;
}

static bool region_result(Ref *r, const Prog *g) {
    if (!g->failed) return true;
    return fail(r, r->pnode[g->fail_code - 1], r->pwhy[g->fail_code - 1]);
}

/* the axis to run blocks along: the innermost allowed one with at least 16
 * elements, else the largest allowed one with more than 1; -1 if none */
static int block_axis(const Shape *s, const bool *allowed) {
    int best = -1;
    for (int d = s->ndim - 1; d >= 0; d--)
        if (allowed[d] && s->d[d] >= 16) return d;
    for (int d = 0; d < s->ndim; d++)
        if (allowed[d] && s->d[d] > 1 && (best < 0 || s->d[d] > s->d[best])) best = d;
    return best;
}

/* the next index of s in row-major order over the dims with walk[d] (the
 * others kept); false after the last */
static bool next_index(int64_t *idx, const Shape *s, const bool *walk) {
    for (int d = s->ndim - 1; d >= 0; d--) {
        if (!walk[d]) continue;
        if (++idx[d] < s->d[d]) return true;
        idx[d] = 0;
    }
    return false;
}

static void row_major_strides(const Shape *s, int64_t *st) {
    int64_t m = 1;
    for (int d = s->ndim - 1; d >= 0; d--) {
        st[d] = m;
        m *= s->d[d];
    }
}

/* writes block v (len elements along axis b, stride sb) at out + base */
static void store_block(RefWord *out, int64_t base, int64_t sb, const RefWord *v, int64_t len) {
    if (sb == 1) memcpy(out + base, v, (size_t)len * sizeof *v);
    else for (int64_t t = 0; t < len; t++) out[base + t * sb] = v[t];
}

static bool run_elementwise(Ref *r, Prog *g, RNode *nd, RefWord *out) {
    const Shape *s = &nd->shape;
    bool walk[SHAPE_MAX_DIMS] = {false};
    int64_t ost[SHAPE_MAX_DIMS], idx[SHAPE_MAX_DIMS] = {0};
    for (int d = 0; d < s->ndim; d++) walk[d] = true;
    int b = block_axis(s, walk);
    if (b >= 0) walk[b] = false;
    row_major_strides(s, ost);
    int64_t n = b >= 0 ? s->d[b] : 1;
    do {
        int64_t base = 0;
        for (int d = 0; d < s->ndim; d++)
            if (d != b) base += idx[d] * ost[d];
        for (int64_t t0 = 0; t0 < n; t0 += REF_BLOCK) {
            int64_t len = n - t0 < REF_BLOCK ? n - t0 : REF_BLOCK;
            if (b >= 0) idx[b] = t0;
            if (!run_block(r, g, idx, b, len, g->nins)) return false;
            int64_t at = base + (b >= 0 ? t0 * ost[b] : 0), sb = b >= 0 ? ost[b] : 1;
            store_block(out, at, sb, block(g, 0, len), len);
            if (!settle_poison(r, g, nd, at, sb, 0, 0, len)) return false;
        }
        if (b >= 0) idx[b] = 0;
    } while (next_index(idx, s, walk));
    return region_result(r, g);
}

/* Folds the block idx + t e_b (t < len) of a reduction's source into
 * acc[0..len); with mul_sum (see ref_mul_sum_fusable), the region's final
 * MUL is folded in by ref_mul_sum_lanes unless a source has poison. */
static bool run_lanes(Ref *r, Prog *g, const RefReduce *rd, bool mul_sum, const int64_t *idx, int b, int64_t len,
                      RefWord *acc) {
    if (!mul_sum) {
        if (!run_block(r, g, idx, b, len, g->nins)) return false;
        ref_reduce_lanes(rd, acc, block(g, 0, len), len);
        return true;
    }
    RInstr *mul = &g->ins[g->nins - 1];
    if (!run_block(r, g, idx, b, len, g->nins - 1)) return false;
    if (g->flag[0] || g->flag[1]) {
        if (!run_alu(r, g, mul, 0, len)) return false;
        ref_reduce_lanes(rd, acc, block(g, 0, len), len);
    } else {
        ref_mul_sum_lanes(r->nodes[mul->node].u, acc, g->vs[0], g->uniform[0], g->vs[1], g->uniform[1], len);
    }
    return true;
}

/* REDUCE_AXIS node nd over its source's shape s into out (nd's shape) */
static bool run_reduce(Ref *r, Prog *g, const RNode *nd, const Shape *s, RefWord *out) {
    const UOp *u = nd->u;
    RefReduce rd = {u->arg->items[0]->v.op, u->dtype, r->nodes[nd->src[0]].is_float};
    /* a float sum narrower than float64 accumulates in float64 and is
     * rounded once at the end: a float32 sum does not stop growing at 2^24,
     * so an exact result computed in another order is not reported wrong */
    bool wide = rd.op == OP_ADD && rd.src_float && dt_is_float(u->dtype) && u->dtype->kind == DTK_SCALAR && u->dtype->sk != SK_FLOAT64;
    if (wide) rd.dt = dt_scalar(SK_FLOAT64);
    RefWord id = ref_reduce_identity(&rd), acc[REF_TILE_ROWS * REF_BLOCK];
    bool red[SHAPE_MAX_DIMS] = {false}, keep[SHAPE_MAX_DIMS] = {false}, walk_out[SHAPE_MAX_DIMS], walk_red[SHAPE_MAX_DIMS];
    const Arg *axes = u->arg->items[1];
    for (uint32_t a = 0; a < axes->n; a++) red[axes->items[a]->v.i] = true;
    int64_t ost[SHAPE_MAX_DIMS], idx[SHAPE_MAX_DIMS] = {0};
    row_major_strides(&nd->shape, ost);
    for (int d = 0; d < s->ndim; d++) keep[d] = !red[d];
    /* a block of outputs (along a kept axis a), or a block of the reduced
     * elements of one output (along the innermost reduced axis b) */
    int a = block_axis(s, keep), b = -1;
    for (int d = s->ndim - 1; d >= 0 && b < 0; d--)
        if (red[d] && s->d[d] > 1) b = d;
    bool lanes = a >= 0 && (s->d[a] >= 16 || b < 0 || s->d[a] >= s->d[b]);
    int blk = lanes ? a : b;
    /* with a block of outputs, a tile of rows along another kept axis: each
     * reduced element's blocks for the rows read the same parts of the
     * arrays, which then come from the cache */
    int rows_axis = -1;
    for (int d = s->ndim - 1; d >= 0 && lanes && rows_axis < 0; d--)
        if (keep[d] && d != a && s->d[d] > 1) rows_axis = d;
    const RInstr *last = g->nins ? &g->ins[g->nins - 1] : NULL;
    bool mul_sum = lanes && last && last->kind == RI_ALU &&
                   ref_mul_sum_fusable(last->op, r->nodes[last->node].u, last->src_float, &rd);
    for (int d = 0; d < s->ndim; d++) {
        walk_out[d] = !red[d] && d != blk && d != rows_axis;
        walk_red[d] = red[d] && d != blk;
    }
    int64_t n = blk >= 0 ? s->d[blk] : 1;
    do {
        int64_t base = 0;
        for (int d = 0; d < s->ndim; d++)
            if (!red[d] && d != blk) base += idx[d] * ost[d];
        if (lanes) {
            int64_t nrows = rows_axis >= 0 ? s->d[rows_axis] : 1;
            for (int64_t r0 = 0; r0 < nrows; r0 += REF_TILE_ROWS) {
                int64_t rows = nrows - r0 < REF_TILE_ROWS ? nrows - r0 : REF_TILE_ROWS;
                for (int64_t t0 = 0; t0 < n; t0 += REF_BLOCK) {
                    int64_t len = n - t0 < REF_BLOCK ? n - t0 : REF_BLOCK;
                    for (int64_t t = 0; t < rows * REF_BLOCK; t++) acc[t] = id;
                    idx[a] = t0;
                    int64_t red = 0;
                    do {
                        for (int64_t q = 0; q < rows; q++) {
                            int64_t at = base + t0 * ost[a];
                            if (rows_axis >= 0) {
                                idx[rows_axis] = r0 + q;
                                at += (r0 + q) * ost[rows_axis];
                            }
                            if (!run_lanes(r, g, &rd, mul_sum, idx, a, len, acc + q * REF_BLOCK) ||
                                !settle_poison(r, g, NULL, at, ost[a], red, 0, len))
                                return false;
                        }
                        red++;
                    } while (next_index(idx, s, walk_red));
                    for (int64_t q = 0; q < rows; q++) {
                        RefWord *row = acc + q * REF_BLOCK;
                        if (wide)
                            for (int64_t t = 0; t < len; t++) row[t].f = scalar_from_float(u->dtype, row[t].f).f;
                        int64_t at = base + t0 * ost[a] + (rows_axis >= 0 ? (r0 + q) * ost[rows_axis] : 0);
                        store_block(out, at, ost[a], row, len);
                    }
                }
            }
            idx[a] = 0;
            if (rows_axis >= 0) idx[rows_axis] = 0;
        } else {
            acc[0] = id;
            int64_t red = 0;
            do {
                for (int64_t t0 = 0; t0 < n; t0 += REF_BLOCK) {
                    int64_t len = n - t0 < REF_BLOCK ? n - t0 : REF_BLOCK;
                    if (b >= 0) idx[b] = t0;
                    if (!run_block(r, g, idx, b, len, g->nins) || !settle_poison(r, g, NULL, base, 0, red, 1, len))
                        return false;
                    ref_reduce_serial(&rd, &acc[0], block(g, 0, len), len);
                    red += len;
                }
                if (b >= 0) idx[b] = 0;
            } while (next_index(idx, s, walk_red));
            if (wide) acc[0].f = scalar_from_float(u->dtype, acc[0].f).f;
            out[base] = acc[0];
        }
    } while (next_index(idx, s, walk_out));
    return region_result(r, g);
}

/* ---------------------------------------------------------------- materialising */

static RefWord word_of(const RNode *nd, ScalarVal v) {
    RefWord w;
    if (nd->is_float) w.f = v.f;
    else w.i = v.i;
    return w;
}

/* Computes node k into a dense array.  False on failure, or with *need set
 * to a node to materialise first. */
static bool evaluate(Ref *r, int k, int *need) {
    RNode *nd = &r->nodes[k];
    const UOp *u = nd->u;
    Op op = uop_op(u);
    size_t numel = (size_t)shape_numel(&nd->shape);
    RefWord *data = calloc(numel ? numel : 1, sizeof *data);
    if (!data) return fail(r, u, "out of memory");
    bool ok = true;
    Prog g = {.need = -1};
    if (op == OP_BUFFER) {
        const void *p = r->buffers ? r->buffers(r->ud, u) : NULL;
        if (!p) ok = fail(r, u, "no data for this buffer");
        for (size_t e = 0; ok && e < numel; e++) data[e] = word_of(nd, scalar_read(u->dtype, p, e));
    } else if (op == OP_CONST) {
        const Arg *a = u->arg;
        if (a->kind == ARG_FLOAT) data[0] = word_of(nd, scalar_from_float(u->dtype, a->v.f));
        else if (a->kind == ARG_INT) data[0] = word_of(nd, scalar_from_int(u->dtype, a->v.i));
        else if (a->kind == ARG_BOOL) data[0] = word_of(nd, scalar_from_int(u->dtype, a->v.b));
        else ok = fail(r, u, "a CONST without a value");
    } else if (numel == 0) {
        /* nothing to compute */
    } else if (op == OP_REDUCE_AXIS) {
        const Shape *s = &r->nodes[nd->src[0]].shape;
        RefReduce rd = {u->arg->items[0]->v.op, u->dtype, false};
        if (!ref_reduce_known(rd.op)) ok = fail(r, u, "unknown reduce op");
        else if (shape_numel(s) == 0) {
            /* an empty reduced axis leaves the identity */
            RefWord id = ref_reduce_identity(&rd);
            for (size_t e = 0; e < numel; e++) data[e] = id;
        } else if ((ok = prog_compile(r, &g, nd->src[0]))) {
            ok = run_reduce(r, &g, nd, s, data);
        }
    } else if ((ok = prog_compile(r, &g, k))) {
        ok = run_elementwise(r, &g, nd, data);
    }
    *need = g.need;
    prog_free(&g);
    if (!ok) {
        free(data);
        free(nd->poison);
        nd->poison = NULL;
        return false;
    }
    nd->data = data;
    return true;
}

/* Materialises node k, and first the sources of reshapes its region's views
 * cannot follow (a worklist: their regions may need others in turn). */
static bool materialise(Ref *r, int k) {
    int *work = NULL;
    size_t nw = 0, cap = 0;
    bool ok = grow((void **)&work, &cap, nw, sizeof *work);
    if (ok) work[nw++] = k;
    else fail(r, r->nodes[k].u, "out of memory");
    while (ok && nw) {
        int need = -1;
        if (evaluate(r, work[nw - 1], &need)) {
            nw--;
            continue;
        }
        if (need < 0 || r->failed) { ok = false; break; }
        /* a node asked for again once it has its values would be asked for forever */
        if (r->nodes[need].data) { ok = fail(r, r->nodes[need].u, "cannot evaluate what reads this node (it is needed again)"); break; }
        r->nodes[need].materialise = true;
        r->nodes[need].lenient = true;
        ok = grow((void **)&work, &cap, nw, sizeof *work);
        if (ok) work[nw++] = need;
        else fail(r, r->nodes[need].u, "out of memory");
    }
    free(work);
    return ok && !r->failed;
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
        nd->materialise = nd->materialise || op == OP_BUFFER || op == OP_CONST || op == OP_REDUCE_AXIS ||
                          op == OP_CONTIGUOUS || i == n - 1 || (users[i] > 1 && small) ||
                          (lazy[i] >= REF_LAZY_DEPTH && small);
        if (op == OP_DEFINE_VAR || op == OP_BIND) { fail(&r, nd->u, "symbolic shapes are not supported"); ok = false; }
        if (ok && nd->materialise && !nd->data) ok = materialise(&r, (int)i);
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
        free(r.nodes[i].poison);
    }
    free(r.pnode);
    free(r.pwhy);
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

double ref_value(const RefTensor *t, size_t k) {
    if (t->f) return t->f[k];
    /* a uint64 is held as its bit pattern: from 2^63 it is positive */
    if (t->dtype && dt_is_unsigned(t->dtype)) return (double)(uint64_t)t->i[k];
    return (double)t->i[k];
}
