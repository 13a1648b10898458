/* backend.h - the CPU backend: a linear program (the toposorted UOp list
 * that stage 22 produces) is rendered to LLVM IR, optimised for the host CPU
 * and JIT-compiled; the resulting Kernel runs on caller-owned buffers.
 *
 * Kernel ABI: void name(T0 *buf0, T1 *buf1, ..., int32 var0, ..., int32 core_id)
 * with buffers in DEFINE_GLOBAL arg order, then the DEFINE_VARs in order of
 * appearance, then core_id (0 when not parallel); a checked kernel takes a
 * last hidden argument, the report it fills when an access fails.
 *
 * Interrupts: every kernel polls the process-wide interrupt flag
 * (core/util/interrupt.h) at its outermost loops (per iteration of a loop
 * with loops inside, per chunk of 65536 iterations of a long loop without)
 * and returns early when it is set; the run functions then fail with
 * "interrupted".  The flag is not cleared here: whoever starts work does.
 *
 * Semantics the renderer guarantees beyond LLVM's: integer IDIV truncates
 * toward zero and MOD is the C remainder; a division or remainder by zero
 * gives 0 and INT_MIN / -1 wraps, so no input can trap the process. */
#ifndef UOPDB_BACKEND_H
#define UOPDB_BACKEND_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "../ir/uop.h"
#include "access_fault.h"

typedef struct Kernel Kernel;

/* Renders, optimises (default<O2> for the host) and JIT-compiles a linear
 * program.  Returns NULL with a message in err (naming the op and node id,
 * e.g. "THREEFRY %12: ...") when the program cannot be compiled. */
Kernel *kernel_compile(const char *name, const UOp *const *lst, size_t n, char *err, size_t errlen);
void kernel_free(Kernel *k);

/* Checked kernels: every LOAD and STORE whose address is an INDEX into a
 * buffer of known size (a DEFINE_GLOBAL, DEFINE_REG or DEFINE_LOCAL pointer
 * dtype's size) checks, when its gate is true, that the elements it touches
 * lie inside the buffer.  An access outside does not touch memory: the
 * kernel stops and the run fails with a message naming the INDEX, in
 * access_fault.h's words, e.g. "INDEX %41 reads buffer 1 at 12, past its
 * 9 elements (r0=1, r1=2, r2=0)". */
typedef struct KernelCompileOpts {
    bool checked;
} KernelCompileOpts;
/* kernel_compile with options (NULL: none) */
Kernel *kernel_compile_opts(const char *name, const UOp *const *lst, size_t n, const KernelCompileOpts *opts, char *err,
                            size_t errlen);
bool kernel_is_checked(const Kernel *k);

/* Runs all core_ids of a checked kernel (as kernel_run_parallel does) and
 * fills rep (failed = false when every access was inside its buffer; the
 * lowest core_id's failure otherwise).  False with a message on a failed
 * check, an interrupt or bad arguments. */
bool kernel_run_checked(Kernel *k, void **bufs, const int32_t *vars, AccessFault *rep, char *err, size_t errlen);

const char *kernel_name(const Kernel *k);
/* Buffers in ABI order: element dtype of the pointer (e.g. float32 or
 * float32.vec(4)), element count (-1 if the pointer has no size) and the
 * DEFINE_GLOBAL arg. */
int kernel_num_buffers(const Kernel *k);
const DType *kernel_buffer_dtype(const Kernel *k, int i);
int64_t kernel_buffer_size(const Kernel *k, int i);
int64_t kernel_buffer_arg(const Kernel *k, int i);
/* Variables (DEFINE_VAR) in ABI order, with their declared bounds. */
int kernel_num_vars(const Kernel *k);
const char *kernel_var_name(const Kernel *k, int i);
void kernel_var_bounds(const Kernel *k, int i, int64_t *lo, int64_t *hi);

/* Runs once with core_id 0.  bufs has kernel_num_buffers entries, vars
 * kernel_num_vars (may be NULL when there are none).  Variable values outside
 * their declared bounds and NULL buffers are refused with a message; a
 * checked kernel's failed check and an interrupt are errors too. */
bool kernel_run(Kernel *k, void **bufs, const int32_t *vars, char *err, size_t errlen);
/* The same with an explicit core_id (for a thread pool). */
bool kernel_run_core(Kernel *k, void **bufs, const int32_t *vars, int32_t core_id, char *err, size_t errlen);

/* How many core_ids the kernel is split over: the size of its SPECIAL
 * (a THREAD axis); 1 when it is not split. */
int kernel_threads(const Kernel *k);
/* Runs core_ids 0..kernel_threads-1 concurrently (parallel.h) and returns
 * when all are done; the same as kernel_run for a kernel that is not split. */
bool kernel_run_parallel(Kernel *k, void **bufs, const int32_t *vars, char *err, size_t errlen);

/* LLVM IR text before (as rendered) or after optimisation. */
const char *kernel_ir(const Kernel *k, bool optimised);
/* Host assembly of the optimised module, computed on the first call; NULL
 * if code generation failed. */
const char *kernel_asm(Kernel *k);
/* PTX assembly of a linear program (the instructions of a LINEAR), rendered
 * as a GPU kernel for LLVM's NVPTX backend (llvm_ptx.c); malloc'd, or NULL
 * with a message in err (no NVPTX target, a node it cannot render). */
char *kernel_ptx(const char *name, const UOp *const *lst, size_t n, char *err, size_t errlen);

/* Times in milliseconds: total = render + optimise + JIT (code generation
 * happens at symbol lookup). */
double kernel_compile_ms(const Kernel *k);
void kernel_compile_times(const Kernel *k, double *render_ms, double *optimise_ms, double *jit_ms);

/* The host CPU name, target triple and CPU features ("+avx2,-avx512f,...")
 * the backend compiles for. */
const char *backend_host_cpu(void);
const char *backend_host_triple(void);
const char *backend_host_features(void);

/* ---- buffers (core/backend/buffer.c) ---- */
#define BACKEND_BUFFER_ALIGN 64
/* The largest host buffer buffer_alloc makes: 16 GiB.  Larger requests are
 * refused (NULL) before anything is allocated. */
#define BUFFER_HOST_LIMIT_BYTES ((int64_t)16 << 30)
#define BUFFER_HOST_LIMIT_TEXT "16 GiB"
/* Zeroed, 64-byte aligned storage for count elements of dt (at least one
 * byte); NULL on overflow, above BUFFER_HOST_LIMIT_BYTES or out of memory.
 * The zeroes are lazy: a large buffer commits a page only when it is
 * written.  Free with buffer_free. */
void *buffer_alloc(const DType *dt, int64_t count);
void buffer_free(void *p);
/* Element k of a buffer of scalar dtype dt, as a double. */
double buffer_read_double(const DType *dt, const void *p, size_t k);
/* Bytes of count elements of dt, or -1 on overflow / bad input. */
int64_t buffer_bytes(const DType *dt, int64_t count);
/* bfloat16 storage: the top half of a float32, rounded to nearest even
 * (NaN stays NaN); held as raw bits since C has no bfloat16 type. */
uint16_t bf16_from_double(double v);
double bf16_to_double(uint16_t bits);

#endif
