/* rewrite.h - graph_rewrite and line_rewrite.
 *
 * graph_rewrite follows tinygrad's algorithm: an explicit stack, each node's
 * sources are rewritten first (or, with bottom_up, the node itself is first
 * rewritten to a fixed point before its sources are visited), results are
 * rewritten again until nothing matches, one memo per call.  A rewrite chain
 * longer than max_steps becomes an error that names the rules that cycle. */
#ifndef UOPDB_REWRITE_H
#define UOPDB_REWRITE_H
#include <stdbool.h>
#include "pattern.h"
#include "trace.h"

/* Where a running rewrite stands, handed to RewriteOpts.progress every
 * REWRITE_PROGRESS_EVERY entries of the walk (where Ctrl-C is polled). */
#define REWRITE_PROGRESS_EVERY 4096
typedef struct RewriteProgress {
    const char *pass;    /* the pass name */
    size_t visits;       /* nodes visited so far (each node once, and each node made) */
    size_t rewrites;     /* rules that fired so far */
    size_t nodes_made;   /* node ids handed out since the pass began */
    double elapsed_s;
} RewriteProgress;

typedef struct RewriteOpts {
    bool bottom_up;
    const char *name;     /* pass name for the trace; defaults to the rule set's name */
    Trace *trace;         /* NULL: no trace */
    bool timing;          /* measure per-rule and per-rewrite time */
    size_t max_rewrites;  /* 0: default (100000 per node chain, 10M in all) */
    size_t stop_after;    /* 0: no limit; else stop after this many rewrites (for stepping by rewrite) */
    void *user;           /* passed to rewrite functions as Match.user */
    /* NULL: none; else called as above (it decides itself whether to show
     * anything) */
    void (*progress)(const RewriteProgress *p, void *ud);
    void *progress_ud;
} RewriteOpts;

/* Frees the per-node records this thread keeps between rewrites (a
 * context's compaction calls it, so records of freed ids do not stay). */
void rewrite_release_buffers(void);

/* Returns the new root, or NULL with the reason in uctx_error(c) (a rule
 * loop, a failing rewrite function, out of memory). */
const UOp *graph_rewrite(UCtx *c, const UOp *root, const RuleSet *rs, const RewriteOpts *opts);

/* Rewrites a linear instruction list (tinygrad's line_rewrite).  The list
 * must be toposorted.  Each instruction, with its sources replaced by what
 * earlier instructions became, is offered to the rules once.  A rule returns
 * either one node (it replaces the instruction) or a LINEAR node whose
 * sources are the instructions to emit in its place and whose arg (an int)
 * is the index of the one that later instructions refer to.  Returns a
 * malloc'd list in *out (length *nout), false with uctx_error on failure. */
bool line_rewrite(UCtx *c, const UOp *const *lst, size_t n, const RuleSet *rs, const RewriteOpts *opts,
                  const UOp ***out, size_t *nout);

#endif
