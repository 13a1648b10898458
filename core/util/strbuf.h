/* strbuf.h - a growable string for printers (listings, DOT, diffs). */
#ifndef UOPDB_STRBUF_H
#define UOPDB_STRBUF_H
#include <stddef.h>
#include <stdarg.h>
#include <stdbool.h>

typedef struct StrBuf {
    char *data;   /* always NUL-terminated once anything was appended */
    size_t len, cap;
    bool oom;     /* set when an allocation failed; further appends are dropped */
} StrBuf;

void sb_init(StrBuf *sb);
void sb_free(StrBuf *sb);
void sb_clear(StrBuf *sb);
void sb_putc(StrBuf *sb, char c);
void sb_puts(StrBuf *sb, const char *s);
void sb_putn(StrBuf *sb, const char *s, size_t n);
void sb_printf(StrBuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sb_vprintf(StrBuf *sb, const char *fmt, va_list ap);
/* Hands the buffer to the caller (free() it); the StrBuf is left empty. */
char *sb_take(StrBuf *sb);
const char *sb_str(const StrBuf *sb);

#endif
