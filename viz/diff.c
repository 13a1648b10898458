/* diff.c - differences between two graphs of one context: a diff of their
 * listings that shows what changed, and one DOT drawing of both.
 *
 * A line diff of two listings is noisy: a node whose source was rewritten
 * is a new node (hash-consing), so its users get new ids all the way up to
 * the root, and a node that only moved in the toposort looks removed and
 * added.  So the nodes are matched first, in four passes over the toposorts
 * (never recursion: graphs can be as deep as the user makes them):
 *
 *   1. identity: a node in both graphs is matched to itself;
 *   2. bottom-up: a node of b whose op, dtype, arg, tag and sources mapped
 *      through the match are those of a node of a is matched to it (a hash
 *      table of a's unmatched nodes, keyed by their fields and sources);
 *   3. top-down: the roots, then from each matched pair (users first) its
 *      unmatched sources to the other's unmatched sources of the same op,
 *      dtype, arg and tag, aligned in source order (a node whose sources
 *      changed);
 *   4. passes 2 and 3 again while they find more; when they find no more,
 *      pass 2 once with the dtype left out of the key (a node whose only
 *      change is its dtype, as when index becomes int32), and so on.
 *
 * A matched pair is unchanged when its fields are equal and its sources are
 * matched to each other pairwise, whatever the ids; it prints as a context
 * line with b's ids (and "# was %N" when the id changed).  A matched pair
 * that is not unchanged prints as - then +, an unmatched node of a as -, of
 * b as +.  So rewriting one leaf deep in a chain shows the leaf and its
 * direct users, and the chain above them is context; lowering index to
 * int32 shows the index nodes, and their users are context.  The lines follow b's
 * listing; a removed node comes after the line of the node matched to its
 * nearest predecessor in a's listing, and within each run of changes the
 * removals come first, as in diff -u.  The @@ ranges count the lines of the
 * two sides as shown.
 *
 * DiffOpts.context: lines of context around changes; 0 means the default
 * of 3 and a negative value means none.  DiffOpts.side prints two columns
 * (a's line, a marker, b's line) that fit DiffOpts.width, cutting long lines
 * with an ellipsis.  Without changes nothing is written. */
#include "diff.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "../core/util/u64map.h"
#include "dot.h"
#include "listing.h"

#define RED "\x1b[31m"
#define GREEN "\x1b[32m"
#define CYAN "\x1b[36m"
#define BOLD "\x1b[1m"
#define DIM "\x1b[2m"
#define RESET "\x1b[0m"

#define NONE UINT32_MAX

/* ---- the matching ---- */

/* One graph: its toposort, each node's sources as indices into it, and
 * the index of the node each node is matched to in the other graph. */
typedef struct Graph {
    const UOp **n;
    size_t count;
    U64Map pos;     /* id -> index + 1 */
    size_t *off;    /* the sources of n[i] are src[off[i]] .. src[off[i + 1] - 1] */
    uint32_t *src;
    uint32_t *match;
} Graph;

static void graph_free(Graph *g) {
    free(g->n);
    free(g->off);
    free(g->src);
    free(g->match);
    u64map_free(&g->pos);
}

static bool graph_init(Graph *g, const UOp *root) {
    memset(g, 0, sizeof *g);
    if (root) {
        g->n = uop_toposort(root, &g->count);
        if (!g->n) return false;
    }
    size_t edges = 0;
    for (size_t i = 0; i < g->count; i++) edges += g->n[i]->nsrc;
    g->off = malloc((g->count + 1) * sizeof *g->off);
    g->src = malloc((edges ? edges : 1) * sizeof *g->src);
    g->match = malloc((g->count ? g->count : 1) * sizeof *g->match);
    if (!g->off || !g->src || !g->match) return false;
    size_t e = 0;
    bool ok = true;
    for (size_t i = 0; i < g->count && ok; i++) {
        const UOp *u = g->n[i];
        g->off[i] = e;
        g->match[i] = NONE;
        /* sources come before their users in the toposort */
        for (int k = 0; k < u->nsrc; k++) g->src[e++] = (uint32_t)((uintptr_t)u64map_get(&g->pos, u->src[k]->id) - 1);
        ok = u64map_put(&g->pos, u->id, (const void *)(uintptr_t)(i + 1));
    }
    g->off[g->count] = e;
    return ok;
}

