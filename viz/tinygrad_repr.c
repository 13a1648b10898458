/* tinygrad_repr.c - tinygrad's Python repr of a UOp graph: the exporter
 * writes what tinygrad v0.12.0's pretty_print writes (its indent capped at
 * TINYGRAD_REPR_MAX_INDENT, so that the text of a deep graph is linear in
 * its size), iteratively; the importer is a tolerant parser for that text that keeps
 * the UOp(...) calls being read on an explicit stack, so any nesting reads.
 *
 * Import notes: whitespace and newlines may appear between any tokens; the
 * op and dtype are positional, then arg=, tag=, src= and dtype= keywords in
 * any order (missing ones mean None, no tag, no sources, void).  An arg that
 * is not a value uopdb models but looks like a call, such as
 * KernelInfo(name='r_3', ...), becomes a string arg holding its text. */
#include "tinygrad_repr.h"
#include "../core/util/u64map.h"
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- export ---- */

/* Python's repr of a str: single quotes unless the text has a ' and no " */
static void write_python_str(StrBuf *sb, const char *s, size_t n) {
    bool has_single = memchr(s, '\'', n) != NULL, has_double = memchr(s, '"', n) != NULL;
    char quote = has_single && !has_double ? '"' : '\'';
    sb_putc(sb, quote);
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch == (unsigned char)quote || ch == '\\') { sb_putc(sb, '\\'); sb_putc(sb, (char)ch); }
        else if (ch == '\n') sb_puts(sb, "\\n");
        else if (ch == '\t') sb_puts(sb, "\\t");
        else if (ch == '\r') sb_puts(sb, "\\r");
        else if (ch < 32 || ch == 127) sb_printf(sb, "\\x%02x", ch);
        else sb_putc(sb, (char)ch);
    }
    sb_putc(sb, quote);
}

/* repr() of an arg as Python writes it */
static void write_python_arg(StrBuf *sb, const Arg *a) {
    if (a && a->kind == ARG_FLOAT) format_python_float(sb, a->v.f);
    else if (a && a->kind == ARG_STR) write_python_str(sb, a->v.s, a->n);
    else if (a && a->kind == ARG_TUPLE) {
        sb_putc(sb, '(');
        for (uint32_t i = 0; i < a->n; i++) {
            if (i) sb_puts(sb, ", ");
            write_python_arg(sb, a->items[i]);
        }
        if (a->n == 1) sb_putc(sb, ',');
        sb_putc(sb, ')');
    } else arg_format_python(sb, a);
}

static const char *value_end(const char *p);
static bool looks_like_call(const char *s);

/* An object the importer kept as text, such as KernelInfo(...), is written
 * back bare so that the text survives a round trip unchanged. */
static bool is_kept_call_text(const Arg *a) {
    if (!a || a->kind != ARG_STR || !a->n || !isupper((unsigned char)a->v.s[0]) || strlen(a->v.s) != a->n) return false;
    return looks_like_call(a->v.s) && value_end(a->v.s) == a->v.s + a->n;
}

typedef struct ExportFrame { const UOp *u; int next, depth; } ExportFrame;

static void write_argstr(StrBuf *sb, const UOp *u) {
    /* REDUCE_AXIS shows its tuple with str() of each item, as tinygrad does */
    if (uop_op(u) == OP_REDUCE_AXIS && u->arg && u->arg->kind == ARG_TUPLE) {
        sb_putc(sb, '(');
        for (uint32_t i = 0; i < u->arg->n; i++) {
            const Arg *a = u->arg->items[i];
            if (i) sb_puts(sb, ", ");
            if (a && a->kind == ARG_STR) sb_putn(sb, a->v.s, a->n);
            else write_python_arg(sb, a);
        }
        sb_putc(sb, ')');
        return;
    }
    if (is_kept_call_text(u->arg)) sb_putn(sb, u->arg->v.s, u->arg->n);
    else write_python_arg(sb, u->arg);
}

static void indent(StrBuf *sb, int d) {
    if (d > TINYGRAD_REPR_MAX_INDENT) d = TINYGRAD_REPR_MAX_INDENT;
    for (int i = 0; i < d; i++) sb_putc(sb, ' ');
}

