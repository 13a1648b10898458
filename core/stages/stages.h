/* stages.h - the 22 codegen stages of tinygrad v0.12.0 as a
 * table of rows that runs: each row names its rule sets (by their names in
 * the rule-set registry), its direction and pass kind, or the hook of a
 * stage that is an algorithm; stage_run() executes a row, and the stepper,
 * the printers and `:stages` read the same rows.  Stages 1..20 take a
 * kernel SINK and return a SINK; stage 21 (linearize) returns a LINEAR node
 * whose sources are the instructions in order; stage 22 takes and returns a
 * LINEAR node.  kernel_compile() takes the sources of the final LINEAR. */
#ifndef UOPDB_STAGES_H
#define UOPDB_STAGES_H
#include <stdbool.h>
#include <stddef.h>
#include "../ir/uop.h"
#include "../rewrite/pattern.h"
#include "../rewrite/trace.h"

#define STAGE_COUNT 22

/* Opts a user asks for by hand (stage 7).  axis counts, from 0, the
 * kernel's ranges of the kind the opt acts on, in axis-id order: UPCAST and
 * THREAD the output (LOOP/GLOBAL) ranges, UNROLL the REDUCE ranges.  amount
 * must divide the range's size; 0 means the whole range.  THREAD splits the
 * range's outer part over `amount` cores (stage 12 makes it the core_id).
 * The GPU target's opts (LOCAL, GROUP, GROUPTOP, PADTO, SWAP, NOLOCALS)
 * number axes as tinygrad's Scheduler does (see apply_opts.c); the CPU
 * target refuses them. */
typedef enum OptOp {
    OPT_UPCAST, OPT_UNROLL, OPT_THREAD,
    OPT_LOCAL, OPT_GROUP, OPT_GROUPTOP, OPT_PADTO, OPT_SWAP, OPT_NOLOCALS
} OptOp;
typedef struct KernelOpt {
    OptOp op;
    int axis;
    int amount;
} KernelOpt;
const char *opt_op_name(OptOp op);        /* "UPCAST" */
bool opt_op_from_name(const char *s, OptOp *out);
bool opt_op_gpu_only(OptOp op);           /* LOCAL, GROUP, GROUPTOP, PADTO, SWAP, NOLOCALS: tinygrad's GPU opts
                                           * (the cpu target takes PADTO and NOLOCALS too) */

/* What the kernel is lowered for: the CPU (tinygrad's LLVM renderer: loops,
 * THREAD over cores) or a generic GPU with local memory and barriers
 * (workgroups and work items as SPECIAL gidx/lidx, local buffers), whose
 * programs run in the emulator (core/backend/linear_interp.c). */
typedef enum StageTarget { TARGET_CPU, TARGET_GPU } StageTarget;
const char *stage_target_name(StageTarget t);  /* "cpu", "gpu" */

/* The generic GPU's limits (those of tinygrad's CUDA renderer): grid and
 * workgroup sizes per dimension, and local memory in bytes. */
#define GPU_GLOBAL_MAX {2147483647, 65535, 65535}
#define GPU_LOCAL_MAX {1024, 1024, 64}
#define GPU_SHARED_MAX 49152

typedef struct StageCtx {
    UCtx *c;
    const KernelOpt *opts;   /* stage 7 */
    int nopts;
    Trace *trace;            /* NULL: no trace */
    bool timing;
    char *err;               /* the message when a stage fails */
    size_t errlen;
    /* user rule sets inserted into the stage: a rewrite row runs them in
     * its own graph_rewrite, before or after its sets; any other row runs
     * them as a rewrite pass of their own before or after it */
    const RuleSet *const *before, *const *after;
    int nbefore, nafter;
    size_t stop_after;       /* 0: run the stage to its end; else stop after this many rewrites */
    /* the renderer's op set that stages 18-19 decompose for: false is
     * tinygrad v0.12.0's CPU LLVM renderer (FDIV and CMPLT: EXP2, LOG2,
     * SIN, SQRT and MAX are decomposed), true uopdb's own LLVM renderer,
     * which draws them as LLVM intrinsics (uop.compile's
     * {transcendentals = "native"}); a row's rules_native says what it
     * runs then */
    bool native_transcendentals;
    /* check the stage's output (and stage 1's input, point 0) against the
     * spec of its point (spec_verify.h); set only where the stage runs on
     * the point before it, as the pipeline runs it */
    bool verify;
    StageTarget target;      /* uop.compile's {target = "gpu"}; TARGET_CPU by default */
    /* the debugger's look inside a rule pass (k:why): when set, a rewrite or
     * line-rewrite row calls it with the rule set it runs and the context
     * its rules get (Match.user, NULL for none) once the pass has stopped
     * (after stop_after rewrites, or at its end), before that context is
     * released; with probe_first the pass makes no rewrite and the probe
     * sees the context as made from the stage's input */
    void (*probe)(const RuleSet *rs, void *user, void *ud);
    void *probe_ud;
    bool probe_first;
} StageCtx;

/* A hook: a stage that is an algorithm rather than rule sets (opts,
 * linearize).  Returns the new root, or NULL with a message in sc->err
 * naming what went wrong (an opt that does not apply, a node the stage
 * cannot handle). */
typedef const UOp *(*StageHook)(StageCtx *sc, const UOp *root);

/* The context a rewrite pass hands its rules (tinygrad's ctx=): `size`
 * zeroed bytes, filled by init from the root (and the stage's StageCtx:
 * target, opts) when init is set, and released after the pass. */
