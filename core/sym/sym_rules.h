/* sym_rules.h - the rule tables that make up the symbolic rule sets, one
 * table per family, assembled into named sets by symbolic.c. */
#ifndef UOPDB_SYM_RULES_H
#define UOPDB_SYM_RULES_H
#include "../rewrite/pattern.h"

typedef struct SymRuleTable {
    const RuleSpec *specs;
    int n;
} SymRuleTable;

extern const SymRuleTable sym_propagate_invalid_rules; /* symbolic_fold.c */
extern const SymRuleTable sym_simple_rules;            /* symbolic_fold.c */
extern const SymRuleTable sym_commutative_rules;       /* symbolic_fold.c */
extern const SymRuleTable sym_symbolic_rules;          /* symbolic_combine.c */
extern const SymRuleTable sym_divmod_rules;            /* divmod.c */
extern const SymRuleTable sym_valid_rules;             /* symbolic_valid.c */
extern const SymRuleTable sym_sym_rules;               /* symbolic_combine.c */
extern const SymRuleTable sym_memory_rules;            /* sym_memory.c */

#endif
