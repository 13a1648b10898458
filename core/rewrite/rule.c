/* rule.c - rules (a pattern plus a template or a rewrite function, with a
 * name and the place it is written), applying one to a node or explaining
 * why it does or does not rewrite it, and rule sets (ordered lists of
 * rules, indexed by the op a rule's root can match).
 *
 * Ownership: rule_new returns a rule holding one reference; ruleset_add takes
 * its own.  ud_free is called when the last reference goes; when rule_new
 * fails it is not called (the caller still owns ud).  A rewrite function or
 * template that returns the matched node itself counts as "no rewrite". */
#include "pattern_internal.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *dup_str(const char *s) {
    size_t n = strlen(s);
    char *d = malloc(n + 1);
    if (d) memcpy(d, s, n + 1);
    return d;
}

static void free_rule(Rule *r) {
    if (!r) return;
    if (r->ud_free) r->ud_free(r->ud);
    pattern_free(r->pat);
    template_free(r->tmpl);
    free(r->name);
    free(r->file);
    free(r);
}

Rule *rule_new(const RuleSpec *spec, char *err, size_t errlen) {
    if (err && errlen) err[0] = 0;
    if (!spec) {
        if (err && errlen) snprintf(err, errlen, "no rule given");
        return NULL;
    }
    const char *name = spec->name ? spec->name : "unnamed";
    if (!spec->pattern) {
        if (err && errlen) snprintf(err, errlen, "rule \"%s\": no pattern", name);
        return NULL;
    }
    if (!spec->template_text == !spec->fn) {
        if (err && errlen)
            snprintf(err, errlen, "rule \"%s\": needs either a template or a rewrite function (%s)", name,
                     spec->fn ? "it has both" : "it has neither");
        return NULL;
    }
    Rule *r = calloc(1, sizeof *r);
    if (!r) goto oom;
    r->refs = 1;
    r->name = dup_str(name);
    r->file = dup_str(spec->file ? spec->file : "?");
    r->line = spec->line;
    if (!r->name || !r->file) goto oom;
    char msg[512];
    r->pat = pattern_compile(spec->pattern, msg, sizeof msg);
    if (!r->pat) {
        if (err && errlen) snprintf(err, errlen, "rule \"%s\": pattern %s", name, msg);
        free_rule(r);
        return NULL;
    }
    if (spec->template_text) {
        r->tmpl = template_compile(spec->template_text, r->pat, msg, sizeof msg);
        if (!r->tmpl) {
            if (err && errlen) snprintf(err, errlen, "rule \"%s\": %s", name, msg);
            free_rule(r);
            return NULL;
        }
    }
    r->fn = spec->fn;
    r->when = spec->when;
    r->ud = spec->ud;
    r->ud_free = spec->ud_free;
    return r;
oom:
    free_rule(r);
    if (err && errlen) snprintf(err, errlen, "rule \"%s\": out of memory", name);
    return NULL;
}

void rule_ref(Rule *r) {
    if (r) r->refs++;
}

void rule_unref(Rule *r) {
    if (r && --r->refs == 0) free_rule(r);
}

const char *rule_name(const Rule *r) { return r ? r->name : ""; }
const char *rule_file(const Rule *r) { return r ? r->file : ""; }
int rule_line(const Rule *r) { return r ? r->line : 0; }
int rule_capture_slot(const Rule *r, const char *name) { return r ? pattern_capture_slot(r->pat, name) : -1; }
int rule_capture_count(const Rule *r) { return r ? r->pat->ncap : 0; }
const char *rule_capture_name(const Rule *r, int slot) {
    return r && slot >= 0 && slot < r->pat->ncap ? r->pat->names[slot] : NULL;
}
RuleStats *rule_stats(Rule *r) { return r ? &r->stats : NULL; }

/* Rule functions name captures with string literals, so the pointer of the
 * name last looked up for a slot is remembered: a repeated lookup finds its
 * slot by pointer and confirms it with one string comparison, instead of
 * comparing against every capture name. */