static inline size_t nsrc_of(const Graph *g, size_t i) { return g->off[i + 1] - g->off[i]; }

static bool same_fields(const UOp *x, const UOp *y) {
    return x->op == y->op && x->dtype == y->dtype && x->arg == y->arg && x->tag == y->tag;
}

static inline uint64_t mix(uint64_t h, uint64_t v) {
    h = (h ^ v) * 0x9E3779B97F4A7C15ull;
    return h ^ (h >> 29);
}

/* the hash of a node's fields; without the dtype when loose */
static uint64_t fields_hash(const UOp *u, size_t nsrc, bool loose) {
    uint64_t h = mix(0x243F6A8885A308D3ull, ((uint64_t)u->op << 32) | nsrc);
    if (!loose) h = mix(h, (uint64_t)(uintptr_t)u->dtype);
    h = mix(h, (uint64_t)(uintptr_t)u->arg);
    return mix(h, (uint64_t)(uintptr_t)u->tag);
}

/* the key of a's node i: its fields and its sources' indices in a */
static uint64_t key_a(const Graph *a, size_t i, bool loose) {
    uint64_t h = fields_hash(a->n[i], nsrc_of(a, i), loose);
    for (size_t e = a->off[i]; e < a->off[i + 1]; e++) h = mix(h, a->src[e]);
    return h;
}

/* the key b's node j would have in a: its sources mapped through the match;
 * false when a source is unmatched */
static bool key_b(const Graph *b, size_t j, bool loose, uint64_t *key) {
    uint64_t h = fields_hash(b->n[j], nsrc_of(b, j), loose);
    for (size_t e = b->off[j]; e < b->off[j + 1]; e++) {
        uint32_t m = b->match[b->src[e]];
        if (m == NONE) return false;
        h = mix(h, m);
    }
    *key = h;
    return true;
}

static void pair(Graph *a, size_t i, Graph *b, size_t j) {
    a->match[i] = (uint32_t)j;
    b->match[j] = (uint32_t)i;
}

/* b's node j's sources are matched to a's node i's, in order */
static bool sources_match(const Graph *a, size_t i, const Graph *b, size_t j) {
    if (nsrc_of(a, i) != nsrc_of(b, j)) return false;
    for (size_t k = 0; k < nsrc_of(b, j); k++)
        if (b->match[b->src[b->off[j] + k]] != a->src[a->off[i] + k]) return false;
    return true;
}

/* a's node i has b's node j's fields and j's sources are matched to i's */
static bool equal_through_match(const Graph *a, size_t i, const Graph *b, size_t j) {
    return same_fields(a->n[i], b->n[j]) && sources_match(a, i, b, j);
}

/* a's nodes not matched by identity, by key: a hash map to the first node
 * of each key and a chain through the others (hash collisions; with loose
 * keys, nodes that differ only in dtype) */
typedef struct NodeTable {
    U64Map head;
    uint32_t *next;
    bool loose;
} NodeTable;

static bool table_init(NodeTable *t, const Graph *a, bool loose) {
    t->head = (U64Map){0};
    t->loose = loose;
    t->next = malloc((a->count ? a->count : 1) * sizeof *t->next);
    if (!t->next) return false;
    for (size_t i = a->count; i-- > 0;) { /* chains in a's order */
        if (a->match[i] != NONE) continue;
        uint64_t key = key_a(a, i, loose);
        const void *h = u64map_get(&t->head, key);
        t->next[i] = h ? (uint32_t)((uintptr_t)h - 1) : NONE;
        if (!u64map_put(&t->head, key, (const void *)(uintptr_t)(i + 1))) return false;
    }
    return true;
}

