/* stages.h - the 22 codegen stages of tinygrad v0.12.0 (seeds/001), as a
 * table the stepper, the printers and `:stages` read.  Stages 1..20 take a
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
 * range's outer part over `amount` cores (stage 12 makes it the core_id). */
typedef enum OptOp { OPT_UPCAST, OPT_UNROLL, OPT_THREAD } OptOp;
typedef struct KernelOpt {
    OptOp op;
    int axis;
    int amount;
} KernelOpt;
const char *opt_op_name(OptOp op);        /* "UPCAST" */
bool opt_op_from_name(const char *s, OptOp *out);

typedef struct StageCtx {
    UCtx *c;
    const KernelOpt *opts;   /* stage 7 */
    int nopts;
    Trace *trace;            /* NULL: no trace */
    bool timing;
    char *err;               /* the message when a stage fails */
    size_t errlen;
} StageCtx;

/* Runs one stage.  Returns the new root, or NULL with a message in sc->err
 * naming the stage and what went wrong (a failing rule, an opt that does not
 * apply, a node the stage cannot handle). */
typedef const UOp *(*StageFn)(StageCtx *sc, const UOp *root);

typedef enum StageStatus {
    STAGE_WRITTEN,        /* the rules correct scalar CPU code needs are written */
    STAGE_PARTIAL,        /* runs; `note` says which of v0.12.0's rules are not written yet */
    STAGE_NOT_APPLICABLE, /* does nothing for this target (note says why); passes the root through */
    STAGE_NOT_WRITTEN     /* passes the root through; note says what the stage would do */
} StageStatus;

typedef struct Stage {
    int number;               /* 1..22 */
    const char *name;         /* "lower index dtype" */
    const char *phase;        /* "rangeify", "expander", "devectorizer", "linearizer" */
    const char *rules;        /* v0.12.0's rule sets: "pm_lower_index_dtype + load_store_indexing" */
    bool bottom_up;
    const char *purpose;      /* one line */
    StageStatus status;
    const char *note;         /* NULL or why not applicable / what is missing */
    StageFn run;
} Stage;

/* n in 1..STAGE_COUNT; NULL otherwise */
const Stage *stage_get(int n);
const char *stage_status_name(StageStatus s); /* "written", "partial", "n/a", "not written" */

/* A graph_rewrite as a stage runs it: with sc's trace and timing, the pass
 * named after the stage; NULL + sc->err on failure. */
const UOp *stage_rewrite(StageCtx *sc, const UOp *root, const RuleSet *rs, bool bottom_up,
                         const char *pass_name, void *user);
/* Sets sc->err ("stage 7 (apply opts): ...") and returns NULL. */
const UOp *stage_fail(StageCtx *sc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- the stage functions, one per stage (files named in stage_table.c) ---- */
const UOp *stage_early_movement_ops(StageCtx *sc, const UOp *root);   /* 1  stages_rangeify.c */
const UOp *stage_load_collapse(StageCtx *sc, const UOp *root);        /* 2  stages_rangeify.c */
const UOp *stage_split_ranges(StageCtx *sc, const UOp *root);         /* 3  stages_rangeify.c */
const UOp *stage_initial_symbolic(StageCtx *sc, const UOp *root);     /* 4  stages_rangeify.c */
const UOp *stage_simplify_ranges(StageCtx *sc, const UOp *root);      /* 5  stages_rangeify.c */
const UOp *stage_split_store(StageCtx *sc, const UOp *root);          /* 6  stages_rangeify.c */
const UOp *stage_apply_opts(StageCtx *sc, const UOp *root);           /* 7  apply_opts.c */
const UOp *stage_postopt_symbolic(StageCtx *sc, const UOp *root);     /* 8  stages_rangeify.c */
const UOp *stage_expander(StageCtx *sc, const UOp *root);             /* 9  expander.c */
const UOp *stage_add_local_buffers(StageCtx *sc, const UOp *root);    /* 10 stages_rangeify.c */
const UOp *stage_remove_reduce(StageCtx *sc, const UOp *root);        /* 11 remove_reduce.c */
const UOp *stage_add_gpudims(StageCtx *sc, const UOp *root);          /* 12 gpudims.c */
const UOp *stage_add_loads(StageCtx *sc, const UOp *root);            /* 13 stages_late.c */
const UOp *stage_devectorize(StageCtx *sc, const UOp *root);          /* 14 devectorize.c */
const UOp *stage_lower_index_dtype(StageCtx *sc, const UOp *root);    /* 15 index_dtype.c */
const UOp *stage_post_index_symbolic(StageCtx *sc, const UOp *root);  /* 16 stages_late.c */
const UOp *stage_pre_matcher(StageCtx *sc, const UOp *root);          /* 17 stages_late.c */
const UOp *stage_decompositions(StageCtx *sc, const UOp *root);       /* 18 stages_late.c */
const UOp *stage_final_rewrite(StageCtx *sc, const UOp *root);        /* 19 stages_late.c */
const UOp *stage_add_control_flow(StageCtx *sc, const UOp *root);     /* 20 linearize.c */
const UOp *stage_linearize(StageCtx *sc, const UOp *root);            /* 21 linearize.c */
const UOp *stage_cleanup_ifendif(StageCtx *sc, const UOp *root);      /* 22 linearize.c */

/* Runs stages 1..22 on a kernel AST; returns the final LINEAR (NULL + err).
 * For tests and tools that do not step. */
const UOp *stages_run_all(UCtx *c, const UOp *ast, const KernelOpt *opts, int nopts, char *err, size_t errlen);

/* Frees every rule set the stages built (and the symbolic sets), for a
 * clean process exit; they are rebuilt on next use. */
void stages_rules_free(void);
void gpudims_free(void);  /* stage 12's rules (gpudims.c) */

#endif
