/* vector_rules.c - placeholder: an empty gep_pushing set until written. */
#include "vector_rules.h"
#include <stddef.h>
static RuleSet *gep_pushing;
const RuleSet *stage_rules_gep_pushing(void) {
    if (!gep_pushing) gep_pushing = ruleset_new("gep_pushing");
    return gep_pushing;
}
void vector_rules_free(void) { if (gep_pushing) ruleset_free(gep_pushing); gep_pushing = NULL; }
