/* eval.c - evaluates integer/bool expressions at a point, with the
 * semantics of the generated code: values wrap to their dtype, IDIV
 * truncates toward zero, MOD is the C remainder. */
#include "eval.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../util/strbuf.h"

/* err = fmt with the variable's name in place of its %s, quoted on one line
 * (a name may hold newlines: they are written as escapes) and cut at 60
 * bytes */
static void quoted_name(char *err, size_t errlen, const char *fmt, const Arg *name) {
    StrBuf sb;
    sb_init(&sb);
    sb_putc(&sb, '\'');
    for (uint32_t i = 0; i < name->n && i < 60; i++) {
        unsigned char ch = (unsigned char)name->v.s[i];
        if (ch == '\n') sb_puts(&sb, "\\n");
        else if (ch == '\\' || ch == '\'') sb_putc(&sb, '\\'), sb_putc(&sb, (char)ch);
        else if (ch < 32 || ch == 127) sb_printf(&sb, "\\x%02x", ch);
        else sb_putc(&sb, (char)ch);
    }
    sb_puts(&sb, name->n > 60 ? "...'" : "'");
    snprintf(err, errlen, fmt, sb_str(&sb));
    sb_free(&sb);
}

static bool lookup(const EvalBinding *b, size_t nb, const char *name, size_t len, int64_t *out) {
    for (size_t i = 0; i < nb; i++)
        if (strlen(b[i].name) == len && strncmp(b[i].name, name, len) == 0) { *out = b[i].value; return true; }
    return false;
}

/* id -> position in the toposort, as a small open-addressing map */
typedef struct IdMap { uint32_t *keys; size_t *vals; size_t mask; } IdMap;

static bool idmap_init(IdMap *m, size_t n) {
    size_t cap = 16;
    while (cap < n * 2) cap *= 2;
    m->keys = malloc(cap * sizeof *m->keys);
    m->vals = malloc(cap * sizeof *m->vals);
    m->mask = cap - 1;
    if (!m->keys || !m->vals) return false;
    memset(m->keys, 0xff, cap * sizeof *m->keys);
    return true;
}
static void idmap_put(IdMap *m, uint32_t k, size_t v) {
    size_t i = (k * 2654435761u) & m->mask;
    while (m->keys[i] != UINT32_MAX) i = (i + 1) & m->mask;
    m->keys[i] = k;
    m->vals[i] = v;
}
static size_t idmap_get(const IdMap *m, uint32_t k) {
    size_t i = (k * 2654435761u) & m->mask;
    while (m->keys[i] != k) i = (i + 1) & m->mask;
    return m->vals[i];
}

/* A division by zero makes its result "poisoned" rather than failing at
 * once: WHERE may discard it (where(x != 0, 10 // x, 0) is fine at x = 0).
 * Only a poisoned root is an error. */
