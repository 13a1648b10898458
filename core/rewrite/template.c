/* template.c - rewrite templates: the right-hand side of a rule written in
 * the rule language, e.g. "(MUL x 2)".  Captures of the rule's pattern are
 * substituted; new nodes are built with uop_new (so an ill-formed result is
 * an error, not a bad graph).
 *
 * The dtype of a new node: its :dtype if written; for ALU ops, inferred from
 * the sources (comparisons give bool with the operands' vector count, WHERE
 * gives its branches' dtype, the others their first non-constant source's
 * dtype); otherwise the dtype of the matched root.
 * The dtype of a constant (a bare number or (CONST v)): its :dtype if
 * written; else what its place asks for (the other operand of an ALU op, the
 * branch type of WHERE, bool for WHERE's condition); else bool for true and
 * false; else the matched root's dtype unless that is bool or void; else
 * float32 for a float literal and int32 for an integer. */
#include "pattern_internal.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool tmpl_error(const char *text, const PNode *n, char *err, size_t errlen, const char *what,
                       const char *name) {
    int line, col;
    text_position(text, n->pos, &line, &col);
    if (err && errlen) snprintf(err, errlen, "template line %d, column %d: %s%s%s%s", line, col, what,
                                name ? " '" : "", name ? name : "", name ? "'" : "");
    return false;
}

static bool validate(const char *text, const PNode *n, Template *t, const Pat *pat, char *err, size_t errlen) {
    switch (n->kind) {
    case PN_ANY:
        if (n->cap < 0) return tmpl_error(text, n, err, errlen, "'_' cannot appear in a template", NULL);
        if (n->has_dtype) return tmpl_error(text, n, err, errlen, "a capture in a template cannot carry a dtype; use (CAST x:dtype) or a :dtype on a new node", NULL);
        if (t->slot_of[n->cap] < 0)
            return tmpl_error(text, n, err, errlen, "the pattern does not capture", t->names[n->cap]);
        return true;
    case PN_CONST:
        if (n->cap >= 0) return tmpl_error(text, n, err, errlen, "captures (x@...) are not allowed in a template", NULL);
        if (n->has_dtype && !n->explicit_dtype)
            return tmpl_error(text, n, err, errlen, "a template constant needs one dtype, not a set", NULL);
        return true;
    case PN_NODE:
        break;
    }
    if (n->cap >= 0) return tmpl_error(text, n, err, errlen, "captures (x@...) are not allowed in a template", NULL);
    if (n->nops != 1) return tmpl_error(text, n, err, errlen, "a template node needs exactly one op", NULL);
    if (n->any_order) return tmpl_error(text, n, err, errlen, "[any order] sources are not allowed in a template", NULL);
    if (n->more || n->repeat) return tmpl_error(text, n, err, errlen, "'...' and '*' are not allowed in a template", NULL);
    if (n->npreds) return tmpl_error(text, n, err, errlen, "?predicates are not allowed in a template", NULL);
    if (n->has_dtype && !n->explicit_dtype)
        return tmpl_error(text, n, err, errlen, "a template node needs one dtype, not a set", NULL);
    for (int i = 0; i < n->nsrc; i++)
        if (!validate(text, n->src[i], t, pat, err, errlen)) return false;
    return true;
}

Template *template_compile(const char *text, const Pat *pat, char *err, size_t errlen) {
    Template *t = calloc(1, sizeof *t);
    if (!t) {
        if (err && errlen) snprintf(err, errlen, "out of memory");
        return NULL;
    }
    t->root = pnode_parse(text, t->names, &t->ncap, err, errlen);
    if (!t->root) {
        if (err && errlen && strncmp(err, "line", 4) == 0) {
            char tmp[512];
            snprintf(tmp, sizeof tmp, "template %s", err);
            snprintf(err, errlen, "%s", tmp);
        }
        for (int i = 0; i < t->ncap; i++) free(t->names[i]);
        free(t);
        return NULL;
    }
    for (int i = 0; i < t->ncap; i++) t->slot_of[i] = pattern_capture_slot(pat, t->names[i]);
    if (!validate(text, t->root, t, pat, err, errlen)) {
        template_free(t);
        return NULL;
    }
    return t;
}

