/* sym_check.h - the random-expression checker for the symbolic engine:
 * random integer expressions over variables with random bounds are
 * simplified and evaluated before and after at many points inside the
 * bounds.  A different value, a bound that does not contain an evaluated
 * value, a failed rewrite, or (when strict) a result with more operations
 * (nodes other than constants and variables) than its input is a failure,
 * reported with a shrunk (minimal) reproducer.  Growth is counted but not a
 * failure by default: tinygrad's canonical forms grow some results, e.g.
 * a//-3 -> (a//3)*-1 and (a+7)//3 -> (a+1)//3+2. */
#ifndef UOPDB_SYM_CHECK_H
#define UOPDB_SYM_CHECK_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "../ir/uop.h"
#include "../util/strbuf.h"

/* writes u into sb (viz's uop_render_expr fits; core/sym may not include viz) */
typedef void (*SymRenderFn)(StrBuf *sb, const UOp *u);

typedef struct SymCheckOpts {
    size_t count;        /* expressions to check */
    uint64_t seed;
    int max_depth;       /* 0: default 4 */
    int points;          /* evaluation points per expression; 0: default 24 */
    const char *set;     /* rule set; NULL: "sym" */
    FILE *progress;      /* NULL: quiet; else a line every 10% */
    bool strict_size;    /* a result with more operations than its input is a failure (tinygrad's
                            canonical forms, e.g. x//-3 -> (x//3)*-1, can grow; off: counted only) */
    SymRenderFn render;  /* renders expressions in the report; NULL: "%id OP" */
} SymCheckOpts;

typedef struct SymCheckResult {
    size_t checked;      /* expressions checked */
    size_t skipped;      /* expressions skipped (could overflow the index type) */
    size_t nodes_in, nodes_out; /* total node counts before and after */
    size_t grew;         /* results with more operations than their input */
    double seconds;
    bool failed;
    char *report;        /* malloc'd description of the first failure (shrunk), or NULL */
} SymCheckResult;

/* Runs the checker; false when a failure was found (details in res->report). */
bool sym_check_run(const SymCheckOpts *opts, SymCheckResult *res);
void sym_check_result_free(SymCheckResult *res);

#endif
