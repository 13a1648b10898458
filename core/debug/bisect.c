/* bisect.c - the stage bisection of a kernel: every point checked in turn,
 * the first one that differs from the reference named. */
#include "bisect.h"
#include <stdlib.h>
#include <string.h>

static char *copy(const char *s) {
    char *r = malloc(strlen(s) + 1);
    if (r) strcpy(r, s);
    return r;
}

bool dbg_bisect(const Schedule *s, KernelPipeline *const *kps, int ki, RefBufferFn inputs, void *ud, double atol,
                double rtol, BisectResult *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    out->first_bad = -1;
    bool reached = true;
    for (int n = 0; n <= STAGE_COUNT; n++) {
        PointCheck *pc = &out->points[n];
        if (!reached) {
            pc->state = POINT_NOT_REACHED;
            continue;
        }
        StrBuf sb;
        sb_init(&sb);
        char why[1024] = "";
        bool ran = program_check_kernel(s, kps, ki, n, inputs, ud, atol, rtol, &pc->rep, &sb, why, sizeof why);
        if (ran) {
            pc->state = pc->rep.ok ? POINT_MATCHES : POINT_DIFFERS;
            pc->text = copy(sb_str(&sb));
            out->checked++;
            if (!pc->rep.ok && out->first_bad < 0) out->first_bad = n;
        } else {
            /* a form the interpreter cannot run, or a stage that fails */
            const char *w = strstr(why, "interp: ");
            pc->state = POINT_NOT_CHECKED;
            pc->text = copy(w ? w + 8 : why);
            if (n > 0 && !pipeline_result(kps[ki], n)) reached = false; /* later points cannot run */
        }
        sb_free(&sb);
        if (!pc->text) {
            bisect_result_free(out);
            if (err && errlen) strncpy(err, "out of memory", errlen);
            return false;
        }
    }
    return true;
}

void bisect_result_free(BisectResult *r) {
    for (int n = 0; n <= STAGE_COUNT; n++) {
        free(r->points[n].text);
        r->points[n].text = NULL;
    }
}

void bisect_format(const BisectResult *r, const char *kernel_name, StrBuf *sb) {
    sb_printf(sb, "bisect %s: ", kernel_name);
    if (r->first_bad >= 0) {
        const Stage *st = stage_get(r->first_bad);
        sb_printf(sb, "first wrong at stage %d (%s)", r->first_bad, st ? st->name : "as scheduled");
    } else {
        sb_puts(sb, "no checked stage differs from the reference");
    }
    sb_printf(sb, "; %d of %d points checked\n", r->checked, STAGE_COUNT + 1);
    for (int n = 0; n <= STAGE_COUNT; n++) {
        const PointCheck *pc = &r->points[n];
        const Stage *st = stage_get(n);
        sb_printf(sb, "  %2d  %-20s ", n, st ? st->name : "as scheduled");
        switch (pc->state) {
        case POINT_MATCHES: sb_puts(sb, "matches the reference\n"); break;
        case POINT_DIFFERS: sb_puts(sb, "DIFFERS from the reference\n"); break;
        case POINT_NOT_CHECKED: sb_printf(sb, "not checked: %s\n", pc->text ? pc->text : ""); break;
        case POINT_NOT_REACHED: sb_puts(sb, "not reached\n"); break;
        }
    }
}
