/* trace.c - the record of what a rewrite did (see trace.h).  Rule names and
 * file names are interned in the trace so entries outlive the rules. */
#include "trace.h"
#include <stdlib.h>
#include <string.h>
#include <stdint.h>

void trace_init(Trace *t) { memset(t, 0, sizeof *t); }

void trace_clear(Trace *t) {
    for (size_t i = 0; i < t->nstrings; i++) free(t->strings[i]);
    memset(t->recent, 0, sizeof t->recent);
    t->nstrings = 0;
    t->nrewrites = 0;
    t->npasses = 0;
    t->nrebuilds = 0;
    t->error_rule = t->error_file = NULL;
    t->error_line = 0;
}

void trace_free(Trace *t) {
    trace_clear(t);
    free(t->strings);
    free(t->rewrites);
    free(t->passes);
    free(t->rebuilds);
    memset(t, 0, sizeof *t);
}

static bool grow(void **items, size_t *cap, size_t need, size_t size) {
    if (need <= *cap) return true;
    size_t n = *cap ? *cap * 2 : 16;
    while (n < need) n *= 2;
    void *p = realloc(*items, n * size);
    if (!p) return false;
    *items = p;
    *cap = n;
    return true;
}

/* The trace's copy of s.  The copy last found for the same address is
 * tried first (its text compared too: a freed rule's name may be reused by
 * another's), then the copies from the newest, since a pass usually fires
 * a handful of rules many times. */
static const char *intern(Trace *t, const char *s) {
    if (!s) s = "";
    size_t h = ((uintptr_t)s >> 3) % (sizeof t->recent / sizeof *t->recent);
    if (t->recent[h].from == s && strcmp(t->recent[h].copy, s) == 0) return t->recent[h].copy;
    const char *d = NULL;
    for (size_t i = t->nstrings; !d && i-- > 0;)
        if (strcmp(t->strings[i], s) == 0) d = t->strings[i];
    if (!d) {
        if (!grow((void **)&t->strings, &t->cap_strings, t->nstrings + 1, sizeof *t->strings)) return NULL;
        size_t n = strlen(s);
        char *copy = malloc(n + 1);
        if (!copy) return NULL;
        memcpy(copy, s, n + 1);
        t->strings[t->nstrings++] = copy;
        d = copy;
    }
    t->recent[h].from = s;
    t->recent[h].copy = d;
    return d;
}

bool trace_begin_pass(Trace *t, const char *name, const char *rules, const UOp *root_before) {
    if (!grow((void **)&t->passes, &t->cap_passes, t->npasses + 1, sizeof *t->passes)) return false;
    const char *nm = intern(t, name), *rs = intern(t, rules ? rules : "");
    if (!nm || !rs) return false;
    t->passes[t->npasses++] = (TracePass){
        .name = nm, .rules = rs, .root_before = root_before, .root_after = NULL, .first_rewrite = t->nrewrites};
    return true;
}

void trace_end_pass(Trace *t, const UOp *root_after, uint64_t ns) {
    if (!t->npasses) return;
    TracePass *p = &t->passes[t->npasses - 1];
    p->root_after = root_after;
    p->nrewrites = t->nrewrites - p->first_rewrite;
    p->ns = ns;
}

bool trace_add_rewrite(Trace *t, const char *rule, const char *file, int line, const UOp *before,
                       const UOp *after, uint64_t ns) {
    if (!grow((void **)&t->rewrites, &t->cap_rewrites, t->nrewrites + 1, sizeof *t->rewrites)) return false;
    const char *r = intern(t, rule), *f = intern(t, file);
    if (!r || !f) return false;
    t->rewrites[t->nrewrites++] = (TraceRewrite){.rule = r, .file = f, .line = line, .before = before,
                                                 .after = after, .ns = ns,
                                                 .pass = t->npasses ? (uint32_t)(t->npasses - 1) : 0};
    return true;
}

bool trace_add_rebuild(Trace *t, const UOp *from, const UOp *to) {
    if (!t->keep_rebuilds) return true;
    if (!grow((void **)&t->rebuilds, &t->cap_rebuilds, t->nrebuilds + 1, sizeof *t->rebuilds)) return false;
    t->rebuilds[t->nrebuilds++] = (TraceRebuild){from, to};
    return true;
}

bool trace_set_error_rule(Trace *t, const char *rule, const char *file, int line) {
    const char *r = intern(t, rule), *f = intern(t, file);
    if (!r || !f) return false;
    t->error_rule = r;
    t->error_file = f;
    t->error_line = line;
    return true;
}

void trace_mark(const Trace *t, UCtxMarks *m) {
    for (size_t i = 0; i < t->nrebuilds; i++) {
        uctx_mark(m, t->rebuilds[i].from);
        uctx_mark(m, t->rebuilds[i].to);
    }
    for (size_t i = 0; i < t->nrewrites; i++) {
        uctx_mark(m, t->rewrites[i].before);
        uctx_mark(m, t->rewrites[i].after);
    }
    for (size_t i = 0; i < t->npasses; i++) {
        uctx_mark(m, t->passes[i].root_before);
        uctx_mark(m, t->passes[i].root_after);
    }
}
