/* parallel.h - runs n pieces of work on n threads (pthreads): piece 0 on the
 * calling thread, the others on threads started for the call and joined
 * before it returns.  Kernels split across cores (a THREAD axis, rendered as
 * core_id) run this way.  Starting threads per call costs tens of
 * microseconds, small next to the kernels worth splitting; a persistent pool
 * can replace it behind the same function. */
#ifndef UOPDB_PARALLEL_H
#define UOPDB_PARALLEL_H

/* fn(ud, i) for i in 0..n-1, concurrently; returns when all have returned.
 * If a thread cannot be started, its piece runs on the calling thread. */
void parallel_for(int n, void (*fn)(void *ud, int i), void *ud);
/* the number of online CPU cores (at least 1) */
int parallel_cores(void);

#endif