const UOp *match_get(const Match *m, const char *name) {
    if (!m || !m->rule || !name) return NULL;
    Rule *r = (Rule *)m->rule; /* the name cache is not part of the rule's value */
    int n = r->pat->ncap;
    for (int i = 0; i < n; i++)
        if (r->seen_name[i] == name && strcmp(r->pat->names[i], name) == 0) return m->cap[i];
    int slot = pattern_capture_slot(r->pat, name);
    if (slot < 0) return NULL;
    r->seen_name[slot] = name;
    return m->cap[slot];
}

void match_decline(const Match *m, const char *fmt, ...) {
    if (!m || !m->decline || m->decline_len < 2) return;
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (!msg[0] || strstr(m->decline, msg)) return;
    size_t used = strlen(m->decline);
    if (used + 1 < m->decline_len)
        snprintf(m->decline + used, m->decline_len - used, "%s%s", used ? "; " : "", msg);
}

void rewrite_fail(const Match *m, const char *fmt, ...) {
    if (!m) return;
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (m->ctx) {
        if (m->rule)
            uctx_set_error(m->ctx, "rule \"%s\" (%s:%d): %s", m->rule->name, m->rule->file, m->rule->line, msg);
        else
            uctx_set_error(m->ctx, "%s", msg);
    }
    if (m->run) m->run->failed = true;
}

/* ---- applying one rule ---- */

typedef struct Attempt {
    Rule *r;
    Match m;
    const UOp *result;
    int matches;       /* complete matches offered to the rule */
} Attempt;

/* called by the matcher for each way the pattern matches */
static bool try_match(const UOp **caps, uint32_t bound, void *ud) {
    Attempt *a = ud;
    Rule *r = a->r;
    a->matches++;
    for (int i = 0; i < r->pat->ncap; i++)
        if (!((bound >> i) & 1)) caps[i] = NULL;
    if (r->when && !r->when(&a->m, r->ud)) return false;
    const UOp *res;
    if (r->fn) {
        res = r->fn(&a->m, r->ud);
    } else {
        res = template_instantiate(r->tmpl, a->m.ctx, a->m.root, a->m.cap);
        if (!res) {
            char why[600];
            snprintf(why, sizeof why, "%s", uctx_error(a->m.ctx));
            rewrite_fail(&a->m, "template: %s", why);
        }
    }
    if (a->m.run->failed) return true;
    if (!res || res == a->m.root) return false;
    a->result = res;
    return true;
}

/* offers u to r: every match in turn until the rule gives a result (what
 * the rule says of a decline goes to decline, when given) */
static void attempt(Attempt *a, Rule *r, UCtx *c, const UOp *u, void *user, RewriteRun *run, char *decline,
                    size_t decline_len) {
    /* not zeroed as a whole: the capture slots are written by the matcher
     * before anything reads them */
    a->r = r;
    a->result = NULL;
    a->matches = 0;
    a->m.rule = r;
    a->m.root = u;
    a->m.ctx = c;
    a->m.user = user;
    a->m.run = run;
    a->m.decline = decline;
    a->m.decline_len = decline_len;
    pat_match_with(r->pat, u, a->m.cap, try_match, a);
}

int rule_apply(Rule *r, UCtx *c, const UOp *u, void *user, RewriteRun *run, const UOp **out) {
    RewriteRun local = {.ctx = c, .failed = false};
    if (!run) run = &local;
    Attempt a;
    r->stats.attempts++;
    attempt(&a, r, c, u, user, run, NULL, 0);
    if (a.matches) r->stats.matches++;
    if (run->failed) return -1;
    if (!a.result) return 0;
    r->stats.rewrites++;
    if (out) *out = a.result;
    return 1;
}

