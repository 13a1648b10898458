/* llvm_jit.c - compiles a rendered kernel for the host CPU and runs it:
 * one-time LLVM target setup, the default<O2> pipeline with a host target
 * machine (so the loop vectoriser sees the real vector width), IR text
 * before and after, host assembly on request, and ORC LLJIT (one JIT
 * instance per kernel, so freeing a kernel frees its code). */
#include "backend.h"
#include "parallel.h"
#include "llvm_render.h"
#include "../util/interrupt.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/IRReader.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>

typedef void (*EntryFn)(void **bufs, const int32_t *vars, int32_t core_id, KernelRawReport *report);

struct Kernel {
    char *name;
    KernelSignature sig;
    char *ir_before, *ir_after, *asm_text;
    double render_ms, optimise_ms, jit_ms;
    LLVMOrcLLJITRef jit;
    EntryFn entry;
    int threads;          /* core_ids the kernel is split over (SPECIAL's size), 1 if none */
    const UOp *core;      /* that SPECIAL, which a failed access names as the graph does ("gidx0=2") */
};

/* ---- host target, set up once ---- */

static pthread_once_t host_once = PTHREAD_ONCE_INIT;
static char *host_triple, *host_cpu, *host_features; /* LLVM messages, kept for the process */
static char host_error[256];

static void host_init(void) {
    if (LLVMInitializeNativeTarget() || LLVMInitializeNativeAsmPrinter() || LLVMInitializeNativeAsmParser()) {
        snprintf(host_error, sizeof host_error, "LLVM has no native target for this machine");
        return;
    }
    char *def = LLVMGetDefaultTargetTriple();
    host_triple = LLVMNormalizeTargetTriple(def);
    LLVMDisposeMessage(def);
    host_cpu = LLVMGetHostCPUName();
    host_features = LLVMGetHostCPUFeatures();
}

static bool host_ready(void) {
    pthread_once(&host_once, host_init);
    return !host_error[0] && host_triple;
}

static const char *host_failure(void) { return host_error[0] ? host_error : "LLVM target setup failed"; }

const char *backend_host_cpu(void) { return host_ready() ? host_cpu : ""; }
const char *backend_host_triple(void) { return host_ready() ? host_triple : ""; }
const char *backend_host_features(void) { return host_ready() && host_features ? host_features : ""; }

/* A target machine for the host CPU with all its features, -O3 code generation. */
static LLVMTargetMachineRef host_target_machine(char *err, size_t errlen) {
    LLVMTargetRef target;
    char *msg = NULL;
    if (LLVMGetTargetFromTriple(host_triple, &target, &msg)) {
        snprintf(err, errlen, "no LLVM target for %s: %s", host_triple, msg ? msg : "");
        LLVMDisposeMessage(msg);
        return NULL;
    }
    LLVMTargetMachineRef tm = LLVMCreateTargetMachine(target, host_triple, host_cpu, host_features,
                                                      LLVMCodeGenLevelAggressive, LLVMRelocPIC, LLVMCodeModelJITDefault);
    if (!tm) snprintf(err, errlen, "could not create a target machine for %s (%s)", host_triple, host_cpu);
    return tm;
}

static void set_target(LLVMModuleRef mod, LLVMTargetMachineRef tm) {
    LLVMSetTarget(mod, host_triple);
    LLVMTargetDataRef td = LLVMCreateTargetDataLayout(tm);
    char *dl = LLVMCopyStringRepOfTargetData(td);
    LLVMSetDataLayout(mod, dl);
    LLVMDisposeMessage(dl);
    LLVMDisposeTargetData(td);
}

