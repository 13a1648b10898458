/* beam_search.c - tinygrad v0.12.0's BEAM search on the CPU (see
 * beam_search.h).  The search works in contexts of its own so the
 * session's node context does not grow with every candidate: the kernel at
 * point 6 is copied into a search context, where stage 7 makes each
 * candidate (hash-consing makes two opt sequences that give the same kernel
 * the same node, so duplicates are found by pointer), and each candidate
 * is copied again into a fresh context for stages 8-22 and LLVM, freed
 * once it is timed. */
#include "beam_search.h"
#include "beam_cache.h"
#include "../util/interrupt.h"
#include "../util/strbuf.h"
#include "../util/u64map.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* v0.12.0's limits: at most 256 elements upcast or unrolled in all, at most
 * 3000 instructions in a program; a round that gains less than 0.01 us ends
 * the search */
#define BEAM_UPCAST_MAX 256
#define BEAM_UOPS_MAX 3000
#define BEAM_MIN_PROGRESS_MS 1e-5

/* v0.12.0's action space (codegen/opt/search.py), in its order, less what
 * needs a GPU (LOCAL, GROUP, GROUPTOP, TC, SWAP of global axes) or is off by
 * default (PADTO, NOLOCALS) */
typedef struct ActionSet {
    OptOp op;
    int naxes;
    int amounts[10];
    int namounts;
} ActionSet;
static const ActionSet action_sets[] = {
    {OPT_UPCAST, 8, {0, 2, 3, 4, 5, 7}, 6},
    {OPT_UNROLL, 5, {0, 4, 7}, 3},
    {OPT_THREAD, 3, {2, 3, 4, 5, 8, 12, 16, 24, 32, 64}, 10},
};

typedef struct Candidate {
    const UOp *root7;           /* in the search context */
    KernelOpt opts[BEAM_MAX_OPTS];
    int nopts;
    double ms;                  /* INFINITY: not timed or failed */
} Candidate;

typedef struct CandList {
    Candidate *v;
    int n, cap;
} CandList;

static bool cands_push(CandList *l, const Candidate *c) {
    if (l->n == l->cap) {
        int cap = l->cap ? l->cap * 2 : 64;
        Candidate *v = realloc(l->v, (size_t)cap * sizeof *v);
        if (!v) return false;
        l->v = v, l->cap = cap;
    }
    l->v[l->n++] = *c;
    return true;
}

/* the scratch buffers the candidates run on, by DEFINE_GLOBAL number */
typedef struct Scratch {
    void **by_arg;
    int nargs;
} Scratch;

typedef struct Search {
    const BeamOptions *o;
    BeamResult *r;
    const char *name;
    bool native;
    UCtx *sc;                   /* the search context */
    Scratch bufs;
    struct timespec start;
    int tried, total, round;
    Candidate best;
    bool stop;
} Search;

static double seconds_since(const struct timespec *t0) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

void beam_format_ms(double ms, char *out, size_t len) {
    if (!isfinite(ms)) snprintf(out, len, "-");
    else if (ms < 1e-3) snprintf(out, len, "%.0f ns", ms * 1e6);
    else if (ms < 1) snprintf(out, len, "%.1f us", ms * 1e3);
    else snprintf(out, len, "%.2f ms", ms);
}

void beam_format_opts(const KernelOpt *opts, int n, char *out, size_t len) {
    StrBuf sb;
    sb_init(&sb);
    for (int i = 0; i < n; i++)
        sb_printf(&sb, "%s%s %d %d", i ? ", " : "", opt_op_name(opts[i].op), opts[i].axis, opts[i].amount);
    snprintf(out, len, "%s", n ? sb_str(&sb) : "no opts");
    sb_free(&sb);
}

/* root copied node by node into context c (NULL when out of memory) */
static const UOp *copy_graph(UCtx *c, const UOp *root) {
    size_t n;
    const UOp **order = uop_toposort(root, &n);
    if (!order) return NULL;
    U64Map map = {0};
    const UOp *out = NULL;
    for (size_t i = 0; i < n; i++) {
        const UOp *u = order[i], *src[u->nsrc ? u->nsrc : 1];
        for (int k = 0; k < u->nsrc; k++) src[k] = u64map_get(&map, u->src[k]->id);
        const Arg *arg = arg_import(c, u->arg), *tag = arg_import(c, u->tag);
        out = (u->arg && !arg) || (u->tag && !tag) ? NULL : uop_intern(c, uop_op(u), u->dtype, src, u->nsrc, arg, tag);
        if (!out || !u64map_put(&map, u->id, out)) {
            out = NULL;
            break;
        }
    }
    u64map_free(&map);
    free(order);
    return out;
}

