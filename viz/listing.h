/* listing.h - the text form of a graph: one node per line, sources first,
 * the root last, each node named by its stable id:
 *
 *   %0 = DEFINE_VAR index arg=("x", 0, 10)
 *   %1 = CONST      index arg=4
 *   %2 = ADD        index (%0, %1)
 *   %3 = RANGE      index (%2) arg=(0, REDUCE)
 *
 * Columns are padded for reading; the parser ignores the padding, blank
 * lines and '#' comments.  parse(print(g)) in the same context returns the
 * very node g (hash-consing); in another context an equal graph. */
#ifndef UOPDB_LISTING_H
#define UOPDB_LISTING_H
#include <stdbool.h>
#include "../core/ir/uop.h"
#include "../core/util/strbuf.h"

typedef struct ListingOpts {
    bool color;          /* ANSI colours by op group, for terminals */
} ListingOpts;

void uop_listing(StrBuf *sb, const UOp *root, const ListingOpts *opts);
/* One line for one node, no newline (for diffs and the REPL). */
void uop_listing_line(StrBuf *sb, const UOp *u, const ListingOpts *opts);
/* Parses a listing; the root is the node on the last line.  On error
 * returns NULL and writes "line L, column C: what" into err. */
const UOp *uop_parse_listing(UCtx *c, const char *text, char *err, size_t errlen);

/* ---- column widths shared by several listings (diffs line up both sides,
 * so an unchanged node prints the same line in either graph) ---- */
typedef struct ListingWidths { int label, op, dtype; } ListingWidths;
/* Widens w to fit the n nodes (start from {0, 0, 0}). */
void uop_listing_widths(const UOp *const *nodes, size_t n, ListingWidths *w);
/* A line padded to w (NULL: no padding, as uop_listing_line). */
void uop_listing_line_padded(StrBuf *sb, const UOp *u, const ListingOpts *opts, const ListingWidths *w);

#endif
