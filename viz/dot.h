/* dot.h - Graphviz output.  DOT text is written here; turning it into SVG or
 * PNG shells out to the `dot` program (Graphviz's library leaks, and the
 * program is what users have). */
#ifndef UOPDB_DOT_H
#define UOPDB_DOT_H
#include <stdbool.h>
#include "../core/ir/uop.h"
#include "../core/util/strbuf.h"

typedef struct DotOpts {
    const UOp *focus;     /* cut the graph to the neighbourhood of this node */
    int radius;           /* edges away from focus to keep (default 2) */
    bool keep_consts;     /* draw CONSTs as nodes (default: fold them into their users' labels) */
    const char *title;
} DotOpts;

void uop_dot(StrBuf *sb, const UOp *root, const DotOpts *opts);
/* Runs `dot -T<format>` on dot_text into out_path.  Returns false with a
 * clear message in err (dot not installed, dot failed, bad format). */
bool dot_render(const char *dot_text, const char *format, const char *out_path, char *err, size_t errlen);
/* Whether the dot program can be run. */
bool dot_available(void);

/* ---- SVG text, for pages that embed graphs ---- */
typedef struct DotSvgJob {
    const char *dot_text; /* in */
    char *svg;            /* out: the SVG as dot writes it (malloc'd, the caller frees), or NULL */
    char err[256];        /* out: why svg is NULL */
} DotSvgJob;
/* Runs `dot -Tsvg` on each job's text, `parallel` programs at a time (0:
 * one per core, at most 8), so a page of many graphs costs about the time
 * of its slowest few.  False, with every job's err saying so, when dot is
 * not installed; otherwise true, each job succeeding or failing alone. */
bool dot_render_svg_batch(DotSvgJob *jobs, size_t n, int parallel);

/* ---- lower level, for overlays such as diffs ---- */
/* Fill colour of a node (a DOT colour such as "#a0e8a0"); NULL: by op group. */
typedef const char *(*DotColorFn)(const UOp *u, void *ud);
/* The DOT statements for a set of nodes (sources before users), without the
 * closing brace: edges between nodes of the set only.  color may be NULL. */
void uop_dot_nodes(StrBuf *sb, const UOp *const *nodes, size_t n, const DotOpts *opts, DotColorFn color, void *ud);

#endif
