/* report_html.c - a program's session as one self-contained HTML page: the
 * program (buffers, kernels, scheduler steps), the validation of a run, and
 * per kernel the 22 stages (and point 0) with status, counts and time; per
 * stage its listing, its diff from the point before, the rules that fired
 * and every rewrite, and its graph as SVG (report_graphs.c); then the LLVM
 * IR and the host assembly.  Sections are <details>, closed, so the page
 * opens fast; an SVG travels in a script element and enters the page when
 * its section opens.  Everything that comes from the program is escaped. */
#include "report_internal.h"
#include "diff.h"
#include "listing.h"
#include "render.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_REWRITE_ROWS = 1000 };

static const char *const page_css =
    "*{box-sizing:border-box}"
    "body{margin:0;font:14px/1.45 -apple-system,'Segoe UI',Helvetica,Arial,sans-serif;color:#1d2330;background:#f6f7f9}"
    "nav{position:fixed;top:0;left:0;bottom:0;width:250px;overflow-y:auto;background:#1f2633;color:#cfd6e4;"
    "padding:14px 12px;font-size:13px}"
    "nav h1{font-size:16px;color:#fff;margin:0 0 10px}nav a{color:#cfd6e4;text-decoration:none}"
    "nav a:hover{color:#fff;text-decoration:underline}nav ol{list-style:none;margin:4px 0 10px;padding:0}"
    "nav li{padding:1px 0;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}"
    "nav .legend{color:#8d97aa;font-size:12px;margin-top:14px}nav summary{color:#fff;font-weight:600;cursor:pointer;margin-top:6px}nav .top{display:block;padding:2px 0}"
    "main{margin-left:250px;padding:18px 28px 60px;max-width:1500px}"
    "h2{font-size:20px;margin:26px 0 8px;padding-bottom:4px;border-bottom:2px solid #d8dde6}"
    "h3{font-size:16px;margin:18px 0 6px}"
    "table{border-collapse:collapse;background:#fff;margin:6px 0 12px;font-size:13px}"
    "th,td{border:1px solid #dde2ea;padding:3px 8px;text-align:left;vertical-align:top}"
    "th{background:#eef1f6;font-weight:600}table.stages td:nth-child(2){white-space:nowrap}.badge{white-space:nowrap}td.n{text-align:right;font-variant-numeric:tabular-nums}"
    "tr.same td{color:#8a93a3}"
    "pre{background:#fff;border:1px solid #dde2ea;padding:8px 10px;overflow:auto;max-height:560px;"
    "font:12px/1.4 ui-monospace,'DejaVu Sans Mono',Menlo,Consolas,monospace;margin:6px 0}"
    "details{margin:4px 0}details>summary{cursor:pointer}"
    "details.stage{background:#fff;border:1px solid #dde2ea;border-radius:6px;margin:6px 0;padding:0 10px}"
    "details.stage>summary{padding:7px 0;font-weight:500}details.stage[open]>summary{border-bottom:1px solid #eef1f6}"
    "details.stage>div{padding:6px 0 10px}details details{margin-left:4px}"
    ".num{display:inline-block;min-width:26px;font-weight:700;color:#5b6475}"
    ".badge{display:inline-block;padding:0 7px;border-radius:9px;font-size:12px;font-weight:600;margin:0 4px}"
    ".written{background:#d9f2df;color:#1c6b32}.partial{background:#fdebc8;color:#8a5a00}"
    ".na{background:#e7e9ee;color:#596273}.notwritten{background:#fbd9d9;color:#9b1c1c}"
    ".dot{display:inline-block;width:8px;height:8px;border-radius:4px;margin-right:6px}"
    ".dot.written{background:#3fb35f}.dot.partial{background:#e0a020}.dot.na{background:#98a1b0}"
    ".dot.notwritten{background:#d9534f}.meta{color:#5b6475}.changed{color:#1c5fb8;font-weight:600}"
    ".ok{color:#1c6b32}.bad{color:#b3261e}pre.ok{border-left:4px solid #3fb35f}pre.bad{border-left:4px solid #d9534f}"
    ".note{background:#fff8e6;border:1px solid #f0dfb0;padding:6px 10px;border-radius:4px;margin:6px 0}"
    ".err{background:#fdecea;border:1px solid #f3c2bd;padding:6px 10px;border-radius:4px;margin:6px 0}"
    ".add{color:#116329;background:#e6ffec;display:block}.del{color:#a40e26;background:#ffebe9;display:block}"
    ".hunk{color:#6e3fc2;display:block}.hdr{color:#5b6475;display:block}"
    ".svg{overflow:auto;background:#fff;border:1px solid #dde2ea;max-height:900px}"
    ".svg svg{max-width:100%;height:auto}.svg.full svg{max-width:none}"
    "button{font:12px sans-serif;margin:0 6px 6px 0;padding:2px 8px;cursor:pointer}"
    "header p{margin:4px 0}";

