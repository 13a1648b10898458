/* symbolic.c - assembles the symbolic rule tables into tinygrad's named
 * sets and runs them:
 *   propagate_invalid
 *   symbolic_simple = propagate_invalid + simple folding
 *   symbolic        = symbolic_simple + operand order + combining/lt/where/... + div/mod
 *   sym             = symbolic + valid simplification + phase-3 rules + load/store folding */
#include "symbolic.h"
#include <stdio.h>
#include <string.h>
#include "../rewrite/rewrite.h"
#include "sym_rules.h"

static const char *const set_names[] = {"propagate_invalid", "symbolic_simple", "symbolic", "sym", NULL};
enum { SET_COUNT = 4 };
static RuleSet *sets[SET_COUNT];
static bool built, build_failed;

static bool add_table(RuleSet *rs, const SymRuleTable *t) {
    for (int i = 0; i < t->n; i++) {
        char err[256];
        Rule *r = rule_new(&t->specs[i], err, sizeof err);
        if (!r) {
            fprintf(stderr, "uopdb: symbolic rule %s does not compile: %s\n", t->specs[i].name, err);
            return false;
        }
        bool ok = ruleset_add(rs, r);
        rule_unref(r);
        if (!ok) return false;
    }
    return true;
}

static RuleSet *make_set(const char *name, const SymRuleTable *const *tables, int n) {
    RuleSet *rs = ruleset_new(name);
    for (int i = 0; rs && i < n; i++)
        if (!add_table(rs, tables[i])) { ruleset_free(rs); return NULL; }
    return rs;
}

static void build_sets(void) {
    built = true;
    const SymRuleTable *inv[] = {&sym_propagate_invalid_rules};
    const SymRuleTable *simple[] = {&sym_propagate_invalid_rules, &sym_simple_rules};
    const SymRuleTable *symbolic[] = {&sym_propagate_invalid_rules, &sym_simple_rules, &sym_commutative_rules,
                                      &sym_symbolic_rules, &sym_divmod_rules};
    const SymRuleTable *sym[] = {&sym_propagate_invalid_rules, &sym_simple_rules, &sym_commutative_rules,
                                 &sym_symbolic_rules, &sym_divmod_rules, &sym_valid_rules, &sym_sym_rules, &sym_memory_rules};
    sets[0] = make_set("propagate_invalid", inv, 1);
    sets[1] = make_set("symbolic_simple", simple, 2);
    sets[2] = make_set("symbolic", symbolic, 5);
    sets[3] = make_set("sym", sym, 8);
    for (int i = 0; i < SET_COUNT; i++) build_failed |= !sets[i];
}

const RuleSet *sym_ruleset(const char *name) {
    if (!name) return NULL;
    if (!built) build_sets();
    for (int i = 0; i < SET_COUNT; i++)
        if (strcmp(name, set_names[i]) == 0) return sets[i];
    return NULL;
}

const char *const *sym_ruleset_names(void) { return set_names; }

const UOp *uop_simplify(UCtx *c, const UOp *u, const char *set, Trace *trace) {
    if (!u) { uctx_set_error(c, "simplify: no expression"); return NULL; }
    const char *name = set ? set : "sym";
    const RuleSet *rs = sym_ruleset(name);
    if (!rs) {
        uctx_set_error(c, "simplify: unknown rule set '%s' (known: propagate_invalid, symbolic_simple, symbolic, sym)", name);
        return NULL;
    }
    RewriteOpts opts = {.trace = trace, .name = name};
    return graph_rewrite(c, u, rs, &opts);
}

void sym_rulesets_free(void) {
    for (int i = 0; i < SET_COUNT; i++) { ruleset_free(sets[i]); sets[i] = NULL; }
    built = build_failed = false;
}
