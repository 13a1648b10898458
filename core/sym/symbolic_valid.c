/* symbolic_valid.c - simplification under a validity condition (tinygrad's
 * pm_simplify_valid): inside where(valid, idx, Invalid), idx only matters
 * where valid holds, so idx is simplified with the bounds valid implies. */
#include "sym_helpers.h"
#include "sym_rules.h"

static const RuleSpec valid_specs[] = {{0}};
const SymRuleTable sym_valid_rules = {valid_specs, 0};