static const char *const page_js =
    "function load(d){var s=d.getAttribute('data-svg');if(!d.open||!s||d.getAttribute('data-done'))return;"
    "var t=document.getElementById(s),b=d.querySelector('.svg');if(t&&b){b.innerHTML=t.textContent;"
    "d.setAttribute('data-done','1');}}"
    "document.addEventListener('toggle',function(e){load(e.target);},true);"
    "document.addEventListener('click',function(e){var b=e.target.closest?e.target.closest('.svg'):null;"
    "if(b)b.classList.toggle('full');});"
    "function all(id,open){var k=document.getElementById(id);if(!k)return;"
    "k.querySelectorAll('details.stage').forEach(function(d){d.open=open;});}"
    "function hash(){var id=decodeURIComponent(location.hash.slice(1));var el=id&&document.getElementById(id);"
    "if(!el)return;for(var p=el;p;p=p.parentElement)if(p.tagName==='DETAILS')p.open=true;el.scrollIntoView();}"
    "window.addEventListener('hashchange',hash);hash();"
    "document.querySelectorAll('details[open][data-svg]').forEach(load);";

#define ESC(sb, s) html_escape((sb), (s), strlen(s))

static const char *status_class(StageStatus s) {
    switch (s) {
    case STAGE_WRITTEN: return "written";
    case STAGE_PARTIAL: return "partial";
    case STAGE_NOT_APPLICABLE: return "na";
    default: return "notwritten";
    }
}

static const char *buffer_kind(SchedBufKind k) {
    return k == SBUF_INPUT ? "input" : k == SBUF_TMP ? "tmp" : "output";
}

/* the root at point n of kernel k (NULL when not run) */
static const UOp *point_root(const ReportKernel *k, int n) {
    if (n == 0) return k->ast;
    return k->stages[n].ran ? k->stages[n].root : NULL;
}

/* the last point at or before n whose graph changed (the one drawn and listed for n) */
static int drawn_point(const ReportKernel *k, int n) {
    while (n > 0 && !(k->stages[n].ran && k->stages[n].changed)) n--;
    return n;
}

static void point_name(StrBuf *sb, int n) {
    const Stage *st = stage_get(n);
    if (st) sb_printf(sb, "stage %d (", n), ESC(sb, st->name), sb_putc(sb, ')');
    else sb_puts(sb, "point 0 (as scheduled)");
}

static void pre_text(StrBuf *sb, const char *cls, const char *text) {
    sb_printf(sb, "<pre%s%s%s>", cls ? " class=\"" : "", cls ? cls : "", cls ? "\"" : "");
    ESC(sb, text);
    sb_puts(sb, "</pre>\n");
}

/* a unified diff with its lines coloured */
static void diff_html(StrBuf *sb, const char *diff) {
    sb_puts(sb, "<pre class=\"diff\">");
    int line = 0;
    for (const char *p = diff; *p; line++) {
        const char *e = strchr(p, '\n');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        const char *cls = line < 2 && (p[0] == '-' || p[0] == '+') ? "hdr"
                          : p[0] == '+'                            ? "add"
                          : p[0] == '-'                            ? "del"
                          : p[0] == '@'                            ? "hunk"
                                                                   : NULL;
        if (cls) sb_printf(sb, "<span class=\"%s\">", cls);
        html_escape(sb, p, n);
        sb_puts(sb, cls ? "</span>" : "\n");
        p += n + (e ? 1 : 0);
    }
    sb_puts(sb, "</pre>\n");
}

