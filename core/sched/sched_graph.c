/* sched_graph.c - graph helpers of the scheduler steps: substitution that
 * stops at replaced nodes, a toposort that does not enter other kernels,
 * and the row-major flat index of a shape. */
#include <stdlib.h>
#include "schedule_internal.h"
#include "../sym/symbolic.h"

typedef struct Frame { const UOp *u; int next; } Frame;

const UOp **sched_toposort_gated(const UOp *root, bool (*leaf)(const UOp *u, void *ud), void *ud, size_t *n) {
    *n = 0;
    U64Map seen = {0};
    size_t cap = 64, len = 0, scap = 32, sp = 0;
    const UOp **out = malloc(cap * sizeof *out);
    Frame *stack = malloc(scap * sizeof *stack);
    if (!out || !stack || !u64map_put(&seen, root->id, root)) goto oom;
    stack[sp++] = (Frame){root, 0};
    while (sp) {
        Frame *f = &stack[sp - 1];
        bool is_leaf = f->next == 0 && leaf && leaf(f->u, ud);
        if (!is_leaf && f->next < f->u->nsrc) {
            const UOp *s = f->u->src[f->next++];
            if (u64map_get(&seen, s->id)) continue;
            if (!u64map_put(&seen, s->id, s)) goto oom;
            if (sp == scap) {
                Frame *ns = realloc(stack, (scap *= 2) * sizeof *ns);
                if (!ns) goto oom;
                stack = ns;
            }
            stack[sp++] = (Frame){s, 0};
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
    free(stack);
    u64map_free(&seen);
    *n = len;
    return out;
oom:
    free(out);
    free(stack);
    u64map_free(&seen);
    return NULL;
}

/* nodes in the map are leaves: their insides are another kernel's business */
static bool in_map(const UOp *u, void *map) { return u64map_get(map, u->id) != NULL; }

const UOp *sched_substitute(UCtx *c, const UOp *root, const U64Map *map) {
    size_t n;
    const UOp **topo = sched_toposort_gated(root, in_map, (void *)map, &n);
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
