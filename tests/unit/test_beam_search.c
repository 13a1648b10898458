/* test_beam_search.c - the beam search on the golden 3x3 matmul AST: a full
 * search finds opts stage 7 accepts and leaves the session's node context
 * as it was; the interrupt flag set from the progress callback stops it
 * and the best of the candidates timed so far is kept; a budget stops it
 * after the candidate that spent it; the disk cache: its directory from
 * the environment, an entry written and read back, a second search that
 * times nothing, and entries that are not right ignored. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "core/debug/beam_cache.h"
#include "core/debug/beam_search.h"
#include "core/rewrite/registry.h"
#include "core/util/interrupt.h"
#include "test_files.h"

static UCtx *c;
static const UOp *ast;
static char dir[256];

static int setup(void **state) {
    (void)state;
    c = uctx_new();
    char err[256];
    ast = read_golden_ast(c, GOLDEN_MATMUL_AST, err, sizeof err);
    snprintf(dir, sizeof dir, "/tmp/uopdb_beam_test_%ld", (long)getpid());
    return ast ? 0 : -1;
}

static int teardown(void **state) {
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    uctx_free(c);
    ruleset_registry_free();
    return 0;
}

static BeamOptions no_cache(int width) { return (BeamOptions){.width = width, .threads = 0, .cache = false}; }

static void test_full_search(void **state) {
    (void)state;
    KernelPipeline *kp = pipeline_new(c, "r_3_3_3", ast);
    char err[512];
    assert_non_null(pipeline_root(kp, 6, err, sizeof err));
    size_t nodes = uctx_node_count(c);
    BeamOptions o = no_cache(2);
    BeamResult r;
    assert_true(beam_search(kp, &o, &r, err, sizeof err));
    /* candidates compile in contexts of their own */
    assert_int_equal(uctx_node_count(c), nodes);
    assert_false(r.interrupted);
    assert_false(r.budget_spent);
    assert_false(r.cache_hit);
    /* round 1 alone has UPCAST 0 0, UPCAST 1 0 and UNROLL 0 0 */
    assert_true(r.candidates >= 3);
    assert_true(r.timed >= 3 && r.timed <= r.candidates);
    assert_true(r.rounds >= 1);
    assert_true(isfinite(r.best_ms) && r.best_ms > 0);
    assert_true(isnan(r.before_ms) || r.before_ms > 0);
    assert_true(r.nopts >= 1);
    /* applied: the reason, and stage 7 accepts the opts all the way to a kernel */
    assert_true(beam_apply(kp, 2, &r));
    const KernelOpt *opts;
    assert_int_equal(pipeline_opts(kp, &opts), r.nopts);
    assert_memory_equal(opts, r.opts, (size_t)r.nopts * sizeof *opts);
    assert_true(strncmp(pipeline_opts_why(kp), "beam 2: ", 8) == 0);
    assert_non_null(pipeline_kernel(kp, err, sizeof err));
    pipeline_free(kp);
}

/* ---- stopping: the interrupt flag and the budget ---- */

typedef struct Stopper {
    int interrupt_after;   /* 0: never */
    double sleep_s;        /* per candidate */
    int calls, last_tried, last_total;
    bool monotonic;
} Stopper;

static void on_progress(const BeamProgress *p, void *ud) {
    Stopper *s = ud;
    s->calls++;
    if (p->tried < s->last_tried || p->tried > p->total || p->total < s->last_total) s->monotonic = false;
    s->last_tried = p->tried, s->last_total = p->total;
    if (s->interrupt_after && p->tried == s->interrupt_after) uopdb_interrupt_request();
    if (s->sleep_s > 0) {
        struct timespec d = {(time_t)s->sleep_s, (long)((s->sleep_s - (double)(time_t)s->sleep_s) * 1e9)};
        nanosleep(&d, NULL);
    }
}

