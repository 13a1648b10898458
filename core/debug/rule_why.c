/* rule_why.c - why a rule does or does not rewrite a node (rule_why.h):
 * picks the stage that runs the rule, runs that stage's pass again to where
 * the current point stands with a probe that tries the rule on the node in
 * the pass's own context, and reads the stage's trace for what it did to
 * the node. */
#include "rule_why.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../util/interrupt.h"
#include "../util/name_distance.h"

static bool why_fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool why_fail(char *err, size_t errlen, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return false;
}

/* the rule set a stage's row runs (NULL for a hook or a pass) */
static const RuleSet *row_rules(const KernelPipeline *kp, int n) {
    const Stage *st = stage_get(n);
    char why[300];
    return st ? stage_rule_set(st, pipeline_options(kp).native_transcendentals, why, sizeof why) : NULL;
}

static int count_named(const RuleSet *rs, const char *name) {
    int found = 0;
    for (int i = 0; rs && i < ruleset_count(rs); i++) found += strcmp(rule_name(ruleset_rule(rs, i)), name) == 0;
    return found;
}

/* rules of that name stage n's pass runs (with name NULL: all of them): its
 * row's and those inserted into it (rules inserted around a hook run in
 * passes of their own, which the probe does not reach, so they do not
 * count) */
static int stage_runs_rule(const KernelPipeline *kp, int n, const char *name) {
    const RuleSet *own = row_rules(kp, n);
    if (!own) return 0;
    int found = name ? count_named(own, name) : ruleset_count(own);
    for (int i = 0; i < pipeline_inserted_count(kp); i++) {
        const InsertedRules *ins = pipeline_inserted(kp, i);
        if (ins->stage == n) found += name ? count_named(ins->rules, name) : ruleset_count(ins->rules);
    }
    return found;
}

const char *pipeline_closest_rule(const KernelPipeline *kp, const char *name) {
    const char *best = NULL;
    size_t best_d = 4; /* only suggest near misses */
    for (int n = 1; n <= STAGE_COUNT; n++) {
        const RuleSet *rs = row_rules(kp, n);
        for (int i = 0; rs && i < ruleset_count(rs); i++) {
            const char *cand = rule_name(ruleset_rule(rs, i));
            size_t d = (size_t)name_distance(name, cand);
            if (d < best_d) best_d = d, best = cand;
        }
    }
    for (int i = 0; i < pipeline_inserted_count(kp); i++) {
        const RuleSet *rs = pipeline_inserted(kp, i)->rules;
        for (int j = 0; j < ruleset_count(rs); j++) {
            const char *cand = rule_name(ruleset_rule(rs, j));
            size_t d = (size_t)name_distance(name, cand);
            if (d < best_d) best_d = d, best = cand;
        }
    }
    return best;
}

bool pipeline_runs_rule(const KernelPipeline *kp, const char *name) {
    for (int n = 1; n <= STAGE_COUNT; n++)
        if (count_named(row_rules(kp, n), name)) return true;
    for (int i = 0; i < pipeline_inserted_count(kp); i++)
        if (count_named(pipeline_inserted(kp, i)->rules, name)) return true;
    return false;
}

/* The stage to try the rule in (name NULL: any rule): the current one when
 * it runs it, else the next that does, else the last before.  0 when none
 * does. */
static int pick_stage(const KernelPipeline *kp, int at_stage, const char *name) {
    if (at_stage >= 1 && stage_runs_rule(kp, at_stage, name)) return at_stage;
    for (int n = at_stage + 1; n <= STAGE_COUNT; n++)
        if (stage_runs_rule(kp, n, name)) return n;
    for (int n = at_stage - 1; n >= 1; n--)
        if (stage_runs_rule(kp, n, name)) return n;
    return 0;
}

typedef struct Probe {
    const char *name; /* NULL: every rule that can match the node's op */
    UCtx *c;
    RuleWhy *out;
    bool oom;
} Probe;

