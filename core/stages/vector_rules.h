/* vector_rules.h - rule sets on vectors that several stages share:
 * gep_pushing (GEP through VECTORIZE/VCONST/ALU/CAT, GEP of GEP, identity
 * GEPs), as in tinygrad v0.12.0's symbolic.py.  Built on first use, freed by
 * vector_rules_free(). */
#ifndef UOPDB_VECTOR_RULES_H
#define UOPDB_VECTOR_RULES_H
#include "../rewrite/pattern.h"

const RuleSet *stage_rules_gep_pushing(void);
void vector_rules_free(void);

#endif
