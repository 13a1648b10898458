/* render.c - infix text of an index/ALU expression in the style of
 * tinygrad's debug renderer (UOp.render without simplification):
 *
 *   DEFINE_VAR, SPECIAL   their name
 *   RANGE                 r<axis ids joined by _> (a negative id n as m<-n>)
 *   CONST, VCONST         the value as Python prints it (3, 1.0, True, Invalid)
 *   binary ops            (a+b) (a*b) (a//b) (a%b) (a<<b) (a>>b) (a<b) (a!=b) (a&b) (a|b) (a^b),
 *                         with the parentheses tinygrad leaves out by precedence
 *   MAX  max(a, b)   WHERE (b if c else a)   NEG (-x)   RECIPROCAL (1/x)
 *   MULACC (a*b+c)   CAST (int)(x)   BIND its variable   UNROLL UNROLL(x, arg)
 *   VECTORIZE {a,b} or {a, ...} when every element is the same node
 *   INDEX                 buf[idx][...]
 *   DEFINE_GLOBAL n       data<n>; DEFINE_LOCAL local<n>; DEFINE_REG reg<n>
 *   anything else         OP(src, ...), or OP(arg) for a node without sources
 *
 * Shared subexpressions are written out at every use, like tinygrad does; a
 * subexpression longer than RENDER_MAX_TEXT characters is written as its
 * node label %<id> instead, so heavily shared graphs stay readable. */
#include "render.h"
#include "../core/ir/range_arg.h"
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { RENDER_MAX_TEXT = 4096 };

static const char *binary_symbol(Op op) {
    switch (op) {
    case OP_ADD: return "+";
    case OP_SUB: return "-";
    case OP_IDIV: return "//";
    case OP_MOD: return "%";
    case OP_SHL: return "<<";
    case OP_SHR: return ">>";
    case OP_MUL: return "*";
    case OP_CMPLT: return "<";
    case OP_CMPNE: return "!=";
    case OP_AND: return "&";
    case OP_OR: return "|";
    case OP_XOR: return "^";
    default: return NULL;
    }
}

/* binding strength, lower binds tighter; 99 for everything else */
static int precedence(Op op) {
    switch (op) {
    case OP_MUL: case OP_IDIV: case OP_MOD: return 1;
    case OP_ADD: case OP_SUB: return 2;
    case OP_SHL: case OP_SHR: return 3;
    case OP_AND: return 4;
    case OP_XOR: return 5;
    case OP_OR: return 6;
    default: return 99;
    }
}

/* whether s (without its outer parentheses) is balanced */
static bool inner_balanced(const char *s, size_t n) {
    int d = 0;
    for (size_t i = 1; i + 1 < n; i++) {
        if (s[i] == '(') d++;
        else if (s[i] == ')' && --d < 0) return false;
    }
    return d == 0;
}

/* appends s, without its outer parentheses when they wrap all of it */
static void put_stripped(StrBuf *sb, const char *s) {
    size_t n = strlen(s);
    if (n >= 2 && s[0] == '(' && s[n - 1] == ')' && inner_balanced(s, n)) sb_putn(sb, s + 1, n - 2);
    else sb_puts(sb, s);
}

/* Python's str() of an arg: strings bare at the top, repr inside tuples */
static void put_python_value(StrBuf *sb, const Arg *a, bool top) {
    if (a && a->kind == ARG_FLOAT) format_python_float(sb, a->v.f);
    else if (a && a->kind == ARG_STR && top) sb_putn(sb, a->v.s, a->n);
    else if (a && a->kind == ARG_TUPLE) {
        sb_putc(sb, '(');
        for (uint32_t i = 0; i < a->n; i++) {
            if (i) sb_puts(sb, ", ");
            put_python_value(sb, a->items[i], false);
        }
        if (a->n == 1) sb_putc(sb, ',');
        sb_putc(sb, ')');
    } else arg_format_python(sb, a);
}

static void put_range_name(StrBuf *sb, const UOp *u) {
    char name[64];
    range_label(u, name, sizeof name);
    sb_puts(sb, name);
}

