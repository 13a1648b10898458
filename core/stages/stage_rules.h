/* stage_rules.h - the rule tables of the codegen stages, by the name of the
 * tinygrad v0.12.0 rule set each one makes up (stage_rulesets.c registers
 * them), and the rewrite contexts a stage row may name. */
#ifndef UOPDB_STAGE_RULES_H
#define UOPDB_STAGE_RULES_H
#include "../rewrite/registry.h"
#include "stages.h"

/* early_mops.c, early_ranges.c, early_range_opts.c, early_where_load.c, early_codegen.c */
extern const RuleTable pm_mops_rules, pm_syntactic_sugar_rules, pm_flatten_range_rules, pm_split_ranges_rules,
    pm_simplify_ranges_rules, pm_split_store_rules, pm_move_where_on_load_rules, rangeify_codegen_rules,
    pm_add_buffers_local_rules;
/* expander.c */
extern const RuleTable pm_pre_expander_rules, pm_group_for_reduce_rules, expander_rules;
/* remove_reduce.c, gpudims.c */
extern const RuleTable pm_reduce_rules, pm_add_gpudims_rules;
/* stages_late.c, devectorize.c, index_dtype.c */
extern const RuleTable pm_add_loads_rules, devectorize_rules, load_store_folding_rules, correct_load_store_rules,
    load_store_indexing_rules, pm_lower_index_dtype_rules, get_late_rewrite_patterns_rules,
    get_late_rewrite_patterns_native_rules, pm_render_rules, extra_matcher_rules, pm_split_ends_rules;
/* load_collapse.c: stage 2 */
extern const RuleTable reduce_load_collapse_rules, pm_load_collapse_rules;
/* transcendental.c: EXP2/LOG2/SIN approximations, THREEFRY, MAX and SQRT */
extern const RuleTable transcendental_rules, threefry_rules, max_sqrt_rules;
/* linearize.c */
extern const RuleTable pm_add_control_flow_rules, pm_linearize_cleanups_rules;

/* the rewrite contexts (tinygrad's ctx=) of stages 3, 11 and 20 */
extern const StageContext split_ranges_context;  /* early_range_opts.c: SplitRangesCtx */
extern const StageContext remove_reduce_context; /* remove_reduce.c: ReduceContext */
extern const StageContext control_flow_context;  /* linearize.c: CFGContext(sink) */
extern const StageContext gpudims_context;       /* gpudims.c: the renderer (target, NOLOCALS) for stage 12 */
extern const StageContext local_buffer_count_context; /* group_reduce.c: stage 10's DEFINE_LOCAL numbers */

#endif
