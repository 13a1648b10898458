/* linear_interp.c - the linear-program interpreter (see linear_interp.h).
 *
 * Setup turns the LINEAR node's sources into an instruction array once:
 * each node gets lanes in one flat value array (a ScalarVal and an Invalid
 * flag per lane; pointers are lanes too: the element offset in .i and the
 * buffer number in .f), each instruction its kind, its sources as lane
 * offsets, and its jump targets (a RANGE knows its END, an IF its ENDIF).
 * Constants, DEFINE_GLOBALs and the arrays of DEFINE_REG / DEFINE_LOCAL are
 * set up before the run.  The run is then one loop over a program counter
 * with a switch per instruction: no recursion, no allocation.  Around it,
 * "workgroups and work items" runs the program once per workgroup and, for
 * several work items, gives each its own lanes, loops and registers (by
 * swapping pointers) and runs them in turn from barrier to barrier.
 *
 * Offsets are counted in scalars of the buffer: an INDEX on a pointer to a
 * vector type (float32.vec(4).ptr) steps by the vector's width, and a LOAD
 * or STORE of W lanes through one pointer lane touches W consecutive
 * scalars; through W pointer lanes (a gather or scatter) one scalar each. */
#include "linear_interp.h"
#include "../util/interrupt.h"
#include "division.h"
#include "scalar_eval.h"
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../util/u64map.h"

#define DEFAULT_BUDGET (1ull << 34)
#define CHECK_EVERY 65536u
#define MAX_LANES 4096
#define MAX_ARRAY (1 << 24)   /* DEFINE_REG / DEFINE_LOCAL elements, as the renderer allows */
#define MAX_DIMS 16           /* distinct SPECIAL names */
#define MAX_ITEM_BYTES (1ull << 30)   /* the registers of a workgroup's work items together */

static uint64_t budget_setting;

void linear_interp_set_budget(uint64_t max_instructions) { budget_setting = max_instructions; }

typedef enum Kind {
    K_NOP, K_SPECIAL, K_RANGE, K_END, K_IF, K_INDEX, K_LOAD, K_STORE, K_COPY, K_CAST, K_BITCAST, K_GEP, K_CAT,
    K_WHERE, K_ALU, K_BARRIER
} Kind;

/* a source: where its lanes start and how many there are (1 broadcasts) */
typedef struct Ref {
    int32_t off, lanes;
} Ref;

typedef struct Ins {
    uint8_t kind;
    bool unsig;          /* RANGE: unsigned counter */
    uint8_t fast;        /* ALU: its ScalarFast path (scalar_eval.h), if it has one */
    uint16_t op;
    int32_t nsrc;
    int32_t lanes;       /* value lanes */
    int32_t val;         /* first value lane (-1: no value) */
    int32_t ptr;         /* first pointer lane (INDEX, pointer-typed nodes); -1 otherwise */
    int32_t nptr;
    int32_t src;         /* first Ref in refs */
    int32_t jump;        /* RANGE: its END; IF: its ENDIF */
    int32_t level;       /* RANGE: its place among its END's ranges (innermost 0); END: how many it ends */
    int32_t aux;         /* END: first of its ranges in ints; GEP: first element index in ints */
    int32_t width;       /* INDEX: scalars per element of the pointer it indexes */
    const DType *dt;     /* scalar dtype of the value (of the pointee for pointers) */
    const DType *sdt;    /* scalar dtype of source 0 */
    const UOp *u;
    const UOp *ix;       /* LOAD, STORE: the INDEX the address comes from (for messages) */
} Ins;

/* a node's lanes: every instruction, and constants used without being in the list */
typedef struct Node {
    int32_t val, lanes, ptr, nptr;
    int32_t pc;          /* its instruction, -1 for a constant not in the list */
} Node;

typedef struct Buf {
    unsigned char *data;
    const DType *et;     /* scalar element dtype */
    int64_t n;           /* scalars */
    const UOp *def;      /* the DEFINE_GLOBAL, DEFINE_REG or DEFINE_LOCAL */
    int64_t global;      /* DEFINE_GLOBAL number, -1 for an array */
    bool owned;
} Buf;

enum { ACC_READ = 1, ACC_WRITE = 2 };

typedef struct LI {
    Ins *ins;
    int n;
    Ref *refs;
    int nrefs, caprefs;
    int32_t *ints;
    int nints, capints;
    ScalarVal *val;
    uint8_t *inv;
    int32_t nlanes, caplanes;
    Node *nodes;
    int nnodes, capnodes;
    U64Map pos;          /* node id -> node index + 1 */
    Buf *bufs;
    int nb, capb;
    int nglobals;
    const int64_t *sizes;
    int64_t *rend;       /* by pc: a RANGE's end in this loop */
    int32_t *open;       /* the RANGEs open now, outermost first */
    int nopen;
    uint8_t *access;     /* by pc: how an INDEX is used (ACC_*) */
    int32_t *access_width; /* by pc: the most scalars a LOAD or STORE through an INDEX covers */
    /* the SPECIAL dims: workgroup dims (gidx, idx, a core_id) and work-item
     * dims (lidx), each with its size and its id in the current run */
    int ndims;
    const UOp *dim_node[MAX_DIMS];
    bool dim_local[MAX_DIMS];
    int64_t dim_size[MAX_DIMS], dim_id[MAX_DIMS];
    uint64_t executed, budget;
    char *err;
    size_t errlen;
    AccessFault *fault;  /* an access outside a buffer, when the run stopped on one */
    bool failed, running;
} LI;

/* ---- messages ---- */

/* the SPECIAL dims' ids and the open loops' counters now, outermost first */
static void add_loops(const LI *li, AccessFault *f) {
    if (!li->running) return;
    for (int d = 0; d < li->ndims; d++) access_fault_add_node(f, li->dim_node[d], li->dim_id[d]);
    for (int k = 0; k < li->nopen; k++) {
        const Ins *r = &li->ins[li->open[k]];
        access_fault_add_node(f, r->u, li->val[r->val].i);
    }
}

/* the loop variables (and thread ids) now, " (r0=1, r1=2)"; "" outside loops */
static void loop_context(const LI *li, char *buf, size_t len) {
    AccessFault f = {0};
    add_loops(li, &f);
    size_t at = 0;
    buf[0] = 0;
    for (int i = 0; i < f.nranges && at < len; i++) {
        int w = snprintf(buf + at, len - at, "%s%s=%lld", i ? ", " : " (", f.range_name[i], (long long)f.range_value[i]);
        if (w > 0) at += (size_t)w;
    }
    if (f.nranges && at < len) at += (size_t)snprintf(buf + at, len - at, ")");
    if (at >= len && len > 4) memcpy(buf + len - 4, "...", 4);
}

