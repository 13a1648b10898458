/* linearize_point.c - any point from stage 11 on as a linear program (see
 * linearize_point.h). */
#include "linearize_point.h"
#include "../rewrite/registry.h"
#include "../rewrite/rewrite.h"
#include <stdlib.h>

/* whether the graph still has a REDUCE (a point before stage 11) */
static bool has_reduce(const UOp *root, bool *oom) {
    size_t n;
    const UOp **topo = uop_toposort(root, &n);
    *oom = !topo;
    bool found = false;
    for (size_t i = 0; topo && i < n && !found; i++) found = uop_op(topo[i]) == OP_REDUCE;
    free(topo);
    return found;
}

/* an END of other than one range (stage 19 has not split it yet) */
static bool has_unsplit_end(const UOp *root, bool *oom) {
    size_t n;
    const UOp **topo = uop_toposort(root, &n);
    *oom = !topo;
    bool found = false;
    for (size_t i = 0; topo && i < n && !found; i++) {
        if (uop_op(topo[i]) != OP_END) continue;
        int nr = 0;
        for (int k = 1; k < topo[i]->nsrc; k++) nr += uop_op(topo[i]->src[k]) == OP_RANGE;
        found = nr != 1;
    }
    free(topo);
    return found;
}

const UOp *stages_linearize_point(StageCtx *sc, const UOp *root) {
    if (!root) return stage_fail(sc, "linearize: no root");
    if (uop_op(root) == OP_LINEAR) return root;
    if (uop_op(root) != OP_SINK)
        return stage_fail(sc, "linearize: the root %s %%%u is not a SINK", op_name(uop_op(root)), root->id);
    bool oom, reduce = has_reduce(root, &oom);
    if (oom) return stage_fail(sc, "linearize: out of memory");
    /* a point before remove reduce with vectors in it (the expander's output
     * after UPCAST/UNROLL): stages 10 and 11 lower it first; they keep what
     * it computes, right or wrong */
    if (reduce) {
        root = stage_run(sc, 10, root);
        if (root) root = stage_run(sc, 11, root);
        if (!root) return NULL;
    }
    /* the gpu target: workgroups and work items are not loops (a local
     * buffer is written in one and read in another over the same LOCAL
     * range), so stage 12 makes them SPECIAL first; it does nothing to a
     * point that has them already */
    if (sc->target == TARGET_GPU && !(root = stage_run(sc, 12, root))) return NULL;
    if (!has_unsplit_end(root, &oom)) {
        if (oom) return stage_fail(sc, "linearize: out of memory");
        const UOp *r = stage_run(sc, 20, root);
        return r ? stage_run(sc, 21, r) : NULL;
    }
    char why[300];
    stages_register_rulesets();
    const RuleSet *split = ruleset_get("pm_split_ends", why, sizeof why);
    if (!split) return stage_fail(sc, "%s", why);
    RewriteOpts o = {.name = "split ends", .trace = sc->trace, .timing = sc->timing};
    uctx_clear_error(sc->c);
    const UOp *r = graph_rewrite(sc->c, root, split, &o);
    if (!r) return stage_fail(sc, "split ends: %s", uctx_error(sc->c));
    r = stage_run(sc, 20, r);
    return r ? stage_run(sc, 21, r) : NULL;
}