bool uop_to_tinygrad(StrBuf *sb, const UOp *root, char *err, size_t errlen) {
    if (err && errlen) err[0] = 0;
    if (!root) return true;
    bool ok = false;
    size_t n = (size_t)root->id + 1;
    int *number = malloc(n * sizeof *number);   /* x<N> of a node, in first-seen order */
    int *uses = calloc(n, sizeof *uses);         /* how many times a node is a source */
    bool *printed = calloc(n, sizeof *printed);
    size_t cap = 64, sp = 0;
    ExportFrame *stack = malloc(cap * sizeof *stack);
    if (!number || !uses || !printed || !stack) { sb->oom = true; goto out; }

    /* number the nodes in depth-first order of first sight, counting uses;
     * the print below nests a node as deep as this stack is when it is first
     * seen, and indents each line by its nesting (up to the cap) */
    int seen = 0;
    stack[sp++] = (ExportFrame){root, 0, 0};
    while (sp) {
        ExportFrame *f = &stack[sp - 1];
        if (f->next == f->u->nsrc) { sp--; continue; }
        const UOp *s = f->u->src[f->next++];
        if (uses[s->id]++ == 0) {
            number[s->id] = seen++;
            if (sp == cap) {
                ExportFrame *ns = realloc(stack, (cap *= 2) * sizeof *ns);
                if (!ns) { sb->oom = true; goto out; }
                stack = ns;
            }
            stack[sp++] = (ExportFrame){s, 0, 0};
        }
    }

    /* print; a node already printed is written as its name only */
    sp = 0;
    stack[sp++] = (ExportFrame){root, -1, 0};
    while (sp) {
        ExportFrame *f = &stack[sp - 1];
        const UOp *u = f->u;
        if (f->next == -1) { /* entering u */
            indent(sb, f->depth);
            if (printed[u->id] && u != root) {
                sb_printf(sb, "x%d", number[u->id]);
                sp--;
                continue;
            }
            printed[u->id] = true;
            if (u != root && uses[u->id] > 1) sb_printf(sb, "x%d:=", number[u->id]);
            sb_printf(sb, "UOp(Ops.%s, ", op_name(uop_op(u)));
            dt_format_tinygrad(sb, u->dtype);
            sb_puts(sb, ", arg=");
            write_argstr(sb, u);
            if (u->tag) {
                sb_puts(sb, ", tag=");
                write_python_arg(sb, u->tag);
            }
            sb_puts(sb, ", src=(");
            f->next = 0;
        }
        if (f->next > 0) sb_putc(sb, ','); /* after the source just written */
        if (f->next == u->nsrc) {
            sb_puts(sb, "))");
            sp--;
            continue;
        }
        const UOp *s = u->src[f->next++];
        int d = f->depth + 2;
        sb_putc(sb, '\n');
        if (sp == cap) {
            ExportFrame *ns = realloc(stack, (cap *= 2) * sizeof *ns);
            if (!ns) { sb->oom = true; goto out; }
            stack = ns;
        }
        stack[sp++] = (ExportFrame){s, -1, d};
    }
    ok = true;
out:
    if (sb->oom && err && errlen && !err[0]) snprintf(err, errlen, "out of memory");
    free(number);
    free(uses);
    free(printed);
    free(stack);
    return ok && !sb->oom;
}

/* ---- import ---- */

typedef struct Importer {
    UCtx *c;
    const char *text, *p;
    char *err;
    size_t errlen;
    bool failed;
    U64Map names;         /* x<N> -> node */
} Importer;

/* A UOp(...) being read (the reader keeps these on an explicit stack, so
 * nesting is not limited by the C stack): what its keywords gave so far. */
typedef struct Call {
    const char *at, *call_at;   /* the node's text ([x<N>:=]...) and its "UOp(" */
    bool is_def;                /* x<N>:= before it */
    uint64_t defines;           /* that N */
    Op op;
    const DType *dt;
    const Arg *arg, *tag;
    const UOp **srcs;
    size_t nsrc, cap;
    bool positional_dtype;      /* the dtype may still come without dtype= */
    bool in_src;                /* inside src=(...) */
    bool after_item;            /* in src=(...), after a node: ',' or ')' next */
} Call;

