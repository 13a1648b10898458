/* uop.c - the UOp context: interning, well-formedness checks, constructors
 * and traversal. */
#include "uctx_internal.h"
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool ptrtable_grow(PtrTable *t) {
    size_t ncap = t->cap ? t->cap * 2 : 1024;
    PtrSlot *ns = calloc(ncap, sizeof *ns);
    if (!ns) return false;
    for (size_t i = 0; i < t->cap; i++) {
        if (!t->slots[i].p) continue;
        size_t j = t->slots[i].hash & (ncap - 1);
        while (ns[j].p) j = (j + 1) & (ncap - 1);
        ns[j] = t->slots[i];
    }
    free(t->slots);
    t->slots = ns;
    t->cap = ncap;
    return true;
}

UCtx *uctx_new(void) {
    UCtx *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    arena_init(&c->arena);
    return c;
}

void uctx_free(UCtx *c) {
    if (!c) return;
    arena_free(&c->arena);
    free(c->nodes.slots);
    free(c->args.slots);
    for (size_t p = 0; p < c->cap_pages; p++) free(c->id_pages[p]);
    free(c->id_pages);
    free(c);
}

const char *uctx_error(const UCtx *c) { return c->err; }
void uctx_clear_error(UCtx *c) { c->err[0] = 0; }
void uctx_set_error(UCtx *c, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err, sizeof c->err, fmt, ap);
    va_end(ap);
}
size_t uctx_node_count(const UCtx *c) { return c->nid; }
size_t uctx_live_nodes(const UCtx *c) { return c->nodes.count; }
size_t uctx_lookups(const UCtx *c) { return c->lookups; }
size_t uctx_recent_hits(const UCtx *c) { return c->recent_hits; }
size_t uctx_live_args(const UCtx *c) { return c->args.count; }
size_t uctx_bytes(const UCtx *c) {
    return c->arena.reserved_bytes + c->nodes.cap * sizeof *c->nodes.slots + c->args.cap * sizeof(PtrSlot) +
           c->cap_pages * sizeof(IdPage *) + c->live_pages * sizeof(IdPage);
}
const UOp *uctx_node(const UCtx *c, uint32_t id) { return uctx_node_at(c, id); }

_Static_assert(OP_COUNT <= 256, "UOp.op is one byte");

static uint64_t mix(uint64_t h, uint64_t v) {
    h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
    h *= 0xff51afd7ed558ccdull;
    return h ^ (h >> 33);
}

static uint64_t node_hash(Op op, const DType *dt, const UOp *const *src, int nsrc, const Arg *arg, const Arg *tag) {
    uint64_t h = mix((uint64_t)op, (uint64_t)(uintptr_t)dt);
    h = mix(h, (uint64_t)(uintptr_t)arg);
    h = mix(h, (uint64_t)(uintptr_t)tag);
    for (int i = 0; i < nsrc; i++) h = mix(h, (uint64_t)(uintptr_t)src[i]);
    return h;
}

/* The nodes are re-inserted in id order, reading them where the arena put
 * them one after another, so the pass streams through memory instead of
 * visiting the nodes in the old table's random order. */
bool nodetable_rebuild(UCtx *c, size_t ncap) {
    uint64_t *ns = calloc(ncap, sizeof *ns);
    if (!ns) return false;
    nodetable_fill(c, ns, ncap);
    return true;
}

void nodetable_fill(UCtx *c, uint64_t *ns, size_t ncap) {
    NodeTable *t = &c->nodes;
    /* the hashes run GROW_AHEAD nodes ahead of the inserts, and each slot is
     * fetched when its hash is known, so the cache misses overlap */
    enum { GROW_AHEAD = 16 };
    uint64_t ring[GROW_AHEAD];
    const UOp *ring_node[GROW_AHEAD];
    size_t hashed = 0, inserted = 0;
    for (size_t p = 0; p < c->cap_pages; p++) {
        const IdPage *ip = c->id_pages[p];
        for (size_t k = 0; ip && k < ID_PAGE; k++) {
            const UOp *u = ip->node[k];
            if (!u) continue;
            if (hashed - inserted == GROW_AHEAD) {
                uint64_t h = ring[inserted % GROW_AHEAD];
                size_t j = h & (ncap - 1);
                while (ns[j]) j = (j + 1) & (ncap - 1);
                ns[j] = (uint64_t)(uintptr_t)ring_node[inserted % GROW_AHEAD] | (h >> NODE_TAG_SHIFT) << NODE_TAG_SHIFT;
                inserted++;
            }
            uint64_t h = node_hash(uop_op(u), u->dtype, u->src, u->nsrc, u->arg, u->tag);
            ring[hashed % GROW_AHEAD] = h;
            ring_node[hashed % GROW_AHEAD] = u;
            hashed++;
            __builtin_prefetch(&ns[h & (ncap - 1)], 1);
        }
    }
    for (; inserted < hashed; inserted++) {
        uint64_t h = ring[inserted % GROW_AHEAD];
        size_t j = h & (ncap - 1);
        while (ns[j]) j = (j + 1) & (ncap - 1);
        ns[j] = (uint64_t)(uintptr_t)ring_node[inserted % GROW_AHEAD] | (h >> NODE_TAG_SHIFT) << NODE_TAG_SHIFT;
    }
    free(t->slots);
    t->slots = ns;
    t->cap = ncap;
    t->count = hashed;
}