static void graph_html(StrBuf *sb, const ReportGraph *g, bool no_graphs, bool dot_missing) {
    if (no_graphs) {
        sb_puts(sb, "<p class=\"note\">Graphs were left out of this report.</p>\n");
        return;
    }
    if (!g) return;
    sb_puts(sb, "<details");
    if (g->svg) sb_printf(sb, " data-svg=\"svg-%d-%d\"", g->kernel + 1, g->point);
    sb_printf(sb, "><summary>graph (%zu node%s", g->nodes, g->nodes == 1 ? "" : "s");
    if (g->focus) sb_printf(sb, ", %zu drawn", g->shown);
    sb_puts(sb, ")</summary>\n");
    if (g->focus)
        sb_printf(sb,
                  "<p class=\"note\">The graph has %zu nodes, more than this report draws: shown are the %zu nodes "
                  "within %d edge%s of %%%u %s (the first STORE, or the root when there is none).</p>\n",
                  g->nodes, g->shown, g->radius, g->radius == 1 ? "" : "s", g->focus->id, op_name(uop_op(g->focus)));
    if (dot_missing) sb_puts(sb, "<p class=\"err\">No graph: the Graphviz 'dot' program is not installed (apt-get install graphviz).</p>\n");
    else if (!g->svg) sb_puts(sb, "<p class=\"err\">No graph: "), ESC(sb, g->err), sb_puts(sb, "</p>\n");
    else sb_puts(sb, "<div class=\"svg\" title=\"click: actual size / fit\"></div>\n");
    sb_puts(sb, "</details>\n");
}

static void rules_table(StrBuf *sb, const Trace *t) {
    size_t n;
    ReportRuleCount *rc = report_rule_counts(t, &n);
    if (!n) return;
    sb_printf(sb, "<details open><summary>rules that fired (%zu)</summary>\n<table><tr><th>count</th><th>rule</th>"
                  "<th>written at</th></tr>\n", n);
    for (size_t i = 0; i < n; i++) {
        sb_printf(sb, "<tr><td class=\"n\">%zu</td><td>", rc[i].count);
        ESC(sb, rc[i].rule);
        sb_puts(sb, "</td><td>");
        ESC(sb, rc[i].file);
        sb_printf(sb, ":%d</td></tr>\n", rc[i].line);
    }
    sb_puts(sb, "</table></details>\n");
    free(rc);
}

/* a node as "%12 ADD" and, for a small value expression, its infix form */
static void node_cell(StrBuf *sb, const UOp *u, StrBuf *tmp) {
    sb_printf(sb, "%%%u %s", u->id, op_name(uop_op(u)));
    if (!dt_is_ptr(u->dtype) && u->dtype != DT_VOID && uop_graph_size(u) <= 12) {
        sb_clear(tmp);
        uop_render_expr(tmp, u);
        sb_puts(sb, " <span class=\"meta\">");
        ESC(sb, sb_str(tmp));
        sb_puts(sb, "</span>");
    }
}

static void rewrites_table(StrBuf *sb, const Trace *t) {
    if (!t || !t->nrewrites) return;
    StrBuf tmp;
    sb_init(&tmp);
    sb_printf(sb, "<details><summary>every rewrite (%zu)</summary>\n<table><tr><th>#</th><th>rule</th><th>before</th>"
                  "<th>after</th><th>written at</th></tr>\n", t->nrewrites);
    for (size_t i = 0; i < t->nrewrites && i < MAX_REWRITE_ROWS; i++) {
        const TraceRewrite *w = &t->rewrites[i];
        sb_printf(sb, "<tr><td class=\"n\">%zu</td><td>", i + 1);
        ESC(sb, w->rule ? w->rule : "?");
        sb_puts(sb, "</td><td>");
        node_cell(sb, w->before, &tmp);
        sb_puts(sb, "</td><td>");
        node_cell(sb, w->after, &tmp);
        sb_puts(sb, "</td><td>");
        ESC(sb, w->file ? w->file : "?");
        sb_printf(sb, ":%d</td></tr>\n", w->line);
    }
    sb_puts(sb, "</table>\n");
    if (t->nrewrites > MAX_REWRITE_ROWS)
        sb_printf(sb, "<p class=\"note\">%zu more rewrites are not listed here; p:export(file) writes every one.</p>\n",
                  t->nrewrites - MAX_REWRITE_ROWS);
    sb_puts(sb, "</details>\n");
    sb_free(&tmp);
}