static void table_free(NodeTable *t) {
    u64map_free(&t->head);
    free(t->next);
}

/* pass 2: each unmatched node of b whose sources are matched, to an
 * unmatched node of a with its fields (loose: but the dtype) and the mapped
 * sources; returns the number of new pairs */
static size_t match_bottom_up(Graph *a, Graph *b, const NodeTable *t) {
    size_t found = 0;
    for (size_t j = 0; j < b->count; j++) {
        uint64_t key;
        if (b->match[j] != NONE || !key_b(b, j, t->loose, &key)) continue;
        const void *h = u64map_get(&t->head, key);
        for (uint32_t i = h ? (uint32_t)((uintptr_t)h - 1) : NONE; i != NONE; i = t->next[i]) {
            const UOp *x = a->n[i], *y = b->n[j];
            bool fits = t->loose ? x->op == y->op && x->arg == y->arg && x->tag == y->tag : same_fields(x, y);
            if (a->match[i] == NONE && fits && sources_match(a, i, b, j)) {
                pair(a, i, b, j);
                found++;
                break;
            }
        }
    }
    return found;
}

/* how far past the last paired source the alignment looks for a partner */
#define ALIGN_WINDOW 64

/* pass 3: returns the number of new pairs; cand is scratch space for the
 * largest number of sources of a node of a */
static size_t match_top_down(Graph *a, Graph *b, uint32_t *cand) {
    size_t found = 0;
    if (a->count && b->count && a->match[a->count - 1] == NONE && b->match[b->count - 1] == NONE &&
        same_fields(a->n[a->count - 1], b->n[b->count - 1])) {
        pair(a, a->count - 1, b, b->count - 1);
        found++;
    }
    /* users first: a pair made here is a source, visited later in the loop */
    for (size_t j = b->count; j-- > 0;) {
        size_t i = b->match[j];
        if (i == NONE) continue;
        /* a's unmatched sources, in order */
        size_t nc = 0;
        for (size_t e = a->off[i]; e < a->off[i + 1]; e++)
            if (a->match[a->src[e]] == NONE) cand[nc++] = a->src[e];
        if (!nc) continue;
        size_t next = 0; /* candidates before this one are passed */
        for (size_t e = b->off[j]; e < b->off[j + 1] && next < nc; e++) {
            size_t ys = b->src[e];
            if (b->match[ys] != NONE) continue;
            for (size_t c = next; c < nc && c < next + ALIGN_WINDOW; c++) {
                size_t xs = cand[c];
                if (a->match[xs] == NONE && same_fields(a->n[xs], b->n[ys])) {
                    pair(a, xs, b, ys);
                    found++;
                    next = c + 1;
                    break;
                }
            }
        }
    }
    return found;
}

/* Matches a's and b's nodes; false when out of memory. */
static bool match_graphs(Graph *a, Graph *b) {
    /* 1. identity */
    for (size_t j = 0; j < b->count; j++) {
        const void *v = u64map_get(&a->pos, b->n[j]->id);
        if (v && a->n[(uintptr_t)v - 1] == b->n[j]) pair(a, (uintptr_t)v - 1, b, j);
    }
    size_t max_src = 1;
    for (size_t i = 0; i < a->count; i++)
        if (nsrc_of(a, i) > max_src) max_src = nsrc_of(a, i);
    NodeTable exact = {0}, loose = {0};
    uint32_t *cand = malloc(max_src * sizeof *cand);
    bool ok = cand && table_init(&exact, a, false) && table_init(&loose, a, true);
    /* 2-4. bottom-up and top-down while they find more; when they find no
     * more, bottom-up once with the dtype left out of the key (a node whose
     * only change is its dtype, as when index becomes int32, is a changed
     * pair, so its users are unchanged) and again.  Few rounds: each follows
     * only what the last one found. */
    for (int round = 0; ok && round < 8; round++) {
        size_t found = match_bottom_up(a, b, &exact);
        found += match_top_down(a, b, cand);
        if (!found && !match_bottom_up(a, b, &loose)) break;
    }
    free(cand);
    table_free(&exact);
    table_free(&loose);
    return ok;
}

