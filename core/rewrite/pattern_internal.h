/* pattern_internal.h - the compiled form of patterns and templates, shared by
 * the rule-language parser (pattern.c), templates (template.c), rules
 * (rule.c) and graph_rewrite (rewrite.c).  Not part of the public API. */
#ifndef UOPDB_PATTERN_INTERNAL_H
#define UOPDB_PATTERN_INTERNAL_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "pattern.h"

#define PAT_MAX_SRCS 32    /* sources written in one pattern node */
#define PAT_MAX_DTYPES 8   /* non-scalar dtypes in one :{...} set */
#define PAT_MAX_PREDS 4    /* ?pred filters on one node */

typedef enum PNodeKind {
    PN_ANY,   /* _, x, x:ints: any node (with optional dtype filter) */
    PN_NODE,  /* (OP ...), {OPS}, [OP ...] */
    PN_CONST, /* 0, 1.5, true, Invalid, (CONST 0) */
} PNodeKind;

/* One node of a parsed pattern or template. */
typedef struct PNode {
    PNodeKind kind;
    int pos;                  /* offset in the source text, for errors */
    int end;                  /* where the node's text ends (pos..end is the sub-pattern) */
    int cap;                  /* capture slot, -1 if not captured */
    bool has_ops;             /* op filter present */
    OpSet ops;
    int nops;                 /* ops in the filter */
    Op first_op;              /* the op when nops == 1 (templates) */
    /* dtype filter: scalar kinds (a vec matches by its scalar) and exact
     * non-scalar dtypes */
    bool has_dtype;
    uint32_t sk_mask;
    const DType *dts[PAT_MAX_DTYPES];
    int ndts;
    const DType *explicit_dtype; /* the single dtype written, for templates */
    /* sources */
    bool src_given;           /* parentheses with a source list (even empty) */
    bool any_order;           /* [OP a b]: any permutation */
    bool more;                /* "..." after the sources */
    struct PNode *repeat;     /* *s: every source matches this */
    struct PNode *src[PAT_MAX_SRCS];
    int nsrc;
    /* arg=... */
    bool has_arg;
    const Arg *arg;           /* NULL with has_arg: None */
    /* constant value (PN_CONST) */
    const Arg *cval;
    /* ?pred */
    NodePredFn preds[PAT_MAX_PREDS];
    int npreds;
    bool subtree_caps;        /* this node or one below it captures */
} PNode;

struct Pat {
    char *text;               /* as written, for explaining a failed match */
    PNode *root;
    char *names[PAT_MAX_CAPTURES];
    int ncap;
    bool root_any_op;         /* root can be any op */
    OpSet root_ops;           /* else the ops the root can be */
    bool flat;                /* one node whose sources have no sources of their own (pattern.c: match_flat) */
};

/* Parses rule-language text.  Capture names are added to names/ncap.  On
 * error returns NULL and writes "line L, column C: <what>" into err. */
PNode *pnode_parse(const char *text, char **names, int *ncap, char *err, size_t errlen);
void pnode_free(PNode *n);
/* "line L, column C" for an offset in text */
void text_position(const char *text, int pos, int *line, int *col);

/* The shared context that owns the args of every compiled pattern. */
UCtx *pattern_arg_ctx_acquire(void);
void pattern_arg_ctx_release(void);

/* Full match of p against u.  accept (may be NULL) is called on every
 * complete match, in the order tinygrad would try them; returning false
 * makes the matcher look for another way to match.  caps has
 * PAT_MAX_CAPTURES entries and is filled with the accepted match; bit i of
 * bound says whether slot i is bound (a capture under "*s" with no sources
 * is not). */
typedef bool (*MatchAcceptFn)(const UOp **caps, uint32_t bound, void *ud);
bool pat_match_with(const Pat *p, const UOp *u, const UOp **caps, MatchAcceptFn accept, void *ud);

/* Where a match that failed got furthest: the sub-pattern that did not
 * match, the node it was tried on and what was wrong.  Of every way the
 * matcher tried (both orders of a commutative node, every permutation of
 * [...]), the one that matched the most pattern nodes first is kept; the
 * first of those on a tie, in tinygrad's order. */
typedef enum PatMissKind {
    PAT_MISS_NODE,     /* the node's op, value, dtype, arg or a ?predicate */
    PAT_MISS_CAPTURE,  /* a capture named twice would bind two nodes */
    PAT_MISS_SOURCES   /* the node has the wrong number of sources */
} PatMissKind;
typedef struct PatMiss {
    PatMissKind kind;
    const PNode *p;
    const UOp *u;
    const UOp *bound;  /* PAT_MISS_CAPTURE: what the capture is already */
    int progress;      /* pattern nodes matched before the miss */
} PatMiss;
/* True with the first complete match in caps (no accept function: the
 * pattern alone), else false with *miss filled. */
bool pat_explain(const Pat *p, const UOp *u, const UOp **caps, PatMiss *miss);
/* The missing sub-pattern as written, and what was wrong as a phrase:
 * "wants IDIV or MOD, it is ADD". */
void pat_miss_describe(const Pat *p, const PatMiss *m, char *sub, size_t sublen, char *why, size_t whylen);
/* A necessary condition for p to match u, from u's op, its source count and
 * its first sources' ops alone (the first check pat_match_with makes). */
bool pat_could_match(const Pat *p, const UOp *u);

/* ---- templates ---- */
struct Template {
    PNode *root;
    int slot_of[PAT_MAX_CAPTURES]; /* template capture index -> pattern slot */
    char *names[PAT_MAX_CAPTURES];
    int ncap;
};
Template *template_compile(const char *text, const Pat *pat, char *err, size_t errlen);
void template_free(Template *t);
/* Builds the replacement in c; NULL with the reason in c's error. */
const UOp *template_instantiate(const Template *t, UCtx *c, const UOp *root, const UOp *const *caps);

/* ---- rules and rule sets ---- */
struct Rule {
    int refs;
    char *name, *file;
    int line;
    Pat *pat;
    Template *tmpl;
    RewriteFn fn;
    void *ud;
    void (*ud_free)(void *ud);
    RuleWhenFn when;
    RuleStats stats;
    const char *seen_name[PAT_MAX_CAPTURES]; /* match_get: the name last looked up for each slot */
};

/* The rules whose pattern can match a node of this op, in set order. */
Rule *const *ruleset_rules_for_op(const RuleSet *rs, Op op, int *n);
/* Which of those rules could match u itself: bit i for rule i, set when
 * pat_could_match holds.  It depends only on u's op, source count and
 * sources' ops, so it is cached per thread by that shape; all bits are set
 * where it is not worked out (more than 3 sources, more than 64 rules). */
uint64_t ruleset_shape_mask(const RuleSet *rs, const UOp *u);

/* ---- the state of one running rewrite, for rewrite_fail ---- */
struct RewriteRun {
    UCtx *ctx;
    bool failed;
};

#endif
