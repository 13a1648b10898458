/* bench.c - `make bench`: how fast the IR core, the rewrite engine and the
 * text formats are, printed as a table with the machine's core count. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "core/rewrite/registry.h"
#include "core/ir/uop.h"
#include "core/rewrite/rewrite.h"
#include "viz/listing.h"
#include "viz/tinygrad_repr.h"
#include "core/sym/symbolic.h"

/* expressions in the sym forest; about 1M distinct nodes */
#ifndef SYM_FOREST_EXPRS
#define SYM_FOREST_EXPRS 900000
#endif

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void row(const char *what, double value, const char *unit, const char *note) {
    printf("| %-44s | %14.2f | %-12s | %-34s |\n", what, value, unit, note);
}

/* A large index expression: a balanced sum of terms (v_i * c + k) over a
 * few variables, with "+ 0" and "* 1" sprinkled in for the rewrite bench. */
static const UOp *build_expr(UCtx *c, int nterms, bool with_identities) {
    const UOp *vars[4] = {uop_var(c, "a", 0, 100), uop_var(c, "b", 0, 100), uop_var(c, "d", 0, 100),
                          uop_var(c, "e", 0, 100)};
    const UOp *zero = uop_const_int(c, DT_INDEX, 0), *one = uop_const_int(c, DT_INDEX, 1);
    const UOp **terms = malloc((size_t)nterms * sizeof *terms);
    for (int i = 0; i < nterms; i++) {
        const UOp *t = uop_binary(c, OP_MUL, vars[i & 3], uop_const_int(c, DT_INDEX, i));
        if (with_identities) t = uop_binary(c, OP_MUL, uop_binary(c, OP_ADD, t, zero), one);
        terms[i] = t;
    }
    for (int n = nterms; n > 1;) {
        int m = 0;
        for (int i = 0; i + 1 < n; i += 2) {
            const UOp *sum = uop_binary(c, OP_ADD, terms[i], terms[i + 1]);
            terms[m++] = with_identities ? uop_binary(c, OP_ADD, sum, zero) : sum;
        }
        if (n & 1) terms[m++] = terms[n - 1];
        n = m;
    }
    const UOp *root = terms[0];
    free(terms);
    return root;
}

/* Index expressions shaped like the scheduler's: sums of ranges times
 * strides plus an offset, then divided and taken modulo by constants. */
static const UOp *index_forest(UCtx *c, int count) {
    static const int64_t sizes[] = {3, 4, 8, 16, 32, 64}, strides[] = {1, 3, 4, 16, 64, 256};
    const UOp *ranges[6];
    for (int r = 0; r < 6; r++) ranges[r] = uop_range(c, uop_const_int(c, DT_INDEX, sizes[r]), r, AXIS_LOOP);
    const UOp **roots = malloc((size_t)count * sizeof *roots);
    uint64_t rng = 12345;
    for (int i = 0; i < count; i++) {
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        uint64_t bits = rng >> 11;
        const UOp *e = uop_const_int(c, DT_INDEX, (int64_t)(bits % 61));
        for (int r = 0; r < 6; r++) {
            if (!((bits >> (r + 3)) & 1)) continue;
            const UOp *term = uop_binary(c, OP_MUL, ranges[r], uop_const_int(c, DT_INDEX, strides[(bits >> (r + 9)) % 6]));
            e = uop_binary(c, OP_ADD, e, term);
        }
        int64_t d = sizes[(bits >> 20) % 6], m = sizes[(bits >> 24) % 6];
        if ((bits >> 28) & 1) e = uop_binary(c, OP_IDIV, e, uop_const_int(c, DT_INDEX, d));
        if ((bits >> 29) & 1) e = uop_binary(c, OP_MOD, e, uop_const_int(c, DT_INDEX, m));
        roots[i] = e;
    }
    /* a SINK takes at most 65535 sources: a SINK of SINKs of 50000 roots each */
    int nsinks = (count + 49999) / 50000;
    const UOp **sinks = malloc((size_t)nsinks * sizeof *sinks);
    for (int s = 0; s < nsinks; s++) {
        int first = s * 50000, n = count - first < 50000 ? count - first : 50000;
        sinks[s] = uop_sink(c, roots + first, n);
    }
    const UOp *sink = nsinks == 1 ? sinks[0] : uop_sink(c, sinks, nsinks);
    free(sinks);
    free(roots);
    return sink;
}

