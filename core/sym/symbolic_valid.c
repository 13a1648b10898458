/* symbolic_valid.c - simplification under a validity condition (tinygrad's
 * pm_simplify_valid): inside where(valid, idx, Invalid), idx only matters
 * where valid holds, so idx is simplified with the bounds valid implies.
 *
 * A clause "X < c" bounds X above by vmax(c)-1, "!(X < c)" bounds X below by
 * vmin(c).  Each bounded X is swapped for a fresh variable with the tighter
 * range, the expression is simplified with the symbolic rules, and the
 * variable is swapped back.  The same idea drops clauses of a conjunction
 * that the other clauses imply. */
#include <stdio.h>
#include <stdlib.h>
#include "bounds.h"
#include "sym_helpers.h"
#include "sym_rules.h"
#include "symbolic.h"

#define CTX (m->ctx)
#define ROOT (m->root)
#define GET(n) match_get(m, n)

/* fresh variables get names no user graph is expected to use */
#define FAKE_PREFIX "valid_fake"

/* ---- substitution: every occurrence of from[i] (taken whole) becomes to[i] ---- */
static const UOp *lookup(const UOp *u, const UOp *const *from, const UOp *const *to, int n) {
    for (int i = 0; i < n; i++)
        if (from[i] == u) return to[i];
    return NULL;
}

/* node -> its replacement during one substitution: open addressing on the
 * node id, sized to the graph */
typedef struct SubstMap {
    uint32_t *ids; /* id + 1, 0: empty */
    const UOp **vals;
    size_t mask;
} SubstMap;

static bool map_init(SubstMap *m, size_t n) {
    size_t cap = 16;
    while (cap < 2 * n) cap *= 2;
    m->ids = calloc(cap, sizeof *m->ids);
    m->vals = malloc(cap * sizeof *m->vals);
    m->mask = cap - 1;
    return m->ids && m->vals;
}

static void map_free(SubstMap *m) {
    free(m->ids);
    free(m->vals);
}

static inline size_t map_home(const SubstMap *m, uint32_t id) { return (id * 2654435761u) & m->mask; }

static void map_put(SubstMap *m, uint32_t id, const UOp *v) {
    size_t i = map_home(m, id);
    while (m->ids[i] && m->ids[i] != id + 1) i = (i + 1) & m->mask;
    m->ids[i] = id + 1;
    m->vals[i] = v;
}

static const UOp *map_get(const SubstMap *m, uint32_t id) {
    for (size_t i = map_home(m, id); m->ids[i]; i = (i + 1) & m->mask)
        if (m->ids[i] == id + 1) return m->vals[i];
    return NULL;
}

/* NULL when out of memory or a node cannot be rebuilt */
static const UOp *substitute(UCtx *c, const UOp *root, const UOp *const *from, const UOp *const *to, int n) {
    /* nothing to replace unless some from[i] can be in root's graph (sources
     * have smaller ids than their users) */
    bool reachable = false;
    for (int i = 0; i < n && !reachable; i++) reachable = from[i]->id <= root->id;
    if (!reachable) return root;
    size_t nn;
    const UOp **order = uop_toposort(root, &nn);
    if (!order) return NULL;
    SubstMap map;
    const UOp *out = NULL;
    if (!map_init(&map, nn)) goto done;
    for (size_t i = 0; i < nn; i++) {
        const UOp *u = order[i], *rep = lookup(u, from, to, n), *res = u;
        if (rep) res = rep;
        else if (u->nsrc > 0) {
            const UOp *srcs[u->nsrc];
            bool changed = false;
            for (int s = 0; s < u->nsrc; s++) {
                srcs[s] = map_get(&map, u->src[s]->id);
                changed |= srcs[s] != u->src[s];
            }
            res = changed ? uop_with_src(c, u, srcs, u->nsrc) : u;
            if (!res) goto done;
        }
        map_put(&map, u->id, res);
        if (i == nn - 1) out = res;
    }
done:
    free(order);
    map_free(&map);
    return out;
}

static const UOp *simplify(UCtx *c, const UOp *u) {
    if (!u || uop_op(u) == OP_CONST) return u;
    return uop_simplify(c, u, "symbolic", NULL);
}

