/* sched_graph.c - graph helpers of the scheduler steps: substitution that
 * stops at replaced nodes, removal of every tag, and the row-major flat
 * index of a shape. */
#include <stdlib.h>
#include "schedule_internal.h"
#include "../sym/symbolic.h"

typedef struct Leaves {
    const U64Map *map;
    bool (*stop)(const UOp *u);
} Leaves;

/* nodes in the map are leaves: their insides are another kernel's business */
static bool is_leaf(const UOp *u, void *ud) {
    const Leaves *l = ud;
    return u64map_get(l->map, u->id) != NULL || (l->stop && l->stop(u));
}

const UOp *sched_substitute(UCtx *c, const UOp *root, const U64Map *map) {
    return sched_substitute_stop(c, root, map, NULL);
}

static const UOp *substitute(UCtx *c, const UOp *root, const U64Map *map, bool (*stop)(const UOp *u), bool untag,
                             SchedRebuild rebuild, void *ud);

const UOp *sched_substitute_stop(UCtx *c, const UOp *root, const U64Map *map, bool (*stop)(const UOp *u)) {
    return substitute(c, root, map, stop, false, NULL, NULL);
}

const UOp *sched_substitute_rebuild(UCtx *c, const UOp *root, const U64Map *map, SchedRebuild rebuild, void *ud) {
    return substitute(c, root, map, NULL, false, rebuild, ud);
}

const UOp *sched_remove_tags(UCtx *c, const UOp *root) {
    U64Map none = {0};
    return substitute(c, root, &none, NULL, true, NULL, NULL);
}

/* root with the nodes in map replaced (not looking inside them, nor inside
 * nodes stop() is true for), and with untag, every node's tag removed;
 * rebuild, when given, may make a node from its new sources instead */
static const UOp *substitute(UCtx *c, const UOp *root, const U64Map *map, bool (*stop)(const UOp *u), bool untag,
                             SchedRebuild rebuild, void *ud) {
    size_t n;
    Leaves leaves = {map, stop};
    const UOp **topo = uop_toposort_gated(root, is_leaf, &leaves, &n);
    if (!topo) { uctx_set_error(c, "out of memory"); return NULL; }
    U64Map done = {0};
    const UOp *result = NULL;
    const UOp *inline_src[16];
    for (size_t i = 0; i < n; i++) {
        const UOp *u = topo[i], *nu = u64map_get(map, u->id);
        if (!nu) {
            const UOp **src = u->nsrc <= 16 ? inline_src : malloc(u->nsrc * sizeof *src);
            if (!src) { uctx_set_error(c, "out of memory"); goto out; }
            bool changed = false;
            for (int k = 0; k < u->nsrc; k++) {
                const UOp *r = u64map_get(&done, u->src[k]->id);
                src[k] = r ? r : u->src[k];
                changed |= src[k] != u->src[k];
            }
            nu = rebuild ? rebuild(ud, u, src) : u; /* the hook's node, or u to rebuild as usual */
            if (nu == u && untag && u->tag) nu = uop_intern(c, uop_op(u), u->dtype, src, u->nsrc, u->arg, NULL);
            else if (nu == u && changed) nu = uop_with_src(c, u, src, u->nsrc);
            if (src != inline_src) free((void *)src);
            if (!nu) goto out;
        }
        if (nu != u && !u64map_put(&done, u->id, nu)) { uctx_set_error(c, "out of memory"); goto out; }
        if (i == n - 1) result = nu;
    }
out:
    u64map_free(&done);
    free(topo);
    return result;
}

/* the RANGEs of a graph in the order they first appear in its toposort */
static int ranges_of(const UOp *root, const UOp **out, int max) {
    size_t n;
    const UOp **topo = uop_toposort(root, &n);
    if (!topo) return -1;
    int k = 0;
    for (size_t i = 0; i < n; i++)
        if (uop_op(topo[i]) == OP_RANGE) {
            if (k == max) { k = -1; break; }
            out[k++] = topo[i];
        }
    free(topo);
    return k;
}