static bool nodetable_grow(UCtx *c) { return nodetable_rebuild(c, c->nodes.cap ? c->nodes.cap * 2 : 1024); }

static inline bool node_equal(const UOp *e, Op op, const DType *dt, const UOp *const *src, int nsrc, const Arg *arg,
                              const Arg *tag) {
    if (e->op != op || e->dtype != dt || e->arg != arg || e->tag != tag || e->nsrc != nsrc) return false;
    int k = 0;
    while (k < nsrc && e->src[k] == src[k]) k++;
    return k == nsrc;
}

/* The existing node equal to the key, or NULL with *slot the empty slot
 * where it belongs. */
static inline const UOp *node_find(const NodeTable *t, uint64_t h, Op op, const DType *dt, const UOp *const *src,
                                   int nsrc, const Arg *arg, const Arg *tag, size_t *slot) {
    size_t mask = t->cap - 1;
    uint64_t want = h >> NODE_TAG_SHIFT;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
        uint64_t w = t->slots[i];
        if (!w) { *slot = i; return NULL; }
        if (w >> NODE_TAG_SHIFT != want) continue;
        const UOp *e = (const UOp *)(uintptr_t)(w & ((1ull << NODE_TAG_SHIFT) - 1));
        if (node_equal(e, op, dt, src, nsrc, arg, tag)) return e;
    }
}

/* Finds the node or makes it; with check set, a node that is not there yet
 * is made only when it passes uop_check (existing nodes are not checked
 * again). */
static const UOp *intern(UCtx *c, Op op, const DType *dt, const UOp *const *src, int nsrc, const Arg *arg,
                         const Arg *tag, bool check) {
    if (nsrc > 65535) { uctx_set_error(c, "%s: too many sources (%d)", op_name(op), nsrc); return NULL; }
    if (check)
        for (int i = 0; i < nsrc; i++)
            if (!src[i]) {
                uop_check(c, op, dt, src, nsrc, arg); /* sets the error */
                return NULL;
            }
    uint64_t h = node_hash(op, dt, src, nsrc, arg, tag);
    NodeTable *t = &c->nodes;
    /* kept at most half full: probes stay short */
    if ((t->count + 1) * 2 > t->cap && !nodetable_grow(c)) {
        uctx_set_error(c, "out of memory");
        return NULL;
    }
    RecentNode *rn = &c->recent[(h >> 20) & (RECENT_NODES - 1)];
    c->lookups++;
    if (rn->hash == h && node_equal(rn->u, op, dt, src, nsrc, arg, tag)) {
        c->recent_hits++;
        return rn->u;
    }
    size_t i;
    const UOp *e = node_find(t, h, op, dt, src, nsrc, arg, tag, &i);
    if (e) {
        *rn = (RecentNode){h, e};
        return e;
    }
    if (check && !uop_check(c, op, dt, src, nsrc, arg)) return NULL;
    if (c->nid >= UINT32_MAX) { uctx_set_error(c, "node ids exhausted (2^32 nodes made in this context)"); return NULL; }
    size_t page = c->nid >> ID_PAGE_BITS;
    if (page >= c->cap_pages) {
        size_t ncap = c->cap_pages ? c->cap_pages * 2 : 64;
        IdPage **np = realloc(c->id_pages, ncap * sizeof *np);
        if (!np) { uctx_set_error(c, "out of memory"); return NULL; }
        memset(np + c->cap_pages, 0, (ncap - c->cap_pages) * sizeof *np);
        c->id_pages = np;
        c->cap_pages = ncap;
    }
    if (!c->id_pages[page]) {
        c->id_pages[page] = calloc(1, sizeof(IdPage));
        if (!c->id_pages[page]) { uctx_set_error(c, "out of memory"); return NULL; }
        c->live_pages++;
    }
    UOp *u = arena_alloc_lines(&c->arena, sizeof(UOp) + (size_t)nsrc * sizeof(UOp *));
    if (!u) { uctx_set_error(c, "out of memory"); return NULL; }
    if ((uintptr_t)u >> NODE_TAG_SHIFT) { uctx_set_error(c, "node memory above the 48-bit address range"); return NULL; }
    u->id = (uint32_t)c->nid;
    u->op = (uint8_t)op;
    u->nsrc = (uint16_t)nsrc;
    u->dtype = dt;
    u->arg = arg;
    u->tag = tag;
    if (nsrc) memcpy((void *)u->src, src, (size_t)nsrc * sizeof *src);
    IdPage *ip = c->id_pages[page];
    ip->node[c->nid & (ID_PAGE - 1)] = u;
    ip->live++;
    c->nid++;
    t->slots[i] = (uint64_t)(uintptr_t)u | (h >> NODE_TAG_SHIFT) << NODE_TAG_SHIFT;
    t->count++;
    *rn = (RecentNode){h, u};
    return u;
}

