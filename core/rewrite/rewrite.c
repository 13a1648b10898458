/* rewrite.c - graph_rewrite (tinygrad's unified_rewrite) and line_rewrite.
 *
 * graph_rewrite walks the graph with an explicit deque of (node, stage,
 * new node) entries:
 *   stage 0  first visit: with bottom_up, rewrite the node to a fixed point
 *            first; then queue stage 1 and the sources;
 *   stage 1  once every source has its replacement: rebuild the node if a
 *            source changed, else (top-down) offer it to the rules; either
 *            way a new node is visited and linked back in stage 2;
 *   stage 2  the node's replacement is its new node's replacement.
 * Entries whose inputs are not ready go to the front of the deque and are
 * retried later.  The memo (replace) and the bookkeeping live in per-node
 * records indexed by node id (and, for bottom_up, a second set for the fixed
 * point), in pages of REC_PAGE ids made when a node of the page is first
 * seen, so the records cost what the ids in use cost, not one per id ever
 * handed out.  The pages are kept between calls (a small per-thread pool,
 * since rule functions run rewrites of their own; rewrite_release_buffers
 * frees them): a record belongs to the running rewrite only when its
 * generation stamp is the rewrite's, so starting a rewrite costs nothing
 * however large the context is.
 *
 * Loops: each node made by a rule remembers the node it was made from and
 * the rule, so when a rewrite produces a node that is still being rewritten
 * further up its own chain, the cycle is reported with the rules in it.  A
 * chain longer than the per-chain limit, more rewrites than the total limit,
 * and entries that wait on each other forever are errors too.
 *
 * max_rewrites N (when not 0): at most N rewrites in the pass, and rewrite
 * chains of at most min(N, 100000) rewrites; the defaults are 10M and 100000.
 *
 * stop_after: once that many rewrites happened, the rules are no longer
 * consulted; the walk finishes by rebuilding users of rewritten nodes, so
 * the returned root has exactly those rewrites applied.
 *
 * progress (when set) is called where Ctrl-C is polled, every
 * REWRITE_PROGRESS_EVERY entries, with the counts so far.
 *
 * With a trace whose keep_rebuilds is set, every node rebuilt with new
 * sources is recorded as (old node, new node) too.
 *
 * line_rewrite records one trace pass whose roots are the last instruction
 * before and after. */
#include "rewrite.h"
#include "pattern_internal.h"
#include "../util/interrupt.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DEFAULT_CHAIN_LIMIT 100000
#define DEFAULT_TOTAL_LIMIT 10000000

enum { F_VISITED = 1, F_ON_STACK = 2 };

typedef struct Entry {
    const UOp *n, *new_n;
    int stage;
} Entry;

typedef struct Deque {
    Entry *items;
    size_t head, count, cap; /* cap is a power of two */
} Deque;

/* What the rewrite knows about one node id, in two records: the one every
 * rewrite touches (32 bytes, two to a cache line, none across lines) and
 * the bottom-up fixed point's, used only with bottom_up.  All zero means
 * "nothing yet"; each record has its own generation stamp. */
typedef struct NodeState {
    uint32_t gen;         /* the rewrite this record belongs to */
    uint32_t flags : 4;
    uint32_t depth : 28;  /* rewrites in the chain that made it (the limit is far below 2^28) */
    uint32_t from;        /* id + 1 of the node this one was made from, 0 if none */
    const UOp *replace;   /* the memo: what the node became */
    Rule *from_rule;      /* the rule that made it (NULL: rebuilt with new sources) */
} NodeState;
typedef struct BottomUpState {
    uint32_t gen;
    uint32_t mark;        /* bottom-up fixed point: mark == epoch while in the chain */
    bool bpm_cached;      /* bottom-up: bpm_cache holds the answer */
    const UOp *bpm_cache; /* bottom-up: what the rules made of the node itself */
} BottomUpState;

#define REC_PAGE_BITS 10
#define REC_PAGE (1u << REC_PAGE_BITS)