void template_free(Template *t) {
    if (!t) return;
    pnode_free(t->root);
    for (int i = 0; i < t->ncap; i++) free(t->names[i]);
    free(t);
    pattern_arg_ctx_release();
}

typedef struct Build {
    const Template *t;
    UCtx *c;
    const UOp *root;
    const UOp *const *caps;
} Build;

static const UOp *build(const Build *b, const PNode *n, const DType *hint);

static const UOp *build_const(const Build *b, const PNode *n, const DType *hint) {
    const Arg *v = n->cval;
    const DType *dt = n->explicit_dtype;
    if (!dt) dt = hint;
    if (!dt && v->kind == ARG_BOOL) dt = DT_BOOL;
    if (!dt && !dt_is_bool(b->root->dtype) && b->root->dtype->sk != SK_VOID) dt = b->root->dtype;
    if (!dt) dt = v->kind == ARG_FLOAT ? DT_FLOAT32 : DT_INT32;
    switch (v->kind) {
    case ARG_INT: return uop_const_int(b->c, dt, v->v.i);
    case ARG_BOOL: return uop_const_int(b->c, dt, v->v.b);
    case ARG_FLOAT: return uop_const_float(b->c, dt, v->v.f);
    default: return uop_const_arg(b->c, dt, arg_invalid(b->c));
    }
}

static const UOp *build_node(const Build *b, const PNode *n) {
    Op op = n->first_op;
    const UOp *src[PAT_MAX_SRCS] = {0};
    const UOp *operand = NULL; /* first non-constant source */
    for (int i = 0; i < n->nsrc; i++) {
        if (n->src[i]->kind == PN_CONST) continue;
        if (!(src[i] = build(b, n->src[i], NULL))) return NULL;
        if (!operand && !(op == OP_WHERE && i == 0)) operand = src[i];
    }
    const DType *dt = n->explicit_dtype;
    bool alu = op_is_alu(op);
    bool cmp = op_is(op, OPF_COMPARISON);
    if (!dt && alu && operand) {
        dt = cmp ? dt_vec(DT_BOOL, operand->dtype->count) : operand->dtype;
    }
    if (!dt) dt = b->root->dtype;
    for (int i = 0; i < n->nsrc; i++) {
        if (n->src[i]->kind != PN_CONST) continue;
        const DType *hint = NULL;
        if (alu) {
            if (op == OP_WHERE && i == 0) hint = DT_BOOL;
            else if (cmp) hint = operand ? operand->dtype : NULL;
            else if (op != OP_CAST && op != OP_BITCAST) hint = dt;
        }
        if (!(src[i] = build(b, n->src[i], hint))) return NULL;
    }
    const Arg *arg = NULL;
    if (n->has_arg && n->arg && !(arg = arg_import(b->c, n->arg))) return NULL;
    return uop_new(b->c, op, dt, src, n->nsrc, arg);
}

static const UOp *build(const Build *b, const PNode *n, const DType *hint) {
    switch (n->kind) {
    case PN_ANY: {
        const UOp *u = b->caps[b->t->slot_of[n->cap]];
        if (!u) uctx_set_error(b->c, "capture '%s' is not bound", b->t->names[n->cap]);
        return u;
    }
    case PN_CONST: return build_const(b, n, hint);
    case PN_NODE: return build_node(b, n);
    }
    return NULL;
}

const UOp *template_instantiate(const Template *t, UCtx *c, const UOp *root, const UOp *const *caps) {
    Build b = {.t = t, .c = c, .root = root, .caps = caps};
    return build(&b, t->root, NULL);
}
