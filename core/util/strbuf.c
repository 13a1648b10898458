/* strbuf.c - growable string, see strbuf.h. */
#include "strbuf.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sb_init(StrBuf *sb) { memset(sb, 0, sizeof *sb); }
void sb_free(StrBuf *sb) { free(sb->data); memset(sb, 0, sizeof *sb); }
void sb_clear(StrBuf *sb) { sb->len = 0; if (sb->data) sb->data[0] = 0; }

static bool sb_reserve(StrBuf *sb, size_t extra) {
    if (sb->oom) return false;
    if (sb->len + extra + 1 <= sb->cap) return true;
    size_t cap = sb->cap ? sb->cap : 64;
    while (cap < sb->len + extra + 1) cap *= 2;
    char *d = realloc(sb->data, cap);
    if (!d) { sb->oom = true; return false; }
    sb->data = d;
    sb->cap = cap;
    return true;
}

void sb_putn(StrBuf *sb, const char *s, size_t n) {
    if (!sb_reserve(sb, n)) return;
    memcpy(sb->data + sb->len, s, n);
    sb->len += n;
    sb->data[sb->len] = 0;
}
void sb_puts(StrBuf *sb, const char *s) { sb_putn(sb, s, strlen(s)); }
void sb_putc(StrBuf *sb, char c) { sb_putn(sb, &c, 1); }

void sb_vprintf(StrBuf *sb, const char *fmt, va_list ap) {
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0 || !sb_reserve(sb, (size_t)n)) return;
    vsnprintf(sb->data + sb->len, (size_t)n + 1, fmt, ap);
    sb->len += (size_t)n;
}

void sb_printf(StrBuf *sb, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    sb_vprintf(sb, fmt, ap);
    va_end(ap);
}

char *sb_take(StrBuf *sb) {
    char *d = sb->data;
    if (!d) { d = malloc(1); if (d) d[0] = 0; }
    memset(sb, 0, sizeof *sb);
    return d;
}

const char *sb_str(const StrBuf *sb) { return sb->data ? sb->data : ""; }
