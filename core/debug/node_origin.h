/* node_origin.h - where a node of a kernel came from.  From a point of the
 * pipeline where the node is in the graph, the walk goes back to the point
 * where it first appears: the last stage whose output lacks it, then, by
 * bisecting that stage's rewrite points, the rewrite after which it is
 * there.  That rewrite made it (the rule's result), made it as part of the
 * result, or rebuilt it: a rewrite below it gave one of its sources a new
 * node, so it is an older node with new sources.  The walk then goes on
 * with the node it came from (the rewritten node, or the older node), back
 * to the kernel as scheduled or to a stage that is not a traced rewrite. */
#ifndef UOPDB_NODE_ORIGIN_H
#define UOPDB_NODE_ORIGIN_H
#include <stdbool.h>
#include <stddef.h>
#include "pipeline.h"

typedef enum OriginHow {
    ORIGIN_SCHEDULED, /* in the kernel as the scheduler made it (point 0) */
    ORIGIN_RULE,      /* the result of a rule that rewrote `from` */
    ORIGIN_PART,      /* made by a rule inside its result `after` (from: the node it rewrote) */
    ORIGIN_REBUILT,   /* `from` with new sources, after a rewrite below it */
    ORIGIN_STAGE      /* made by a stage's own code (rewrite 0), or first there after a
                       * rewrite that explains it neither way (rewrite > 0) */
} OriginHow;

typedef struct OriginStep {
    const UOp *node;     /* the node this step explains */
    OriginHow how;
    int stage;           /* where it first appears: 0 as scheduled, else its stage */
    size_t rewrite;      /* after rewrite `rewrite` (from 1) of the stage; 0: the stage's end */
    size_t of;           /* the stage's rewrites */
    const char *rule;    /* the rewrite's rule and where it is written (owned by the stage's */
    const char *file;    /* trace: valid while the stage is kept); NULL without a rewrite */
    int line;
    const UOp *before, *after; /* the rewrite's nodes; NULL without a rewrite */
    const UOp *from;     /* the node it came from (RULE, PART, REBUILT), else NULL */
} OriginStep;

typedef struct OriginChain {
    OriginStep *steps;   /* the node's own step first, then the node it came from... */
    int n;
    bool truncated;      /* the walk stopped at the step limit with more to go */
    bool lost;           /* the last step's `from` is not in the graph before its
                          * rewrite (a pass that rewrote a node it had just made), so
                          * the walk cannot go on from it */
} OriginChain;

/* The origin of node, which must be in the kernel's graph at point (stage,
 * rewrite; rewrite -1 for the whole stage), in at most max_steps steps.
 * False with a one-line err when the node is not there, a point cannot be
 * computed, memory runs out or Ctrl-C interrupts it.  Free with
 * origin_chain_free (also after false). */
bool node_origin(KernelPipeline *kp, int stage, long rewrite, const UOp *node, int max_steps, OriginChain *out,
                 char *err, size_t errlen);
void origin_chain_free(OriginChain *c);
/* "rule", "part", "rebuilt", "stage", "scheduled" */
const char *origin_how_name(OriginHow how);

#endif