/* inside the stage's pass: the rules asked for tried on the node */
static void probe_rules(const RuleSet *rs, void *user, void *ud) {
    Probe *p = ud;
    RuleWhy *w = p->out;
    int n = ruleset_count(rs);
    w->set_size = n;
    for (int i = 0; i < n; i++) {
        Rule *r = ruleset_rule(rs, i);
        for (int d = 0; d < w->ndone; d++)
            if (!w->done[d].index && !strcmp(rule_name(r), w->done[d].rule) && !strcmp(rule_file(r), w->done[d].file) &&
                rule_line(r) == w->done[d].line)
                w->done[d].index = i + 1;
        bool wanted = p->name ? !strcmp(rule_name(r), p->name) : rule_root_can_be(r, uop_op(w->node));
        if (!wanted) continue;
        if (!w->rules && !(w->rules = calloc((size_t)n, sizeof *w->rules))) {
            p->oom = true;
            return;
        }
        WhyRule *t = &w->rules[w->nrules++];
        t->index = i + 1;
        t->rule = r;
        rule_explain(r, p->c, w->node, user, &t->ex);
    }
}

/* what the stage did to the node, and how often the rule fired in it */
static bool read_trace(RuleWhy *w, const Trace *t, const char *name, char *err, size_t errlen) {
    w->of = t->nrewrites;
    for (size_t i = 0; i < t->nrewrites; i++) {
        const TraceRewrite *tr = &t->rewrites[i];
        if (name && strcmp(tr->rule, name) == 0) w->fired++;
        if (tr->before != w->node) continue;
        WhyRewrite *grown = realloc(w->done, (size_t)(w->ndone + 1) * sizeof *grown);
        if (!grown) return why_fail(err, errlen, "out of memory");
        w->done = grown;
        w->done[w->ndone++] = (WhyRewrite){.rewrite = i + 1, .rule = tr->rule, .file = tr->file, .line = tr->line,
                                           .after = tr->after};
    }
    return true;
}

/* Where a stage that runs the rule (any rule, for NULL) rewrote the node,
 * among the stages that have run: the point right before is where the pass
 * offered it the node.  Writes "stage 15 rewrote it at 15.8: :goto 15.7
 * stands right before" into hint, or "" when none did. */
static void rewritten_at(const KernelPipeline *kp, const char *rule, const UOp *node, char *hint, size_t len) {
    hint[0] = 0;
    for (int n = 1; n <= STAGE_COUNT; n++) {
        const StageResult *res = pipeline_result(kp, n);
        if (!res || !stage_runs_rule(kp, n, rule)) continue;
        for (size_t i = 0; i < res->trace.nrewrites; i++)
            if (res->trace.rewrites[i].before == node) {
                snprintf(hint, len, "stage %d rewrote it at %d.%zu: :goto %d.%zu stands right before", n, n, i + 1, n, i);
                return;
            }
    }
}

static const char *where_name(char *buf, size_t len, int stage, long r) {
    if (r < 0) snprintf(buf, len, "point %d, the end of stage %d", stage, stage);
    else if (r == 0) snprintf(buf, len, "point %d.0, the input of stage %d", stage, stage);
    else snprintf(buf, len, "point %d.%ld", stage, r);
    return buf;
}

