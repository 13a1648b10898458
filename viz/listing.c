/* listing.c - the text listing of a graph (one node per line, named by id)
 * and its parser.  The format is described in listing.h. */
#include "listing.h"
#include "../core/util/u64map.h"
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- printing ---- */

/* ANSI colour of an op group, for terminals */
static const char *group_color(OpGroup g) {
    switch (g) {
    case OPG_DEFINE: return "\x1b[33m";   /* yellow */
    case OPG_META: return "\x1b[37m";     /* white */
    case OPG_VECTOR: return "\x1b[36m";   /* cyan */
    case OPG_MEMORY: return "\x1b[35m";   /* magenta */
    case OPG_ALU: return "\x1b[32m";      /* green */
    case OPG_CONTROL: return "\x1b[31m";  /* red */
    case OPG_CONST: return "\x1b[34m";    /* blue */
    case OPG_SCHED: return "\x1b[93m";    /* bright yellow */
    case OPG_MOVEMENT: return "\x1b[94m"; /* bright blue */
    case OPG_REDUCE: return "\x1b[91m";   /* bright red */
    default: return "";
    }
}

static void pad(StrBuf *sb, int n) {
    while (n-- > 0) sb_putc(sb, ' ');
}

static int dtype_width(const DType *d) {
    StrBuf sb;
    sb_init(&sb);
    dt_format(&sb, d);
    int w = (int)sb.len;
    sb_free(&sb);
    return w;
}

static int label_width(const UOp *u) {
    char buf[16];
    return snprintf(buf, sizeof buf, "%%%u", u->id);
}

void uop_listing_widths(const UOp *const *nodes, size_t n, ListingWidths *w) {
    for (size_t i = 0; i < n; i++) {
        int lw = label_width(nodes[i]), ow = (int)strlen(op_name(uop_op(nodes[i]))), dw = dtype_width(nodes[i]->dtype);
        if (lw > w->label) w->label = lw;
        if (ow > w->op) w->op = ow;
        if (dw > w->dtype) w->dtype = dw;
    }
}

void uop_listing_line_padded(StrBuf *sb, const UOp *u, const ListingOpts *opts, const ListingWidths *w) {
    bool color = opts && opts->color;
    int lw = (int)sb->len;
    sb_printf(sb, "%%%u", u->id);
    lw = (int)sb->len - lw;
    if (w) pad(sb, w->label - lw);
    sb_puts(sb, " = ");
    const char *on = op_name(uop_op(u));
    if (color) sb_printf(sb, "%s%s\x1b[0m", group_color(op_group(uop_op(u))), on);
    else sb_puts(sb, on);
    if (w) pad(sb, w->op - (int)strlen(on));
    sb_putc(sb, ' ');
    size_t dt_start = sb->len;
    dt_format(sb, u->dtype);
    int dw = (int)(sb->len - dt_start);
    bool more = u->nsrc || u->arg || u->tag;
    if (!more) return;
    if (w) pad(sb, w->dtype - dw);
    if (u->nsrc) {
        sb_puts(sb, " (");
        for (int i = 0; i < u->nsrc; i++) sb_printf(sb, "%s%%%u", i ? ", " : "", u->src[i]->id);
        sb_putc(sb, ')');
    }
    if (u->arg) {
        sb_puts(sb, " arg=");
        arg_format(sb, u->arg);
    }
    if (u->tag) {
        sb_puts(sb, " tag=");
        arg_format(sb, u->tag);
    }
}

void uop_listing_line(StrBuf *sb, const UOp *u, const ListingOpts *opts) {
    uop_listing_line_padded(sb, u, opts, NULL);
}

void uop_listing(StrBuf *sb, const UOp *root, const ListingOpts *opts) {
    if (!root) return;
    size_t n;
    const UOp **order = uop_toposort(root, &n);
    if (!order) { sb->oom = true; return; }
    ListingWidths w = {0, 0, 0};
    uop_listing_widths(order, n, &w);
    for (size_t i = 0; i < n; i++) {
        uop_listing_line_padded(sb, order[i], opts, &w);
        sb_putc(sb, '\n');
    }
    free(order);
}