/* one buffer per DEFINE_GLOBAL of root, zeroed (zeros are in bounds as
 * indices and safe as divisors); the pages are touched now so the first
 * candidate does not pay for them */
static bool scratch_make(Scratch *s, const UOp *root, char *err, size_t errlen) {
    size_t n;
    const UOp **order = uop_toposort(root, &n);
    if (!order) {
        snprintf(err, errlen, "out of memory");
        return false;
    }
    bool ok = true;
    for (size_t i = 0; i < n && ok; i++) {
        const UOp *u = order[i];
        if (uop_op(u) != OP_DEFINE_GLOBAL) continue;
        int64_t arg = u->arg && u->arg->kind == ARG_INT ? u->arg->v.i : -1;
        if (arg < 0 || arg > 4096 || !dt_is_ptr(u->dtype) || u->dtype->size < 0) {
            snprintf(err, errlen, "DEFINE_GLOBAL %%%u has no number or no size", u->id);
            ok = false;
            break;
        }
        if (arg >= s->nargs) {
            void **v = realloc(s->by_arg, (size_t)(arg + 1) * sizeof *v);
            if (!v) {
                snprintf(err, errlen, "out of memory");
                ok = false;
                break;
            }
            for (int k = s->nargs; k <= arg; k++) v[k] = NULL;
            s->by_arg = v, s->nargs = (int)arg + 1;
        }
        if (s->by_arg[arg]) continue;
        const DType *el = u->dtype->base;
        s->by_arg[arg] = buffer_alloc(el, u->dtype->size);
        int64_t bytes = buffer_bytes(el, u->dtype->size);
        if (!s->by_arg[arg] || bytes < 0) {
            snprintf(err, errlen, "cannot allocate a scratch buffer for DEFINE_GLOBAL %lld (%lld elements)",
                     (long long)arg, (long long)u->dtype->size);
            ok = false;
        } else {
            memset(s->by_arg[arg], 0, (size_t)bytes);
        }
    }
    free(order);
    return ok;
}

static void scratch_free(Scratch *s) {
    for (int i = 0; i < s->nargs; i++) buffer_free(s->by_arg[i]);
    free(s->by_arg);
    s->by_arg = NULL, s->nargs = 0;
}

/* stage 7 with opts on root (in context c); NULL when it refuses them */
static const UOp *apply_stage7(UCtx *c, const UOp *root, const KernelOpt *opts, int n, bool native) {
    char msg[512];
    StageCtx st = {.c = c, .opts = opts, .nopts = n, .err = msg, .errlen = sizeof msg,
                   .native_transcendentals = native};
    return stage_run(&st, 7, root);
}

/* elements upcast or unrolled in all: the product of the sizes of the
 * UPCAST and UNROLL ranges */
static int64_t upcast_size(const UOp *root) {
    size_t n;
    const UOp **order = uop_toposort(root, &n);
    if (!order) return INT64_MAX;
    int64_t prod = 1;
    for (size_t i = 0; i < n; i++) {
        const UOp *u = order[i];
        const Arg *a = u->arg;
        if (uop_op(u) != OP_RANGE || !a || a->kind != ARG_TUPLE || !a->n || a->items[a->n - 1]->kind != ARG_AXIS)
            continue;
        AxisType t = a->items[a->n - 1]->v.axis;
        int64_t size;
        if ((t == AXIS_UPCAST || t == AXIS_UNROLL) && uop_const_int_value(u->src[0], &size) && size > 0)
            prod = prod > INT64_MAX / size ? INT64_MAX : prod * size;
    }
    free(order);
    return prod;
}

/* Compiles root7 (stage 7 done, in the search context) through stages
 * 8-22 and LLVM in a context of its own and times it: the best of up to
 * `runs` runs, fewer once a run is slower than early_stop.  INFINITY when
 * it does not compile or run; sets s->stop on an interrupt. */