static bool fail(LI *li, const UOp *u, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool fail(LI *li, const UOp *u, const char *fmt, ...) {
    if (li->failed) return false;
    li->failed = true;
    char what[512], where[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    loop_context(li, where, sizeof where);
    if (u) snprintf(li->err, li->errlen, "interp: %s %%%u: %s%s", op_name(uop_op(u)), u->id, what, where);
    else snprintf(li->err, li->errlen, "interp: %s%s", what, where);
    return false;
}

static void buf_name(const LI *li, int b, char *out, size_t len) {
    const Buf *bf = &li->bufs[b];
    if (!bf->def) snprintf(out, len, "no buffer (a pointer used where it was not computed)");
    else if (bf->global >= 0) snprintf(out, len, "buffer %lld", (long long)bf->global);
    else snprintf(out, len, "%s %%%u", op_name(uop_op(bf->def)), bf->def->id);
}

/* an access of `width` scalars at off outside buffer b; ix is the INDEX
 * (or the node) the address comes from */
static bool out_of_range(LI *li, const UOp *ix, int verbs, int b, int64_t off, int64_t width) {
    if (li->failed) return false;
    li->failed = true;
    const Buf *bf = &li->bufs[b];
    AccessFault *f = li->fault;
    *f = (AccessFault){.failed = true, .node_op = uop_op(ix), .index_id = ix->id, .store = verbs == ACC_WRITE,
                       .both = verbs == (ACC_READ | ACC_WRITE), .index = off, .size = bf->n,
                       .width = width > INT32_MAX ? INT32_MAX : (int)width, .threads = 1};
    if (bf->global >= 0) f->buffer_op = OP_DEFINE_GLOBAL, f->buffer = bf->global;
    else if (bf->def) f->buffer_op = uop_op(bf->def), f->buffer = bf->def->id;
    else f->buffer_op = OP_NOOP;
    add_loops(li, f);
    access_fault_message(f, NULL, li->err, li->errlen);
    return false;
}

/* ---- setup: lanes, nodes, sources ---- */

static int32_t alloc_lanes(LI *li, int n) {
    if (li->nlanes + n > li->caplanes) {
        int32_t cap = li->caplanes ? li->caplanes : 256;
        while (cap < li->nlanes + n) cap *= 2;
        ScalarVal *v = realloc(li->val, (size_t)cap * sizeof *v);
        if (!v) return -1;
        li->val = v;
        uint8_t *iv = realloc(li->inv, (size_t)cap);
        if (!iv) return -1;
        li->inv = iv;
        memset(li->val + li->nlanes, 0, (size_t)(cap - li->nlanes) * sizeof *v);
        memset(li->inv + li->nlanes, 0, (size_t)(cap - li->nlanes));
        li->caplanes = cap;
    }
    int32_t at = li->nlanes;
    li->nlanes += n;
    return at;
}

static int add_ref(LI *li, Ref r) {
    if (li->nrefs == li->caprefs) {
        int cap = li->caprefs ? 2 * li->caprefs : 256;
        Ref *a = realloc(li->refs, (size_t)cap * sizeof *a);
        if (!a) return -1;
        li->refs = a, li->caprefs = cap;
    }
    li->refs[li->nrefs] = r;
    return li->nrefs++;
}

static int add_int(LI *li, int32_t v) {
    if (li->nints == li->capints) {
        int cap = li->capints ? 2 * li->capints : 64;
        int32_t *a = realloc(li->ints, (size_t)cap * sizeof *a);
        if (!a) return -1;
        li->ints = a, li->capints = cap;
    }
    li->ints[li->nints] = v;
    return li->nints++;
}

static int add_node(LI *li, const UOp *u, Node nd) {
    if (li->nnodes == li->capnodes) {
        int cap = li->capnodes ? 2 * li->capnodes : 256;
        Node *a = realloc(li->nodes, (size_t)cap * sizeof *a);
        if (!a) return -1;
        li->nodes = a, li->capnodes = cap;
    }
    li->nodes[li->nnodes] = nd;
    if (!u64map_put(&li->pos, u->id, (const void *)(intptr_t)(li->nnodes + 1))) return -1;
    return li->nnodes++;
}

static const Node *node_of(const LI *li, const UOp *u) {
    intptr_t k = (intptr_t)u64map_get(&li->pos, u->id);
    return k ? &li->nodes[k - 1] : NULL;
}

static int add_buf(LI *li, Buf b) {
    if (li->nb == li->capb) {
        int cap = li->capb ? 2 * li->capb : 8;
        Buf *a = realloc(li->bufs, (size_t)cap * sizeof *a);
        if (!a) return -1;
        li->bufs = a, li->capb = cap;
    }
    li->bufs[li->nb] = b;
    return li->nb++;
}

static bool oom(LI *li) { return fail(li, NULL, "out of memory"); }

/* does a buffer of this element dtype have a layout the interpreter reads and writes? */
static bool has_layout(const DType *et) {
    unsigned char probe[16];
    ScalarVal z = {0, 0};
    return et->sk != SK_VOID && scalar_write(et, probe, 0, z);
}

/* one scalar of a numeric arg in dtype dt; false for Invalid (the lane's flag) */
static bool const_lane(LI *li, const UOp *u, const DType *dt, const Arg *a, ScalarVal *out, uint8_t *inv) {
    *inv = 0;
    if (!a) return fail(li, u, "a constant without a value");
    switch (a->kind) {
    case ARG_INT: *out = scalar_from_int(dt, a->v.i); return true;
    case ARG_FLOAT: *out = scalar_from_float(dt, a->v.f); return true;
    case ARG_BOOL: *out = scalar_from_int(dt, a->v.b); return true;
    case ARG_INVALID: *out = (ScalarVal){0, 0}; *inv = 1; return true;
    default: return fail(li, u, "a constant whose arg is not a number");
    }
}

/* lanes of a node of dtype d: value lanes, and the pointer lanes of pointers */
static bool lanes_of(LI *li, const UOp *u, Node *nd) {
    const DType *d = u->dtype;
    *nd = (Node){-1, 0, -1, 0, -1};
    if (!dt_is_ptr(d) && d->sk == SK_VOID) return true;
    int n = dt_vcount(d);
    if (n < 1 || n > MAX_LANES) return fail(li, u, "vectors of %d lanes are not supported (at most %d)", n, MAX_LANES);
    if ((nd->val = alloc_lanes(li, n)) < 0) return oom(li);
    nd->lanes = n;
    if (dt_is_ptr(d)) nd->ptr = nd->val, nd->nptr = n;
    return true;
}

/* a constant used without being in the list (the renderer accepts them) */
static const Node *const_node(LI *li, const UOp *u) {
    Node nd;
    if (dt_is_ptr(u->dtype)) { fail(li, u, "a constant cannot have a pointer dtype"); return NULL; }
    if (!lanes_of(li, u, &nd)) return NULL;
    const DType *sd = u->dtype->scalar;
    if (uop_op(u) == OP_VCONST) {
        if (!u->arg || u->arg->kind != ARG_TUPLE || (int)u->arg->n != nd.lanes) {
            fail(li, u, "needs a tuple of %d values", nd.lanes);
            return NULL;
        }
        for (int k = 0; k < nd.lanes; k++)
            if (!const_lane(li, u, sd, u->arg->items[k], &li->val[nd.val + k], &li->inv[nd.val + k])) return NULL;
    } else {
        for (int k = 0; k < nd.lanes; k++)
            if (!const_lane(li, u, sd, u->arg, &li->val[nd.val + k], &li->inv[nd.val + k])) return NULL;
    }
    int at = add_node(li, u, nd);
    if (at < 0) { oom(li); return NULL; }
    return &li->nodes[at];
}

/* the node of source i of u: earlier in the list, or a constant */
static const Node *src_node(LI *li, const UOp *u, int i) {
    const UOp *s = u->src[i];
    const Node *nd = node_of(li, s);
    if (nd) return nd;
    if (uop_op(s) == OP_CONST || uop_op(s) == OP_VCONST) return const_node(li, s);
    fail(li, u, "source %d is %s %%%u, which does not come before it in the program (not a linear program?)", i,
         op_name(uop_op(s)), s->id);
    return NULL;
}

/* adds the refs of u's sources (pointer lanes for the sources in as_ptr, a
 * bit per source); returns the first, -1 on error */
static int add_src_refs(LI *li, const UOp *u, unsigned as_ptr) {
    int first = li->nrefs;
    for (int i = 0; i < u->nsrc; i++) {
        const Node *nd = src_node(li, u, i);
        if (!nd) return -1;
        /* a source without a value (a STORE, an END) only orders; the
         * instruction kinds check the lanes of the sources they read */
        Ref r = {nd->val, nd->lanes};
        if (i < 32 && (as_ptr >> i & 1)) {
            if (nd->ptr < 0) {
                fail(li, u, "source %d, %s %%%u, is not an address (INDEX) or a pointer", i, op_name(uop_op(u->src[i])),
                     u->src[i]->id);
                return -1;
            }
            r = (Ref){nd->ptr, nd->nptr};
        }
        if (add_ref(li, r) < 0) { oom(li); return -1; }
    }
    return first;
}

/* the INDEX an address comes from, through pointer CASTs and AFTERs */
static const UOp *address_index(const UOp *p) {
    while ((uop_op(p) == OP_CAST || uop_op(p) == OP_AFTER || uop_op(p) == OP_BITCAST) && p->nsrc >= 1) p = p->src[0];
    return uop_op(p) == OP_INDEX ? p : NULL;
}

static bool lanes_fit(int have, int want) { return have == 1 || have == want; }

/* a float MUL by a RECIPROCAL runs as the division (division.h): FDIV of the
 * other source by the reciprocal's source */
static bool division_operands(LI *li, Ins *in, const UOp *u) {
    const UOp *recip = NULL;
    int side = mul_reciprocal_side(u, &recip);
    if (side < 0) return true;
    const UOp *den = recip->src[0];
    const Node *dn = node_of(li, den);
    if (!dn && (uop_op(den) == OP_CONST || uop_op(den) == OP_VCONST)) dn = const_node(li, den);
    if (!dn) return !li->failed;
    Ref num = li->refs[in->src + 1 - side];
    li->refs[in->src] = num;
    li->refs[in->src + 1] = (Ref){dn->val, dn->lanes};
    in->op = OP_FDIV;
    return true;
}

/* ---- setup: one instruction ---- */

static bool build_ins(LI *li, int pc, const UOp *u) {
    Ins *in = &li->ins[pc];
    Op op = uop_op(u);
    *in = (Ins){.kind = K_NOP, .op = (uint16_t)op, .nsrc = u->nsrc, .val = -1, .ptr = -1, .src = li->nrefs, .jump = -1,
                .u = u};
    const DType *d = u->dtype;
    in->dt = dt_is_ptr(d) ? d->base->scalar : d->scalar;
    if (u->nsrc >= 1) in->sdt = dt_is_ptr(u->src[0]->dtype) ? u->src[0]->dtype->base->scalar : u->src[0]->dtype->scalar;
    if (node_of(li, u)) return fail(li, u, "appears twice in the program (entries must be unique)");
    if (u->nsrc < 1 && (op == OP_INDEX || op == OP_LOAD || op == OP_CAST || op == OP_BITCAST || op == OP_GEP))
        return fail(li, u, "needs a source");

    /* sources first (they must come earlier), then the node's own lanes */
    unsigned as_ptr = 0;
    if (op == OP_INDEX || op == OP_LOAD || op == OP_STORE) as_ptr = 1;
    if (dt_is_ptr(d) && (op == OP_AFTER || op == OP_CAST || op == OP_BITCAST || op == OP_NOOP || op == OP_GEP)) as_ptr = 1;
    if (dt_is_ptr(d) && (op == OP_VECTORIZE || op == OP_CAT || op == OP_PTRCAT)) as_ptr = ~0u;
    if (dt_is_ptr(d) && op == OP_WHERE) as_ptr = 6;
    if (add_src_refs(li, u, as_ptr) < 0) return false;
    const Ref *r = &li->refs[in->src];

    Node nd;
    if (!lanes_of(li, u, &nd)) return false;
    nd.pc = pc;
    in->val = nd.val, in->lanes = nd.lanes, in->ptr = nd.ptr, in->nptr = nd.nptr;
    const int W = nd.lanes;
    char b1[64], b2[64];

    switch (op) {
    case OP_SINK: case OP_GROUP: case OP_ENDIF: break;
    case OP_BARRIER: in->kind = K_BARRIER; break;
    case OP_NOOP:
        if (u->nsrc >= 1 && W) {
            if (r[0].lanes != W) return fail(li, u, "its value has %d lanes, its source %d", W, r[0].lanes);
            in->kind = K_COPY;
        }
        break;
    case OP_AFTER:
        if (u->nsrc < 1) return fail(li, u, "needs a source (its value)");
        if (W && r[0].lanes != W) return fail(li, u, "its value has %d lanes, its source %d", W, r[0].lanes);
        if (W) in->kind = K_COPY;
        break;
    case OP_CONST: case OP_VCONST: {
        if (dt_is_ptr(d)) return fail(li, u, "a constant cannot have a pointer dtype");
        for (int k = 0; k < W; k++) {
            const Arg *a = op == OP_VCONST ? (u->arg && u->arg->kind == ARG_TUPLE && (int)u->arg->n == W ? u->arg->items[k] : NULL)
                                           : u->arg;
            if (op == OP_VCONST && !a) return fail(li, u, "needs a tuple of %d values", W);
            if (!const_lane(li, u, in->dt, a, &li->val[in->val + k], &li->inv[in->val + k])) return false;
        }
        break;
    }
    case OP_DEFINE_GLOBAL: {
        if (!u->arg || u->arg->kind != ARG_INT) return fail(li, u, "needs an integer arg (the buffer number)");
        if (!dt_is_ptr(d) || d->v != 1) return fail(li, u, "needs a pointer dtype, e.g. float32.ptr(16)");
        int64_t g = u->arg->v.i;
        if (g < 0 || g >= li->nglobals || !li->bufs[g + 1].data)
            return fail(li, u, "buffer %lld is not given (%d buffers)", (long long)g, li->nglobals);
        Buf *b = &li->bufs[g + 1];
        if (b->def && b->et != in->dt) return fail(li, u, "buffer %lld is also DEFINE_GLOBAL %%%u of another dtype", (long long)g, b->def->id);
        if (!has_layout(in->dt)) return fail(li, u, "buffers of %s are not supported", dt_str(in->dt, b1, sizeof b1));
        b->def = u, b->et = in->dt;
        if (li->sizes && g < li->nglobals) b->n = li->sizes[g] < 0 ? 0 : li->sizes[g] * d->base->count;
        li->val[in->val] = (ScalarVal){(double)(g + 1), 0};
        break;
    }
    case OP_DEFINE_REG: case OP_DEFINE_LOCAL: {
        if (!dt_is_ptr(d) || d->v != 1 || d->base->sk == SK_VOID)
            return fail(li, u, "needs a pointer dtype with a size, e.g. float32.ptr(4, reg)");
        if (d->size <= 0 || d->size > MAX_ARRAY)
            return fail(li, u, "needs a size between 1 and %d, got %lld", MAX_ARRAY, (long long)d->size);
        if (!has_layout(in->dt)) return fail(li, u, "arrays of %s are not supported", dt_str(in->dt, b1, sizeof b1));
        int64_t n = d->size * d->base->count;
        if (n > MAX_ARRAY) return fail(li, u, "arrays of more than %d scalars are not supported", MAX_ARRAY);
        Buf b = {calloc((size_t)n, (size_t)dt_itemsize(in->dt)), in->dt, n, u, -1, true};
        if (!b.data) return oom(li);
        int at = add_buf(li, b);
        if (at < 0) { free(b.data); return oom(li); }
        li->val[in->val] = (ScalarVal){(double)at, 0};
        break;
    }
    case OP_DEFINE_VAR:
        return fail(li, u, "variables (DEFINE_VAR) are not supported by the interpreter");
    case OP_SPECIAL: {
        int64_t size;
        if (!dt_is_int(d) || W != 1) return fail(li, u, "needs an integer dtype");
        if (u->nsrc != 1 || !uop_const_int_value(u->src[0], &size) || size < 1)
            return fail(li, u, "needs a constant size of at least 1 (the number of cores)");
        /* one dim per name; lidx names are work-item dims, any other a workgroup dim */
        const Arg *a = u->arg;
        int d = 0;
        for (; d < li->ndims; d++)
            if (arg_equal(li->dim_node[d]->arg, a)) break;
        if (d == li->ndims) {
            if (d == MAX_DIMS) return fail(li, u, "more than %d SPECIAL dims", MAX_DIMS);
            li->ndims++;
            li->dim_node[d] = u;
            li->dim_local[d] = a && a->kind == ARG_STR && a->n >= 4 && !memcmp(a->v.s, "lidx", 4);
            li->dim_size[d] = size;
        } else if (li->dim_size[d] != size) {
            return fail(li, u, "its size %lld differs from %lld of SPECIAL %%%u of the same name", (long long)size,
                        (long long)li->dim_size[d], li->dim_node[d]->id);
        }
        in->aux = d;
        in->kind = K_SPECIAL;
        break;
    }
    case OP_RANGE:
        if (u->nsrc < 1 || !dt_is_int(u->src[0]->dtype) || r[0].lanes != 1 || dt_is_ptr(u->src[0]->dtype))
            return fail(li, u, "its end (source 0) must be a scalar integer");
        if (!dt_is_int(d) || W != 1) return fail(li, u, "needs a scalar integer dtype");
        in->unsig = dt_is_unsigned(d);
        in->kind = K_RANGE;
        break;
    case OP_END: in->kind = K_END; break;   /* its ranges: control_flow() */
    case OP_IF:
        if (u->nsrc < 1 || !dt_is_bool(u->src[0]->dtype) || r[0].lanes != 1) return fail(li, u, "the gate (source 0) must be a bool");
        in->kind = K_IF;
        break;
    case OP_INDEX: {
        const DType *pd = u->src[0]->dtype;
        if (!dt_is_ptr(pd)) return fail(li, u, "source 0 must be a pointer (DEFINE_GLOBAL, DEFINE_REG, DEFINE_LOCAL)");
        if (pd->base->sk == SK_VOID) return fail(li, u, "cannot index a pointer to void");
        if (u->nsrc >= 2 && (!dt_is_int(u->src[1]->dtype) || dt_is_ptr(u->src[1]->dtype)))
            return fail(li, u, "the index (source 1) must be an integer, got %s", dt_str(u->src[1]->dtype, b1, sizeof b1));
        if (u->nsrc >= 3 && (!dt_is_bool(u->src[2]->dtype) || dt_is_ptr(u->src[2]->dtype)))
            return fail(li, u, "the gate (source 2) must be a bool");
        if (u->nsrc > 3) return fail(li, u, "has %d sources (pointer, index, gate at most)", u->nsrc);
        if (!dt_is_ptr(d) && d->scalar != pd->base->scalar)
            return fail(li, u, "loads %s from a pointer to %s", dt_str(d, b1, sizeof b1), dt_str(pd, b2, sizeof b2));
        in->width = pd->base->count;
        int A = W;
        if (!dt_is_ptr(d)) {
            /* a value INDEX (before stage 13): its own address lanes, then it loads */
            A = r[0].lanes;
            if (u->nsrc >= 2 && r[1].lanes > A) A = r[1].lanes;
            if (A != 1 && A != W) return fail(li, u, "loads %d lanes through %d addresses", W, A);
            if ((in->ptr = alloc_lanes(li, A)) < 0) return oom(li);
            in->nptr = A;
            nd.ptr = in->ptr, nd.nptr = A;
        }
        for (int i = 0; i < u->nsrc; i++)
            if (!lanes_fit(r[i].lanes, A))
                return fail(li, u, "source %d has %d lanes for %d addresses", i, r[i].lanes, A);
        in->kind = K_INDEX;
        break;
    }
    case OP_LOAD:
        if (dt_is_ptr(d) || d->sk == SK_VOID) return fail(li, u, "needs a value dtype");
        if (!lanes_fit(r[0].lanes, W)) return fail(li, u, "loads %d lanes through %d addresses", W, r[0].lanes);
        /* the alt value (when gated off), as the renderer reads it */
        if (u->nsrc >= 2 && u->src[1]->dtype != d) in->nsrc = 1;
        in->ix = address_index(u->src[0]);
        in->kind = K_LOAD;
        break;
    case OP_STORE: {
        if (u->nsrc < 2) return fail(li, u, "needs an address and a value");
        const DType *vd = u->src[1]->dtype;
        if (dt_is_ptr(vd) || vd->sk == SK_VOID) return fail(li, u, "source 1 must be a value");
        if (!lanes_fit(r[0].lanes, r[1].lanes)) return fail(li, u, "stores %d lanes through %d addresses", r[1].lanes, r[0].lanes);
        in->dt = vd->scalar;
        in->ix = address_index(u->src[0]);
        in->kind = K_STORE;
        break;
    }
    case OP_CAST: case OP_BITCAST: {
        const DType *from = u->src[0]->dtype;
        if (dt_is_ptr(d) || dt_is_ptr(from)) {
            if (!(dt_is_ptr(d) && dt_is_ptr(from))) return fail(li, u, "cannot cast between a pointer and a value");
            if (r[0].lanes != W) return fail(li, u, "casts %d pointers to %d", r[0].lanes, W);
            in->kind = K_COPY;
            break;
        }
        if (d->sk == SK_VOID || from->sk == SK_VOID) return fail(li, u, "cannot cast void");
        if (op == OP_CAST) {
            if (r[0].lanes != W)
                return fail(li, u, "cannot cast %s to %s: vector widths differ", dt_str(from, b1, sizeof b1), dt_str(d, b2, sizeof b2));
            in->kind = K_CAST;
        } else {
            if (dt_itemsize(from) != dt_itemsize(d) || dt_itemsize(d) > 512 || !has_layout(in->dt) || !has_layout(in->sdt))
                return fail(li, u, "cannot bitcast %s to %s", dt_str(from, b1, sizeof b1), dt_str(d, b2, sizeof b2));
            in->kind = K_BITCAST;
        }
        break;
    }
    case OP_GEP: {
        const Arg *a = u->arg;
        if (!a || a->kind != ARG_TUPLE || (int)a->n != W) return fail(li, u, "needs a tuple of %d element indices", W);
        in->aux = li->nints;
        for (int k = 0; k < W; k++) {
            const Arg *it = a->items[k];
            if (!it || it->kind != ARG_INT || it->v.i < 0 || it->v.i >= r[0].lanes)
                return fail(li, u, "element %d is out of range for a vector of %d", k, r[0].lanes);
            if (add_int(li, (int32_t)it->v.i) < 0) return oom(li);
        }
        in->kind = K_GEP;
        break;
    }
    case OP_VECTORIZE: case OP_CAT: case OP_PTRCAT: {
        int total = 0;
        for (int i = 0; i < u->nsrc; i++) total += r[i].lanes;
        if (total != W || !u->nsrc) return fail(li, u, "its %d source lanes do not make its %d lanes", total, W);
        in->kind = K_CAT;
        break;
    }
    case OP_WHERE:
        if (u->nsrc != 3) return fail(li, u, "needs 3 sources");
        if (!dt_is_bool(u->src[0]->dtype)) return fail(li, u, "the condition (source 0) must be a bool");
        for (int i = 0; i < 3; i++)
            if (!lanes_fit(r[i].lanes, W)) return fail(li, u, "source %d has %d lanes, it has %d", i, r[i].lanes, W);
        in->kind = K_WHERE;
        break;
    default:
        if (op_is_alu(op)) {
            if (u->nsrc < 1 || u->nsrc > 3) return fail(li, u, "needs 1 to 3 sources, got %d", u->nsrc);
            if (dt_is_ptr(d) || d->sk == SK_VOID) return fail(li, u, "needs a value dtype");
            for (int i = 0; i < u->nsrc; i++) {
                if (dt_is_ptr(u->src[i]->dtype)) return fail(li, u, "pointer operands are not supported");
                if (!lanes_fit(r[i].lanes, W)) return fail(li, u, "source %d has %d lanes, it has %d", i, r[i].lanes, W);
            }
            in->kind = K_ALU;
            if (!division_operands(li, in, u)) return false;
            if (in->nsrc == 2)
                in->fast = (uint8_t)scalar_fast_path((Op)in->op, in->dt->sk, in->sdt->sk, u->src[1]->dtype->scalar->sk);
            break;
        }
        if (op == OP_REDUCE || op == OP_UNROLL || op == OP_CONTRACT || op_group(op) == OPG_SCHED ||
            op_group(op) == OPG_MOVEMENT || op_group(op) == OPG_REDUCE)
            return fail(li, u, "not a linear-program op: the codegen stages lower it before linearizing");
        return fail(li, u, "not supported by the interpreter");
    }
    if (add_node(li, u, nd) < 0) return oom(li);
    return true;
}

/* RANGE/END and IF/ENDIF nesting, as the renderer checks it: a RANGE
 * learns its END, an IF its ENDIF; an END lists its ranges innermost first */
static bool control_flow(LI *li) {
    int32_t *stack = malloc(((size_t)li->n + 1) * sizeof *stack);
    if (!stack) return oom(li);
    int depth = 0;
    bool ok = true;
    for (int pc = 0; ok && pc < li->n; pc++) {
        Ins *in = &li->ins[pc];
        const UOp *u = in->u;
        if (in->kind == K_RANGE || in->kind == K_IF) {
            stack[depth++] = pc;
        } else if (uop_op(u) == OP_ENDIF) {
            if (!u->nsrc || uop_op(u->src[0]) != OP_IF) ok = fail(li, u, "source 0 must be the IF it ends");
            else if (!depth || li->ins[stack[depth - 1]].u != u->src[0])
                ok = depth && li->ins[stack[depth - 1]].kind == K_RANGE
                         ? fail(li, u, "RANGE %%%u is still open inside IF %%%u", li->ins[stack[depth - 1]].u->id, u->src[0]->id)
                         : fail(li, u, "IF %%%u is not open", u->src[0]->id);
            else li->ins[stack[--depth]].jump = pc;
        } else if (in->kind == K_END) {
            int nr = 0;
            for (int i = 0; i < u->nsrc; i++) nr += uop_op(u->src[i]) == OP_RANGE;
            if (!nr) {   /* a constant in place of its range (a size-1 loop): nothing to close */
                in->kind = K_NOP;
                continue;
            }
            in->aux = li->nints;
            in->level = nr;
            for (int k = 0; ok && k < nr; k++) {
                if (!depth) { ok = fail(li, u, "no loop is open here"); break; }
                Ins *top = &li->ins[stack[depth - 1]];
                bool mine = false;
                for (int i = 0; i < u->nsrc; i++) mine |= u->src[i] == top->u;
                if (!mine) {
                    ok = top->kind == K_IF ? fail(li, u, "IF %%%u is still open (ENDIF missing before END)", top->u->id)
                                           : fail(li, u, "the innermost open loop is RANGE %%%u, which this END does not end", top->u->id);
                    break;
                }
                top->jump = pc;
                top->level = k;
                if (add_int(li, stack[--depth]) < 0) ok = oom(li);
            }
        }
    }
    if (ok && depth) {
        const UOp *open = li->ins[stack[depth - 1]].u;
        ok = fail(li, open, uop_op(open) == OP_RANGE ? "has no END (the loop is never closed)" : "has no ENDIF");
    }
    /* how each INDEX is used, for messages */
    for (int pc = 0; ok && pc < li->n; pc++) {
        const Ins *in = &li->ins[pc];
        if (in->kind == K_INDEX && in->val != in->ptr) li->access[pc] |= ACC_READ;
        const Node *ixn = (in->kind == K_LOAD || in->kind == K_STORE) && in->ix ? node_of(li, in->ix) : NULL;
        if (!ixn || ixn->pc < 0) continue;
        li->access[ixn->pc] |= in->kind == K_LOAD ? ACC_READ : ACC_WRITE;
        /* a vector read or written through one address covers its lanes */
        const Ref *r = &li->refs[in->src];
        int32_t lanes = in->kind == K_LOAD ? in->lanes : r[1].lanes;
        if (r[0].lanes == 1 && lanes > li->access_width[ixn->pc]) li->access_width[ixn->pc] = lanes;
    }
    free(stack);
    return ok;
}

/* ---- the run ---- */

/* the buffer of a pointer lane (0, none, for anything else) */
static inline int buf_of_lane(const LI *li, const ScalarVal *p) {
    return p->f >= 0 && p->f < li->nb ? (int)p->f : 0;
}
#define buf_of(p) buf_of_lane(li, (p))

/* checks an access of width scalars at lane p (pointer lane) */
static inline bool in_bounds(const LI *li, const ScalarVal *p, int64_t width) {
    const Buf *b = &li->bufs[buf_of(p)];
    return p->i >= 0 && width <= b->n && p->i <= b->n - width;
}

static bool check_type(LI *li, const Ins *in, const ScalarVal *p) {
    const Buf *b = &li->bufs[buf_of(p)];
    if (b->et == in->dt) return true;
    char b1[32], b2[32], name[64];
    buf_name(li, buf_of(p), name, sizeof name);
    return fail(li, in->u, "accesses %s of %s as %s (not supported)", name, dt_str(b->et, b1, sizeof b1),
                dt_str(in->dt, b2, sizeof b2));
}

/* loads W lanes at dst through A (1 or W) pointer lanes at p; gated-off
 * lanes get alt's lanes, or 0 */
static bool load_lanes(LI *li, const Ins *in, int32_t p, int A, int32_t dst, int W, const Ref *alt, int pc) {
    ScalarVal *val = li->val;
    uint8_t *inv = li->inv;
    const UOp *ix = in->ix ? in->ix : in->u;
    if (A == 1 && W > 1) {
        if (inv[p]) {
            for (int k = 0; k < W; k++) {
                int a = alt ? alt->off + (alt->lanes > 1 ? k : 0) : -1;
                val[dst + k] = a >= 0 ? val[a] : (ScalarVal){0, 0};
                inv[dst + k] = a >= 0 ? inv[a] : 0;
            }
            return true;
        }
        if (!in_bounds(li, &val[p], W))
            return out_of_range(li, ix, in->kind == K_INDEX && li->access[pc] ? li->access[pc] : ACC_READ, buf_of(&val[p]),
                                val[p].i, W);
        if (!check_type(li, in, &val[p])) return false;
        const Buf *b = &li->bufs[buf_of(&val[p])];
        for (int k = 0; k < W; k++) {
            val[dst + k] = scalar_read_fast(b->et, b->data, (size_t)(val[p].i + k));
            inv[dst + k] = 0;
        }
        return true;
    }
    for (int k = 0; k < W; k++) {
        int32_t q = p + k;
        if (inv[q]) {
            int a = alt ? alt->off + (alt->lanes > 1 ? k : 0) : -1;
            val[dst + k] = a >= 0 ? val[a] : (ScalarVal){0, 0};
            inv[dst + k] = a >= 0 ? inv[a] : 0;
            continue;
        }
        if (!in_bounds(li, &val[q], 1)) return out_of_range(li, ix, ACC_READ, buf_of(&val[q]), val[q].i, 1);
        if (!check_type(li, in, &val[q])) return false;
        const Buf *b = &li->bufs[buf_of(&val[q])];
        val[dst + k] = scalar_read(b->et, b->data, (size_t)val[q].i);
        inv[dst + k] = 0;
    }
    return true;
}

static bool store_lanes(LI *li, const Ins *in, const Ref *ptr, const Ref *v) {
    ScalarVal *val = li->val;
    uint8_t *inv = li->inv;
    const UOp *ix = in->ix ? in->ix : in->u;
    int W = v->lanes, p = ptr->off;
    if (ptr->lanes == 1 && W > 1) {
        if (inv[p]) return true;
        if (!in_bounds(li, &val[p], W)) return out_of_range(li, ix, ACC_WRITE, buf_of(&val[p]), val[p].i, W);
        if (!check_type(li, in, &val[p])) return false;
        const Buf *b = &li->bufs[buf_of(&val[p])];
        for (int k = 0; k < W; k++) {
            if (inv[v->off + k]) return fail(li, in->u, "stores an Invalid value");
            scalar_write(b->et, b->data, (size_t)(val[p].i + k), val[v->off + k]);
        }
        return true;
    }
    for (int k = 0; k < ptr->lanes; k++) {
        int32_t q = p + k, s = v->off + (W > 1 ? k : 0);
        if (inv[q]) continue;
        if (!in_bounds(li, &val[q], 1)) return out_of_range(li, ix, ACC_WRITE, buf_of(&val[q]), val[q].i, 1);
        if (!check_type(li, in, &val[q])) return false;
        if (inv[s]) return fail(li, in->u, "stores an Invalid value");
        const Buf *b = &li->bufs[buf_of(&val[q])];
        scalar_write(b->et, b->data, (size_t)val[q].i, val[s]);
    }
    return true;
}

static bool exec_index(LI *li, const Ins *in, int pc) {
    ScalarVal *val = li->val;
    uint8_t *inv = li->inv;
    const Ref *r = &li->refs[in->src];
    const int A = in->nptr, po = in->ptr;
    const int64_t w = in->width;
    for (int k = 0; k < A; k++) {
        int32_t bk = r[0].off + (r[0].lanes > 1 ? k : 0);
        bool ok = !inv[bk];
        uint64_t off = (uint64_t)val[bk].i;
        if (in->nsrc >= 2) {
            int32_t ik = r[1].off + (r[1].lanes > 1 ? k : 0);
            ok = ok && !inv[ik];
            off += (uint64_t)val[ik].i * (uint64_t)w;
        }
        if (in->nsrc >= 3) {
            int32_t gk = r[2].off + (r[2].lanes > 1 ? k : 0);
            ok = ok && !inv[gk] && val[gk].i;
        }
        val[po + k].i = (int64_t)off;
        val[po + k].f = val[bk].f;
        inv[po + k] = !ok;
        if (ok && !in_bounds(li, &val[po + k], w)) /* named as the widest access through it */
            return out_of_range(li, in->u, li->access[pc] ? li->access[pc] : ACC_READ, buf_of(&val[po + k]), (int64_t)off,
                                li->access_width[pc] > w ? li->access_width[pc] : w);
    }
    if (in->val != in->ptr) return load_lanes(li, in, po, A, in->val, in->lanes, NULL, pc);
    return true;
}

/* after the loop of the END at endpc, from its range `level` on: the next
 * iteration of the innermost range that has one, or the END's successor */
static inline int end_loop(LI *li, int endpc, int level) {
    const Ins *e = &li->ins[endpc];
    for (int l = level; l < e->level; l++) {
        int rpc = li->ints[e->aux + l];
        const Ins *r = &li->ins[rpc];
        int64_t v = li->val[r->val].i + 1;
        if (r->unsig ? (uint64_t)v < (uint64_t)li->rend[rpc] : v < li->rend[rpc]) {
            li->val[r->val].i = v;
            return rpc + 1;
        }
        li->nopen--;
    }
    return endpc + 1;
}

/* Runs from pc until the program ends (returns n) or a BARRIER (returns
 * the pc after it); -1 on error. */
static int run_from(LI *li, int pc) {
    ScalarVal *val = li->val;
    uint8_t *inv = li->inv;
    const Ins *ins = li->ins;
    const Ref *refs = li->refs;
    const int n = li->n;
    unsigned tick = CHECK_EVERY;
    while (pc < n) {
        if (--tick == 0) {
            tick = CHECK_EVERY;
            li->executed += CHECK_EVERY;
            if (uopdb_interrupted()) return fail(li, ins[pc].u, "interrupted"), -1;
            if (li->executed > li->budget)
                return fail(li, ins[pc].u, "stopped after %llu instructions, the interpreter's budget (an endless or huge loop?)",
                            (unsigned long long)li->executed), -1;
        }
        const Ins *in = &ins[pc];
        const Ref *r = &refs[in->src];
        switch ((Kind)in->kind) {
        case K_NOP: pc++; break;
        case K_BARRIER:
            li->executed += CHECK_EVERY - tick;
            return pc + 1;
        case K_SPECIAL:
            val[in->val] = scalar_from_int(in->dt, li->dim_id[in->aux]);
            inv[in->val] = 0;
            pc++;
            break;
        case K_RANGE: {
            if (inv[r[0].off]) return fail(li, in->u, "its end is Invalid"), -1;
            int64_t end = val[r[0].off].i;
            li->rend[pc] = end;
            if (in->unsig ? (uint64_t)end > 0 : end > 0) {
                val[in->val].i = 0;
                inv[in->val] = 0;
                li->open[li->nopen++] = pc;
                pc++;
            } else {
                pc = end_loop(li, in->jump, in->level + 1);
            }
            break;
        }
        case K_END: pc = end_loop(li, pc, 0); break;
        case K_IF: pc = inv[r[0].off] || !val[r[0].off].i ? in->jump + 1 : pc + 1; break;
        case K_INDEX:
            if (in->nptr == 1 && in->ptr == in->val) {
                /* the common case, a scalar pointer: inline; a failure takes the general path for its message */
                const int32_t bk = r[0].off;
                bool ok = !inv[bk];
                uint64_t off = (uint64_t)val[bk].i;
                if (in->nsrc >= 2) {
                    ok = ok && !inv[r[1].off];
                    off += (uint64_t)val[r[1].off].i * (uint64_t)in->width;
                }
                if (in->nsrc >= 3) ok = ok && !inv[r[2].off] && val[r[2].off].i;
                val[in->val].i = (int64_t)off;
                val[in->val].f = val[bk].f;
                inv[in->val] = !ok;
                if (!ok || in_bounds(li, &val[in->val], in->width)) {
                    pc++;
                    break;
                }
            }
            if (!exec_index(li, in, pc)) return -1;
            pc++;
            break;
        case K_LOAD:
            if (r[0].lanes == 1 && in->lanes == 1 && !inv[r[0].off]) {
                const ScalarVal *p = &val[r[0].off];
                const Buf *b = &li->bufs[buf_of(p)];
                if (b->et == in->dt && p->i >= 0 && p->i < b->n) {
                    val[in->val] = scalar_read_fast(b->et, b->data, (size_t)p->i);
                    inv[in->val] = 0;
                    pc++;
                    break;
                }
            }
            if (!load_lanes(li, in, r[0].off, r[0].lanes, in->val, in->lanes, in->nsrc >= 2 ? &r[1] : NULL, pc)) return -1;
            pc++;
            break;
        case K_STORE:
            if (r[0].lanes == 1 && r[1].lanes == 1 && !inv[r[0].off] && !inv[r[1].off]) {
                const ScalarVal *p = &val[r[0].off];
                const Buf *b = &li->bufs[buf_of(p)];
                if (b->et == in->dt && p->i >= 0 && p->i < b->n) {
                    scalar_write(b->et, b->data, (size_t)p->i, val[r[1].off]);
                    pc++;
                    break;
                }
            }
            if (!store_lanes(li, in, &r[0], &r[1])) return -1;
            pc++;
            break;
        case K_COPY:
            memcpy(&val[in->val], &val[r[0].off], (size_t)in->lanes * sizeof *val);
            memcpy(&inv[in->val], &inv[r[0].off], (size_t)in->lanes);
            pc++;
            break;
        case K_CAST:
            for (int k = 0; k < in->lanes; k++) {
                int32_t s = r[0].off + k;
                val[in->val + k] = scalar_convert(in->dt, in->sdt, val[s]);
                inv[in->val + k] = inv[s];
            }
            pc++;
            break;
        case K_BITCAST: {
            unsigned char bytes[512];
            bool bad = false;
            for (int k = 0; k < r[0].lanes; k++) {
                scalar_write(in->sdt, bytes, (size_t)k, val[r[0].off + k]);
                bad |= inv[r[0].off + k];
            }
            for (int k = 0; k < in->lanes; k++) {
                val[in->val + k] = scalar_read(in->dt, bytes, (size_t)k);
                inv[in->val + k] = bad;
            }
            pc++;
            break;
        }
        case K_GEP:
            for (int k = 0; k < in->lanes; k++) {
                int32_t s = r[0].off + li->ints[in->aux + k];
                val[in->val + k] = val[s];
                inv[in->val + k] = inv[s];
            }
            pc++;
            break;
        case K_CAT: {
            int32_t at = in->val;
            for (int i = 0; i < in->nsrc; i++) {
                memcpy(&val[at], &val[r[i].off], (size_t)r[i].lanes * sizeof *val);
                memcpy(&inv[at], &inv[r[i].off], (size_t)r[i].lanes);
                at += r[i].lanes;
            }
            pc++;
            break;
        }
        case K_WHERE:
            for (int k = 0; k < in->lanes; k++) {
                int32_t c = r[0].off + (r[0].lanes > 1 ? k : 0);
                int32_t s = val[c].i ? r[1].off + (r[1].lanes > 1 ? k : 0) : r[2].off + (r[2].lanes > 1 ? k : 0);
                val[in->val + k] = val[s];
                inv[in->val + k] = inv[c] || inv[s];
            }
            pc++;
            break;
        case K_ALU: {
            const int ns = in->nsrc;
            if (in->fast != SCALAR_FAST_NONE) {
                for (int k = 0; k < in->lanes; k++) {
                    int32_t a = r[0].off + (r[0].lanes > 1 ? k : 0), b = r[1].off + (r[1].lanes > 1 ? k : 0);
                    bool bad = inv[a] | inv[b];
                    inv[in->val + k] = bad;
                    if (!bad) val[in->val + k] = scalar_fast((ScalarFast)in->fast, val[a], val[b]);
                }
                pc++;
                break;
            }
            if (in->lanes == 1) {
                ScalarVal s[3];
                bool bad = false;
                for (int i = 0; i < ns; i++) {
                    s[i] = val[r[i].off];
                    bad |= inv[r[i].off];
                }
                inv[in->val] = bad;
                if (!bad) {
                    const char *why = scalar_alu((Op)in->op, in->dt, in->sdt, ns, s, &val[in->val]);
                    if (why) return fail(li, in->u, "%s", why), -1;
                }
                pc++;
                break;
            }
            for (int k = 0; k < in->lanes; k++) {
                ScalarVal s[3];
                bool bad = false;
                for (int i = 0; i < ns; i++) {
                    int32_t o = r[i].off + (r[i].lanes > 1 ? k : 0);
                    s[i] = val[o];
                    bad |= inv[o];
                }
                inv[in->val + k] = bad;
                if (bad) continue;
                const char *why = scalar_alu((Op)in->op, in->dt, in->sdt, ns, s, &val[in->val + k]);
                if (why) return fail(li, in->u, "%s", why), -1;
            }
            pc++;
            break;
        }
        }
    }
    li->executed += CHECK_EVERY - tick;
    return n;
}


/* ---- workgroups and work items ---- */

/* sets the ids of the dims of one kind (local or not) from a flat index */
static void set_ids(LI *li, bool local, int64_t flat) {
    for (int d = li->ndims - 1; d >= 0; d--)
        if (li->dim_local[d] == local) {
            li->dim_id[d] = flat % li->dim_size[d];
            flat /= li->dim_size[d];
        }
}

static int64_t count_of(const LI *li, bool local) {
    int64_t n = 1;
    for (int d = 0; d < li->ndims; d++)
        if (li->dim_local[d] == local) n *= li->dim_size[d];
    return n;
}

static void zero_arrays(LI *li, Op which) {
    for (int b = 0; b < li->nb; b++)
        if (li->bufs[b].owned && uop_op(li->bufs[b].def) == which)
            memset(li->bufs[b].data, 0, (size_t)li->bufs[b].n * (size_t)dt_itemsize(li->bufs[b].et));
}

static bool over_budget(LI *li) {
    if (uopdb_interrupted()) return !fail(li, NULL, "interrupted");
    if (li->executed > li->budget)
        return !fail(li, NULL, "stopped after %llu instructions, the interpreter's budget (an endless or huge loop?)",
                     (unsigned long long)li->executed);
    return false;
}

/* one work item's own state: its lanes, loops, place and registers */
typedef struct Item {
    ScalarVal *val;
    uint8_t *inv;
    int64_t *rend;
    int32_t *open;
    int nopen, pc;
    unsigned char **regs;   /* by buffer: its DEFINE_REG arrays, NULL for others */
} Item;

static void swap_item(LI *li, Item *it) {
    ScalarVal *v = li->val; li->val = it->val; it->val = v;
    uint8_t *iv = li->inv; li->inv = it->inv; it->inv = iv;
    int64_t *re = li->rend; li->rend = it->rend; it->rend = re;
    int32_t *op = li->open; li->open = it->open; it->open = op;
    int no = li->nopen; li->nopen = it->nopen; it->nopen = no;
    for (int b = 0; b < li->nb; b++)
        if (it->regs[b]) {
            unsigned char *d = li->bufs[b].data;
            li->bufs[b].data = it->regs[b];
            it->regs[b] = d;
        }
}

/* A workgroup of several work items: each runs until it reaches a BARRIER
 * (or the end), one after the other; when all have, they go on past it.
 * Every item must reach the same BARRIER. */
static bool run_items(LI *li, Item *items, int64_t nitems, const ScalarVal *val0, const uint8_t *inv0) {
    for (int64_t i = 0; i < nitems; i++) {
        Item *it = &items[i];
        memcpy(it->val, val0, (size_t)li->nlanes * sizeof *val0);
        memcpy(it->inv, inv0, (size_t)li->nlanes);
        it->nopen = 0;
        it->pc = 0;
        for (int b = 0; b < li->nb; b++)
            if (it->regs[b]) memset(it->regs[b], 0, (size_t)li->bufs[b].n * (size_t)dt_itemsize(li->bufs[b].et));
    }
    for (;;) {
        int first = -1;
        for (int64_t i = 0; i < nitems; i++) {
            if (over_budget(li)) return false;
            set_ids(li, true, i);
            swap_item(li, &items[i]);
            int pc = run_from(li, items[i].pc);
            swap_item(li, &items[i]);
            if (pc < 0) return false;
            items[i].pc = pc;
            if (i == 0) first = pc;
            else if (pc != first) {
                set_ids(li, true, i);
                const UOp *at = pc < li->n ? li->ins[pc - 1].u : first < li->n ? li->ins[first - 1].u : NULL;
                return fail(li, at, "work item %lld %s but work item 0 %s: a barrier must be reached by every work "
                            "item of the workgroup", (long long)i, pc < li->n ? "waits here" : "has finished",
                            first < li->n ? "waits at a barrier" : "has finished");
            }
        }
        if (first >= li->n) return true;
    }
}

static bool run_workgroups(LI *li) {
    int64_t ngroups = count_of(li, false), nitems = count_of(li, true);
    if (nitems == 1) {
        /* one work item per group (a CPU kernel, its core_ids): barriers wait for nobody */
        for (int64_t g = 0; g < ngroups; g++) {
            if (over_budget(li)) return false;
            set_ids(li, false, g);
            set_ids(li, true, 0);
            zero_arrays(li, OP_DEFINE_LOCAL);
            zero_arrays(li, OP_DEFINE_REG);
            li->nopen = 0;
            int pc = 0;
            while (pc >= 0 && pc < li->n) pc = run_from(li, pc);
            if (pc < 0) return false;
        }
        return true;
    }
    int nregs = 0;
    uint64_t bytes = (uint64_t)li->nlanes * (sizeof *li->val + 1) + (uint64_t)(li->n + 1) * (sizeof *li->rend + sizeof *li->open);
    for (int b = 0; b < li->nb; b++)
        if (li->bufs[b].owned && uop_op(li->bufs[b].def) == OP_DEFINE_REG) {
            nregs++;
            bytes += (uint64_t)li->bufs[b].n * (uint64_t)dt_itemsize(li->bufs[b].et);
        }
    if (bytes * (uint64_t)nitems > MAX_ITEM_BYTES)
        return fail(li, NULL, "a workgroup of %lld work items needs %llu bytes of registers, more than the emulator's %llu",
                    (long long)nitems, (unsigned long long)(bytes * (uint64_t)nitems), (unsigned long long)MAX_ITEM_BYTES);
    Item *items = calloc((size_t)nitems, sizeof *items);
    ScalarVal *val0 = malloc((size_t)li->nlanes * sizeof *val0 + 1);
    uint8_t *inv0 = malloc((size_t)li->nlanes + 1);
    bool ok = items && val0 && inv0;
    if (ok) {
        memcpy(val0, li->val, (size_t)li->nlanes * sizeof *val0);
        memcpy(inv0, li->inv, (size_t)li->nlanes);
    }
    for (int64_t i = 0; ok && i < nitems; i++) {
        Item *it = &items[i];
        it->val = malloc((size_t)li->nlanes * sizeof *it->val + 1);
        it->inv = malloc((size_t)li->nlanes + 1);
        it->rend = calloc((size_t)li->n + 1, sizeof *it->rend);
        it->open = calloc((size_t)li->n + 1, sizeof *it->open);
        it->regs = calloc((size_t)li->nb, sizeof *it->regs);
        ok = it->val && it->inv && it->rend && it->open && it->regs;
        for (int b = 0; ok && nregs && b < li->nb; b++)
            if (li->bufs[b].owned && uop_op(li->bufs[b].def) == OP_DEFINE_REG)
                ok = (it->regs[b] = calloc((size_t)li->bufs[b].n, (size_t)dt_itemsize(li->bufs[b].et))) != NULL;
    }
    if (!ok) ok = !oom(li);
    for (int64_t g = 0; ok && g < ngroups; g++) {
        set_ids(li, false, g);
        zero_arrays(li, OP_DEFINE_LOCAL);
        ok = run_items(li, items, nitems, val0, inv0);
    }
    for (int64_t i = 0; items && i < nitems; i++) {
        for (int b = 0; items[i].regs && b < li->nb; b++) free(items[i].regs[b]);
        free(items[i].regs);
        free(items[i].val);
        free(items[i].inv);
        free(items[i].rend);
        free(items[i].open);
    }
    free(items);
    free(val0);
    free(inv0);
    return ok;
}

/* ---- entry ---- */

bool linear_interp_run(const UOp *linear, void **bufs, const int64_t *sizes, int nbufs, char *err, size_t errlen) {
    return linear_interp_run_fault(linear, bufs, sizes, nbufs, NULL, err, errlen);
}

bool linear_interp_run_fault(const UOp *linear, void **bufs, const int64_t *sizes, int nbufs, AccessFault *fault,
                             char *err, size_t errlen) {
    char dummy[8];
    AccessFault own;
    if (!fault) fault = &own;
    *fault = (AccessFault){0};
    LI li = {.sizes = sizes, .err = err && errlen ? err : dummy, .errlen = err && errlen ? errlen : sizeof dummy,
             .fault = fault, .budget = budget_setting ? budget_setting : DEFAULT_BUDGET};
    li.err[0] = 0;
    if (nbufs < 0) nbufs = 0;
    if (!linear || uop_op(linear) != OP_LINEAR) {
        if (linear) fail(&li, linear, "not a LINEAR program (stages 20 and 21 make one)");
        else fail(&li, NULL, "no program");
        return false;
    }
    bool ok = true;
    li.n = linear->nsrc;
    li.ins = calloc((size_t)li.n + 1, sizeof *li.ins);
    li.rend = calloc((size_t)li.n + 1, sizeof *li.rend);
    li.open = calloc((size_t)li.n + 1, sizeof *li.open);
    li.access = calloc((size_t)li.n + 1, 1);
    li.access_width = calloc((size_t)li.n + 1, sizeof *li.access_width);
    if (!li.ins || !li.rend || !li.open || !li.access || !li.access_width) ok = oom(&li);
    /* buffer 0 is none (a pointer lane that was never set points to it, and
     * every access through it is out of range); DEFINE_GLOBAL g's is g + 1 */
    if (ok && add_buf(&li, (Buf){NULL, NULL, 0, NULL, -1, false}) < 0) ok = oom(&li);
    for (int g = 0; ok && g < nbufs; g++) {
        Buf b = {bufs ? bufs[g] : NULL, NULL, sizes ? sizes[g] : 0, NULL, g, false};
        if (b.n < 0) b.n = 0;
        if (add_buf(&li, b) < 0) ok = oom(&li);
    }
    li.nglobals = nbufs;
    for (int pc = 0; ok && pc < li.n; pc++) ok = build_ins(&li, pc, linear->src[pc]);
    if (ok) ok = control_flow(&li);
    li.running = true;
    if (ok) ok = run_workgroups(&li);
    li.running = false;
    for (int b = 0; b < li.nb; b++)
        if (li.bufs[b].owned) free(li.bufs[b].data);
    free(li.bufs);
    free(li.ins);
    free(li.refs);
    free(li.ints);
    free(li.val);
    free(li.inv);
    free(li.nodes);
    free(li.rend);
    free(li.open);
    free(li.access);
    free(li.access_width);
    u64map_free(&li.pos);
    return ok && !li.failed;
}
