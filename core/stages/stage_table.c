/* stage_table.c - the 22 codegen stages as rows (number, name, phase, what
 * runs: rule sets by registry name and direction, a line rewrite, or a hook;
 * the rewrite context; purpose and status) and the one runner that executes
 * a row. */
#include "stages.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <stdlib.h>
#include "../rewrite/registry.h"
#include "../rewrite/rewrite.h"
#include "spec_verify.h"
#include "stage_rules.h"

#define RW(rules, pass) STAGE_REWRITE, rules, false, pass
#define RW_UP(rules, pass) STAGE_REWRITE, rules, true, pass
#define HOOK(fn) STAGE_HOOK, NULL, false, #fn, .hook = stage_##fn, .hook_name = #fn
#define PASS STAGE_PASS, NULL, false, NULL

/* The pipeline.  Rules are registry names joined as tinygrad writes them;
 * where a row differs from v0.12.0's codegen/__init__.py, the comment says
 * why. */
static const Stage STAGES[STAGE_COUNT] = {
    {1, "early movement ops", "rangeify", RW_UP("pm_mops + pm_syntactic_sugar", "early movement ops"),
     .purpose = "push movement ops left on INDEX into the index expressions; concatenate nested INDEX",
     .status = STAGE_WRITTEN},
    {2, "load collapse", "rangeify", RW("pm_load_collapse", "load collapse"),
     .purpose = "replace a REDUCE whose value does not need the loop by arithmetic (pm_load_collapse)",
     .status = STAGE_WRITTEN},
    {3, "split ranges", "rangeify", RW("pm_split_ranges + pm_flatten_range", "split ranges"),
     .ctx = &split_ranges_context, .purpose = "split a RANGE used as r%c into outer*c + inner",
     .status = STAGE_WRITTEN},
    {4, "initial symbolic", "rangeify", RW("sym + pm_flatten_range", "initial symbolic"),
     .purpose = "simplify index arithmetic: constant folding, identities, div/mod folding", .status = STAGE_WRITTEN},
    {5, "simplify ranges", "rangeify", RW("pm_simplify_ranges", "simplify ranges"),
     .purpose = "merge adjacent ranges when that does not add div/mod", .status = STAGE_WRITTEN},
    /* pm_flatten_range too: a store split into segments gets its range
     * lists flattened in the same pass */
    {6, "split store", "rangeify", RW("pm_flatten_range + pm_split_store", "cut store ranges"),
     .purpose = "split a store loop at constant comparison points inside the range (CPU only)",
     .status = STAGE_WRITTEN},
    {7, "apply opts", "rangeify", HOOK(apply_opts),
     .purpose = "apply tinygrad's hand-coded choice of opts for the target (cpu: UPCAST, UNROLL, THREAD; gpu: also GROUPTOP, LOCAL; the default) or the opts asked for by hand; none with opts = \"none\"",
     .status = STAGE_WRITTEN},
    /* pm_reduce_unparented (v0.12.0 runs it only in the scheduler): stage 6
     * cuts a loop where padding starts, and a segment of padding reduces a
     * constant, which must fold before stage 11 makes it an accumulator */
    {8, "post-opt symbolic", "expander", RW("sym + pm_move_where_on_load + pm_reduce_unparented", "postopt symbolic"),
     .purpose = "simplify again after opts; move WHERE guards into the INDEX they guard; drop reduce ranges the "
                "value does not use",
     .status = STAGE_WRITTEN},
    {9, "expander", "expander", RW("sym + pm_pre_expander + pm_group_for_reduce + expander", "expander"),
     .purpose = "turn UPCAST/UNROLL ranges into UNROLL, expand ops over them, CONTRACT into vectors",
     .status = STAGE_WRITTEN},
    {10, "add local buffers", "expander", RW("pm_add_buffers_local + rangeify_codegen", "add local buffers"),
     .ctx = &local_buffer_count_context,
     .purpose = "a local BUFFERIZE (GROUP opts, gpu target) becomes DEFINE_LOCAL, its STORE and a BARRIER; drop "
                "CONTIGUOUS/NOOP wrappers",
     .status = STAGE_WRITTEN,
     .note = "a global BUFFERIZE left in a kernel (the scheduler's to lower) is an error naming the node"},
    {11, "remove reduce", "devectorizer", RW("pm_reduce + gep_pushing", "remove_reduce"),
     .ctx = &remove_reduce_context,
     .purpose = "REDUCE becomes an accumulator register: init, accumulate in the loop, read after",
     .status = STAGE_WRITTEN},
    {12, "add GPU dims", "devectorizer", RW("pm_add_gpudims", "add gpudims"), .ctx = &gpudims_context,
     .purpose = "gpu: GLOBAL/LOCAL ranges become SPECIAL gidx/lidx within the GPU's limits, a store a local range "
                "does not index is done by its work item 0; cpu: a THREAD range becomes SPECIAL gidx0, the core_id",
     .status = STAGE_WRITTEN},
    {13, "add loads", "devectorizer", RW("pm_add_loads", "** add loads (code)"),
     .purpose = "wrap value INDEX in LOAD; INDEX becomes a pointer", .status = STAGE_WRITTEN},
    {14, "devectorize", "devectorizer",
     RW("sym + devectorize + load_store_folding + correct_load_store + load_store_indexing", "devectorize"),
     .purpose = "split vector ALUs and vector INDEX to what the target supports", .status = STAGE_WRITTEN},
    {15, "lower index dtype", "devectorizer", RW("pm_lower_index_dtype + load_store_indexing", "lower all index dtypes"),
     .purpose = "index becomes int32 where bounds allow, int64 otherwise; Invalid becomes an INDEX gate",
     .status = STAGE_WRITTEN},
    {16, "post-index symbolic", "linearizer", RW("symbolic", "post index symbolic"),
     .purpose = "simplify the concrete integer arithmetic", .status = STAGE_WRITTEN},
    {17, "pre-matcher", "linearizer", PASS, .purpose = "backend patterns before decompositions (renderer.pre_matcher)",
     .status = STAGE_NOT_APPLICABLE, .note = "the LLVM renderer has no pre-matcher"},
    /* the op set is tinygrad's CPU LLVM renderer's (FDIV, CMPLT); uop.compile's
     * {transcendentals = "native"} runs pm_decomp_native instead, for uopdb's
     * renderer, which draws EXP2/LOG2/SIN/SQRT/MAX and the shifts itself */
    {18, "decompositions", "linearizer", RW("pm_decomp", "decompositions"), .rules_native = "pm_decomp_native",
     .purpose = "rewrite ops the target lacks into ops it has (symbolic_simple + get_late_rewrite_patterns)",
     .status = STAGE_WRITTEN,
     .note = "EXP2/LOG2/SIN approximated, SQRT as pow, MAX as WHERE, THREEFRY as 32-bit ops, for tinygrad's CPU "
             "LLVM op set (FDIV, CMPLT); {transcendentals=\"native\"}: pm_decomp_native keeps LLVM intrinsics"},
    {19, "final rewrite", "linearizer", RW("pm_decomp + pm_render + extra_matcher + pm_split_ends", "final rewrite"),
     .rules_native = "pm_decomp_native + pm_render + extra_matcher + pm_split_ends",
     .purpose = "vector constants explicit, GEPs resolved, multi-range ENDs split", .status = STAGE_WRITTEN},
    {20, "add control flow", "linearizer", RW_UP("pm_add_control_flow", "add control flow"),
     .ctx = &control_flow_context, .purpose = "order sibling loops: a RANGE waits for the END of the loop before it",
     .status = STAGE_WRITTEN},
    {21, "linearize", "linearizer", HOOK(linearize),
     .purpose = "priority toposort into an instruction list (a LINEAR node)", .status = STAGE_WRITTEN},
    {22, "cleanup IF/ENDIF", "linearizer", STAGE_LINE_REWRITE, "pm_linearize_cleanups", false, "pm_linearize_cleanups",
     .purpose = "a gated STORE becomes IF / STORE / ENDIF (line_rewrite)", .status = STAGE_WRITTEN},
};

