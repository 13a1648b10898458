/* rule_why.h - why a rule does or does not rewrite a node of a kernel, or
 * what each rule of a stage that could match the node says of it.
 * The rule is tried on the node inside the stage that runs it, where that
 * stage's pass stands (after the rewrites the current point has made, at its
 * input or at its end), with the context the stage gives its rules: the
 * pattern's match is explained where it fails, a match is handed to the
 * rule as the engine hands it, and what the stage itself did to the node
 * (its rewrites of it, by which rules) is read from the stage's trace. */
#ifndef UOPDB_RULE_WHY_H
#define UOPDB_RULE_WHY_H
#include <stdbool.h>
#include <stddef.h>
#include "pipeline.h"

/* one rewrite of the node by its stage */
typedef struct WhyRewrite {
    size_t rewrite;          /* its number in the stage, from 1 */
    const char *rule, *file; /* owned by the stage's trace */
    int line;
    const UOp *after;
    int index;               /* that rule's place in the stage's set, from 1 (0: not found) */
} WhyRewrite;

/* one rule of the stage's set tried on the node */
typedef struct WhyRule {
    int index;               /* its place in the set, from 1 */
    Rule *rule;              /* valid while the stage's rule sets are */
    RuleExplain ex;
} WhyRule;

typedef struct RuleWhy {
    const UOp *node;
    int stage;               /* the stage whose rules were tried */
    long rewrite;            /* where: after this many of its rewrites; 0 its input, -1 its end */
    size_t of;               /* the stage's rewrites */
    WhyRule *rules;          /* the rules tried, in set order */
    int nrules;
    int set_size;            /* rules in the stage's set */
    size_t fired;            /* rewrites by a rule of the name asked for in the whole stage */
    WhyRewrite *done;        /* the stage's rewrites of the node, in order */
    int ndone;
    int in_input, in_output; /* the node is in the stage's input / output graph */
    const char *failed;      /* the stage failed (no output; done and of are the rewrites
                              * it made before): why, owned by the pipeline; else NULL */
} RuleWhy;

/* Tries the rule called `rule` on node for the kernel at point (at_stage,
 * at_rewrite; at_rewrite -1 for the whole stage): every rule of that name in
 * the stage's set.  With rule NULL, every rule of the set whose pattern can
 * match the node's op, in set order.  stage 0 picks the stage: the current
 * one when it runs the rule (with rule NULL: when it is a rule pass), else
 * the next that does, else the last before; the rules are tried where the
 * current point is in that stage, else at its input (a stage ahead) or its
 * end (a stage behind).  The node must be in the graph there.  False with a
 * one-line err (no such rule, the node is not there, a stage fails,
 * Ctrl-C).  Free with rule_why_free (also after false). */
bool rule_why(KernelPipeline *kp, int at_stage, long at_rewrite, const char *rule, const UOp *node, int stage,
              RuleWhy *out, char *err, size_t errlen);
void rule_why_free(RuleWhy *w);

/* Whether some stage of the kernel runs a rule of that name (its rows' rule
 * sets and the sets inserted into it), and the name of a rule they run that
 * is closest to it (an edit distance under 4; NULL when none is), for
 * messages about a name that may be mistyped. */
bool pipeline_runs_rule(const KernelPipeline *kp, const char *name);
const char *pipeline_closest_rule(const KernelPipeline *kp, const char *name);

#endif
