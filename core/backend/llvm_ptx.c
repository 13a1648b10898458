/* llvm_ptx.c - PTX text of a linear program, through LLVM's NVPTX backend
 * (k:asm{target = "ptx"}): the program rendered as a GPU kernel
 * (llvm_render_ptx_program), optimised with default<O2> for an NVPTX target
 * machine (sm_70) and emitted as assembly.  Nothing runs on a GPU: the
 * text is for reading.  When the LLVM linked in has no NVPTX target, the
 * error says so. */
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

char *kernel_ptx(const char *name, const UOp *const *lst, size_t n, char *err, size_t errlen) {
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
        if (!LLVMTargetMachineEmitToMemoryBuffer(tm, mod, LLVMAssemblyFile, &msg, &out)) {
            size_t len = LLVMGetBufferSize(out);
            if ((text = malloc(len + 1))) {
                memcpy(text, LLVMGetBufferStart(out), len);
                text[len] = 0;
            } else {
                snprintf(err, errlen, "out of memory");
            }
            LLVMDisposeMemoryBuffer(out);
        } else {
            snprintf(err, errlen, "LLVM could not emit PTX: %s", msg ? msg : "(no message)");
            LLVMDisposeMessage(msg);
        }
    }
    LLVMDisposeTargetMachine(tm);
done:
    if (mod) LLVMDisposeModule(mod);
    LLVMContextDispose(ctx);
    return text;
}