bool rule_why(KernelPipeline *kp, int at_stage, long at_rewrite, const char *rule, const UOp *node, int stage,
              RuleWhy *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    out->node = node;
    if (rule && !*rule) return why_fail(err, errlen, "no rule name given");
    if (stage < 0 || stage > STAGE_COUNT) return why_fail(err, errlen, "no stage %d: stages are 1 to %d", stage, STAGE_COUNT);
    if (stage == 0) stage = pick_stage(kp, at_stage, rule);
    if (!rule && (!stage || !stage_runs_rule(kp, stage, NULL))) {
        if (!stage) return why_fail(err, errlen, "no stage runs rules");
        const Stage *st = stage_get(stage);
        return why_fail(err, errlen, "stage %d (%s) runs no rules (it is %s)", stage, st->name,
                        st->kind == STAGE_HOOK ? "an algorithm, not a rule pass" : "a pass that does nothing here");
    }
    if (rule && (!stage || !stage_runs_rule(kp, stage, rule))) {
        const char *near = pipeline_closest_rule(kp, rule);
        char hint[160] = "";
        if (near) snprintf(hint, sizeof hint, " (did you mean %s?)", near);
        if (!stage) return why_fail(err, errlen, "no stage runs a rule named %s%s", rule, hint);
        const Stage *st = stage_get(stage);
        return why_fail(err, errlen, "stage %d (%s) runs no rule named %s%s", stage, st->name, rule, hint);
    }
    out->stage = stage;
    /* where in the stage: the current point when it is in the stage, else
     * the stage's input (ahead of the point) or its end (behind it) */
    long r = stage == at_stage ? at_rewrite : stage > at_stage ? 0 : -1;
    if (stage == at_stage && at_rewrite < 0) r = -1;
    char perr[1024];
    const UOp *in = pipeline_root(kp, stage - 1, perr, sizeof perr);
    if (!in) return why_fail(err, errlen, "%s", perr);
    /* a stage that failed has no end: its rules are asked at the points before the failure */
    const UOp *end = pipeline_root(kp, stage, perr, sizeof perr);
    const StageResult *res = pipeline_ran(kp, stage);
    if (!res || (!end && !res->failed)) return why_fail(err, errlen, "%s", perr);
    out->failed = res->failed ? res->error : NULL;
    size_t made = res->rewrites;
    if (end && r > 0 && (size_t)r >= made) r = -1;
    if (!end && r < 0)
        return why_fail(err, errlen, "%s; ask at one of the rewrite points before it failed (:goto %d.%zu)", res->error,
                        stage, made);
    out->rewrite = r;
    const UOp *there = r < 0 ? end : r == 0 ? in : pipeline_rewrite_point(kp, stage, (size_t)r, perr, sizeof perr);
    if (!there) return why_fail(err, errlen, "%s", perr);
    if (uopdb_interrupted()) return why_fail(err, errlen, "interrupted");
    int has = uop_graph_has(there, node);
    out->in_input = uop_graph_has(in, node);
    out->in_output = end ? uop_graph_has(end, node) : 0;
    if (has < 0 || out->in_input < 0 || out->in_output < 0) return why_fail(err, errlen, "out of memory");
    if (!has) {
        char where[96], hint[256];
        rewritten_at(kp, rule, node, hint, sizeof hint);
        if (!hint[0] && pipeline_where_is(kp, node, hint, sizeof hint) > 0) {
            size_t used = strlen(hint);
            snprintf(hint + used, sizeof hint - used, "; name one of its stages with {stage = N}");
        }
        return why_fail(err, errlen, "%%%u is not in the graph at %s, where its rules would see it (%s)", node->id,
                        where_name(where, sizeof where, stage, r), hint);
    }
    if (!read_trace(out, &res->trace, rule, err, errlen)) return false;
    Probe p = {.name = rule, .c = pipeline_ctx(kp), .out = out};
    if (!pipeline_probe(kp, stage, r, probe_rules, &p, perr, sizeof perr)) return why_fail(err, errlen, "%s", perr);
    if (p.oom) return why_fail(err, errlen, "out of memory");
    if (rule && !out->nrules) return why_fail(err, errlen, "stage %d ran no rule named %s", stage, rule);
    if (!out->set_size) return why_fail(err, errlen, "stage %d did not run its rules", stage);
    return true;
}

void rule_why_free(RuleWhy *w) {
    free(w->done);
    free(w->rules);
    w->done = NULL;
    w->rules = NULL;
    w->ndone = w->nrules = 0;
}