/* root with from[i] replaced by to[i] */
static const UOp *swap_nodes(UCtx *c, const UOp *root, const UOp *const *from, const UOp *const *to, int n) {
    U64Map map = {0};
    for (int i = 0; i < n; i++)
        if (!u64map_put(&map, from[i]->id, to[i])) { u64map_free(&map); uctx_set_error(c, "out of memory"); return NULL; }
    const UOp *r = sched_substitute(c, root, &map);
    u64map_free(&map);
    return r;
}

#define MAX_RESHAPE_RANGES 256

bool sched_reshape_indices(UCtx *c, const Shape *in, const Shape *out, const UOp *const *idx, const UOp **sidx) {
    const UOp *zero = uop_const_int(c, DT_INDEX, 0);
    const UOp *sink = uop_intern(c, OP_SINK, DT_VOID, idx, out->ndim, NULL, NULL);
    if (!zero || !sink) return false;
    /* the ranges become placeholders numbered in order of appearance, so
     * the rules see the same expression whatever the ranges' ids */
    const UOp *rngs[MAX_RESHAPE_RANGES], *ph[MAX_RESHAPE_RANGES];
    int nr = ranges_of(sink, rngs, MAX_RESHAPE_RANGES);
    if (nr < 0) { uctx_set_error(c, "reshape: too many ranges in an index"); return false; }
    for (int i = 0; i < nr; i++)
        if (!(ph[i] = uop_range(c, rngs[i]->src[0], i, AXIS_PLACEHOLDER))) return false;
    if (nr && !(sink = swap_nodes(c, sink, rngs, ph, nr))) return false;
    /* the flat position: sum of stride * index, the last dim first */
    const UOp *combined = zero;
    int64_t acc = 1;
    for (int d = out->ndim - 1; d >= 0 && combined; d--) {
        combined = uop_binary(c, OP_ADD, combined, uop_binary(c, OP_MUL, uop_const_int(c, DT_INDEX, acc), sink->src[d]));
        acc *= out->d[d];
    }
    /* unflattened in the old shape, the last dim first */
    const UOp *axes[SHAPE_MAX_DIMS];
    for (int d = in->ndim - 1; d >= 0 && combined; d--) {
        const UOp *size = uop_const_int(c, DT_INDEX, in->d[d]);
        axes[d] = uop_binary(c, OP_MOD, combined, size);
        combined = uop_binary(c, OP_IDIV, combined, size);
        if (!axes[d]) return false;
    }
    if (!combined) return false;
    const UOp *r = uop_intern(c, OP_SINK, DT_VOID, axes, in->ndim, NULL, NULL);
    r = r ? uop_simplify(c, r, "symbolic + pm_simplify_valid + pm_drop_and_clauses", NULL) : NULL;
    if (r && nr) r = swap_nodes(c, r, ph, rngs, nr);
    if (!r) return false;
    if (uop_op(r) != OP_SINK || r->nsrc != in->ndim) { uctx_set_error(c, "reshape: simplification changed the index list"); return false; }
    for (int d = 0; d < in->ndim; d++) sidx[d] = r->src[d];
    return true;
}

const UOp *sched_flat_index(UCtx *c, const Shape *s, const UOp *const *idx) {
    Shape flat = {.ndim = 1};
    flat.d[0] = shape_numel(s);
    const UOp *out[1];
    return sched_reshape_indices(c, &flat, s, idx, out) ? out[0] : NULL;
}

bool sched_pure_unit_reshape(const Shape *from, const Shape *to) {
    int i = 0, j = 0;
    for (;;) {
        while (i < from->ndim && from->d[i] == 1) i++;
        while (j < to->ndim && to->d[j] == 1) j++;
        if (i == from->ndim || j == to->ndim) return i == from->ndim && j == to->ndim;
        if (from->d[i++] != to->d[j++]) return false;
    }
}
