/* fuzz_rules.c - libFuzzer harness of the rule-language compiler
 * (core/rewrite/pattern.c, template.c, rule.c).  An input is a pattern,
 * optionally followed by "=>" and a rewrite template:
 *
 *   (ADD x (CONST 0)) => x
 *
 * Any input must compile or fail with a message.  A rule that compiles is
 * run over a fixed kernel graph top-down and bottom-up: each rewrite must
 * finish, or fail with a message (a rule loop, a template that cannot be
 * built), never crash. */
#include "fuzz_text.h"
#include "../../core/rewrite/rewrite.h"
#include "../../viz/listing.h"

/* a kernel after the expander, plus scalar index arithmetic: vectors,
 * pointers, ranges, a reduce, casts, WHERE and comparisons to match */
static const char *target_listing =
    "%0 = DEFINE_GLOBAL float32.ptr(4) arg=0\n"
    "%1 = CONST index arg=2\n"
    "%2 = RANGE index (%1) arg=(0, LOOP)\n"
    "%3 = MUL index (%2, %1)\n"
    "%4 = RANGE index (%1) arg=(1, LOOP)\n"
    "%5 = ADD index (%3, %4)\n"
    "%6 = INDEX float32.ptr(4) (%0, %5)\n"
    "%7 = DEFINE_GLOBAL int32.ptr(4) arg=1\n"
    "%8 = VECTORIZE int32.ptr(4).vec(2) (%7, %7)\n"
    "%9 = VECTORIZE index.vec(2) (%3, %3)\n"
    "%10 = VCONST index.vec(2) arg=(0, 1)\n"
    "%11 = ADD index.vec(2) (%9, %10)\n"
    "%12 = INDEX int32.vec(2) (%8, %11)\n"
    "%13 = MUL int32.vec(2) (%12, %12)\n"
    "%14 = REDUCE int32 (%13) arg=Ops.ADD\n"
    "%15 = CONST int32 arg=1\n"
    "%16 = ADD int32 (%14, %15)\n"
    "%17 = DEFINE_VAR index arg=(\"x\", 0, 10)\n"
    "%18 = CONST index arg=4\n"
    "%19 = MUL index (%17, %18)\n"
    "%20 = CONST index arg=0\n"
    "%21 = ADD index (%19, %20)\n"
    "%22 = IDIV index (%21, %1)\n"
    "%23 = MOD index (%22, %1)\n"
    "%24 = CMPLT bool (%23, %1)\n"
    "%25 = CAST int32 (%23)\n"
    "%26 = WHERE int32 (%24, %16, %25)\n"
    "%27 = CAST float32 (%26)\n"
    "%28 = CONST float32 arg=1.4426950408889634\n"
    "%29 = MUL float32 (%27, %28)\n"
    "%30 = EXP2 float32 (%29)\n"
    "%31 = STORE void (%6, %30)\n"
    "%32 = END void (%31, %2, %4)\n"
    "%33 = SINK void (%32)\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = fuzz_text_copy(data, size);
    if (!text) return 0;
    char *arrow = strstr(text, "=>");
    const char *tmpl = NULL;
    if (arrow) {
        *arrow = 0;
        tmpl = arrow + 2;
    }
    char err[512];
    err[0] = 0;
    if (!tmpl) {
        /* a pattern alone: compile it and match it against every node */
        Pat *p = pattern_compile(text, err, sizeof err);
        if (!p) {
            FUZZ_CHECK(err[0] != 0, "a pattern refused without a message");
        } else {
            UCtx *c = uctx_new();
            const UOp *root = uop_parse_listing(c, target_listing, err, sizeof err);
            FUZZ_CHECK(root != NULL, "the target listing: %s", err);
            size_t n = 0;
            const UOp **order = uop_toposort(root, &n);
            const UOp *caps[PAT_MAX_CAPTURES];
            for (size_t i = 0; order && i < n; i++) pattern_match(p, order[i], caps);
            free(order);
            uctx_free(c);
            pattern_free(p);
        }
        free(text);
        return 0;
    }
    RuleSpec spec = {.name = "fuzzed", .pattern = text, .template_text = tmpl, .file = "fuzz", .line = 1};
    Rule *r = rule_new(&spec, err, sizeof err);
    if (!r) {
        FUZZ_CHECK(err[0] != 0, "a rule refused without a message");
        free(text);
        return 0;
    }
    RuleSet *rs = ruleset_new("fuzzed");
    FUZZ_CHECK(ruleset_add(rs, r), "ruleset_add");
    rule_unref(r);
    for (int bottom_up = 0; bottom_up < 2; bottom_up++) {
        UCtx *c = uctx_new();
        const UOp *root = uop_parse_listing(c, target_listing, err, sizeof err);
        FUZZ_CHECK(root != NULL, "the target listing: %s", err);
        /* a rule that keeps growing the graph stops at the rewrite limit;
         * a small one keeps each input fast */
        RewriteOpts o = {.bottom_up = bottom_up, .max_rewrites = 2000};
        const UOp *out = graph_rewrite(c, root, rs, &o);
        if (!out) FUZZ_CHECK(uctx_error(c) && uctx_error(c)[0], "a rewrite failed without a message");
        uctx_free(c);
    }
    ruleset_free(rs);
    free(text);
    return 0;
}