/* ---- the edit script ---- */

/* one line of a unified diff (' ', '-', '+') or one row of a side-by-side
 * diff (' ', '|', '<', '>'); a is the node of a, b of b, either NULL */
typedef struct Edit { char kind; const UOp *a, *b; } Edit;

static bool has_a(char kind) { return kind != '+' && kind != '>'; }
static bool has_b(char kind) { return kind != '-' && kind != '<'; }

/* The rows in b's order (side by side: a changed pair is one '|' row), or
 * with split, the unified lines (a changed pair is '-' and '+', each run of
 * changes with its removals first).  Returns the number, or SIZE_MAX when out
 * of memory; *out is malloc'd. */
static size_t edit_script(const Graph *a, const Graph *b, bool split, Edit **out, DiffStats *st) {
    /* a's unmatched nodes by the b line they follow: bucket 0 is the start,
     * bucket j + 1 follows b's line j */
    size_t *start = calloc(b->count + 2, sizeof *start);
    uint32_t *removed = malloc((a->count ? a->count : 1) * sizeof *removed);
    Edit *ed = malloc((2 * (a->count + b->count) + 1) * sizeof *ed);
    if (!start || !removed || !ed) {
        free(start);
        free(removed);
        free(ed);
        return SIZE_MAX;
    }
    size_t anchor = 0;
    for (size_t i = 0; i < a->count; i++) {
        if (a->match[i] != NONE) anchor = (size_t)a->match[i] + 1;
        else start[anchor + 1]++;
    }
    for (size_t k = 1; k <= b->count + 1; k++) start[k] += start[k - 1];
    anchor = 0;
    for (size_t i = 0; i < a->count; i++) {
        if (a->match[i] != NONE) anchor = (size_t)a->match[i] + 1;
        else removed[start[anchor]++] = (uint32_t)i;
    }
    /* start[k] is now the end of bucket k and the start of bucket k + 1 */
    size_t n = 0, r = 0;
    for (size_t j = 0; j <= b->count; j++) {
        if (j > 0) {
            const UOp *y = b->n[j - 1];
            size_t i = b->match[j - 1];
            if (i == NONE) {
                ed[n++] = (Edit){split ? '+' : '>', NULL, y};
                st->added++;
            } else if (equal_through_match(a, i, b, j - 1)) {
                ed[n++] = (Edit){' ', a->n[i], y};
                st->kept++;
                if (a->n[i] != y) st->renamed++;
            } else {
                if (split) {
                    ed[n++] = (Edit){'-', a->n[i], NULL};
                    ed[n++] = (Edit){'+', NULL, y};
                } else {
                    ed[n++] = (Edit){'|', a->n[i], y};
                }
                st->added++;
                st->removed++;
            }
        }
        for (; r < start[j]; r++) {
            ed[n++] = (Edit){split ? '-' : '<', a->n[removed[r]], NULL};
            st->removed++;
        }
    }
    if (split) {
        /* within each run of changes, removals first (stable) */
        for (size_t k = 0; k < n;) {
            if (ed[k].kind == ' ') { k++; continue; }
            size_t end = k;
            while (end < n && ed[end].kind != ' ') end++;
            size_t nrem = 0;
            for (size_t q = k; q < end; q++) nrem += ed[q].kind == '-';
            if (nrem && nrem < end - k) {
                /* stable partition through the spare space after n */
                Edit *tmp = ed + n;
                size_t t = 0;
                for (size_t q = k; q < end; q++) if (ed[q].kind == '-') tmp[t++] = ed[q];
                for (size_t q = k; q < end; q++) if (ed[q].kind != '-') tmp[t++] = ed[q];
                memcpy(ed + k, tmp, t * sizeof *ed);
            }
            k = end;
        }
    }
    free(start);
    free(removed);
    *out = ed;
    return n;
}

