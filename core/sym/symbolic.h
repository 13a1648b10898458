/* symbolic.h - the symbolic simplifier: tinygrad v0.12.0's rule sets
 * symbolic_simple, symbolic and sym (plus propagate_invalid), by name, and
 * uop_simplify to run one of them over a graph. */
#ifndef UOPDB_SYMBOLIC_H
#define UOPDB_SYMBOLIC_H
#include "../ir/uop.h"
#include "../rewrite/pattern.h"
#include "../rewrite/trace.h"

/* the rule sets by name: "propagate_invalid", "symbolic_simple", "symbolic",
 * "sym"; built on first use and kept until sym_rulesets_free(); NULL for an
 * unknown name (or if a set failed to build) */
const RuleSet *sym_ruleset(const char *name);
const char *const *sym_ruleset_names(void);   /* NULL-terminated */
/* graph_rewrite(u, sym_ruleset(set ? set : "sym")); NULL + uctx_error on failure */
const UOp *uop_simplify(UCtx *c, const UOp *u, const char *set, Trace *trace);
void sym_rulesets_free(void);

#endif