static void stage_summary(StrBuf *sb, const ReportKernel *k, int n) {
    const Stage *st = stage_get(n);
    const ReportStage *r = &k->stages[n];
    sb_printf(sb, "<summary><span class=\"num\">%d</span>", n);
    ESC(sb, st->name);
    sb_printf(sb, " <span class=\"badge %s\">%s</span> <span class=\"meta\">", status_class(st->status),
              stage_status_name(st->status));
    if (!r->ran) sb_puts(sb, "not run</span>");
    else {
        sb_printf(sb, "%zu &rarr; %zu nodes, %zu rewrite%s, %.3f ms</span>", r->nodes_before, r->nodes_after,
                  r->rewrites, r->rewrites == 1 ? "" : "s", r->ms);
        sb_puts(sb, r->changed ? " <span class=\"changed\">changed</span>" : " <span class=\"meta\">&middot; unchanged</span>");
    }
    sb_puts(sb, "</summary>\n");
}

static void stage_section(StrBuf *sb, const ReportKernel *k, int ki, int n, const ReportGraph *graphs, size_t ngraphs,
                          const ReportOpts *o, bool dot_missing) {
    const Stage *st = n ? stage_get(n) : NULL;
    const UOp *root = point_root(k, n);
    sb_printf(sb, "<details class=\"stage\" id=\"k%d-s%d\">", ki + 1, n);
    if (st) stage_summary(sb, k, n);
    else
        sb_printf(sb, "<summary><span class=\"num\">0</span>as scheduled <span class=\"meta\">%zu nodes</span></summary>\n",
                  root ? uop_graph_size(root) : 0);
    sb_puts(sb, "<div>\n");
    if (st) {
        char runs[256];
        sb_puts(sb, "<p>");
        ESC(sb, st->purpose ? st->purpose : "");
        sb_puts(sb, "<br><span class=\"meta\">phase ");
        ESC(sb, st->phase);
        sb_puts(sb, "; runs ");
        ESC(sb, stage_runs_for(st, k->native_transcendentals, runs, sizeof runs));
        sb_puts(sb, "</span></p>\n");
        if (st->note) {
            sb_printf(sb, "<p class=\"note\"><b>%s:</b> ", stage_status_name(st->status));
            ESC(sb, st->note);
            sb_puts(sb, "</p>\n");
        }
    }
    if (!root) {
        sb_puts(sb, "<p class=\"err\">This stage did not run: the pipeline stopped before it.</p>\n</div></details>\n");
        return;
    }
    const ReportStage *r = st ? &k->stages[n] : NULL;
    if (r && r->trace && r->trace->npasses) {
        sb_puts(sb, "<table><tr><th>pass</th><th>rules</th><th>rewrites</th><th>ms</th></tr>\n");
        for (size_t i = 0; i < r->trace->npasses; i++) {
            const TracePass *ps = &r->trace->passes[i];
            sb_puts(sb, "<tr><td>");
            ESC(sb, ps->name ? ps->name : "");
            sb_puts(sb, "</td><td>");
            ESC(sb, ps->rules ? ps->rules : "");
            sb_printf(sb, "</td><td class=\"n\">%zu</td><td class=\"n\">%.3f</td></tr>\n", ps->nrewrites, (double)ps->ns / 1e6);
        }
        sb_puts(sb, "</table>\n");
    }
    if (r) rules_table(sb, r->trace);
    StrBuf t;
    sb_init(&t);
    if (r && r->changed) {
        const UOp *prev = point_root(k, n - 1);
        char la[80], lb[80];
        snprintf(la, sizeof la, "%s %d", n - 1 ? "stage" : "point", n - 1);
        snprintf(lb, sizeof lb, "stage %d", n);
        DiffOpts d = {.label_a = la, .label_b = lb};
        DiffStats ds = uop_diff_text(&t, prev, root, &d);
        sb_printf(sb, "<details open><summary>diff from %s %d (+%zu &minus;%zu lines)</summary>\n", n - 1 ? "stage" : "point",
                  n - 1, ds.added, ds.removed);
        diff_html(sb, sb_str(&t));
        sb_puts(sb, "</details>\n");
    } else if (r) {
        sb_printf(sb, "<p class=\"meta\">The graph is the same as at point %d (no diff).</p>\n", n - 1);
    }
    rewrites_table(sb, r ? r->trace : NULL);
    int shown = drawn_point(k, n);
    if (shown == n) {
        sb_clear(&t);
        ListingOpts lo = {0};
        uop_listing(&t, root, &lo);
        sb_printf(sb, "<details><summary>listing (%zu nodes)</summary>\n", uop_graph_size(root));
        pre_text(sb, NULL, sb_str(&t));
        sb_puts(sb, "</details>\n");
        graph_html(sb, report_graph_find(graphs, ngraphs, ki, n), o && o->no_graphs, dot_missing);
    } else {
        sb_printf(sb, "<p class=\"meta\">Listing and graph: those of <a href=\"#k%d-s%d\">", ki + 1, shown);
        point_name(sb, shown);
        sb_puts(sb, "</a>, which this stage did not change.</p>\n");
    }
    sb_free(&t);
    sb_puts(sb, "</div></details>\n");
}

