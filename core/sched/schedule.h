/* schedule.h - the scheduler: a tensor graph (a SINK of tensor nodes built
 * from BUFFER, CONST, movement ops, ALU ops, REDUCE_AXIS, CONTIGUOUS) becomes
 * a program of kernels, following tinygrad v0.12.0's rangeify:
 *
 *   1 realize          decide what is materialised (outputs, CONTIGUOUS, a
 *                      reduction whose result is expanded or otherwise
 *                      re-indexed) and mark it
 *   2 rangeify         movement ops become index arithmetic on RANGEs; each
 *                      materialised node becomes a BUFFERIZE over its ranges
 *                      (less those its value does not use: cleanup_dead_axes)
 *   3 bufferize to store   BUFFERIZE becomes a STORE into a buffer, ended
 *                      over its ranges
 *   4 split kernels    each store becomes a kernel: SINK(END(STORE(INDEX(
 *                      DEFINE_GLOBAL...)...), RANGE...)) in v0.12.0's form
 *   5 program          kernels ordered in Kahn generations (a generation's
 *                      kernels do not depend on each other), buffers named
 *                      input{n} / tmp{n} / output{n}, each tmp allocated
 *                      before the first kernel that uses it and freed after
 *                      the last
 *
 * Every step is kept (root before and after, a trace of what it did, time),
 * so the user can stop at it and look. */
#ifndef UOPDB_SCHEDULE_H
#define UOPDB_SCHEDULE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "../ir/uop.h"
#include "../rewrite/trace.h"
#include "../util/strbuf.h"

typedef enum SchedBufKind { SBUF_INPUT, SBUF_TMP, SBUF_OUTPUT } SchedBufKind;

typedef struct SchedBuffer {
    char name[24];            /* input0, tmp0, output0 */
    SchedBufKind kind;
    const DType *dtype;       /* element dtype (float32) */
    int64_t size;             /* elements */
    const UOp *source;        /* INPUT: the tensor graph's BUFFER node;
                                 TMP/OUTPUT: the tensor node materialised here, or,
                                 when its value does not use some of its axes, that
                                 node SHRINKed to index 0 on them (stored once) */
    int first_kernel;         /* index of the first kernel that uses it (-1: none) */
    int last_kernel;          /* index of the last kernel that uses it */
} SchedBuffer;

typedef struct SchedKernel {
    char name[48];            /* tinygrad style: r_3_3_3 (reduce), E_100_100 (elementwise), unique */
    const UOp *ast;           /* SINK(END(STORE(INDEX(DEFINE_GLOBAL 0, ...), value), RANGE...)) */
    int nbufs;
    int *bufs;                /* program buffer index of DEFINE_GLOBAL arg i */
    int generation;           /* Kahn generation, from 0 */
} SchedKernel;

typedef struct SchedStep {
    const char *name;         /* "rangeify" (static) */
    const char *purpose;      /* one line (static) */
    const UOp *before, *after;/* the graph before and after the step */
    Trace trace;              /* passes and rewrites of the step */
    double ms;
} SchedStep;

typedef struct Schedule {
    SchedStep steps[5];
    int nsteps;
    SchedKernel *kernels;     /* in execution order (generation by generation) */
    int nkernels;
    SchedBuffer *bufs;
    int nbufs;
    int ngenerations;
    int *outputs;             /* buffer index of each source of the input SINK */
    const UOp **output_held;  /* by source: the node of the SINK as given that its buffer
                                 holds: the source, or the work under its movement ops (the
                                 source is a view of it), SHRINKed to index 0 on the axes the
                                 work does not use when it is stored once along them */
    int noutputs;
} Schedule;

/* Schedules sink (a SINK whose sources are the tensors to compute).  NULL
 * with a message in err naming the node when the graph cannot be scheduled
 * (a shape error, an op the scheduler does not know). */
Schedule *schedule_build(UCtx *c, const UOp *sink, char *err, size_t errlen);
void schedule_free(Schedule *s);
/* Marks every node the schedule holds (steps, kernels, buffers' sources),
 * for a compaction of its context (uop.h). */
void schedule_mark(const Schedule *s, UCtxMarks *m);

/* A program of the one kernel ast (a kernel AST as the scheduler or tinygrad
 * makes it, stepped and run without a tensor graph): a buffer per
 * DEFINE_GLOBAL (output when stored to, input otherwise) whose source is
 * the DEFINE_GLOBAL.  NULL + err when ast is not such a kernel. */
Schedule *schedule_from_kernel(UCtx *c, const UOp *ast, const char *name, char *err, size_t errlen);

/* The program as text: buffers, then per generation the allocations, the
 * kernel calls with their buffer names, and the frees:
 *   input0  float32[9]   input1 float32[9]   output0 float32[9]
 *   generation 0
 *     r_3_3_3(output0, input0, input1)
 * opt_names, when given, holds each kernel's name once its opts are applied
 * (or NULL); a name that differs from the one as scheduled follows the call:
 *     r_512_512_512(output0, input0, input1)  # r_128_128_4_4_128_4 with its opts
 */
void schedule_format(StrBuf *sb, const Schedule *s, const char *const *opt_names);

#endif
