/* sched_graph.c - graph helpers of the scheduler steps: substitution that
 * stops at replaced nodes and the row-major flat index of a shape. */
#include <stdlib.h>
#include "schedule_internal.h"
#include "../sym/symbolic.h"



/* nodes in the map are leaves: their insides are another kernel's business */
static bool in_map(const UOp *u, void *map) { return u64map_get(map, u->id) != NULL; }

const UOp *sched_substitute(UCtx *c, const UOp *root, const U64Map *map) {
    size_t n;
    const UOp **topo = uop_toposort_gated(root, in_map, (void *)map, &n);
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
            nu = changed ? uop_with_src(c, u, src, u->nsrc) : u;
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

const UOp *sched_flat_index(UCtx *c, const Shape *s, const UOp *const *idx) {
    const UOp *flat = uop_const_int(c, DT_INDEX, 0);
    int64_t stride = 1;
    for (int d = s->ndim - 1; d >= 0 && flat; d--) {
        int64_t v;
        if (!(uop_const_int_value(idx[d], &v) && v == 0)) {
            const UOp *term = stride == 1 ? idx[d] : uop_binary(c, OP_MUL, idx[d], uop_const_int(c, DT_INDEX, stride));
            flat = uop_binary(c, OP_ADD, term, flat);
        }
        stride *= s->d[d];
    }
    return flat ? uop_simplify(c, flat, "sym", NULL) : NULL;
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