/* is needle in the backward slice of hay (hay itself included)? */
static bool in_slice(const UOp *needle, const UOp *hay) {
    if (needle == hay) return true;
    if (needle->id > hay->id) return false; /* a source is older than its users */
    size_t n;
    const UOp **order = uop_toposort(hay, &n);
    bool found = false;
    for (size_t i = 0; order && i < n && !found; i++) found = order[i] == needle;
    free(order);
    return found;
}

/* out of memory: answers "yes" (so callers back off) and sets *failed */
static bool op_in_slice(Op op, const UOp *hay, bool *failed) {
    size_t n;
    const UOp **order = uop_toposort(hay, &n);
    if (!order) *failed = true;
    bool found = !order;
    for (size_t i = 0; order && i < n && !found; i++) found = uop_op(order[i]) == op;
    free(order);
    return found;
}

/* ---- reading a clause ---- */
/* "X < c" gives (X, upper, vmax(c)-1); "(X < c) != true" gives (X, lower, vmin(c)) */
static bool parse_valid(const UOp *v, const UOp **expr, bool *is_upper, int64_t *bound) {
    int64_t one, lo, hi;
    if (uop_op(v) == OP_CMPNE && uop_op(v->src[1]) == OP_CONST && sym_const_int(v->src[1], &one) && one == 1 &&
        uop_op(v->src[0]) == OP_CMPLT && sym_is_int(v->src[0]->src[0])) {
        if (!sym_bounds(v->src[0]->src[1], &lo, &hi)) return false;
        *expr = v->src[0]->src[0], *is_upper = false, *bound = lo;
        return true;
    }
    if (uop_op(v) == OP_CMPLT && sym_is_int(v->src[0])) {
        if (!sym_bounds(v->src[1], &lo, &hi) || hi == INT64_MIN) return false;
        *expr = v->src[0], *is_upper = true, *bound = hi - 1;
        return true;
    }
    return false;
}

static const UOp *fake_var(UCtx *c, int i, int64_t lo, int64_t hi, const DType *dt) {
    char name[48];
    snprintf(name, sizeof name, FAKE_PREFIX "%d", i);
    const Arg *items[3] = {arg_str(c, name), arg_int(c, lo), arg_int(c, hi)};
    if (!items[0] || !items[1] || !items[2]) return NULL;
    return uop_new(c, OP_DEFINE_VAR, dt, NULL, 0, arg_tuple(c, items, 3));
}

/* swap from->to in u, simplify, swap back, simplify; NULL on failure */
static const UOp *simplify_with(UCtx *c, const UOp *u, const UOp *const *from, const UOp *const *to, int n) {
    const UOp *s = simplify(c, u);
    if (!s) return NULL;
    return simplify(c, substitute(c, s, to, from, n));
}

/* uop simplified under the assumption that valid is true (tinygrad
 * uop_given_valid); returns uop itself when nothing applies or on failure,
 * and sets *failed on failure (out of memory, a rewrite that stopped) */
static const UOp *gave_up(bool *failed, const UOp *start) {
    *failed = true;
    return start;
}

