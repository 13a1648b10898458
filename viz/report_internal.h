/* report_internal.h - what the files of the HTML report share: the graphs
 * it draws (report_graphs.c) for report_html.c. */
#ifndef UOPDB_REPORT_INTERNAL_H
#define UOPDB_REPORT_INTERNAL_H
#include "report.h"

/* One drawn point of one kernel: point 0 and each stage that changed the
 * graph (an unchanged stage shows the drawing of the point it equals). */
typedef struct ReportGraph {
    int kernel, point;
    const UOp *root;
    size_t nodes;         /* nodes of the whole graph */
    const UOp *focus;     /* NULL: the whole graph is drawn; else its neighbourhood */
    int radius;           /* edges around focus */
    size_t shown;         /* nodes drawn */
    char *svg;            /* ready to inline (no prolog, comments or namespaces); NULL: err says why */
    char err[256];
} ReportGraph;

/* The graphs of every kernel's changed points, drawn by `dot` in parallel;
 * *n of them (NULL when none or out of memory).  *dot_missing when the
 * dot program is not installed (every err says so then). */
ReportGraph *report_graphs_make(const ReportProgram *p, const ReportOpts *o, size_t *n, bool *dot_missing);
void report_graphs_free(ReportGraph *g, size_t n);
/* the graph of (kernel, point), or NULL */
const ReportGraph *report_graph_find(const ReportGraph *g, size_t n, int kernel, int point);

#endif