const UOp *uop_intern(UCtx *c, Op op, const DType *dt, const UOp *const *src, int nsrc, const Arg *arg,
                      const Arg *tag) {
    return intern(c, op, dt, src, nsrc, arg, tag, false);
}

/* ---- well-formedness ---- */


static bool arg_is_num(const Arg *a) {
    return a && (a->kind == ARG_INT || a->kind == ARG_FLOAT || a->kind == ARG_BOOL || a->kind == ARG_INVALID);
}

bool uop_check(UCtx *c, Op op, const DType *dt, const UOp *const *src, int nsrc, const Arg *arg) {
    char b1[64], b2[64], b3[64];
    const char *on = op_name(op);
    if ((unsigned)op >= OP_COUNT) { uctx_set_error(c, "unknown op %d", (int)op); return false; }
    if (!dt) { uctx_set_error(c, "%s: missing dtype", on); return false; }
    int lo = op_min_srcs(op), hi = op_max_srcs(op);
    if (nsrc < lo || (hi >= 0 && nsrc > hi)) {
        if (lo == hi) uctx_set_error(c, "%s needs %d source%s, got %d", on, lo, lo == 1 ? "" : "s", nsrc);
        else if (hi < 0) uctx_set_error(c, "%s needs at least %d source%s, got %d", on, lo, lo == 1 ? "" : "s", nsrc);
        else uctx_set_error(c, "%s needs %d to %d sources, got %d", on, lo, hi, nsrc);
        return false;
    }
    for (int i = 0; i < nsrc; i++)
        if (!src[i]) { uctx_set_error(c, "%s: source %d is missing", on, i); return false; }
    uint32_t f = op_flags(op);
    if (f & OPF_UNARY) {
        if (src[0]->dtype != dt) {
            uctx_set_error(c, "%s: result dtype %s differs from its source's %s (node %u)", on,
                           dt_str(dt, b1, sizeof b1), dt_str(src[0]->dtype, b2, sizeof b2), src[0]->id);
            return false;
        }
        if (dt_is_ptr(dt) || dt->sk == SK_VOID) { uctx_set_error(c, "%s: needs a value dtype, got %s", on, dt_str(dt, b1, sizeof b1)); return false; }
    } else if (f & OPF_BINARY) {
        if (src[0]->dtype != src[1]->dtype) {
            uctx_set_error(c, "%s: sources have different dtypes, %s (node %u) and %s (node %u)", on,
                           dt_str(src[0]->dtype, b1, sizeof b1), src[0]->id, dt_str(src[1]->dtype, b2, sizeof b2),
                           src[1]->id);
            return false;
        }
        const DType *sd = src[0]->dtype;
        if (dt_is_ptr(sd) || sd->sk == SK_VOID) { uctx_set_error(c, "%s: needs value sources, got %s", on, dt_str(sd, b1, sizeof b1)); return false; }
        if (f & OPF_COMPARISON) {
            if (dt != dt_vec(DT_BOOL, sd->count)) {
                uctx_set_error(c, "%s: a comparison gives %s, not %s", on, dt_str(dt_vec(DT_BOOL, sd->count), b1, sizeof b1),
                               dt_str(dt, b2, sizeof b2));
                return false;
            }
        } else if (dt != sd) {
            uctx_set_error(c, "%s: result dtype %s differs from its sources' %s", on, dt_str(dt, b1, sizeof b1),
                           dt_str(sd, b2, sizeof b2));
            return false;
        }
        if ((op == OP_IDIV || op == OP_MOD || op == OP_SHL || op == OP_SHR) && !dt_is_int(sd)) {
            uctx_set_error(c, "%s: needs integer sources, got %s", on, dt_str(sd, b1, sizeof b1));
            return false;
        }
        if ((op == OP_AND || op == OP_OR || op == OP_XOR) && dt_is_float(sd)) {
            uctx_set_error(c, "%s: needs integer or bool sources, got %s", on, dt_str(sd, b1, sizeof b1));
            return false;
        }
    } else if (op == OP_WHERE) {
        if (!dt_is_bool(src[0]->dtype) || dt_is_ptr(src[0]->dtype)) {
            uctx_set_error(c, "WHERE: the condition (node %u) must be bool, got %s", src[0]->id,
                           dt_str(src[0]->dtype, b1, sizeof b1));
            return false;
        }
        if (src[1]->dtype != src[2]->dtype || src[1]->dtype != dt) {
            uctx_set_error(c, "WHERE: branches and result must share a dtype, got %s, %s -> %s",
                           dt_str(src[1]->dtype, b1, sizeof b1), dt_str(src[2]->dtype, b2, sizeof b2),
                           dt_str(dt, b3, sizeof b3));
            return false;
        }
    } else if (op == OP_MULACC) {
        if (src[0]->dtype != dt || src[1]->dtype != dt || src[2]->dtype != dt) {
            uctx_set_error(c, "MULACC: all sources and the result must share a dtype");
            return false;
        }
    }
    switch (op) {
    case OP_CONST:
        if (!arg_is_num(arg)) { uctx_set_error(c, "CONST needs a number, bool or Invalid as its arg"); return false; }
        if (dt->sk == SK_VOID || dt_is_ptr(dt)) { uctx_set_error(c, "CONST needs a value dtype, got %s", dt_str(dt, b1, sizeof b1)); return false; }
        break;
    case OP_VCONST:
        if (!arg || arg->kind != ARG_TUPLE || (int)arg->n != dt->count) {
            uctx_set_error(c, "VCONST needs a tuple of %d values as its arg", dt->count);
            return false;
        }
        for (uint32_t i = 0; i < arg->n; i++)
            if (!arg_is_num(arg->items[i])) { uctx_set_error(c, "VCONST: element %u is not a number", i); return false; }
        break;
    case OP_DEFINE_VAR:
        if (!arg || arg->kind != ARG_TUPLE || arg->n != 3 || !arg->items[0] || arg->items[0]->kind != ARG_STR ||
            !arg_is_num(arg->items[1]) || !arg_is_num(arg->items[2])) {
            uctx_set_error(c, "DEFINE_VAR needs the arg (name, min, max)");
            return false;
        }
        if (arg->items[1]->kind == ARG_INT && arg->items[2]->kind == ARG_INT && arg->items[1]->v.i > arg->items[2]->v.i) {
            uctx_set_error(c, "DEFINE_VAR %.*s: min %lld is above max %lld", (int)arg->items[0]->n, arg->items[0]->v.s,
                           (long long)arg->items[1]->v.i, (long long)arg->items[2]->v.i);
            return false;
        }
        break;
    case OP_RANGE:
        if (!dt_is_int(src[0]->dtype)) { uctx_set_error(c, "RANGE: its end (node %u) must be an integer", src[0]->id); return false; }
        if (!arg || arg->kind != ARG_TUPLE || arg->n < 2 || !arg->items[0] || arg->items[0]->kind != ARG_INT ||
            !arg->items[arg->n - 1] || arg->items[arg->n - 1]->kind != ARG_AXIS) {
            uctx_set_error(c, "RANGE needs the arg (axis_id, ..., AxisType)");
            return false;
        }
        break;
    case OP_VECTORIZE:
        if (dt_vcount(dt) != nsrc) {
            uctx_set_error(c, "VECTORIZE of %d sources must have a vector count of %d, got %s", nsrc, nsrc,
                           dt_str(dt, b1, sizeof b1));
            return false;
        }
        for (int i = 0; i < nsrc; i++)
            if (dt_with_count(src[i]->dtype, 1) != dt_with_count(dt, 1) || dt_vcount(src[i]->dtype) != 1) {
                uctx_set_error(c, "VECTORIZE: source %d (node %u) is %s, expected %s", i, src[i]->id,
                               dt_str(src[i]->dtype, b1, sizeof b1), dt_str(dt_with_count(dt, 1), b2, sizeof b2));
                return false;
            }
        break;
    case OP_GEP:
        if (!arg || arg->kind != ARG_TUPLE) { uctx_set_error(c, "GEP needs a tuple of element indices as its arg"); return false; }
        for (uint32_t i = 0; i < arg->n; i++)
            if (!arg->items[i] || arg->items[i]->kind != ARG_INT || arg->items[i]->v.i < 0 ||
                arg->items[i]->v.i >= dt_vcount(src[0]->dtype)) {
                uctx_set_error(c, "GEP: element %u is out of range for %s", i, dt_str(src[0]->dtype, b1, sizeof b1));
                return false;
            }
        break;
    case OP_SINK:
        if (dt->sk != SK_VOID) { uctx_set_error(c, "SINK must have dtype void"); return false; }
        break;
    case OP_CAST:
        if (dt->sk == SK_VOID) { uctx_set_error(c, "CAST to void"); return false; }
        break;
    case OP_BITCAST:
        /* a zero-size dtype (void, a 0-wide vector) has no bits to reinterpret */
        if (dt->sk == SK_VOID || dt_is_ptr(dt) || dt_itemsize(dt) <= 0) {
            uctx_set_error(c, "BITCAST needs a value dtype with a size, got %s", dt_str(dt, b1, sizeof b1));
            return false;
        }
        break;
    default: break;
    }
    return true;
}