static void stage_table(StrBuf *sb, const ReportKernel *k, int ki) {
    sb_puts(sb, "<table class=\"stages\"><tr><th>#</th><th>stage</th><th>phase</th><th>status</th><th>before</th>"
                "<th>after</th><th>rewrites</th><th>ms</th><th>changed</th><th>note</th></tr>\n");
    sb_printf(sb, "<tr><td class=\"n\">0</td><td><a href=\"#k%d-s0\">as scheduled</a></td><td></td><td></td><td></td>"
                  "<td class=\"n\">%zu</td><td></td><td></td><td></td><td></td></tr>\n",
              ki + 1, k->ast ? uop_graph_size(k->ast) : 0);
    for (int n = 1; n <= STAGE_COUNT; n++) {
        const Stage *st = stage_get(n);
        const ReportStage *r = &k->stages[n];
        sb_printf(sb, "<tr%s><td class=\"n\">%d</td><td><a href=\"#k%d-s%d\">", r->ran && !r->changed ? " class=\"same\"" : "",
                  n, ki + 1, n);
        ESC(sb, st->name);
        sb_puts(sb, "</a></td><td>");
        ESC(sb, st->phase);
        sb_printf(sb, "</td><td><span class=\"badge %s\">%s</span></td>", status_class(st->status),
                  stage_status_name(st->status));
        if (r->ran)
            sb_printf(sb, "<td class=\"n\">%zu</td><td class=\"n\">%zu</td><td class=\"n\">%zu</td><td class=\"n\">%.3f</td>"
                          "<td>%s</td>", r->nodes_before, r->nodes_after, r->rewrites, r->ms, r->changed ? "yes" : "no");
        else sb_puts(sb, "<td colspan=\"5\">not run</td>");
        sb_puts(sb, "<td>");
        if (st->note) ESC(sb, st->note);
        sb_puts(sb, "</td></tr>\n");
    }
    sb_puts(sb, "</table>\n");
}