static const UOp *fail_at(Importer *im, const char *at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static const UOp *fail_at(Importer *im, const char *at, const char *fmt, ...) {
    if (im->failed) return NULL;
    im->failed = true;
    int line = 1, col = 1;
    for (const char *q = im->text; q < at && *q; q++) {
        if (*q == '\n') { line++; col = 1; }
        else col++;
    }
    char msg[1100];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (im->err && im->errlen) snprintf(im->err, im->errlen, "line %d, column %d: %s", line, col, msg);
    return NULL;
}

static void skip_ws(Importer *im) {
    while (isspace((unsigned char)*im->p)) im->p++;
}

static bool accept(Importer *im, char ch) {
    skip_ws(im);
    if (*im->p != ch) return false;
    im->p++;
    return true;
}

static size_t ident_len(const char *p) {
    size_t n = 0;
    if (!(isalpha((unsigned char)p[0]) || p[0] == '_')) return 0;
    while (isalnum((unsigned char)p[n]) || p[n] == '_') n++;
    return n;
}

/* the end of one argument: the first ',' or ')' outside brackets and strings */
static const char *value_end(const char *p) {
    int depth = 0;
    for (; *p; p++) {
        char ch = *p;
        if (ch == '\'' || ch == '"') {
            for (p++; *p && *p != ch; p++)
                if (*p == '\\' && p[1]) p++;
            if (!*p) return p;
        } else if (ch == '(' || ch == '[' || ch == '{') depth++;
        else if (ch == ')' || ch == ']' || ch == '}') {
            if (depth == 0) return p;
            depth--;
        } else if (ch == ',' && depth == 0) return p;
    }
    return p;
}

static char *copy_trimmed(const char *s, const char *e) {
    while (s < e && isspace((unsigned char)*s)) s++;
    while (e > s && isspace((unsigned char)e[-1])) e--;
    char *r = malloc((size_t)(e - s) + 1);
    if (!r) return NULL;
    memcpy(r, s, (size_t)(e - s));
    r[e - s] = 0;
    return r;
}

/* Name(...) or a.b.Name(...) with balanced parentheses up to the end */
static bool looks_like_call(const char *s) {
    size_t n;
    if (!ident_len(s)) return false;
    while ((n = ident_len(s)) > 0) {
        s += n;
        if (*s != '.') break;
        s++;
    }
    if (*s != '(') return false;
    return s[strlen(s) - 1] == ')';
}

static bool parse_value(Importer *im, const Arg **out) {
    skip_ws(im);
    const char *start = im->p, *end = value_end(im->p);
    char *text = copy_trimmed(start, end);
    if (!text) { fail_at(im, start, "out of memory"); return false; }
    if (!*text) { free(text); fail_at(im, start, "expected a value"); return false; }
    char aerr[512];
    int n = arg_parse(im->c, text, out, aerr, sizeof aerr);
    const char *rest = text + (n > 0 ? n : 0);
    while (isspace((unsigned char)*rest)) rest++;
    bool ok = true;
    if (n <= 0 || *rest) {
        if (looks_like_call(text)) {
            *out = arg_str(im->c, text);
            if (!*out) ok = false, fail_at(im, start, "out of memory");
        } else {
            int col = 1;
            const char *msg = aerr, *colon;
            if (n > 0) { col = (int)(rest - text) + 1; msg = "unexpected text after the value"; }
            else if (sscanf(aerr, "column %d: ", &col) == 1 && (colon = strstr(aerr, ": "))) msg = colon + 2;
            while (isspace((unsigned char)*start)) start++;
            fail_at(im, start + col - 1, "%s", msg);
            ok = false;
        }
    }
    free(text);
    if (ok) im->p = end;
    return ok;
}

static bool parse_dtype(Importer *im, const DType **out) {
    skip_ws(im);
    const char *start = im->p, *end = value_end(im->p);
    char buf[256];
    size_t n = 0;
    for (const char *q = start; q < end && n < sizeof buf - 1; q++)
        if (!isspace((unsigned char)*q)) buf[n++] = *q;
    buf[n] = 0;
    int k = dt_parse(buf, out);
    if (!k || buf[k]) {
        fail_at(im, start, "bad dtype '%s'", buf);
        return false;
    }
    im->p = end;
    return true;
}

/* x<N> as a number, or false */
static bool var_number(const char *p, size_t n, uint64_t *out) {
    if (n < 2 || p[0] != 'x') return false;
    uint64_t v = 0;
    for (size_t i = 1; i < n; i++) {
        if (!isdigit((unsigned char)p[i]) || v > UINT64_MAX / 16) return false;
        v = v * 10 + (uint64_t)(p[i] - '0');
    }
    *out = v;
    return true;
}

enum { STEP_ERROR, STEP_NODE, STEP_DONE };

/* Reads the keywords of call f up to its closing ')' (STEP_DONE) or up to a
 * source node to read (STEP_NODE). */
static int call_step(Importer *im, Call *f) {
    for (;;) {
        if (f->in_src) {
            if (f->after_item) {
                f->after_item = false;
                if (!accept(im, ',')) {
                    if (accept(im, ')')) { f->in_src = false; continue; }
                    fail_at(im, im->p, "expected ',' or ')' in src=(...)");
                    return STEP_ERROR;
                }
            }
            if (accept(im, ')')) { f->in_src = false; continue; }
            return STEP_NODE;
        }
        if (!accept(im, ',')) break;
        skip_ws(im);
        if (*im->p == ')') break; /* trailing comma */
        size_t kl = ident_len(im->p);
        const char *kw = im->p;
        const char *after = im->p + kl;
        while (isspace((unsigned char)*after)) after++;
        bool is_kw = kl && *after == '=' && after[1] != '=';
        if (!is_kw) {
            if (!f->positional_dtype) { fail_at(im, kw, "expected a keyword (arg=, tag=, src=, dtype=)"); return STEP_ERROR; }
            f->positional_dtype = false;
            if (!parse_dtype(im, &f->dt)) return STEP_ERROR;
            continue;
        }
        f->positional_dtype = false;
        im->p = after + 1;
        if (kl == 3 && strncmp(kw, "arg", 3) == 0) {
            if (!parse_value(im, &f->arg)) return STEP_ERROR;
        } else if (kl == 3 && strncmp(kw, "tag", 3) == 0) {
            if (!parse_value(im, &f->tag)) return STEP_ERROR;
        } else if (kl == 5 && strncmp(kw, "dtype", 5) == 0) {
            if (!parse_dtype(im, &f->dt)) return STEP_ERROR;
        } else if (kl == 3 && strncmp(kw, "src", 3) == 0) {
            if (!accept(im, '(')) { fail_at(im, im->p, "expected '(' after src="); return STEP_ERROR; }
            f->in_src = true;
        } else {
            fail_at(im, kw, "unknown keyword '%.*s'", (int)kl, kw);
            return STEP_ERROR;
        }
    }
    if (!accept(im, ')')) { fail_at(im, im->p, "expected ')' to close UOp(...)"); return STEP_ERROR; }
    return STEP_DONE;
}

static bool add_src(Importer *im, Call *f, const UOp *s) {
    if (f->nsrc == f->cap) {
        size_t cap = f->cap ? f->cap * 2 : 8;
        const UOp **ns = realloc(f->srcs, cap * sizeof *ns);
        if (!ns) { fail_at(im, im->p, "out of memory"); return false; }
        f->srcs = ns;
        f->cap = cap;
    }
    f->srcs[f->nsrc++] = s;
    f->after_item = true;
    return true;
}

/* the node of a call read to its ')', named if it was x<N>:= */
static const UOp *call_finish(Importer *im, const Call *f) {
    if (f->nsrc > 65535) return fail_at(im, f->call_at, "too many sources");
    uctx_clear_error(im->c);
    const UOp *result = uop_new_tagged(im->c, f->op, f->dt, f->srcs, (int)f->nsrc, f->arg, f->tag);
    if (!result) return fail_at(im, f->call_at, "%s", uctx_error(im->c));
    if (f->is_def) {
        if (u64map_get(&im->names, f->defines))
            return fail_at(im, f->at, "x%llu is defined twice", (unsigned long long)f->defines);
        if (!u64map_put(&im->names, f->defines, result)) return fail_at(im, f->at, "out of memory");
    }
    return result;
}

/* The start of a node: [x<N>:=] UOp(Ops.X  or  x<N>.  1 with call f opened
 * (after its op), 0 with a named node in *out, -1 on error. */
static int node_start(Importer *im, Call *f, const UOp **out) {
    skip_ws(im);
    const char *at = im->p;
    size_t n = ident_len(im->p);
    if (!n) { fail_at(im, at, "expected UOp(...) or a name like x3"); return -1; }
    uint64_t defines = 0;
    bool is_def = false;
    const char *after = im->p + n;
    while (isspace((unsigned char)*after)) after++;
    if (after[0] == ':' && after[1] == '=') {
        if (!var_number(im->p, n, &defines)) { fail_at(im, at, "expected a name like x3 before ':='"); return -1; }
        is_def = true;
        im->p = after + 2;
        skip_ws(im);
        n = ident_len(im->p);
        after = im->p + n;
        while (isspace((unsigned char)*after)) after++;
    }
    const char *call_at = im->p;
    if (n && *after == '(') {
        im->p = after + 1;
        *f = (Call){.at = at, .call_at = call_at, .is_def = is_def, .defines = defines, .dt = DT_VOID,
                    .positional_dtype = true};
        /* the op, positional */
        skip_ws(im);
        const char *op_at = im->p;
        char name[64];
        const char *e = value_end(im->p);
        char *optext = copy_trimmed(im->p, e);
        if (!optext) { fail_at(im, op_at, "out of memory"); return -1; }
        snprintf(name, sizeof name, "%s", optext);
        free(optext);
        if (!op_from_name(name, &f->op)) { fail_at(im, op_at, "unknown op '%s'", name); return -1; }
        im->p = e;
        return 1;
    }
    if (is_def) { fail_at(im, call_at, "expected UOp(...) after ':='"); return -1; }
    uint64_t ref;
    if (!var_number(im->p, n, &ref)) {
        fail_at(im, at, "expected UOp(...) or a name like x3, found '%.*s'", (int)n, im->p);
        return -1;
    }
    if (!(*out = u64map_get(&im->names, ref))) {
        fail_at(im, at, "x%llu is used before it is defined", (unsigned long long)ref);
        return -1;
    }
    im->p += n;
    return 0;
}

/* One node and everything nested in it, with the calls being read on an
 * explicit stack. */
static const UOp *parse_node(Importer *im) {
    Call *stack = NULL;
    size_t sp = 0, cap = 0;
    const UOp *done = NULL; /* the node just read, for the call below it */
    for (;;) {
        if (done) {
            if (sp == 0) break;
            if (!add_src(im, &stack[sp - 1], done)) { done = NULL; break; }
            done = NULL;
        }
        if (sp > 0) {
            int step = call_step(im, &stack[sp - 1]);
            if (step == STEP_ERROR) break;
            if (step == STEP_DONE) {
                done = call_finish(im, &stack[sp - 1]);
                free(stack[--sp].srcs);
                if (!done) break;
                continue;
            }
        }
        /* a new node: at the start, or a source of the call on top */
        if (sp == cap) {
            size_t ncap = cap ? cap * 2 : 16;
            Call *ns = realloc(stack, ncap * sizeof *ns);
            if (!ns) { fail_at(im, im->p, "out of memory"); break; }
            stack = ns;
            cap = ncap;
        }
        int k = node_start(im, &stack[sp], &done);
        if (k < 0) break;
        if (k > 0) sp++;
    }
    for (size_t i = 0; i < sp; i++) free(stack[i].srcs);
    free(stack);
    return im->failed ? NULL : done;
}

const UOp *uop_from_tinygrad(UCtx *c, const char *text, char *err, size_t errlen) {
    if (err && errlen) err[0] = 0;
    if (!text) text = "";
    Importer im = {.c = c, .text = text, .p = text, .err = err, .errlen = errlen};
    const UOp *root = parse_node(&im);
    if (root) {
        skip_ws(&im);
        if (*im.p) root = fail_at(&im, im.p, "unexpected text after the graph");
    }
    u64map_free(&im.names);
    return root;
}