static void test_interrupt_keeps_the_best(void **state) {
    (void)state;
    KernelPipeline *kp = pipeline_new(c, "r_3_3_3", ast);
    /* opts before that stage 7 refuses: nothing to compare with, so the best found is kept */
    KernelOpt refused = {OPT_UPCAST, 7, 2};
    pipeline_set_opts(kp, &refused, 1);
    Stopper st = {.interrupt_after = 2, .monotonic = true};
    BeamOptions o = no_cache(2);
    o.progress = on_progress, o.ud = &st;
    BeamResult r;
    char err[512];
    uopdb_interrupt_clear();
    assert_true(beam_search(kp, &o, &r, err, sizeof err));
    bool still_set = uopdb_interrupted();
    uopdb_interrupt_clear();
    assert_true(still_set); /* the search leaves the request to its caller */
    assert_true(r.interrupted);
    assert_int_equal(st.calls, 2);
    assert_true(st.monotonic);
    assert_int_equal(r.timed, 2);
    assert_true(r.candidates > r.timed);
    /* the best of the two timed: round 1 starts with UPCAST 0 0 and UPCAST 1 0 */
    assert_true(isfinite(r.best_ms));
    assert_int_equal(r.nopts, 1);
    assert_int_equal(r.opts[0].op, OPT_UPCAST);
    assert_int_equal(r.opts[0].amount, 0);
    assert_true(r.opts[0].axis == 0 || r.opts[0].axis == 1);
    assert_false(r.kept_before);
    assert_true(isnan(r.before_ms));
    assert_true(beam_apply(kp, 2, &r));
    assert_non_null(strstr(pipeline_opts_why(kp), "interrupted"));
    pipeline_free(kp);
}

/* stopped early with only slower candidates: the opts the kernel had stay */
static void test_stopped_early_keeps_faster_opts(void **state) {
    (void)state;
    KernelPipeline *kp = pipeline_new(c, "r_3_3_3", ast);
    KernelOpt had = {OPT_UNROLL, 0, 0};
    pipeline_set_opts(kp, &had, 1);
    assert_true(pipeline_set_opts_why(kp, "given by the test\n"));
    Stopper st = {.interrupt_after = 1, .monotonic = true};
    BeamOptions o = no_cache(2);
    o.progress = on_progress, o.ud = &st;
    BeamResult r;
    char err[512];
    uopdb_interrupt_clear();
    assert_true(beam_search(kp, &o, &r, err, sizeof err));
    uopdb_interrupt_clear();
    assert_int_equal(r.timed, 1);
    assert_true(isfinite(r.before_ms));
    /* the one timed is UPCAST 0 0; which is faster depends on the machine, so both ways are checked */
    assert_true(beam_apply(kp, 2, &r));
    const KernelOpt *opts;
    int n = pipeline_opts(kp, &opts);
    assert_int_equal(n, 1);
    if (r.kept_before) {
        assert_true(r.best_ms == r.before_ms);
        assert_int_equal(opts[0].op, OPT_UNROLL);
        assert_non_null(strstr(pipeline_opts_why(kp), "the opts it had"));
        assert_non_null(strstr(pipeline_opts_why(kp), "given by the test"));
    } else {
        assert_true(r.best_ms <= r.before_ms);
        assert_int_equal(opts[0].op, OPT_UPCAST);
    }
    pipeline_free(kp);
}

static void test_interrupt_before_any_timing_keeps_the_opts(void **state) {
    (void)state;
    KernelPipeline *kp = pipeline_new(c, "r_3_3_3", ast);
    KernelOpt before = {OPT_UNROLL, 0, 0};
    pipeline_set_opts(kp, &before, 1);
    BeamOptions o = no_cache(2);
    BeamResult r;
    char err[512];
    uopdb_interrupt_request();
    assert_true(beam_search(kp, &o, &r, err, sizeof err));
    uopdb_interrupt_clear();
    assert_true(r.interrupted);
    assert_int_equal(r.timed, 0);
    assert_true(beam_apply(kp, 2, &r));
    const KernelOpt *opts;
    assert_int_equal(pipeline_opts(kp, &opts), 1);
    assert_int_equal(opts[0].op, OPT_UNROLL);
    pipeline_free(kp);
}

