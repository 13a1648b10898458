/* diff.c - differences between two graphs of one context: a unified diff of
 * their listings, and one DOT drawing of both.
 *
 * A node's listing line is fixed by the node (its id names it), so two lines
 * are equal exactly when they show the same node, and each node appears at
 * most once per listing.  The longest common subsequence of two such
 * sequences is the longest increasing run of "position in a" read along b,
 * found in O(n log n).
 *
 * DiffOpts.context: lines of context around changes; 0 means the default
 * of 3 and a negative value means none.  Without changes nothing is
 * written. */
#include "diff.h"
#include <stdlib.h>
#include <string.h>
#include "dot.h"
#include "listing.h"

#define RED "\x1b[31m"
#define GREEN "\x1b[32m"
#define CYAN "\x1b[36m"
#define BOLD "\x1b[1m"
#define RESET "\x1b[0m"

typedef enum { EDIT_KEEP = ' ', EDIT_REMOVE = '-', EDIT_ADD = '+' } EditKind;
typedef struct Edit { EditKind kind; const UOp *u; size_t line_a, line_b; } Edit;

/* matched[i] = index in b of a[i] when a[i] is in the common subsequence,
 * else SIZE_MAX.  Returns the number matched, or SIZE_MAX when out of memory. */
static size_t common_subsequence(const UOp **a, size_t na, const UOp **b, size_t nb, size_t *matched) {
    uint32_t max_id = 0;
    for (size_t i = 0; i < na; i++) if (a[i]->id > max_id) max_id = a[i]->id;
    for (size_t j = 0; j < nb; j++) if (b[j]->id > max_id) max_id = b[j]->id;
    size_t *pos_a = malloc(((size_t)max_id + 1) * sizeof *pos_a);
    size_t *tails = malloc((nb + 1) * sizeof *tails);   /* index in b of the tail of the best run of each length */
    size_t *prev = malloc((nb + 1) * sizeof *prev);     /* the element before j in its run */
    size_t len = SIZE_MAX;
    if (!pos_a || !tails || !prev) goto out;
    for (size_t k = 0; k <= max_id; k++) pos_a[k] = SIZE_MAX;
    for (size_t i = 0; i < na; i++) pos_a[a[i]->id] = i;
    for (size_t i = 0; i < na; i++) matched[i] = SIZE_MAX;
    len = 0;
    for (size_t j = 0; j < nb; j++) {
        size_t p = pos_a[b[j]->id];
        if (p == SIZE_MAX) continue;
        /* the first run length whose tail is at or past p */
        size_t lo = 0, hi = len;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (pos_a[b[tails[mid]]->id] < p) lo = mid + 1;
            else hi = mid;
        }
        prev[j] = lo ? tails[lo - 1] : SIZE_MAX;
        tails[lo] = j;
        if (lo == len) len++;
    }
    if (len) {
        size_t j = tails[len - 1];
        for (size_t k = len; k-- > 0; j = prev[j]) matched[pos_a[b[j]->id]] = j;
    }
out:
    free(pos_a);
    free(tails);
    free(prev);
    return len;
}

static void put_range(StrBuf *sb, size_t start, size_t count) {
    /* GNU style: an empty range names the line before it; ",1" is left out */
    if (count == 0) sb_printf(sb, "%zu,0", start);
    else if (count == 1) sb_printf(sb, "%zu", start + 1);
    else sb_printf(sb, "%zu,%zu", start + 1, count);
}

