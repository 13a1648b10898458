/* sym_rules.h - the rule tables that make up the symbolic rule sets, one
 * table per family, assembled into named sets by symbolic.c. */
#ifndef UOPDB_SYM_RULES_H
#define UOPDB_SYM_RULES_H
#include "../rewrite/registry.h"


extern const RuleTable sym_propagate_invalid_rules; /* symbolic_fold.c */
extern const RuleTable sym_simple_rules;            /* symbolic_fold.c */
extern const RuleTable sym_pow_rules;               /* symbolic_pow.c */
extern const RuleTable sym_pow_decompose_rules;     /* symbolic_pow.c (sym only) */
extern const RuleTable sym_commutative_rules;       /* symbolic_fold.c */
extern const RuleTable sym_symbolic_rules;          /* symbolic_combine.c */
extern const RuleTable sym_divmod_rules;            /* divmod.c */
extern const RuleTable sym_valid_rules;             /* symbolic_valid.c */
extern const RuleTable sym_drop_and_clauses_rules;  /* symbolic_valid.c */
extern const RuleTable sym_sym_rules;               /* symbolic_combine.c */
extern const RuleTable sym_memory_rules;            /* sym_memory.c */
extern const RuleTable sym_after_long_rules;        /* symbolic_late.c */
extern const RuleTable gep_pushing_rules;           /* vector_rules.c */
extern const RuleTable sym_vector_rules;            /* vector_rules.c */
extern const RuleTable sym_float_simple_rules;      /* symbolic_float.c */
extern const RuleTable sym_float_symbolic_rules;    /* symbolic_float.c */
extern const RuleTable sym_float_sym_rules;         /* symbolic_float.c */
extern const RuleTable sym_narrow_simple_rules;     /* symbolic_narrow.c */
extern const RuleTable sym_narrow_symbolic_rules;   /* symbolic_narrow.c */
extern const RuleTable sym_reduce_rules;            /* symbolic_reduce.c */

#endif
