/* registry.h - every rule set by name, built once, freed in one place.
 *
 * A rule set is registered as a definition: its name (tinygrad v0.12.0's,
 * e.g. "pm_lower_index_dtype", or uopdb's own), the registered sets whose
 * rules come first (tinygrad's `a + b`), and its own rule tables.  Nothing
 * is compiled until a set is asked for; then it is built once and kept
 * until ruleset_registry_free().  A name written as "a + b + c" asks for the
 * concatenation, which is built once too, so a stage row can name what it
 * runs the way tinygrad writes it:
 *
 *     ruleset_get("sym + pm_flatten_range", err, sizeof err)
 *
 * Layers register their own definitions (sym_register_rulesets(),
 * stages_register_rulesets()); lookups and builds are thread-safe. */
#ifndef UOPDB_REGISTRY_H
#define UOPDB_REGISTRY_H
#include <stdbool.h>
#include <stddef.h>
#include "pattern.h"

/* a C array of rule specs */
typedef struct RuleTable {
    const RuleSpec *specs;
    int n;
} RuleTable;
#define RULE_TABLE(a) {(a), (int)(sizeof(a) / sizeof *(a))}
/* an array of RuleTable pointers as a definition's (tables, ntables) */
#define RULE_TABLES(t) (t), (int)(sizeof(t) / sizeof *(t))

typedef struct RuleSetDef {
    const char *name;        /* "pm_add_loads" */
    const char *base;        /* NULL, or sets whose rules come first: "symbolic_simple + commutative" */
    const RuleTable *const *tables; /* this set's own rule tables, after base's (may be NULL) */
    int ntables;
    const char *about;       /* one line: what the set does */
} RuleSetDef;

/* Registers definitions (the array must outlive the registry).  A name
 * registered again by the same definition is ignored; by another one, or a
 * name with '+' in it, is refused: false with a message in err. */
bool ruleset_register(const RuleSetDef *defs, int n, char *err, size_t errlen);

/* The set of that name, or of "a + b + ..." (spaces around '+' optional),
 * built on first use.  NULL with a message (an unknown name, a rule that
 * does not compile) in err. */
const RuleSet *ruleset_get(const char *name, char *err, size_t errlen);

/* the registered definitions, in registration order */
int ruleset_def_count(void);
const RuleSetDef *ruleset_def(int i);
const RuleSetDef *ruleset_def_find(const char *name);

/* Frees every set built so far (they are rebuilt on next use); the
 * definitions stay registered. */
void ruleset_registry_free(void);

#endif
