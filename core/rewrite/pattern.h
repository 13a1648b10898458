/* pattern.h - patterns and rules: the rule language shared by C and Lua.
 *
 * A pattern is written as text (an s-expression) and compiled once:
 *
 *   (ADD x (CONST 0))          ADD whose sources are anything (captured as x)
 *                              and a CONST 0; ADD is commutative, so the
 *                              sources match in either order
 *   {ADD MUL}                  an op set (bare, no sources constraint)
 *   ({ADD MUL} a b)            an op set with sources
 *   {Binary}  ({ALU CAST} x)   tinygrad's GroupOp classes, from ops.def:
 *                              Unary Binary Ternary ALU Commutative
 *                              Associative Idempotent Comparison Movement
 *                              Buffer Defines Irreducible UnsafePad
 *                              Elementwise
 *   (ADD:int32 a b)            a dtype filter; a set: (ADD:{int32 int64} a b);
 *                              classes: ints sints uints floats bool index
 *   (_:float32 ...)            any op, a dtype filter
 *   x                          any node, captured as x; a name used twice
 *                              must bind the same node both times
 *   x@(CONST)                  capture the node matched by a sub-pattern
 *   x:ints                     any node of an int dtype, captured as x
 *   _                          any node, not captured
 *   0  1.5  true  Invalid      a CONST with this value (any dtype)
 *   (CONST 0)                  the same, spelled out
 *   (RANGE arg=(0, REDUCE) e)  an exact arg (written as listings print it)
 *   (VECTORIZE x ...)          "..." after sources: any number more
 *   (SINK *s)                  every source matches s (any count, may be 0)
 *   [ADD a b]                  brackets: sources in any order, for any op
 *   (ADD a b ?pred)            a named predicate on the node, registered
 *                              with pattern_register_predicate()
 *
 * A rule pairs a pattern with a rewrite: a template in the same language
 * (captures are substituted; a node's dtype is its :dtype, else inferred
 * from its sources for ALU ops, else the matched root's dtype) or a C/Lua
 * function.  Every rule has a name and the file:line it is written at. */
#ifndef UOPDB_PATTERN_H
#define UOPDB_PATTERN_H
#include <stdbool.h>
#include <stdint.h>
#include "../ir/uop.h"

#define PAT_MAX_CAPTURES 32

typedef struct Pat Pat;           /* compiled pattern (opaque) */
typedef struct Template Template; /* compiled rewrite template (opaque) */
typedef struct Rule Rule;
typedef struct RuleSet RuleSet;
typedef struct RewriteRun RewriteRun;

/* What a rewrite function sees. */
typedef struct Match {
    const Rule *rule;
    const UOp *root;                       /* the matched node */
    const UOp *cap[PAT_MAX_CAPTURES];      /* by capture slot (see rule_capture_slot) */
    UCtx *ctx;
    void *user;                            /* RewriteOpts.user of the running rewrite */
    RewriteRun *run;                       /* for rewrite_fail() */
    char *decline;                         /* where match_decline writes (k:why); NULL: nowhere */
    size_t decline_len;
} Match;

/* Returns the replacement, or NULL for "no rewrite" (the rule did not apply).
 * To report an error instead, call rewrite_fail() and return NULL. */
typedef const UOp *(*RewriteFn)(const Match *m, void *ud);
/* Extra condition on a whole match (a rule's `when`). */
typedef bool (*RuleWhenFn)(const Match *m, void *ud);
/* A named node predicate usable as ?name in patterns. */
typedef bool (*NodePredFn)(const UOp *u);

