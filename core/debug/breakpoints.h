/* breakpoints.h - stop at the rewrite that matters: a breakpoint names a
 * rule, an op, a node, or a predicate on the rewrite's nodes, and
 * dbg_continue finds the next rewrite of a kernel's pipeline, across
 * stages, that hits one.  A rewrite hits
 *   rule NAME   when its rule is named NAME,
 *   op OP       when the node it rewrote or the node it made is an OP,
 *   node ID     when the node it rewrote or the node it made has node ID
 *               among its sources, transitively (or is it),
 *   when        when the predicate returns true for (before, after). */
#ifndef UOPDB_BREAKPOINTS_H
#define UOPDB_BREAKPOINTS_H
#include <stdbool.h>
#include <stddef.h>
#include "pipeline.h"

typedef enum BreakKind { BREAK_RULE, BREAK_OP, BREAK_NODE, BREAK_WHEN } BreakKind;

/* 1 hit, 0 no hit, -1 error (message in err) */
typedef int (*BreakWhenFn)(void *ud, const UOp *before, const UOp *after, char *err, size_t errlen);

typedef struct Breakpoint {
    int id;                 /* from 1, never reused in a list */
    BreakKind kind;
    char *rule;             /* BREAK_RULE (owned) */
    Op op;                  /* BREAK_OP */
    unsigned node;          /* BREAK_NODE */
    BreakWhenFn when;       /* BREAK_WHEN */
    void *ud;
    void (*ud_free)(void *ud);
    char *text;             /* how it prints: "rule mul_to_add" (owned) */
} Breakpoint;

typedef struct BreakList {
    Breakpoint *items;
    int n, cap, next_id;
} BreakList;

void breaks_init(BreakList *bl);
void breaks_free(BreakList *bl);
/* Adds a copy of bp (rule copied; ud owned from now on); returns its id, 0 when out of memory. */
int breaks_add(BreakList *bl, const Breakpoint *bp);
bool breaks_delete(BreakList *bl, int id);

typedef struct BreakHit {
    int stage;
    size_t rewrite;         /* from 1: the point after it */
    int id;                 /* the breakpoint */
} BreakHit;

/* From the point (stage, rewrite; rewrite -1 for the whole stage), the
 * next rewrite that hits a breakpoint.  Returns 1 with *hit, 0 when the
 * pipeline ends without a hit, -1 on error (a stage or a predicate failed). */
int dbg_continue(KernelPipeline *kp, const BreakList *bl, int stage, long rewrite, BreakHit *hit, char *err,
                 size_t errlen);

#endif
