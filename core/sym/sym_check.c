/* sym_check.c - random-expression checker for the symbolic rule sets:
 * generates random integer expressions over bounded variables, simplifies
 * them, compares values at many points, checks bounds and node counts, and
 * shrinks a failing expression to a minimal reproducer. */
#include "sym_check.h"
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "bounds.h"
#include "eval.h"
#include "symbolic.h"

enum { NVARS = 3, MAX_POINTS = 256 };
static const char *const var_names[NVARS] = {"a", "b", "c"};

typedef struct Rng { uint64_t s; } Rng;
static uint64_t rng_next(Rng *r) {
    r->s ^= r->s << 13; r->s ^= r->s >> 7; r->s ^= r->s << 17;
    return r->s;
}
static int64_t rng_range(Rng *r, int64_t lo, int64_t hi) { return lo + (int64_t)(rng_next(r) % (uint64_t)(hi - lo + 1)); }
static bool rng_chance(Rng *r, int percent) { return (int)(rng_next(r) % 100) < percent; }

typedef struct Gen {
    UCtx *c;
    Rng *rng;
    const UOp *vars[NVARS];
} Gen;

static const UOp *cst(Gen *g, int64_t v) { return uop_const_int(g->c, DT_INDEX, v); }
static const UOp *gen_int(Gen *g, int depth);

static const UOp *gen_bool(Gen *g, int depth) {
    Rng *r = g->rng;
    int k = (int)rng_range(r, 0, 9);
    if (depth <= 0 || k < 5) return uop_binary(g->c, OP_CMPLT, gen_int(g, depth - 1), rng_chance(r, 60) ? cst(g, rng_range(r, -4, 20)) : gen_int(g, depth - 1));
    if (k < 6) return uop_binary(g->c, OP_CMPNE, gen_int(g, depth - 1), cst(g, rng_range(r, -2, 6)));
    if (k < 7) return uop_binary(g->c, OP_CMPNE, gen_bool(g, depth - 1), uop_const_bool(g->c, true));
    return uop_binary(g->c, k < 9 ? OP_AND : OP_OR, gen_bool(g, depth - 1), gen_bool(g, depth - 1));
}

static int64_t nonzero(Rng *r, int64_t lo, int64_t hi) {
    int64_t v;
    do v = rng_range(r, lo, hi); while (v == 0);
    return v;
}

static const UOp *gen_int(Gen *g, int depth) {
    Rng *r = g->rng;
    UCtx *c = g->c;
    if (depth <= 0 || rng_chance(r, 20)) return rng_chance(r, 75) ? g->vars[rng_range(r, 0, NVARS - 1)] : cst(g, rng_range(r, -8, 16));
    switch (rng_range(r, 0, 12)) {
    case 0: case 1: return uop_binary(c, OP_ADD, gen_int(g, depth - 1), gen_int(g, depth - 1));
    case 2: return uop_binary(c, OP_ADD, gen_int(g, depth - 1), cst(g, rng_range(r, -10, 10)));
    case 3: case 4: return uop_binary(c, OP_MUL, gen_int(g, depth - 1), cst(g, rng_range(r, -4, 8)));
    case 5: return uop_binary(c, OP_MUL, gen_int(g, depth - 1), gen_int(g, depth - 1));
    case 6: case 7: return uop_binary(c, OP_IDIV, gen_int(g, depth - 1), cst(g, rng_chance(r, 85) ? rng_range(r, 1, 9) : nonzero(r, -5, -1)));
    case 8: case 9: return uop_binary(c, OP_MOD, gen_int(g, depth - 1), cst(g, rng_chance(r, 85) ? rng_range(r, 1, 9) : nonzero(r, -5, -1)));
    case 10: return uop_binary(c, OP_MAX, gen_int(g, depth - 1), gen_int(g, depth - 1));
    case 11: return uop_where(c, gen_bool(g, depth - 1), gen_int(g, depth - 1), gen_int(g, depth - 1));
    default: {
        const UOp *d = gen_int(g, depth - 1);
        return uop_binary(c, rng_chance(r, 50) ? OP_IDIV : OP_MOD, gen_int(g, depth - 1), d);
    }
    }
}

/* ---- checking one expression ---- */
typedef enum Verdict { V_OK, V_SKIP, V_FAIL } Verdict;

typedef struct Point { int64_t v[NVARS]; } Point;

typedef struct Check {
    const char *set;
    SymRenderFn render;   /* the caller's expression renderer, or NULL */
    bool strict_size;
    bool grew;
    const Point *pts;
    int npts;
    int64_t lo[NVARS], hi[NVARS];
    StrBuf why;           /* why it failed */
    size_t in, out;
} Check;