const Stage *stage_get(int n) { return n >= 1 && n <= STAGE_COUNT ? &STAGES[n - 1] : NULL; }

const char *stage_status_name(StageStatus s) {
    switch (s) {
    case STAGE_WRITTEN: return "written";
    case STAGE_PARTIAL: return "partial";
    case STAGE_NOT_APPLICABLE: return "n/a";
    case STAGE_NOT_WRITTEN: return "not written";
    }
    return "?";
}

static const char *const OPT_NAMES[] = {"UPCAST", "UNROLL", "THREAD", "LOCAL", "GROUP",
                                         "GROUPTOP", "PADTO", "SWAP", "NOLOCALS"};

const char *opt_op_name(OptOp op) {
    return (unsigned)op < sizeof OPT_NAMES / sizeof *OPT_NAMES ? OPT_NAMES[op] : "?";
}

bool opt_op_from_name(const char *s, OptOp *out) {
    for (unsigned i = 0; i < sizeof OPT_NAMES / sizeof *OPT_NAMES; i++)
        if (!strcmp(s, OPT_NAMES[i])) {
            *out = (OptOp)i;
            return true;
        }
    return false;
}

bool opt_op_gpu_only(OptOp op) { return op >= OPT_LOCAL; }

const char *stage_target_name(StageTarget t) { return t == TARGET_GPU ? "gpu" : "cpu"; }