DiffStats uop_diff_text(StrBuf *sb, const UOp *a, const UOp *b, const DiffOpts *opts) {
    DiffStats st = {0, 0, 0};
    int context = opts ? (opts->context == 0 ? 3 : opts->context < 0 ? 0 : opts->context) : 3;
    bool color = opts && opts->color;
    size_t na = 0, nb = 0;
    const UOp **la = a ? uop_toposort(a, &na) : NULL;
    const UOp **lb = b ? uop_toposort(b, &nb) : NULL;
    size_t *matched = malloc((na ? na : 1) * sizeof *matched);
    Edit *edits = malloc((na + nb + 1) * sizeof *edits);
    if ((a && !la) || (b && !lb) || !matched || !edits) { sb->oom = true; goto out; }
    size_t common = common_subsequence(la, na, lb, nb, matched);
    if (common == SIZE_MAX) { sb->oom = true; goto out; }

    /* the edit script: for each gap, removals then additions */
    size_t ne = 0, i = 0, j = 0;
    while (i < na || j < nb) {
        if (i < na && matched[i] == SIZE_MAX) { edits[ne++] = (Edit){EDIT_REMOVE, la[i], i, j}; i++; continue; }
        size_t until = i < na ? matched[i] : nb;
        while (j < until) { edits[ne++] = (Edit){EDIT_ADD, lb[j], i, j}; j++; }
        if (i < na) { edits[ne++] = (Edit){EDIT_KEEP, la[i], i, j}; i++; j++; }
    }
    st.kept = common;
    st.removed = na - common;
    st.added = nb - common;
    if (!st.added && !st.removed) goto out;

    ListingWidths w = {0, 0, 0};
    uop_listing_widths(la, na, &w);
    uop_listing_widths(lb, nb, &w);
    const char *label_a = opts && opts->label_a ? opts->label_a : "a";
    const char *label_b = opts && opts->label_b ? opts->label_b : "b";
    sb_printf(sb, "%s--- %s%s\n", color ? BOLD : "", label_a, color ? RESET : "");
    sb_printf(sb, "%s+++ %s%s\n", color ? BOLD : "", label_b, color ? RESET : "");

    /* hunks: changes with `context` lines around, merged when they touch */
    size_t e = 0;
    while (e < ne) {
        while (e < ne && edits[e].kind == EDIT_KEEP) e++;
        if (e == ne) break;
        size_t start = e >= (size_t)context ? e - (size_t)context : 0;
        size_t end = e; /* one past the last change of the hunk */
        for (;;) {
            while (end < ne && edits[end].kind != EDIT_KEEP) end++;
            size_t k = end;
            while (k < ne && edits[k].kind == EDIT_KEEP) k++;
            if (k < ne && k - end <= 2 * (size_t)context) end = k;
            else break;
        }
        size_t stop = end + (size_t)context < ne ? end + (size_t)context : ne;
        size_t count_a = 0, count_b = 0;
        for (size_t k = start; k < stop; k++) {
            if (edits[k].kind != EDIT_ADD) count_a++;
            if (edits[k].kind != EDIT_REMOVE) count_b++;
        }
        sb_printf(sb, "%s@@ -", color ? CYAN : "");
        put_range(sb, edits[start].line_a, count_a);
        sb_puts(sb, " +");
        put_range(sb, edits[start].line_b, count_b);
        sb_printf(sb, " @@%s\n", color ? RESET : "");
        for (size_t k = start; k < stop; k++) {
            const char *col = !color ? "" : edits[k].kind == EDIT_ADD ? GREEN : edits[k].kind == EDIT_REMOVE ? RED : "";
            sb_printf(sb, "%s%c", col, (char)edits[k].kind);
            uop_listing_line_padded(sb, edits[k].u, NULL, &w);
            sb_printf(sb, "%s\n", *col ? RESET : "");
        }
        e = stop;
    }
out:
    free(la);
    free(lb);
    free(matched);
    free(edits);
    return st;
}

/* ---- DOT overlay ---- */

typedef struct Membership { const unsigned char *in_a, *in_b; } Membership;

static const char *diff_color(const UOp *u, void *ud) {
    const Membership *m = ud;
    bool a = m->in_a[u->id], b = m->in_b[u->id];
    if (a && b) return "#e0e0e0";  /* kept */
    return b ? "#a8e6a1" : "#f4a6a6"; /* added : removed */
}

void uop_diff_dot(StrBuf *sb, const UOp *a, const UOp *b) {
    size_t na = 0, nb = 0;
    const UOp **la = a ? uop_toposort(a, &na) : NULL;
    const UOp **lb = b ? uop_toposort(b, &nb) : NULL;
    uint32_t max_id = 0;
    for (size_t i = 0; i < na; i++) if (la[i]->id > max_id) max_id = la[i]->id;
    for (size_t j = 0; j < nb; j++) if (lb[j]->id > max_id) max_id = lb[j]->id;
    unsigned char *in_a = calloc((size_t)max_id + 1, 1), *in_b = calloc((size_t)max_id + 1, 1);
    const UOp **all = malloc((na + nb + 1) * sizeof *all);
    if ((a && !la) || (b && !lb) || !in_a || !in_b || !all) { sb->oom = true; goto out; }
    for (size_t i = 0; i < na; i++) in_a[la[i]->id] = 1;
    for (size_t j = 0; j < nb; j++) in_b[lb[j]->id] = 1;
    /* the union in id order: sources always have smaller ids than users */
    size_t n = 0;
    for (size_t i = 0; i < na; i++) all[n++] = la[i];
    for (size_t j = 0; j < nb; j++) if (!in_a[lb[j]->id]) all[n++] = lb[j];
    const UOp **by_id = calloc((size_t)max_id + 1, sizeof *by_id);
    if (!by_id) { sb->oom = true; goto out; }
    for (size_t k = 0; k < n; k++) by_id[all[k]->id] = all[k];
    n = 0;
    for (size_t id = 0; id <= max_id; id++) if (by_id[id]) all[n++] = by_id[id];
    free(by_id);
    Membership m = {in_a, in_b};
    DotOpts o = {.title = "green: added   red: removed   grey: kept"};
    uop_dot_nodes(sb, all, n, &o, diff_color, &m);
    sb_puts(sb, "}\n");
out:
    free(la);
    free(lb);
    free(in_a);
    free(in_b);
    free(all);
}
