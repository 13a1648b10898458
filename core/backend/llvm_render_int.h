/* llvm_render_int.h - internal to the LLVM renderer: its state, shared by
 * llvm_render.c (the nodes) and llvm_checks.c (loops with their interrupt
 * polls, and the bounds checks of checked kernels). */
#ifndef UOPDB_LLVM_RENDER_INT_H
#define UOPDB_LLVM_RENDER_INT_H
#include "llvm_render.h"

#include <llvm-c/Core.h>

/* ---- a pointer-keyed map from UOp to its rendered value ---- */

typedef struct ValEntry {
    const UOp *key;
    LLVMValueRef val;    /* NULL for nodes without a value (STORE, END, ...) */
    LLVMValueRef gate;   /* INDEX with a gate: the i1 gate */
    LLVMValueRef offset; /* INDEX with an index: the element offset (its source 1) */
    LLVMValueRef addr;   /* a value INDEX: the address it loads from, where a STORE through it writes */
} ValEntry;

typedef struct ValMap {
    ValEntry *e;
    size_t cap, len;
} ValMap;

ValEntry *lr_map_find(const ValMap *m, const UOp *k);

/* ---- renderer state ---- */

typedef struct Block {          /* an open RANGE loop or IF */
    const UOp *op;
    LLVMValueRef counter;       /* RANGE: the PHI */
    LLVMBasicBlockRef header;   /* RANGE: loop header */
    LLVMBasicBlockRef exit;     /* RANGE: after the loop; IF: after the body */
    /* a RANGE run in chunks (a long loop without inner loops, polled per
     * chunk): the chunk's start PHI, its header, the block after a chunk
     * and the chunk's end */
    LLVMValueRef chunk;
    LLVMBasicBlockRef chunk_head, chunk_next;
    LLVMValueRef chunk_end;
    int range_slot;             /* RANGE: its entry in the signature's ranges */
} Block;

typedef struct Render {
    LLVMContextRef ctx;
    LLVMModuleRef mod;
    LLVMBuilderRef b;           /* the current insertion point */
    LLVMBuilderRef ab;          /* allocas, in the first block */
    LLVMValueRef fn;
    LLVMValueRef core_id;
    ValMap vals;
    Block *stack;
    int depth, cap;
    const UOp **globals;        /* DEFINE_GLOBALs in ABI order */
    const UOp **vars;           /* DEFINE_VARs in ABI order */
    int nglob, nvar;
    /* loops and checks (llvm_checks.c) */
    const UOp **outer;          /* RANGEs with a RANGE inside them */
    int nouter;
    LLVMBasicBlockRef bail;     /* `ret void`, for an interrupt or a failed check; made on first use */
    bool checked;               /* bounds checks compiled in */
    bool ptx;                   /* for LLVM's NVPTX backend: a GPU kernel (llvm_ptx.c), no polls */
    LLVMValueRef report;        /* checked: the KernelRawReport pointer parameter */
    KernelSignature *sig;       /* sites and ranges are added as they are rendered */
    int cap_sites, cap_ranges;
    char *err;
    size_t errlen;
    bool failed;
} Render;

void lr_fail(Render *r, const UOp *u, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
LLVMBasicBlockRef lr_new_block(Render *r, const char *what, const UOp *u);
bool lr_push_block(Render *r, Block b);
/* The INDEX a LOAD/STORE address comes from, looking through pointer CASTs and AFTERs. */
const UOp *lr_address_index(const UOp *p);

/* ---- llvm_checks.c ---- */

/* Before rendering: which RANGEs have loops inside them. */
bool lr_scan_loops(Render *r, const UOp *const *lst, size_t n);
/* RANGE u with end value `end` opens a loop and returns its counter; END
 * closes the innermost open one.  Outermost loops poll the interrupt flag
 * (uopdb_interrupt_flag) and return early when it is set: per iteration
 * when they have inner loops, once before the loop otherwise; a long loop
 * without inner loops (an end that is not a constant <= 65536) runs in
 * chunks of 65536 iterations with a poll per chunk, so its inner loop stays
 * a plain counted loop that LLVM can vectorise. */
LLVMValueRef lr_open_loop(Render *r, const UOp *u, LLVMValueRef end, const char *nm);
void lr_close_loop(Render *r);
/* Checked kernels: before LOAD/STORE (or value INDEX) mem of value dtype vd (already inside
 * its gate), a check that the access lies within its buffer; outside, the
 * kernel fills the report and returns.  lane >= 0: the access through that
 * lane of a vector of pointers (its offset is that lane of the index). */
void lr_check_access(Render *r, const UOp *mem, const DType *vd, int lane);
/* lane l of the vector v */
LLVMValueRef lr_extract(Render *r, LLVMValueRef v, int l);

#endif
