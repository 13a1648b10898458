/* pipeline.h - one kernel stepped through the 22 stages: the stepper's core.
 * Point 0 is the kernel AST as the scheduler made it; point n is the root
 * after stage n.  Stages run lazily, only as far as asked, and every point
 * is kept (nodes are immutable and shared, so that is cheap), so moving
 * back is free and a diff between any two points is possible. */
#ifndef UOPDB_PIPELINE_H
#define UOPDB_PIPELINE_H
#include <stdbool.h>
#include <stddef.h>
#include "../stages/stages.h"
#include "../backend/backend.h"

typedef struct StageResult {
    bool done;
    const UOp *root;          /* after the stage */
    size_t nodes_before, nodes_after;
    size_t rewrites;          /* a stage that failed: those it made before */
    double ms;
    bool changed;             /* root differs from the one before */
    Trace trace;
    /* the stage failed the last time it ran (done is false): why, and in
     * trace the rewrites it made before (pipeline_failure) */
    bool failed;
    char *error;
} StageResult;

typedef struct KernelPipeline KernelPipeline;

KernelPipeline *pipeline_new(UCtx *c, const char *name, const UOp *ast);
void pipeline_free(KernelPipeline *kp);
/* Marks every node the pipeline holds (its points and their traces), for a
 * compaction of its context (uop.h). */
void pipeline_mark(const KernelPipeline *kp, UCtxMarks *m);
const char *pipeline_name(const KernelPipeline *kp);
/* tinygrad's name for the kernel once its opts are applied (stage 7's
 * output named as core/sched/kernel_name.c says; the stages up to 7 run if
 * need be): "r_128_128_4_4_128_4" for a 512 matmul with UPCAST 1 4,
 * UPCAST 0 4, UNROLL 0 4.  NULL with err when a stage up to 7 fails. */
const char *pipeline_opt_name(KernelPipeline *kp, char *err, size_t errlen);
UCtx *pipeline_ctx(const KernelPipeline *kp);

/* Requests opts for stage 7; forgets stages 7.. and the compiled kernel.
 * The opts are checked when stage 7 runs. */
void pipeline_set_opts(KernelPipeline *kp, const KernelOpt *opts, int n);
int pipeline_opts(const KernelPipeline *kp, const KernelOpt **opts);
/* Why the opts were chosen (one line per decision), set after
 * pipeline_set_opts by whoever chose them; pipeline_set_opts forgets it.
 * NULL when none was set (opts given by hand). */
bool pipeline_set_opts_why(KernelPipeline *kp, const char *why);
const char *pipeline_opts_why(const KernelPipeline *kp);

/* Options of the whole pipeline that are not opts of stage 7. */
typedef struct PipelineOptions {
    /* stages 18-19 decompose for uopdb's own LLVM renderer, which draws
     * EXP2/LOG2/SIN/SQRT/MAX as LLVM intrinsics, instead of for tinygrad's
     * CPU LLVM renderer (uop.compile's {transcendentals = "native"}) */
    bool native_transcendentals;
    /* the target stages 7 on lower for (uop.compile's {target = "gpu"}):
     * TARGET_GPU's kernels have workgroups, local memory and barriers and
     * run in the emulator, not through the JIT */
    StageTarget target;
} PipelineOptions;
/* Sets them; forgets stages 18.. (7.. when the target changes) and the
 * compiled kernel when they change. */
void pipeline_set_options(KernelPipeline *kp, const PipelineOptions *o);
PipelineOptions pipeline_options(const KernelPipeline *kp);

/* The current point, 0..22. */
int pipeline_position(const KernelPipeline *kp);
/* Runs the stages up to n as needed and makes n the current point.  False
 * with a message ("stage 9 (expander): ...") when a stage fails; the
 * position then stays at the last stage that ran. */
bool pipeline_seek(KernelPipeline *kp, int n, char *err, size_t errlen);
/* Root at point n (0..22), running stages as needed; NULL + err on failure. */
const UOp *pipeline_root(KernelPipeline *kp, int n, char *err, size_t errlen);
/* Where the node is, for a message about one that is not where it was
 * looked for: "it is in the graph at points 0 to 6, 9" (the stages run as
 * needed, up to one that fails), else the rewrite points inside stages that
 * hold it, "it is at points 15.1 to 15.7: :goto 15.7" (the end of the first
 * run), else the rewrite that made it, else that it is at no point.
 * Returns how many of points 0..22 have it (0 for rewrite points only), -1
 * when out of memory. */