static void test_budget(void **state) {
    (void)state;
    KernelPipeline *kp = pipeline_new(c, "r_3_3_3", ast);
    /* each candidate takes more than the whole budget: one is timed */
    KernelOpt refused = {OPT_UPCAST, 7, 2};
    pipeline_set_opts(kp, &refused, 1);
    Stopper st = {.sleep_s = 1.1, .monotonic = true};
    BeamOptions o = no_cache(2);
    o.budget_s = 1.0;
    o.progress = on_progress, o.ud = &st;
    BeamResult r;
    char err[512];
    assert_true(beam_search(kp, &o, &r, err, sizeof err));
    assert_true(r.budget_spent);
    assert_false(r.interrupted);
    assert_int_equal(r.timed, 1);
    assert_true(r.candidates >= 3);
    assert_int_equal(r.nopts, 1);
    assert_true(isfinite(r.best_ms));
    pipeline_free(kp);
}

/* ---- the disk cache ---- */

static void test_cache_dir_from_the_environment(void **state) {
    (void)state;
    char *saved[3];
    const char *names[3] = {"UOPDB_CACHE_DIR", "XDG_CACHE_HOME", "HOME"};
    for (int i = 0; i < 3; i++) saved[i] = getenv(names[i]) ? strdup(getenv(names[i])) : NULL;
    char out[256];
    setenv("UOPDB_CACHE_DIR", "/a/b", 1);
    setenv("XDG_CACHE_HOME", "/x", 1);
    setenv("HOME", "/home/u", 1);
    assert_true(beam_cache_dir(out, sizeof out));
    assert_string_equal(out, "/a/b");
    unsetenv("UOPDB_CACHE_DIR");
    assert_true(beam_cache_dir(out, sizeof out));
    assert_string_equal(out, "/x/uopdb");
    setenv("XDG_CACHE_HOME", "", 1);
    assert_true(beam_cache_dir(out, sizeof out));
    assert_string_equal(out, "/home/u/.cache/uopdb");
    unsetenv("XDG_CACHE_HOME");
    unsetenv("HOME");
    assert_false(beam_cache_dir(out, sizeof out));
    for (int i = 0; i < 3; i++) {
        if (saved[i]) setenv(names[i], saved[i], 1);
        else unsetenv(names[i]);
        free(saved[i]);
    }
}

