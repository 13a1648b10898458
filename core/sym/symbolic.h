/* symbolic.h - the symbolic simplifier: tinygrad v0.12.0's rule sets
 * propagate_invalid, symbolic_simple, commutative, symbolic, sym and
 * gep_pushing, registered in the rule-set registry (core/rewrite/registry.h),
 * and uop_simplify to run one of them (or any registered set) over a graph. */
#ifndef UOPDB_SYMBOLIC_H
#define UOPDB_SYMBOLIC_H
#include "../ir/uop.h"
#include "../rewrite/pattern.h"
#include "../rewrite/registry.h"
#include "../rewrite/trace.h"

/* Registers the symbolic sets (once; thread-safe). */
void sym_register_rulesets(void);
/* ruleset_get(name) after registering; NULL for an unknown name */
const RuleSet *sym_ruleset(const char *name);
/* graph_rewrite(u, the set named `set`, "sym" when NULL); NULL + uctx_error
 * on failure (an unknown set is named in the message) */
const UOp *uop_simplify(UCtx *c, const UOp *u, const char *set, Trace *trace);
/* base ** exponent as tinygrad v0.12.0's xpow builds it: exp2(exponent *
 * log2|base|), NaN or a sign for a negative base, 1 for 0 ** 0 (sym's last
 * POW rule, and stage 18's SQRT); NULL + uctx_error on failure */
const UOp *sym_xpow(UCtx *c, const UOp *base, const UOp *exponent);

#endif
