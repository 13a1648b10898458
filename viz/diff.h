/* diff.h - differences between two graphs of one context.  Because nodes
 * keep their ids, a node a rewrite left alone has the same listing line on
 * both sides, so a diff shows only what changed. */
#ifndef UOPDB_DIFF_H
#define UOPDB_DIFF_H
#include <stdbool.h>
#include "../core/ir/uop.h"
#include "../core/util/strbuf.h"

typedef struct DiffOpts {
    int context;          /* unchanged lines around each change: 0 means the default (3), a negative value none */
    bool color;           /* ANSI colours */
    const char *label_a, *label_b;
} DiffOpts;

typedef struct DiffStats { size_t added, removed, kept; } DiffStats;

/* Unified diff of the two listings; returns the counts. */
DiffStats uop_diff_text(StrBuf *sb, const UOp *a, const UOp *b, const DiffOpts *opts);
/* One DOT graph of both: added nodes green, removed red, kept grey. */
void uop_diff_dot(StrBuf *sb, const UOp *a, const UOp *b);

#endif
