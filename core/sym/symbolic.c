/* symbolic.c - tinygrad v0.12.0's symbolic rule sets, registered by name,
 * and uop_simplify to run one of them:
 *   propagate_invalid
 *   symbolic_simple = propagate_invalid + simple folding + POW folding
 *   commutative     = constants last, operands in a canonical order
 *   symbolic        = symbolic_simple + commutative + combining/lt/where/cast
 *                     folding, AFTER and long-math rules, div/mod, gep_pushing
 *   sym             = symbolic + valid simplification + phase-3 rules + a
 *                     POW left as exp2/log2 (xpow) + load/store folding
 *   gep_pushing     = GEPs pushed to what they select (also inside symbolic)
 *   pm_simplify_valid, pm_drop_and_clauses: what the scheduler adds to
 *                     symbolic for index expressions (valid simplification,
 *                     gate clauses on no range of the index dropped) */
#include "symbolic.h"
#include <pthread.h>
#include <stdio.h>
#include "../rewrite/rewrite.h"
#include "sym_rules.h"

static const RuleTable *const invalid_tables[] = {&sym_propagate_invalid_rules};
static const RuleTable *const simple_tables[] = {&sym_simple_rules, &sym_pow_rules, &sym_float_simple_rules,
                                                 &sym_narrow_simple_rules};
static const RuleTable *const commutative_tables[] = {&sym_commutative_rules};
static const RuleTable *const gep_tables[] = {&gep_pushing_rules};
static const RuleTable *const symbolic_tables[] = {&sym_symbolic_rules, &sym_float_symbolic_rules,
                                                   &sym_narrow_symbolic_rules, &sym_after_long_rules,
                                                   &sym_divmod_rules, &gep_pushing_rules};
static const RuleTable *const sym_tables[] = {&sym_valid_rules, &sym_vector_rules, &sym_sym_rules,
                                              &sym_pow_decompose_rules, &sym_memory_rules, &sym_float_sym_rules,
                                              &sym_reduce_rules};
static const RuleTable *const valid_tables[] = {&sym_valid_rules};
static const RuleTable *const drop_and_tables[] = {&sym_drop_and_clauses_rules};

static const RuleSetDef SYM_SETS[] = {
    {"propagate_invalid", NULL, RULE_TABLES(invalid_tables),
     "an Invalid index absorbs the arithmetic around it"},
    {"symbolic_simple", "propagate_invalid", RULE_TABLES(simple_tables),
     "identities and constant folding (wrapping), bool and cast folding, (x//c)*c + x%c, x ** const as MULs"},
    {"commutative", NULL, RULE_TABLES(commutative_tables), "operands of commutative ops in a canonical order"},
    {"gep_pushing", NULL, RULE_TABLES(gep_tables),
     "a GEP moves down to what it selects: lanes of VECTORIZE, constants and ALUs; CAT becomes VECTORIZE"},
    {"symbolic", "symbolic_simple + commutative", RULE_TABLES(symbolic_tables),
     "like terms combined, comparisons folded by bounds, div/mod folding, int64 math in int32, AFTER cleaned"},
    {"sym", "symbolic", RULE_TABLES(sym_tables),
     "symbolic plus valid-based simplification, phase-3 rules, POW as exp2/log2 and load/store folding"},
    {"pm_simplify_valid", NULL, RULE_TABLES(valid_tables),
     "a valid's clauses simplified given each other; an index simplified given its gate"},
    {"pm_drop_and_clauses", NULL, RULE_TABLES(drop_and_tables),
     "clauses of an index gate that use none of the index's ranges are dropped"},
};

static void register_sets(void) {
    char err[256];
    if (!ruleset_register(SYM_SETS, (int)(sizeof SYM_SETS / sizeof *SYM_SETS), err, sizeof err))
        fprintf(stderr, "uopdb: %s\n", err);
}

void sym_register_rulesets(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, register_sets);
}

const RuleSet *sym_ruleset(const char *name) {
    sym_register_rulesets();
    return name ? ruleset_get(name, NULL, 0) : NULL;
}

const UOp *uop_simplify(UCtx *c, const UOp *u, const char *set, Trace *trace) {
    if (!u) { uctx_set_error(c, "simplify: no expression"); return NULL; }
    const char *name = set ? set : "sym";
    char err[300];
    sym_register_rulesets();
    const RuleSet *rs = ruleset_get(name, err, sizeof err);
    if (!rs) {
        uctx_set_error(c, "simplify: %s", err);
        return NULL;
    }
    RewriteOpts opts = {.trace = trace, .name = name};
    return graph_rewrite(c, u, rs, &opts);
}