static bool may_overflow(const UOp *e) {
    size_t n;
    const UOp **t = uop_toposort(e, &n);
    if (!t) return true;
    bool bad = false;
    for (size_t i = 0; i < n && !bad; i++) {
        int64_t lo, hi;
        if (uop_bounds(t[i], &lo, &hi) && t[i]->dtype == DT_INDEX && (lo <= INT64_MIN / 4 || hi >= INT64_MAX / 4)) bad = true;
    }
    free(t);
    return bad;
}

static void put_expr(StrBuf *sb, SymRenderFn render, const UOp *u) {
    if (!u) sb_puts(sb, "(null)");
    else if (render) render(sb, u);
    else sb_printf(sb, "%%%u %s", u->id, op_name(uop_op(u)));
}

/* the size that must not grow: operations, not leaves (x+x -> x*2 trades
 * an ADD for a MUL and a constant, which is no growth) */
static size_t op_count(const UOp *u) {
    size_t n, ops = 0;
    const UOp **t = uop_toposort(u, &n);
    for (size_t i = 0; t && i < n; i++) ops += uop_op(t[i]) != OP_CONST && uop_op(t[i]) != OP_DEFINE_VAR;
    free(t);
    return ops;
}

static Verdict check_one(UCtx *c, Check *k, const UOp *e) {
    sb_clear(&k->why);
    if (!e) return V_SKIP;
    if (may_overflow(e)) return V_SKIP;
    const UOp *s = uop_simplify(c, e, k->set, NULL);
    if (!s) {
        sb_printf(&k->why, "simplify failed: %s", uctx_error(c));
        return V_FAIL;
    }
    k->in = uop_graph_size(e);
    k->out = uop_graph_size(s);
    int64_t elo, ehi, slo, shi;
    bool have_e = uop_bounds(e, &elo, &ehi), have_s = uop_bounds(s, &slo, &shi);
    size_t ops_in = op_count(e), ops_out = op_count(s);
    k->grew = ops_out > ops_in;
    if (k->grew && k->strict_size) {
        sb_printf(&k->why, "result has %zu operations, input %zu", ops_out, ops_in);
        sb_puts(&k->why, "\n  simplified: ");
        put_expr(&k->why, k->render, s);
        return V_FAIL;
    }
    EvalBinding b[NVARS];
    for (int p = 0; p < k->npts; p++) {
        for (int v = 0; v < NVARS; v++) b[v] = (EvalBinding){var_names[v], k->pts[p].v[v]};
        char err[200];
        int64_t ve, vs;
        if (!uop_eval_int(e, b, NVARS, &ve, err, sizeof err)) continue; /* undefined at this point */
        const char *what = NULL;
        if (!uop_eval_int(s, b, NVARS, &vs, err, sizeof err)) what = err;
        else if (ve != vs) what = "values differ";
        else if (have_e && (ve < elo || ve > ehi)) what = "input bounds do not contain its value";
        else if (have_s && (vs < slo || vs > shi)) what = "result bounds do not contain its value";
        if (what) {
            sb_printf(&k->why, "%s at a=%lld b=%lld c=%lld: input %lld, simplified %lld", what, (long long)b[0].value,
                      (long long)b[1].value, (long long)b[2].value, (long long)ve, (long long)vs);
            sb_printf(&k->why, "\n  input bounds [%lld, %lld], simplified bounds [%lld, %lld]\n  simplified: ",
                      (long long)elo, (long long)ehi, (long long)slo, (long long)shi);
            put_expr(&k->why, k->render, s);
            return V_FAIL;
        }
    }
    return V_OK;
}

/* e with node `from` replaced by `to` */
static const UOp *substitute(UCtx *c, const UOp *e, const UOp *from, const UOp *to) {
    size_t n;
    const UOp **t = uop_toposort(e, &n);
    if (!t) return NULL;
    const UOp **map = calloc((size_t)e->id + 1, sizeof *map);
    const UOp *res = NULL;
    if (!map) goto out;
    for (size_t i = 0; i < n; i++) {
        const UOp *u = t[i];
        if (u == from) { map[u->id] = to; continue; }
        const UOp *src[8];
        bool changed = false;
        if (u->nsrc > 8) { map[u->id] = u; continue; }
        for (int j = 0; j < u->nsrc; j++) {
            src[j] = map[u->src[j]->id];
            changed |= src[j] != u->src[j];
        }
        map[u->id] = changed ? uop_with_src(c, u, src, u->nsrc) : u;
        if (!map[u->id]) goto out;
    }
    res = map[e->id];
out:
    free(map);
    free(t);
    return res;
}