static double time_candidate(Search *s, const UOp *root7, double early_stop) {
    UCtx *c = uctx_new();
    if (!c) return INFINITY;
    double best = INFINITY;
    char msg[1024];
    StageCtx st = {.c = c, .err = msg, .errlen = sizeof msg, .native_transcendentals = s->native};
    const UOp *u = copy_graph(c, root7);
    for (int n = 8; n <= STAGE_COUNT && u; n++) u = stage_run(&st, n, u);
    Kernel *k = NULL;
    if (u && uop_op(u) == OP_LINEAR && u->nsrc < BEAM_UOPS_MAX)
        k = kernel_compile(s->name, u->src, u->nsrc, msg, sizeof msg);
    if (k) {
        int nb = kernel_num_buffers(k), nv = kernel_num_vars(k);
        void *bufs[nb ? nb : 1];
        int32_t vars[nv ? nv : 1];
        bool ok = true;
        for (int i = 0; i < nb; i++) {
            int64_t a = kernel_buffer_arg(k, i);
            bufs[i] = a >= 0 && a < s->bufs.nargs ? s->bufs.by_arg[a] : NULL;
            ok = ok && bufs[i];
        }
        for (int i = 0; i < nv; i++) {
            int64_t lo, hi;
            kernel_var_bounds(k, i, &lo, &hi);
            vars[i] = (int32_t)((lo + hi) / 2);   /* v0.12.0 times with each variable at its middle */
        }
        int runs = s->o->runs > 0 ? s->o->runs : 3;
        for (int i = 0; ok && i < runs; i++) {
            struct timespec t0;
            clock_gettime(CLOCK_MONOTONIC, &t0);
            if (!kernel_run_parallel(k, bufs, nv ? vars : NULL, msg, sizeof msg)) {
                best = INFINITY;
                break;
            }
            double ms = seconds_since(&t0) * 1e3;
            if (ms < best) best = ms;
            if (best > early_stop) break;
        }
        kernel_free(k);
    }
    uctx_free(c);
    if (uopdb_interrupted()) s->stop = true, s->r->interrupted = true;
    return best;
}

/* stops for the interrupt flag or the budget */
static bool should_stop(Search *s) {
    if (s->stop) return true;
    if (uopdb_interrupted()) s->stop = true, s->r->interrupted = true;
    else if (s->o->budget_s > 0 && seconds_since(&s->start) >= s->o->budget_s) s->stop = true, s->r->budget_spent = true;
    return s->stop;
}

static void report_progress(Search *s) {
    if (!s->o->progress) return;
    BeamProgress p = {.width = s->o->width, .round = s->round, .tried = s->tried, .total = s->total,
                      .best_ms = s->best.ms, .best = s->best.opts, .nbest = s->best.nopts,
                      .elapsed_s = seconds_since(&s->start)};
    s->o->progress(&p, s->o->ud);
}

/* every action that stage 7 accepts after beam entry b, as a new candidate
 * (one not seen before) */
static bool expand(Search *s, const Candidate *b, U64Map *seen, CandList *out) {
    if (b->nopts >= BEAM_MAX_OPTS) return true;
    for (size_t g = 0; g < sizeof action_sets / sizeof action_sets[0]; g++) {
        const ActionSet *as = &action_sets[g];
        if (as->op == OPT_THREAD && s->o->threads < 2) continue;
        for (int ai = 0; ai < as->namounts; ai++)
            for (int axis = 0; axis < as->naxes; axis++) {
                KernelOpt a = {.op = as->op, .axis = axis, .amount = as->amounts[ai]};
                if (as->op == OPT_THREAD && a.amount > s->o->threads) continue;
                const UOp *r7 = apply_stage7(s->sc, b->root7, &a, 1, s->native);
                if (!r7 || u64map_get(seen, r7->id)) continue;
                if (!u64map_put(seen, r7->id, r7)) return false;
                if (upcast_size(r7) > BEAM_UPCAST_MAX) continue;
                Candidate c = {.root7 = r7, .nopts = b->nopts + 1, .ms = INFINITY};
                memcpy(c.opts, b->opts, (size_t)b->nopts * sizeof *c.opts);
                c.opts[b->nopts] = a;
                if (!cands_push(out, &c)) return false;
            }
    }
    return true;
}

static int cmp_ms(const void *pa, const void *pb) {
    double a = ((const Candidate *)pa)->ms, b = ((const Candidate *)pb)->ms;
    return (a > b) - (a < b);
}

