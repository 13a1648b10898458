/* bisect.c - the stage bisection of a kernel: every point checked in turn,
 * the first one that differs from the reference (or cannot be run and
 * breaks its spec) named. */
#include "bisect.h"
#include <stdio.h>
#include "../stages/spec_verify.h"
#include "../util/interrupt.h"
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static char *copy(const char *s) {
    char *r = malloc(strlen(s) + 1);
    if (r) strcpy(r, s);
    return r;
}

static bool set_text(char **dst, const char *s) {
    free(*dst);
    *dst = copy(s);
    return *dst != NULL;
}

/* the progress function of the running bisect (NULL: none) */
typedef struct Progress { const BisectProgress *p; int checked; bool stopped; } Progress;

/* tells the progress function what comes next; false when it says stop */
static bool tell(Progress *pr, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool tell(Progress *pr, const char *fmt, ...) {
    if (!pr->p || !pr->p->fn || pr->stopped) return !pr->stopped;
    char what[128];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (!pr->p->fn(pr->p->ud, what, pr->checked)) pr->stopped = true;
    return !pr->stopped;
}

/* Whether root, the graph at point n, breaks the spec of that point (msg:
 * the verifier's line).  inside: root is a rewrite point inside stage n,
 * between the stage's input and its output, so it breaks its spec only
 * when it meets neither the spec of point n-1 nor that of point n (stage
 * 16 folds the CASTs to index that the spec of point 16 forbids). */
static bool breaks_spec(const UOp *root, int n, bool inside, char *msg, size_t msglen) {
    VerifyError e;
    SpecKind kind = spec_for_point(n);
    if (uop_verify(root, kind, &e, NULL)) return false;
    if (inside && n > 0 && spec_for_point(n - 1) != kind && uop_verify(root, spec_for_point(n - 1), NULL, NULL))
        return false;
    snprintf(msg, msglen, "%s", e.msg);
    return true;
}

/* Checks rewrite point (n, r): 1 right, 0 wrong, -1 not checkable (why
 * says so).  A point that reads or writes outside a buffer is wrong (why
 * says where; empty otherwise), and so is one that cannot be run and
 * breaks its spec (why is the verifier's line, *by_spec set).  A point
 * whose form nothing runs (a half-done expansion) is checked completed by
 * the stage's own rules, when that is known to be sound: the completion of
 * the stage's first point must check right. */
static int check_rewrite_point(KernelCheck *kc, KernelPipeline *kp, int n, size_t r, int *completion_ok, char *why,
                               size_t whylen, bool *by_spec) {
    char err[1024];
    ValidateReport rep;
    StrBuf sb;
    sb_init(&sb);
    why[0] = 0;
    const UOp *root = pipeline_rewrite_point(kp, n, r, err, sizeof err);
    bool ran = root && kcheck_root(kc, root, &rep, &sb, err, sizeof err);
    if (!ran && root && !kcheck_bad_access(kc)) {
        if (*completion_ok < 0) { /* not tried yet: the completion of (n, 0) must be right */
            const UOp *first = pipeline_rewrite_point(kp, n, 0, err, sizeof err);
            const UOp *done = first ? pipeline_complete_stage(kp, n, first, err, sizeof err) : NULL;
            ValidateReport r0;
            StrBuf s0;
            sb_init(&s0);
            *completion_ok = done && kcheck_root(kc, done, &r0, &s0, err, sizeof err) && r0.ok;
            sb_free(&s0);
        }
        if (*completion_ok) {
            const UOp *done = pipeline_complete_stage(kp, n, root, err, sizeof err);
            ran = done && kcheck_root(kc, done, &rep, &sb, err, sizeof err);
        }
    }
    sb_free(&sb);
    *by_spec = false;
    if (!ran) {
        const char *access = root ? kcheck_bad_access(kc) : NULL, *w = strstr(err, "interp: ");
        if (!access && root && breaks_spec(root, n, true, why, whylen)) return *by_spec = true, 0;
        snprintf(why, whylen, "%s", access ? access : w ? w + 8 : err);
        return access ? 0 : -1;
    }
    return rep.ok ? 1 : 0;
}

/* Bisects the rewrites of stage n, whose input checks right and whose
 * output checks wrong (end_access: by an access outside a buffer, where;
 * end_spec: by a spec it breaks, the verifier's line; else NULL): the
 * culprit is the first r whose point is wrong. */
static void bisect_rewrites(KernelCheck *kc, KernelPipeline *kp, int n, const char *end_access, const char *end_spec,
                            BisectCulprit *c, Progress *pr) {
    const StageResult *res = pipeline_result(kp, n);
    c->of = res ? res->rewrites : 0;
    if (!res || res->rewrites == 0) {
        set_text(&c->why, "the stage made no traced rewrite (a hook or an inserted pass changed the kernel)");
        return;
    }
    size_t good = 0, bad = res->rewrites;
    int completion_ok = -1;
    char effect[1024] = ""; /* the access outside a buffer at point bad, if that made it wrong */
    char spec[1024] = "";   /* the spec point bad breaks, if that made it wrong */
    if (end_access) snprintf(effect, sizeof effect, "%s", end_access);
    if (end_spec) snprintf(spec, sizeof spec, "%s", end_spec);
    while (bad - good > 1) {
        size_t mid = good + (bad - good) / 2;
        if (uopdb_interrupted() || !tell(pr, "rewrite %zu of %zu in stage %d", mid, res->rewrites, n)) {
            set_text(&c->why, "interrupted");
            return;
        }
        char why[1024];
        bool by_spec;
        int right = check_rewrite_point(kc, kp, n, mid, &completion_ok, why, sizeof why, &by_spec);
        if (right < 0) {
            char text[1400];
            snprintf(text, sizeof text, "rewrite point %d.%zu could not be checked: %s (the culprit is one of rewrites "
                     "%zu..%zu)", n, mid, why, good + 1, bad);
            set_text(&c->why, text);
            return;
        }
        c->checked++;
        pr->checked++;
        if (right) good = mid;
        else {
            bad = mid;
            snprintf(effect, sizeof effect, "%s", by_spec ? "" : why);
            snprintf(spec, sizeof spec, "%s", by_spec ? why : "");
        }
    }
    res = pipeline_result(kp, n);
    const TraceRewrite *w = &res->trace.rewrites[bad - 1];
    c->found = true;
    c->index = bad;
    c->line = w->line;
    c->before = w->before;
    c->after = w->after;
    set_text(&c->rule, w->rule);
    set_text(&c->file, w->file ? w->file : "");
    if (effect[0]) set_text(&c->effect, effect);
    if (spec[0]) set_text(&c->spec, spec);
}

/* Checks point n into out->points[n] (once): 1 right, 0 wrong (its output
 * differs, it accesses memory outside a buffer, or it cannot be run and
 * breaks its spec), -1 not checked (a form nothing runs that meets its
 * spec, or the stage failed), -2 out of memory, -3 interrupted (the point
 * is left unchecked: Ctrl-C is not a verdict). */
static int check_point(KernelCheck *kc, KernelPipeline *kp, int n, BisectResult *out, Progress *pr) {
    PointCheck *pc = &out->points[n];
    if (pc->text) return pc->state == POINT_MATCHES ? 1 : pc->state == POINT_DIFFERS ? 0 : -1;
    if (!tell(pr, "stage %d", n)) return -3;
    pr->checked++;
    StrBuf sb;
    sb_init(&sb);
    char why[1024] = "";
    bool ran = kcheck_point(kc, n, &pc->rep, &sb, why, sizeof why);
    if (!ran && uopdb_interrupted()) { /* the check was stopped: the point is not known either way */
        sb_free(&sb);
        return -3;
    }
    if (ran) {
        pc->state = pc->rep.ok ? POINT_MATCHES : POINT_DIFFERS;
        pc->text = copy(sb_str(&sb));
        out->checked++;
    } else if (kcheck_bad_access(kc)) { /* it reads or writes outside a buffer: wrong */
        char text[1100];
        snprintf(text, sizeof text, "accesses memory outside a buffer: %s", kcheck_bad_access(kc));
        pc->state = POINT_DIFFERS;
        pc->rep.ok = false;
        pc->text = copy(text);
        pc->access = copy(kcheck_bad_access(kc));
        if (!pc->access) {
            sb_free(&sb);
            return -2;
        }
        out->checked++;
    } else {
        const char *w = strstr(why, "interp: ");
        const StageResult *f = n > 0 ? pipeline_failure(kp, n) : NULL;
        pc->state = f ? POINT_FAILED : n > 0 && !pipeline_result(kp, n) ? POINT_NOT_REACHED : POINT_NOT_CHECKED;
        char err[1024], msg[1024];
        const UOp *root = pc->state == POINT_NOT_CHECKED ? pipeline_root(kp, n, err, sizeof err) : NULL;
        if (root && breaks_spec(root, n, false, msg, sizeof msg)) { /* the kernel is broken here, not the executor */
            StrBuf t;
            sb_init(&t);
            sb_printf(&t, "breaks its %s spec: %s; it cannot be run: %s", spec_kind_name(spec_for_point(n)), msg,
                      w ? w + 8 : why);
            pc->state = POINT_DIFFERS;
            pc->rep.ok = false;
            pc->text = copy(sb_str(&t));
            pc->spec = copy(msg);
            sb_free(&t);
            if (!pc->spec) {
                sb_free(&sb);
                return -2;
            }
            out->checked++;
        } else {
            pc->text = copy(f ? f->error : w ? w + 8 : why);
        }
    }
    sb_free(&sb);
    if (!pc->text) return -2;
    return pc->state == POINT_MATCHES ? 1 : pc->state == POINT_DIFFERS ? 0 : -1;
}

/* the first wrong point by checking them in order */
static int scan(KernelCheck *kc, KernelPipeline *kp, BisectResult *out, Progress *pr) {
    for (int n = 0; n <= STAGE_COUNT; n++) {
        if (uopdb_interrupted()) return -3;
        int r = check_point(kc, kp, n, out, pr);
        if (r == -2 || r == -3) return r;
        if (r == 0) return n;
        if (out->points[n].state == POINT_NOT_REACHED || out->points[n].state == POINT_FAILED) return -1;
    }
    return -1;
}

/* the first wrong point by binary search between a right point and a wrong
 * one (a point that cannot be checked is stepped over).  The last point
 * that runs is checked first: when it is right, the kernel is, and the
 * other points are not needed.  The kernel as scheduled, whose check in the
 * AST interpreter is the slowest, is checked last and only when no later
 * point is right: a right point means every point before it is right too,
 * as a point stays wrong once wrong. */
static int search(KernelCheck *kc, KernelPipeline *kp, BisectResult *out, Progress *pr) {
    int hi = STAGE_COUNT, rh;
    while ((rh = check_point(kc, kp, hi, out, pr)) < 0 && hi > 0) {
        if (rh == -2 || rh == -3) return rh;
        hi--;
    }
    if (rh == -2 || rh == -3) return rh;
    if (rh != 0) return -1;  /* the last point that runs is right (or none runs) */
    if (hi == 0) return 0;
    int lo = 0;              /* right; point 0 only assumed so until it is checked below */
    while (hi - lo > 1) {
        if (uopdb_interrupted()) return -3;
        int mid = lo + (hi - lo) / 2, m = mid, r = -1;
        /* the nearest checkable point to mid, inside (lo, hi) */
        for (int d = 0; d < hi - lo && r < 0; d++) {
            m = mid + (d % 2 ? -(d + 1) / 2 : d / 2);
            if (m <= lo || m >= hi) continue;
            r = check_point(kc, kp, m, out, pr);
            if (r == -2 || r == -3) return r;
        }
        if (r < 0) break;     /* nothing between lo and hi can be checked */
        if (r) lo = m;
        else hi = m;
    }
    if (lo > 0) return hi;
    /* no point after the kernel as scheduled is right: is it wrong already? */
    int r0 = check_point(kc, kp, 0, out, pr);
    if (r0 == -2 || r0 == -3) return r0;
    return r0 == 0 ? 0 : hi;
}

bool dbg_bisect(const Schedule *s, KernelPipeline *const *kps, int ki, RefBufferFn inputs, void *ud, double atol,
                double rtol, bool all, CheckExecutor how, const BisectProgress *progress, BisectResult *out, char *err,
                size_t errlen) {
    Progress pr = {progress, 0, false};
    memset(out, 0, sizeof *out);
    out->first_bad = -1;
    for (int n = 0; n <= STAGE_COUNT; n++) out->points[n].state = POINT_SKIPPED;
    KernelCheck *kc = kcheck_new(s, kps, ki, inputs, ud, atol, rtol, err, errlen);
    if (!kc) return false;
    kcheck_set_executor(kc, how);
    int bad = all ? scan(kc, kps[ki], out, &pr) : search(kc, kps[ki], out, &pr);
    if (bad == -2 || bad == -3) {
        kcheck_free(kc);
        bisect_result_free(out);
        snprintf(err, errlen, "%s", bad == -2 ? "out of memory" : "interrupted");
        return false;
    }
    out->first_bad = bad;
    for (int n = 0; n <= STAGE_COUNT; n++) out->unchecked += out->points[n].state == POINT_NOT_CHECKED;
    /* no point is wrong, but a stage failed right after right points: that stage breaks the kernel */
    for (int n = 1; bad < 0 && n <= STAGE_COUNT; n++)
        if (out->points[n].state == POINT_FAILED) {
            out->first_bad = n;
            out->failed = true;
            break;
        }
    /* the rewrites of the first wrong stage, when the point before it was checked right */
    if (bad >= 1) {
        if (out->points[bad - 1].state == POINT_MATCHES)
            bisect_rewrites(kc, kps[ki], bad, out->points[bad].access, out->points[bad].spec, &out->culprit, &pr);
        else set_text(&out->culprit.why, "the point before this stage could not be checked, so the wrong rewrite may "
                                         "be in an earlier stage");
    }
    kcheck_free(kc);
    if (pr.stopped || uopdb_interrupted()) { /* a check cut short proves nothing: no verdict */
        bisect_result_free(out);
        snprintf(err, errlen, "interrupted");
        return false;
    }
    return true;
}

void bisect_result_free(BisectResult *r) {
    for (int n = 0; n <= STAGE_COUNT; n++) {
        free(r->points[n].text);
        free(r->points[n].access);
        free(r->points[n].spec);
        r->points[n].text = NULL;
        r->points[n].access = NULL;
        r->points[n].spec = NULL;
    }
    free(r->culprit.rule);
    free(r->culprit.file);
    free(r->culprit.why);
    free(r->culprit.effect);
    free(r->culprit.spec);
    memset(&r->culprit, 0, sizeof r->culprit);
}

void bisect_format(const BisectResult *r, const char *kernel_name, const char *before_text, const char *after_text,
                   StrBuf *sb) {
    sb_printf(sb, "bisect %s: ", kernel_name);
    if (r->failed) {
        const Stage *st = stage_get(r->first_bad);
        sb_printf(sb, "stage %d (%s) fails", r->first_bad, st ? st->name : "?");
    } else if (r->first_bad >= 0) {
        const Stage *st = stage_get(r->first_bad);
        sb_printf(sb, "first wrong at stage %d (%s)", r->first_bad, st ? st->name : "as scheduled");
    } else {
        sb_puts(sb, "no checked stage differs from the reference");
        /* a point not checked is not a right one: no verdict on the kernel */
        if (r->unchecked)
            sb_printf(sb, ", but %d point%s could not be checked, so the kernel is not known to be right",
                      r->unchecked, r->unchecked == 1 ? "" : "s");
    }
    sb_printf(sb, "; %d of %d points checked\n", r->checked, STAGE_COUNT + 1);
    if (r->failed) {
        if (r->points[r->first_bad - 1].state == POINT_MATCHES) sb_printf(sb, "  stage %d is right; ", r->first_bad - 1);
        else sb_puts(sb, "  ");
        sb_printf(sb, "%s\n  :rewrites %d lists what it did before it failed, and :goto %d.R steps through it\n",
                  r->points[r->first_bad].text ? r->points[r->first_bad].text : "it failed", r->first_bad,
                  r->first_bad);
    } else if (r->first_bad >= 1 && r->points[r->first_bad - 1].state == POINT_MATCHES)
        sb_printf(sb, "  stage %d is right, stage %d is wrong\n", r->first_bad - 1, r->first_bad);
    const BisectCulprit *c = &r->culprit;
    if (c->found)
        sb_printf(sb, "  culprit: rewrite %zu of %zu in stage %d, rule %s (%s:%d): %%%u %s -> %%%u %s\n", c->index,
                  c->of, r->first_bad, c->rule, c->file, c->line, c->before->id, op_name(uop_op(c->before)),
                  c->after->id, op_name(uop_op(c->after)));
    else if (c->why)
        sb_printf(sb, "  culprit not found: %s\n", c->why);
    if (c->found && before_text && after_text) sb_printf(sb, "    before: %s\n    after:  %s\n", before_text, after_text);
    if (c->found && c->effect) sb_printf(sb, "  after it the kernel accesses memory outside a buffer: %s\n", c->effect);
    /* the spec the culprit's point breaks, when the stage's output (the line below) breaks another */
    const char *end_spec = r->first_bad >= 0 ? r->points[r->first_bad].spec : NULL;
    if (c->found && c->spec && !(end_spec && !strcmp(end_spec, c->spec)))
        sb_printf(sb, "  after it the kernel cannot be run and breaks its spec: %s\n", c->spec);
    if (r->first_bad >= 0 && !r->failed && r->points[r->first_bad].text)
        sb_printf(sb, "  %s\n", r->points[r->first_bad].text);
    for (int n = 0; n <= STAGE_COUNT; n++) {
        const PointCheck *pc = &r->points[n];
        const Stage *st = stage_get(n);
        /* three or more points in a row that were skipped or not reached: one line */
        int last = n;
        while ((pc->state == POINT_SKIPPED || pc->state == POINT_NOT_REACHED) && last < STAGE_COUNT &&
               r->points[last + 1].state == pc->state)
            last++;
        if (last - n >= 2) {
            char count[32];
            snprintf(count, sizeof count, "%d stages", last - n + 1);
            sb_printf(sb, "  %2d-%-2d %-18s ", n, last, count);
            n = last;
        } else {
            sb_printf(sb, "  %2d  %-20s ", n, st ? st->name : "as scheduled");
        }
        switch (pc->state) {
        case POINT_MATCHES: sb_puts(sb, "matches the reference\n"); break;
        case POINT_DIFFERS:
            if (pc->spec) { /* "BREAKS its spec (RANGE closed by END)": the rule the verifier names */
                const char *colon = strstr(pc->spec, ": ");
                int len = colon ? (int)(colon - pc->spec) : (int)strlen(pc->spec);
                sb_printf(sb, "BREAKS its spec (%.*s), cannot be run\n", len, pc->spec);
            } else sb_puts(sb, "DIFFERS from the reference\n");
            break;
        case POINT_NOT_CHECKED: sb_printf(sb, "not checked: %s\n", pc->text ? pc->text : ""); break;
        case POINT_NOT_REACHED: sb_puts(sb, "not reached: a stage before it failed\n"); break;
        case POINT_FAILED: sb_puts(sb, "FAILS (above)\n"); break;
        case POINT_SKIPPED: sb_puts(sb, "-  (not needed for the verdict)\n"); break;
        }
    }
}