/* Captured node by name (NULL if the rule has no such capture). */
const UOp *match_get(const Match *m, const char *name);
/* Stops the running rewrite with an error that names the rule. */
void rewrite_fail(const Match *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Says why the rule gives nothing for this match, for k:why ("its bounds
 * [0, 8] are not one value"); costs one test when nobody asks.  A rule may
 * say several things; the same text is kept once. */
void match_decline(const Match *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* the same, formatting nothing when nobody asks (for rules on hot paths);
 * m may be NULL (a helper a rule shares with code that is not a rule) */
#define MATCH_DECLINE(m, ...) ((m) && (m)->decline ? match_decline((m), __VA_ARGS__) : (void)0)

void pattern_register_predicate(const char *name, NodePredFn fn);

/* ---- rules ---- */
typedef struct RuleSpec {
    const char *name;
    const char *pattern;      /* rule-language text */
    const char *template_text; /* either a template ... */
    RewriteFn fn;             /* ... or a function */
    void *ud;
    void (*ud_free)(void *ud); /* called when the rule is freed */
    RuleWhenFn when;          /* optional */
    const char *file;         /* where the rule is written (copied) */
    int line;
} RuleSpec;

/* Compiles a rule; NULL with a message (line/column in the pattern) in err. */
Rule *rule_new(const RuleSpec *spec, char *err, size_t errlen);
void rule_ref(Rule *r);
void rule_unref(Rule *r);
const char *rule_name(const Rule *r);
const char *rule_file(const Rule *r);
int rule_line(const Rule *r);
int rule_capture_slot(const Rule *r, const char *name); /* -1 if none */
int rule_capture_count(const Rule *r);
const char *rule_capture_name(const Rule *r, int slot);

/* per-rule statistics, kept always (cheap) */
typedef struct RuleStats {
    uint64_t attempts;  /* root op matched the dispatch, full match tried */
    uint64_t matches;   /* pattern matched */
    uint64_t rewrites;  /* rewrite returned a new node */
    uint64_t ns;        /* time in matching and rewriting, when timing is on */
} RuleStats;
RuleStats *rule_stats(Rule *r);

/* Tries one rule on one node: 1 rewritten (*out set), 0 no match, -1 error. */
int rule_apply(Rule *r, UCtx *c, const UOp *u, void *user, RewriteRun *run, const UOp **out);

/* Where a match that failed got furthest (pattern_explain, rule_explain):
 * the node, the sub-pattern as written, what differs, and how many pattern
 * nodes had matched before (to compare the misses of several nodes). */
typedef struct PatternMiss {
    const UOp *node;
    char pattern[256];
    char reason[256];
    int progress;
} PatternMiss;

/* Why a rule does or does not rewrite a node, for the debugger. */
typedef enum RuleVerdict {
    RULE_NO_MATCH,   /* the pattern does not match (miss_* say where it failed) */
    RULE_DECLINED,   /* it matches; the rule's `when` or function declines every match */
    RULE_REWRITES,   /* it matches and the rule gives `result` */
    RULE_ERROR       /* the rule failed (error) */
} RuleVerdict;
typedef struct RuleExplain {
    RuleVerdict verdict;
    PatternMiss miss;          /* RULE_NO_MATCH: where the pattern fails ("wants IDIV or MOD, it is ADD") */
    const UOp *cap[PAT_MAX_CAPTURES]; /* a match: the applied one, else the first */
    int matches;               /* complete matches the rule was offered */
    char declined[512];        /* RULE_DECLINED: what the rule said of it (match_decline), or "" */
    const UOp *result;         /* RULE_REWRITES */
    char error[512];           /* RULE_ERROR */
} RuleExplain;
/* Tries r on u as rule_apply does (user as Match.user; the rule's
 * statistics are left alone) and says why it rewrites u or not. */
void rule_explain(Rule *r, UCtx *c, const UOp *u, void *user, RuleExplain *out);
const char *rule_verdict_name(RuleVerdict v); /* "no match", "declined", "rewrites", "error" */
/* the pattern as written */
const char *rule_pattern_text(const Rule *r);
/* whether the rule's pattern can match a node of this op at its root */
bool rule_root_can_be(const Rule *r, Op op);

/* ---- rule sets: ordered lists of rules, indexed by root op ---- */
RuleSet *ruleset_new(const char *name);
/* Adds a rule (takes a reference). */
bool ruleset_add(RuleSet *rs, Rule *r);
/* A new set with the rules of a followed by those of b (tinygrad's pm_a + pm_b). */
RuleSet *ruleset_concat(const char *name, const RuleSet *a, const RuleSet *b);
void ruleset_free(RuleSet *rs);
const char *ruleset_name(const RuleSet *rs);
int ruleset_count(const RuleSet *rs);
Rule *ruleset_rule(const RuleSet *rs, int i);
/* Builds a set from an array of specs, stopping at the first that does not
 * compile (NULL, err names the rule). */
RuleSet *ruleset_from_specs(const char *name, const RuleSpec *specs, int n, char *err, size_t errlen);

/* Convenience for C rule tables: RULE_FN("name", "(ADD x 0)", fn) */
#define RULE_FN(nm, pat, f) {.name = (nm), .pattern = (pat), .fn = (f), .file = __FILE__, .line = __LINE__}
#define RULE_TMPL(nm, pat, tmpl) {.name = (nm), .pattern = (pat), .template_text = (tmpl), .file = __FILE__, .line = __LINE__}

/* Matches a pattern against a node outside any rule (tests, the REPL's
 * "find"): fills caps (PAT_MAX_CAPTURES) and returns true on a match. */
Pat *pattern_compile(const char *text, char *err, size_t errlen);
void pattern_free(Pat *p);
bool pattern_match(const Pat *p, const UOp *u, const UOp **caps);
int pattern_capture_slot(const Pat *p, const char *name);
int pattern_capture_count(const Pat *p);
const char *pattern_capture_name(const Pat *p, int slot);
/* Why p does not match u (the same search as rule_explain's): true with
 * the first match in caps; false with *miss filled. */
bool pattern_explain(const Pat *p, const UOp *u, const UOp **caps, PatternMiss *miss);

#endif
