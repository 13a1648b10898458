/* llvm_render.h - internal to core/backend: the renderer's entry point and
 * the kernel signature it reports.  LLVM handles are spelled as their opaque
 * struct pointers so that this header needs no LLVM include. */
#ifndef UOPDB_LLVM_RENDER_H
#define UOPDB_LLVM_RENDER_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "../ir/uop.h"

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

typedef struct KernelSignature {
    int nbuf, nvar;
    KernelBufferInfo *bufs;   /* malloc'd, ABI order */
    KernelVarInfo *vars;      /* malloc'd, ABI order */
} KernelSignature;

void kernel_signature_free(KernelSignature *sig);

/* The name of the generated wrapper `void <name>__entry(void **bufs,
 * const int32_t *vars, int32_t core_id)` that calls the kernel; written into
 * out (truncated to outlen). */
void llvm_entry_name(const char *kernel_name, char *out, size_t outlen);

/* Builds, in ctx, a module holding the kernel function `name` and its entry
 * wrapper, and verifies it.  On failure returns false with a message in err
 * and *out == NULL. */
bool llvm_render_program(struct LLVMOpaqueContext *ctx, const char *name, const UOp *const *lst, size_t n,
                         struct LLVMOpaqueModule **out, KernelSignature *sig, char *err, size_t errlen);

#endif
