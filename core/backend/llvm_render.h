/* llvm_render.h - internal to core/backend: the renderer's entry point and
 * the kernel signature it reports.  LLVM handles are spelled as their opaque
 * struct pointers so that this header needs no LLVM include. */
#ifndef UOPDB_LLVM_RENDER_H
#define UOPDB_LLVM_RENDER_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "../ir/uop.h"
#include "backend.h"

struct LLVMOpaqueContext;
struct LLVMOpaqueModule;

typedef struct KernelBufferInfo {
    const DType *dtype;   /* element dtype (the pointer's base) */
    int64_t size;         /* elements, -1 if unknown */
    int64_t arg;          /* DEFINE_GLOBAL arg */
} KernelBufferInfo;

typedef struct KernelVarInfo {
    char *name;           /* malloc'd */
    int64_t lo, hi;
} KernelVarInfo;

/* A RANGE of the kernel, for reports: its node id and its name as the infix
 * renderer writes it (r0, r1_2). */
typedef struct KernelRangeInfo {
    unsigned id;
    char name[24];
} KernelRangeInfo;

/* A checked LOAD or STORE: what a failure at it reports. */
typedef struct KernelCheckSite {
    unsigned index_id;        /* the INDEX */
    bool store;
    Op buffer_op;             /* DEFINE_GLOBAL, DEFINE_REG, DEFINE_LOCAL; OP_NOOP if not found */
    int64_t buffer;           /* DEFINE_GLOBAL: its arg; otherwise the node id */
    int64_t size;             /* elements of the buffer */
    int width;                /* elements the access covers */
    int nranges;              /* the open loops, outermost first */
    int ranges[ACCESS_FAULT_LOOPS];   /* entries of KernelSignature.ranges */
} KernelCheckSite;

/* What a checked kernel writes when an access fails (the hidden last
 * parameter of the kernel and its entry; one per core_id).  Offsets are
 * fixed: the renderer writes the fields by offset. */
typedef struct KernelRawReport {
    int32_t failed;           /* 0, or 1 once an access failed (the kernel then returns) */
    int32_t site;             /* index into KernelSignature.sites */
    int64_t index;            /* the element offset */
    int64_t ranges[ACCESS_FAULT_LOOPS];   /* the open loops' counters, as the site lists them */
} KernelRawReport;

typedef struct KernelSignature {
    int nbuf, nvar;
    KernelBufferInfo *bufs;   /* malloc'd, ABI order */
    KernelVarInfo *vars;      /* malloc'd, ABI order */
    bool checked;             /* rendered with bounds checks */
    int nsites, nranges;
    KernelCheckSite *sites;   /* malloc'd; checked kernels */
    KernelRangeInfo *ranges;  /* malloc'd; checked kernels */
} KernelSignature;

void kernel_signature_free(KernelSignature *sig);

/* The global every kernel polls for interrupts; the JIT binds it to
 * uopdb_interrupt_flag() (an int, sig_atomic_t: nonzero = stop). */
#define LLVM_INTERRUPT_SYMBOL "uopdb.interrupt"

/* The name of the generated wrapper `void <name>__entry(void **bufs,
 * const int32_t *vars, int32_t core_id, KernelRawReport *report)` that calls
 * the kernel (report is ignored by a kernel without checks); written into
 * out (truncated to outlen). */
void llvm_entry_name(const char *kernel_name, char *out, size_t outlen);

/* Builds, in ctx, a module holding the kernel function `name` and its entry
 * wrapper, and verifies it; checked adds the bounds checks and the report
 * parameter.  On failure returns false with a message in err and
 * *out == NULL. */
bool llvm_render_program(struct LLVMOpaqueContext *ctx, const char *name, const UOp *const *lst, size_t n,
                         bool checked, struct LLVMOpaqueModule **out, KernelSignature *sig, char *err, size_t errlen);

/* The same program as a GPU kernel for LLVM's NVPTX backend: parameters
 * the buffers and variables only, SPECIAL gidx/lidx/idx read from the
 * block and thread ids (ctaid, tid; idx = ctaid * ntid + tid), DEFINE_LOCAL
 * an array in shared memory (address space 3), BARRIER bar.sync 0, the
 * function marked a kernel (nvvm.annotations), no interrupt polls. */
bool llvm_render_ptx_program(struct LLVMOpaqueContext *ctx, const char *name, const UOp *const *lst, size_t n,
                             struct LLVMOpaqueModule **out, char *err, size_t errlen);

#endif