const UOp *uop_new_tagged(UCtx *c, Op op, const DType *dt, const UOp *const *src, int nsrc, const Arg *arg,
                          const Arg *tag) {
    return intern(c, op, dt, src, nsrc, arg, tag, true);
}

const UOp *uop_new(UCtx *c, Op op, const DType *dt, const UOp *const *src, int nsrc, const Arg *arg) {
    return uop_new_tagged(c, op, dt, src, nsrc, arg, NULL);
}

const UOp *uop_with_src(UCtx *c, const UOp *u, const UOp *const *src, int nsrc) {
    return uop_intern(c, uop_op(u), u->dtype, src, nsrc, u->arg, u->tag);
}

/* ---- convenience constructors ---- */

const UOp *uop_const_arg(UCtx *c, const DType *dt, const Arg *v) {
    if (!v) return NULL;
    return uop_new(c, OP_CONST, dt, NULL, 0, v);
}

const UOp *uop_const_int(UCtx *c, const DType *dt, int64_t v) {
    if (!dt) return NULL;
    if (dt_is_float(dt)) return uop_const_float(c, dt, (double)v);
    if (dt_is_bool(dt)) return uop_const_arg(c, dt, arg_bool(c, v != 0));
    uint64_t h = mix((uint64_t)(uintptr_t)dt, (uint64_t)v);
    ConstCacheEntry *ce = &c->const_cache[h & (CONST_CACHE - 1)];
    if (ce->u && ce->dtype == dt && ce->v == v) return ce->u;
    const UOp *u = uop_const_arg(c, dt, arg_int(c, v));
    if (u) *ce = (ConstCacheEntry){dt, v, u};
    return u;
}

