/* remove_reduce.c - stage 11 (tinygrad v0.12.0's pm_reduce + gep_pushing):
 * each REDUCE becomes an accumulator register.
 *
 *   acc  = DEFINE_REG (dtype.ptr(1, reg), arg = n-th accumulator)
 *   init = STORE(INDEX(AFTER(acc, ranges the value lives in), 0), identity)
 *   body = INDEX(AFTER(acc, init, reduce ranges), 0) op value lanes...
 *   out  = INDEX(AFTER(acc, END(STORE(INDEX(AFTER(acc, init, reduce ranges), 0), body),
 *                               reduce ranges), init), 0)
 *
 * (tinygrad's out follows only the END; following the init too keeps the
 * result right when a body that folds to acc + 0 loses its store.)
 *
 * The INDEXes are value reads (stage 13 turns them into LOADs).  A vector
 * source wider than the REDUCE (an UNROLL the expander contracted) is first
 * reduced horizontally: lanes i, i+k, i+2k, ... are combined. */
#include "stages.h"
#include <math.h>
#include <stdlib.h>
#include "ranges.h"
#include "../sched/reduce_unparented.h"
#include "stage_rules.h"
#include "uop_build.h"
#include "../sym/vector_rules.h"

typedef struct ReduceCtx {
    int acc_num;
} ReduceCtx;

/* the parts to combine: the source itself, or its horizontal slices when it is wider than the result */
static int horizontal_parts(UCtx *c, const UOp *inp, const DType *out, const UOp **parts, int max) {
    if (inp->dtype == out) { parts[0] = inp; return 1; }
    int in_n = dt_vcount(inp->dtype), out_n = dt_vcount(out);
    if (out_n < 1 || in_n % out_n) return -1;
    int amount = in_n / out_n;
    if (amount > max) return -1;
    int *lanes = malloc((size_t)out_n * sizeof *lanes);
    if (!lanes) return -1;
    for (int i = 0; i < amount; i++) {
        for (int k = 0; k < out_n; k++) lanes[k] = i + k * amount;
        parts[i] = ub_gep(c, inp, lanes, out_n);
    }
    free(lanes);
    return amount;
}