/* ---- printing ---- */

static void put_range(StrBuf *sb, size_t start, size_t count) {
    /* GNU style: an empty range names the line before it; ",1" is left out */
    if (count == 0) sb_printf(sb, "%zu,0", start);
    else if (count == 1) sb_printf(sb, "%zu", start + 1);
    else sb_printf(sb, "%zu,%zu", start + 1, count);
}

/* The next hunk from *e on: [*start, *stop), changes with `context`
 * unchanged edits around, merged when they touch.  False when none is left. */
static bool next_hunk(const Edit *ed, size_t n, size_t context, size_t *e, size_t *start, size_t *stop) {
    size_t k = *e;
    while (k < n && ed[k].kind == ' ') k++;
    if (k == n) return false;
    *start = k >= context ? k - context : 0;
    size_t end = k; /* one past the last change of the hunk */
    for (;;) {
        while (end < n && ed[end].kind != ' ') end++;
        size_t q = end;
        while (q < n && ed[q].kind == ' ') q++;
        if (q < n && q - end <= 2 * context) end = q;
        else break;
    }
    *stop = end + context < n ? end + context : n;
    *e = *stop;
    return true;
}

static void put_hunk_header(StrBuf *sb, const Edit *ed, size_t start, size_t stop, size_t line_a, size_t line_b) {
    size_t count_a = 0, count_b = 0;
    for (size_t k = start; k < stop; k++) {
        count_a += has_a(ed[k].kind);
        count_b += has_b(ed[k].kind);
    }
    sb_puts(sb, "@@ -");
    put_range(sb, line_a, count_a);
    sb_puts(sb, " +");
    put_range(sb, line_b, count_b);
    sb_puts(sb, " @@");
}

/* display columns of UTF-8 text: the bytes that start a character */
static size_t columns(const char *s, size_t len) {
    size_t c = 0;
    for (size_t k = 0; k < len; k++) c += ((unsigned char)s[k] & 0xC0) != 0x80;
    return c;
}

/* s in at most width columns, an ellipsis ending it when it is cut; padded
 * to width with pad; col around the text when non-empty */
static void put_cell(StrBuf *sb, const char *s, size_t len, size_t width, bool pad, const char *col) {
    size_t cols = columns(s, len), shown = cols;
    if (*col && len) sb_puts(sb, col);
    if (cols <= width) {
        sb_putn(sb, s, len);
    } else {
        /* the bytes of the first width - 1 characters, then the ellipsis */
        size_t k = 0, c = 0;
        while (k < len) {
            if (((unsigned char)s[k] & 0xC0) != 0x80) {
                if (c == width - 1) break;
                c++;
            }
            k++;
        }
        sb_putn(sb, s, k);
        sb_puts(sb, "\xe2\x80\xa6"); /* U+2026 */
        shown = width;
    }
    if (*col && len) sb_puts(sb, RESET);
    if (pad)
        for (; shown < width; shown++) sb_putc(sb, ' ');
}

static void put_unified(StrBuf *sb, const Edit *ed, size_t n, size_t context, bool color, const ListingWidths *w,
                        const char *label_a, const char *label_b) {
    sb_printf(sb, "%s--- %s%s\n", color ? BOLD : "", label_a, color ? RESET : "");
    sb_printf(sb, "%s+++ %s%s\n", color ? BOLD : "", label_b, color ? RESET : "");
    size_t e = 0, start, stop, line_a = 0, line_b = 0, done = 0;
    while (next_hunk(ed, n, context, &e, &start, &stop)) {
        for (; done < start; done++) {
            line_a += has_a(ed[done].kind);
            line_b += has_b(ed[done].kind);
        }
        if (color) sb_puts(sb, CYAN);
        put_hunk_header(sb, ed, start, stop, line_a, line_b);
        sb_printf(sb, "%s\n", color ? RESET : "");
        for (size_t k = start; k < stop; k++) {
            const Edit *d = &ed[k];
            const char *col = !color ? "" : d->kind == '+' ? GREEN : d->kind == '-' ? RED : "";
            sb_printf(sb, "%s%c", col, d->kind);
            uop_listing_line_padded(sb, d->kind == '-' ? d->a : d->b, NULL, w);
            if (d->kind == ' ' && d->a != d->b)
                sb_printf(sb, "%s  # was %%%u%s", color ? DIM : "", d->a->id, color ? RESET : "");
            sb_printf(sb, "%s\n", *col ? RESET : "");
        }
    }
}

