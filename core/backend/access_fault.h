/* access_fault.h - an access outside a buffer, as every executor reports
 * it: the compiled kernel with bounds checks, the linear interpreter (and
 * GPU emulator) and the kernel-AST interpreter fill the same record, and
 * one function words it, so a wrong index reads the same whichever ran it:
 *   "INDEX %41 reads 4 elements of buffer 1 (input0) at 12, past its 9
 *    elements (gidx0=1, r0=1, r2=0)"
 * where gidx0 is the SPECIAL that numbers the cores (or work groups) and
 * r0, r2 the open loops, named as listings name them. */
#ifndef UOPDB_ACCESS_FAULT_H
#define UOPDB_ACCESS_FAULT_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "../ir/uop.h"

#define ACCESS_FAULT_LOOPS 16
typedef struct AccessFault {
    bool failed;
    bool store;               /* a STORE, else a LOAD */
    bool both;                /* read and written (an INDEX both loaded and stored through) */
    Op node_op;               /* the node whose address fell outside: an INDEX, or what computed the pointer */
    unsigned index_id;        /* that node */
    Op buffer_op;             /* OP_DEFINE_GLOBAL, OP_DEFINE_REG, OP_DEFINE_LOCAL; OP_NOOP if not known */
    int64_t buffer;           /* DEFINE_GLOBAL: its number (arg); otherwise the node id */
    int64_t index;            /* the element offset */
    int64_t size;             /* the buffer's elements */
    int width;                /* elements the access covers (more than 1 for a vector) */
    int32_t core_id;          /* a kernel split over cores: the core that failed (also among the loops, */
    int threads;              /* by its SPECIAL's name), of threads */
    int nranges;              /* the thread indices and open loops, outermost first (at most ACCESS_FAULT_LOOPS) */
    unsigned range_id[ACCESS_FAULT_LOOPS];      /* the SPECIAL or RANGE node */
    char range_name[ACCESS_FAULT_LOOPS][24];
    int64_t range_value[ACCESS_FAULT_LOOPS];
} AccessFault;

/* Adds an open loop (or a thread index) with its value; ignored past
 * ACCESS_FAULT_LOOPS. */
void access_fault_add_loop(AccessFault *f, unsigned id, const char *name, int64_t value);
/* The same for the RANGE or SPECIAL node loop, named by loop_label
 * (core/ir/range_arg.h): r0, r1_2, gidx0. */
void access_fault_add_node(AccessFault *f, const UOp *loop, int64_t value);
/* The words for f (or "every access was inside its buffer" when it did not
 * fail); buffer_name (may be NULL) is added after a DEFINE_GLOBAL's number. */
void access_fault_message(const AccessFault *f, const char *buffer_name, char *out, size_t outlen);
#endif