/* Nanoseconds per load when each load's address comes from the one before,
 * over `mb` MB visited in a random cycle of cache lines: the memory latency
 * that bounds work whose every step is a cache miss, such as the 1M-node sym
 * forest below.  Negative when out of memory. */
static double dependent_load_ns(size_t mb) {
    size_t lines = mb * 1024 * 1024 / 64;
    size_t *order = malloc(lines * sizeof *order);
    char *buf = malloc(lines * 64 + 64);
    if (!order || !buf) { free(order); free(buf); return -1; }
    char *base = buf + (-(uintptr_t)buf & 63);
    for (size_t i = 0; i < lines; i++) order[i] = i;
    uint64_t rng = 88172645463325252ull;
    for (size_t i = lines - 1; i > 0; i--) { /* Fisher-Yates with xorshift */
        rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
        size_t j = rng % (i + 1), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (size_t i = 0; i < lines; i++) *(char **)(base + order[i] * 64) = base + order[(i + 1) % lines] * 64;
    free(order);
    char *p = base;
    enum { STEPS = 4000000 };
    double t0 = now();
    for (int i = 0; i < STEPS; i++) p = *(char **)p;
    double t1 = now();
    bool walked = p != NULL; /* the chase is used, so it is not dropped */
    free(buf);
    if (!walked) return -1;
    return (t1 - t0) / STEPS * 1e9;
}

int main(void) {
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    printf("uopdb bench: %ld cores\n\n", cores);
    printf("| %-44s | %14s | %-12s | %-34s |\n", "what", "value", "unit", "detail");
    printf("|%.46s|%.16s|%.14s|%.36s|\n", "----------------------------------------------", "----------------",
           "--------------", "------------------------------------");

    /* interning */
    UCtx *c = uctx_new();
    double t0 = now();
    const UOp *big = build_expr(c, 250000, false);
    double t1 = now();
    size_t nodes = uctx_node_count(c);
    char note[64];
    snprintf(note, sizeof note, "%zu new nodes", nodes);
    row("nodes interned per second", (double)nodes / (t1 - t0) / 1e6, "M nodes/s", note);
    t0 = now();
    const UOp *again = build_expr(c, 250000, false);
    t1 = now();
    row("lookups of existing nodes per second", (double)nodes / (t1 - t0) / 1e6, "M nodes/s",
        again == big ? "same root returned" : "MISMATCH");
    row("bytes per node (arena, tables, args)", (double)uctx_bytes(c) / (double)nodes, "bytes", "");

    /* printer and parser */
    StrBuf sb;
    sb_init(&sb);
    t0 = now();
    uop_listing(&sb, big, NULL);
    t1 = now();
    double mb = (double)sb.len / 1e6;
    snprintf(note, sizeof note, "%.1f MB of listing", mb);
    row("listing printer", mb / (t1 - t0), "MB/s", note);
    char err[256];
    t0 = now();
    const UOp *parsed = uop_parse_listing(c, sb_str(&sb), err, sizeof err);
    t1 = now();
    row("listing parser", mb / (t1 - t0), "MB/s", parsed == big ? "round trip: same root" : "ROUND TRIP FAILED");
    sb_clear(&sb);
    t0 = now();
    uop_to_tinygrad(&sb, big, err, sizeof err);
    t1 = now();
    mb = (double)sb.len / 1e6;
    snprintf(note, sizeof note, "%.1f MB of tinygrad repr", mb);
    row("tinygrad repr printer", mb / (t1 - t0), "MB/s", note);
    t0 = now();
    parsed = uop_from_tinygrad(c, sb_str(&sb), err, sizeof err);
    t1 = now();
    row("tinygrad repr parser", mb / (t1 - t0), "MB/s", parsed == big ? "round trip: same root" : "ROUND TRIP FAILED");
    sb_free(&sb);
    uctx_free(c);

    /* graph_rewrite */
    c = uctx_new();
    const UOp *root = build_expr(c, 125000, true);
    size_t before = uop_graph_size(root);
    RuleSpec specs[] = {
        {.name = "add_zero", .pattern = "(ADD x 0)", .template_text = "x", .file = __FILE__, .line = __LINE__},
        {.name = "mul_one", .pattern = "(MUL x 1)", .template_text = "x", .file = __FILE__, .line = __LINE__},
    };
    RuleSet *rs = ruleset_from_specs("identities", specs, 2, err, sizeof err);
    if (!rs) { fprintf(stderr, "bench: %s\n", err); return 1; }
    Trace tr;
    trace_init(&tr);
    RewriteOpts o = {.trace = &tr};
    t0 = now();
    const UOp *out = graph_rewrite(c, root, rs, &o);
    t1 = now();
    if (!out) { fprintf(stderr, "bench: %s\n", uctx_error(c)); return 1; }
    size_t after = uop_graph_size(out);
    snprintf(note, sizeof note, "%zu -> %zu nodes, trace on", before, after);
    row("graph_rewrite rewrites per second", (double)tr.nrewrites / (t1 - t0) / 1e6, "M rewrites/s", note);
    row("graph_rewrite nodes visited per second", (double)before / (t1 - t0) / 1e6, "M nodes/s", "");
    trace_free(&tr);
    ruleset_free(rs);
    uctx_free(c);

    /* the same on a forest small enough for the caches (best of 3 fresh
     * contexts): what the rules and the matcher cost without memory latency */
    double small_best = 0;
    size_t small_nodes = 0, small_made = 0;
    sym_ruleset("sym");
    for (int rep = 0; rep < 3; rep++) {
        c = uctx_new();
        const UOp *small = index_forest(c, 20000);
        small_nodes = uop_graph_size(small);
        size_t made0 = uctx_node_count(c);
        t0 = now();
        const UOp *done = uop_simplify(c, small, "sym", NULL);
        t1 = now();
        small_made = uctx_node_count(c) - made0;
        if (!done) { fprintf(stderr, "bench: %s\n", uctx_error(c)); return 1; }
        if (rep == 0 || t1 - t0 < small_best) small_best = t1 - t0;
        uctx_free(c);
    }
    snprintf(note, sizeof note, "20000 exprs, %zu input nodes", small_nodes);
    row("sym: forest that fits the caches", small_best * 1e3, "ms", note);
    snprintf(note, sizeof note, "%zu nodes made", small_made);
    row("sym: that forest's time per node made", small_best / (double)small_made * 1e9, "ns", note);

    /* the memory latency, for the rows below */
    double latency = dependent_load_ns(256);
    row("memory: one dependent load over 256 MB", latency, "ns", "one cache miss, for the rows below");

    /* the symbolic simplifier on index expressions: a forest of about 1M nodes */
    c = uctx_new();
    int nexprs = SYM_FOREST_EXPRS;
    const UOp *forest = index_forest(c, nexprs);
    size_t in_nodes = uop_graph_size(forest);
    sym_ruleset("sym"); /* compile the rules outside the timing */
    size_t lookups0 = uctx_lookups(c), recent0 = uctx_recent_hits(c), before_made = uctx_node_count(c);
    t0 = now();
    const UOp *simple = uop_simplify(c, forest, "sym", NULL);
    t1 = now();
    if (!simple) { fprintf(stderr, "bench: %s\n", uctx_error(c)); return 1; }
    snprintf(note, sizeof note, "%d exprs, %zu -> %zu nodes", nexprs, in_nodes, uop_graph_size(simple));
    row("sym: index expressions simplified", (double)in_nodes / (t1 - t0) / 1e6, "M nodes/s", note);
    snprintf(note, sizeof note, "%zu input nodes", in_nodes);
    row("sym: time for the forest", (t1 - t0) * 1e3, "ms", note);
    size_t made = uctx_node_count(c) - before_made;
    snprintf(note, sizeof note, "%zu made, %.1f misses' time each", made,
             latency > 0 ? (t1 - t0) / (double)made * 1e9 / latency : 0);
    row("sym: time per node made", (t1 - t0) / (double)made * 1e9, "ns", note);
    size_t lookups = uctx_lookups(c) - lookups0, recent = uctx_recent_hits(c) - recent0;
    snprintf(note, sizeof note, "%zu of %zu lookups", recent, lookups);
    row("sym: lookups the recent-node table answered", lookups ? 100.0 * (double)recent / (double)lookups : 0, "%", note);
    uctx_free(c);
    ruleset_registry_free();
    return 0;
}