/* Buffers one rewrite uses, kept for the next one. */
typedef struct Scratch {
    NodeState **pages;          /* [id >> REC_PAGE_BITS]: REC_PAGE records, or NULL */
    BottomUpState **bu_pages;   /* the same, made only by bottom-up rewrites */
    size_t cap, bu_cap;         /* entries of pages and bu_pages */
    uint32_t gen;
    Deque dq;
    const UOp **chain;
    Rule **chain_rules;
    size_t cap_chain;
    struct Scratch *next;
} Scratch;

#define SCRATCH_POOL_MAX 8
static _Thread_local Scratch *scratch_pool;
static _Thread_local int scratch_pooled;

static Scratch *scratch_acquire(void) {
    Scratch *s = scratch_pool;
    if (s) {
        scratch_pool = s->next;
        scratch_pooled--;
    } else {
        s = calloc(1, sizeof *s);
        if (!s) return NULL;
    }
    s->next = NULL;
    if (++s->gen == 0) {
        /* the stamps wrapped around: forget every record */
        for (size_t p = 0; p < s->cap; p++)
            if (s->pages[p]) memset(s->pages[p], 0, REC_PAGE * sizeof **s->pages);
        for (size_t p = 0; p < s->bu_cap; p++)
            if (s->bu_pages[p]) memset(s->bu_pages[p], 0, REC_PAGE * sizeof **s->bu_pages);
        s->gen = 1;
    }
    s->dq.head = s->dq.count = 0;
    return s;
}

static void scratch_free(Scratch *s) {
    for (size_t p = 0; p < s->cap; p++) free(s->pages[p]);
    for (size_t p = 0; p < s->bu_cap; p++) free(s->bu_pages[p]);
    free(s->pages);
    free(s->bu_pages);
    free(s->dq.items);
    free(s->chain);
    free(s->chain_rules);
    free(s);
}

static void scratch_release(Scratch *s) {
    if (!s) return;
    if (scratch_pooled < SCRATCH_POOL_MAX) {
        s->next = scratch_pool;
        scratch_pool = s;
        scratch_pooled++;
        return;
    }
    scratch_free(s);
}

void rewrite_release_buffers(void) {
    while (scratch_pool) {
        Scratch *s = scratch_pool;
        scratch_pool = s->next;
        scratch_free(s);
    }
    scratch_pooled = 0;
}

/* The pool goes when the library is unloaded (the Lua module is dlclose'd
 * when its state closes) or the program exits. */
__attribute__((destructor)) static void scratch_pool_free(void) { rewrite_release_buffers(); }