/* The rounds.  beam and next are the search's lists. */
static bool run_rounds(Search *s, const UOp *s6, char *err, size_t errlen) {
    CandList beam = {0}, next = {0};
    U64Map seen = {0};
    bool ok = cands_push(&beam, &(Candidate){.root7 = s6, .ms = INFINITY}) && u64map_put(&seen, s6->id, s6);
    while (ok && !should_stop(s)) {
        s->round++;
        next.n = 0;
        for (int i = 0; ok && i < beam.n; i++) ok = expand(s, &beam.v[i], &seen, &next);
        if (!ok || !next.n) break;
        s->total += next.n;
        s->r->candidates = s->total;
        s->r->rounds = s->round;
        double early = 3 * (isfinite(beam.v[0].ms) ? beam.v[0].ms : s->r->before_ms);
        if (!isfinite(early)) early = INFINITY;
        int timed = 0;
        for (int i = 0; i < next.n && !should_stop(s); i++) {
            Candidate *c = &next.v[i];
            c->ms = time_candidate(s, c->root7, early);
            s->tried++;
            if (isfinite(c->ms)) {
                timed++;
                s->r->timed++;
                if (c->ms < s->best.ms) s->best = *c;
            }
            report_progress(s);
        }
        if (s->stop || !timed) break;
        qsort(next.v, (size_t)next.n, sizeof *next.v, cmp_ms);
        bool exiting = next.v[0].ms < BEAM_MIN_PROGRESS_MS || beam.v[0].ms - next.v[0].ms < BEAM_MIN_PROGRESS_MS;
        if (exiting) break;
        int keep = timed < s->o->width ? timed : s->o->width;
        CandList t = beam;
        beam = next, next = t;
        beam.n = keep;
    }
    if (!ok) snprintf(err, errlen, "out of memory");
    free(beam.v);
    free(next.v);
    u64map_free(&seen);
    return ok;
}

/* opts on s6 timed (INFINITY when stage 7 refuses them or they fail) */
static double time_opts(Search *s, const UOp *s6, const KernelOpt *opts, int n) {
    const UOp *r7 = apply_stage7(s->sc, s6, opts, n, s->native);
    return r7 ? time_candidate(s, r7, INFINITY) : INFINITY;
}

