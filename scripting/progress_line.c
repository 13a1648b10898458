/* progress_line.c - see progress_line.h. */
#include "progress_line.h"
#include <stdarg.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

void progress_line_start(ProgressLine *pl, int mode, double delay_s) {
    bool tty = isatty(2);
    *pl = (ProgressLine){.on = mode > 0 || (mode < 0 && tty), .tty = tty, .start = now_s(),
                         .delay_s = mode > 0 ? 0 : delay_s};
}

bool progress_line_due(ProgressLine *pl) {
    if (!pl->on) return false;
    double t = now_s();
    if (t - pl->start < pl->delay_s) return false;
    if (pl->shown && t - pl->last < (pl->tty ? 0.1 : 1.0)) return false;
    pl->last = t;
    return true;
}

void progress_line_print(ProgressLine *pl, const char *fmt, ...) {
    if (pl->tty) fputc('\r', stderr);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs(pl->tty ? "\033[K" : "\n", stderr);
    fflush(stderr);
    pl->shown = true;
}

void progress_line_end(ProgressLine *pl) {
    if (pl->shown && pl->tty) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
    }
    pl->shown = false;
}