const UOp *stage_fail(StageCtx *sc, const char *fmt, ...) {
    if (sc->err && sc->errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(sc->err, sc->errlen, fmt, ap);
        va_end(ap);
    }
    return NULL;
}

const char *stage_kind_name(StageKind k) {
    switch (k) {
    case STAGE_REWRITE: return "rewrite";
    case STAGE_LINE_REWRITE: return "line rewrite";
    case STAGE_HOOK: return "hook";
    case STAGE_PASS: return "pass";
    }
    return "?";
}

const char *stage_runs(const Stage *st, char *buf, size_t len) { return stage_runs_for(st, false, buf, len); }

const char *stage_runs_for(const Stage *st, bool native_transcendentals, char *buf, size_t len) {
    const char *rules = native_transcendentals && st->rules_native ? st->rules_native : st->rules;
    switch (st->kind) {
    case STAGE_REWRITE: snprintf(buf, len, "%s%s", rules, st->bottom_up ? " (bottom-up)" : ""); break;
    case STAGE_LINE_REWRITE: snprintf(buf, len, "line rewrite %s", st->rules); break;
    case STAGE_HOOK: snprintf(buf, len, "hook %s", st->hook_name); break;
    case STAGE_PASS: snprintf(buf, len, "nothing"); break;
    }
    return buf;
}

static const UOp *run_graph_rewrite(StageCtx *sc, const Stage *st, const RuleSet *rs, const UOp *root) {
    void *user = NULL;
    if (st->ctx) {
        user = calloc(1, st->ctx->size);
        if (!user) return stage_fail(sc, "out of memory for %s", st->ctx->name);
        char why[256] = "";
        if (st->ctx->init && !st->ctx->init(user, root, sc, why, sizeof why)) {
            if (st->ctx->release) st->ctx->release(user);
            free(user);
            return stage_fail(sc, "%s: %s", st->ctx->name, why);
        }
    }
    RewriteOpts o = {.bottom_up = st->bottom_up, .name = st->pass_name, .trace = sc->trace, .timing = sc->timing,
                     .user = user, .stop_after = sc->stop_after};
    uctx_clear_error(sc->c);
    const UOp *r = sc->probe && sc->probe_first ? root : graph_rewrite(sc->c, root, rs, &o);
    if (r && sc->probe) sc->probe(rs, user, sc->probe_ud);
    if (st->ctx && st->ctx->release) st->ctx->release(user);
    free(user);
    if (!r) return stage_fail(sc, "%s", uctx_error(sc->c));
    return r;
}

static const UOp *run_line_rewrite(StageCtx *sc, const Stage *st, const RuleSet *rs, const UOp *root) {
    if (uop_op(root) != OP_LINEAR)
        return stage_fail(sc, "expected the LINEAR program of stage 21, got %s %%%u", op_name(uop_op(root)), root->id);
    RewriteOpts o = {.name = st->pass_name, .trace = sc->trace, .timing = sc->timing};
    const UOp **out = NULL;
    size_t nout = 0;
    uctx_clear_error(sc->c);
    if (sc->probe && sc->probe_first) {
        sc->probe(rs, NULL, sc->probe_ud);
        return root;
    }
    if (!line_rewrite(sc->c, root->src, root->nsrc, rs, &o, &out, &nout)) return stage_fail(sc, "%s", uctx_error(sc->c));
    if (sc->probe) sc->probe(rs, NULL, sc->probe_ud);
    const UOp *lin = nout <= 65535 ? uop_new(sc->c, OP_LINEAR, DT_VOID, out, (int)nout, NULL) : NULL;
    free((void *)out);
    if (!lin) return stage_fail(sc, "%s", nout > 65535 ? "too many instructions" : uctx_error(sc->c));
    return lin;
}

/* rs with the inserted sets around it, as one set: "before + rs + after" */
static RuleSet *with_inserted(const StageCtx *sc, const RuleSet *rs) {
    RuleSet *acc = NULL;
    char name[512] = "";
    for (int i = 0; i <= sc->nbefore + sc->nafter; i++) {
        const RuleSet *part = i < sc->nbefore ? sc->before[i] : i == sc->nbefore ? rs : sc->after[i - sc->nbefore - 1];
        size_t len = strlen(name);
        snprintf(name + len, sizeof name - len, "%s%s", len ? " + " : "", ruleset_name(part));
        RuleSet *next = ruleset_concat(name, acc, part);
        ruleset_free(acc);
        if (!(acc = next)) return NULL;
    }
    return acc;
}

bool stage_takes_inserted_rules(int n, bool before, char *why, size_t whylen) {
    const Stage *st = stage_get(n), *next = stage_get(n + 1);
    bool in_linear = st && st->kind == STAGE_LINE_REWRITE;
    if (!st || !(in_linear || (!before && next && next->kind == STAGE_LINE_REWRITE))) return true;
    snprintf(why, whylen, "rules %s stage %d (%s) would run on the linear program, where rules cannot run; insert "
             "them at stage %d with {before = true}, or earlier", in_linear ? "in" : "after", n, st->name,
             in_linear ? n - 1 : n);
    return false;
}