bool beam_search(KernelPipeline *kp, const BeamOptions *o, BeamResult *r, char *err, size_t errlen) {
    memset(r, 0, sizeof *r);
    r->before_ms = NAN;
    r->best_ms = INFINITY;
    if (o->width < 1 || o->width > BEAM_MAX_WIDTH) {
        snprintf(err, errlen, "the beam width must be 1 to %d, got %d", BEAM_MAX_WIDTH, o->width);
        return false;
    }
    if (pipeline_options(kp).target == TARGET_GPU) {
        /* candidates are timed as host code; a gpu kernel has none (it runs in the emulator) */
        snprintf(err, errlen, "the gpu target's kernels run in the emulator, which cannot time candidates; "
                              "beam search is for the cpu target");
        return false;
    }
    Search s = {.o = o, .r = r, .name = pipeline_name(kp), .native = pipeline_options(kp).native_transcendentals,
                .best = {.ms = INFINITY}};
    clock_gettime(CLOCK_MONOTONIC, &s.start);
    const UOp *ast = pipeline_root(kp, 0, err, errlen);
    const UOp *root6 = ast ? pipeline_root(kp, 6, err, errlen) : NULL;
    if (!root6) return false;

    /* the cache: a hit times nothing; its opts are checked by stage 7 */
    char dir[3072] = "", key[BEAM_CACHE_KEY_LEN + 1] = "";
    bool use_cache = o->cache && pipeline_inserted_count(kp) == 0;
    if (!o->cache) snprintf(r->cache_note, sizeof r->cache_note, "off");
    else if (!use_cache) snprintf(r->cache_note, sizeof r->cache_note, "not used: the kernel has inserted rules");
    if (use_cache && o->cache_dir) snprintf(dir, sizeof dir, "%s", o->cache_dir);
    else if (use_cache && !beam_cache_dir(dir, sizeof dir)) {
        use_cache = false;
        snprintf(r->cache_note, sizeof r->cache_note, "not used: no cache directory (set UOPDB_CACHE_DIR or HOME)");
    }
    if (use_cache && !beam_cache_key(ast, o->width, o->threads, s.native, key)) use_cache = false;

    s.sc = uctx_new();
    const UOp *s6 = s.sc ? copy_graph(s.sc, root6) : NULL;
    if (!s6) {
        uctx_free(s.sc);
        snprintf(err, errlen, "out of memory");
        return false;
    }
    if (use_cache) {
        KernelOpt opts[BEAM_MAX_OPTS];
        int n = 0;
        double ms;
        if (beam_cache_load(dir, key, opts, BEAM_MAX_OPTS, &n, &ms) && apply_stage7(s.sc, s6, opts, n, s.native)) {
            memcpy(r->opts, opts, (size_t)n * sizeof *opts);
            r->nopts = n;
            r->best_ms = ms;
            r->cache_hit = true;
            r->elapsed_s = seconds_since(&s.start);
            uctx_free(s.sc);
            return true;
        }
    }
    bool ok = scratch_make(&s.bufs, s6, err, errlen);
    if (ok) {
        const KernelOpt *before;
        int nbefore = pipeline_opts(kp, &before);
        r->before_ms = time_opts(&s, s6, before, nbefore);
        if (!isfinite(r->before_ms)) r->before_ms = NAN;
        ok = run_rounds(&s, s6, err, errlen);
    }
    if (ok && !isfinite(s.best.ms) && !s.stop) s.best.ms = time_opts(&s, s6, NULL, 0); /* nothing applies: no opts */
    if (ok) {
        memcpy(r->opts, s.best.opts, (size_t)s.best.nopts * sizeof *r->opts);
        r->nopts = s.best.nopts;
        r->best_ms = s.best.ms;
        const KernelOpt *before;
        int nbefore = pipeline_opts(kp, &before);
        if (s.stop && r->before_ms < r->best_ms && nbefore <= BEAM_MAX_OPTS) {
            memcpy(r->opts, before, (size_t)nbefore * sizeof *r->opts);
            r->nopts = nbefore;
            r->best_ms = r->before_ms;
            r->kept_before = true;
        }
    }
    scratch_free(&s.bufs);
    uctx_free(s.sc);
    r->elapsed_s = seconds_since(&s.start);
    /* only a search that ran to its end is kept */
    if (ok && use_cache && !s.stop && isfinite(r->best_ms)) {
        char why[200];
        r->cache_written = beam_cache_store(dir, key, r->opts, r->nopts, r->best_ms, why, sizeof why);
        if (!r->cache_written) snprintf(r->cache_note, sizeof r->cache_note, "not written: %s", why);
    } else if (ok && use_cache && s.stop) {
        snprintf(r->cache_note, sizeof r->cache_note, "not written: the search was stopped early");
    }
    return ok;
}

bool beam_apply(KernelPipeline *kp, int width, const BeamResult *r) {
    if (!r->cache_hit && !isfinite(r->best_ms)) return true; /* stopped before any timing: the opts stay */
    char opts[512], why[1024], ms[32];
    beam_format_opts(r->opts, r->nopts, opts, sizeof opts);
    beam_format_ms(r->best_ms, ms, sizeof ms);
    if (r->cache_hit)
        snprintf(why, sizeof why, "beam %d: %s, %s when found (from the cache)\n", width, opts, ms);
    else if (r->kept_before)
        snprintf(why, sizeof why, "beam %d: %s, %s: the opts it had, faster than any of the %d candidates timed before "
                 "the search was %s\n", width, opts, ms, r->timed, r->interrupted ? "interrupted" : "out of budget");
    else
        snprintf(why, sizeof why, "beam %d: %s, %s; %d candidates timed in %d round%s%s\n", width, opts, ms, r->timed,
                 r->rounds, r->rounds == 1 ? "" : "s",
                 r->interrupted ? " (interrupted: the best found so far)"
                 : r->budget_spent ? " (budget spent: the best found so far)" : "");
    /* opts kept: the reason they had stays below the beam's line */
    const char *had = r->kept_before ? pipeline_opts_why(kp) : NULL;
    StrBuf sb;
    sb_init(&sb);
    sb_printf(&sb, "%s%s", why, had ? had : "");
    char *text = sb_take(&sb);
    bool ok = text != NULL;
    if (ok) {
        pipeline_set_opts(kp, r->opts, r->nopts);
        ok = pipeline_set_opts_why(kp, text);
    }
    free(text);
    return ok;
}