/* smaller failing expressions, greedily, until none is found */
static const UOp *shrink(UCtx *c, Check *k, const UOp *e) {
    bool progress = true;
    while (progress) {
        progress = false;
        size_t n;
        const UOp **t = uop_toposort(e, &n);
        if (!t) break;
        size_t size = uop_graph_size(e);
        for (size_t i = 0; i < n && !progress; i++) {
            const UOp *u = t[i];
            if (u->nsrc == 0) continue;
            const UOp *cand[5];
            int nc = 0;
            for (int j = 0; j < u->nsrc && nc < 3; j++)
                if (u->src[j]->dtype == u->dtype) cand[nc++] = u->src[j];
            if (u->dtype == DT_INDEX) { cand[nc++] = uop_const_int(c, DT_INDEX, 0); cand[nc++] = uop_const_int(c, DT_INDEX, 1); }
            else if (u->dtype == DT_BOOL) { cand[nc++] = uop_const_bool(c, true); cand[nc++] = uop_const_bool(c, false); }
            for (int j = 0; j < nc && !progress; j++) {
                const UOp *e2 = substitute(c, e, u, cand[j]);
                if (!e2 || e2 == e || uop_graph_size(e2) >= size) continue;
                if (check_one(c, k, e2) == V_FAIL) { e = e2; progress = true; }
            }
        }
        free(t);
    }
    check_one(c, k, e); /* leaves the reason for the final expression in k->why */
    return e;
}

static void make_points(Rng *r, const int64_t *lo, const int64_t *hi, Point *pts, int n) {
    for (int p = 0; p < n; p++)
        for (int v = 0; v < NVARS; v++) {
            if (p < 2) pts[p].v[v] = p == 0 ? lo[v] : hi[v];
            else if (p < 4) pts[p].v[v] = (v + p) % 2 ? lo[v] : hi[v];
            else pts[p].v[v] = rng_range(r, lo[v], hi[v]);
        }
}

bool sym_check_run(const SymCheckOpts *opts, SymCheckResult *res) {
    memset(res, 0, sizeof *res);
    int depth = opts->max_depth > 0 ? opts->max_depth : 4;
    int npts = opts->points > 0 ? opts->points : 24;
    if (npts > MAX_POINTS) npts = MAX_POINTS;
    Rng rng = {opts->seed * 2654435761u + 0x9E3779B97F4A7C15ull};
    Point pts[MAX_POINTS];
    Check k = {.set = opts->set, .render = opts->render, .strict_size = opts->strict_size, .pts = pts, .npts = npts};
    sb_init(&k.why);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    size_t step = opts->count / 10 ? opts->count / 10 : 1;
    for (size_t i = 0; i < opts->count && !res->failed; i++) {
        UCtx *c = uctx_new();
        if (!c) break;
        Gen g = {.c = c, .rng = &rng};
        for (int v = 0; v < NVARS; v++) {
            k.lo[v] = rng_chance(&rng, 70) ? 0 : rng_range(&rng, -12, 8);
            k.hi[v] = k.lo[v] + rng_range(&rng, 0, rng_chance(&rng, 50) ? 8 : 40);
            g.vars[v] = uop_var(c, var_names[v], k.lo[v], k.hi[v]);
        }
        make_points(&rng, k.lo, k.hi, pts, npts);
        const UOp *e = gen_int(&g, depth);
        Verdict v = check_one(c, &k, e);
        if (v == V_SKIP) res->skipped++;
        else {
            res->checked++;
            res->nodes_in += k.in;
            res->nodes_out += k.out;
            res->grew += v == V_OK && k.grew;
        }
        if (v == V_FAIL) {
            StrBuf rep;
            sb_init(&rep);
            sb_printf(&rep, "symbolic check failed on expression %zu (seed %llu)\n  original: ", i,
                      (unsigned long long)opts->seed);
            put_expr(&rep, k.render, e);
            sb_printf(&rep, "\n  reason: %s\n", sb_str(&k.why));
            const UOp *small = shrink(c, &k, e);
            sb_puts(&rep, "shrunk reproducer:\n  vars:");
            for (int j = 0; j < NVARS; j++) sb_printf(&rep, " %s in [%lld, %lld]", var_names[j], (long long)k.lo[j], (long long)k.hi[j]);
            sb_puts(&rep, "\n  expression: ");
            put_expr(&rep, k.render, small);
            sb_printf(&rep, "\n  reason: %s\n", sb_str(&k.why));
            res->report = sb_take(&rep);
            sb_free(&rep);
            res->failed = true;
        }
        uctx_free(c);
        if (opts->progress && (i + 1) % step == 0)
            fprintf(opts->progress, "  %zu/%zu expressions (%zu skipped)\n", i + 1, opts->count, res->skipped);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    res->seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    sb_free(&k.why);
    return !res->failed;
}

void sym_check_result_free(SymCheckResult *res) {
    free(res->report);
    res->report = NULL;
}