int pipeline_where_is(KernelPipeline *kp, const UOp *node, char *out, size_t len);
/* Result of stage n (1..22); NULL if it has not run. */
const StageResult *pipeline_result(const KernelPipeline *kp, int n);
/* When stage n failed the last time it ran (the stages before it ran): its
 * result with failed set, error the message and trace (and rewrites) the
 * rewrites it made before it failed, whose rewrite points n.0 to
 * n.rewrites can be visited like a finished stage's; NULL otherwise. */
const StageResult *pipeline_failure(const KernelPipeline *kp, int n);
/* Stage n's result once it ran, finished (done) or failed (failed); NULL
 * before.  Runs nothing. */
const StageResult *pipeline_ran(const KernelPipeline *kp, int n);

/* ---- user rules inserted into a stage ---- */
typedef struct InsertedRules {
    int stage;         /* 1..22 */
    bool before;       /* before the stage's own rule sets, else after */
    RuleSet *rules;    /* the pipeline's own reference to the user's rules */
} InsertedRules;

/* Inserts a rule set into stage n (a rewrite stage runs it in its own
 * graph_rewrite; a hook or empty stage as a pass of its own); stages n..22
 * are forgotten and run again with it.  False + err for a bad stage. */
bool pipeline_insert(KernelPipeline *kp, int n, const RuleSet *rules, bool before, char *err, size_t errlen);
/* Removes the sets inserted into stage n whose name is `name` (every set of
 * stage n when NULL); returns how many; stages n..22 are forgotten. */
int pipeline_remove(KernelPipeline *kp, int n, const char *name);
int pipeline_inserted_count(const KernelPipeline *kp);
const InsertedRules *pipeline_inserted(const KernelPipeline *kp, int i);

/* ---- rewrite points: inside a stage, after its first r rewrites ---- */
/* The root after the first r rewrites of stage n (r = 0: point n-1; r at
 * least the stage's rewrite count: point n).  The stage is run again with
 * stop_after = r; NULL + err on failure.  A stage that failed has the points
 * up to the rewrites it made before failing (pipeline_failure). */
const UOp *pipeline_rewrite_point(KernelPipeline *kp, int n, size_t r, char *err, size_t errlen);
/* The same point, the stage always run again (to its end when r is at least
 * its rewrite count) into trace, which is cleared first: its rewrites, and
 * its rebuilds when trace->keep_rebuilds is set (r = 0: nothing runs). */
const UOp *pipeline_rewrite_point_traced(KernelPipeline *kp, int n, size_t r, Trace *trace, char *err,
                                         size_t errlen);
/* Runs stage n again with StageCtx.probe set to probe: its rule pass stops
 * after rewrite r (0: before its first, -1 or at least its rewrite count:
 * at its end) and probe sees the rule set it runs and its rules' context
 * there.  A stage that is not a rule pass never calls it.  False + err when
 * the stage fails. */
bool pipeline_probe(KernelPipeline *kp, int n, long r, void (*probe)(const RuleSet *rs, void *user, void *ud),
                    void *ud, char *err, size_t errlen);
/* Stage n's own rule sets (no inserted rules) run to their end on root, a
 * rewrite point of stage n: the form the stage would leave, for checking a
 * point whose form nothing can run (a half-done expansion).  NULL + err. */
const UOp *pipeline_complete_stage(KernelPipeline *kp, int n, const UOp *root, char *err, size_t errlen);
/* Whether r is one of stage n's rewrite points, 0 to the rewrites it made
 * (true before the stage ran); false with "stage 15 made 20 rewrites:
 * rewrite points are 15.0 to 15.20".  pipeline_rewrite_point takes any r,
 * giving the stage's end past them. */
bool pipeline_rewrite_in_range(const KernelPipeline *kp, int n, size_t r, char *err, size_t errlen);
/* Moves to (n, r); rewrite_position is then r, or -1 when the position is
 * a whole stage (after pipeline_seek). */
bool pipeline_seek_rewrite(KernelPipeline *kp, int n, size_t r, char *err, size_t errlen);
long pipeline_rewrite_position(const KernelPipeline *kp);

/* the kernel's breakpoints (breakpoints.h), freed with the pipeline */
struct BreakList *pipeline_breaks(KernelPipeline *kp);

/* Runs all stages and compiles the final program (cached until opts
 * change); NULL + err on failure. */
Kernel *pipeline_kernel(KernelPipeline *kp, char *err, size_t errlen);
/* The same compiled with bounds checks (backend.h, KernelCompileOpts),
 * cached next to it and forgotten with it. */
Kernel *pipeline_kernel_checked(KernelPipeline *kp, char *err, size_t errlen);

#endif