static const UOp *uop_given_valid(UCtx *c, const UOp *valid, const UOp *uop, bool try_simplex, bool *failed) {
    const UOp *clauses[SYM_MAX_TERMS];
    int nc = sym_split(valid, OP_AND, clauses, SYM_MAX_TERMS);
    if (nc < 0) return uop;

    /* expr -> [lower, upper], in first-seen order */
    const UOp *exprs[SYM_MAX_TERMS];
    int64_t lower[SYM_MAX_TERMS], upper[SYM_MAX_TERMS];
    bool has_lower[SYM_MAX_TERMS], has_upper[SYM_MAX_TERMS];
    int ne = 0;
    for (int i = 0; i < nc; i++) {
        const UOp *x;
        bool up;
        int64_t b;
        if (!parse_valid(clauses[i], &x, &up, &b)) continue;
        int k = 0;
        while (k < ne && exprs[k] != x) k++;
        if (k == ne) { exprs[ne] = x, has_lower[ne] = has_upper[ne] = false, ne++; }
        if (up) upper[k] = b, has_upper[k] = true;
        else lower[k] = b, has_lower[k] = true;
    }

    const UOp *fakes[SYM_MAX_TERMS];
    const UOp *start = uop;
    for (int i = 0; i < ne; i++) {
        const UOp *x = exprs[i];
        int64_t vmin, vmax;
        if (!sym_bounds(x, &vmin, &vmax)) return start;
        int64_t v0 = has_lower[i] ? lower[i] : vmin, v1 = has_upper[i] ? upper[i] : vmax;
        /* valid can never hold: nothing to learn, leave the expression alone */
        if (v0 > v1) return start;
        fakes[i] = fake_var(c, i, v0, v1, x->dtype);
        if (!fakes[i]) return gave_up(failed, start);
        if (!try_simplex) continue;

        /* the clause alone */
        const UOp *sub = substitute(c, uop, &exprs[i], &fakes[i], 1);
        if (!sub) return gave_up(failed, start);
        if (sub != uop) {
            const UOp *r = simplify_with(c, sub, &exprs[i], &fakes[i], 1);
            if (!r) return gave_up(failed, start);
            uop = r;
        }

        /* a simplex X0 + X1 + ... >= 1 of irreducible terms: if every "Xi >= 1"
         * gives the same result, that result holds */
        const UOp *terms[SYM_MAX_TERMS];
        int nt = uop_op(x) == OP_ADD && v0 == 1 ? sym_split(x, OP_ADD, terms, SYM_MAX_TERMS) : -1;
        bool irreducible = nt > 0;
        for (int t = 0; t < nt && irreducible; t++) irreducible = op_is(uop_op(terms[t]), OPF_IRREDUCIBLE);
        if (!irreducible) continue;
        const UOp *first = NULL;
        bool all_same = true, any_unchanged = false;
        const UOp *subs[SYM_MAX_TERMS], *tfakes[SYM_MAX_TERMS];
        for (int t = 0; t < nt; t++) {
            int64_t tlo, thi;
            if (!sym_bounds(terms[t], &tlo, &thi) || thi < 1) return start;
            tfakes[t] = fake_var(c, i, 1, thi, terms[t]->dtype);
            subs[t] = tfakes[t] ? substitute(c, uop, &terms[t], &tfakes[t], 1) : NULL;
            if (!subs[t]) return gave_up(failed, start);
            any_unchanged |= subs[t] == uop;
        }
        if (any_unchanged) continue;
        for (int t = 0; t < nt && all_same; t++) {
            const UOp *r = simplify_with(c, subs[t], &terms[t], &tfakes[t], 1);
            if (!r) return gave_up(failed, start);
            if (!first) first = r;
            all_same = r == first;
        }
        if (all_same && first) uop = first;
    }

    /* all the clauses together */
    if (ne > 0) {
        const UOp *sub = substitute(c, uop, exprs, fakes, ne);
        if (!sub) return gave_up(failed, start);
        if (sub != uop) {
            const UOp *r = simplify_with(c, sub, exprs, fakes, ne);
            if (!r) return gave_up(failed, start);
            uop = r;
        }
    }
    return uop;
}

/* ---- rules ---- */
/* where(valid, x, Invalid): x simplified given valid */
static const UOp *gated_given_valid(const Match *m, void *ud) {
    (void)ud;
    if (sym_fact(ROOT, SYM_FACT_GATED_SIMPLE)) return NULL;
    const UOp *cond = GET("cond"), *x = GET("x");
    bool failed = false;
    const UOp *nx = uop_given_valid(CTX, cond, x, false, &failed);
    if (nx == x) {
        if (!failed) sym_fact_set(ROOT, SYM_FACT_GATED_SIMPLE);
        return NULL;
    }
    return uop_where(CTX, cond, nx, ROOT->src[2]);
}

/* sort key: clauses whose bounded expression appears in other clauses first */
static int valid_priority(const UOp *v, const UOp *const *valids, int n) {
    const UOp *x;
    bool up;
    int64_t b;
    if (!parse_valid(v, &x, &up, &b)) return 0;
    int p = 0;
    for (int i = 0; i < n; i++) p -= in_slice(x, valids[i]);
    return p;
}

/* a conjunction of bool clauses: each clause simplified given the earlier ones,
 * duplicates dropped */
