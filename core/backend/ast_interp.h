/* ast_interp.h - runs a kernel AST as the scheduler makes it, without the
 * codegen stages: SINK / END / STORE / INDEX on DEFINE_GLOBAL / RANGE /
 * REDUCE (ADD, MAX, MUL) / ALU ops / CAST / WHERE with Invalid gates /
 * CONST (LOAD of an INDEX is accepted too).  Ranges are iterated in nested
 * loops; values are computed with the tensor reference's semantics (floats
 * rounded to their dtype after every op, ints wrapped), so results agree
 * with ref_eval.  Both branches of a WHERE are evaluated, as generated code
 * does, so a load is only safe by its own gate.  Every buffer access is
 * bounds-checked: an index outside the buffer is an error naming the INDEX
 * node and the open loops in access_fault.h's words, never a crash; an Invalid index reads 0 and stores nothing.  Each
 * loop and reduce iteration polls the interrupt flag: Ctrl-C stops it with
 * "interrupted". */
#ifndef UOPDB_AST_INTERP_H
#define UOPDB_AST_INTERP_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "../ir/uop.h"
#include "access_fault.h"

/* Runs kernel_sink on bufs (bufs[i] is DEFINE_GLOBAL i's storage, laid out
 * in the pointer's element dtype, buf_sizes[i] elements).  False with a
 * message naming the node on error. */
bool ast_interp_run(const UOp *kernel_sink, void **bufs, const int64_t *buf_sizes, int nbufs, char *err,
                    size_t errlen);
/* The same, and when the run stopped on an access outside a buffer, fault
 * says where (fault->failed; the message is access_fault.h's). */
bool ast_interp_run_fault(const UOp *kernel_sink, void **bufs, const int64_t *buf_sizes, int nbufs, AccessFault *fault,
                          char *err, size_t errlen);

#endif
