/* report_json.c - the JSON trace of a program (docs/trace.schema.json
 * describes it), and the escaping and rule counts the HTML page shares. */
#include "report.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- escaping ---- */

void html_escape(StrBuf *sb, const char *s, size_t n) {
    size_t run = 0; /* bytes copied as they are, written in one go */
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        const char *rep = NULL;
        switch (ch) {
        case '&': rep = "&amp;"; break;
        case '<': rep = "&lt;"; break;
        case '>': rep = "&gt;"; break;
        case '"': rep = "&quot;"; break;
        case '\'': rep = "&#39;"; break;
        default:
            if ((ch < 32 && ch != '\n' && ch != '\t' && ch != '\r') || ch == 127) rep = "";
        }
        if (!rep) {
            run++;
            continue;
        }
        sb_putn(sb, s + i - run, run);
        run = 0;
        sb_puts(sb, rep);
    }
    sb_putn(sb, s + n - run, run);
}

/* length of the well-formed UTF-8 sequence at s (1..4), 0 if it is not one */
static size_t utf8_len(const unsigned char *s) {
    unsigned char c = s[0];
    if (c < 0x80) return 1;
    size_t n;
    unsigned min;
    unsigned cp;
    if (c >= 0xc2 && c <= 0xdf) n = 2, cp = c & 0x1f, min = 0x80;
    else if (c >= 0xe0 && c <= 0xef) n = 3, cp = c & 0x0f, min = 0x800;
    else if (c >= 0xf0 && c <= 0xf4) n = 4, cp = c & 0x07, min = 0x10000;
    else return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80) return 0; /* also stops at the NUL */
        cp = cp << 6 | (s[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
    return n;
}

void json_string(StrBuf *sb, const char *s) {
    sb_putc(sb, '"');
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    while (*p) {
        unsigned char ch = *p;
        if (ch == '"' || ch == '\\') {
            sb_putc(sb, '\\');
            sb_putc(sb, (char)ch);
            p++;
        } else if (ch < 0x20 || ch == 0x7f) {
            switch (ch) {
            case '\n': sb_puts(sb, "\\n"); break;
            case '\t': sb_puts(sb, "\\t"); break;
            case '\r': sb_puts(sb, "\\r"); break;
            case '\b': sb_puts(sb, "\\b"); break;
            case '\f': sb_puts(sb, "\\f"); break;
            default: sb_printf(sb, "\\u%04x", ch);
            }
            p++;
        } else {
            size_t n = utf8_len(p);
            if (n) sb_putn(sb, (const char *)p, n), p += n;
            else sb_puts(sb, "\\ufffd"), p++;
        }
    }
    sb_putc(sb, '"');
}

static void json_string_or_null(StrBuf *sb, const char *s) {
    if (s) json_string(sb, s);
    else sb_puts(sb, "null");
}

/* a finite number; JSON has no NaN or infinity */
static void json_number(StrBuf *sb, double v) { sb_printf(sb, "%.6g", isfinite(v) ? v : 0.0); }

/* ---- rule counts ---- */

ReportRuleCount *report_rule_counts(const Trace *t, size_t *n) {
    *n = 0;
    if (!t || t->nrewrites == 0) return NULL;
    size_t cap = 16;
    ReportRuleCount *out = malloc(cap * sizeof *out);
    if (!out) return NULL;
    for (size_t i = 0; i < t->nrewrites; i++) {
        const TraceRewrite *w = &t->rewrites[i];
        const char *rule = w->rule ? w->rule : "?", *file = w->file ? w->file : "";
        size_t k = 0;
        while (k < *n && !(out[k].line == w->line && !strcmp(out[k].rule, rule) && !strcmp(out[k].file, file))) k++;
        if (k == *n) {
            if (*n == cap) {
                ReportRuleCount *grown = realloc(out, 2 * cap * sizeof *out);
                if (!grown) {
                    free(out);
                    *n = 0;
                    return NULL;
                }
                out = grown, cap *= 2;
            }
            out[(*n)++] = (ReportRuleCount){rule, file, w->line, 0};
        }
        out[k].count++;
    }
    return out;
}

/* ---- the trace ---- */

static const char *buffer_kind(SchedBufKind k) {
    return k == SBUF_INPUT ? "input" : k == SBUF_TMP ? "tmp" : "output";
}

static void json_node(StrBuf *sb, const UOp *u) {
    if (!u) {
        sb_puts(sb, "null");
        return;
    }
    sb_printf(sb, "{\"id\": %u, \"op\": \"%s\"}", u->id, op_name(uop_op(u)));
}

static void json_program(StrBuf *sb, const Schedule *s) {
    sb_printf(sb, "  \"program\": {\n    \"generations\": %d,\n    \"buffers\": [", s->ngenerations);
    for (int b = 0; b < s->nbufs; b++) {
        const SchedBuffer *sbuf = &s->bufs[b];
        StrBuf dt;
        sb_init(&dt);
        dt_format(&dt, sbuf->dtype);
        sb_printf(sb, "%s\n      {\"name\": ", b ? "," : "");
        json_string(sb, sbuf->name);
        sb_printf(sb, ", \"kind\": \"%s\", \"dtype\": ", buffer_kind(sbuf->kind));
        json_string(sb, sb_str(&dt));
        sb_printf(sb, ", \"size\": %lld, \"first_kernel\": ", (long long)sbuf->size);
        if (sbuf->first_kernel >= 0) sb_printf(sb, "%d, \"last_kernel\": %d}", sbuf->first_kernel + 1, sbuf->last_kernel + 1);
        else sb_puts(sb, "null, \"last_kernel\": null}");
        sb_free(&dt);
    }
    sb_puts(sb, "\n    ],\n    \"outputs\": [");
    for (int j = 0; j < s->noutputs; j++) {
        if (j) sb_puts(sb, ", ");
        json_string(sb, s->bufs[s->outputs[j]].name);
    }
    sb_puts(sb, "],\n    \"kernels\": [");
    for (int i = 0; i < s->nkernels; i++) {
        const SchedKernel *k = &s->kernels[i];
        sb_printf(sb, "%s\n      {\"index\": %d, \"name\": ", i ? "," : "", i + 1);
        json_string(sb, k->name);
        sb_printf(sb, ", \"generation\": %d, \"buffers\": [", k->generation);
        for (int b = 0; b < k->nbufs; b++) {
            if (b) sb_puts(sb, ", ");
            json_string(sb, k->bufs[b] >= 0 && k->bufs[b] < s->nbufs ? s->bufs[k->bufs[b]].name : "?");
        }
        sb_puts(sb, "]}");
    }
    sb_puts(sb, "\n    ],\n    \"steps\": [");
    for (int i = 0; i < s->nsteps; i++) {
        const SchedStep *st = &s->steps[i];
        sb_printf(sb, "%s\n      {\"name\": ", i ? "," : "");
        json_string(sb, st->name);
        sb_printf(sb, ", \"nodes_before\": %zu, \"nodes_after\": %zu, \"rewrites\": %zu, \"ms\": ",
                  st->before ? uop_graph_size(st->before) : 0, st->after ? uop_graph_size(st->after) : 0,
                  st->trace.nrewrites);
        json_number(sb, st->ms);
        sb_putc(sb, '}');
    }
    sb_puts(sb, "\n    ]\n  },\n");
}

static void json_stage(StrBuf *sb, int n, const ReportStage *r, bool native_transcendentals) {
    const Stage *st = stage_get(n);
    char runs[256];
    sb_printf(sb, "        {\"number\": %d, \"name\": ", n);
    json_string(sb, st->name);
    sb_puts(sb, ", \"phase\": ");
    json_string(sb, st->phase);
    sb_printf(sb, ", \"status\": \"%s\", \"note\": ", stage_status_name(st->status));
    json_string_or_null(sb, st->note);
    sb_puts(sb, ", \"runs\": ");
    json_string(sb, stage_runs_for(st, native_transcendentals, runs, sizeof runs));
    sb_printf(sb, ",\n         \"ran\": %s, \"nodes_before\": %zu, \"nodes_after\": %zu, \"rewrites\": %zu, \"ms\": ",
              r->ran ? "true" : "false", r->nodes_before, r->nodes_after, r->rewrites);
    json_number(sb, r->ran ? r->ms : 0);
    sb_printf(sb, ", \"changed\": %s,\n         \"passes\": [", r->ran && r->changed ? "true" : "false");
    const Trace *t = r->ran ? r->trace : NULL;
    for (size_t i = 0; t && i < t->npasses; i++) {
        const TracePass *ps = &t->passes[i];
        sb_printf(sb, "%s{\"name\": ", i ? ", " : "");
        json_string(sb, ps->name);
        sb_puts(sb, ", \"rules\": ");
        json_string(sb, ps->rules);
        sb_printf(sb, ", \"rewrites\": %zu, \"ms\": ", ps->nrewrites);
        json_number(sb, (double)ps->ns / 1e6);
        sb_putc(sb, '}');
    }
    sb_puts(sb, "],\n         \"rules\": [");
    size_t nrc;
    ReportRuleCount *rc = report_rule_counts(t, &nrc);
    for (size_t i = 0; i < nrc; i++) {
        sb_printf(sb, "%s\n           {\"rule\": ", i ? "," : "");
        json_string(sb, rc[i].rule);
        sb_puts(sb, ", \"file\": ");
        json_string(sb, rc[i].file);
        sb_printf(sb, ", \"line\": %d, \"count\": %zu}", rc[i].line, rc[i].count);
    }
    free(rc);
    sb_puts(sb, nrc ? "\n         ],\n         \"trace\": [" : "],\n         \"trace\": [");
    for (size_t i = 0; t && i < t->nrewrites; i++) {
        const TraceRewrite *w = &t->rewrites[i];
        sb_printf(sb, "%s\n           {\"rule\": ", i ? "," : "");
        json_string(sb, w->rule ? w->rule : "?");
        sb_puts(sb, ", \"file\": ");
        json_string(sb, w->file ? w->file : "");
        sb_printf(sb, ", \"line\": %d, \"pass\": %u, \"before\": ", w->line, w->pass);
        json_node(sb, w->before);
        sb_puts(sb, ", \"after\": ");
        json_node(sb, w->after);
        sb_putc(sb, '}');
    }
    sb_puts(sb, t && t->nrewrites ? "\n         ]}" : "]}");
}

void report_json(StrBuf *sb, const ReportProgram *p) {
    const Schedule *s = p->s;
    sb_puts(sb, "{\n  \"format\": \"uopdb-trace\",\n  \"version\": 1,\n  \"uopdb\": ");
    json_string(sb, p->version ? p->version : "");
    sb_puts(sb, ",\n");
    json_program(sb, s);
    sb_puts(sb, "  \"kernels\": [");
    for (int i = 0; i < s->nkernels; i++) {
        const ReportKernel *k = &p->kernels[i];
        double total = 0;
        for (int n = 1; n <= STAGE_COUNT; n++)
            if (k->stages[n].ran) total += k->stages[n].ms;
        sb_printf(sb, "%s\n    {\"index\": %d, \"name\": ", i ? "," : "", i + 1);
        json_string(sb, k->name);
        sb_puts(sb, ", \"error\": ");
        json_string_or_null(sb, k->error);
        sb_puts(sb, ", \"opts\": ");
        json_string_or_null(sb, k->opts);
        sb_puts(sb, ", \"inserted\": ");
        json_string_or_null(sb, k->inserted);
        sb_printf(sb, ",\n     \"nodes_scheduled\": %zu, \"ms\": ", k->ast ? uop_graph_size(k->ast) : 0);
        json_number(sb, total);
        sb_puts(sb, ",\n     \"stages\": [\n");
        for (int n = 1; n <= STAGE_COUNT; n++) {
            json_stage(sb, n, &k->stages[n], k->native_transcendentals);
            sb_puts(sb, n < STAGE_COUNT ? ",\n" : "\n");
        }
        sb_puts(sb, "     ]}");
    }
    sb_puts(sb, s->nkernels ? "\n  ]\n}\n" : "]\n}\n");
}