static void kernel_section(StrBuf *sb, const ReportProgram *p, int ki, const ReportGraph *graphs, size_t ngraphs,
                           const ReportOpts *o, bool dot_missing) {
    const ReportKernel *k = &p->kernels[ki];
    const SchedKernel *sk = &p->s->kernels[ki];
    double total = 0;
    for (int n = 1; n <= STAGE_COUNT; n++) total += k->stages[n].ran ? k->stages[n].ms : 0;
    sb_printf(sb, "<section id=\"k%d\"><h2>Kernel %d: ", ki + 1, ki + 1);
    ESC(sb, k->name);
    sb_printf(sb, "</h2>\n<p class=\"meta\">generation %d; buffers ", sk->generation);
    for (int b = 0; b < sk->nbufs; b++) {
        if (b) sb_puts(sb, ", ");
        ESC(sb, sk->bufs[b] >= 0 && sk->bufs[b] < p->s->nbufs ? p->s->bufs[sk->bufs[b]].name : "?");
    }
    sb_printf(sb, "; stages took %.3f ms in all", total);
    if (k->opts) sb_puts(sb, "; opts "), ESC(sb, k->opts);
    if (k->inserted) sb_puts(sb, "; inserted rules: "), ESC(sb, k->inserted);
    sb_puts(sb, "</p>\n");
    if (k->error) sb_puts(sb, "<p class=\"err\">"), ESC(sb, k->error), sb_puts(sb, "</p>\n");
    stage_table(sb, k, ki);
    sb_printf(sb, "<p><button onclick=\"all('k%d',true)\">open every stage</button><button onclick=\"all('k%d',false)\">"
                  "close every stage</button></p>\n", ki + 1, ki + 1);
    for (int n = 0; n <= STAGE_COUNT; n++) stage_section(sb, k, ki, n, graphs, ngraphs, o, dot_missing);
    sb_printf(sb, "<h3 id=\"k%d-llvm\">LLVM IR and host assembly</h3>\n", ki + 1);
    if (!k->ir_after) {
        sb_puts(sb, "<p class=\"err\">Not compiled");
        if (k->compile_error) sb_puts(sb, ": "), ESC(sb, k->compile_error);
        sb_puts(sb, "</p>\n");
    } else {
        sb_printf(sb, "<p class=\"meta\">compiled in %.2f ms", k->compile_ms);
        if (p->host) sb_puts(sb, " for "), ESC(sb, p->host);
        sb_puts(sb, "</p>\n");
        sb_puts(sb, "<details><summary>LLVM IR after default&lt;O2&gt;</summary>\n");
        pre_text(sb, NULL, k->ir_after);
        sb_puts(sb, "</details>\n<details><summary>LLVM IR as rendered</summary>\n");
        pre_text(sb, NULL, k->ir_before ? k->ir_before : "");
        sb_puts(sb, "</details>\n<details><summary>host assembly</summary>\n");
        pre_text(sb, NULL, k->assembly ? k->assembly : "(the assembly could not be generated)");
        sb_puts(sb, "</details>\n");
    }
    sb_puts(sb, "</section>\n");
}

