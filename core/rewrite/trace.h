/* trace.h - what a rewrite did: every successful rewrite as (rule, before,
 * after, time) and every pass as (name, root before, root after, rewrites,
 * time); on request also every node the engine rebuilt with new sources.
 * Stepping, "which rule fired", diffs, breakpoints and k:origin read this. */
#ifndef UOPDB_TRACE_H
#define UOPDB_TRACE_H
#include <stddef.h>
#include <stdint.h>
#include "../ir/uop.h"

typedef struct TraceRewrite {
    const char *rule;     /* rule name (owned by the trace) */
    const char *file;     /* where the rule is written (owned by the trace) */
    int line;
    const UOp *before, *after;
    uint64_t ns;          /* time spent in this rewrite's function/template */
    uint32_t pass;        /* index into Trace.passes */
} TraceRewrite;

typedef struct TracePass {
    const char *name;     /* owned by the trace */
    const char *rules;    /* the rule set the pass ran ("" when none; owned by the trace) */
    const UOp *root_before, *root_after;
    size_t first_rewrite; /* index into Trace.rewrites */
    size_t nrewrites;
    uint64_t ns;
} TracePass;

/* graph_rewrite gave `from` new sources and made `to` (no rule involved) */
typedef struct TraceRebuild {
    const UOp *from, *to;
} TraceRebuild;

typedef struct Trace {
    TraceRewrite *rewrites;
    size_t nrewrites, cap_rewrites;
    TracePass *passes;
    size_t npasses, cap_passes;
    /* the rebuilds, kept only when keep_rebuilds is set (they can be many
     * more than the rewrites: every user of a rewritten node is rebuilt) */
    bool keep_rebuilds;
    TraceRebuild *rebuilds;
    size_t nrebuilds, cap_rebuilds;
    /* interned strings (rule names, files) so entries stay valid after a
     * rule is freed */
    char **strings;
    size_t nstrings, cap_strings;
    /* by the caller's string address: the copy found for it last (a rule
     * passes the same name and file pointers at every rewrite) */
    struct { const char *from, *copy; } recent[32];
    /* the rule whose error stopped the rewrite (NULL: none did), so a
     * caller need not read it back out of the error message */
    const char *error_rule, *error_file;
    int error_line;
} Trace;

void trace_init(Trace *t);
void trace_free(Trace *t);
void trace_clear(Trace *t);
/* used by graph_rewrite; return false when out of memory */
bool trace_begin_pass(Trace *t, const char *name, const char *rules, const UOp *root_before);
void trace_end_pass(Trace *t, const UOp *root_after, uint64_t ns);
/* Marks every node the trace holds, for a compaction (uop.h). */
void trace_mark(const Trace *t, UCtxMarks *m);
bool trace_add_rewrite(Trace *t, const char *rule, const char *file, int line, const UOp *before,
                       const UOp *after, uint64_t ns);
/* records a rebuild when keep_rebuilds is set (true otherwise); false when out of memory */
bool trace_add_rebuild(Trace *t, const UOp *from, const UOp *to);
bool trace_set_error_rule(Trace *t, const char *rule, const char *file, int line);

#endif
