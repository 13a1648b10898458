/* stack_guard.c - the stack budget of a recursive walk (see stack_guard.h). */
#include "stack_guard.h"
#include <sys/resource.h>

__attribute__((noinline)) void stack_guard_init(StackGuard *g) {
    g->base = (uintptr_t)__builtin_frame_address(0);
    g->budget = STACK_GUARD_BUDGET;
    struct rlimit rl;
    if (getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur / 2 < g->budget)
        g->budget = (size_t)rl.rlim_cur / 2;
}