void rule_explain(Rule *r, UCtx *c, const UOp *u, void *user, RuleExplain *out) {
    memset(out, 0, sizeof *out);
    if (!pattern_explain(r->pat, u, out->cap, &out->miss)) {
        out->verdict = RULE_NO_MATCH;
        return;
    }
    RewriteRun run = {.ctx = c, .failed = false};
    Attempt a;
    uctx_clear_error(c);
    attempt(&a, r, c, u, user, &run, out->declined, sizeof out->declined);
    out->matches = a.matches;
    if (run.failed) {
        out->verdict = RULE_ERROR;
        snprintf(out->error, sizeof out->error, "%s", uctx_error(c));
    } else if (a.result) {
        out->verdict = RULE_REWRITES;
        out->result = a.result;
        memcpy(out->cap, a.m.cap, sizeof out->cap);
        for (int i = r->pat->ncap; i < PAT_MAX_CAPTURES; i++) out->cap[i] = NULL;
    } else {
        out->verdict = RULE_DECLINED;
    }
}

const char *rule_verdict_name(RuleVerdict v) {
    switch (v) {
    case RULE_NO_MATCH: return "no match";
    case RULE_DECLINED: return "declined";
    case RULE_REWRITES: return "rewrites";
    case RULE_ERROR: return "error";
    }
    return "?";
}

const char *rule_pattern_text(const Rule *r) { return r && r->pat->text ? r->pat->text : ""; }

bool rule_root_can_be(const Rule *r, Op op) { return r && (r->pat->root_any_op || opset_has(&r->pat->root_ops, op)); }

/* ---- rule sets ---- */

typedef struct RuleList {
    Rule **items;
    int n, cap;
} RuleList;

struct RuleSet {
    char *name;
    uint64_t serial;   /* never reused: names the set in the shape caches */
    RuleList all;
    RuleList by_op[OP_COUNT];
};

static _Atomic uint64_t next_serial = 1;

static bool list_push(RuleList *l, Rule *r) {
    if (l->n == l->cap) {
        int cap = l->cap ? l->cap * 2 : 4;
        Rule **items = realloc(l->items, (size_t)cap * sizeof *items);
        if (!items) return false;
        l->items = items;
        l->cap = cap;
    }
    l->items[l->n++] = r;
    return true;
}

RuleSet *ruleset_new(const char *name) {
    RuleSet *rs = calloc(1, sizeof *rs);
    if (!rs) return NULL;
    rs->name = dup_str(name ? name : "rules");
    if (!rs->name) { free(rs); return NULL; }
    rs->serial = next_serial++;
    return rs;
}

/* the next op at or after `from` that r's root can be, OP_COUNT if none */
static int next_root_op(const Rule *r, int from) {
    if (r->pat->root_any_op) return from;
    const OpSet *s = &r->pat->root_ops;
    for (int w = from / 64; w < (OP_COUNT + 63) / 64; w++) {
        uint64_t bits = s->w[w];
        if (w == from / 64) bits &= ~0ull << (from % 64);
        if (bits) {
            int op = w * 64 + __builtin_ctzll(bits);
            return op < OP_COUNT ? op : OP_COUNT;
        }
    }
    return OP_COUNT;
}

bool ruleset_add(RuleSet *rs, Rule *r) {
    if (!rs || !r) return false;
    if (!list_push(&rs->all, r)) return false;
    for (int op = next_root_op(r, 0); op < OP_COUNT; op = next_root_op(r, op + 1)) {
        if (!list_push(&rs->by_op[op], r)) {
            /* undo: drop r from every list it reached */
            for (int k = 0; k < op; k++)
                if (rs->by_op[k].n && rs->by_op[k].items[rs->by_op[k].n - 1] == r) rs->by_op[k].n--;
            rs->all.n--;
            return false;
        }
    }
    rule_ref(r);
    rs->serial = next_serial++; /* the cached shapes were of the set without r */
    return true;
}

/* dst = a followed by b, allocated once */
static bool list_concat(RuleList *dst, const RuleList *a, const RuleList *b) {
    int n = a->n + b->n;
    if (n == 0) return true;
    dst->items = malloc((size_t)n * sizeof *dst->items);
    if (!dst->items) return false;
    if (a->n) memcpy(dst->items, a->items, (size_t)a->n * sizeof *a->items);
    if (b->n) memcpy(dst->items + a->n, b->items, (size_t)b->n * sizeof *b->items);
    dst->n = dst->cap = n;
    return true;
}

