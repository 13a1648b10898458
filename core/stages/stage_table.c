/* stage_table.c - the table of the 22 codegen stages (number, name, phase,
 * tinygrad v0.12.0 rule sets, direction, purpose, status) and the helpers
 * every stage uses to run a rewrite or report a failure. */
#include "stages.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../rewrite/rewrite.h"
#include "../sym/symbolic.h"
#include "stages_late.h"
#include "stages_rangeify.h"
#include "vector_rules.h"

static const Stage STAGES[STAGE_COUNT] = {
    {1, "early movement ops", "rangeify", "pm_mops + pm_syntactic_sugar", true,
     "push movement ops left on INDEX into the index expressions; concatenate nested INDEX",
     STAGE_WRITTEN, NULL, stage_early_movement_ops},
    {2, "load collapse", "rangeify", "pm_load_collapse", false,
     "replace a REDUCE whose value does not need the loop by arithmetic", STAGE_NOT_WRITTEN,
     "an optimisation: the REDUCE stays a loop, which is correct", stage_load_collapse},
    {3, "split ranges", "rangeify", "pm_split_ranges + pm_flatten_range", false,
     "split a RANGE used as r%c into outer*c + inner", STAGE_WRITTEN, NULL, stage_split_ranges},
    {4, "initial symbolic", "rangeify", "sym + pm_flatten_range", false,
     "simplify index arithmetic: constant folding, identities, div/mod folding", STAGE_WRITTEN, NULL,
     stage_initial_symbolic},
    {5, "simplify ranges", "rangeify", "pm_simplify_ranges", false,
     "merge adjacent ranges when that does not add div/mod", STAGE_WRITTEN, NULL, stage_simplify_ranges},
    {6, "split store", "rangeify", "pm_split_store", false,
     "split a store loop at constant comparison points inside the range (CPU only)", STAGE_WRITTEN, NULL,
     stage_split_store},
    {7, "apply opts", "rangeify", "apply_opts", false,
     "apply the opts asked for by hand (UPCAST, UNROLL); no automatic heuristics", STAGE_WRITTEN, NULL,
     stage_apply_opts},
    {8, "post-opt symbolic", "expander", "sym + pm_move_where_on_load + pm_reduce_unparented", false,
     "simplify again after opts; move WHERE guards into the INDEX they guard; drop reduce ranges the value does not use",
     STAGE_WRITTEN, NULL,
     stage_postopt_symbolic},
    {9, "expander", "expander", "sym + pm_pre_expander + pm_group_for_reduce + expander", false,
     "turn UPCAST/UNROLL ranges into UNROLL, expand ops over them, CONTRACT into vectors", STAGE_WRITTEN,
     NULL, stage_expander},
    {10, "add local buffers", "expander", "pm_add_buffers_local + rangeify_codegen", false,
     "local BUFFERIZE to stores; drop CONTIGUOUS/NOOP wrappers", STAGE_PARTIAL,
     "local BUFFERIZE (from GROUP opts, not offered yet) is an error naming the node", stage_add_local_buffers},
    {11, "remove reduce", "devectorizer", "pm_reduce + gep_pushing", false,
     "REDUCE becomes an accumulator register: init, accumulate in the loop, read after", STAGE_WRITTEN,
     NULL, stage_remove_reduce},
    {12, "add GPU dims", "devectorizer", "pm_add_gpudims", false,
     "a THREAD range becomes SPECIAL gidx0, the core_id of a kernel split over cores", STAGE_PARTIAL,
     "CPU: THREAD ranges only; GPU workgroups, local sizes and dimension limits do not apply",
     stage_add_gpudims},
    {13, "add loads", "devectorizer", "pm_add_loads", false,
     "wrap value INDEX in LOAD; INDEX becomes a pointer", STAGE_WRITTEN, NULL, stage_add_loads},
    {14, "devectorize", "devectorizer", "sym + devectorize + load_store_folding + correct_load_store + load_store_indexing",
     false, "split vector ALUs and vector INDEX to what the target supports", STAGE_WRITTEN, NULL,
     stage_devectorize},
    {15, "lower index dtype", "devectorizer", "pm_lower_index_dtype + load_store_indexing", false,
     "index becomes int32 where bounds allow, int64 otherwise; Invalid becomes an INDEX gate", STAGE_WRITTEN,
     NULL, stage_lower_index_dtype},
    {16, "post-index symbolic", "linearizer", "symbolic", false,
     "simplify the concrete integer arithmetic", STAGE_WRITTEN, NULL, stage_post_index_symbolic},
    {17, "pre-matcher", "linearizer", "renderer.pre_matcher", false, "backend patterns before decompositions",
     STAGE_NOT_APPLICABLE, "the LLVM renderer has no pre-matcher", stage_pre_matcher},
    {18, "decompositions", "linearizer", "symbolic_simple + get_late_rewrite_patterns", false,
     "rewrite ops the target lacks into ops it has", STAGE_PARTIAL,
     "THREEFRY and the transcendental approximations are not written (LLVM has EXP2/LOG2/SIN); no fast_idiv",
     stage_decompositions},
    {19, "final rewrite", "linearizer", "pm_decomp + pm_render + extra_matcher + pm_split_ends", false,
     "vector constants explicit, GEPs resolved, multi-range ENDs split", STAGE_WRITTEN, NULL,
     stage_final_rewrite},
    {20, "add control flow", "linearizer", "pm_add_control_flow", true,
     "order sibling loops: a RANGE waits for the END of the loop before it", STAGE_WRITTEN, NULL,
     stage_add_control_flow},
    {21, "linearize", "linearizer", "linearize", false,
     "priority toposort into an instruction list (a LINEAR node)", STAGE_WRITTEN, NULL, stage_linearize},
    {22, "cleanup IF/ENDIF", "linearizer", "pm_linearize_cleanups", false,
     "a gated STORE becomes IF / STORE / ENDIF (line_rewrite)", STAGE_WRITTEN, NULL, stage_cleanup_ifendif},
};

