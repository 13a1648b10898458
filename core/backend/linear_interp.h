/* linear_interp.h - runs a linear program (the instruction list of a LINEAR
 * node, as stages 21 and 22 make it, or as stages 20 and 21 make it from
 * any point from stage 11 on) without compiling it, every access checked.
 *
 * The instructions are executed in order, with the meaning the LLVM
 * renderer gives them: RANGE opens a loop that its END closes (an END of
 * several ranges closes them innermost first), IF skips to its ENDIF when
 * its gate is false, DEFINE_REG and DEFINE_LOCAL are arrays (zeroed: a
 * DEFINE_LOCAL per workgroup, a DEFINE_REG per work item), INDEX is a pointer (buffer and
 * element; a gate source or an Invalid index makes it gated off), LOAD
 * reads through it (its alt value, or 0, when gated off), STORE writes
 * through it (nothing when gated off), AFTER is its first source; vectors
 * are computed lane by lane with the scalar semantics of scalar_eval.h.
 * Forms from before stage 15 are accepted too: the `index` dtype, Invalid
 * indices, vectors of pointers (gathers and scatters), and value INDEX
 * nodes (before stage 13), which load their element when executed and are
 * a STORE's target as well.
 *
 * SPECIALs make it a GPU emulator: each SPECIAL name is a dim, "lidx..."
 * a work-item dim and any other ("gidx...", "idx...", a CPU kernel's core_id)
 * a workgroup dim.  The program runs once per workgroup, one after the
 * other; the work items of a workgroup each have their own values, loops
 * and registers and run in turn up to each BARRIER, which all of them must
 * reach before any goes on (one that some work items never reach is an
 * error).  With one work item per workgroup (a CPU kernel split over cores:
 * its core_ids) the program runs straight through.
 *
 * Every INDEX executed is checked against its buffer (and every LOAD and
 * STORE wider than one element): an access outside it is an error naming
 * the INDEX node, the buffer, the element, the size and the loop variables
 * at that moment, in access_fault.h's words (as a compiled kernel with
 * bounds checks says it), never a crash.  Other messages start with
 * "interp: ".  The
 * work is bounded: past the instruction budget, or when the process-wide
 * interrupt flag is set (core/util/interrupt.h, Ctrl-C), the run stops with
 * an error. */
#ifndef UOPDB_LINEAR_INTERP_H
#define UOPDB_LINEAR_INTERP_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "../ir/uop.h"
#include "access_fault.h"

/* Runs a linear program (the sources of a LINEAR node, in order) on bufs
 * (bufs[i] is DEFINE_GLOBAL i's storage in its element dtype, sizes[i]
 * elements).  False with a one-line message naming the node on error. */
bool linear_interp_run(const UOp *linear, void **bufs, const int64_t *sizes, int nbufs, char *err, size_t errlen);
/* The same, and when the run stopped on an access outside a buffer, fault
 * says where (fault->failed; the message is access_fault.h's). */
bool linear_interp_run_fault(const UOp *linear, void **bufs, const int64_t *sizes, int nbufs, AccessFault *fault,
                             char *err, size_t errlen);

/* The most instructions one run (all its core_ids) may execute; 0 restores
 * the default, 2^34.  Process-wide. */
void linear_interp_set_budget(uint64_t max_instructions);

#endif
