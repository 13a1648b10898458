/* progress_line.h - the one line of progress that long work (a beam search,
 * a large rewrite) shows on stderr: rewritten in place on a terminal at most
 * ten times a second, a line a second otherwise (when asked for), and wiped
 * from the terminal when the work ends, so the result prints on a clean
 * line. */
#ifndef UOPDB_PROGRESS_LINE_H
#define UOPDB_PROGRESS_LINE_H
#include <stdbool.h>

typedef struct ProgressLine {
    bool on;        /* shows anything at all */
    bool tty;       /* stderr is a terminal */
    bool shown;     /* a line was written */
    double start, last, delay_s;
} ProgressLine;

/* mode -1: only on a terminal, once the work has run delay_s seconds;
 * 0: never; 1: always, from the start */
void progress_line_start(ProgressLine *pl, int mode, double delay_s);
/* whether a line is due now; when it is, the caller prints it */
bool progress_line_due(ProgressLine *pl);
void progress_line_print(ProgressLine *pl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* wipes the line from a terminal */
void progress_line_end(ProgressLine *pl);

/* A progress line kept up by a thread of its own, for work whose single
 * steps can each take long (one check of a large kernel in a bisect):
 * once the work has run delay_s seconds, the line shows the text last set
 * and the seconds so far, refreshed until the ticker stops.  Only on a
 * terminal: start returns NULL otherwise (and when no thread can start),
 * and the other calls take NULL. */
typedef struct ProgressTicker ProgressTicker;
ProgressTicker *progress_ticker_start(double delay_s);
void progress_ticker_set(ProgressTicker *t, const char *text);
/* stops the thread, wipes the line, frees the ticker */
void progress_ticker_stop(ProgressTicker *t);

#endif
