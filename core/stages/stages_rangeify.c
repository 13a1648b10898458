/* stages_rangeify.c - codegen stages 1-6, 8 and 10: each composes the rule
 * sets tinygrad v0.12.0 runs at that point (codegen/__init__.py) and runs
 * them as one graph_rewrite.  Stage 2 (load collapse, an optimisation) is
 * not written: it passes the root through.  Stage 8 adds
 * pm_reduce_unparented (which v0.12.0 runs only in the scheduler): stage 6
 * cuts a loop where padding starts, and a segment of padding reduces a
 * constant, which must fold before stage 11 makes it an accumulator (an
 * accumulator of `acc + 0` loses its init to the store-of-own-load rule).
 * The composed sets are built on first use and kept until
 * stages_rangeify_free(). */
#include <stdio.h>
#include <stdlib.h>
#include "early.h"
#include "stages.h"
#include "stages_rangeify.h"
#include "../sched/reduce_unparented.h"
#include "../sym/symbolic.h"

typedef RuleSet *(*BuildFn)(char *err, size_t errlen);

enum { SET_EARLY_MOPS, SET_SPLIT_RANGES, SET_INITIAL_SYM, SET_SIMPLIFY_RANGES, SET_SPLIT_STORE, SET_POSTOPT_SYM, SET_LOCAL_BUFFERS,
       SET_COUNT };

static RuleSet *composed[SET_COUNT];

/* a + b, where either is a symbolic set (by name) or built here */
static RuleSet *compose(const char *name, const char *sym_a, BuildFn a, BuildFn b, char *err, size_t errlen) {
    RuleSet *ra = NULL, *rb = NULL, *out = NULL;
    const RuleSet *first;
    if (sym_a) {
        first = sym_ruleset(sym_a);
        if (!first) {
            snprintf(err, errlen, "the symbolic rule set %s did not build", sym_a);
            return NULL;
        }
    } else {
        first = ra = a(err, errlen);
        if (!ra) return NULL;
    }
    rb = b(err, errlen);
    if (rb) {
        out = ruleset_concat(name, first, rb);
        if (!out) snprintf(err, errlen, "out of memory composing %s", name);
    }
    ruleset_free(ra);
    ruleset_free(rb);
    return out;
}

static const RuleSet *get_set(int which, char *err, size_t errlen) {
    if (composed[which]) return composed[which];
    RuleSet *rs = NULL;
    switch (which) {
    case SET_EARLY_MOPS:
        rs = compose("pm_mops+pm_syntactic_sugar", NULL, early_build_mops, early_build_syntactic_sugar, err, errlen);
        break;
    case SET_SPLIT_RANGES:
        rs = compose("pm_split_ranges+pm_flatten_range", NULL, early_build_split_ranges, early_build_flatten_range, err,
                     errlen);
        break;
    case SET_INITIAL_SYM: rs = compose("sym+pm_flatten_range", "sym", NULL, early_build_flatten_range, err, errlen); break;
    case SET_SIMPLIFY_RANGES: rs = early_build_simplify_ranges(err, errlen); break;
    case SET_SPLIT_STORE:
        rs = compose("pm_flatten_range+pm_split_store", NULL, early_build_flatten_range, early_build_split_store, err,
                     errlen);
        break;
    case SET_POSTOPT_SYM: {
        RuleSet *a = compose("sym+pm_move_where_on_load", "sym", NULL, early_build_move_where_on_load, err, errlen);
        RuleSet *b = a ? reduce_unparented_rules(err, errlen) : NULL;
        rs = b ? ruleset_concat("sym+pm_move_where_on_load+pm_reduce_unparented", a, b) : NULL;
        if (b && !rs) snprintf(err, errlen, "out of memory composing stage 8's rules");
        ruleset_free(a);
        ruleset_free(b);
        break;
    }
    case SET_LOCAL_BUFFERS:
        rs = compose("pm_add_buffers_local+rangeify_codegen", NULL, early_build_mops, early_build_rangeify_codegen, err,
                     errlen);
        break;
    }
    composed[which] = rs;
    return rs;
}

void stages_rangeify_free(void) {
    for (int i = 0; i < SET_COUNT; i++) {
        ruleset_free(composed[i]);
        composed[i] = NULL;
    }
    early_range_opts_free();
}

static const UOp *run_set(StageCtx *sc, const UOp *root, int which, bool bottom_up, const char *pass, void *user) {
    char err[300] = "";
    const RuleSet *rs = get_set(which, err, sizeof err);
    if (!rs) return stage_fail(sc, "%s: %s", pass, err);
    return stage_rewrite(sc, root, rs, bottom_up, pass, user);
}

const UOp *stage_early_movement_ops(StageCtx *sc, const UOp *root) {
    return run_set(sc, root, SET_EARLY_MOPS, true, "early movement ops", NULL);
}

const UOp *stage_load_collapse(StageCtx *sc, const UOp *root) { (void)sc; return root; }

const UOp *stage_split_ranges(StageCtx *sc, const UOp *root) {
    SplitRangesCtx ctx = {0};
    return run_set(sc, root, SET_SPLIT_RANGES, false, "split ranges", &ctx);
}

const UOp *stage_initial_symbolic(StageCtx *sc, const UOp *root) {
    return run_set(sc, root, SET_INITIAL_SYM, false, "initial symbolic", NULL);
}

const UOp *stage_simplify_ranges(StageCtx *sc, const UOp *root) {
    return run_set(sc, root, SET_SIMPLIFY_RANGES, false, "simplify ranges", NULL);
}

/* the target is the CPU, where tinygrad v0.12.0 cuts store ranges */
const UOp *stage_split_store(StageCtx *sc, const UOp *root) {
    return run_set(sc, root, SET_SPLIT_STORE, false, "cut store ranges", NULL);
}

const UOp *stage_postopt_symbolic(StageCtx *sc, const UOp *root) {
    return run_set(sc, root, SET_POSTOPT_SYM, false, "postopt symbolic", NULL);
}

const UOp *stage_add_local_buffers(StageCtx *sc, const UOp *root) {
    size_t n;
    const UOp **topo = uop_toposort(root, &n);
    if (!topo) return stage_fail(sc, "out of memory");
    for (size_t i = 0; i < n; i++)
        if (uop_op(topo[i]) == OP_BUFFERIZE) {
            unsigned id = topo[i]->id;
            free(topo);
            return stage_fail(sc, "BUFFERIZE %%%u: local buffers (made by GROUP opts) are not lowered", id);
        }
    free(topo);
    return run_set(sc, root, SET_LOCAL_BUFFERS, false, "add local buffers", NULL);
}