static const UOp *simplify_valid(const Match *m, void *ud) {
    (void)ud;
    const UOp *valid = ROOT;
    if (sym_fact(valid, SYM_FACT_VALID_SIMPLE)) return NULL;
    bool failed = false;
    if (op_in_slice(OP_INDEX, valid, &failed)) {
        if (!failed) sym_fact_set(valid, SYM_FACT_VALID_SIMPLE);
        return NULL;
    }
    const UOp *valids[SYM_MAX_TERMS];
    int n = sym_split(valid, OP_AND, valids, SYM_MAX_TERMS);
    if (n < 1) return NULL;
    /* stable insertion sort by priority */
    int prio[SYM_MAX_TERMS];
    for (int i = 0; i < n; i++) prio[i] = valid_priority(valids[i], valids, n);
    for (int i = 1; i < n; i++) {
        const UOp *v = valids[i];
        int p = prio[i], j = i;
        for (; j > 0 && prio[j - 1] > p; j--) valids[j] = valids[j - 1], prio[j] = prio[j - 1];
        valids[j] = v, prio[j] = p;
    }
    const UOp *ret[SYM_MAX_TERMS];
    int nr = 0;
    const UOp *conj = NULL; /* AND of ret so far */
    for (int i = 0; i < n; i++) {
        bool dup = false;
        for (int j = 0; j < i && !dup; j++) dup = valids[j] == valids[i];
        if (dup) continue;
        const UOp *stmt = conj ? uop_given_valid(CTX, conj, valids[i], true, &failed) : valids[i];
        ret[nr++] = stmt;
        conj = conj ? sym_bin(CTX, OP_AND, conj, stmt) : stmt;
        if (!conj) return NULL;
    }
    bool same = nr == n;
    for (int i = 0; i < nr && same; i++) same = ret[i] == valids[i];
    if (same && !failed) sym_fact_set(valid, SYM_FACT_VALID_SIMPLE);
    return same ? NULL : conj;
}

static const RuleSpec valid_specs[] = {
    RULE_FN("simplify_valid", "(AND:bool a b)", simplify_valid),
    RULE_FN("gated_given_valid", "(WHERE cond x Invalid)", gated_given_valid),
};
const RuleTable sym_valid_rules = {valid_specs, sizeof valid_specs / sizeof *valid_specs};

/* ---- pm_drop_and_clauses ----
 * In where(cond, x, Invalid), a clause of cond that uses none of the RANGEs
 * x uses is dropped: it gates something x's loops do not vary.  The kept
 * clauses are AND-ed onto true in their order, as v0.12.0 builds them. */
static bool uses_range_in(const UOp *clause, const UOp *const *rngs, size_t nr, bool *failed) {
    size_t n;
    const UOp **topo = uop_toposort(clause, &n);
    if (!topo) { *failed = true; return true; }
    bool hit = false;
    for (size_t i = 0; i < n && !hit; i++)
        if (uop_op(topo[i]) == OP_RANGE)
            for (size_t j = 0; j < nr && !hit; j++) hit = rngs[j] == topo[i];
    free(topo);
    return hit;
}

static const UOp *drop_and_clauses(const Match *m, void *ud) {
    (void)ud;
    const UOp *cond = GET("cond"), *x = GET("x");
    const UOp *clauses[SYM_MAX_TERMS];
    int n = sym_split(cond, OP_AND, clauses, SYM_MAX_TERMS);
    if (n < 1) return NULL;
    size_t nx;
    const UOp **rngs = uop_toposort(x, &nx);
    if (!rngs) return NULL;
    size_t nr = 0;
    for (size_t i = 0; i < nx; i++)
        if (uop_op(rngs[i]) == OP_RANGE) rngs[nr++] = rngs[i];
    bool failed = false;
    const UOp *keep = uop_const_bool(CTX, true);
    int kept = 0;
    for (int i = 0; i < n && keep; i++)
        if (uses_range_in(clauses[i], rngs, nr, &failed)) {
            keep = uop_binary(CTX, OP_AND, keep, clauses[i]);
            kept++;
        }
    free(rngs);
    if (failed || !keep || kept == n) return NULL;
    return uop_where(CTX, keep, x, ROOT->src[2]);
}

static const RuleSpec drop_and_clauses_specs[] = {
    RULE_FN("drop_and_clauses", "(WHERE cond x Invalid)", drop_and_clauses),
};
const RuleTable sym_drop_and_clauses_rules = {drop_and_clauses_specs,
                                              sizeof drop_and_clauses_specs / sizeof *drop_and_clauses_specs};
