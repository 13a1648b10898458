/* interrupt.h - a process-wide request to stop long work (Ctrl-C in the
 * REPL).  The signal handler only sets a flag; the interpreters, the
 * reference, rewrites, bisection and JIT-compiled kernels (which read the
 * flag's address at their loop heads) poll it and stop with an error
 * saying "interrupted".  Whoever starts work clears it first. */
#ifndef UOPDB_INTERRUPT_H
#define UOPDB_INTERRUPT_H
#include <signal.h>
#include <stdbool.h>

/* async-signal-safe */
void uopdb_interrupt_request(void);
void uopdb_interrupt_clear(void);
bool uopdb_interrupted(void);
/* the flag itself, for generated code to load (an int: nonzero = stop) */
volatile sig_atomic_t *uopdb_interrupt_flag(void);

#endif