static bool eval_node(const UOp *u, const int64_t *sv, const bool *sp, bool *poison, const EvalBinding *b, size_t nb,
                      int64_t *out, char *err, size_t errlen) {
    const DType *dt = u->dtype;
    Op op = uop_op(u);
    if (dt_is_ptr(dt) || (!dt_is_int(dt) && !dt_is_bool(dt))) {
        snprintf(err, errlen, "node %%%u (%s) is not an integer or bool expression", u->id, op_name(op));
        return false;
    }
    int64_t a = u->nsrc > 0 ? sv[0] : 0, c = u->nsrc > 1 ? sv[1] : 0;
    uint64_t ua = (uint64_t)a, uc = (uint64_t)c;
    int64_t r;
    *poison = false;
    if (op == OP_WHERE) {
        *poison = sp[0] || (a ? sp[1] : sp[2]);
    } else {
        for (int k = 0; k < u->nsrc && k < 3; k++) *poison |= sp[k];
    }
    switch (op) {
    case OP_CONST:
        if (u->arg->kind == ARG_INT) r = u->arg->v.i;
        else if (u->arg->kind == ARG_BOOL) r = u->arg->v.b;
        else { snprintf(err, errlen, "node %%%u: CONST without an integer value", u->id); return false; }
        break;
    case OP_DEFINE_VAR: {
        const Arg *name = u->arg->items[0];
        if (!lookup(b, nb, name->v.s, name->n, &r)) {
            quoted_name(err, errlen, "variable %s has no value", name);
            return false;
        }
        int64_t lo = u->arg->items[1]->kind == ARG_INT ? u->arg->items[1]->v.i : INT64_MIN;
        int64_t hi = u->arg->items[2]->kind == ARG_INT ? u->arg->items[2]->v.i : INT64_MAX;
        if (r < lo || r > hi) {
            char what[96];
            snprintf(what, sizeof what, "value %lld of %%s is outside its bounds [%lld, %lld]", (long long)r,
                     (long long)lo, (long long)hi);
            quoted_name(err, errlen, what, name);
            return false;
        }
        break;
    }
    case OP_SPECIAL:
        if (!u->arg || u->arg->kind != ARG_STR || !lookup(b, nb, u->arg->v.s, u->arg->n, &r)) {
            snprintf(err, errlen, "SPECIAL %%%u has no value", u->id);
            return false;
        }
        break;
    case OP_RANGE: {
        char name[32];
        snprintf(name, sizeof name, "r%lld", (long long)u->arg->items[0]->v.i);
        if (!lookup(b, nb, name, strlen(name), &r)) {
            snprintf(err, errlen, "range %s has no value", name);
            return false;
        }
        break;
    }
    case OP_BIND: r = c; break;
    case OP_CAST: r = a; break;
    case OP_NEG: r = (int64_t)(0 - ua); break;
    case OP_ADD: r = (int64_t)(ua + uc); break;
    case OP_SUB: r = (int64_t)(ua - uc); break;
    case OP_MUL: r = (int64_t)(ua * uc); break;
    case OP_IDIV:
    case OP_MOD:
        if (c == 0) { *poison = true; r = 0; break; }
        if (dt_is_unsigned(dt)) r = (int64_t)(op == OP_IDIV ? ua / uc : ua % uc);
        else if (a == INT64_MIN && c == -1) r = op == OP_IDIV ? INT64_MIN : 0;
        else r = op == OP_IDIV ? a / c : a % c;
        break;
    case OP_MAX: r = dt_is_unsigned(dt) ? (int64_t)(ua > uc ? ua : uc) : (a > c ? a : c); break;
    case OP_CMPLT:
        r = dt_is_unsigned(u->src[0]->dtype) ? ua < uc : a < c;
        break;
    case OP_CMPNE: r = a != c; break;
    case OP_CMPEQ: r = a == c; break;
    case OP_AND: r = a & c; break;
    case OP_OR: r = a | c; break;
    case OP_XOR: r = a ^ c; break;
    /* the amount modulo the bit width (dt_shift_amount) */
    case OP_SHL: r = (int64_t)(ua << dt_shift_amount(dt, uc)); break;
    case OP_SHR: r = dt_is_unsigned(dt) ? (int64_t)(ua >> dt_shift_amount(dt, uc)) : a >> dt_shift_amount(dt, uc); break;
    case OP_WHERE: r = a ? sv[1] : sv[2]; break;
    case OP_MULACC: r = (int64_t)(ua * uc + (uint64_t)sv[2]); break;
    default:
        snprintf(err, errlen, "cannot evaluate %s (node %%%u) as integer arithmetic", op_name(op), u->id);
        return false;
    }
    *out = dt_wrap_int(dt, r);
    return true;
}

bool uop_eval_int(const UOp *u, const EvalBinding *b, size_t nb, int64_t *out, char *err, size_t errlen) {
    char dummy[8];
    if (!err || !errlen) { err = dummy; errlen = sizeof dummy; }
    err[0] = 0;
    size_t n;
    const UOp **topo = uop_toposort(u, &n);
    int64_t *vals = topo ? malloc(n * sizeof *vals) : NULL;
    bool *poison = topo ? malloc(n * sizeof *poison) : NULL;
    IdMap m = {0};
    bool ok = vals && poison && idmap_init(&m, n);
    if (!ok) snprintf(err, errlen, "out of memory");
    for (size_t i = 0; ok && i < n; i++) {
        const UOp *x = topo[i];
        int64_t sv[3] = {0, 0, 0};
        bool sp[3] = {false, false, false};
        for (int k = 0; k < x->nsrc && k < 3; k++) {
            size_t at = idmap_get(&m, x->src[k]->id);
            sv[k] = vals[at];
            sp[k] = poison[at];
        }
        if (x->nsrc > 3 && op_is_alu(uop_op(x))) { snprintf(err, errlen, "node %%%u has too many sources", x->id); ok = false; break; }
        ok = eval_node(x, sv, sp, &poison[i], b, nb, &vals[i], err, errlen);
        idmap_put(&m, x->id, i);
    }
    if (ok && poison[n - 1]) {
        /* name the first division by zero */
        for (size_t i = 0; i < n; i++) {
            Op o = uop_op(topo[i]);
            if ((o == OP_IDIV || o == OP_MOD) && poison[i]) {
                snprintf(err, errlen, "division by zero at node %%%u (%s)", topo[i]->id, op_name(o));
                break;
            }
        }
        ok = false;
    }
    if (ok) *out = vals[n - 1];
    free(poison);
    free(m.keys);
    free(m.vals);
    free(vals);
    free(topo);
    return ok;
}