/* ---- parsing ---- */

typedef struct LineParser {
    UCtx *c;
    const char *line;  /* NUL-terminated copy of the line */
    const char *p;
    int lineno;
    char *err;
    size_t errlen;
} LineParser;

static bool fail_at(LineParser *lp, const char *at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool fail_at(LineParser *lp, const char *at, const char *fmt, ...) {
    char msg[1100];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (lp->err && lp->errlen)
        snprintf(lp->err, lp->errlen, "line %d, column %d: %s", lp->lineno, (int)(at - lp->line) + 1, msg);
    return false;
}

static void skip_blanks(LineParser *lp) {
    while (*lp->p == ' ' || *lp->p == '\t' || *lp->p == '\r') lp->p++;
}

static bool at_end(LineParser *lp) {
    skip_blanks(lp);
    return *lp->p == 0 || *lp->p == '#';
}

/* %<digits> */
static bool parse_label(LineParser *lp, uint64_t *out) {
    const char *start = lp->p;
    if (*lp->p != '%') return fail_at(lp, start, "expected a node label like %%3");
    lp->p++;
    if (!isdigit((unsigned char)*lp->p)) return fail_at(lp, start, "expected digits after '%%'");
    uint64_t v = 0;
    while (isdigit((unsigned char)*lp->p)) {
        if (v > (UINT64_MAX - 9) / 10) return fail_at(lp, start, "label number too large");
        v = v * 10 + (uint64_t)(*lp->p++ - '0');
    }
    *out = v;
    return true;
}

/* an arg after "arg=" or "tag=", through arg_parse; its column errors are
 * turned into line/column of the whole line */
static bool parse_arg_here(LineParser *lp, const Arg **out) {
    const char *start = lp->p;
    if (*start == 0 || *start == ' ' || *start == '\t') return fail_at(lp, start, "expected a value after '='");
    char aerr[512];
    int n = arg_parse(lp->c, start, out, aerr, sizeof aerr);
    if (n > 0) {
        lp->p = start + n;
        return true;
    }
    int col = 1;
    const char *msg = aerr;
    if (sscanf(aerr, "column %d: ", &col) == 1) {
        const char *colon = strstr(aerr, ": ");
        if (colon) msg = colon + 2;
    }
    return fail_at(lp, start + col - 1, "%s", msg);
}

static const UOp *parse_node_line(LineParser *lp, U64Map *labels) {
    const UOp *result = NULL;
    const UOp **srcs = NULL;
    size_t nsrc = 0, cap = 0;
    skip_blanks(lp);
    uint64_t label;
    const char *label_at = lp->p;
    if (!parse_label(lp, &label)) return NULL;
    if (u64map_get(labels, label)) {
        fail_at(lp, label_at, "label %%%llu is defined twice", (unsigned long long)label);
        return NULL;
    }
    skip_blanks(lp);
    if (*lp->p != '=') { fail_at(lp, lp->p, "expected '=' after the label"); return NULL; }
    lp->p++;
    skip_blanks(lp);
    /* op name */
    const char *op_at = lp->p;
    char name[64];
    size_t n = 0;
    while ((isalnum((unsigned char)*lp->p) || *lp->p == '_' || *lp->p == '.') && n < sizeof name - 1) name[n++] = *lp->p++;
    name[n] = 0;
    Op op;
    if (!n) { fail_at(lp, op_at, "expected an op name"); return NULL; }
    if (!op_from_name(name, &op)) { fail_at(lp, op_at, "unknown op '%s'", name); return NULL; }
    skip_blanks(lp);
    /* dtype */
    const char *dt_at = lp->p;
    const DType *dt;
    int k = dt_parse(lp->p, &dt);
    if (!k) {
        const char *e = lp->p;
        while (*e && *e != ' ' && *e != '\t') e++;
        fail_at(lp, dt_at, "bad dtype '%.*s'", (int)(e - dt_at), dt_at);
        return NULL;
    }
    lp->p += k;
    if (*lp->p && *lp->p != ' ' && *lp->p != '\t' && *lp->p != '#' && *lp->p != '\r') {
        const char *e = dt_at;
        while (*e && *e != ' ' && *e != '\t') e++;
        fail_at(lp, dt_at, "bad dtype '%.*s'", (int)(e - dt_at), dt_at);
        return NULL;
    }
    skip_blanks(lp);
    /* sources */
    if (*lp->p == '(') {
        lp->p++;
        skip_blanks(lp);
        while (*lp->p != ')') {
            const char *src_at = lp->p;
            uint64_t sl;
            if (!parse_label(lp, &sl)) goto out;
            const UOp *s = u64map_get(labels, sl);
            if (!s) {
                fail_at(lp, src_at, "unknown label %%%llu (sources must be defined on an earlier line)",
                        (unsigned long long)sl);
                goto out;
            }
            if (nsrc == cap) {
                cap = cap ? cap * 2 : 8;
                const UOp **ns = realloc(srcs, cap * sizeof *ns);
                if (!ns) { fail_at(lp, src_at, "out of memory"); goto out; }
                srcs = ns;
            }
            srcs[nsrc++] = s;
            skip_blanks(lp);
            if (*lp->p == ',') { lp->p++; skip_blanks(lp); continue; }
            if (*lp->p != ')') { fail_at(lp, lp->p, "expected ',' or ')' in the source list"); goto out; }
        }
        lp->p++;
        skip_blanks(lp);
    }
    const Arg *arg = NULL, *tag = NULL;
    if (strncmp(lp->p, "arg=", 4) == 0) {
        lp->p += 4;
        if (!parse_arg_here(lp, &arg)) goto out;
        skip_blanks(lp);
    }
    if (strncmp(lp->p, "tag=", 4) == 0) {
        lp->p += 4;
        if (!parse_arg_here(lp, &tag)) goto out;
    }
    if (!at_end(lp)) { fail_at(lp, lp->p, "unexpected text '%s'", lp->p); goto out; }
    if (nsrc > 65535) { fail_at(lp, op_at, "too many sources"); goto out; }
    uctx_clear_error(lp->c);
    result = uop_new_tagged(lp->c, op, dt, srcs, (int)nsrc, arg, tag);
    if (!result) { fail_at(lp, op_at, "%s", uctx_error(lp->c)); goto out; }
    if (!u64map_put(labels, label, result)) { fail_at(lp, label_at, "out of memory"); result = NULL; }
out:
    free(srcs);
    return result;
}

const UOp *uop_parse_listing(UCtx *c, const char *text, char *err, size_t errlen) {
    if (err && errlen) err[0] = 0;
    if (!text) {
        if (err && errlen) snprintf(err, errlen, "line 1, column 1: no text");
        return NULL;
    }
    U64Map labels = {0};
    const UOp *last = NULL;
    char *line = NULL;
    size_t line_cap = 0;
    int lineno = 0;
    bool ok = true;
    for (const char *s = text; *s && ok;) {
        const char *e = strchr(s, '\n');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        lineno++;
        if (len + 1 > line_cap) {
            line_cap = len + 1 > 256 ? len + 1 : 256;
            char *nl = realloc(line, line_cap);
            if (!nl) {
                if (err && errlen) snprintf(err, errlen, "line %d, column 1: out of memory", lineno);
                ok = false;
                break;
            }
            line = nl;
        }
        memcpy(line, s, len);
        line[len] = 0;
        s = e ? e + 1 : s + len;
        LineParser lp = {c, line, line, lineno, err, errlen};
        if (at_end(&lp)) continue; /* blank line or comment */
        const UOp *u = parse_node_line(&lp, &labels);
        if (!u) ok = false;
        else last = u;
    }
    free(line);
    u64map_free(&labels);
    if (!ok) return NULL;
    if (!last) {
        if (err && errlen) snprintf(err, errlen, "line %d, column 1: the listing has no nodes", lineno ? lineno : 1);
        return NULL;
    }
    return last;
}
