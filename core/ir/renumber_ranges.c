/* renumber_ranges.c - canonical RANGE numbering (see renumber_ranges.h).
 * One pass over the toposort: every node is rebuilt from its rebuilt
 * sources, a RANGE with the next number in its arg. */
#include "renumber_ranges.h"
#include <stdlib.h>

static const Arg *renumbered_arg(UCtx *c, const Arg *a, int64_t k) {
    if (!a || a->kind != ARG_TUPLE || a->n < 2 || !a->items[a->n - 1] || a->items[a->n - 1]->kind != ARG_AXIS)
        return a;
    const Arg *items[2] = {arg_int(c, k), a->items[a->n - 1]};
    return arg_tuple(c, items, 2);
}

const UOp *uop_renumber_ranges(UCtx *c, const UOp *root) {
    if (!root) return NULL;
    size_t n;
    const UOp **topo = uop_toposort(root, &n);
    /* the rebuilt node of each node, by id (sources come before users) */
    const UOp **made = topo ? calloc((size_t)root->id + 1, sizeof *made) : NULL;
    const UOp **src = NULL;
    int src_cap = 0;
    const UOp *out = NULL;
    if (!made) goto oom;
    int64_t next = 0;
    for (size_t i = 0; i < n; i++) {
        const UOp *u = topo[i];
        if (u->nsrc > src_cap) {
            const UOp **ns = realloc(src, (size_t)u->nsrc * sizeof *ns);
            if (!ns) goto oom;
            src = ns;
            src_cap = u->nsrc;
        }
        for (int s = 0; s < u->nsrc; s++) src[s] = made[u->src[s]->id];
        const Arg *arg = uop_op(u) == OP_RANGE ? renumbered_arg(c, u->arg, next++) : u->arg;
        made[u->id] = uop_intern(c, uop_op(u), u->dtype, src, u->nsrc, arg, u->tag);
        if (!made[u->id]) goto oom;
    }
    out = made[root->id];
    free(src);
    free(made);
    free(topo);
    return out;
oom:
    free(src);
    free(made);
    free(topo);
    uctx_set_error(c, "renumber_ranges: out of memory");
    return NULL;
}