static void put_side(StrBuf *sb, const Edit *ed, size_t n, size_t context, bool color, const ListingWidths *w,
                     const char *label_a, const char *label_b, size_t width) {
    size_t left = (width - 3) / 2, right = width - 3 - left;
    put_cell(sb, label_a, strlen(label_a), left, true, color ? BOLD : "");
    sb_puts(sb, "   ");
    put_cell(sb, label_b, strlen(label_b), right, false, color ? BOLD : "");
    sb_putc(sb, '\n');
    StrBuf cell;
    sb_init(&cell);
    size_t e = 0, start, stop, line_a = 0, line_b = 0, done = 0;
    while (next_hunk(ed, n, context, &e, &start, &stop)) {
        for (; done < start; done++) {
            line_a += has_a(ed[done].kind);
            line_b += has_b(ed[done].kind);
        }
        sb_clear(&cell);
        put_hunk_header(&cell, ed, start, stop, line_a, line_b);
        put_cell(sb, sb_str(&cell), cell.len, width, false, color ? CYAN : "");
        sb_putc(sb, '\n');
        for (size_t k = start; k < stop; k++) {
            const Edit *d = &ed[k];
            sb_clear(&cell);
            if (d->a) uop_listing_line_padded(&cell, d->a, NULL, w);
            put_cell(sb, sb_str(&cell), cell.len, left, true, color && d->kind != ' ' ? RED : "");
            if (!d->b) { /* '<': nothing on the right */
                sb_printf(sb, " %c\n", d->kind);
                continue;
            }
            sb_printf(sb, " %c ", d->kind);
            sb_clear(&cell);
            uop_listing_line_padded(&cell, d->b, NULL, w);
            put_cell(sb, sb_str(&cell), cell.len, right, false, color && d->kind != ' ' ? GREEN : "");
            sb_putc(sb, '\n');
        }
    }
    if (cell.oom) sb->oom = true;
    sb_free(&cell);
}

DiffStats uop_diff_text(StrBuf *sb, const UOp *a, const UOp *b, const DiffOpts *opts) {
    DiffStats st = {0, 0, 0, 0};
    int ctx = opts ? opts->context : 0;
    size_t context = ctx == 0 ? 3 : ctx < 0 ? 0 : (size_t)ctx;
    bool color = opts && opts->color, side = opts && opts->side;
    size_t width = !opts || opts->width == 0 ? 100 : opts->width < 10 ? 10 : (size_t)opts->width;
    Graph ga, gb;
    Edit *ed = NULL;
    bool ok_a = graph_init(&ga, a), ok_b = graph_init(&gb, b);
    if (!ok_a || !ok_b || !match_graphs(&ga, &gb)) { sb->oom = true; goto out; }
    size_t n = edit_script(&ga, &gb, !side, &ed, &st);
    if (n == SIZE_MAX) { sb->oom = true; goto out; }
    if (!st.added && !st.removed) goto out;
    ListingWidths w = {0, 0, 0};
    uop_listing_widths(ga.n, ga.count, &w);
    uop_listing_widths(gb.n, gb.count, &w);
    const char *label_a = opts && opts->label_a ? opts->label_a : "a";
    const char *label_b = opts && opts->label_b ? opts->label_b : "b";
    if (side) put_side(sb, ed, n, context, color, &w, label_a, label_b, width);
    else put_unified(sb, ed, n, context, color, &w, label_a, label_b);
out:
    graph_free(&ga);
    graph_free(&gb);
    free(ed);
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
