/* llvm_ptx.c - PTX text of a linear program, through LLVM's NVPTX backend
 * (k:asm{target = "ptx"}): the program rendered as a GPU kernel
 * (llvm_render_ptx_program), optimised with default<O2> for an NVPTX target
 * machine (sm_70) and emitted as assembly.  Nothing runs on a GPU: the
 * text is for reading.  When the LLVM linked in has no NVPTX target, the
 * error says so.  Ops NVPTX has no instruction for (EXP2, LOG2, SIN, POW as
 * LLVM intrinsics: it would need a libm) are refused before rendering, and
 * LLVM's own errors during code generation are caught by a diagnostic
 * handler (LLVM's default one ends the process on an error) and returned. */
#include "backend.h"
#include "llvm_render.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>

#define PTX_TRIPLE "nvptx64-nvidia-cuda"
#define PTX_CPU "sm_70"

static pthread_once_t ptx_once = PTHREAD_ONCE_INIT;
static char ptx_error[256];

static void ptx_init(void) {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
    LLVMTargetRef t;
    char *msg = NULL;
    if (LLVMGetTargetFromTriple(PTX_TRIPLE, &t, &msg)) {
        snprintf(ptx_error, sizeof ptx_error, "LLVM has no NVPTX target: %s", msg ? msg : "(no message)");
    }
    LLVMDisposeMessage(msg);
}

/* the first error LLVM reports while it works on the module */
typedef struct Diag {
    char msg[256];
    bool failed;
} Diag;

static void on_diagnostic(LLVMDiagnosticInfoRef info, void *ud) {
    Diag *d = ud;
    if (LLVMGetDiagInfoSeverity(info) != LLVMDSError || d->failed) return;
    char *text = LLVMGetDiagInfoDescription(info);
    snprintf(d->msg, sizeof d->msg, "%s", text ? text : "(no message)");
    LLVMDisposeMessage(text);
    d->failed = true;
}

/* an op LLVM would render as an intrinsic that NVPTX cannot lower */
static const UOp *without_ptx_instruction(const UOp *const *lst, size_t n) {
    for (size_t i = 0; i < n; i++) {
        Op op = uop_op(lst[i]);
        const DType *d = lst[i]->dtype;
        bool f32 = d->sk == SK_FLOAT32 || d->sk == SK_FLOAT64;
        if (op == OP_EXP2 || op == OP_LOG2 || op == OP_SIN || op == OP_POW) return lst[i];
        if ((op == OP_SQRT || op == OP_TRUNC) && dt_is_float(d) && !f32) return lst[i];
    }
    return NULL;
}

char *kernel_ptx(const char *name, const UOp *const *lst, size_t n, char *err, size_t errlen) {
    const UOp *bad = without_ptx_instruction(lst, n);
    if (bad) {
        Op op = uop_op(bad);
        bool transcendental = op == OP_EXP2 || op == OP_LOG2 || op == OP_SIN;
        snprintf(err, errlen, "%s %%%u: NVPTX has no instruction for it (LLVM would need a libm call)%s", op_name(op),
                 bad->id, transcendental ? "; compile with transcendentals = \"decomposed\", the default" : "");
        return NULL;
    }
    pthread_once(&ptx_once, ptx_init);
    if (ptx_error[0]) {
        snprintf(err, errlen, "%s", ptx_error);
        return NULL;
    }
    LLVMTargetRef target;
    char *msg = NULL;
    if (LLVMGetTargetFromTriple(PTX_TRIPLE, &target, &msg)) {
        snprintf(err, errlen, "LLVM has no NVPTX target: %s", msg ? msg : "(no message)");
        LLVMDisposeMessage(msg);
        return NULL;
    }
    LLVMContextRef ctx = LLVMContextCreate();
    Diag diag = {.failed = false};
    LLVMContextSetDiagnosticHandler(ctx, on_diagnostic, &diag);
    LLVMModuleRef mod = NULL;
    char *text = NULL;
    if (!llvm_render_ptx_program(ctx, name, lst, n, &mod, err, errlen)) goto done;
    LLVMTargetMachineRef tm = LLVMCreateTargetMachine(target, PTX_TRIPLE, PTX_CPU, "", LLVMCodeGenLevelDefault,
                                                      LLVMRelocDefault, LLVMCodeModelDefault);
    if (!tm) {
        snprintf(err, errlen, "LLVM could not make an NVPTX target machine");
        goto done;
    }
    LLVMSetTarget(mod, PTX_TRIPLE);
    LLVMTargetDataRef td = LLVMCreateTargetDataLayout(tm);
    LLVMSetModuleDataLayout(mod, td);
    LLVMDisposeTargetData(td);
    LLVMPassBuilderOptionsRef opts = LLVMCreatePassBuilderOptions();
    LLVMErrorRef e = LLVMRunPasses(mod, "default<O2>", tm, opts);
    LLVMDisposePassBuilderOptions(opts);
    if (e) {
        char *m = LLVMGetErrorMessage(e);
        snprintf(err, errlen, "LLVM optimisation for NVPTX failed: %s", m);
        LLVMDisposeErrorMessage(m);
    } else {
        LLVMMemoryBufferRef out = NULL;
        bool emitted = !diag.failed && !LLVMTargetMachineEmitToMemoryBuffer(tm, mod, LLVMAssemblyFile, &msg, &out);
        if (diag.failed) {
            snprintf(err, errlen, "LLVM could not make PTX of it: %s", diag.msg);
        } else if (!emitted) {
            snprintf(err, errlen, "LLVM could not emit PTX: %s", msg ? msg : "(no message)");
        } else if ((text = malloc(LLVMGetBufferSize(out) + 1))) {
            size_t len = LLVMGetBufferSize(out);
            memcpy(text, LLVMGetBufferStart(out), len);
            text[len] = 0;
        } else {
            snprintf(err, errlen, "out of memory");
        }
        if (out) LLVMDisposeMemoryBuffer(out);
        LLVMDisposeMessage(msg);
    }
    LLVMDisposeTargetMachine(tm);
done:
    if (mod) LLVMDisposeModule(mod);
    LLVMContextDispose(ctx);
    return text;
}