const Stage *stage_get(int n) { return n >= 1 && n <= STAGE_COUNT ? &STAGES[n - 1] : NULL; }

const char *stage_status_name(StageStatus s) {
    switch (s) {
    case STAGE_WRITTEN: return "written";
    case STAGE_PARTIAL: return "partial";
    case STAGE_NOT_APPLICABLE: return "n/a";
    case STAGE_NOT_WRITTEN: return "not written";
    }
    return "?";
}

const char *opt_op_name(OptOp op) { return op == OPT_UPCAST ? "UPCAST" : op == OPT_UNROLL ? "UNROLL" : "THREAD"; }

bool opt_op_from_name(const char *s, OptOp *out) {
    if (!strcmp(s, "UPCAST")) *out = OPT_UPCAST;
    else if (!strcmp(s, "UNROLL")) *out = OPT_UNROLL;
    else if (!strcmp(s, "THREAD")) *out = OPT_THREAD;
    else return false;
    return true;
}

const UOp *stage_fail(StageCtx *sc, const char *fmt, ...) {
    if (sc->err && sc->errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(sc->err, sc->errlen, fmt, ap);
        va_end(ap);
    }
    return NULL;
}

const UOp *stage_rewrite(StageCtx *sc, const UOp *root, const RuleSet *rs, bool bottom_up, const char *pass_name,
                         void *user) {
    RewriteOpts o = {.bottom_up = bottom_up, .name = pass_name, .trace = sc->trace, .timing = sc->timing,
                     .user = user};
    uctx_clear_error(sc->c);
    const UOp *r = graph_rewrite(sc->c, root, rs, &o);
    if (!r) return stage_fail(sc, "%s: %s", pass_name, uctx_error(sc->c));
    return r;
}

const UOp *stages_run_all(UCtx *c, const UOp *ast, const KernelOpt *opts, int nopts, char *err, size_t errlen) {
    StageCtx sc = {.c = c, .opts = opts, .nopts = nopts, .err = err, .errlen = errlen};
    const UOp *u = ast;
    for (int n = 1; n <= STAGE_COUNT && u; n++) {
        const UOp *next = STAGES[n - 1].run(&sc, u);
        if (!next && err && errlen) {
            char inner[512];
            snprintf(inner, sizeof inner, "%s", err);
            snprintf(err, errlen, "stage %d (%s): %s", n, STAGES[n - 1].name, inner);
        }
        u = next;
    }
    return u;
}

void stages_rules_free(void) {
    stages_rangeify_free();
    late_stages_free();
    vector_rules_free();
    gpudims_free();
    sym_rulesets_free();
}