const UOp *uop_const_float(UCtx *c, const DType *dt, double v) {
    if (!dt) return NULL;
    if (dt_is_int(dt)) {
        /* 2^63 is exactly representable; anything at or above it does not fit */
        if (!isfinite(v) || v >= 9223372036854775808.0 || v < -9223372036854775808.0) {
            uctx_set_error(c, "CONST: %g does not fit a 64-bit integer", v);
            return NULL;
        }
        return uop_const_arg(c, dt, arg_int(c, (int64_t)v));
    }
    if (dt_is_bool(dt)) return uop_const_arg(c, dt, arg_bool(c, v != 0));
    return uop_const_arg(c, dt, arg_float(c, v));
}

const UOp *uop_const_bool(UCtx *c, bool v) { return uop_const_arg(c, DT_BOOL, arg_bool(c, v)); }

const UOp *uop_var(UCtx *c, const char *name, int64_t lo, int64_t hi) {
    const Arg *items[3] = {arg_str(c, name), arg_int(c, lo), arg_int(c, hi)};
    if (!items[0] || !items[1] || !items[2]) return NULL;
    return uop_new(c, OP_DEFINE_VAR, DT_INDEX, NULL, 0, arg_tuple(c, items, 3));
}

const UOp *uop_range(UCtx *c, const UOp *end, int64_t axis_id, AxisType at) {
    const Arg *items[2] = {arg_int(c, axis_id), arg_axis(c, at)};
    if (!end) { uctx_set_error(c, "RANGE: missing end"); return NULL; }
    return uop_new(c, OP_RANGE, end->dtype, &end, 1, arg_tuple(c, items, 2));
}

