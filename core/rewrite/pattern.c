/* pattern.c - the rule language: parsing pattern text into a tree of PNodes,
 * matching that tree against a UOp graph, and saying where a failed match
 * got furthest (pat_explain, for the debugger).
 *
 * Details the header leaves open:
 *  - "(OP)" with no sources written puts no constraint on the sources (like
 *    tinygrad's UPat(op)); "(OP a b)" requires exactly two sources unless
 *    "..." follows them.
 *  - A dtype filter matches a node whose dtype is in the set, or whose
 *    scalar type is (so :float32 also matches float32.vec(4)).
 *  - Classes follow tinygrad: ints = sints + uints (index is not among them;
 *    write :{ints index}), floats, bool, index.
 *  - A constant pattern matches a CONST whose value is numerically equal
 *    (0 matches 0, 0.0 and false); Invalid matches the Invalid CONST.
 *  - Every way of matching is tried in tinygrad's order (written order
 *    first, then the swapped order for commutative ops, then permutations for
 *    [...]); a rule's `when` and rewrite function see each match in turn
 *    until one applies.
 *  - "; comment" runs to the end of the line. */
#include "pattern_internal.h"
#include "../util/strbuf.h"
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* the context that owns pattern args (arg=..., constant values)       */

static UCtx *g_arg_ctx;
static size_t g_arg_ctx_refs;

UCtx *pattern_arg_ctx_acquire(void) {
    if (!g_arg_ctx) {
        g_arg_ctx = uctx_new();
        if (!g_arg_ctx) return NULL;
    }
    g_arg_ctx_refs++;
    return g_arg_ctx;
}

void pattern_arg_ctx_release(void) {
    if (g_arg_ctx_refs == 0) return;
    if (--g_arg_ctx_refs == 0) {
        uctx_free(g_arg_ctx);
        g_arg_ctx = NULL;
    }
}

/* ------------------------------------------------------------------ */
/* named predicates                                                    */

#define MAX_PREDICATES 256
static struct { char name[64]; NodePredFn fn; } g_preds[MAX_PREDICATES];
static int g_npreds;

void pattern_register_predicate(const char *name, NodePredFn fn) {
    if (!name || strlen(name) >= sizeof g_preds[0].name) return;
    for (int i = 0; i < g_npreds; i++)
        if (strcmp(g_preds[i].name, name) == 0) { g_preds[i].fn = fn; return; }
    if (g_npreds == MAX_PREDICATES) return;
    snprintf(g_preds[g_npreds].name, sizeof g_preds[0].name, "%s", name);
    g_preds[g_npreds++].fn = fn;
}

static NodePredFn find_predicate(const char *name, size_t n) {
    for (int i = 0; i < g_npreds; i++)
        if (strlen(g_preds[i].name) == n && memcmp(g_preds[i].name, name, n) == 0) return g_preds[i].fn;
    return NULL;
}

/* ------------------------------------------------------------------ */
/* parser                                                              */

typedef struct Parser {
    const char *text, *p;
    char **names;
    int *ncap;
    UCtx *argc;
    char *err;
    size_t errlen;
    bool failed;
    int depth;
} Parser;

void text_position(const char *text, int pos, int *line, int *col) {
    int l = 1, c = 1;
    for (int i = 0; i < pos && text[i]; i++) {
        if (text[i] == '\n') { l++; c = 1; }
        else c++;
    }
    *line = l;
    *col = c;
}