static void program_section(StrBuf *sb, const ReportProgram *p) {
    const Schedule *s = p->s;
    StrBuf t;
    sb_init(&t);
    sb_puts(sb, "<section id=\"program\"><h2>Program</h2>\n");
    schedule_format(&t, s, NULL);
    pre_text(sb, NULL, sb_str(&t));
    sb_puts(sb, "<h3>Buffers</h3>\n<table><tr><th>buffer</th><th>kind</th><th>dtype</th><th>elements</th>"
                "<th>first kernel</th><th>last kernel</th></tr>\n");
    for (int b = 0; b < s->nbufs; b++) {
        const SchedBuffer *sbuf = &s->bufs[b];
        sb_clear(&t);
        dt_format(&t, sbuf->dtype);
        sb_puts(sb, "<tr><td>");
        ESC(sb, sbuf->name);
        sb_printf(sb, "</td><td>%s</td><td>", buffer_kind(sbuf->kind));
        ESC(sb, sb_str(&t));
        sb_printf(sb, "</td><td class=\"n\">%lld</td>", (long long)sbuf->size);
        if (sbuf->first_kernel >= 0)
            sb_printf(sb, "<td class=\"n\">%d</td><td class=\"n\">%d</td></tr>\n", sbuf->first_kernel + 1, sbuf->last_kernel + 1);
        else sb_puts(sb, "<td></td><td></td></tr>\n");
    }
    sb_puts(sb, "</table>\n<h3>Kernels</h3>\n<table><tr><th>#</th><th>kernel</th><th>generation</th><th>buffers</th>"
                "<th>nodes</th><th>stages ms</th><th>status</th></tr>\n");
    for (int i = 0; i < s->nkernels; i++) {
        const ReportKernel *k = &p->kernels[i];
        double total = 0;
        for (int n = 1; n <= STAGE_COUNT; n++) total += k->stages[n].ran ? k->stages[n].ms : 0;
        sb_printf(sb, "<tr><td class=\"n\">%d</td><td><a href=\"#k%d\">", i + 1, i + 1);
        ESC(sb, k->name);
        sb_printf(sb, "</a></td><td class=\"n\">%d</td><td>", s->kernels[i].generation);
        for (int b = 0; b < s->kernels[i].nbufs; b++) {
            int bi = s->kernels[i].bufs[b];
            if (b) sb_puts(sb, ", ");
            ESC(sb, bi >= 0 && bi < s->nbufs ? s->bufs[bi].name : "?");
        }
        const UOp *last = k->stages[STAGE_COUNT].ran ? k->stages[STAGE_COUNT].root : NULL;
        sb_printf(sb, "</td><td class=\"n\">%zu &rarr; %zu</td><td class=\"n\">%.3f</td><td>%s</td></tr>\n",
                  k->ast ? uop_graph_size(k->ast) : 0, last ? uop_graph_size(last) : 0, total,
                  k->error ? "<span class=\"bad\">stopped</span>" : "all 22 stages ran");
    }
    sb_puts(sb, "</table>\n<h3>Scheduler steps</h3>\n<table><tr><th>#</th><th>step</th><th>before</th><th>after</th>"
                "<th>rewrites</th><th>ms</th><th>purpose</th></tr>\n");
    for (int i = 0; i < s->nsteps; i++) {
        const SchedStep *st = &s->steps[i];
        sb_printf(sb, "<tr><td class=\"n\">%d</td><td>", i + 1);
        ESC(sb, st->name ? st->name : "");
        sb_printf(sb, "</td><td class=\"n\">%zu</td><td class=\"n\">%zu</td><td class=\"n\">%zu</td><td class=\"n\">%.3f</td><td>",
                  st->before ? uop_graph_size(st->before) : 0, st->after ? uop_graph_size(st->after) : 0,
                  st->trace.nrewrites, st->ms);
        ESC(sb, st->purpose ? st->purpose : "");
        sb_puts(sb, "</td></tr>\n");
    }
    sb_puts(sb, "</table>\n</section>\n");
    sb_free(&t);
}

static void validation_section(StrBuf *sb, const ReportProgram *p) {
    sb_puts(sb, "<section id=\"validation\"><h2>Validation</h2>\n");
    if (!p->ran) sb_puts(sb, "<p class=\"meta\">The program was not run for this report.</p>\n");
    else if (!p->run_ok) {
        sb_puts(sb, "<p class=\"bad\">The run failed: no output to validate.</p>\n");
        pre_text(sb, "bad", p->run_error ? p->run_error : "(no message)");
    } else {
        if (p->valid) sb_puts(sb, "<p class=\"ok\">Every output matches the reference.</p>\n");
        else sb_printf(sb, "<p class=\"bad\">%zu element%s differ from the reference.</p>\n", p->mismatches,
                       p->mismatches == 1 ? "" : "s");
        pre_text(sb, p->valid ? "ok" : "bad", p->validation ? p->validation : "");
    }
    sb_puts(sb, "</section>\n");
}

