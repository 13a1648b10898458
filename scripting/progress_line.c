/* progress_line.c - see progress_line.h. */
#include "progress_line.h"
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

struct ProgressTicker {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    bool stop, shown;
    double start, delay_s;
    char text[256], line[300]; /* the text set, and the line last written */
};

static void *ticker_run(void *arg) {
    ProgressTicker *t = arg;
    pthread_mutex_lock(&t->lock);
    while (!t->stop) {
        double elapsed = now_s() - t->start;
        char line[sizeof t->line];
        snprintf(line, sizeof line, "%s (%.0f s; Ctrl-C stops)", t->text, elapsed);
        /* written when it says something new: another step, another second */
        if (elapsed >= t->delay_s && t->text[0] && strcmp(line, t->line)) {
            fprintf(stderr, "\r%s\033[K", line);
            fflush(stderr);
            memcpy(t->line, line, sizeof line);
            t->shown = true;
        }
        /* a tenth of a second, or until stopped */
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += 100000000L;
        if (until.tv_nsec >= 1000000000L) until.tv_sec++, until.tv_nsec -= 1000000000L;
        pthread_cond_timedwait(&t->wake, &t->lock, &until);
    }
    pthread_mutex_unlock(&t->lock);
    return NULL;
}

ProgressTicker *progress_ticker_start(double delay_s) {
    if (!isatty(2)) return NULL;
    ProgressTicker *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->start = now_s();
    t->delay_s = delay_s;
    pthread_mutex_init(&t->lock, NULL);
    pthread_cond_init(&t->wake, NULL);
    /* the thread starts with every signal blocked, so Ctrl-C goes to the work */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int failed = pthread_create(&t->thread, NULL, ticker_run, t);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (failed) {
        pthread_cond_destroy(&t->wake);
        pthread_mutex_destroy(&t->lock);
        free(t);
        return NULL;
    }
    return t;
}

void progress_ticker_set(ProgressTicker *t, const char *text) {
    if (!t) return;
    pthread_mutex_lock(&t->lock);
    snprintf(t->text, sizeof t->text, "%s", text);
    pthread_mutex_unlock(&t->lock);
}

void progress_ticker_stop(ProgressTicker *t) {
    if (!t) return;
    pthread_mutex_lock(&t->lock);
    t->stop = true;
    pthread_cond_signal(&t->wake);
    pthread_mutex_unlock(&t->lock);
    pthread_join(t->thread, NULL);
    if (t->shown) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
    }
    pthread_cond_destroy(&t->wake);
    pthread_mutex_destroy(&t->lock);
    free(t);
}