static PNode *fail_at(Parser *ps, const char *at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static PNode *fail_at(Parser *ps, const char *at, const char *fmt, ...) {
    if (ps->failed) return NULL;
    ps->failed = true;
    if (ps->err && ps->errlen) {
        char msg[256];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        int line, col;
        text_position(ps->text, (int)(at - ps->text), &line, &col);
        snprintf(ps->err, ps->errlen, "line %d, column %d: %s", line, col, msg);
    }
    return NULL;
}

static void skip_space(Parser *ps) {
    for (;;) {
        while (*ps->p && isspace((unsigned char)*ps->p)) ps->p++;
        if (*ps->p != ';') return;
        while (*ps->p && *ps->p != '\n') ps->p++;
    }
}

static bool is_ident_start(char c) { return isalpha((unsigned char)c) || c == '_'; }
static bool is_ident_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

static size_t ident_len(const char *p) {
    size_t n = 0;
    if (!is_ident_start(p[0])) return 0;
    while (is_ident_char(p[n])) n++;
    return n;
}

static bool word_is(const char *p, size_t n, const char *w) { return strlen(w) == n && memcmp(p, w, n) == 0; }

static bool starts_literal(const char *p) {
    if (isdigit((unsigned char)p[0])) return true;
    if (p[0] == '-' || p[0] == '.') return isdigit((unsigned char)p[1]) || p[1] == '.' || p[1] == 'i';
    size_t n = ident_len(p);
    if (!n) return false;
    return word_is(p, n, "true") || word_is(p, n, "false") || word_is(p, n, "True") || word_is(p, n, "False") ||
           word_is(p, n, "Invalid") || word_is(p, n, "inf") || word_is(p, n, "nan");
}

static PNode *new_pnode(Parser *ps, PNodeKind kind) {
    PNode *n = calloc(1, sizeof *n);
    if (!n) return fail_at(ps, ps->p, "out of memory");
    n->kind = kind;
    n->cap = -1;
    n->pos = (int)(ps->p - ps->text);
    return n;
}

void pnode_free(PNode *n) {
    if (!n) return;
    for (int i = 0; i < n->nsrc; i++) pnode_free(n->src[i]);
    pnode_free(n->repeat);
    free(n);
}

static int capture_slot(Parser *ps, const char *name, size_t n, const char *at) {
    for (int i = 0; i < *ps->ncap; i++)
        if (strlen(ps->names[i]) == n && memcmp(ps->names[i], name, n) == 0) return i;
    if (*ps->ncap == PAT_MAX_CAPTURES) {
        fail_at(ps, at, "too many capture names (at most %d)", PAT_MAX_CAPTURES);
        return -1;
    }
    char *s = malloc(n + 1);
    if (!s) { fail_at(ps, at, "out of memory"); return -1; }
    memcpy(s, name, n);
    s[n] = 0;
    ps->names[*ps->ncap] = s;
    return (*ps->ncap)++;
}

static void add_op(PNode *n, Op op) {
    if (opset_has(&n->ops, op)) return;
    opset_add(&n->ops, op);
    n->nops++;
    n->first_op = op;
}

/* One op name or {A B C} into the node's op filter; a name may be one of
 * tinygrad's GroupOp classes (ops.def's flags): {Binary}, {ALU CAST}. */
static bool parse_ops(Parser *ps, PNode *n) {
    const char *start = ps->p;
    bool set = *ps->p == '{';
    if (set) ps->p++;
    for (;;) {
        if (set) skip_space(ps);
        if (set && *ps->p == '}') { ps->p++; break; }
        size_t len = ident_len(ps->p);
        if (!len) {
            fail_at(ps, ps->p, set ? "expected an op name or '}' in the op set" : "expected an op name");
            return false;
        }
        char name[64];
        if (len >= sizeof name) { fail_at(ps, ps->p, "op name too long"); return false; }
        memcpy(name, ps->p, len);
        name[len] = 0;
        Op op;
        uint32_t cls;
        if (op_from_name(name, &op)) {
            add_op(n, op);
        } else if (op_class_from_name(name, &cls)) {
            for (int o = 0; o < OP_COUNT; o++)
                if (op_is((Op)o, cls)) add_op(n, (Op)o);
        } else {
            fail_at(ps, ps->p, "unknown op or op class '%s'", name);
            return false;
        }
        ps->p += len;
        if (!set) break;
    }
    if (set && n->nops == 0) { fail_at(ps, start, "empty op set"); return false; }
    n->has_ops = true;
    return true;
}

static const struct { const char *name; uint32_t mask; } DTYPE_CLASSES[] = {
    {"sints", (1u << SK_INT8) | (1u << SK_INT16) | (1u << SK_INT32) | (1u << SK_INT64)},
    {"uints", (1u << SK_UINT8) | (1u << SK_UINT16) | (1u << SK_UINT32) | (1u << SK_UINT64)},
    {"ints", (1u << SK_INT8) | (1u << SK_INT16) | (1u << SK_INT32) | (1u << SK_INT64) | (1u << SK_UINT8) |
                 (1u << SK_UINT16) | (1u << SK_UINT32) | (1u << SK_UINT64)},
    {"floats", (1u << SK_FP8E4M3) | (1u << SK_FP8E5M2) | (1u << SK_FLOAT16) | (1u << SK_BFLOAT16) |
                   (1u << SK_FLOAT32) | (1u << SK_FLOAT64)},
};

/* One dtype or class name, added to the node's dtype filter. */
static bool parse_dtype_item(Parser *ps, PNode *n) {
    size_t len = ident_len(ps->p);
    if (len && ps->p[len] != '.') {
        for (size_t i = 0; i < sizeof DTYPE_CLASSES / sizeof DTYPE_CLASSES[0]; i++)
            if (word_is(ps->p, len, DTYPE_CLASSES[i].name)) {
                n->sk_mask |= DTYPE_CLASSES[i].mask;
                n->explicit_dtype = NULL;
                ps->p += len;
                return true;
            }
    }
    const DType *dt = NULL;
    int used = dt_parse(ps->p, &dt);
    if (used <= 0 || !dt) {
        char word[64];
        size_t wl = len < sizeof word - 1 ? len : sizeof word - 1;
        memcpy(word, ps->p, wl);
        word[wl] = 0;
        Op op;
        if (op_from_name(word, &op))
            fail_at(ps, ps->p, "unknown dtype '%s' (%s is an op: capture a node by its op with name@(%s))", word, word,
                    word);
        else fail_at(ps, ps->p, "unknown dtype '%s'", word);
        return false;
    }
    ps->p += used;
    if (dt->kind == DTK_SCALAR) n->sk_mask |= 1u << dt->sk;
    else {
        if (n->ndts == PAT_MAX_DTYPES) { fail_at(ps, ps->p, "too many dtypes in the set"); return false; }
        n->dts[n->ndts++] = dt;
    }
    n->explicit_dtype = dt;
    return true;
}

/* ":dtype" or ":{dtype class ...}" after an op, capture or literal. */
static bool parse_dtype_filter(Parser *ps, PNode *n) {
    ps->p++; /* ':' */
    n->has_dtype = true;
    if (*ps->p != '{') return parse_dtype_item(ps, n);
    ps->p++;
    int count = 0;
    for (;;) {
        skip_space(ps);
        if (*ps->p == '}') { ps->p++; break; }
        if (!*ps->p) { fail_at(ps, ps->p, "expected '}' to close the dtype set"); return false; }
        if (!parse_dtype_item(ps, n)) return false;
        count++;
    }
    if (count == 0) { fail_at(ps, ps->p, "empty dtype set"); return false; }
    if (count > 1) n->explicit_dtype = NULL;
    return true;
}

static PNode *parse_node(Parser *ps);

static void arg_error(Parser *ps, const char *aerr);

static PNode *parse_literal(Parser *ps) {
    PNode *n = new_pnode(ps, PN_CONST);
    if (!n) return NULL;
    char aerr[200] = "";
    const Arg *a = NULL;
    int used = ps->argc ? arg_parse(ps->argc, ps->p, &a, aerr, sizeof aerr) : 0;
    if (used <= 0 || !a ||
        (a->kind != ARG_INT && a->kind != ARG_FLOAT && a->kind != ARG_BOOL && a->kind != ARG_INVALID)) {
        pnode_free(n);
        if (!aerr[0]) snprintf(aerr, sizeof aerr, "not a number, bool or Invalid");
        arg_error(ps, aerr);
        return NULL;
    }
    n->cval = a;
    ps->p += used;
    if (*ps->p == ':' && !parse_dtype_filter(ps, n)) { pnode_free(n); return NULL; }
    return n;
}

/* arg_parse reports "column N: what" relative to the arg's start; report it
 * at its place in the whole text */
static void arg_error(Parser *ps, const char *aerr) {
    int col = 0, used = 0;
    if (sscanf(aerr, "column %d: %n", &col, &used) >= 1 && used > 0 && col >= 1 &&
        (size_t)(col - 1) <= strlen(ps->p))
        fail_at(ps, ps->p + col - 1, "bad arg: %s", aerr + used);
    else
        fail_at(ps, ps->p, "bad arg: %s", aerr[0] ? aerr : "cannot parse");
}

/* (OP ...) or [OP ...] */
static PNode *parse_group(Parser *ps) {
    char close = *ps->p == '(' ? ')' : ']';
    const char *open = ps->p;
    PNode *n = new_pnode(ps, PN_NODE);
    if (!n) return NULL;
    n->any_order = close == ']';
    ps->p++;
    skip_space(ps);
    if (*ps->p == '_' && !is_ident_char(ps->p[1])) ps->p++;
    else if (!parse_ops(ps, n)) goto bad;
    if (*ps->p == ':' && !parse_dtype_filter(ps, n)) goto bad;
    for (;;) {
        skip_space(ps);
        const char *item = ps->p;
        if (*ps->p == close) { ps->p++; break; }
        if (!*ps->p) { fail_at(ps, open, "'%c' is never closed", *open); goto bad; }
        if (*ps->p == ')' || *ps->p == ']' || *ps->p == '}') {
            fail_at(ps, ps->p, "expected '%c', found '%c'", close, *ps->p);
            goto bad;
        }
        if ((n->more || n->repeat) && strncmp(ps->p, "arg=", 4) != 0 && *ps->p != '?') {
            fail_at(ps, ps->p, "nothing may follow '...' or '*' except arg= and ?predicates");
            goto bad;
        }
        if (strncmp(ps->p, "...", 3) == 0) {
            if (n->any_order) { fail_at(ps, ps->p, "'...' is not allowed in [any order] sources"); goto bad; }
            n->more = true;
            ps->p += 3;
        } else if (*ps->p == '*') {
            if (n->nsrc) { fail_at(ps, ps->p, "'*' must be the only source pattern"); goto bad; }
            ps->p++;
            n->repeat = parse_node(ps);
            if (!n->repeat) goto bad;
        } else if (strncmp(ps->p, "arg=", 4) == 0) {
            ps->p += 4;
            char aerr[200] = "";
            const Arg *a = NULL;
            int used = ps->argc ? arg_parse(ps->argc, ps->p, &a, aerr, sizeof aerr) : 0;
            if (used <= 0) { arg_error(ps, aerr); goto bad; }
            n->has_arg = true;
            n->arg = a;
            ps->p += used;
        } else if (*ps->p == '?') {
            ps->p++;
            size_t len = ident_len(ps->p);
            if (!len) { fail_at(ps, ps->p, "expected a predicate name after '?'"); goto bad; }
            NodePredFn fn = find_predicate(ps->p, len);
            if (!fn) { fail_at(ps, ps->p, "unknown predicate '%.*s'", (int)len, ps->p); goto bad; }
            if (n->npreds == PAT_MAX_PREDS) { fail_at(ps, ps->p, "too many predicates on one node"); goto bad; }
            n->preds[n->npreds++] = fn;
            ps->p += len;
        } else {
            if (n->nsrc == PAT_MAX_SRCS) { fail_at(ps, item, "too many sources (at most %d)", PAT_MAX_SRCS); goto bad; }
            PNode *s = parse_node(ps);
            if (!s) goto bad;
            /* (CONST 0): the literal is the value, not a source */
            if (n->nops == 1 && n->first_op == OP_CONST && n->nsrc == 0 && s->kind == PN_CONST && s->cap < 0 &&
                !(s->has_dtype && n->has_dtype) && !n->cval) {
                n->cval = s->cval;
                if (s->has_dtype) {
                    n->has_dtype = true;
                    n->sk_mask = s->sk_mask;
                    n->ndts = s->ndts;
                    memcpy(n->dts, s->dts, sizeof n->dts);
                    n->explicit_dtype = s->explicit_dtype;
                }
                pnode_free(s);
                continue;
            }
            n->src[n->nsrc++] = s;
        }
    }
    if (n->any_order && n->nsrc > 6) { fail_at(ps, open, "[any order] supports at most 6 sources"); goto bad; }
    n->src_given = n->nsrc > 0 || n->more || n->repeat;
    if (n->cval) n->kind = PN_CONST;
    return n;
bad:
    pnode_free(n);
    return NULL;
}

static PNode *parse_node(Parser *ps) {
    if (++ps->depth > 200) return fail_at(ps, ps->p, "pattern nested too deeply");
    skip_space(ps);
    PNode *n = NULL;
    const char *at = ps->p;
    if (*ps->p == '(' || *ps->p == '[') {
        n = parse_group(ps);
    } else if (*ps->p == '{') {
        n = new_pnode(ps, PN_NODE);
        if (n && !parse_ops(ps, n)) { pnode_free(n); n = NULL; }
        if (n && *ps->p == ':' && !parse_dtype_filter(ps, n)) { pnode_free(n); n = NULL; }
    } else if (starts_literal(ps->p)) {
        n = parse_literal(ps);
    } else if (is_ident_start(*ps->p)) {
        size_t len = ident_len(ps->p);
        char word[32];
        Op op;
        uint32_t cls;
        snprintf(word, sizeof word, "%.*s", (int)(len < sizeof word ? len : sizeof word - 1), ps->p);
        /* a bare op or op-class name would capture any node under that name */
        if (ps->p[len] != '@' && len < sizeof word && (op_from_name(word, &op) || op_class_from_name(word, &cls))) {
            /* "ADD:int32" is written "(ADD:int32)" */
            size_t dt_len = ps->p[len] == ':' ? 1 + ident_len(ps->p + len + 1) : 0;
            ps->depth--;
            return fail_at(ps, at, "%s alone captures any node: (%.*s) matches the op, a lower-case name such as x captures",
                           word, (int)(len + dt_len), ps->p);
        }
        n = new_pnode(ps, PN_ANY);
        if (n && !(len == 1 && *ps->p == '_')) {
            n->cap = capture_slot(ps, ps->p, len, ps->p);
            if (n->cap < 0) { pnode_free(n); n = NULL; }
        }
        ps->p += len;
        if (n && *ps->p == '@') {
            if (n->cap < 0) { pnode_free(n); ps->depth--; return fail_at(ps, at, "'_@' captures nothing; drop the '_@'"); }
            ps->p++;
            PNode *sub = parse_node(ps);
            if (!sub) { pnode_free(n); n = NULL; }
            else if (sub->cap >= 0) {
                pnode_free(sub);
                pnode_free(n);
                n = fail_at(ps, at, "a node can be captured under one name only");
            } else {
                sub->cap = n->cap;
                sub->pos = n->pos;
                pnode_free(n);
                n = sub;
            }
        } else if (n && *ps->p == ':') {
            if (!parse_dtype_filter(ps, n)) { pnode_free(n); n = NULL; }
        }
    } else if (!*ps->p) {
        n = fail_at(ps, ps->p, "unexpected end of pattern");
    } else {
        n = fail_at(ps, ps->p, "unexpected '%c'", *ps->p);
    }
    if (n) n->end = (int)(ps->p - ps->text);
    ps->depth--;
    return n;
}

static bool mark_captures(PNode *n) {
    bool any = n->cap >= 0;
    for (int i = 0; i < n->nsrc; i++) any |= mark_captures(n->src[i]);
    if (n->repeat) any |= mark_captures(n->repeat);
    n->subtree_caps = any;
    return any;
}

PNode *pnode_parse(const char *text, char **names, int *ncap, char *err, size_t errlen) {
    Parser ps = {.text = text ? text : "", .names = names, .ncap = ncap, .err = err, .errlen = errlen};
    ps.p = ps.text;
    if (err && errlen) err[0] = 0;
    ps.argc = pattern_arg_ctx_acquire();
    if (!ps.argc) return fail_at(&ps, ps.p, "out of memory");
    PNode *root = parse_node(&ps);
    if (root) {
        skip_space(&ps);
        if (*ps.p) {
            pnode_free(root);
            root = fail_at(&ps, ps.p, "unexpected '%c' after the end of the pattern", *ps.p);
        }
    }
    if (!root) pattern_arg_ctx_release();
    else mark_captures(root);
    return root;
}

/* ------------------------------------------------------------------ */
/* matcher                                                             */

static bool const_value_matches(const Arg *want, const Arg *have) {
    if (!have) return false;
    if (want->kind == ARG_INVALID || have->kind == ARG_INVALID) return want->kind == have->kind;
    bool want_int = want->kind == ARG_INT || want->kind == ARG_BOOL;
    bool have_int = have->kind == ARG_INT || have->kind == ARG_BOOL;
    if (want->kind == ARG_FLOAT || have->kind == ARG_FLOAT) {
        if (!(want_int || want->kind == ARG_FLOAT) || !(have_int || have->kind == ARG_FLOAT)) return false;
        double a = want->kind == ARG_FLOAT ? want->v.f : want->kind == ARG_INT ? (double)want->v.i : want->v.b;
        double b = have->kind == ARG_FLOAT ? have->v.f : have->kind == ARG_INT ? (double)have->v.i : have->v.b;
        return a == b;
    }
    if (want_int && have_int) {
        int64_t a = want->kind == ARG_INT ? want->v.i : want->v.b;
        int64_t b = have->kind == ARG_INT ? have->v.i : have->v.b;
        return a == b;
    }
    return arg_equal(want, have);
}

static bool dtype_matches(const PNode *p, const DType *d) {
    if (d->kind != DTK_PTR && ((p->sk_mask >> d->sk) & 1)) return true;
    for (int i = 0; i < p->ndts; i++)
        if (p->dts[i] == d || (d->kind == DTK_PTR && p->dts[i] == d->ptr_scalar)) return true;
    return false;
}

/* everything about one node except its capture and its sources */
static inline bool node_ok(const PNode *p, const UOp *u) {
    switch (p->kind) {
    case PN_ANY: break;
    case PN_NODE:
        if (p->has_ops && !opset_has(&p->ops, uop_op(u))) return false;
        break;
    case PN_CONST:
        if (uop_op(u) != OP_CONST || !const_value_matches(p->cval, u->arg)) return false;
        break;
    }
    if (p->has_dtype && !dtype_matches(p, u->dtype)) return false;
    if (p->has_arg && !arg_equal(p->arg, u->arg)) return false;
    for (int i = 0; i < p->npreds; i++)
        if (!p->preds[i](u)) return false;
    return true;
}

/* the commutative ops as a bitset, so the matcher's hot path does not call
 * op_flags */
static OpSet commutative_ops;
static bool commutative_ready;

static void init_commutative(void) {
    if (commutative_ready) return;
    for (int op = 0; op < OP_COUNT; op++)
        if (op_is((Op)op, OPF_COMMUTATIVE)) opset_add(&commutative_ops, (Op)op);
    commutative_ready = true;
}

static inline bool is_commutative(const UOp *u) { return opset_has(&commutative_ops, uop_op(u)); }

/* whether node u could match pattern node s, judged by op alone (no
 * captures, sources or other filters): a necessary condition, for rejecting
 * a match before trying its orders */
static inline bool op_could_match(const PNode *s, const UOp *u) {
    if (s->kind == PN_CONST) return uop_op(u) == OP_CONST;
    return s->kind != PN_NODE || !s->has_ops || opset_has(&s->ops, uop_op(u));
}

/* A goal is "match p against u"; a goal with p == NULL is "match every
 * source of parent from index idx on against repeat".  Goals form a linked
 * list on the C stack (the continuation), so a miss allocates nothing and
 * every alternative is retried with the rest of the match still to do. */
typedef struct Goal {
    const PNode *p;
    const UOp *u;
    const PNode *repeat;
    int idx;
    const struct Goal *next;
} Goal;

typedef struct MState {
    const UOp **caps;
    uint32_t bound;
    uint64_t accepts;      /* complete matches handed to accept so far */
    MatchAcceptFn accept;
    void *ud;
    /* pat_explain: the furthest miss so far, and the pattern nodes matched
     * on the way being tried; NULL when only matching */
    PatMiss *miss;
    int progress;
} MState;

/* remembers a miss when it got further than the one kept */
static bool missed(MState *st, PatMissKind kind, const PNode *p, const UOp *u, const UOp *bound) {
    if (st->miss && st->progress > st->miss->progress)
        *st->miss = (PatMiss){.kind = kind, .p = p, .u = u, .bound = bound, .progress = st->progress};
    return false;
}

static bool solve(MState *st, const Goal *g);

/* [OP ...]: pattern source i against every unused node source, in
 * lexicographic order of the assignment */
static bool solve_permutations(MState *st, const PNode *p, const UOp *u, const Goal *next, Goal *gs, int depth,
                               uint32_t used) {
    int n = p->nsrc;
    if (depth == n) return solve(st, &gs[0]);
    for (int k = 0; k < n; k++) {
        if ((used >> k) & 1) continue;
        gs[depth] = (Goal){.p = p->src[depth], .u = u->src[k], .next = depth + 1 < n ? &gs[depth + 1] : next};
        uint32_t saved = st->bound;
        if (solve_permutations(st, p, u, next, gs, depth + 1, used | (1u << k))) return true;
        st->bound = saved;
    }
    return false;
}

static bool solve_sources(MState *st, const PNode *p, const UOp *u, const Goal *next) {
    int n = p->nsrc;
    if (p->repeat) {
        Goal r = {.p = NULL, .u = u, .repeat = p->repeat, .idx = 0, .next = next};
        return solve(st, &r);
    }
    if (p->more ? u->nsrc < n : u->nsrc != n) return missed(st, PAT_MISS_SOURCES, p, u, NULL);
    if (n == 0) return solve(st, next);
    /* early rejection on the sources' ops, before any order is tried; for a
     * commutative node, an order whose ops cannot match is not tried (when
     * explaining a miss, every order is tried to find where it fails) */
    bool try_straight = true, try_swapped = false;
    if (n == 2 && !p->more && is_commutative(u) && u->src[0] != u->src[1]) {
        try_straight = st->miss || (op_could_match(p->src[0], u->src[0]) && op_could_match(p->src[1], u->src[1]));
        try_swapped = st->miss || (op_could_match(p->src[0], u->src[1]) && op_could_match(p->src[1], u->src[0]));
        if (!try_straight && !try_swapped) return false;
    } else if (!st->miss && !p->any_order && !(n == 2 && is_commutative(u))) {
        for (int i = 0; i < n; i++)
            if (!op_could_match(p->src[i], u->src[i])) return false;
    }
    uint32_t saved = st->bound;
    if (try_swapped) {
        Goal sw[2] = {{.p = p->src[0], .u = u->src[1], .next = &sw[1]}, {.p = p->src[1], .u = u->src[0], .next = next}};
        if (try_straight) {
            Goal gs[2] = {{.p = p->src[0], .u = u->src[0], .next = &gs[1]}, {.p = p->src[1], .u = u->src[1], .next = next}};
            uint64_t accepts = st->accepts;
            if (solve(st, &gs[0])) return true;
            st->bound = saved;
            /* sources that capture nothing leave the match the same in
             * either order: once the straight order reached the rest of
             * the match, the swapped one would repeat it exactly */
            if (st->accepts != accepts && !p->src[0]->subtree_caps && !p->src[1]->subtree_caps) return false;
        }
        if (solve(st, &sw[0])) return true;
        st->bound = saved;
        return false;
    }
    Goal gs[n]; /* n > 0 here */
    if (p->any_order) return solve_permutations(st, p, u, next, gs, 0, 0);
    for (int i = 0; i < n; i++) gs[i] = (Goal){.p = p->src[i], .u = u->src[i], .next = i + 1 < n ? &gs[i + 1] : next};
    if (solve(st, &gs[0])) return true;
    st->bound = saved;
    return false;
}

static bool solve(MState *st, const Goal *g) {
    if (!g) {
        st->accepts++;
        return st->accept ? st->accept(st->caps, st->bound, st->ud) : true;
    }
    if (!g->p) {
        if (g->idx >= g->u->nsrc) return solve(st, g->next);
        const PNode *rp = g->repeat;
        if (!rp->subtree_caps || rp->kind == PN_ANY) {
            /* the sources do not constrain each other (no captures), or
             * they all bind one capture: check them in a loop rather
             * than one level of recursion per source */
            uint32_t saved = st->bound;
            for (int i = g->idx; i < g->u->nsrc; i++) {
                const UOp *s = g->u->src[i];
                if (rp->kind == PN_ANY) {
                    if (!node_ok(rp, s)) { st->bound = saved; return missed(st, PAT_MISS_NODE, rp, s, NULL); }
                    if (rp->cap >= 0) {
                        uint32_t bit = 1u << rp->cap;
                        if (!(st->bound & bit)) { st->bound |= bit; st->caps[rp->cap] = s; }
                        else if (st->caps[rp->cap] != s) {
                            st->bound = saved;
                            return missed(st, PAT_MISS_CAPTURE, rp, s, st->caps[rp->cap]);
                        }
                    }
                } else {
                    const UOp *scratch[PAT_MAX_CAPTURES];
                    MState alone = {.caps = scratch, .miss = st->miss, .progress = st->progress};
                    Goal one = {.p = rp, .u = s};
                    if (!solve(&alone, &one)) { st->bound = saved; return false; }
                }
            }
            if (solve(st, g->next)) return true;
            st->bound = saved;
            return false;
        }
        Goal rest = {.p = NULL, .u = g->u, .repeat = g->repeat, .idx = g->idx + 1, .next = g->next};
        Goal one = {.p = g->repeat, .u = g->u->src[g->idx], .next = &rest};
        return solve(st, &one);
    }
    const PNode *p = g->p;
    const UOp *u = g->u;
    if (!node_ok(p, u)) return missed(st, PAT_MISS_NODE, p, u, NULL);
    uint32_t saved = st->bound;
    if (p->cap >= 0) {
        uint32_t bit = 1u << p->cap;
        if (st->bound & bit) {
            if (st->caps[p->cap] != u) return missed(st, PAT_MISS_CAPTURE, p, u, st->caps[p->cap]);
        } else {
            st->bound |= bit;
            st->caps[p->cap] = u;
        }
    }
    int progress = st->progress++;
    bool ok = p->kind == PN_NODE && p->src_given ? solve_sources(st, p, u, g->next) : solve(st, g->next);
    if (!ok) {
        st->bound = saved;
        st->progress = progress;
    }
    return ok;
}

/* A necessary condition for p to match u, from the root's op and source
 * count and its sources' ops alone; most failed attempts end here, before
 * any matcher state is set up. */
static inline bool could_match(const Pat *p, const UOp *u) {
    if (!p->root_any_op && !opset_has(&p->root_ops, uop_op(u))) return false;
    const PNode *r = p->root;
    if (r->kind != PN_NODE || !r->src_given || r->repeat || r->any_order) return true;
    int n = r->nsrc;
    if (r->more ? u->nsrc < n : u->nsrc != n) return false;
    if (n == 2 && !r->more && is_commutative(u))
        return (op_could_match(r->src[0], u->src[0]) && op_could_match(r->src[1], u->src[1])) ||
               (op_could_match(r->src[0], u->src[1]) && op_could_match(r->src[1], u->src[0]));
    for (int i = 0; i < n; i++)
        if (!op_could_match(r->src[i], u->src[i])) return false;
    return true;
}

/* A flat pattern is one node with a source list whose sources are leaves
 * of the pattern: _, x, 0, c@(CONST), {ADD MUL}.  Most rules are written so,
 * and for them the general search above comes down to checking the sources
 * in one order, then (commutative, two different sources) in the other; this
 * does exactly that, with the same order of complete matches, the same
 * capture binding and the same skip of a capture-free swapped order, so the
 * result cannot differ from solve's. */
static bool is_flat(const PNode *r) {
    if (r->kind != PN_NODE || !r->src_given || r->repeat || r->any_order || r->more) return false;
    for (int i = 0; i < r->nsrc; i++) {
        const PNode *s = r->src[i];
        if (s->kind == PN_NODE && (s->src_given || s->repeat)) return false;
    }
    return true;
}

/* binds capture slot cap to x, or checks it is x when bound */
static inline bool bind(MState *st, int cap, const UOp *x) {
    if (cap < 0) return true;
    uint32_t bit = 1u << cap;
    if (st->bound & bit) return st->caps[cap] == x;
    st->bound |= bit;
    st->caps[cap] = x;
    return true;
}

/* the sources of flat r against u's, straight or swapped (two sources) */
static bool flat_order(MState *st, const PNode *r, const UOp *u, bool swap) {
    uint32_t saved = st->bound;
    for (int i = 0; i < r->nsrc; i++) {
        const UOp *x = u->src[swap ? 1 - i : i];
        if (!node_ok(r->src[i], x) || !bind(st, r->src[i]->cap, x)) {
            st->bound = saved;
            return false;
        }
    }
    st->accepts++;
    if (!st->accept || st->accept(st->caps, st->bound, st->ud)) return true;
    st->bound = saved;
    return false;
}

static bool match_flat(MState *st, const PNode *r, const UOp *u) {
    if (u->nsrc != r->nsrc || !node_ok(r, u)) return false;
    bind(st, r->cap, u);
    bool straight = true, swapped = false;
    if (r->nsrc == 2 && is_commutative(u) && u->src[0] != u->src[1]) {
        straight = op_could_match(r->src[0], u->src[0]) && op_could_match(r->src[1], u->src[1]);
        swapped = op_could_match(r->src[0], u->src[1]) && op_could_match(r->src[1], u->src[0]);
    }
    uint64_t accepts = st->accepts;
    if (straight && flat_order(st, r, u, false)) return true;
    /* as in solve_sources: sources that capture nothing give the swapped
     * order the same match the straight one already reached */
    bool same = swapped && straight && st->accepts != accepts && !r->src[0]->subtree_caps && !r->src[1]->subtree_caps;
    return swapped && !same && flat_order(st, r, u, true);
}

bool pat_could_match(const Pat *p, const UOp *u) {
    init_commutative();
    return could_match(p, u);
}

bool pat_match_with(const Pat *p, const UOp *u, const UOp **caps, MatchAcceptFn accept, void *ud) {
    if (!p || !u) return false;
    init_commutative();
    MState st = {.caps = caps, .bound = 0, .accept = accept, .ud = ud};
    if (p->flat) {
        if (!match_flat(&st, p->root, u)) return false;
    } else {
        if (!could_match(p, u)) return false;
        Goal g = {.p = p->root, .u = u};
        if (!solve(&st, &g)) return false;
    }
    for (int i = 0; i < p->ncap; i++)
        if (!((st.bound >> i) & 1)) caps[i] = NULL;
    return true;
}

bool pat_explain(const Pat *p, const UOp *u, const UOp **caps, PatMiss *miss) {
    init_commutative();
    /* progress -1: the root's own miss is kept too */
    *miss = (PatMiss){.kind = PAT_MISS_NODE, .p = p->root, .u = u, .progress = -1};
    MState st = {.caps = caps, .miss = miss};
    Goal g = {.p = p->root, .u = u};
    if (!solve(&st, &g)) return false;
    for (int i = 0; i < p->ncap; i++)
        if (!((st.bound >> i) & 1)) caps[i] = NULL;
    return true;
}

static const char *pred_name(NodePredFn fn) {
    for (int i = 0; i < g_npreds; i++)
        if (g_preds[i].fn == fn) return g_preds[i].name;
    return "a predicate";
}

/* "IDIV or MOD", "ADD, MUL, or SHL", "ADD, MUL, SHL, SHR, IDIV, MAX, ... (17 ops)" */
static void ops_text(StrBuf *sb, const PNode *p) {
    int shown = 0;
    for (int op = 0; op < OP_COUNT; op++) {
        if (!opset_has(&p->ops, (Op)op)) continue;
        if (shown == 6) {
            sb_printf(sb, ", ... (%d ops)", p->nops);
            return;
        }
        if (shown) sb_puts(sb, shown + 1 == p->nops ? (p->nops == 2 ? " or " : ", or ") : ", ");
        sb_puts(sb, op_name((Op)op));
        shown++;
    }
}

/* what of node_ok failed, in the order node_ok checks */
static void node_miss_text(StrBuf *sb, const PNode *p, const UOp *u) {
    if (p->kind == PN_NODE && p->has_ops && !opset_has(&p->ops, uop_op(u))) {
        sb_puts(sb, "wants ");
        ops_text(sb, p);
        sb_printf(sb, ", it is %s", op_name(uop_op(u)));
    } else if (p->kind == PN_CONST && uop_op(u) != OP_CONST) {
        sb_puts(sb, "wants the constant ");
        arg_format(sb, p->cval);
        sb_printf(sb, ", it is %s", op_name(uop_op(u)));
    } else if (p->kind == PN_CONST && !const_value_matches(p->cval, u->arg)) {
        sb_puts(sb, "wants the value ");
        arg_format(sb, p->cval);
        sb_puts(sb, ", it is ");
        arg_format(sb, u->arg);
    } else if (p->has_dtype && !dtype_matches(p, u->dtype)) {
        sb_puts(sb, "its dtype ");
        dt_format(sb, u->dtype);
        sb_puts(sb, " is not one the pattern allows");
    } else if (p->has_arg && !arg_equal(p->arg, u->arg)) {
        sb_puts(sb, "wants arg=");
        arg_format(sb, p->arg);
        sb_puts(sb, ", it has ");
        arg_format(sb, u->arg);
    } else {
        for (int i = 0; i < p->npreds; i++)
            if (!p->preds[i](u)) {
                sb_printf(sb, "?%s is false for it", pred_name(p->preds[i]));
                return;
            }
        sb_puts(sb, "does not match");
    }
}

void pat_miss_describe(const Pat *p, const PatMiss *m, char *sub, size_t sublen, char *why, size_t whylen) {
    const char *text = p->text ? p->text : "";
    int len = m->p->end - m->p->pos;
    if (len < 0 || (size_t)m->p->end > strlen(text)) len = 0;
    snprintf(sub, sublen, "%.*s", len, text + m->p->pos);
    StrBuf sb;
    sb_init(&sb);
    switch (m->kind) {
    case PAT_MISS_NODE: node_miss_text(&sb, m->p, m->u); break;
    case PAT_MISS_CAPTURE:
        sb_printf(&sb, "%s is %%%u already, here it would be %%%u", m->p->cap >= 0 ? p->names[m->p->cap] : "_",
                  m->bound ? m->bound->id : 0, m->u->id);
        break;
    case PAT_MISS_SOURCES:
        sb_printf(&sb, "wants %s%d source%s, it has %d", m->p->more ? "at least " : "", m->p->nsrc,
                  m->p->nsrc == 1 ? "" : "s", m->u->nsrc);
        break;
    }
    snprintf(why, whylen, "%s", sb.len ? sb_str(&sb) : "does not match");
    sb_free(&sb);
}

/* ------------------------------------------------------------------ */
/* public pattern API                                                  */

Pat *pattern_compile(const char *text, char *err, size_t errlen) {
    Pat *p = calloc(1, sizeof *p);
    if (!p) {
        if (err && errlen) snprintf(err, errlen, "out of memory");
        return NULL;
    }
    p->root = pnode_parse(text, p->names, &p->ncap, err, errlen);
    size_t tlen = strlen(text ? text : "");
    if (p->root && (p->text = malloc(tlen + 1))) memcpy(p->text, text, tlen + 1);
    if (p->root && !p->text) {
        pnode_free(p->root);
        pattern_arg_ctx_release();
        p->root = NULL;
        if (err && errlen) snprintf(err, errlen, "out of memory");
    }
    if (!p->root) {
        for (int i = 0; i < p->ncap; i++) free(p->names[i]);
        free(p);
        return NULL;
    }
    const PNode *r = p->root;
    if (r->kind == PN_CONST) opset_add(&p->root_ops, OP_CONST);
    else if (r->kind == PN_NODE && r->has_ops) p->root_ops = r->ops;
    else p->root_any_op = true;
    p->flat = is_flat(r);
    return p;
}

void pattern_free(Pat *p) {
    if (!p) return;
    pnode_free(p->root);
    for (int i = 0; i < p->ncap; i++) free(p->names[i]);
    free(p->text);
    free(p);
    pattern_arg_ctx_release();
}

bool pattern_match(const Pat *p, const UOp *u, const UOp **caps) {
    const UOp *local[PAT_MAX_CAPTURES];
    return pat_match_with(p, u, caps ? caps : local, NULL, NULL);
}

int pattern_capture_count(const Pat *p) { return p ? p->ncap : 0; }

const char *pattern_capture_name(const Pat *p, int slot) {
    return p && slot >= 0 && slot < p->ncap ? p->names[slot] : NULL;
}

bool pattern_explain(const Pat *p, const UOp *u, const UOp **caps, PatternMiss *miss) {
    PatMiss m;
    memset(miss, 0, sizeof *miss);
    if (pat_explain(p, u, caps, &m)) return true;
    miss->node = m.u;
    miss->progress = m.progress;
    pat_miss_describe(p, &m, miss->pattern, sizeof miss->pattern, miss->reason, sizeof miss->reason);
    return false;
}

int pattern_capture_slot(const Pat *p, const char *name) {
    if (!p || !name) return -1;
    for (int i = 0; i < p->ncap; i++)
        if (strcmp(p->names[i], name) == 0) return i;
    return -1;
}
