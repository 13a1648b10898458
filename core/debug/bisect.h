/* bisect.h - finds the rewrite that broke a kernel: the kernel is checked
 * at points 0..22 on the program's real data (one check session) and the
 * first point whose output differs from the reference is found, by binary
 * search between a right and a wrong point (a point stays wrong once wrong,
 * as it does for a wrong rewrite; `all` checks every point in order
 * instead); then
 * that stage's rewrites are bisected (apply the first r, check) down to the
 * single rewrite after which the output is wrong: its rule, where the rule
 * is written, its number in the stage, and the nodes before and after.  A
 * point that cannot be run is checked against the spec of its point
 * (core/stages/spec_verify.h): when its graph breaks it, the kernel itself
 * is broken there and the point is wrong, as is a point that reads or
 * writes outside a buffer; when its graph meets it, only the executors
 * fall short and the point is reported as not checked, with the reason.  A
 * stage that fails ends the search, and when no point before it is wrong
 * it is the verdict: the stage that breaks the kernel. */
#ifndef UOPDB_BISECT_H
#define UOPDB_BISECT_H
#include <stdbool.h>
#include "kernel_check.h"

typedef enum PointState {
    POINT_MATCHES,     /* ran; the output matches the reference */
    POINT_DIFFERS,     /* ran and the output differs, or wrong without running to the end: it
                        * accesses memory outside a buffer, or cannot be run and breaks its spec */
    POINT_NOT_CHECKED, /* could not be run, its graph meeting its spec (why says so) */
    POINT_NOT_REACHED, /* a stage before it failed */
    POINT_FAILED,      /* the stage itself failed (text: its error) */
    POINT_SKIPPED      /* not needed for the verdict */
} PointState;

typedef struct PointCheck {
    PointState state;
    ValidateReport rep; /* POINT_MATCHES / POINT_DIFFERS */
    char *text;         /* the validation report, or why it was not checked (malloc'd) */
    char *access;       /* wrong because its run accessed memory outside a buffer: where (malloc'd), else NULL */
    char *spec;         /* wrong because it cannot be run and its graph breaks its spec: the
                         * verifier's message (malloc'd), else NULL */
} PointCheck;

typedef struct BisectCulprit {
    bool found;
    size_t index;             /* the rewrite's number in its stage, from 1 */
    size_t of;                /* the stage's rewrites */
    char *rule, *file;        /* the rule's name and file (malloc'd) */
    int line;
    const UOp *before, *after;
    int checked;              /* rewrite points checked */
    char *why;                /* when not found: why (malloc'd) */
    char *effect;             /* when found and the point after it accesses memory
                               * outside a buffer: that access (malloc'd), else NULL */
    char *spec;               /* when found and the point after it cannot be run and
                               * breaks its spec: the verifier's message (malloc'd), else NULL */
} BisectCulprit;

typedef struct BisectResult {
    int first_bad;                        /* -1: no checked point differs and no stage failed */
    bool failed;                          /* first_bad is a stage that failed, the points
                                           * before it right (its rewrites before the failure
                                           * are in pipeline_failure) */
    BisectCulprit culprit;                /* within stage first_bad (when >= 1) */
    int checked;                          /* points judged: ran, or wrong without running */
    int unchecked;                        /* points that could not be checked (POINT_NOT_CHECKED) */
    PointCheck points[STAGE_COUNT + 1];   /* by point 0..22 */
} BisectResult;

/* Told before each check (a long bisect runs the kernel many times): what
 * is about to be checked ("stage 12", "rewrite 11 of 21 in stage 15") and
 * how many checks ran so far.  Returning false stops the bisect. */
typedef bool (*BisectProgressFn)(void *ud, const char *what, int checked);
typedef struct BisectProgress {
    BisectProgressFn fn;
    void *ud;
} BisectProgress;

/* Bisects kernel ki, its linear points run as `how` says (kernel_check.h);
 * false only when out of memory, interrupted (Ctrl-C or the progress
 * function said stop) or the inputs cannot be made (err says why).
 * progress may be NULL.  Free with bisect_result_free. */
bool dbg_bisect(const Schedule *s, KernelPipeline *const *kps, int ki, RefBufferFn inputs, void *ud, double atol,
                double rtol, bool all, CheckExecutor how, const BisectProgress *progress, BisectResult *out, char *err,
                size_t errlen);
void bisect_result_free(BisectResult *r);

/* The verdict, the culprit (with its nodes as the caller renders them,
 * when given), the first mismatching elements and a line per point, as
 * `:bisect` prints it. */
void bisect_format(const BisectResult *r, const char *kernel_name, const char *before_text, const char *after_text,
                   StrBuf *sb);

#endif
