/* arg_parse.c - reads an arg back from text: uopdb's spelling (what
 * arg_format writes) and the Python spelling tinygrad prints. */
#include "uop.h"
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct ArgParser {
    UCtx *c;
    const char *start, *p;
    char *err;
    size_t errlen;
    int depth;
} ArgParser;

static bool fail(ArgParser *ps, const char *fmt, const char *what) {
    if (ps->err && ps->errlen) {
        char msg[200];
        snprintf(msg, sizeof msg, fmt, what);
        snprintf(ps->err, ps->errlen, "column %d: %s", (int)(ps->p - ps->start) + 1, msg);
    }
    return false;
}

static void skip_ws(ArgParser *ps) {
    while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r') ps->p++;
}

static bool parse_one(ArgParser *ps, const Arg **out);

static bool parse_tuple(ArgParser *ps, const Arg **out) {
    enum { INLINE = 16 };
    const Arg *inline_items[INLINE];
    const Arg **items = inline_items;
    size_t n = 0, cap = INLINE;
    bool ok = false;
    ps->p++; /* '(' */
    skip_ws(ps);
    while (*ps->p != ')') {
        const Arg *a;
        if (!parse_one(ps, &a)) goto done;
        if (n == cap) {
            const Arg **ni = malloc(cap * 2 * sizeof *ni);
            if (!ni) { fail(ps, "%s", "out of memory"); goto done; }
            memcpy(ni, items, n * sizeof *ni);
            if (items != inline_items) free(items);
            items = ni;
            cap *= 2;
        }
        items[n++] = a;
        skip_ws(ps);
        if (*ps->p == ',') { ps->p++; skip_ws(ps); continue; }
        if (*ps->p != ')') { fail(ps, "%s", "expected ',' or ')' in a tuple"); goto done; }
    }
    ps->p++;
    *out = arg_tuple(ps->c, items, (uint32_t)n);
    ok = *out != NULL || fail(ps, "%s", "out of memory");
done:
    if (items != inline_items) free(items);
    return ok;
}

static bool parse_string(ArgParser *ps, const Arg **out) {
    char quote = *ps->p++;
    size_t cap = 64, n = 0;
    char *buf = malloc(cap);
    if (!buf) return fail(ps, "%s", "out of memory");
    for (;;) {
        char ch = *ps->p;
        if (!ch || ch == '\n') { free(buf); return fail(ps, "%s", "unterminated string"); }
        ps->p++;
        if (ch == quote) break;
        if (ch == '\\') {
            char e = *ps->p++;
            switch (e) {
            case 'n': ch = '\n'; break;
            case 't': ch = '\t'; break;
            case 'r': ch = '\r'; break;
            case '0': ch = '\0'; break;
            case '\\': case '\'': case '"': ch = e; break;
            case 'x': {
                if (!isxdigit((unsigned char)ps->p[0]) || !isxdigit((unsigned char)ps->p[1])) {
                    free(buf);
                    return fail(ps, "%s", "bad \\x escape");
                }
                char hex[3] = {ps->p[0], ps->p[1], 0};
                ch = (char)strtol(hex, NULL, 16);
                ps->p += 2;
                break;
            }
            default: free(buf); ps->p--; return fail(ps, "%s", "unknown escape in string");
            }
        }
        if (n + 1 >= cap) {
            char *nb = realloc(buf, cap *= 2);
            if (!nb) { free(buf); return fail(ps, "%s", "out of memory"); }
            buf = nb;
        }
        buf[n++] = ch;
    }
    *out = arg_strn(ps->c, buf, n);
    free(buf);
    return *out != NULL || fail(ps, "%s", "out of memory");
}