static void write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_cache_entries(void **state) {
    (void)state;
    char key[BEAM_CACHE_KEY_LEN + 1], key2[BEAM_CACHE_KEY_LEN + 1], err[256];
    assert_true(beam_cache_key(ast, 2, 0, false, key));
    assert_int_equal(strlen(key), BEAM_CACHE_KEY_LEN);
    /* the key depends on the width, the threads, the transcendentals and the AST */
    assert_true(beam_cache_key(ast, 3, 0, false, key2));
    assert_string_not_equal(key, key2);
    assert_true(beam_cache_key(ast, 2, 8, false, key2));
    assert_string_not_equal(key, key2);
    assert_true(beam_cache_key(ast, 2, 0, true, key2));
    assert_string_not_equal(key, key2);
    assert_true(beam_cache_key(ast->src[0], 2, 0, false, key2));
    assert_string_not_equal(key, key2);
    /* but not on node ids: the same AST imported again in another context */
    UCtx *c2 = uctx_new();
    uop_const_int(c2, DT_INT32, 12345); /* other ids */
    const UOp *again = read_golden_ast(c2, GOLDEN_MATMUL_AST, err, sizeof err);
    assert_non_null(again);
    assert_true(beam_cache_key(again, 2, 0, false, key2));
    assert_string_equal(key, key2);
    uctx_free(c2);

    KernelOpt opts[2] = {{OPT_UPCAST, 1, 3}, {OPT_UNROLL, 0, 0}}, got[8];
    int n = -1;
    double ms = 0;
    char sub[300];
    snprintf(sub, sizeof sub, "%s/entries/x", dir); /* directories made as needed */
    assert_false(beam_cache_load(sub, key, got, 8, &n, &ms));
    assert_true(beam_cache_store(sub, key, opts, 2, 0.25, err, sizeof err));
    assert_true(beam_cache_load(sub, key, got, 8, &n, &ms));
    assert_int_equal(n, 2);
    assert_memory_equal(got, opts, sizeof opts);
    assert_true(ms == 0.25);
    /* too many opts for the caller: a miss */
    assert_false(beam_cache_load(sub, key, got, 1, &n, &ms));
    /* entries that are not right are misses */
    char path[600], text[512];
    beam_cache_path(sub, key, path, sizeof path);
    const char *bad[] = {
        "uopdb beam cache 1\nkey %s\nms 0.25\nopt UPCAST 1 3\n",             /* no end */
        "uopdb beam cache 2\nkey %s\nms 0.25\nend\n",                        /* another format */
        "uopdb beam cache 1\nkey %s\nms nan\nend\n",
        "uopdb beam cache 1\nkey %s\nms 0.25\nopt SPLAT 0 4\nend\n",        /* no such opt */
        "uopdb beam cache 1\nkey %s\nms 0.25\nopt UPCAST 0 4 5\nend\n",
        "uopdb beam cache 1\nkey %s\nms 0.25\nend\nmore\n",
        "uopdb beam cache 1\nkey %s0\nms 0.25\nend\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(text, sizeof text, bad[i], key);
        write_text(path, text);
        if (beam_cache_load(sub, key, got, 8, &n, &ms)) fail_msg("entry %zu was read: %s", i, text);
    }
    /* and one with no opts is a hit */
    snprintf(text, sizeof text, "uopdb beam cache 1\nkey %s\nms 0.5\nend\n", key);
    write_text(path, text);
    assert_true(beam_cache_load(sub, key, got, 8, &n, &ms));
    assert_int_equal(n, 0);
}

static void test_second_search_from_the_cache(void **state) {
    (void)state;
    KernelPipeline *kp = pipeline_new(c, "r_3_3_3", ast);
    BeamOptions o = {.width = 1, .threads = 0, .cache = true, .cache_dir = dir};
    BeamResult r1, r2;
    char err[512];
    assert_true(beam_search(kp, &o, &r1, err, sizeof err));
    assert_false(r1.cache_hit);
    assert_true(r1.cache_written);
    assert_true(r1.timed > 0);
    assert_true(beam_search(kp, &o, &r2, err, sizeof err));
    assert_true(r2.cache_hit);
    assert_int_equal(r2.timed, 0);
    assert_int_equal(r2.candidates, 0);
    assert_int_equal(r2.nopts, r1.nopts);
    assert_memory_equal(r2.opts, r1.opts, (size_t)r1.nopts * sizeof *r1.opts);
    assert_true(r2.best_ms == r1.best_ms);
    /* an entry whose opts stage 7 refuses here is searched again */
    char key[BEAM_CACHE_KEY_LEN + 1], path[600], text[512];
    assert_true(beam_cache_key(ast, 1, 0, false, key));
    beam_cache_path(dir, key, path, sizeof path);
    snprintf(text, sizeof text, "uopdb beam cache 1\nkey %s\nms 0.5\nopt UPCAST 5 2\nend\n", key);
    write_text(path, text);
    assert_true(beam_search(kp, &o, &r2, err, sizeof err));
    assert_false(r2.cache_hit);
    assert_true(r2.timed > 0);
    assert_true(r2.cache_written);
    pipeline_free(kp);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_full_search),
        cmocka_unit_test(test_interrupt_keeps_the_best),
        cmocka_unit_test(test_interrupt_before_any_timing_keeps_the_opts),
        cmocka_unit_test(test_stopped_early_keeps_faster_opts),
        cmocka_unit_test(test_budget),
        cmocka_unit_test(test_cache_dir_from_the_environment),
        cmocka_unit_test(test_cache_entries),
        cmocka_unit_test(test_second_search_from_the_cache),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
