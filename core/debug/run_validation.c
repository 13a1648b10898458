/* run_validation.c - validating a run of a program and naming the first
 * kernel that is wrong on its own (see run_validation.h). */
#include "run_validation.h"
#include <stdio.h>
#include "../util/interrupt.h"

/* Kernel ki on the reference of its inputs: 1 right, 0 wrong (what differs,
 * or why it could not run, in why), -1 with err when its check cannot be set up. */
static int kernel_right_alone(const Schedule *s, KernelPipeline *const *kps, int ki, RefBufferFn inputs, void *ud,
                              double atol, double rtol, StrBuf *why, char *err, size_t errlen) {
    KernelCheck *kc = kcheck_new(s, kps, ki, inputs, ud, atol, rtol, err, errlen);
    if (!kc) return -1;
    ValidateReport rep;
    char msg[1024];
    int right;
    if (kcheck_compiled(kc, &rep, why, msg, sizeof msg)) {
        right = rep.ok;
    } else {
        sb_puts(why, msg);
        right = 0;
    }
    kcheck_free(kc);
    return right;
}

/* the kernels checked one by one; the first wrong one named in sb */
static bool find_first_wrong(const Schedule *s, KernelPipeline *const *kps, RefBufferFn inputs, void *ud, double atol,
                             double rtol, RunValidation *out, StrBuf *sb, char *err, size_t errlen) {
    for (int i = 0; i < s->nkernels; i++) {
        if (uopdb_interrupted()) {
            snprintf(err, errlen, "interrupted while checking kernel %d (%s)", i + 1, s->kernels[i].name);
            return false;
        }
        StrBuf why;
        sb_init(&why);
        int right = kernel_right_alone(s, kps, i, inputs, ud, atol, rtol, &why, err, errlen);
        if (right == 0) {
            out->first_wrong = i;
            sb_printf(sb, "\nkernel %d of %d (%s) is the first wrong one: given the reference of its inputs,\n  %s\n"
                          "  :kernel %d makes it current, :bisect finds its stage and rule",
                      i + 1, s->nkernels, s->kernels[i].name, sb_str(&why), i + 1);
        }
        sb_free(&why);
        if (right < 0) return false;
        if (right == 0) return true;
    }
    sb_printf(sb, "\neach of the %d kernels is right given the reference of its inputs: the difference builds up "
                  "from one kernel to the next",
              s->nkernels);
    return true;
}

bool program_validate_run(const Schedule *s, KernelPipeline *const *kps, void *const *outputs, RefBufferFn inputs,
                          void *ud, double atol, double rtol, RunValidation *out, StrBuf *sb, char *err,
                          size_t errlen) {
    *out = (RunValidation){.ok = true, .first_wrong = -1};
    for (int j = 0; j < s->noutputs; j++) {
        ValidateReport rep;
        if (j) sb_putc(sb, '\n');
        sb_puts(sb, "validate: ");
        if (!program_validate(s, j, outputs[j], inputs, ud, atol, rtol, &rep, sb, err, errlen)) return false;
        out->ok = out->ok && rep.ok;
        out->mismatches += rep.mismatches;
    }
    if (out->ok || s->nkernels < 2) return true;
    return find_first_wrong(s, kps, inputs, ud, atol, rtol, out, sb, err, errlen);
}