static void nav(StrBuf *sb, const ReportProgram *p) {
    sb_puts(sb, "<nav><h1>uopdb report</h1>\n<a class=\"top\" href=\"#program\">Program</a>"
                "<a class=\"top\" href=\"#validation\">Validation</a>\n");
    for (int i = 0; i < p->s->nkernels; i++) {
        const ReportKernel *k = &p->kernels[i];
        sb_printf(sb, "<details%s><summary>%d ", p->s->nkernels <= 4 ? " open" : "", i + 1);
        ESC(sb, k->name);
        sb_printf(sb, "</summary><ol>\n<li><a href=\"#k%d-s0\"><span class=\"dot na\"></span>0 as scheduled</a></li>\n", i + 1);
        for (int n = 1; n <= STAGE_COUNT; n++) {
            const Stage *st = stage_get(n);
            sb_printf(sb, "<li><a href=\"#k%d-s%d\"><span class=\"dot %s\"></span>%d ", i + 1, n, status_class(st->status), n);
            ESC(sb, st->name);
            sb_puts(sb, k->stages[n].ran && k->stages[n].changed ? " &bull;" : "");
            sb_puts(sb, "</a></li>\n");
        }
        sb_printf(sb, "<li><a href=\"#k%d-llvm\">LLVM IR, assembly</a></li></ol></details>\n", i + 1);
    }
    sb_puts(sb, "<p class=\"legend\"><span class=\"dot written\"></span>written <span class=\"dot partial\"></span>partial "
                "<span class=\"dot na\"></span>n/a <span class=\"dot notwritten\"></span>not written<br>"
                "&bull; the stage changed the graph</p>\n</nav>\n");
}

bool report_html(StrBuf *sb, const ReportProgram *p, const ReportOpts *o, char *err, size_t errlen) {
    const Schedule *s = p->s;
    size_t ngraphs = 0;
    bool dot_missing = false;
    ReportGraph *graphs = o && o->no_graphs ? NULL : report_graphs_make(p, o, &ngraphs, &dot_missing);
    sb_puts(sb, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
                "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>uopdb report: ");
    if (s->nkernels == 1) ESC(sb, p->kernels[0].name);
    else sb_printf(sb, "%d kernels", s->nkernels);
    sb_puts(sb, "</title>\n<style>");
    sb_puts(sb, page_css);
    sb_puts(sb, "</style>\n</head><body>\n");
    nav(sb, p);
    sb_puts(sb, "<main><header><h2 style=\"border:0;margin-top:0\">uopdb report: ");
    if (s->nkernels == 1) ESC(sb, p->kernels[0].name);
    else sb_printf(sb, "%d kernels", s->nkernels);
    sb_printf(sb, "</h2>\n<p class=\"meta\">%d kernel%s in %d generation%s, %d buffers", s->nkernels, s->nkernels == 1 ? "" : "s",
              s->ngenerations, s->ngenerations == 1 ? "" : "s", s->nbufs);
    if (p->version) sb_puts(sb, "; uopdb "), ESC(sb, p->version);
    if (p->host) sb_puts(sb, "; host "), ESC(sb, p->host);
    sb_puts(sb, "</p>\n");
    if (p->ran)
        sb_printf(sb, "<p>validation: %s</p>\n", !p->run_ok ? "<span class=\"bad\">the run failed</span>"
                                               : p->valid  ? "<span class=\"ok\">every output matches the reference</span>"
                                                           : "<span class=\"bad\">outputs differ from the reference</span>");
    if (dot_missing)
        sb_puts(sb, "<p class=\"err\">The Graphviz 'dot' program is not installed (apt-get install graphviz): this report "
                    "has no graphs.</p>\n");
    sb_puts(sb, "</header>\n");
    program_section(sb, p);
    validation_section(sb, p);
    for (int i = 0; i < s->nkernels; i++) kernel_section(sb, p, i, graphs, ngraphs, o, dot_missing);
    sb_puts(sb, "</main>\n");
    for (size_t i = 0; i < ngraphs; i++) {
        if (!graphs[i].svg) continue;
        sb_printf(sb, "<script type=\"text/x-svg\" id=\"svg-%d-%d\">", graphs[i].kernel + 1, graphs[i].point);
        sb_puts(sb, graphs[i].svg);
        sb_puts(sb, "</script>\n");
    }
    sb_puts(sb, "<script>");
    sb_puts(sb, page_js);
    sb_puts(sb, "</script>\n</body></html>\n");
    report_graphs_free(graphs, ngraphs);
    if (sb->oom) {
        if (err && errlen) snprintf(err, errlen, "out of memory writing the report");
        return false;
    }
    return true;
}
