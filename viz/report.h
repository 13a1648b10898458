/* report.h - a program's session written out: an HTML page a person opens
 * in a browser (report_html) and a JSON trace for tools (report_json, its
 * schema in docs/trace.schema.json).
 *
 * The viz layer does not see the debugger (core/debug), so the caller (the
 * scripting layer) fills a ReportProgram with what the pipelines computed:
 * per kernel the root at each point 0..22, each stage's counts and trace,
 * the compiled kernel's LLVM IR and assembly, and the validation of a run.
 * Nothing here runs a stage; a stage not run (a failed pipeline) is shown
 * as such. */
#ifndef UOPDB_REPORT_H
#define UOPDB_REPORT_H
#include <stdbool.h>
#include <stddef.h>
#include "../core/sched/schedule.h"
#include "../core/stages/stages.h"
#include "../core/util/strbuf.h"

typedef struct ReportStage {
    bool ran;                 /* false: the pipeline stopped before this stage */
    const UOp *root;          /* after the stage */
    size_t nodes_before, nodes_after, rewrites;
    double ms;
    bool changed;
    const Trace *trace;       /* NULL when not run */
} ReportStage;

typedef struct ReportKernel {
    const char *name;
    const UOp *ast;                         /* point 0: the kernel as scheduled */
    ReportStage stages[STAGE_COUNT + 1];    /* 1..STAGE_COUNT; [0] unused */
    const char *error;                      /* the stage that failed and why, or NULL */
    const char *opts;                       /* "UPCAST axis 1 by 3, ..." or NULL */
    const char *inserted;                   /* user rules inserted: "stage 15: name", or NULL */
    bool native_transcendentals;            /* compiled with {transcendentals = "native"} */
    /* the compiled kernel (report_html only); NULL when not compiled */
    const char *ir_before, *ir_after, *assembly;
    const char *compile_error;              /* why it is not compiled, or NULL */
    double compile_ms;
} ReportKernel;

typedef struct ReportProgram {
    const Schedule *s;                      /* buffers, kernels' buffer lists and generations, steps */
    const ReportKernel *kernels;            /* s->nkernels of them */
    /* the run through the JIT, validated (report_html only) */
    bool ran;                               /* a run was attempted */
    bool run_ok;                            /* it ran (else run_error says why) */
    const char *run_error;
    bool valid;                             /* every output matched the reference */
    size_t mismatches;
    const char *validation;                 /* the validation text, one "validate: ..." line per output */
    const char *host;                       /* "x86_64-pc-linux-gnu (znver3)" or NULL */
    const char *version;                    /* uopdb's version, or NULL */
} ReportProgram;

typedef struct ReportOpts {
    size_t max_graph_nodes;   /* larger graphs are drawn as a neighbourhood (0: 300) */
    int graph_radius;         /* that neighbourhood's radius in edges (0: 3) */
    bool no_graphs;           /* no SVGs at all (the page says so) */
} ReportOpts;

/* The HTML page: one self-contained file (inline CSS, a little inline JS,
 * SVGs made by `dot`, loaded when their section opens); false with a
 * message when out of memory. */
bool report_html(StrBuf *sb, const ReportProgram *p, const ReportOpts *opts, char *err, size_t errlen);

/* The JSON trace (docs/trace.schema.json): the program, then per kernel
 * per stage the counts, the rules that fired and every rewrite. */
void report_json(StrBuf *sb, const ReportProgram *p);

/* ---- shared by both ---- */
/* The rules that fired in a trace (NULL: none), in order of first firing,
 * with counts (a rule is its name, file and line); malloc'd, *n of them;
 * NULL with *n = 0 when none fired or out of memory. */
typedef struct ReportRuleCount {
    const char *rule, *file;
    int line;
    size_t count;
} ReportRuleCount;
ReportRuleCount *report_rule_counts(const Trace *t, size_t *n);

/* text as HTML (& < > " ' escaped; bytes below 32 other than \n \t \r dropped) */
void html_escape(StrBuf *sb, const char *s, size_t n);
/* a JSON string with its quotes: " \ and control characters escaped; other
 * bytes pass through, so UTF-8 stays UTF-8 (a byte sequence that is not
 * UTF-8 becomes U+FFFD per byte, so the document stays valid) */
void json_string(StrBuf *sb, const char *s);

#endif
