/* registry.c - the rule-set registry: definitions by name, sets built on
 * first use under one lock, concatenations ("a + b") cached beside them. */
#include "registry.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct Entry {
    const RuleSetDef *def; /* NULL for a concatenation */
    char *name;            /* the canonical name: "a + b" */
    RuleSet *built;        /* NULL until asked for */
} Entry;

static struct {
    Entry *items;
    int n, cap;
} reg;

static pthread_mutex_t lock;
static pthread_once_t lock_once = PTHREAD_ONCE_INIT;

/* building a set asks for its base under the same lock, hence recursive */
static void lock_init(void) {
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&lock, &a);
    pthread_mutexattr_destroy(&a);
}
static void acquire(void) {
    pthread_once(&lock_once, lock_init);
    pthread_mutex_lock(&lock);
}
static void release(void) { pthread_mutex_unlock(&lock); }

/* s with its control characters (a newline) as escapes, cut to fit n bytes,
 * so that a message naming it stays on one line */
static void one_line(char *dst, size_t n, const char *s) {
    size_t o = 0;
    for (; *s && o + 5 < n; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '\n') dst[o++] = '\\', dst[o++] = 'n';
        else if (ch < 0x20 || ch == 0x7f) o += (size_t)snprintf(dst + o, n - o, "\\%d", ch);
        else dst[o++] = (char)ch;
    }
    dst[o] = 0;
}

static void set_err(char *err, size_t errlen, const char *fmt, const char *a, const char *b) {
    if (!err || !errlen) return;
    char qa[256], qb[256];
    one_line(qa, sizeof qa, a);
    one_line(qb, sizeof qb, b);
    snprintf(err, errlen, fmt, qa, qb);
}

static Entry *find(const char *name) {
    for (int i = 0; i < reg.n; i++)
        if (!strcmp(reg.items[i].name, name)) return &reg.items[i];
    return NULL;
}

static Entry *push(const RuleSetDef *def, const char *name) {
    if (reg.n == reg.cap) {
        int cap = reg.cap ? reg.cap * 2 : 64;
        Entry *items = realloc(reg.items, (size_t)cap * sizeof *items);
        if (!items) return NULL;
        reg.items = items, reg.cap = cap;
    }
    char *copy = strdup(name);
    if (!copy) return NULL;
    reg.items[reg.n] = (Entry){.def = def, .name = copy};
    return &reg.items[reg.n++];
}

bool ruleset_register(const RuleSetDef *defs, int n, char *err, size_t errlen) {
    bool ok = true;
    acquire();
    for (int i = 0; i < n && ok; i++) {
        const RuleSetDef *d = &defs[i];
        Entry *e = find(d->name);
        if (e && e->def == d) continue;
        if (e || strchr(d->name, '+')) {
            set_err(err, errlen, "rule set '%s' %s", d->name, e ? "is registered twice" : "has '+' in its name");
            ok = false;
        } else if (!push(d, d->name)) {
            set_err(err, errlen, "out of memory registering '%s'%s", d->name, "");
            ok = false;
        }
    }
    release();
    return ok;
}

/* "a+ b  +c" -> "a + b + c"; false if a part is empty or the name too long */
static bool canonical(const char *name, char *out, size_t cap) {
    size_t n = 0;
    const char *p = name;
    for (;;) {
        while (*p == ' ') p++;
        const char *start = p;
        while (*p && *p != '+') p++;
        const char *end = p;
        while (end > start && end[-1] == ' ') end--;
        size_t len = (size_t)(end - start);
        if (!len || n + len + 4 >= cap) return false;
        memcpy(out + n, start, len);
        n += len;
        if (!*p) break;
        memcpy(out + n, " + ", 3);
        n += 3;
        p++;
    }
    out[n] = 0;
    return true;
}