/* Each per-op list of the result is a's list followed by b's (both are in
 * set order), so the lists are joined rather than rebuilt rule by rule. */
RuleSet *ruleset_concat(const char *name, const RuleSet *a, const RuleSet *b) {
    RuleSet *rs = ruleset_new(name);
    if (!rs) return NULL;
    static const RuleList none;
    const RuleList *aall = a ? &a->all : &none, *ball = b ? &b->all : &none;
    bool ok = list_concat(&rs->all, aall, ball);
    for (int op = 0; ok && op < OP_COUNT; op++)
        ok = list_concat(&rs->by_op[op], a ? &a->by_op[op] : &none, b ? &b->by_op[op] : &none);
    if (!ok) {
        /* no references taken yet: drop the lists only */
        rs->all.n = 0;
        ruleset_free(rs);
        return NULL;
    }
    for (int i = 0; i < rs->all.n; i++) rule_ref(rs->all.items[i]);
    return rs;
}

void ruleset_free(RuleSet *rs) {
    if (!rs) return;
    for (int i = 0; i < rs->all.n; i++) rule_unref(rs->all.items[i]);
    free(rs->all.items);
    for (int op = 0; op < OP_COUNT; op++) free(rs->by_op[op].items);
    free(rs->name);
    free(rs);
}

const char *ruleset_name(const RuleSet *rs) { return rs ? rs->name : ""; }
int ruleset_count(const RuleSet *rs) { return rs ? rs->all.n : 0; }
Rule *ruleset_rule(const RuleSet *rs, int i) { return rs && i >= 0 && i < rs->all.n ? rs->all.items[i] : NULL; }

Rule *const *ruleset_rules_for_op(const RuleSet *rs, Op op, int *n) {
    *n = rs->by_op[op].n;
    return rs->by_op[op].items;
}

/* The shape cache: direct-mapped, per thread (rule sets are shared between
 * threads), keyed by the set's serial and the node's shape, so an entry of
 * a freed set, or of a set before ruleset_add changed it, is never found
 * again. */
#define SHAPE_CACHE 1024
typedef struct ShapeEntry {
    uint64_t serial, shape, mask;
} ShapeEntry;
static _Thread_local ShapeEntry shape_cache[SHAPE_CACHE];

uint64_t ruleset_shape_mask(const RuleSet *rs, const UOp *u) {
    const RuleList *l = &rs->by_op[uop_op(u)];
    if (u->nsrc > 3 || l->n > 64) return ~0ull;
    /* op, source count and up to three source ops, a byte each */
    uint64_t shape = (uint64_t)uop_op(u) | (uint64_t)u->nsrc << 8;
    for (int i = 0; i < u->nsrc; i++) shape |= (uint64_t)uop_op(u->src[i]) << (16 + 8 * i);
    uint64_t h = (shape ^ rs->serial * 0x9E3779B97F4A7C15ull) * 0xff51afd7ed558ccdull;
    ShapeEntry *e = &shape_cache[h >> 54];
    if (e->serial == rs->serial && e->shape == shape) return e->mask;
    uint64_t mask = 0;
    for (int i = 0; i < l->n; i++)
        if (pat_could_match(l->items[i]->pat, u)) mask |= 1ull << i;
    *e = (ShapeEntry){rs->serial, shape, mask};
    return mask;
}

RuleSet *ruleset_from_specs(const char *name, const RuleSpec *specs, int n, char *err, size_t errlen) {
    RuleSet *rs = ruleset_new(name);
    if (!rs) {
        if (err && errlen) snprintf(err, errlen, "out of memory");
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        Rule *r = rule_new(&specs[i], err, errlen);
        if (!r) { ruleset_free(rs); return NULL; }
        bool ok = ruleset_add(rs, r);
        rule_unref(r);
        if (!ok) {
            if (err && errlen) snprintf(err, errlen, "out of memory");
            ruleset_free(rs);
            return NULL;
        }
    }
    return rs;
}
