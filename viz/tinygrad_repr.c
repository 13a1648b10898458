/* tinygrad_repr.c - tinygrad's Python repr of a UOp graph: the exporter
 * writes what tinygrad v0.12.0's pretty_print writes; the importer is a
 * tolerant recursive-descent parser for that text.
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
    for (int i = 0; i < d; i++) sb_putc(sb, ' ');
}

void uop_to_tinygrad(StrBuf *sb, const UOp *root) {
    if (!root) return;
    size_t n = (size_t)root->id + 1;
    int *number = malloc(n * sizeof *number);   /* x<N> of a node, in first-seen order */
    int *uses = calloc(n, sizeof *uses);         /* how many times a node is a source */
    bool *printed = calloc(n, sizeof *printed);
    size_t cap = 64, sp = 0;
    ExportFrame *stack = malloc(cap * sizeof *stack);
    if (!number || !uses || !printed || !stack) { sb->oom = true; goto out; }

    /* number the nodes in depth-first order of first sight, counting uses */
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
out:
    free(number);
    free(uses);
    free(printed);
    free(stack);
}

/* ---- import ---- */

typedef struct Importer {
    UCtx *c;
    const char *text, *p;
    char *err;
    size_t errlen;
    bool failed;
    int depth;
    U64Map names;         /* x<N> -> node */
} Importer;

enum { MAX_NESTING = 4000 };

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

static const UOp *parse_node(Importer *im);

/* after "UOp(": Ops.X, dtype, keywords, ")" */
static const UOp *parse_call(Importer *im, const char *call_at) {
    skip_ws(im);
    const char *op_at = im->p;
    char name[64];
    const char *e = value_end(im->p);
    char *optext = copy_trimmed(im->p, e);
    if (!optext) return fail_at(im, op_at, "out of memory");
    snprintf(name, sizeof name, "%s", optext);
    free(optext);
    Op op;
    if (!op_from_name(name, &op)) return fail_at(im, op_at, "unknown op '%s'", name);
    im->p = e;
    const DType *dt = DT_VOID;
    const Arg *arg = NULL, *tag = NULL;
    const UOp **srcs = NULL;
    size_t nsrc = 0, cap = 0;
    const UOp *result = NULL;
    bool positional_dtype = true;
    while (accept(im, ',')) {
        skip_ws(im);
        if (*im->p == ')') break; /* trailing comma */
        size_t kl = ident_len(im->p);
        const char *kw = im->p;
        const char *after = im->p + kl;
        while (isspace((unsigned char)*after)) after++;
        bool is_kw = kl && *after == '=' && after[1] != '=';
        if (!is_kw) {
            if (!positional_dtype) { fail_at(im, kw, "expected a keyword (arg=, tag=, src=, dtype=)"); goto out; }
            positional_dtype = false;
            if (!parse_dtype(im, &dt)) goto out;
            continue;
        }
        positional_dtype = false;
        im->p = after + 1;
        if (kl == 3 && strncmp(kw, "arg", 3) == 0) {
            if (!parse_value(im, &arg)) goto out;
        } else if (kl == 3 && strncmp(kw, "tag", 3) == 0) {
            if (!parse_value(im, &tag)) goto out;
        } else if (kl == 5 && strncmp(kw, "dtype", 5) == 0) {
            if (!parse_dtype(im, &dt)) goto out;
        } else if (kl == 3 && strncmp(kw, "src", 3) == 0) {
            if (!accept(im, '(')) { fail_at(im, im->p, "expected '(' after src="); goto out; }
            for (;;) {
                if (accept(im, ')')) break;
                const UOp *s = parse_node(im);
                if (!s) goto out;
                if (nsrc == cap) {
                    cap = cap ? cap * 2 : 8;
                    const UOp **ns = realloc(srcs, cap * sizeof *ns);
                    if (!ns) { fail_at(im, im->p, "out of memory"); goto out; }
                    srcs = ns;
                }
                srcs[nsrc++] = s;
                if (accept(im, ',')) continue;
                if (accept(im, ')')) break;
                fail_at(im, im->p, "expected ',' or ')' in src=(...)");
                goto out;
            }
        } else {
            fail_at(im, kw, "unknown keyword '%.*s'", (int)kl, kw);
            goto out;
        }
    }
    if (!accept(im, ')')) { fail_at(im, im->p, "expected ')' to close UOp(...)"); goto out; }
    if (nsrc > 65535) { fail_at(im, call_at, "too many sources"); goto out; }
    uctx_clear_error(im->c);
    result = uop_new_tagged(im->c, op, dt, srcs, (int)nsrc, arg, tag);
    if (!result) fail_at(im, call_at, "%s", uctx_error(im->c));
out:
    free(srcs);
    return result;
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

/* [x<N>:=] UOp(...)  or  x<N> */
static const UOp *parse_node(Importer *im) {
    skip_ws(im);
    const char *at = im->p;
    if (++im->depth > MAX_NESTING) return fail_at(im, at, "graph nested too deeply (more than %d levels)", MAX_NESTING);
    const UOp *result = NULL;
    size_t n = ident_len(im->p);
    if (!n) { result = fail_at(im, at, "expected UOp(...) or a name like x3"); goto done; }
    uint64_t defines = 0;
    bool is_def = false;
    const char *after = im->p + n;
    while (isspace((unsigned char)*after)) after++;
    if (after[0] == ':' && after[1] == '=') {
        if (!var_number(im->p, n, &defines)) { result = fail_at(im, at, "expected a name like x3 before ':='"); goto done; }
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
        result = parse_call(im, call_at);
        if (result && is_def) {
            if (u64map_get(&im->names, defines)) {
                result = fail_at(im, at, "x%llu is defined twice", (unsigned long long)defines);
            } else if (!u64map_put(&im->names, defines, result)) result = fail_at(im, at, "out of memory");
        }
    } else if (!is_def) {
        uint64_t ref;
        if (!var_number(im->p, n, &ref)) {
            result = fail_at(im, at, "expected UOp(...) or a name like x3, found '%.*s'", (int)n, im->p);
        } else if (!(result = u64map_get(&im->names, ref))) {
            result = fail_at(im, at, "x%llu is used before it is defined", (unsigned long long)ref);
        } else im->p += n;
    } else result = fail_at(im, call_at, "expected UOp(...) after ':='");
done:
    im->depth--;
    return result;
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