/* Copies an LLVM error's message into err (prefixed) and consumes it. */
static void take_error(LLVMErrorRef e, const char *what, char *err, size_t errlen) {
    char *m = LLVMGetErrorMessage(e);
    snprintf(err, errlen, "%s: %s", what, m ? m : "(no message)");
    LLVMDisposeErrorMessage(m);
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static char *module_text(LLVMModuleRef mod) {
    char *s = LLVMPrintModuleToString(mod);
    char *copy = s ? strdup(s) : NULL;
    LLVMDisposeMessage(s);
    return copy;
}

/* ---- compile ---- */

static bool optimise(LLVMModuleRef mod, char *err, size_t errlen) {
    LLVMTargetMachineRef tm = host_target_machine(err, errlen);
    if (!tm) return false;
    set_target(mod, tm);
    LLVMPassBuilderOptionsRef opts = LLVMCreatePassBuilderOptions();
    LLVMPassBuilderOptionsSetLoopVectorization(opts, 1);
    LLVMPassBuilderOptionsSetSLPVectorization(opts, 1);
    LLVMErrorRef e = LLVMRunPasses(mod, "default<O2>", tm, opts);
    LLVMDisposePassBuilderOptions(opts);
    LLVMDisposeTargetMachine(tm);
    if (e) { take_error(e, "LLVM optimisation failed", err, errlen); return false; }
    return true;
}

/* Creates the kernel's LLJIT (host CPU, process symbols such as libm visible). */
static LLVMOrcLLJITRef create_jit(char *err, size_t errlen) {
    LLVMTargetMachineRef tm = host_target_machine(err, errlen);
    if (!tm) return NULL;
    LLVMOrcLLJITBuilderRef builder = LLVMOrcCreateLLJITBuilder();
    LLVMOrcLLJITBuilderSetJITTargetMachineBuilder(builder, LLVMOrcJITTargetMachineBuilderCreateFromTargetMachine(tm));
    LLVMOrcLLJITRef jit = NULL;
    LLVMErrorRef e = LLVMOrcCreateLLJIT(&jit, builder);
    if (e) { take_error(e, "could not create the JIT", err, errlen); return NULL; }
    LLVMOrcDefinitionGeneratorRef gen = NULL;
    e = LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(&gen, LLVMOrcLLJITGetGlobalPrefix(jit), NULL, NULL);
    if (e) {
        take_error(e, "could not expose process symbols to the JIT", err, errlen);
        LLVMOrcDisposeLLJIT(jit);
        return NULL;
    }
    LLVMOrcJITDylibAddGenerator(LLVMOrcLLJITGetMainJITDylib(jit), gen);
    /* the interrupt flag the kernels poll */
    LLVMOrcCSymbolMapPair flag = {
        LLVMOrcLLJITMangleAndIntern(jit, LLVM_INTERRUPT_SYMBOL),
        {(LLVMOrcExecutorAddress)(uintptr_t)uopdb_interrupt_flag(), {LLVMJITSymbolGenericFlagsExported, 0}}};
    LLVMOrcMaterializationUnitRef mu = LLVMOrcAbsoluteSymbols(&flag, 1);
    e = LLVMOrcJITDylibDefine(LLVMOrcLLJITGetMainJITDylib(jit), mu);
    if (e) {
        LLVMOrcDisposeMaterializationUnit(mu);
        take_error(e, "could not give the JIT the interrupt flag", err, errlen);
        LLVMOrcDisposeLLJIT(jit);
        return NULL;
    }
    return jit;
}

Kernel *kernel_compile(const char *name, const UOp *const *lst, size_t n, char *err, size_t errlen) {
    return kernel_compile_opts(name, lst, n, NULL, err, errlen);
}

Kernel *kernel_compile_opts(const char *name, const UOp *const *lst, size_t n, const KernelCompileOpts *opts, char *err,
                            size_t errlen) {
    char scratch[256];
    if (!err || !errlen) err = scratch, errlen = sizeof scratch;
    err[0] = 0;
    if (!host_ready()) {
        snprintf(err, errlen, "%s", host_failure());
        return NULL;
    }
    if (!name || !name[0]) name = "kernel";
    Kernel *k = calloc(1, sizeof *k);
    if (!k || !(k->name = strdup(name))) {
        free(k);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    k->threads = 1;
    for (size_t i = 0; i < n; i++) {
        int64_t size;
        if (uop_op(lst[i]) == OP_SPECIAL && lst[i]->nsrc == 1 && uop_const_int_value(lst[i]->src[0], &size) &&
            size > k->threads && size <= 1024) {
            k->threads = (int)size;
            k->core = lst[i];
        }
    }
    double t0 = now_ms();
    LLVMOrcThreadSafeContextRef tsc = LLVMOrcCreateNewThreadSafeContext();
    LLVMContextRef ctx = LLVMOrcThreadSafeContextGetContext(tsc);
    LLVMModuleRef mod = NULL;
    if (!llvm_render_program(ctx, name, lst, n, opts && opts->checked, &mod, &k->sig, err, errlen)) goto fail;
    k->ir_before = module_text(mod);
    double t1 = now_ms();
    k->render_ms = t1 - t0;
    if (!optimise(mod, err, errlen)) goto fail;
    k->ir_after = module_text(mod);
    double t2 = now_ms();
    k->optimise_ms = t2 - t1;
    if (!k->ir_before || !k->ir_after) { snprintf(err, errlen, "out of memory"); goto fail; }

    if (!(k->jit = create_jit(err, errlen))) goto fail;
    LLVMOrcThreadSafeModuleRef tsm = LLVMOrcCreateNewThreadSafeModule(mod, tsc);
    mod = NULL;   /* owned by tsm, then by the JIT */
    LLVMErrorRef e = LLVMOrcLLJITAddLLVMIRModule(k->jit, LLVMOrcLLJITGetMainJITDylib(k->jit), tsm);
    if (e) { take_error(e, "the JIT rejected the module", err, errlen); goto fail; }
    char ename[512];
    llvm_entry_name(name, ename, sizeof ename);
    LLVMOrcExecutorAddress addr = 0;
    e = LLVMOrcLLJITLookup(k->jit, &addr, ename);   /* code generation happens here */
    if (e) { take_error(e, "JIT compilation failed", err, errlen); goto fail; }
    if (!addr) { snprintf(err, errlen, "JIT compilation gave no address for %s", ename); goto fail; }
    k->entry = (EntryFn)(uintptr_t)addr;
    k->jit_ms = now_ms() - t2;
    LLVMOrcDisposeThreadSafeContext(tsc);
    return k;

fail:
    if (mod) LLVMDisposeModule(mod);
    LLVMOrcDisposeThreadSafeContext(tsc);
    kernel_free(k);
    return NULL;
}

void kernel_free(Kernel *k) {
    if (!k) return;
    if (k->jit) LLVMOrcDisposeLLJIT(k->jit);
    kernel_signature_free(&k->sig);
    free(k->name);
    free(k->ir_before);
    free(k->ir_after);
    free(k->asm_text);
    free(k);
}

/* ---- running ---- */

/* whether k is compiled and every buffer it takes is given */
static bool kernel_has_buffers(const Kernel *k, void **bufs, char *err, size_t errlen) {
    if (!k || !k->entry) { snprintf(err, errlen, "no compiled kernel"); return false; }
    if (k->sig.nbuf && !bufs) { snprintf(err, errlen, "%s needs %d buffers, got none", k->name, k->sig.nbuf); return false; }
    for (int i = 0; i < k->sig.nbuf; i++)
        if (!bufs[i]) { snprintf(err, errlen, "%s: buffer %d (data%lld) is missing", k->name, i, (long long)k->sig.bufs[i].arg); return false; }
    return true;
}

/* whether the variables are given and inside their bounds */
static bool kernel_has_vars(const Kernel *k, const int32_t *vars, char *err, size_t errlen) {
    if (k->sig.nvar && !vars) { snprintf(err, errlen, "%s needs %d variable values, got none", k->name, k->sig.nvar); return false; }
    for (int i = 0; i < k->sig.nvar; i++)
        if (vars[i] < k->sig.vars[i].lo || vars[i] > k->sig.vars[i].hi) {
            snprintf(err, errlen, "%s: variable %s = %d is outside its bounds [%lld, %lld]", k->name, k->sig.vars[i].name,
                     vars[i], (long long)k->sig.vars[i].lo, (long long)k->sig.vars[i].hi);
            return false;
        }
    return true;
}

/* the report of core_id's failed access, from what the kernel wrote */
static void fill_report(const Kernel *k, const KernelRawReport *raw, int32_t core_id, AccessFault *rep) {
    memset(rep, 0, sizeof *rep);
    if (!raw->failed || raw->site < 0 || raw->site >= k->sig.nsites) return;
    const KernelCheckSite *site = &k->sig.sites[raw->site];
    rep->failed = true;
    rep->store = site->store;
    rep->node_op = OP_INDEX;
    rep->index_id = site->index_id;
    rep->buffer_op = site->buffer_op;
    rep->buffer = site->buffer;
    rep->index = raw->index;
    rep->size = site->size;
    rep->width = site->width;
    rep->core_id = core_id;
    rep->threads = k->threads;
    if (k->threads > 1) access_fault_add_node(rep, k->core, core_id);
    for (int i = 0; i < site->nranges; i++) {
        const KernelRangeInfo *ri = &k->sig.ranges[site->ranges[i]];
        access_fault_add_loop(rep, ri->id, ri->name, raw->ranges[i]);
    }
}

bool kernel_is_checked(const Kernel *k) { return k && k->sig.checked; }

typedef struct ParallelRun {
    Kernel *k;
    void **bufs;
    const int32_t *vars;
    KernelRawReport *reports;   /* one per core_id */
} ParallelRun;

static void run_core(void *ud, int core_id) {
    ParallelRun *r = ud;
    r->k->entry(r->bufs, r->vars, core_id, &r->reports[core_id]);
}

/* Runs core_ids first..first+count-1 (concurrently when more than one);
 * a failed check (the lowest core_id's) goes to rep and err. */
static bool run_cores(Kernel *k, void **bufs, const int32_t *vars, int32_t first, int count, AccessFault *rep,
                      char *err, size_t errlen) {
    KernelRawReport one, *raw = count > 1 ? calloc((size_t)count, sizeof *raw) : &one;
    if (!raw) { snprintf(err, errlen, "out of memory"); return false; }
    memset(raw, 0, (size_t)count * sizeof *raw);
    if (count == 1) {
        k->entry(bufs, vars, first, raw);
    } else {
        ParallelRun r = {k, bufs, vars, raw};
        parallel_for(count, run_core, &r);
    }
    int failed = -1;
    for (int i = 0; i < count && failed < 0; i++)
        if (raw[i].failed) failed = i;
    if (failed >= 0) fill_report(k, &raw[failed], first + failed, rep);
    else memset(rep, 0, sizeof *rep);
    if (raw != &one) free(raw);
    if (rep->failed) {
        access_fault_message(rep, NULL, err, errlen);
        return false;
    }
    if (uopdb_interrupted()) { snprintf(err, errlen, "interrupted"); return false; }
    return true;
}

bool kernel_run_core(Kernel *k, void **bufs, const int32_t *vars, int32_t core_id, char *err, size_t errlen) {
    char scratch[256];
    if (!err || !errlen) err = scratch, errlen = sizeof scratch;
    err[0] = 0;
    if (!kernel_has_buffers(k, bufs, err, errlen) || !kernel_has_vars(k, vars, err, errlen)) return false;
    AccessFault rep;
    return run_cores(k, bufs, vars, core_id, 1, &rep, err, errlen);
}

bool kernel_run(Kernel *k, void **bufs, const int32_t *vars, char *err, size_t errlen) {
    return kernel_run_core(k, bufs, vars, 0, err, errlen);
}

int kernel_threads(const Kernel *k) { return k ? k->threads : 1; }

bool kernel_run_checked(Kernel *k, void **bufs, const int32_t *vars, AccessFault *rep, char *err, size_t errlen) {
    char scratch[256];
    AccessFault local;
    if (!err || !errlen) err = scratch, errlen = sizeof scratch;
    if (!rep) rep = &local;
    err[0] = 0;
    memset(rep, 0, sizeof *rep);
    /* the arguments are checked once, then every core runs (on its own thread when more than one) */
    if (!kernel_has_buffers(k, bufs, err, errlen)) return false;
    if (k->threads > 1 && k->sig.nvar) {
        snprintf(err, errlen, "%s: a kernel split over cores with variables is not supported", k->name);
        return false;
    }
    if (!kernel_has_vars(k, vars, err, errlen)) return false;
    return run_cores(k, bufs, vars, 0, k->threads, rep, err, errlen);
}

bool kernel_run_parallel(Kernel *k, void **bufs, const int32_t *vars, char *err, size_t errlen) {
    return kernel_run_checked(k, bufs, vars, NULL, err, errlen);
}

/* ---- text ---- */

const char *kernel_ir(const Kernel *k, bool optimised) {
    if (!k) return NULL;
    return optimised ? k->ir_after : k->ir_before;
}

/* Host assembly: the optimised IR is parsed into a fresh context (the JIT
 * owns the original module) and emitted with the same target machine
 * settings the JIT uses. */
const char *kernel_asm(Kernel *k) {
    if (!k || !k->ir_after) return NULL;
    if (k->asm_text) return k->asm_text;
    char err[256];
    if (!host_ready()) return NULL;
    LLVMContextRef ctx = LLVMContextCreate();
    LLVMMemoryBufferRef in = LLVMCreateMemoryBufferWithMemoryRangeCopy(k->ir_after, strlen(k->ir_after), k->name);
    LLVMModuleRef mod = NULL;
    char *msg = NULL;
    if (LLVMParseIRInContext(ctx, in, &mod, &msg)) {   /* takes the buffer */
        LLVMDisposeMessage(msg);
        LLVMContextDispose(ctx);
        return NULL;
    }
    LLVMTargetMachineRef tm = host_target_machine(err, sizeof err);
    if (tm) {
        LLVMMemoryBufferRef out = NULL;
        if (!LLVMTargetMachineEmitToMemoryBuffer(tm, mod, LLVMAssemblyFile, &msg, &out)) {
            size_t len = LLVMGetBufferSize(out);
            k->asm_text = malloc(len + 1);
            if (k->asm_text) {
                memcpy(k->asm_text, LLVMGetBufferStart(out), len);
                k->asm_text[len] = 0;
            }
            LLVMDisposeMemoryBuffer(out);
        } else {
            LLVMDisposeMessage(msg);
        }
        LLVMDisposeTargetMachine(tm);
    }
    LLVMDisposeModule(mod);
    LLVMContextDispose(ctx);
    return k->asm_text;
}

/* ---- signature and timing ---- */

const char *kernel_name(const Kernel *k) { return k ? k->name : NULL; }
int kernel_num_buffers(const Kernel *k) { return k ? k->sig.nbuf : 0; }
const DType *kernel_buffer_dtype(const Kernel *k, int i) {
    return k && i >= 0 && i < k->sig.nbuf ? k->sig.bufs[i].dtype : NULL;
}
int64_t kernel_buffer_size(const Kernel *k, int i) { return k && i >= 0 && i < k->sig.nbuf ? k->sig.bufs[i].size : -1; }
int64_t kernel_buffer_arg(const Kernel *k, int i) { return k && i >= 0 && i < k->sig.nbuf ? k->sig.bufs[i].arg : -1; }
int kernel_num_vars(const Kernel *k) { return k ? k->sig.nvar : 0; }
const char *kernel_var_name(const Kernel *k, int i) { return k && i >= 0 && i < k->sig.nvar ? k->sig.vars[i].name : NULL; }
void kernel_var_bounds(const Kernel *k, int i, int64_t *lo, int64_t *hi) {
    bool ok = k && i >= 0 && i < k->sig.nvar;
    if (lo) *lo = ok ? k->sig.vars[i].lo : 0;
    if (hi) *hi = ok ? k->sig.vars[i].hi : -1;
}

double kernel_compile_ms(const Kernel *k) { return k ? k->render_ms + k->optimise_ms + k->jit_ms : 0; }
void kernel_compile_times(const Kernel *k, double *render_ms, double *optimise_ms, double *jit_ms) {
    if (render_ms) *render_ms = k ? k->render_ms : 0;
    if (optimise_ms) *optimise_ms = k ? k->optimise_ms : 0;
    if (jit_ms) *jit_ms = k ? k->jit_ms : 0;
}
