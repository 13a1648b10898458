/* stack_guard.h - a measured stack budget for the recursive walks a user can
 * feed (a graph's depth is the user's to choose).  A walk starts a guard in
 * its entry function and asks at each level whether the stack it has used
 * since then is over budget; if so it stops with an error naming the depth
 * instead of overflowing the stack.  A budget in bytes rather than a fixed
 * depth count holds whatever a frame costs: sanitizers and -O0 make frames
 * several times larger.
 *
 *   StackGuard g;
 *   stack_guard_init(&g);              // in the entry function
 *   ...
 *   if (stack_guard_exceeded(&g)) return fail("graph too deep ...");
 *
 * The budget is half the stack limit (RLIMIT_STACK), at most
 * STACK_GUARD_BUDGET, so the rest of the program keeps the other half. */
#ifndef UOPDB_STACK_GUARD_H
#define UOPDB_STACK_GUARD_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define STACK_GUARD_BUDGET ((size_t)4 << 20)

typedef struct StackGuard {
    uintptr_t base;     /* the stack pointer where the walk started */
    size_t budget;      /* bytes the walk may use below base */
} StackGuard;

/* starts a guard at the caller's stack position (not inlined, so its own
 * frame is below the caller's: base is the caller's stack depth) */
void stack_guard_init(StackGuard *g);

/* whether the stack used since stack_guard_init is over the budget (the
 * stack grows down on every target this builds for) */
static inline bool stack_guard_exceeded(const StackGuard *g) {
    uintptr_t here = (uintptr_t)__builtin_frame_address(0);
    return g->base > here && g->base - here > g->budget;
}

#endif