/* writes the text of u into sb, given the texts of its sources */
static void render_node(StrBuf *sb, const UOp *u, char *const *text, const uint32_t *slot) {
#define SRC(i) text[slot[u->src[i]->id]]
    Op op = uop_op(u);
    const char *sym = binary_symbol(op);
    if (sym && u->nsrc == 2) {
        int p = precedence(op);
        bool strip_l = p != 99 && precedence(uop_op(u->src[0])) <= p;
        bool strip_r = p != 99 && precedence(uop_op(u->src[1])) < p;
        sb_putc(sb, '(');
        if (strip_l) put_stripped(sb, SRC(0)); else sb_puts(sb, SRC(0));
        sb_puts(sb, sym);
        if (strip_r) put_stripped(sb, SRC(1)); else sb_puts(sb, SRC(1));
        sb_putc(sb, ')');
        return;
    }
    switch (op) {
    case OP_DEFINE_VAR:
        if (u->arg && u->arg->kind == ARG_TUPLE && u->arg->n && u->arg->items[0]) put_python_value(sb, u->arg->items[0], true);
        else sb_printf(sb, "var%u", u->id);
        return;
    case OP_SPECIAL: put_python_value(sb, u->arg, true); return;
    case OP_RANGE: put_range_name(sb, u); return;
    case OP_CONST: case OP_VCONST: put_python_value(sb, u->arg, true); return;
    case OP_DEFINE_GLOBAL: case OP_DEFINE_LOCAL: case OP_DEFINE_REG:
        sb_puts(sb, op == OP_DEFINE_GLOBAL ? "data" : op == OP_DEFINE_LOCAL ? "local" : "reg");
        if (u->arg) put_python_value(sb, u->arg, true);
        else sb_printf(sb, "%u", u->id);
        return;
    default: break;
    }
    if (op == OP_CAST && u->nsrc == 1) {
        StrBuf d;
        sb_init(&d);
        dt_format_tinygrad(&d, u->dtype);
        const char *name = sb_str(&d) ? sb_str(&d) : "";
        if (strncmp(name, "dtypes.", 7) == 0) name += 7;
        sb_printf(sb, "(%s)(%s)", name, SRC(0));
        sb_free(&d);
    } else if (op == OP_BIND && u->nsrc >= 1) sb_puts(sb, SRC(0));
    else if (op == OP_NEG && u->nsrc == 1) sb_printf(sb, "(-%s)", SRC(0));
    else if (op == OP_RECIPROCAL && u->nsrc == 1) sb_printf(sb, "(1/%s)", SRC(0));
    else if (op == OP_MAX && u->nsrc == 2) sb_printf(sb, "max(%s, %s)", SRC(0), SRC(1));
    else if (op == OP_MULACC && u->nsrc == 3) sb_printf(sb, "(%s*%s+%s)", SRC(0), SRC(1), SRC(2));
    else if (op == OP_WHERE && u->nsrc == 3) sb_printf(sb, "(%s if %s else %s)", SRC(1), SRC(0), SRC(2));
    else if (op == OP_UNROLL && u->nsrc == 1) {
        sb_printf(sb, "UNROLL(%s, ", SRC(0));
        put_python_value(sb, u->arg, true);
        sb_putc(sb, ')');
    } else if ((op == OP_INDEX || op == OP_BUFFERIZE) && u->nsrc >= 1) {
        sb_puts(sb, SRC(0));
        for (int i = 1; i < u->nsrc; i++) {
            sb_putc(sb, '[');
            put_stripped(sb, SRC(i));
            sb_putc(sb, ']');
        }
    } else if (op == OP_VECTORIZE) {
        bool same = u->nsrc > 0;
        for (int i = 1; i < u->nsrc && same; i++) same = u->src[i] == u->src[0];
        sb_putc(sb, '{');
        if (same) sb_printf(sb, "%s, ...", SRC(0));
        else
            for (int i = 0; i < u->nsrc; i++) sb_printf(sb, "%s%s", i ? "," : "", SRC(i));
        sb_putc(sb, '}');
    } else {
        sb_printf(sb, "%s(", op_name(op));
        if (u->nsrc == 0 && u->arg) put_python_value(sb, u->arg, false);
        for (int i = 0; i < u->nsrc; i++) sb_printf(sb, "%s%s", i ? ", " : "", SRC(i));
        sb_putc(sb, ')');
    }
#undef SRC
}

void uop_render_expr(StrBuf *sb, const UOp *u) {
    if (!u) return;
    size_t n;
    const UOp **order = uop_toposort(u, &n);
    char **text = calloc(n ? n : 1, sizeof *text);
    uint32_t *slot = malloc(((size_t)u->id + 1) * sizeof *slot);
    if (!order || !text || !slot) { sb->oom = true; goto out; }
    for (size_t i = 0; i < n; i++) {
        slot[order[i]->id] = (uint32_t)i;
        StrBuf one;
        sb_init(&one);
        render_node(&one, order[i], text, slot);
        if (one.len > RENDER_MAX_TEXT && i + 1 < n) {
            sb_clear(&one);
            sb_printf(&one, "%%%u", order[i]->id);
        }
        if (one.oom || !(text[i] = sb_take(&one))) { sb_free(&one); sb->oom = true; goto out; }
    }
    sb_puts(sb, text[n - 1]);
out:
    if (text)
        for (size_t i = 0; i < n; i++) free(text[i]);
    free(text);
    free(slot);
    free(order);
}
