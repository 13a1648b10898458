/* beam_search.h - tinygrad v0.12.0's BEAM search over a kernel's opts, for
 * the CPU.  Starting from the kernel with no opts, each round takes every
 * opt sequence in the beam and tries each action of v0.12.0's action space
 * that stage 7 accepts here (UPCAST, UNROLL, THREAD; LOCAL, GROUP, TC and
 * the others need a GPU and are refused, so they are not generated) as one
 * opt more; each new candidate is compiled through stages 8-22 and LLVM and
 * timed through the JIT (best of 3 runs) on scratch buffers shaped like the
 * kernel's; the `width` fastest become the next beam, and the search stops
 * when a round finds nothing faster.  It also stops, keeping the best found,
 * when the time budget is spent or the interrupt flag is set (Ctrl-C).
 * Results are kept in a disk cache (beam_cache.h). */
#ifndef UOPDB_BEAM_SEARCH_H
#define UOPDB_BEAM_SEARCH_H
#include <stdbool.h>
#include <stddef.h>
#include "pipeline.h"

#define BEAM_MAX_OPTS 32
#define BEAM_MAX_WIDTH 64

/* Where a search stands, handed to BeamOptions.progress after each
 * candidate. */
typedef struct BeamProgress {
    int width;
    int round;              /* 1.. */
    int tried;              /* candidates looked at (timed or refused) */
    int total;              /* candidates generated so far */
    double best_ms;         /* INFINITY before the first timing */
    const KernelOpt *best;  /* the opts of best_ms */
    int nbest;
    double elapsed_s;
} BeamProgress;

typedef struct BeamOptions {
    int width;              /* candidates kept per round: 1..BEAM_MAX_WIDTH */
    double budget_s;        /* > 0: stop after this many seconds; 0: no limit */
    int threads;            /* cores a THREAD opt may use; below 2: no THREAD candidates */
    bool cache;             /* read and write the disk cache */
    const char *cache_dir;  /* NULL: beam_cache_dir() */
    int runs;               /* timed runs per candidate, the best kept (0: 3) */
    void (*progress)(const BeamProgress *p, void *ud); /* NULL: none */
    void *ud;
} BeamOptions;

typedef struct BeamResult {
    KernelOpt opts[BEAM_MAX_OPTS];
    int nopts;
    double best_ms;         /* the chosen opts' time (on a cache hit: as stored) */
    double before_ms;       /* the opts the kernel had, timed first; NAN on a cache hit or when they failed */
    int candidates;         /* candidates generated */
    int timed;              /* candidates compiled and timed */
    int rounds;
    bool cache_hit;
    bool cache_written;
    char cache_note[256];   /* why the cache was not written or read, or "" */
    bool interrupted;       /* stopped by the interrupt flag */
    bool budget_spent;      /* stopped by the budget */
    bool kept_before;       /* stopped early with nothing faster than the opts the kernel had: opts are those */
    double elapsed_s;
} BeamResult;

/* Searches opts for kernel kp (its point 6, with its pipeline options);
 * the opts kp has are timed first (before_ms) and kp itself is not
 * changed.  A search stopped early (interrupt, budget) that found nothing
 * faster than the opts the kernel had gives those back (kept_before).
 * False + err only when the kernel cannot be searched at all
 * (its stages 1-6 fail, no scratch buffer can be made); candidates that
 * stage 7 refuses or that fail to compile are skipped. */
bool beam_search(KernelPipeline *kp, const BeamOptions *o, BeamResult *r, char *err, size_t errlen);

/* Sets kp's opts to the result's, with the reason "beam N: ..." that
 * k:opts() shows; false when out of memory. */
bool beam_apply(KernelPipeline *kp, int width, const BeamResult *r);

/* "0.82 ms", "37.5 us", "120 ns" ("-" when not finite) */
void beam_format_ms(double ms, char *out, size_t len);
/* "UPCAST 1 4, UNROLL 0 4" ("no opts" for none) */
void beam_format_opts(const KernelOpt *opts, int n, char *out, size_t len);

#endif