typedef struct Engine {
    UCtx *c;
    const RuleSet *rs;
    void *user;
    Trace *trace;
    bool timing;
    RewriteRun run;
    bool error;
    Scratch *s;
    bool bottom_up;
    uint32_t epoch;
    /* limits and counters */
    size_t nrewrites, total_limit, chain_limit, stop_after;
    bool stopped;
    const char *pass_name;
    void (*progress)(const RewriteProgress *p, void *ud);
    void *progress_ud;
    uint64_t start_ns;
    size_t start_nodes;
    size_t visits;        /* nodes visited (first visits, stage 0) */
} Engine;

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void fail(Engine *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(Engine *e, const char *fmt, ...) {
    if (e->error) return;
    e->error = true;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    uctx_set_error(e->c, "%s", msg);
}

/* ---- per-node records ---- */

/* Room in the page tables for ids below need (the pages come on demand). */
static bool grow_nodes(Engine *e, size_t need) {
    Scratch *s = e->s;
    size_t pages = (need + REC_PAGE - 1) >> REC_PAGE_BITS;
    size_t cap = s->cap ? s->cap : 64;
    while (cap < pages) cap *= 2;
    if (e->bottom_up && cap > s->bu_cap) {
        BottomUpState **o = realloc(s->bu_pages, cap * sizeof *o);
        if (!o) return false;
        memset(o + s->bu_cap, 0, (cap - s->bu_cap) * sizeof *o);
        s->bu_pages = o;
        s->bu_cap = cap;
    }
    if (cap <= s->cap) return true;
    NodeState **p = realloc(s->pages, cap * sizeof *p);
    if (!p) return false;
    memset(p + s->cap, 0, (cap - s->cap) * sizeof *p);
    s->pages = p;
    s->cap = cap;
    return true;
}

static bool make_pages(Engine *e, uint32_t id) {
    if (!grow_nodes(e, (size_t)id + 1)) return false;
    Scratch *s = e->s;
    size_t p = id >> REC_PAGE_BITS;
    if (!s->pages[p] && !(s->pages[p] = calloc(REC_PAGE, sizeof **s->pages))) return false;
    if (e->bottom_up && !s->bu_pages[p] && !(s->bu_pages[p] = calloc(REC_PAGE, sizeof **s->bu_pages))) return false;
    return true;
}

static inline bool have_slot(Engine *e, const UOp *u) {
    size_t p = u->id >> REC_PAGE_BITS;
    Scratch *s = e->s;
    if (p < s->cap && s->pages[p] && (!e->bottom_up || (p < s->bu_cap && s->bu_pages[p]))) return true;
    if (make_pages(e, u->id)) return true;
    fail(e, "out of memory in graph_rewrite");
    return false;
}

/* The record of a node id that have_slot has made room for. */
static inline NodeState *ns(Engine *e, uint32_t id) {
    NodeState *r = &e->s->pages[id >> REC_PAGE_BITS][id & (REC_PAGE - 1)];
    if (r->gen != e->s->gen) *r = (NodeState){.gen = e->s->gen};
    return r;
}

/* The bottom-up record of a node id that have_slot has made room for. */
static inline BottomUpState *bu(Engine *e, uint32_t id) {
    BottomUpState *r = &e->s->bu_pages[id >> REC_PAGE_BITS][id & (REC_PAGE - 1)];
    if (r->gen != e->s->gen) *r = (BottomUpState){.gen = e->s->gen};
    return r;
}

/* whether have_slot has made room for id */
static inline bool has_record(const Engine *e, uint32_t id) {
    size_t p = id >> REC_PAGE_BITS;
    return p < e->s->cap && e->s->pages[p];
}

/* What node id was replaced by so far; NULL when not yet (or never seen). */
static inline const UOp *replaced(Engine *e, uint32_t id) {
    if (!has_record(e, id)) return NULL;
    const NodeState *r = &e->s->pages[id >> REC_PAGE_BITS][id & (REC_PAGE - 1)];
    return r->gen == e->s->gen ? r->replace : NULL;
}

/* ---- the deque ---- */

static bool dq_grow(Engine *e, Deque *d) {
    size_t cap = d->cap ? d->cap * 2 : 1024;
    Entry *items = malloc(cap * sizeof *items);
    if (!items) { fail(e, "out of memory in graph_rewrite"); return false; }
    for (size_t i = 0; i < d->count; i++) items[i] = d->items[(d->head + i) & (d->cap - 1)];
    free(d->items);
    d->items = items;
    d->head = 0;
    d->cap = cap;
    return true;
}

static inline bool dq_reserve(Engine *e, Deque *d) { return d->count < d->cap || dq_grow(e, d); }

static inline bool dq_push(Engine *e, Deque *d, const UOp *n, int stage, const UOp *new_n) {
    if (!dq_reserve(e, d)) return false;
    d->items[(d->head + d->count++) & (d->cap - 1)] = (Entry){n, new_n, stage};
    return true;
}

static bool dq_push_front(Engine *e, Deque *d, Entry en) {
    if (!dq_reserve(e, d)) return false;
    d->head = (d->head - 1) & (d->cap - 1);
    d->items[d->head] = en;
    d->count++;
    return true;
}

static Entry dq_pop(Deque *d) { return d->items[(d->head + --d->count) & (d->cap - 1)]; }

/* ---- loop reports ---- */

static void append_rule(char *buf, size_t len, const Rule *r) {
    size_t used = strlen(buf);
    if (used < len) snprintf(buf + used, len - used, "\"%s\" (%s:%d)", rule_name(r), rule_file(r), rule_line(r));
}

static void append_text(char *buf, size_t len, const char *s) {
    size_t used = strlen(buf);
    if (used < len) snprintf(buf + used, len - used, "%s", s);
}

/* rules[0..n) then the first again, as "a" -> "b" -> "a" ... */
static void report_cycle(Engine *e, const UOp *at, Rule *const *rules, size_t n) {
    char list[768] = "";
    size_t shown = n > 8 ? 8 : n;
    for (size_t i = 0; i < shown; i++) {
        if (i) append_text(list, sizeof list, " -> ");
        append_rule(list, sizeof list, rules[i]);
    }
    if (n > shown) append_text(list, sizeof list, " -> ... ");
    if (n) {
        append_text(list, sizeof list, " -> ");
        append_rule(list, sizeof list, rules[0]);
        append_text(list, sizeof list, " ...");
    }
    fail(e, "rewrite loop at node %%%u (%s): rules %s", at->id, op_name(uop_op(at)), list);
}

/* x was rewritten into y, which is still being rewritten: if y made x
 * (follow the links back from x), that chain is a cycle. */
static bool check_cycle(Engine *e, const UOp *x, const UOp *y, Rule *last) {
    size_t steps = 0;
    uint32_t cur = x->id;
    while (cur != y->id) {
        if (!ns(e, cur)->from || ++steps > e->chain_limit) return false;
        cur = ns(e, cur)->from - 1;
    }
    /* collect the rules from y to x, in order */
    size_t n = 0;
    for (cur = x->id; cur != y->id; cur = ns(e, cur)->from - 1)
        if (ns(e, cur)->from_rule) n++;
    Rule **rules = malloc((n + 1) * sizeof *rules);
    if (!rules) { fail(e, "rewrite loop at node %%%u (%s)", y->id, op_name(uop_op(y))); return true; }
    size_t k = n;
    for (cur = x->id; cur != y->id; cur = ns(e, cur)->from - 1)
        if (ns(e, cur)->from_rule) rules[--k] = ns(e, cur)->from_rule;
    rules[n] = last;
    report_cycle(e, y, rules, n + 1);
    free(rules);
    return true;
}

/* the last few rules of the chain that made x, for "chain too long" */
static void report_long_chain(Engine *e, const UOp *x, Rule *last) {
    char list[768] = "";
    Rule *rules[6];
    size_t n = 0;
    rules[n++] = last;
    size_t steps = 0;
    for (uint32_t cur = x->id; ns(e, cur)->from && n < 6 && steps++ < e->chain_limit; cur = ns(e, cur)->from - 1)
        if (ns(e, cur)->from_rule) rules[n++] = ns(e, cur)->from_rule;
    for (size_t i = n; i-- > 0;) {
        append_rule(list, sizeof list, rules[i]);
        if (i) append_text(list, sizeof list, " -> ");
    }
    fail(e, "rewrite loop at node %%%u (%s): a chain of more than %zu rewrites, ending with rules %s", x->id,
         op_name(uop_op(x)), e->chain_limit, list);
}

/* ---- offering a node to the rules ---- */

/* 1: rewritten into *out by *by; 0: nothing applies; -1: error */
static int try_rules(Engine *e, const UOp *u, const UOp **out, Rule **by) {
    if (e->stopped) return 0;
    int n;
    Rule *const *rules = ruleset_rules_for_op(e->rs, uop_op(u), &n);
    uint64_t could = n ? ruleset_shape_mask(e->rs, u) : 0;
    for (int i = 0; i < n; i++) {
        Rule *r = rules[i];
        if (i < 64 && !((could >> i) & 1)) {
            /* rejected by u's shape alone: still counted as offered */
            r->stats.attempts++;
            continue;
        }
        uint64_t t0 = e->timing ? now_ns() : 0;
        const UOp *res = NULL;
        int rc = rule_apply(r, e->c, u, e->user, &e->run, &res);
        uint64_t dt = e->timing ? now_ns() - t0 : 0;
        r->stats.ns += dt;
        if (rc < 0) {
            e->error = true; /* the message is in the context already */
            /* out of memory here leaves the trace without it, the message stands */
            if (e->trace) (void)trace_set_error_rule(e->trace, rule_name(r), rule_file(r), rule_line(r));
            return -1;
        }
        if (rc == 0) continue;
        if (!have_slot(e, res)) return -1;
        if (++e->nrewrites > e->total_limit) {
            fail(e, "more than %zu rewrites in pass \"%s\" (last rule \"%s\" (%s:%d)); raise max_rewrites if the "
                    "graph really needs more",
                 e->total_limit, e->pass_name, rule_name(r), rule_file(r), rule_line(r));
            return -1;
        }
        if (e->trace && !trace_add_rewrite(e->trace, rule_name(r), rule_file(r), rule_line(r), u, res, dt)) {
            fail(e, "out of memory recording the trace");
            return -1;
        }
        if (e->stop_after && e->nrewrites >= e->stop_after) e->stopped = true;
        *out = res;
        *by = r;
        return 1;
    }
    return 0;
}

/* remembers that y was made from x (by rule r, or rebuilt when r is NULL) */
static bool link_made_from(Engine *e, const UOp *x, const UOp *y, Rule *r) {
    if (!have_slot(e, y)) return false;
    NodeState *ys = ns(e, y->id);
    if (ys->from || y->id == x->id) return true;
    ys->from = x->id + 1;
    ys->from_rule = r;
    ys->depth = ns(e, x->id)->depth + (r ? 1 : 0);
    if (ys->depth > e->chain_limit) {
        report_long_chain(e, x, r);
        return false;
    }
    return true;
}

/* bottom-up: rewrite n until nothing applies; the result in *out */
static bool fixed_point(Engine *e, const UOp *n, const UOp **out) {
    Scratch *s = e->s;
    e->epoch++;
    size_t nchain = 0;
    const UOp *cur = n;
    for (;;) {
        if (!have_slot(e, cur)) return false;
        bu(e, cur->id)->mark = e->epoch;
        const UOp *next = NULL;
        Rule *by = NULL;
        if (bu(e, cur->id)->bpm_cached) {
            next = bu(e, cur->id)->bpm_cache;
        } else {
            int rc = try_rules(e, cur, &next, &by);
            if (rc < 0) return false;
            if (!e->stopped || rc == 1) {
                BottomUpState *cs = bu(e, cur->id);
                cs->bpm_cached = true;
                cs->bpm_cache = rc == 1 ? next : NULL;
                if (rc == 1 && !link_made_from(e, cur, next, by)) return false;
            }
            if (rc == 0) next = NULL;
        }
        if (!next) break;
        if (nchain + 1 > s->cap_chain) {
            size_t cap = s->cap_chain ? s->cap_chain * 2 : 64;
            const UOp **ch = realloc(s->chain, cap * sizeof *ch);
            if (ch) s->chain = ch;
            Rule **cr = realloc(s->chain_rules, cap * sizeof *cr);
            if (cr) s->chain_rules = cr;
            if (!ch || !cr) { fail(e, "out of memory in graph_rewrite"); return false; }
            s->cap_chain = cap;
        }
        if (!have_slot(e, next)) return false;
        if (!by && ns(e, next->id)->from - 1 == cur->id) by = ns(e, next->id)->from_rule;
        s->chain[nchain] = cur;
        s->chain_rules[nchain++] = by;
        if (bu(e, next->id)->mark == e->epoch) {
            size_t start = 0;
            while (start < nchain && s->chain[start] != next) start++;
            report_cycle(e, next, s->chain_rules + start, nchain - start);
            return false;
        }
        if (nchain > e->chain_limit) {
            report_long_chain(e, cur, by);
            return false;
        }
        cur = next;
    }
    *out = cur;
    return true;
}

static void report_stuck(Engine *e, const Entry *en) {
    const UOp *made = en->new_n;
    Rule *r = made && has_record(e, made->id) ? ns(e, made->id)->from_rule : NULL;
    if (r)
        fail(e, "rewrite loop at node %%%u (%s): rule \"%s\" (%s:%d) rewrote it into a graph that contains it",
             en->n->id, op_name(uop_op(en->n)), rule_name(r), rule_file(r), rule_line(r));
    else
        fail(e, "rewrite loop at node %%%u (%s): its rewrite depends on itself", en->n->id, op_name(uop_op(en->n)));
}

static void report_progress(Engine *e) {
    RewriteProgress p = {.pass = e->pass_name, .visits = e->visits, .rewrites = e->nrewrites,
                         .nodes_made = uctx_node_count(e->c) - e->start_nodes,
                         .elapsed_s = (double)(now_ns() - e->start_ns) / 1e9};
    e->progress(&p, e->progress_ud);
}

static const UOp *unified_rewrite(Engine *e, const UOp *root, bool bottom_up) {
    Deque dq = e->s->dq;
    const UOp *result = NULL;
    size_t waiting = 0; /* entries sent to the front since the last progress */
    if (!have_slot(e, root) || !dq_push(e, &dq, root, 0, root)) goto out;
    ns(e, root->id)->flags |= F_ON_STACK;
    size_t polls = 0;
    while (dq.count && !e->error) {
        if ((++polls & (REWRITE_PROGRESS_EVERY - 1)) == 0) {
            if (uopdb_interrupted()) {
                fail(e, "graph_rewrite: interrupted");
                break;
            }
            if (e->progress) report_progress(e);
        }
        Entry en = dq_pop(&dq);
        const UOp *n = en.n;
        /* the entry popped next is known: start fetching its node while
         * this one is worked on */
        if (dq.count) __builtin_prefetch(dq.items[(dq.head + dq.count - 1) & (dq.cap - 1)].n);
        if (replaced(e, n->id)) continue;
        if (en.stage == 0) {
            e->visits++;
            waiting = 0;
            ns(e, n->id)->flags |= F_VISITED;
            const UOp *new_n = n;
            if (bottom_up && !fixed_point(e, n, &new_n)) break;
            if (!dq_push(e, &dq, n, 1, new_n)) break;
            for (int i = new_n->nsrc; i-- > 0;) __builtin_prefetch(new_n->src[i]);
            for (int i = new_n->nsrc; i-- > 0;) {
                const UOp *x = new_n->src[i];
                if (!have_slot(e, x)) break;
                NodeState *xs = ns(e, x->id);
                if (xs->flags & F_ON_STACK) continue;
                xs->flags |= F_ON_STACK;
                if (!dq_push(e, &dq, x, 0, x)) break;
            }
        } else if (en.stage == 1) {
            const UOp *new_n = en.new_n;
            const UOp *small[8];
            const UOp **tmp = new_n->nsrc <= 8 ? small : malloc(new_n->nsrc * sizeof *tmp);
            if (!tmp) { fail(e, "out of memory in graph_rewrite"); break; }
            bool ready = true, changed = false;
            for (int i = 0; i < new_n->nsrc; i++) {
                const UOp *x = new_n->src[i];
                const UOp *rx = replaced(e, x->id);
                if (!rx) { ready = false; break; }
                tmp[i] = rx;
                changed |= rx != x;
            }
            if (!ready) {
                if (tmp != small) free(tmp);
                if (++waiting > dq.count + 1) { report_stuck(e, &en); break; }
                if (!dq_push_front(e, &dq, en)) break;
                continue;
            }
            waiting = 0;
            const UOp *next = NULL;
            Rule *by = NULL;
            if (changed) {
                next = uop_with_src(e->c, new_n, tmp, new_n->nsrc);
                if (!next) fail(e, "graph_rewrite: rebuilding node %%%u: %s", new_n->id, uctx_error(e->c));
                else if (e->trace && e->trace->keep_rebuilds && !trace_add_rebuild(e->trace, new_n, next))
                    fail(e, "out of memory recording the trace");
            } else if (!bottom_up) {
                int rc = try_rules(e, new_n, &next, &by);
                if (rc < 0) next = NULL;
            }
            if (tmp != small) free(tmp);
            if (e->error) break;
            if (!next) {
                ns(e, n->id)->replace = new_n;
                continue;
            }
            if (!have_slot(e, next)) break;
            /* a rule produced a node that is still being rewritten: a cycle? */
            if (by && (ns(e, next->id)->flags & F_VISITED) && !replaced(e, next->id) && check_cycle(e, new_n, next, by))
                break;
            if (!link_made_from(e, new_n, next, by)) break;
            if (!dq_push(e, &dq, n, 2, next) || !dq_push(e, &dq, next, 0, next)) break;
            ns(e, next->id)->flags |= F_ON_STACK;
        } else {
            const UOp *r = replaced(e, en.new_n->id);
            if (!r) {
                if (++waiting > dq.count + 1) { report_stuck(e, &en); break; }
                if (!dq_push_front(e, &dq, en)) break;
                continue;
            }
            waiting = 0;
            ns(e, n->id)->replace = r;
        }
    }
    if (!e->error) {
        result = replaced(e, root->id);
        if (!result) fail(e, "graph_rewrite: the root was left without a result");
    }
out:
    e->s->dq = dq;
    return e->error ? NULL : result;
}

static void engine_init(Engine *e, UCtx *c, const RuleSet *rs, const RewriteOpts *o) {
    memset(e, 0, sizeof *e);
    e->c = c;
    e->rs = rs;
    e->run.ctx = c;
    e->user = o ? o->user : NULL;
    e->trace = o ? o->trace : NULL;
    e->timing = o && o->timing;
    e->stop_after = o ? o->stop_after : 0;
    size_t max = o ? o->max_rewrites : 0;
    e->total_limit = max ? max : DEFAULT_TOTAL_LIMIT;
    e->chain_limit = max && max < DEFAULT_CHAIN_LIMIT ? max : DEFAULT_CHAIN_LIMIT;
    e->pass_name = o && o->name ? o->name : ruleset_name(rs);
    e->bottom_up = o && o->bottom_up;
    e->progress = o ? o->progress : NULL;
    e->progress_ud = o ? o->progress_ud : NULL;
    e->start_ns = now_ns();
    e->start_nodes = uctx_node_count(c);
    e->s = scratch_acquire();
}

static void engine_free(Engine *e) {
    scratch_release(e->s);
    e->s = NULL;
}

const UOp *graph_rewrite(UCtx *c, const UOp *root, const RuleSet *rs, const RewriteOpts *opts) {
    if (!c) return NULL;
    if (!root || !rs) {
        uctx_set_error(c, "graph_rewrite: %s", !root ? "no root node" : "no rule set");
        return NULL;
    }
    Engine e;
    engine_init(&e, c, rs, opts);
    uint64_t t0 = now_ns();
    if (e.trace && !trace_begin_pass(e.trace, e.pass_name, ruleset_name(rs), root)) {
        uctx_set_error(c, "out of memory recording the trace");
        engine_free(&e);
        return NULL;
    }
    const UOp *res = NULL;
    if (e.s && grow_nodes(&e, (size_t)root->id + 1)) res = unified_rewrite(&e, root, opts && opts->bottom_up);
    else uctx_set_error(c, "out of memory in graph_rewrite");
    if (e.trace) trace_end_pass(e.trace, res ? res : root, now_ns() - t0);
    engine_free(&e);
    return res;
}

bool line_rewrite(UCtx *c, const UOp *const *lst, size_t n, const RuleSet *rs, const RewriteOpts *opts,
                  const UOp ***out, size_t *nout) {
    if (!c || !out || !nout) return false;
    *out = NULL;
    *nout = 0;
    if (!rs || (n && !lst)) {
        uctx_set_error(c, "line_rewrite: %s", !rs ? "no rule set" : "no instruction list");
        return false;
    }
    Engine e;
    engine_init(&e, c, rs, opts);
    uint64_t t0 = now_ns();
    if (e.trace && !trace_begin_pass(e.trace, e.pass_name, ruleset_name(rs), n ? lst[n - 1] : NULL)) {
        uctx_set_error(c, "out of memory recording the trace");
        engine_free(&e);
        return false;
    }
    const UOp **res = NULL;
    size_t nres = 0, cap = 0;
    const UOp *small[8];
    if (!e.s || !grow_nodes(&e, uctx_node_count(c) + 1)) fail(&e, "out of memory in line_rewrite");
    for (size_t i = 0; i < n && !e.error; i++) {
        const UOp *u = lst[i];
        if (!u) { fail(&e, "line_rewrite: instruction %zu is missing", i); break; }
        const UOp **tmp = u->nsrc <= 8 ? small : malloc(u->nsrc * sizeof *tmp);
        if (!tmp) { fail(&e, "out of memory in line_rewrite"); break; }
        bool changed = false;
        for (int k = 0; k < u->nsrc && !e.error; k++) {
            const UOp *x = u->src[k];
            const UOp *rx = replaced(&e, x->id);
            if (!rx)
                fail(&e, "line_rewrite: instruction %zu (%%%u %s) uses %%%u (%s), which is not earlier in the list", i,
                     u->id, op_name(uop_op(u)), x->id, op_name(uop_op(x)));
            tmp[k] = rx;
            changed |= rx != x;
        }
        const UOp *nu = u;
        if (!e.error && changed && !(nu = uop_with_src(c, u, tmp, u->nsrc)))
            fail(&e, "line_rewrite: rebuilding instruction %zu: %s", i, uctx_error(c));
        else if (!e.error && changed && e.trace && e.trace->keep_rebuilds && !trace_add_rebuild(e.trace, u, nu))
            fail(&e, "out of memory recording the trace");
        if (tmp != small) free(tmp);
        if (e.error) break;
        const UOp *rw = NULL;
        Rule *by = NULL;
        if (try_rules(&e, nu, &rw, &by) < 0) break;
        const UOp *const *emit = &nu;
        size_t nemit = 1;
        const UOp *stands_for = nu;
        if (rw && uop_op(rw) == OP_LINEAR) {
            int64_t k = rw->arg && rw->arg->kind == ARG_INT ? rw->arg->v.i : -1;
            if (k < 0 || k >= rw->nsrc) {
                fail(&e, "line_rewrite: rule \"%s\" (%s:%d) returned a LINEAR whose arg is not the index of one of its "
                         "%d sources",
                     rule_name(by), rule_file(by), rule_line(by), rw->nsrc);
                break;
            }
            emit = rw->src;
            nemit = rw->nsrc;
            stands_for = rw->src[k];
        } else if (rw) {
            emit = &rw;
            stands_for = rw;
        }
        if (!have_slot(&e, u)) break;
        ns(&e, u->id)->replace = stands_for;
        if (nres + nemit > cap) {
            size_t ncap = cap ? cap * 2 : 64;
            while (ncap < nres + nemit) ncap *= 2;
            const UOp **p = realloc(res, ncap * sizeof *p);
            if (!p) { fail(&e, "out of memory in line_rewrite"); break; }
            res = p;
            cap = ncap;
        }
        for (size_t k = 0; k < nemit; k++) res[nres++] = emit[k];
    }
    if (e.trace) trace_end_pass(e.trace, nres ? res[nres - 1] : NULL, now_ns() - t0);
    engine_free(&e);
    if (e.error) {
        free(res);
        return false;
    }
    *out = res;
    *nout = nres;
    return true;
}
