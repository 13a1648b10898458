/* output.h - how the REPL's output reaches the terminal: colour by the kind
 * of a text object (diffs, stage tables, verdicts) and for error messages,
 * wide tables cut at the terminal's width, and output longer than the
 * terminal sent through a pager ($PAGER, default "less -R").  Colour,
 * cutting and paging happen on a terminal only: output through a pipe or a
 * file is the plain text (unless --color=always asks for colour). */
#ifndef UOPDB_REPL_OUTPUT_H
#define UOPDB_REPL_OUTPUT_H
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "../core/util/strbuf.h"

typedef enum ColorMode { COLOR_AUTO, COLOR_NEVER, COLOR_ALWAYS } ColorMode;

/* From the command line: --color=WHEN and --no-pager.  COLOR_AUTO colours
 * a stream that is a terminal unless NO_COLOR is set (to anything) or
 * TERM is "dumb". */
void output_configure(ColorMode color, bool pager);
/* Parses "never", "always", "auto"; false if it is none of them. */
bool output_parse_color(const char *when, ColorMode *mode);
/* The REPL is reading from a terminal: long output may be paged. */
void output_set_interactive(bool on);

bool output_color_stdout(void);
bool output_color_stderr(void);

/* Appends text as a text object of this kind is shown on stdout: lines of
 * the tables ("stages", "rules", "rewrites") longer than the terminal cut
 * with "..." at its width (at least 100 columns), and colours by kind
 * ("diff", "stages", "check", "validate", "bisect") when stdout gets
 * colour.  kind may be NULL (the text unchanged). */
void output_decorate(StrBuf *out, const char *kind, const char *text, size_t len);

/* Writes text to stdout; on an interactive terminal, text with more lines
 * than the terminal has rows goes through the pager instead. */
void output_emit(const char *text, size_t len);

/* Writes an error message (a newline added if missing) to stderr, red
 * when stderr gets colour. */
void output_error(const char *msg, size_t len);

/* What C code writes to stdout between begin and end (e.g. k:print()),
 * kept to be shown with the rest of a command's output.  begin returns
 * false (nothing captured, output goes straight out) if it cannot. */
typedef struct OutputCapture {
    FILE *tmp;
    int saved_fd;
} OutputCapture;
bool output_capture_begin(OutputCapture *c);
void output_capture_end(OutputCapture *c, StrBuf *into);

#endif
