/* fuzz_symbolic.c - runs the symbolic checker by hand:
 *   fuzz_symbolic [N] [seed] [ruleset] [--strict-size]
 * checks N random expressions (default 10000), prints progress every 10%,
 * and on failure prints a shrunk reproducer and exits 1. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../../core/sym/sym_check.h"
#include "../../core/sym/symbolic.h"
#include "../../viz/render.h"

int main(int argc, char **argv) {
    SymCheckOpts o = {.count = 10000, .seed = 1, .progress = stdout, .render = uop_render_expr};
    if (argc > 1) o.count = strtoull(argv[1], NULL, 10);
    if (argc > 2) o.seed = strtoull(argv[2], NULL, 10);
    if (argc > 3 && argv[3][0] != '-') o.set = argv[3];
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--strict-size") == 0) o.strict_size = true;
    if (o.set && !sym_ruleset(o.set)) {
        fprintf(stderr, "fuzz_symbolic: unknown rule set '%s'\n", o.set);
        return 2;
    }
    SymCheckResult r;
    bool ok = sym_check_run(&o, &r);
    printf("%s: %zu expressions checked, %zu skipped, nodes %zu -> %zu, %zu grew, %.2f s\n", ok ? "ok" : "FAILED",
           r.checked, r.skipped, r.nodes_in, r.nodes_out, r.grew, r.seconds);
    if (!ok) printf("%s", r.report);
    sym_check_result_free(&r);
    ruleset_registry_free();
    return ok ? 0 : 1;
}