static const UOp *reduce_to_acc(const Match *m, void *ud) {
    (void)ud;
    UCtx *c = m->ctx;
    ReduceCtx *ctx = m->user;
    const UOp *red = m->root, *inp = red->src[0];
    Op op = red->arg && red->arg->kind == ARG_OP ? red->arg->v.op : OP_NOOP;
    if (op != OP_ADD && op != OP_MUL && op != OP_MAX) {
        rewrite_fail(m, "REDUCE %%%u: arg must be Ops.ADD, Ops.MUL or Ops.MAX", red->id);
        return NULL;
    }
    enum { MAX_PARTS = 1024 };
    const UOp **lst = malloc((MAX_PARTS + 1) * sizeof *lst);
    if (!lst) { rewrite_fail(m, "out of memory"); return NULL; }
    int n = horizontal_parts(c, inp, red->dtype, lst + 1, MAX_PARTS);
    if (n < 1) {
        free(lst);
        rewrite_fail(m, "REDUCE %%%u: its source (%%%u) cannot be reduced horizontally to the REDUCE's dtype", red->id,
                     inp->id);
        return NULL;
    }
    for (int i = 1; i <= n; i++)
        if (!lst[i] || lst[i]->dtype != red->dtype) {
            free(lst);
            rewrite_fail(m, "REDUCE %%%u: horizontal reduction gives the wrong dtype", red->id);
            return NULL;
        }
    const UOp **parts = lst + 1;
    int nranges = red->nsrc - 1;
    const UOp *acc = NULL, *zero = NULL, *acc_read = NULL, *init_store = NULL;
    if (nranges > 0) {
        /* ranges the value is inside, apart from the reduce ranges and those already ended in it */
        size_t nt = 0;
        const UOp **topo = uop_toposort(inp, &nt);
        NodeSet ended = {0}, input_ranges = {0};
        bool ok = topo != NULL;
        for (size_t i = 0; ok && i < nt; i++)
            if (uop_op(topo[i]) == OP_END) ok = ended_ranges(topo[i], &ended);
        for (size_t i = 0; ok && i < nt; i++) {
            const UOp *x = topo[i];
            bool is_reduce_range = false;
            for (int k = 1; k < red->nsrc; k++) is_reduce_range |= red->src[k] == x;
            if (uop_op(x) == OP_RANGE && !is_reduce_range && !nodeset_has(&ended, x)) ok = nodeset_add(&input_ranges, x);
        }
        free((void *)topo);
        nodeset_free(&ended);
        const UOp *identity = reduce_identity(c, op, red->dtype);
        acc = uop_new(c, OP_DEFINE_REG, dt_ptr(red->dtype, 1, ADDR_REG), NULL, 0, arg_int(c, ctx->acc_num));
        zero = uop_const_int(c, DT_INT32, 0);
        const UOp *init_buf = acc;
        if (ok && acc && input_ranges.n) {
            const UOp **s = malloc((size_t)(input_ranges.n + 1) * sizeof *s);
            if (s) {
                s[0] = acc;
                for (int i = 0; i < input_ranges.n; i++) s[i + 1] = input_ranges.items[i];
                init_buf = ub_node(c, OP_AFTER, acc->dtype, s, input_ranges.n + 1, NULL);
                free(s);
            } else ok = false;
        }
        nodeset_free(&input_ranges);
        const UOp *init_idx = ok ? ub_index(c, red->dtype, init_buf, zero, NULL) : NULL;
        const UOp *ss[2] = {init_idx, identity};
        const UOp *init = ub_node(c, OP_STORE, DT_VOID, ss, 2, NULL);
        init_store = init;
        const UOp **as = malloc((size_t)(nranges + 2) * sizeof *as);
        if (!as) { free(lst); rewrite_fail(m, "out of memory"); return NULL; }
        as[0] = acc, as[1] = init;
        for (int k = 0; k < nranges; k++) as[k + 2] = red->src[k + 1];
        const UOp *read = ub_index(c, red->dtype, ub_node(c, OP_AFTER, acc ? acc->dtype : DT_VOID, as, nranges + 2, NULL),
                                   zero, NULL);
        free(as);
        if (!read) {
            free(lst);
            rewrite_fail(m, "REDUCE %%%u: building the accumulator: %s", red->id, uctx_error(c));
            return NULL;
        }
        lst[0] = acc_read = read;
        parts = lst;
        n++;
        ctx->acc_num++;
    }
    const UOp *ret = parts[0];
    for (int i = 1; i < n; i++) ret = uop_binary(c, op, ret, parts[i]);
    free(lst);
    if (ret && nranges > 0) {
        /* the store goes through the same AFTER as the read: when the body
         * folds to a constant (0 * x), the store still comes after the init
         * and inside the reduce ranges */
        const UOp *ss[2] = {acc_read, ret};
        const UOp *st = ub_node(c, OP_STORE, DT_VOID, ss, 2, NULL);
        const UOp **es = malloc((size_t)(nranges + 1) * sizeof *es);
        if (!es) { rewrite_fail(m, "out of memory"); return NULL; }
        es[0] = st;
        for (int k = 0; k < nranges; k++) es[k + 1] = red->src[k + 1];
        const UOp *e = ub_node(c, OP_END, DT_VOID, es, nranges + 1, NULL);
        free(es);
        /* the read after the loop also follows the init: if the update
         * store is later dropped (a body that folds to acc + 0 stores what it
         * loaded), the result is still the initialised accumulator */
        const UOp *as[3] = {acc, e, init_store};
        ret = ub_index(c, red->dtype, ub_node(c, OP_AFTER, acc->dtype, as, init_store ? 3 : 2, NULL), zero, NULL);
    }
    if (!ret) rewrite_fail(m, "REDUCE %%%u: %s", red->id, uctx_error(c));
    return ret;
}

static const RuleSpec pm_reduce_specs[] = {
    RULE_FN("reduce_to_acc", "(REDUCE)", reduce_to_acc),
};

const RuleTable pm_reduce_rules = RULE_TABLE(pm_reduce_specs);
const StageContext remove_reduce_context = {.name = "ReduceContext", .size = sizeof(ReduceCtx)};
