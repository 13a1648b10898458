/* report_graphs.c - the SVG drawings of the HTML report: a DOT text per
 * changed point (viz/dot.c), the neighbourhood of the first STORE for a
 * graph above the size limit, every `dot` run at once, and the SVG cut to
 * what an HTML page inlines (no XML prolog, comments or namespace URIs). */
#include "report_internal.h"
#include "dot.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum { DEFAULT_MAX_NODES = 300, DEFAULT_RADIUS = 3 };

/* nodes a DOT text draws: its statements "  n<id> [label=..." */
static size_t dot_node_count(const char *d) {
    size_t n = 0;
    for (const char *p = d; (p = strstr(p, "\n  n")); p += 4) {
        const char *q = p + 4;
        while (*q >= '0' && *q <= '9') q++;
        if (q > p + 4 && q[0] == ' ' && q[1] == '[') n++;
    }
    return n;
}

/* the first STORE in toposort order (sources first), else NULL */
static const UOp *first_store(const UOp *root) {
    size_t n;
    const UOp **order = uop_toposort(root, &n);
    const UOp *found = NULL;
    for (size_t i = 0; order && i < n && !found; i++)
        if (uop_op(order[i]) == OP_STORE) found = order[i];
    free(order);
    return found;
}

/* the DOT text of g (whole, or the focus's neighbourhood when too large);
 * malloc'd, NULL when out of memory */
static char *graph_dot(ReportGraph *g, const char *title, size_t max_nodes, int radius) {
    StrBuf sb;
    sb_init(&sb);
    DotOpts o = {.title = title};
    if (g->nodes <= max_nodes) {
        uop_dot(&sb, g->root, &o);
        g->shown = dot_node_count(sb_str(&sb));
        return sb.oom ? (sb_free(&sb), NULL) : sb_take(&sb);
    }
    const UOp *focus = first_store(g->root);
    if (!focus) focus = g->root;
    /* a LINEAR root uses every instruction: drawn from it, any neighbourhood
     * is the whole program, so the drawing starts at the focus */
    const UOp *from = uop_op(g->root) == OP_LINEAR ? focus : g->root;
    g->focus = focus;
    for (int r = radius; r >= 1; r--) {
        sb_clear(&sb);
        o.focus = focus, o.radius = r;
        uop_dot(&sb, from, &o);
        g->radius = r;
        g->shown = dot_node_count(sb_str(&sb));
        if (g->shown <= max_nodes) break;
    }
    return sb.oom ? (sb_free(&sb), NULL) : sb_take(&sb);
}

/* dot's SVG as an HTML page inlines it: from "<svg" on, comments and
 * xmlns attributes dropped; NULL when it does not look like dot's SVG or
 * holds something that would end the script element it travels in */
static char *clean_svg(const char *svg) {
    const char *start = strstr(svg, "<svg");
    if (!start) return NULL;
    StrBuf sb;
    sb_init(&sb);
    const char *p = start;
    while (*p) {
        if (!strncmp(p, "<!--", 4)) {
            const char *end = strstr(p + 4, "-->");
            if (!end) break;
            p = end + 3;
            if (*p == '\n') p++;
        } else if (!strncmp(p, " xmlns", 6)) {
            const char *q = strchr(p, '"');
            const char *e = q ? strchr(q + 1, '"') : NULL;
            if (!e) break;
            p = e + 1;
        } else {
            const char *next = p + 1;
            while (*next && *next != '<' && *next != ' ') next++;
            sb_putn(&sb, p, (size_t)(next - p));
            p = next;
        }
    }
    char *out = sb_take(&sb);
    if (!out) return NULL;
    for (const char *q = out; *q; q++)
        if ((*q == '<' && (!strncasecmp(q, "</script", 8) || !strncmp(q, "<!--", 4)))) {
            free(out);
            return NULL;
        }
    return out;
}

const ReportGraph *report_graph_find(const ReportGraph *g, size_t n, int kernel, int point) {
    for (size_t i = 0; i < n; i++)
        if (g[i].kernel == kernel && g[i].point == point) return &g[i];
    return NULL;
}

void report_graphs_free(ReportGraph *g, size_t n) {
    for (size_t i = 0; g && i < n; i++) free(g[i].svg);
    free(g);
}

ReportGraph *report_graphs_make(const ReportProgram *p, const ReportOpts *o, size_t *n, bool *dot_missing) {
    *n = 0;
    *dot_missing = false;
    size_t max_nodes = o && o->max_graph_nodes ? o->max_graph_nodes : DEFAULT_MAX_NODES;
    int radius = o && o->graph_radius > 0 ? o->graph_radius : DEFAULT_RADIUS;
    size_t cap = 0;
    for (int i = 0; i < p->s->nkernels; i++) {
        cap++;
        for (int s = 1; s <= STAGE_COUNT; s++) cap += p->kernels[i].stages[s].ran && p->kernels[i].stages[s].changed;
    }
    ReportGraph *g = calloc(cap ? cap : 1, sizeof *g);
    DotSvgJob *jobs = calloc(cap ? cap : 1, sizeof *jobs);
    if (!g || !jobs) {
        free(g);
        free(jobs);
        return NULL;
    }
    for (int i = 0; i < p->s->nkernels; i++) {
        const ReportKernel *k = &p->kernels[i];
        for (int s = 0; s <= STAGE_COUNT; s++) {
            const UOp *root = s == 0 ? k->ast : k->stages[s].ran && k->stages[s].changed ? k->stages[s].root : NULL;
            if (!root) continue;
            ReportGraph *r = &g[*n];
            r->kernel = i, r->point = s, r->root = root, r->nodes = uop_graph_size(root);
            char title[160];
            const Stage *st = stage_get(s);
            snprintf(title, sizeof title, "%s %s %d (%s)", k->name, s ? "after stage" : "at point", s,
                     st ? st->name : "as scheduled");
            jobs[*n].dot_text = graph_dot(r, title, max_nodes, radius);
            (*n)++;
        }
    }
    bool ok = dot_render_svg_batch(jobs, *n, 0);
    *dot_missing = !ok;
    for (size_t i = 0; i < *n; i++) {
        if (jobs[i].svg) {
            g[i].svg = clean_svg(jobs[i].svg);
            if (!g[i].svg) snprintf(g[i].err, sizeof g[i].err, "dot's SVG could not be embedded");
        } else {
            snprintf(g[i].err, sizeof g[i].err, "%s", jobs[i].dot_text ? jobs[i].err : "out of memory");
        }
        free(jobs[i].svg);
        free((char *)jobs[i].dot_text);
    }
    free(jobs);
    return g;
}