const UOp *uop_alu(UCtx *c, Op op, const UOp *const *src, int nsrc) {
    for (int i = 0; i < nsrc; i++)
        if (!src[i]) { uctx_set_error(c, "%s: source %d is missing", op_name(op), i); return NULL; }
    if (nsrc < 1) { uctx_set_error(c, "%s needs sources", op_name(op)); return NULL; }
    const DType *dt = src[0]->dtype;
    if (op_is(op, OPF_COMPARISON)) dt = dt_vec(DT_BOOL, src[0]->dtype->count);
    else if (op == OP_WHERE && nsrc == 3) dt = src[1]->dtype;
    return uop_new(c, op, dt, src, nsrc, NULL);
}

const UOp *uop_binary(UCtx *c, Op op, const UOp *a, const UOp *b) {
    const UOp *s[2] = {a, b};
    return uop_alu(c, op, s, 2);
}
const UOp *uop_unary(UCtx *c, Op op, const UOp *a) { return uop_alu(c, op, &a, 1); }
const UOp *uop_where(UCtx *c, const UOp *cond, const UOp *a, const UOp *b) {
    const UOp *s[3] = {cond, a, b};
    return uop_alu(c, OP_WHERE, s, 3);
}
const UOp *uop_cast(UCtx *c, const UOp *a, const DType *dt) {
    if (!a || !dt) { uctx_set_error(c, "CAST: missing source or dtype"); return NULL; }
    if (dt->count == 1 && a->dtype->count != 1 && !dt_is_ptr(dt)) dt = dt_vec(dt, a->dtype->count);
    if (a->dtype == dt) return a;
    return uop_new(c, OP_CAST, dt, &a, 1, NULL);
}
const UOp *uop_sink(UCtx *c, const UOp *const *src, int nsrc) { return uop_new(c, OP_SINK, DT_VOID, src, nsrc, NULL); }

bool uop_const_value(const UOp *u, double *out) {
    if (uop_op(u) != OP_CONST || !u->arg) return false;
    switch (u->arg->kind) {
    case ARG_INT: *out = (double)u->arg->v.i; return true;
    case ARG_FLOAT: *out = u->arg->v.f; return true;
    case ARG_BOOL: *out = u->arg->v.b; return true;
    default: return false;
    }
}

bool uop_const_int_value(const UOp *u, int64_t *out) {
    if (uop_op(u) != OP_CONST || !u->arg) return false;
    if (u->arg->kind == ARG_INT) { *out = u->arg->v.i; return true; }
    if (u->arg->kind == ARG_BOOL) { *out = u->arg->v.b; return true; }
    return false;
}

/* ---- traversal ---- */

/* Iterative DFS.  A node is always created after its sources, so every
 * source has a smaller id than its user and a bitmap of root->id+1 bits is
 * a complete visited set.  The bitmap and the DFS stack are kept between
 * calls (per thread) and only the bits that were set are cleared, so a small
 * graph in a large context costs what the graph costs. */
typedef struct Frame { const UOp *u; uint32_t next; } Frame;

static _Thread_local uint64_t *topo_seen;
static _Thread_local size_t topo_seen_words;
static _Thread_local Frame *topo_stack;
static _Thread_local size_t topo_stack_cap;

/* freed when the library is unloaded or the program exits */
__attribute__((destructor)) static void topo_buffers_free(void) {
    free(topo_seen);
    free(topo_stack);
    topo_seen = NULL;
    topo_stack = NULL;
    topo_seen_words = topo_stack_cap = 0;
}

