/* bufferize.c - scheduler step 3: each BUFFERIZE(value, ranges...) becomes a
 * store into a new buffer, in tinygrad v0.12.0's shape:
 *
 *   AFTER(BUFFER(LUNIQUE n, DEVICE), END(STORE(INDEX(BUFFER, flat), value), RANGE...))
 *
 * where flat is the row-major index of the ranges and the END closes the
 * RANGEs sorted by axis id (a node with no ranges stores without an END).
 * Reads of a materialised node, INDEX(BUFFERIZE, i...) with one index per
 * dim it stores, become INDEX(AFTER, flat), flat the row-major index of
 * i... in that shape (v0.12.0's flatten_bufferize, after the symbolic pass
 * has simplified each index on its own), so the AFTER says which store a
 * read waits for. */
#include <stdlib.h>
#include "schedule_internal.h"

static int by_axis(const void *a, const void *b) {
    int64_t x = (*(const UOp *const *)a)->arg->items[0]->v.i, y = (*(const UOp *const *)b)->arg->items[0]->v.i;
    return x < y ? -1 : x > y;
}

typedef struct Flatten {
    UCtx *c;
    const U64Map *stored;  /* BUFFERIZE id -> the Shape it stores */
} Flatten;

/* a read INDEX(BUFFERIZE, i...) becomes INDEX(its AFTER, flat); src are
 * u's sources with the BUFFERIZE already replaced by its AFTER */
static const UOp *flatten_read(void *ud, const UOp *u, const UOp *const *src) {
    const Flatten *f = ud;
    const Shape *s = uop_op(u) == OP_INDEX ? u64map_get(f->stored, u->src[0]->id) : NULL;
    if (s && s->ndim > 0 && u->nsrc - 1 != s->ndim) {
        uctx_set_error(f->c, "a read of a stored node has %d indices for its %d dims", u->nsrc - 1, s->ndim);
        return NULL;
    }
    /* not a read, or a read of a 0-d node at its index 0: rebuilt as usual */
    if (!s || s->ndim == 0) return u;
    const UOp *flat = sched_flat_index(f->c, s, src + 1);
    const UOp *isrc[2] = {src[0], flat};
    return flat ? uop_with_src(f->c, u, isrc, 2) : NULL;
}

bool sched_bufferize_to_store(SchedState *st) {
    UCtx *c = st->c;
    size_t nm = st->nmat ? (size_t)st->nmat : 1;
    st->buffer = calloc(nm, sizeof *st->buffer);
    st->after = calloc(nm, sizeof *st->after);
    if (!st->buffer || !st->after) return sched_fail(st, st->sink, "out of memory");
    U64Map map = {0}, stored = {0};
    Flatten flatten = {c, &stored};
    bool ok = true;
    for (int i = 0; ok && i < st->nmat; i++) {
        const UOp *m = st->mat[i], *bz = st->bufferize[i];
        const Shape *s = &st->stored[i];
        int64_t numel = shape_numel(s);
        const UOp *lu = uop_new(c, OP_LUNIQUE, DT_VOID, NULL, 0, arg_int(c, i));
        const UOp *bsrc[2] = {lu, st->device};
        const UOp *buf = lu ? uop_new(c, OP_BUFFER, m->dtype, bsrc, 2, arg_int(c, numel)) : NULL;
        const UOp *value = sched_substitute_rebuild(c, bz->src[0], &map, flatten_read, &flatten);
        const UOp *flat = sched_flat_index(c, s, bz->src + 1);
        const UOp *isrc[2] = {buf, flat};
        const UOp *target = buf && flat ? uop_new(c, OP_INDEX, dt_ptr(m->dtype, numel, ADDR_GLOBAL), isrc, 2, NULL) : NULL;
        const UOp *ssrc[2] = {target, value};
        const UOp *store = target && value ? uop_new(c, OP_STORE, DT_VOID, ssrc, 2, NULL) : NULL;
        /* END(store, ranges sorted by axis id) */
        const UOp *esrc[1 + SHAPE_MAX_DIMS];
        int nr = 0;
        for (int d = 1; d < bz->nsrc; d++)
            if (uop_op(bz->src[d]) == OP_RANGE) esrc[1 + nr++] = bz->src[d];
        qsort(esrc + 1, (size_t)nr, sizeof *esrc, by_axis);
        esrc[0] = store;
        const UOp *end = store && nr ? uop_new(c, OP_END, DT_VOID, esrc, 1 + nr, NULL) : store;
        const UOp *asrc[2] = {buf, end};
        const UOp *after = end ? uop_new(c, OP_AFTER, m->dtype, asrc, 2, NULL) : NULL;
        if (!after) {
            ok = sched_fail(st, m, "could not build the store: %s", uctx_error(c));
            break;
        }
        st->buffer[i] = buf;
        st->after[i] = after;
        if (!u64map_put(&map, bz->id, after) || !u64map_put(&stored, bz->id, s)) ok = sched_fail(st, m, "out of memory");
        SCHED_NOTE(st, "bufferize_to_store", bz, after);
    }
    u64map_free(&map);
    u64map_free(&stored);
    return ok;
}
