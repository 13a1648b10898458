/* diff.h - differences between two graphs of one context.
 *
 * The two graphs are matched node to node: the same node (same pointer)
 * first, then by structure (same op, dtype, arg and tag, sources matched
 * pairwise), then from matched users down to their sources of the same
 * op, dtype, arg and tag (a node whose sources changed).  A matched pair
 * whose own fields are equal and whose sources are matched to each other
 * is unchanged, even when a rewrite below gave it a new id; only the rest
 * shows as removed and added.  See diff.c for the details. */
#ifndef UOPDB_DIFF_H
#define UOPDB_DIFF_H
#include <stdbool.h>
#include "../core/ir/uop.h"
#include "../core/util/strbuf.h"

typedef struct DiffOpts {
    int context;          /* unchanged lines around each change: 0 means the default (3), a negative value none */
    bool color;           /* ANSI colours: removed red, added green, hunk headers cyan */
    bool side;            /* two columns, a left and b right, a marker between (' ', '|', '<', '>') as diff -y */
    int width;            /* side by side: the total width in columns; 0 means 100, at least 10 */
    const char *label_a, *label_b;
} DiffOpts;

/* added/removed: the lines shown as + and - (a changed node counts once in
 * each); kept: nodes unchanged, of which renamed have another id in b. */
typedef struct DiffStats { size_t added, removed, kept, renamed; } DiffStats;

/* The diff of the two graphs in b's listing order, a's removed nodes near
 * where they were; nothing when the graphs are the same.  Returns the counts. */
DiffStats uop_diff_text(StrBuf *sb, const UOp *a, const UOp *b, const DiffOpts *opts);
/* One DOT graph of both: added nodes green, removed red, kept grey. */
void uop_diff_dot(StrBuf *sb, const UOp *a, const UOp *b);

#endif