static bool parse_number(ArgParser *ps, const Arg **out) {
    const char *s = ps->p;
    const char *q = s;
    if (*q == '-' || *q == '+') q++;
    bool is_float = false;
    if (strncmp(q, "inf", 3) == 0 && !isalnum((unsigned char)q[3])) {
        ps->p = q + 3;
        *out = arg_float(ps->c, *s == '-' ? -INFINITY : INFINITY);
        return *out != NULL;
    }
    if (strncmp(q, "math.inf", 8) == 0) {
        ps->p = q + 8;
        *out = arg_float(ps->c, *s == '-' ? -INFINITY : INFINITY);
        return *out != NULL;
    }
    if (strncmp(q, "nan", 3) == 0 && !isalnum((unsigned char)q[3])) {
        ps->p = q + 3;
        *out = arg_float(ps->c, NAN);
        return *out != NULL;
    }
    if (!isdigit((unsigned char)*q) && !(*q == '.' && isdigit((unsigned char)q[1])))
        return fail(ps, "%s", "expected a number");
    const char *r = q;
    while (isdigit((unsigned char)*r)) r++;
    if (*r == '.' || *r == 'e' || *r == 'E') is_float = true;
    errno = 0;
    char *end;
    if (is_float) {
        double v = strtod(s, &end);
        ps->p = end;
        *out = arg_float(ps->c, v);
    } else {
        long long v = strtoll(s, &end, 10);
        if (errno == ERANGE) return fail(ps, "%s", "integer out of the 64-bit range");
        ps->p = end;
        *out = arg_int(ps->c, v);
    }
    return *out != NULL || fail(ps, "%s", "out of memory");
}

static bool word_is(const char *p, size_t n, const char *w) { return strlen(w) == n && strncmp(p, w, n) == 0; }

static bool parse_word(ArgParser *ps, const Arg **out) {
    const char *s = ps->p;
    const char *q = s;
    while (isalnum((unsigned char)*q) || *q == '_' || *q == '.') q++;
    /* a trailing '.' belongs to no word */
    size_t n = (size_t)(q - s);
    if (word_is(s, n, "None")) { ps->p = q; *out = NULL; return true; }
    if (word_is(s, n, "true") || word_is(s, n, "True")) { ps->p = q; *out = arg_bool(ps->c, true); return *out != NULL; }
    if (word_is(s, n, "false") || word_is(s, n, "False")) { ps->p = q; *out = arg_bool(ps->c, false); return *out != NULL; }
    if (word_is(s, n, "Invalid")) { ps->p = q; *out = arg_invalid(ps->c); return *out != NULL; }
    char word[64];
    if (n >= sizeof word) return fail(ps, "%s", "name too long");
    memcpy(word, s, n);
    word[n] = 0;
    if (strncmp(word, "Ops.", 4) == 0) {
        Op op;
        if (!op_from_name(word, &op)) return fail(ps, "unknown op '%s'", word + 4);
        ps->p = q;
        *out = arg_op(ps->c, op);
        return *out != NULL;
    }
    if (strncmp(word, "AxisType.", 9) == 0 || isupper((unsigned char)word[0])) {
        AxisType at;
        if (!axis_from_name(word, &at)) return fail(ps, "unknown axis type '%s'", word);
        ps->p = q;
        *out = arg_axis(ps->c, at);
        return *out != NULL;
    }
    /* a dtype: float32, dtypes.float.vec(4), int32.ptr(16, local) */
    const DType *dt;
    int k = dt_parse(s, &dt);
    if (!k) return fail(ps, "unknown name '%s' in an arg", word);
    ps->p = s + k;
    *out = arg_dtype(ps->c, dt);
    return *out != NULL;
}

static bool parse_one(ArgParser *ps, const Arg **out) {
    skip_ws(ps);
    if (++ps->depth > 64) return fail(ps, "%s", "arg nested too deeply");
    bool ok;
    char ch = *ps->p;
    if (ch == '(') ok = parse_tuple(ps, out);
    else if (ch == '"' || ch == '\'') ok = parse_string(ps, out);
    else if (isdigit((unsigned char)ch) || ch == '-' || ch == '+' || ch == '.') ok = parse_number(ps, out);
    else if (isalpha((unsigned char)ch) || ch == '_') {
        /* inf / nan / math.inf are numbers */
        if ((strncmp(ps->p, "inf", 3) == 0 || strncmp(ps->p, "nan", 3) == 0) && !isalnum((unsigned char)ps->p[3]))
            ok = parse_number(ps, out);
        else if (strncmp(ps->p, "math.inf", 8) == 0) ok = parse_number(ps, out);
        else ok = parse_word(ps, out);
    } else if (!ch) ok = fail(ps, "%s", "expected an arg, found the end of the text");
    else {
        char what[2] = {ch, 0};
        ok = fail(ps, "unexpected '%s' in an arg", what);
    }
    ps->depth--;
    return ok;
}

int arg_parse(UCtx *c, const char *text, const Arg **out, char *err, size_t errlen) {
    ArgParser ps = {c, text, text, err, errlen, 0};
    *out = NULL;
    if (err && errlen) err[0] = 0;
    if (!parse_one(&ps, out)) { *out = NULL; return 0; }
    return (int)(ps.p - text);
}