static RuleSet *build_def(const RuleSetDef *d, char *err, size_t errlen) {
    RuleSet *rs;
    if (d->base) {
        const RuleSet *base = ruleset_get(d->base, err, errlen);
        if (!base) return NULL;
        rs = ruleset_concat(d->name, base, NULL);
    } else {
        rs = ruleset_new(d->name);
    }
    if (!rs) { set_err(err, errlen, "out of memory building '%s'%s", d->name, ""); return NULL; }
    for (int t = 0; t < d->ntables; t++)
        for (int i = 0; i < d->tables[t]->n; i++) {
            char why[256];
            Rule *r = rule_new(&d->tables[t]->specs[i], why, sizeof why);
            bool added = r && ruleset_add(rs, r);
            if (r) rule_unref(r);
            if (!added) {
                if (err && errlen)
                    snprintf(err, errlen, "rule %s of '%s' does not compile: %s", d->tables[t]->specs[i].name, d->name,
                             r ? "out of memory" : why);
                ruleset_free(rs);
                return NULL;
            }
        }
    return rs;
}

static RuleSet *build_concat(const char *name, char *err, size_t errlen) {
    RuleSet *acc = NULL;
    const char *p = name;
    while (*p) {
        const char *sep = strstr(p, " + ");
        size_t len = sep ? (size_t)(sep - p) : strlen(p);
        char part[128];
        if (len >= sizeof part) { set_err(err, errlen, "rule set name too long: %s%s", name, ""); break; }
        memcpy(part, p, len);
        part[len] = 0;
        const RuleSet *rs = ruleset_get(part, err, errlen);
        if (!rs) { ruleset_free(acc); return NULL; }
        RuleSet *next = ruleset_concat(name, acc, rs);
        ruleset_free(acc);
        if (!(acc = next)) { set_err(err, errlen, "out of memory building '%s'%s", name, ""); return NULL; }
        p += len;
        if (sep) p += 3;
    }
    return acc;
}

const RuleSet *ruleset_get(const char *name, char *err, size_t errlen) {
    char canon[512];
    if (!name || !canonical(name, canon, sizeof canon)) {
        set_err(err, errlen, "not a rule set name: '%s'%s", name ? name : "(null)", "");
        return NULL;
    }
    const RuleSet *out = NULL;
    acquire();
    Entry *e = find(canon);
    if (e && e->built) {
        out = e->built;
    } else if (e || strchr(canon, '+')) {
        RuleSet *rs = e ? build_def(e->def, err, errlen) : build_concat(canon, err, errlen);
        /* building asks for the parts, which may add entries and move the
         * table: find the entry again */
        e = find(canon);
        if (rs && e && e->built) { /* built meanwhile: keep the first */
            ruleset_free(rs);
            rs = e->built;
        }
        if (rs && !e && !(e = push(NULL, canon))) {
            set_err(err, errlen, "out of memory registering '%s'%s", canon, "");
            ruleset_free(rs);
            rs = NULL;
        }
        if (rs) out = e->built = rs;
    } else {
        set_err(err, errlen, "unknown rule set '%s'%s (uop.rulesets() lists them)", canon, "");
    }
    release();
    return out;
}

int ruleset_def_count(void) {
    acquire();
    int n = 0;
    for (int i = 0; i < reg.n; i++) n += reg.items[i].def != NULL;
    release();
    return n;
}

const RuleSetDef *ruleset_def(int i) {
    const RuleSetDef *out = NULL;
    acquire();
    for (int k = 0; k < reg.n && !out; k++)
        if (reg.items[k].def && i-- == 0) out = reg.items[k].def;
    release();
    return out;
}

const RuleSetDef *ruleset_def_find(const char *name) {
    acquire();
    Entry *e = name ? find(name) : NULL;
    const RuleSetDef *d = e ? e->def : NULL;
    release();
    return d;
}

void ruleset_registry_free(void) {
    acquire();
    int keep = 0;
    for (int i = 0; i < reg.n; i++) {
        ruleset_free(reg.items[i].built);
        reg.items[i].built = NULL;
        if (reg.items[i].def) reg.items[keep++] = reg.items[i];
        else free(reg.items[i].name);
    }
    reg.n = keep;
    release();
}