typedef struct StageContext {
    const char *name;   /* tinygrad's: "ReduceContext" */
    size_t size;
    bool (*init)(void *ctx, const UOp *root, const StageCtx *sc, char *why, size_t whylen);
    void (*release)(void *ctx);
} StageContext;

typedef enum StageKind {
    STAGE_REWRITE,      /* graph_rewrite of `rules` in `bottom_up` order */
    STAGE_LINE_REWRITE, /* line_rewrite of `rules` over the LINEAR program */
    STAGE_HOOK,         /* `hook` (named `hook_name`) */
    STAGE_PASS          /* nothing for this target: the root passes through (note says why) */
} StageKind;

typedef enum StageStatus {
    STAGE_WRITTEN,        /* the rules correct scalar CPU code needs are written */
    STAGE_PARTIAL,        /* runs; `note` says which of v0.12.0's rules are not written yet */
    STAGE_NOT_APPLICABLE, /* does nothing for this target (note says why); passes the root through */
    STAGE_NOT_WRITTEN     /* passes the root through; note says what the stage would do */
} StageStatus;

/* One row of the pipeline: what the stage runs is read from here by
 * stage_run(), and the printers (k:stages(), :rules, the docs) read the
 * same fields. */
typedef struct Stage {
    int number;                 /* 1..22 */
    const char *name;           /* "lower index dtype" */
    const char *phase;          /* "rangeify", "expander", "devectorizer", "linearizer" */
    StageKind kind;
    const char *rules;          /* registry names as tinygrad writes them: "pm_lower_index_dtype + load_store_indexing" */
    bool bottom_up;
    const char *pass_name;      /* tinygrad's graph_rewrite name=, the trace's pass name */
    const StageContext *ctx;    /* NULL, or the context the rules get */
    StageHook hook;             /* STAGE_HOOK */
    const char *hook_name;      /* "apply_opts" */
    const char *purpose;        /* one line */
    StageStatus status;
    const char *note;           /* NULL or why not applicable / what is missing */
    const char *rules_native;   /* NULL, or what runs instead with StageCtx.native_transcendentals */
} Stage;

/* n in 1..STAGE_COUNT; NULL otherwise */
const Stage *stage_get(int n);
const char *stage_status_name(StageStatus s); /* "written", "partial", "n/a", "not written" */
const char *stage_kind_name(StageKind k);     /* "rewrite", "line rewrite", "hook", "pass" */
/* what the row runs, as one line: "sym + pm_flatten_range", "hook apply_opts",
 * "line rewrite pm_linearize_cleanups", "nothing" */
const char *stage_runs(const Stage *st, char *buf, size_t len);
/* the same for a pipeline with StageCtx.native_transcendentals as given */
const char *stage_runs_for(const Stage *st, bool native_transcendentals, char *buf, size_t len);

/* The rule set a rewrite or line-rewrite row runs (its rules, or rules_native
 * with native_transcendentals), from the registry; NULL for a hook or a
 * pass, or with err when the set cannot be built. */
const RuleSet *stage_rule_set(const Stage *st, bool native_transcendentals, char *err, size_t errlen);

/* Whether rules put into stage n (before its own, or after) would run on a
 * graph: not where they would meet the linear program, which a line-rewrite
 * row takes and the row before it makes.  When not, why gets one line that
 * says where they can go. */
bool stage_takes_inserted_rules(int n, bool before, char *why, size_t whylen);

/* Runs stage n's row on root.  Returns the new root, or NULL with a message
 * in sc->err naming the stage and what went wrong. */
const UOp *stage_run(StageCtx *sc, int n, const UOp *root);

/* Sets sc->err and returns NULL. */
const UOp *stage_fail(StageCtx *sc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* the hooks (apply_opts.c, linearize.c) */
const UOp *stage_apply_opts(StageCtx *sc, const UOp *root);           /* 7 */

/* The opts tinygrad v0.12.0's hand-coded heuristic chooses for this kernel
 * on the CPU (heuristic_opts.c): root is the kernel as stage 7 gets it,
 * threads the cores THREAD may use (0: no THREAD, as tinygrad's LLVM
 * renderer).  Writes up to max opts, in the order to apply them, with stage
 * 7's axis numbers; one line per decision goes to why (NULL: none).  Returns
 * how many, or -1 with a message in err. */
struct StrBuf;
int heuristic_opts(UCtx *c, const UOp *root, int threads, KernelOpt *opts, int max, struct StrBuf *why, char *err,
                   size_t errlen);
/* The same for a target: TARGET_GPU adds the parts of the heuristic that
 * need locals (matvec, GROUPTOP, LOCAL) and takes no threads; its axis
 * numbers are the gpu target's (tinygrad's). */
int heuristic_opts_for(UCtx *c, const UOp *root, StageTarget target, int threads, KernelOpt *opts, int max,
                       struct StrBuf *why, char *err, size_t errlen);
const UOp *stage_linearize(StageCtx *sc, const UOp *root);            /* 21 */

/* Runs stages 1..22 on a kernel AST; returns the final LINEAR (NULL + err).
 * For tests and tools that do not step. */
const UOp *stages_run_all(UCtx *c, const UOp *ast, const KernelOpt *opts, int nopts, char *err, size_t errlen);

/* Registers every rule set the stages name (and the symbolic ones) in the
 * registry, once; stage_run does it itself. */
void stages_register_rulesets(void);

#endif
