/* kernel_name.c - a kernel's name as tinygrad v0.12.0 gives it: "r" when
 * the kernel has a REDUCE, "E" when not, then the size of each range that
 * runs more than once, in tinygrad's order of axes (Scheduler.rngs): LOOP,
 * then GLOBAL and THREAD, LOCAL and GROUP_REDUCE, UPCAST, REDUCE, UNROLL,
 * and by range ids within one position.  tinygrad names a kernel so once its
 * opts are applied, so the name of a kernel with opts shows them
 * (r_512_512_512 with UPCAST 1 4, UPCAST 0 4, UNROLL 0 4 is
 * r_128_128_4_4_128_4). */
#include <stdio.h>
#include <stdlib.h>
#include "kernel_name.h"
#include "../ir/range_arg.h"

/* tinygrad's order: the axis type's position, then the ids */
static int by_position(const void *pa, const void *pb) {
    const UOp *a = *(const UOp *const *)pa, *b = *(const UOp *const *)pb;
    int x = axis_to_pos(range_axis_type(a)), y = axis_to_pos(range_axis_type(b));
    if (x != y) return x < y ? -1 : 1;
    return range_ids_cmp(a, b);
}

bool kernel_name_of(const UOp *const *topo, size_t n, char *out, size_t outlen) {
    if (!outlen) return false;
    out[0] = 0;
    const UOp **ranges = malloc((n ? n : 1) * sizeof *ranges);
    if (!ranges) return false;
    bool reduce = false;
    int nr = 0;
    for (size_t i = 0; i < n; i++) {
        Op op = uop_op(topo[i]);
        reduce |= op == OP_REDUCE || op == OP_REDUCE_AXIS;
        int64_t size;
        /* a range of one iteration (vmax 0) is not named; one of unknown size is */
        if (op == OP_RANGE && !(uop_const_int_value(topo[i]->src[0], &size) && size <= 1)) ranges[nr++] = topo[i];
    }
    qsort(ranges, (size_t)nr, sizeof *ranges, by_position);
    size_t len = (size_t)snprintf(out, outlen, "%s", reduce ? "r" : "E");
    for (int i = 0; i < nr && len < outlen; i++) {
        int64_t size;
        const UOp *s = ranges[i]->src[0];
        if (uop_const_int_value(s, &size)) len += (size_t)snprintf(out + len, outlen - len, "_%lld", (long long)size);
        else if (uop_op(s) == OP_DEFINE_VAR && s->arg && s->arg->kind == ARG_TUPLE && s->arg->n > 0 &&
                 s->arg->items[0]->kind == ARG_STR)
            len += (size_t)snprintf(out + len, outlen - len, "_%s", s->arg->items[0]->v.s);
        else len += (size_t)snprintf(out + len, outlen - len, "_x"); /* tinygrad renders the expression */
    }
    free(ranges);
    return len < outlen;
}

bool kernel_shape_name(const UOp *root, char *out, size_t outlen) {
    if (outlen) out[0] = 0;
    size_t n = 0;
    const UOp **topo = uop_toposort(root, &n);
    if (!topo) return false;
    bool ok = kernel_name_of(topo, n, out, outlen);
    free(topo);
    return ok;
}
