/* kernel_split.c - scheduler step 4: each store becomes a kernel of its own,
 * in tinygrad v0.12.0's form:
 *
 *   SINK(END(STORE(INDEX(DEFINE_GLOBAL 0, idx), value), RANGE...))
 *
 * DEFINE_GLOBAL 0 is the buffer stored to; the buffers read (input BUFFERs,
 * or AFTERs of earlier stores) become DEFINE_GLOBAL 1, 2, ... in the order
 * the value first reads them (post-order, sources left to right), each a
 * pointer to its element dtype sized in elements.  The kernel's RANGEs are
 * renumbered from 0 in their old order (output ranges, then reduce ranges),
 * so equal kernels are equal graphs.  Names are tinygrad's (kernel_name.c);
 * a repeated name gets n1, n2, ... appended. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kernel_name.h"
#include "schedule_internal.h"

static bool is_buffer_leaf(const UOp *u, void *ud) {
    (void)ud;
    return uop_op(u) == OP_AFTER || uop_op(u) == OP_BUFFER;
}

static int by_axis(const void *a, const void *b) {
    int64_t x = (*(const UOp *const *)a)->arg->items[0]->v.i, y = (*(const UOp *const *)b)->arg->items[0]->v.i;
    return x < y ? -1 : x > y;
}

static int input_ref(SchedState *st, const UOp *buf) {
    for (int k = 0; k < st->ninputs; k++)
        if (st->inputs[k] == buf) return SCHED_INPUT_REF(k);
    if (st->ninputs == st->cap_inputs) {
        int cap = st->cap_inputs ? st->cap_inputs * 2 : 8;
        const UOp **ni = realloc(st->inputs, (size_t)cap * sizeof *ni);
        if (!ni) return INT32_MIN;
        st->inputs = ni;
        st->cap_inputs = cap;
    }
    st->inputs[st->ninputs] = buf;
    return SCHED_INPUT_REF(st->ninputs++);
}

static const DType *buffer_ptr(const UOp *buf) {
    /* BUFFER: size in the arg; AFTER: its BUFFER's */
    if (uop_op(buf) == OP_AFTER) buf = buf->src[0];
    return dt_ptr(buf->dtype, buf->arg->v.i, ADDR_GLOBAL);
}

static bool split_one(SchedState *st, int i, U64Map *after_index, char (*names)[48]) {
    UCtx *c = st->c;
    const UOp *m = st->mat[i], *end = st->after[i]->src[1];
    const UOp *store = uop_op(end) == OP_END ? end->src[0] : end;
    U64Map map = {0};
    size_t n = 0, nk = 0;
    const UOp **topo = uop_toposort_gated(store->src[1], is_buffer_leaf, NULL, &n);
    const UOp **ktopo = uop_toposort_gated(end, is_buffer_leaf, NULL, &nk);
    const UOp **ranges = malloc((nk ? nk : 1) * sizeof *ranges);
    SchedRef *refs = malloc((n + 1) * sizeof *refs);
    bool ok = topo && ktopo && ranges && refs;
    if (!ok) sched_fail(st, m, "out of memory");
    /* DEFINE_GLOBAL 0: the output */
    const UOp *dg = ok ? uop_new(c, OP_DEFINE_GLOBAL, buffer_ptr(st->buffer[i]), NULL, 0, arg_int(c, 0)) : NULL;
    if (ok && (!dg || !u64map_put(&map, st->buffer[i]->id, dg))) ok = sched_fail(st, m, "could not define the output");
    int nrefs = 0;
    if (ok) refs[nrefs++] = i;
    for (size_t t = 0; ok && t < n; t++) {
        const UOp *b = topo[t];
        if (!is_buffer_leaf(b, NULL) || u64map_get(&map, b->id)) continue;
        SchedRef ref;
        if (uop_op(b) == OP_AFTER) {
            ref = (int)(intptr_t)u64map_get(after_index, b->id) - 1;
            if (ref < 0) { ok = sched_fail(st, b, "a read of a store that is not in this schedule"); break; }
        } else if ((ref = input_ref(st, b)) == INT32_MIN) {
            ok = sched_fail(st, m, "out of memory");
            break;
        }
        dg = uop_new(c, OP_DEFINE_GLOBAL, buffer_ptr(b), NULL, 0, arg_int(c, nrefs));
        if (!dg || !u64map_put(&map, b->id, dg)) { ok = sched_fail(st, m, "could not define a buffer"); break; }
        SCHED_NOTE(st, "define_global", b, dg);
        refs[nrefs++] = ref;
    }
    /* renumber the ranges from 0 */
    int nr = 0;
    for (size_t t = 0; ok && t < nk; t++)
        if (uop_op(ktopo[t]) == OP_RANGE) ranges[nr++] = ktopo[t];
    qsort(ranges, (size_t)nr, sizeof *ranges, by_axis);
    for (int r = 0; ok && r < nr; r++) {
        const Arg *a = ranges[r]->arg;
        const UOp *nr_ = uop_range(c, ranges[r]->src[0], r, a->items[a->n - 1]->v.axis);
        if (!nr_ || !u64map_put(&map, ranges[r]->id, nr_)) ok = sched_fail(st, m, "could not renumber a range");
    }
    const UOp *body = ok ? sched_substitute(c, end, &map) : NULL;
    const UOp *kernel = body ? uop_sink(c, &body, 1) : NULL;
    if (ok && !kernel) ok = sched_fail(st, m, "could not build the kernel: %s", uctx_error(c));
    /* named from the nodes walked above: the renumbering keeps the ranges' sizes and order */
    char name[48];
    if (ok && !kernel_name_of(ktopo, nk, name, sizeof name) && !name[0]) ok = sched_fail(st, m, "out of memory");
    if (ok) {
        int dup = 0;
        for (int k = 0; k < i; k++) dup += strcmp(names[k], name) == 0;
        strcpy(names[i], name);
        if (dup) snprintf(st->kernel_name[i], sizeof st->kernel_name[i], "%.36sn%d", name, dup);
        else snprintf(st->kernel_name[i], sizeof st->kernel_name[i], "%s", name);
        st->kernel_ast[i] = kernel;
        st->kernel_refs[i] = refs;
        st->kernel_nrefs[i] = nrefs;
        refs = NULL;
        SCHED_NOTE(st, "split_kernel", st->after[i], kernel);
    }
    free(refs);
    free(ranges);
    free(topo);
    free(ktopo);
    u64map_free(&map);
    return ok;
}

bool sched_split_kernels(SchedState *st) {
    size_t nm = st->nmat ? (size_t)st->nmat : 1;
    st->kernel_ast = calloc(nm, sizeof *st->kernel_ast);
    st->kernel_name = calloc(nm, sizeof *st->kernel_name);
    st->kernel_refs = calloc(nm, sizeof *st->kernel_refs);
    st->kernel_nrefs = calloc(nm, sizeof *st->kernel_nrefs);
    char (*names)[48] = calloc(nm, sizeof *names);
    U64Map after_index = {0};
    bool ok = st->kernel_ast && st->kernel_name && st->kernel_refs && st->kernel_nrefs && names;
    if (!ok) sched_fail(st, st->sink, "out of memory");
    for (int i = 0; ok && i < st->nmat; i++)
        if (!u64map_put(&after_index, st->after[i]->id, (const void *)(intptr_t)(i + 1))) ok = sched_fail(st, st->sink, "out of memory");
    for (int i = 0; ok && i < st->nmat; i++) ok = split_one(st, i, &after_index, names);
    u64map_free(&after_index);
    free(names);
    return ok;
}
