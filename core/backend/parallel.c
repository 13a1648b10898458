/* parallel.c - n pieces of work on n threads (see parallel.h). */
#include "parallel.h"

#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

typedef struct Piece {
    void (*fn)(void *ud, int i);
    void *ud;
    int i;
} Piece;

static void *run_piece(void *arg) {
    Piece *p = arg;
    p->fn(p->ud, p->i);
    return NULL;
}

void parallel_for(int n, void (*fn)(void *ud, int i), void *ud) {
    if (n <= 0) return;
    Piece *pieces = n > 1 ? calloc((size_t)n, sizeof *pieces) : NULL;
    pthread_t *tids = n > 1 ? calloc((size_t)n, sizeof *tids) : NULL;
    char *started = n > 1 ? calloc((size_t)n, 1) : NULL;
    if (n > 1 && (!pieces || !tids || !started)) {
        /* no memory for bookkeeping: run everything here */
        for (int i = 0; i < n; i++) fn(ud, i);
        free(pieces);
        free(tids);
        free(started);
        return;
    }
    for (int i = 1; i < n; i++) {
        pieces[i] = (Piece){fn, ud, i};
        started[i] = pthread_create(&tids[i], NULL, run_piece, &pieces[i]) == 0;
    }
    fn(ud, 0);
    for (int i = 1; i < n; i++) {
        if (started[i]) pthread_join(tids[i], NULL);
        else fn(ud, i);
    }
    free(pieces);
    free(tids);
    free(started);
}

int parallel_cores(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : (int)n;
}
