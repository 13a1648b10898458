/* early_ranges.c - the range lists of REDUCE/STORE/END: which sources are
 * ranges, which ranges a node is inside of, replacing one range by an
 * expression (and by its parts in range lists), and tinygrad's
 * pm_flatten_range (a range list holds exactly the RANGEs its entries are
 * made of, in toposort order). */
#include <stdlib.h>
#include <string.h>
#include "stage_rules.h"
#include "early.h"
#include "../util/u64map.h"

int early_range_start(Op op) {
    switch (op) {
    case OP_BUFFERIZE:
    case OP_REDUCE:
    case OP_END: return 1;
    case OP_STORE: return 2;
    case OP_WMMA: return 3;
    default: return -1;
    }
}

const UOp **early_all_ranges(const UOp *root, size_t *n) {
    size_t nn;
    *n = 0;
    const UOp **topo = uop_toposort(root, &nn);
    if (!topo) return NULL;
    size_t k = 0;
    for (size_t i = 0; i < nn; i++)
        if (uop_op(topo[i]) == OP_RANGE) topo[k++] = topo[i];
    if (!k) {
        free(topo);
        return NULL;
    }
    *n = k;
    return topo;
}

/* ---- ranges a node is inside of ---- */

typedef struct RangeSet {
    int n, cap;
    const UOp **r;
} RangeSet;

static bool set_has(const RangeSet *s, const UOp *r) {
    for (int i = 0; i < s->n; i++)
        if (s->r[i] == r) return true;
    return false;
}

static bool set_add(RangeSet *s, const UOp *r) {
    if (set_has(s, r)) return true;
    if (s->n == s->cap) {
        int cap = s->cap ? s->cap * 2 : 4;
        const UOp **nr = realloc(s->r, (size_t)cap * sizeof *nr);
        if (!nr) return false;
        s->r = nr;
        s->cap = cap;
    }
    s->r[s->n++] = r;
    return true;
}

static void set_remove(RangeSet *s, const UOp *r) {
    for (int i = 0; i < s->n; i++)
        if (s->r[i] == r) {
            memmove(s->r + i, s->r + i + 1, (size_t)(s->n - i - 1) * sizeof *s->r);
            s->n--;
            return;
        }
}

/* the ranges u ends (tinygrad's ended_ranges), appended to out */
static bool ended_ranges(const UOp *u, RangeSet *out) {
    int off = early_range_start(uop_op(u));
    if (off >= 0) {
        for (int i = off; i < u->nsrc; i++)
            if (!set_add(out, u->src[i])) return false;
    } else if (uop_op(u) == OP_AFTER) {
        for (int i = 1; i < u->nsrc; i++)
            if (!ended_ranges(u->src[i], out)) return false;
    }
    return true;
}

int early_ranges_of(const UOp *u, const UOp **out, int max) {
    size_t nn;
    const UOp **topo = uop_toposort(u, &nn);
    if (!topo) return -1;
    RangeSet *sets = calloc(nn, sizeof *sets);
    U64Map pos = {0};
    int result = -1;
    if (!sets) goto done;
    for (size_t i = 0; i < nn; i++) {
        const UOp *x = topo[i];
        RangeSet *s = &sets[i];
        for (int j = 0; j < x->nsrc; j++) {
            const RangeSet *ss = &sets[(uintptr_t)u64map_get(&pos, x->src[j]->id) - 1];
            for (int k = 0; k < ss->n; k++)
                if (!set_add(s, ss->r[k])) goto done;
        }
        RangeSet ended = {0};
        if (!ended_ranges(x, &ended)) {
            free(ended.r);
            goto done;
        }
        for (int k = 0; k < ended.n; k++)
            if (uop_op(ended.r[k]) == OP_RANGE) set_remove(s, ended.r[k]);
        free(ended.r);
        if (uop_op(x) == OP_RANGE && !set_add(s, x)) goto done;
        if (!u64map_put(&pos, x->id, (const void *)(uintptr_t)(i + 1))) goto done;
    }
    const RangeSet *mine = &sets[nn - 1];
    if (mine->n <= max) {
        if (mine->n) memcpy(out, mine->r, (size_t)mine->n * sizeof *out);
        result = mine->n;
    }
done:
    if (sets)
        for (size_t i = 0; i < nn; i++) free(sets[i].r);
    free(sets);
    free(topo);
    u64map_free(&pos);
    return result;
}

/* ---- replacing a range ---- */

const UOp *early_replace_range(UCtx *c, const UOp *root, const UOp *from, const UOp *to,
                               const UOp *const *ranges, int nrange) {
    size_t nn;
    const UOp **topo = uop_toposort(root, &nn);
    if (!topo) {
        uctx_set_error(c, "out of memory");
        return NULL;
    }
    U64Map done = {0};
    const UOp *out = NULL;
    const UOp **src = NULL;
    for (size_t i = 0; i < nn; i++) {
        const UOp *u = topo[i], *rep;
        if (u == from) {
            rep = to;
        } else {
            int off = early_range_start(uop_op(u));
            free(src);
            src = malloc(((size_t)u->nsrc * (size_t)(nrange + 1) + 1) * sizeof *src);
            if (!src) {
                uctx_set_error(c, "out of memory");
                goto fail;
            }
            int n = 0;
            bool changed = false;
            for (int j = 0; j < u->nsrc; j++) {
                const UOp *s = u->src[j];
                if (ranges && off >= 0 && j >= off && s == from) {
                    for (int k = 0; k < nrange; k++) src[n++] = ranges[k];
                    changed = true;
                    continue;
                }
                const UOp *ns = u64map_get(&done, s->id);
                changed |= ns != s;
                src[n++] = ns;
            }
            rep = changed ? uop_with_src(c, u, src, n) : u;
        }
        if (!rep || !u64map_put(&done, u->id, rep)) {
            if (rep) uctx_set_error(c, "out of memory");
            goto fail;
        }
    }
    out = u64map_get(&done, root->id);
fail:
    free(src);
    free(topo);
    u64map_free(&done);
    return out;
}

/* ---- pm_flatten_range ---- */

/* the RANGEs of a node's range list, in toposort order */
static const UOp *flatten_range(const Match *m, void *ud) {
    (void)ud;
    const UOp *u = m->root;
    int off = early_range_start(uop_op(u));
    if (off < 0 || u->nsrc <= off) return NULL;
    RangeSet found = {0};
    for (int i = off; i < u->nsrc; i++) {
        size_t n;
        const UOp **rs = early_all_ranges(u->src[i], &n);
        for (size_t k = 0; k < n; k++)
            if (!set_add(&found, rs[k])) {
                free(rs);
                free(found.r);
                rewrite_fail(m, "out of memory");
                return NULL;
            }
        free(rs);
    }
    const UOp *src[off + found.n];
    for (int i = 0; i < off; i++) src[i] = u->src[i];
    for (int i = 0; i < found.n; i++) src[off + i] = found.r[i];
    const UOp *r = uop_with_src(m->ctx, u, src, off + found.n);
    free(found.r);
    return r;
}

static const RuleSpec FLATTEN_RULES[] = {
    RULE_FN("flatten_range", "({REDUCE STORE END} ...)", flatten_range),
};

const RuleTable pm_flatten_range_rules = RULE_TABLE(FLATTEN_RULES);
