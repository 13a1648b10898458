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

static int cmp_ptr(const void *a, const void *b) {
    const UOp *x = *(const UOp *const *)a, *y = *(const UOp *const *)b;
    return x < y ? -1 : x > y;
}

/* NULL when out of memory or a node cannot be rebuilt */
static const UOp *substitute(UCtx *c, const UOp *root, const UOp *const *from, const UOp *const *to, int n) {
    size_t nn;
    const UOp **order = uop_toposort(root, &nn);
    if (!order) return NULL;
    /* sorted copy of the nodes to find a node's slot by pointer */
    const UOp **sorted = malloc(nn * sizeof *sorted);
    const UOp **result = malloc(nn * sizeof *result);
    size_t *slot_of = malloc(nn * sizeof *slot_of);
    const UOp *out = NULL;
    if (!sorted || !result || !slot_of) goto done;
    for (size_t i = 0; i < nn; i++) sorted[i] = order[i];
    qsort(sorted, nn, sizeof *sorted, cmp_ptr);
    /* slot_of[k]: position in order of sorted[k] */
    for (size_t i = 0; i < nn; i++) {
        const UOp **p = bsearch(&order[i], sorted, nn, sizeof *sorted, cmp_ptr);
        slot_of[p - sorted] = i;
    }
    for (size_t i = 0; i < nn; i++) {
        const UOp *u = order[i], *rep = lookup(u, from, to, n);
        if (rep) { result[i] = rep; continue; }
        if (u->nsrc == 0) { result[i] = u; continue; }
        const UOp *srcs[u->nsrc];
        bool changed = false;
        for (int s = 0; s < u->nsrc; s++) {
            const UOp **p = bsearch(&u->src[s], sorted, nn, sizeof *sorted, cmp_ptr);
            srcs[s] = result[slot_of[p - sorted]];
            changed |= srcs[s] != u->src[s];
        }
        result[i] = changed ? uop_with_src(c, u, srcs, u->nsrc) : u;
        if (!result[i]) goto done;
    }
    out = result[nn - 1];
done:
    free(order);
    free(sorted);
    free(result);
    free(slot_of);
    return out;
}

static const UOp *simplify(UCtx *c, const UOp *u) {
    if (!u || uop_op(u) == OP_CONST) return u;
    return uop_simplify(c, u, "symbolic", NULL);
}

/* is needle in the backward slice of hay (hay itself included)? */
static bool in_slice(const UOp *needle, const UOp *hay) {
    size_t n;
    const UOp **order = uop_toposort(hay, &n);
    bool found = false;
    for (size_t i = 0; order && i < n && !found; i++) found = order[i] == needle;
    free(order);
    return found;
}

static bool op_in_slice(Op op, const UOp *hay) {
    size_t n;
    const UOp **order = uop_toposort(hay, &n);
    bool found = !order; /* out of memory: answer "yes" so callers back off */
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
 * uop_given_valid); returns uop itself when nothing applies or on failure */
static const UOp *uop_given_valid(UCtx *c, const UOp *valid, const UOp *uop, bool try_simplex) {
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
        if (!fakes[i]) return start;
        if (!try_simplex) continue;

        /* the clause alone */
        const UOp *sub = substitute(c, uop, &exprs[i], &fakes[i], 1);
        if (!sub) return start;
        if (sub != uop) {
            const UOp *r = simplify_with(c, sub, &exprs[i], &fakes[i], 1);
            if (!r) return start;
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
            if (!subs[t]) return start;
            any_unchanged |= subs[t] == uop;
        }
        if (any_unchanged) continue;
        for (int t = 0; t < nt && all_same; t++) {
            const UOp *r = simplify_with(c, subs[t], &terms[t], &tfakes[t], 1);
            if (!r) return start;
            if (!first) first = r;
            all_same = r == first;
        }
        if (all_same && first) uop = first;
    }

    /* all the clauses together */
    if (ne > 0) {
        const UOp *sub = substitute(c, uop, exprs, fakes, ne);
        if (!sub) return start;
        if (sub != uop) {
            const UOp *r = simplify_with(c, sub, exprs, fakes, ne);
            if (!r) return start;
            uop = r;
        }
    }
    return uop;
}

/* ---- rules ---- */
/* where(valid, x, Invalid): x simplified given valid */
static const UOp *gated_given_valid(const Match *m, void *ud) {
    (void)ud;
    const UOp *cond = GET("cond"), *x = GET("x");
    const UOp *nx = uop_given_valid(CTX, cond, x, false);
    if (nx == x) return NULL;
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
    if (op_in_slice(OP_INDEX, valid)) return NULL;
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
        const UOp *stmt = conj ? uop_given_valid(CTX, conj, valids[i], true) : valids[i];
        ret[nr++] = stmt;
        conj = conj ? sym_bin(CTX, OP_AND, conj, stmt) : stmt;
        if (!conj) return NULL;
    }
    bool same = nr == n;
    for (int i = 0; i < nr && same; i++) same = ret[i] == valids[i];
    return same ? NULL : conj;
}

static const RuleSpec valid_specs[] = {
    RULE_FN("simplify_valid", "(AND:bool a b)", simplify_valid),
    RULE_FN("gated_given_valid", "(WHERE cond x Invalid)", gated_given_valid),
};
const SymRuleTable sym_valid_rules = {valid_specs, sizeof valid_specs / sizeof *valid_specs};
