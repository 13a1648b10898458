/* stage_rulesets.c - every rule set the codegen stages run, registered by
 * tinygrad v0.12.0's name (after the symbolic sets and the scheduler's
 * reduce sets), so a stage row, uop.ruleset(name) and the docs
 * name the same thing. */
#include <pthread.h>
#include <stdio.h>
#include "stage_rules.h"
#include "../sched/reduce_collapse.h"
#include "../sym/symbolic.h"

#define ONE(t) static const RuleTable *const t##_list[] = {&t}
ONE(pm_mops_rules);
ONE(reduce_load_collapse_rules);
ONE(pm_load_collapse_rules);
ONE(pm_syntactic_sugar_rules);
ONE(pm_flatten_range_rules);
ONE(pm_split_ranges_rules);
ONE(pm_simplify_ranges_rules);
ONE(pm_split_store_rules);
ONE(pm_move_where_on_load_rules);
ONE(rangeify_codegen_rules);
ONE(pm_add_buffers_local_rules);
ONE(pm_pre_expander_rules);
ONE(pm_group_for_reduce_rules);
ONE(expander_rules);
ONE(pm_reduce_rules);
ONE(pm_add_gpudims_rules);
ONE(pm_add_loads_rules);
ONE(devectorize_rules);
ONE(load_store_folding_rules);
ONE(correct_load_store_rules);
ONE(load_store_indexing_rules);
ONE(pm_lower_index_dtype_rules);
static const RuleTable *const get_late_rewrite_patterns_rules_list[] = {
    &transcendental_rules, &threefry_rules, &max_sqrt_rules, &get_late_rewrite_patterns_rules};
static const RuleTable *const get_late_rewrite_patterns_native_rules_list[] = {
    &threefry_rules, &get_late_rewrite_patterns_native_rules};
ONE(pm_render_rules);
ONE(extra_matcher_rules);
ONE(pm_split_ends_rules);
ONE(pm_add_control_flow_rules);
ONE(pm_linearize_cleanups_rules);
#define SET(name, base, about) {#name, base, RULE_TABLES(name##_rules_list), about}

static const RuleSetDef STAGE_SETS[] = {
    SET(pm_mops, NULL, "movement ops left on an INDEX become index arithmetic"),
    SET(pm_syntactic_sugar, NULL, "an INDEX of a pointer INDEX concatenates them"),
    SET(reduce_load_collapse, NULL, "a sum over r of (idx != r).where(0, e) becomes e at r = idx"),
    {"pm_reduce_load_collapse", "pm_reduce_collapse + reduce_load_collapse", NULL, 0,
     "pm_reduce_collapse + reduce_load_collapse, run on one REDUCE by pm_load_collapse"},
    SET(pm_load_collapse, NULL, "a REDUCE(ADD) over a range that selects one element becomes that element (indexing)"),
    SET(pm_flatten_range, NULL, "the range lists of REDUCE/STORE/END flattened and ordered"),
    SET(pm_split_ranges, NULL, "a RANGE used as r%c splits into outer*c + inner"),
    SET(pm_simplify_ranges, NULL, "adjacent ranges merge when that adds no div/mod"),
    SET(pm_split_store, NULL, "a store loop is cut where a comparison inside it flips (CPU)"),
    SET(pm_move_where_on_load, NULL, "a WHERE guarding a load moves into the load's INDEX"),
    SET(rangeify_codegen, NULL, "CONTIGUOUS/NOOP wrappers dropped, STORE args stripped, local broadcasts loaded"),
    SET(pm_add_buffers_local, "pm_mops", "a local BUFFERIZE (GROUP opts) becomes DEFINE_LOCAL, its STORE, END, BARRIER and AFTER"),
    SET(pm_pre_expander, NULL, "UPCAST/UNROLL ranges become UNROLL; REDUCE and STORE over them fixed"),
    SET(pm_group_for_reduce, NULL, "a REDUCE over GROUP_REDUCE ranges: partial reduce, local BUFFERIZE, final reduce"),
    SET(expander, NULL, "ops over UNROLL expanded lane by lane; CONTRACT into vectors"),
    SET(pm_reduce, NULL, "REDUCE becomes an accumulator register: init, update in the loop, read after"),
    SET(pm_add_gpudims, NULL, "CPU: a THREAD range becomes SPECIAL gidx0, the core_id; GPU: GLOBAL/LOCAL ranges become SPECIAL gidx/lidx"),
    SET(pm_add_loads, NULL, "a value INDEX becomes LOAD of the INDEX as a pointer"),
    SET(devectorize, NULL, "vector ALUs and vector INDEX split into what the target supports"),
    SET(load_store_folding, NULL, "INDEX of a VECTORIZE expanded; contiguous lanes folded into vector loads/stores"),
    SET(correct_load_store, NULL, "vector loads/stores split to the widths the target has"),
    SET(load_store_indexing, NULL, "a true gate dropped from an INDEX"),
    SET(pm_lower_index_dtype, NULL, "index becomes int32 where bounds allow, int64 otherwise (the .cast(index) wrapper design)"),
    SET(get_late_rewrite_patterns, NULL,
        "ops tinygrad's CPU LLVM renderer lacks (it has FDIV, CMPLT): EXP2/LOG2/SIN approximated, THREEFRY, MAX, SQRT"),
    SET(get_late_rewrite_patterns_native, NULL,
        "ops uopdb's LLVM renderer lacks (THREEFRY) and its late rewrites: shifts, MULACC, NEG, SUB, CMPEQ"),
    SET(pm_render, NULL, "vector constants and GEPs explicit; masked loads get an alt value"),
    SET(extra_matcher, NULL, "the renderer's extra patterns: bfloat16 math in float32"),
    SET(pm_split_ends, NULL, "an END of several ranges becomes nested single-range ENDs"),
    SET(pm_add_control_flow, NULL, "a RANGE waits for the END of the sibling loop before it"),
    SET(pm_linearize_cleanups, NULL, "a gated STORE becomes IF / STORE / ENDIF (line rewrite)"),
    {"pm_decomp", "symbolic_simple + get_late_rewrite_patterns", NULL, 0,
     "symbolic_simple + get_late_rewrite_patterns, as stage 18 runs it and stage 19 starts with"},
    {"pm_decomp_native", "symbolic_simple + get_late_rewrite_patterns_native", NULL, 0,
     "pm_decomp for uopdb's renderer's op set: EXP2/LOG2/SIN/SQRT/MAX stay LLVM intrinsics ({transcendentals = \"native\"})"},
};

static void register_sets(void) {
    char err[256];
    sym_register_rulesets();
    sched_register_rulesets();
    if (!ruleset_register(STAGE_SETS, (int)(sizeof STAGE_SETS / sizeof *STAGE_SETS), err, sizeof err))
        fprintf(stderr, "uopdb: %s\n", err);
}

void stages_register_rulesets(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, register_sets);
}