/* the inserted sets of one side as a pass of their own, around a stage that is not a rewrite */
static const UOp *run_inserted(StageCtx *sc, const RuleSet *const *sets, int n, const UOp *root) {
    for (int i = 0; i < n && root; i++) {
        RewriteOpts o = {.name = "inserted rules", .trace = sc->trace, .timing = sc->timing};
        uctx_clear_error(sc->c);
        const UOp *r = graph_rewrite(sc->c, root, sets[i], &o);
        if (!r) return stage_fail(sc, "%s: %s", ruleset_name(sets[i]), uctx_error(sc->c));
        root = r;
    }
    return root;
}

const RuleSet *stage_rule_set(const Stage *st, bool native_transcendentals, char *err, size_t errlen) {
    if (errlen) err[0] = 0;
    if (st->kind != STAGE_REWRITE && st->kind != STAGE_LINE_REWRITE) return NULL;
    stages_register_rulesets();
    return ruleset_get(native_transcendentals && st->rules_native ? st->rules_native : st->rules, err, errlen);
}

static const UOp *run_row(StageCtx *sc, const Stage *st, const UOp *root) {
    char where[300];
    if ((sc->nbefore && !stage_takes_inserted_rules(st->number, true, where, sizeof where)) ||
        (sc->nafter && !stage_takes_inserted_rules(st->number, false, where, sizeof where)))
        return stage_fail(sc, "%s", where);
    const RuleSet *rs = NULL;
    if (st->kind == STAGE_REWRITE || st->kind == STAGE_LINE_REWRITE) {
        char why[300];
        if (!(rs = stage_rule_set(st, sc->native_transcendentals, why, sizeof why))) return stage_fail(sc, "%s", why);
    }
    if (st->kind == STAGE_REWRITE && sc->nbefore + sc->nafter > 0) {
        RuleSet *all = with_inserted(sc, rs);
        if (!all) return stage_fail(sc, "out of memory composing the inserted rules");
        const UOp *r = run_graph_rewrite(sc, st, all, root);
        ruleset_free(all);
        return r;
    }
    root = run_inserted(sc, sc->before, sc->nbefore, root);
    if (!root) return NULL;
    const UOp *r = NULL;
    switch (st->kind) {
    case STAGE_REWRITE: r = run_graph_rewrite(sc, st, rs, root); break;
    case STAGE_LINE_REWRITE: r = run_line_rewrite(sc, st, rs, root); break;
    case STAGE_HOOK: r = st->hook(sc, root); break;
    case STAGE_PASS: r = root; break;
    }
    return r ? run_inserted(sc, sc->after, sc->nafter, r) : NULL;
}

/* With sc->verify, the root at point n, a stage's output or, for n = 0,
 * the kernel as scheduled, must meet the spec of that point; a rewrite
 * point (stop_after) may be a half-done form and is not checked.  False
 * with "spec: ..." in sc->err. */
static bool verify_point(StageCtx *sc, int n, const UOp *root) {
    if (!sc->verify || (n > 0 && sc->stop_after != 0)) return true;
    VerifyError e;
    if (uop_verify(root, spec_for_point(n), &e, NULL)) return true;
    if (n == 0) stage_fail(sc, "spec of its input (point 0, %s spec): %s", spec_kind_name(SPEC_KERNEL), e.msg);
    else stage_fail(sc, "spec: %s", e.msg);
    return false;
}

const UOp *stage_run(StageCtx *sc, int n, const UOp *root) {
    const Stage *st = stage_get(n);
    if (!st) return stage_fail(sc, "no stage %d: stages are 1 to %d", n, STAGE_COUNT);
    if (!root) return stage_fail(sc, "stage %d (%s): no input", n, st->name);
    const UOp *out = n != 1 || verify_point(sc, 0, root) ? run_row(sc, st, root) : NULL;
    if (out && !verify_point(sc, n, out)) out = NULL;
    if (!out && sc->err && sc->errlen) {
        char inner[512];
        snprintf(inner, sizeof inner, "%s", sc->err);
        snprintf(sc->err, sc->errlen, "stage %d (%s): %s", n, st->name, inner);
    }
    return out;
}

const UOp *stages_run_all(UCtx *c, const UOp *ast, const KernelOpt *opts, int nopts, char *err, size_t errlen) {
    StageCtx sc = {.c = c, .opts = opts, .nopts = nopts, .err = err, .errlen = errlen, .verify = spec_verify_enabled()};
    const UOp *u = ast;
    for (int n = 1; n <= STAGE_COUNT && u; n++) u = stage_run(&sc, n, u);
    return u;
}