static bool topo_reserve(uint32_t root_id) {
    size_t words = (size_t)root_id / 64 + 1;
    if (words > topo_seen_words) {
        size_t nw = topo_seen_words ? topo_seen_words : 64;
        while (nw < words) nw *= 2;
        uint64_t *p = realloc(topo_seen, nw * sizeof *p);
        if (!p) return false;
        memset(p + topo_seen_words, 0, (nw - topo_seen_words) * sizeof *p);
        topo_seen = p;
        topo_seen_words = nw;
    }
    if (!topo_stack) {
        topo_stack = malloc(64 * sizeof *topo_stack);
        if (!topo_stack) return false;
        topo_stack_cap = 64;
    }
    return true;
}

const UOp **uop_toposort(const UOp *root, size_t *n) { return uop_toposort_gated(root, NULL, NULL, n); }

/* a node older than the one looked for cannot have it below it */
static bool older_than(const UOp *u, void *node) { return u->id < ((const UOp *)node)->id; }

int uop_graph_has(const UOp *root, const UOp *node) {
    if (root == node) return 1;
    if (!root || !node || node->id > root->id) return 0; /* a source is older than its users */
    size_t n;
    const UOp **t = uop_toposort_gated(root, older_than, (void *)node, &n);
    if (!t) return -1;
    int found = 0;
    for (size_t i = 0; i < n && !found; i++) found = t[i] == node;
    free((void *)t);
    return found;
}

const UOp **uop_toposort_gated(const UOp *root, bool (*leaf)(const UOp *u, void *ud), void *ud, size_t *n) {
    *n = 0;
    if (!root) return NULL;
    if (!topo_reserve(root->id)) return NULL;
    uint64_t *seen = topo_seen;
    size_t cap = 256, len = 0, sp = 0;
    const UOp **out = malloc(cap * sizeof *out);
    if (!out) return NULL;
    topo_stack[sp++] = (Frame){root, 0};
    seen[root->id / 64] |= 1ull << (root->id % 64);
    while (sp) {
        Frame *f = &topo_stack[sp - 1];
        bool is_leaf = f->next == 0 && leaf && leaf(f->u, ud);
        if (!is_leaf && f->next < f->u->nsrc) {
            const UOp *s = f->u->src[f->next++];
            if (seen[s->id / 64] >> (s->id % 64) & 1) continue;
            seen[s->id / 64] |= 1ull << (s->id % 64);
            if (sp == topo_stack_cap) {
                Frame *nsk = realloc(topo_stack, topo_stack_cap * 2 * sizeof *nsk);
                if (!nsk) goto oom;
                topo_stack = nsk;
                topo_stack_cap *= 2;
            }
            topo_stack[sp++] = (Frame){s, 0};
        } else {
            if (len == cap) {
                const UOp **no = realloc(out, (cap *= 2) * sizeof *no);
                if (!no) goto oom;
                out = no;
            }
            out[len++] = f->u;
            sp--;
        }
    }
    for (size_t i = 0; i < len; i++) seen[out[i]->id / 64] = 0;
    *n = len;
    return out;
oom:
    /* every marked node is in out or on the stack */
    for (size_t i = 0; i < len; i++) seen[out[i]->id / 64] = 0;
    for (size_t i = 0; i < sp; i++) {
        const UOp *u = topo_stack[i].u;
        seen[u->id / 64] = 0;
        for (uint32_t k = 0; k < u->nsrc; k++) seen[u->src[k]->id / 64] = 0;
    }
    free(out);
    return NULL;
}

size_t uop_graph_size(const UOp *root) {
    size_t n;
    const UOp **t = uop_toposort(root, &n);
    free(t);
    return n;
}

size_t uop_graph_depth(const UOp *root) {
    size_t n, best = 0;
    if (!root) return 0;
    const UOp **t = uop_toposort(root, &n);
    /* nodes on the longest path down from each node, by id (sources have smaller ids) */
    uint32_t *depth = t ? malloc(((size_t)root->id + 1) * sizeof *depth) : NULL;
    for (size_t i = 0; depth && i < n; i++) {
        uint32_t d = 0;
        for (int s = 0; s < t[i]->nsrc; s++)
            if (depth[t[i]->src[s]->id] > d) d = depth[t[i]->src[s]->id];
        depth[t[i]->id] = d + 1;
    }
    if (depth && n) best = depth[root->id];
    free(depth);
    free(t);
    return best;
}
