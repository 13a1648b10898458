/* arg.c - interned UOp args and their two spellings (uopdb and Python). */
#include "uctx_internal.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *axis_names[AXIS_COUNT] = {
#define X(n, letter) #n,
    AXIS_TYPES(X)
#undef X
};
static const char axis_letters[AXIS_COUNT] = {
#define X(n, letter) letter,
    AXIS_TYPES(X)
#undef X
};

const char *axis_name(AxisType a) { return (unsigned)a < AXIS_COUNT ? axis_names[a] : "?"; }
char axis_letter(AxisType a) { return (unsigned)a < AXIS_COUNT ? axis_letters[a] : '?'; }
bool axis_from_name(const char *s, AxisType *out) {
    if (strncmp(s, "AxisType.", 9) == 0) s += 9;
    for (int i = 0; i < AXIS_COUNT; i++)
        if (strcmp(s, axis_names[i]) == 0) { *out = (AxisType)i; return true; }
    return false;
}

static uint64_t mix(uint64_t h, uint64_t v) {
    h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
    h *= 0xff51afd7ed558ccdull;
    return h ^ (h >> 33);
}

static uint64_t arg_hash(const Arg *a) {
    uint64_t h = mix(0x1234567, (uint64_t)a->kind);
    switch (a->kind) {
    case ARG_INT: h = mix(h, (uint64_t)a->v.i); break;
    case ARG_FLOAT: { uint64_t b; memcpy(&b, &a->v.f, 8); h = mix(h, b); break; }
    case ARG_BOOL: h = mix(h, a->v.b); break;
    case ARG_STR: for (uint32_t i = 0; i < a->n; i++) h = mix(h, (unsigned char)a->v.s[i]); break;
    case ARG_OP: h = mix(h, (uint64_t)a->v.op); break;
    case ARG_AXIS: h = mix(h, (uint64_t)a->v.axis); break;
    case ARG_DTYPE: h = mix(h, (uint64_t)(uintptr_t)a->v.dt); break;
    case ARG_INVALID: break;
    case ARG_TUPLE:
        for (uint32_t i = 0; i < a->n; i++) h = mix(h, a->items[i] ? a->items[i]->hash : 7);
        break;
    }
    return h;
}

/* equality of two args whose tuple items are interned in the same context */
static bool arg_same_shallow(const Arg *a, const Arg *b) {
    if (a->kind != b->kind || a->n != b->n) return false;
    switch (a->kind) {
    case ARG_INT: return a->v.i == b->v.i;
    case ARG_FLOAT: return memcmp(&a->v.f, &b->v.f, 8) == 0;
    case ARG_BOOL: return a->v.b == b->v.b;
    case ARG_STR: return memcmp(a->v.s, b->v.s, a->n) == 0;
    case ARG_OP: return a->v.op == b->v.op;
    case ARG_AXIS: return a->v.axis == b->v.axis;
    case ARG_DTYPE: return a->v.dt == b->v.dt;
    case ARG_INVALID: return true;
    case ARG_TUPLE:
        for (uint32_t i = 0; i < a->n; i++)
            if (a->items[i] != b->items[i]) return false;
        return true;
    }
    return false;
}

bool arg_equal(const Arg *a, const Arg *b) {
    if (a == b) return true;
    if (!a || !b || a->hash != b->hash || a->kind != b->kind || a->n != b->n) return false;
    if (a->kind != ARG_TUPLE) return arg_same_shallow(a, b);
    for (uint32_t i = 0; i < a->n; i++)
        if (!arg_equal(a->items[i], b->items[i])) return false;
    return true;
}


static const Arg *intern(UCtx *c, const Arg *key, const Arg *const *items) {
    PtrTable *t = &c->args;
    if ((t->count + 1) * 4 > t->cap * 3 && !ptrtable_grow(t)) {
        uctx_set_error(c, "out of memory");
        return NULL;
    }
    size_t mask = t->cap - 1;
    for (size_t i = key->hash & mask;; i = (i + 1) & mask) {
        const Arg *e = t->slots[i].p;
        if (!e) {
            Arg *a = arena_alloc(&c->arena, sizeof(Arg) + (key->kind == ARG_TUPLE ? key->n : 0) * sizeof(Arg *));
            if (!a) { uctx_set_error(c, "out of memory"); return NULL; }
            memcpy(a, key, sizeof(Arg));
            if (key->kind == ARG_TUPLE) memcpy((void *)a->items, items, key->n * sizeof(Arg *));
            if (key->kind == ARG_STR) {
                char *s = arena_alloc(&c->arena, key->n + 1);
                if (!s) { uctx_set_error(c, "out of memory"); return NULL; }
                memcpy(s, key->v.s, key->n);
                a->v.s = s;
            }
            t->slots[i] = (PtrSlot){key->hash, a};
            t->count++;
            return a;
        }
        if (t->slots[i].hash == key->hash && e->kind == key->kind && e->n == key->n) {
            if (key->kind == ARG_TUPLE) {
                bool same = true;
                for (uint32_t k = 0; k < key->n && same; k++) same = e->items[k] == items[k];
                if (same) return e;
            } else if (arg_same_shallow(e, key)) return e;
        }
    }
}

static const Arg *intern_scalar(UCtx *c, Arg *k) {
    k->hash = arg_hash(k);
    return intern(c, k, NULL);
}

const Arg *arg_int(UCtx *c, int64_t v) { Arg k = {.kind = ARG_INT}; k.v.i = v; return intern_scalar(c, &k); }
const Arg *arg_float(UCtx *c, double v) {
    Arg k = {.kind = ARG_FLOAT};
    k.v.f = isnan(v) ? NAN : v;
    return intern_scalar(c, &k);
}
const Arg *arg_bool(UCtx *c, bool v) { Arg k = {.kind = ARG_BOOL}; k.v.b = v; return intern_scalar(c, &k); }
const Arg *arg_strn(UCtx *c, const char *s, size_t n) {
    Arg k = {.kind = ARG_STR};
    k.v.s = s;
    k.n = (uint32_t)n;
    return intern_scalar(c, &k);
}
const Arg *arg_str(UCtx *c, const char *s) { return arg_strn(c, s, strlen(s)); }
const Arg *arg_op(UCtx *c, Op op) { Arg k = {.kind = ARG_OP}; k.v.op = op; return intern_scalar(c, &k); }
const Arg *arg_axis(UCtx *c, AxisType a) { Arg k = {.kind = ARG_AXIS}; k.v.axis = a; return intern_scalar(c, &k); }
const Arg *arg_dtype(UCtx *c, const DType *dt) { Arg k = {.kind = ARG_DTYPE}; k.v.dt = dt; return intern_scalar(c, &k); }
const Arg *arg_invalid(UCtx *c) { Arg k = {.kind = ARG_INVALID}; return intern_scalar(c, &k); }

const Arg *arg_tuple(UCtx *c, const Arg *const *items, uint32_t n) {
    Arg k = {.kind = ARG_TUPLE, .n = n};
    uint64_t h = mix(0x1234567, (uint64_t)ARG_TUPLE);
    for (uint32_t i = 0; i < n; i++) h = mix(h, items[i] ? items[i]->hash : 7);
    k.hash = h;
    return intern(c, &k, items);
}

const Arg *arg_import(UCtx *c, const Arg *a) {
    if (!a) return NULL;
    switch (a->kind) {
    case ARG_INT: return arg_int(c, a->v.i);
    case ARG_FLOAT: return arg_float(c, a->v.f);
    case ARG_BOOL: return arg_bool(c, a->v.b);
    case ARG_STR: return arg_strn(c, a->v.s, a->n);
    case ARG_OP: return arg_op(c, a->v.op);
    case ARG_AXIS: return arg_axis(c, a->v.axis);
    case ARG_DTYPE: return arg_dtype(c, a->v.dt);
    case ARG_INVALID: return arg_invalid(c);
    case ARG_TUPLE: {
        const Arg *stack_items[16];
        const Arg **items = a->n <= 16 ? stack_items : malloc(a->n * sizeof *items);
        if (!items) return NULL;
        const Arg *r = NULL;
        uint32_t i = 0;
        for (; i < a->n; i++) {
            items[i] = arg_import(c, a->items[i]);
            if (a->items[i] && !items[i]) break;
        }
        if (i == a->n) r = arg_tuple(c, items, a->n);
        if (items != stack_items) free(items);
        return r;
    }
    }
    return NULL;
}

/* Shortest text that reads back to the same double, written as Python's
 * repr does: plain digits while the exponent is in [-4, 16), scientific
 * notation outside, and always recognisably a float ("1.0", not "1"). */
void format_python_float(StrBuf *sb, double f) {
    if (isnan(f)) { sb_puts(sb, "nan"); return; }
    if (isinf(f)) { sb_puts(sb, f < 0 ? "-inf" : "inf"); return; }
    char sci[40];
    int prec = 0;
    for (; prec < 17; prec++) {
        snprintf(sci, sizeof sci, "%.*e", prec, f);
        if (strtod(sci, NULL) == f) break;
    }
    /* sci is [-]d.ddde[+-]XX with prec+1 significant digits */
    int exp10 = atoi(strchr(sci, 'e') + 1);
    char buf[400];
    if (exp10 < -4 || exp10 >= 16) {
        /* mantissa without trailing zeros, exponent with at least 2 digits */
        char mant[40];
        size_t mlen = (size_t)(strchr(sci, 'e') - sci);
        memcpy(mant, sci, mlen);
        mant[mlen] = 0;
        if (strchr(mant, '.')) {
            while (mant[strlen(mant) - 1] == '0') mant[strlen(mant) - 1] = 0;
            if (mant[strlen(mant) - 1] == '.') mant[strlen(mant) - 1] = 0;
        }
        snprintf(buf, sizeof buf, "%se%c%02d", mant, exp10 < 0 ? '-' : '+', exp10 < 0 ? -exp10 : exp10);
    } else {
        int decimals = prec - exp10;
        snprintf(buf, sizeof buf, "%.*f", decimals > 0 ? decimals : 0, f);
        if (!strchr(buf, '.')) strcat(buf, ".0");
    }
    sb_puts(sb, buf);
}

static void format_string(StrBuf *sb, const Arg *a, char quote) {
    sb_putc(sb, quote);
    for (uint32_t i = 0; i < a->n; i++) {
        unsigned char ch = (unsigned char)a->v.s[i];
        if (ch == (unsigned char)quote || ch == '\\') { sb_putc(sb, '\\'); sb_putc(sb, (char)ch); }
        else if (ch == '\n') sb_puts(sb, "\\n");
        else if (ch == '\t') sb_puts(sb, "\\t");
        else if (ch < 32 || ch == 127) sb_printf(sb, "\\x%02x", ch);
        else sb_putc(sb, (char)ch);
    }
    sb_putc(sb, quote);
}

static void format_any(StrBuf *sb, const Arg *a, bool py) {
    if (!a) { sb_puts(sb, "None"); return; }
    switch (a->kind) {
    case ARG_INT: sb_printf(sb, "%lld", (long long)a->v.i); break;
    case ARG_FLOAT: format_python_float(sb, a->v.f); break;
    case ARG_BOOL: sb_puts(sb, a->v.b ? (py ? "True" : "true") : (py ? "False" : "false")); break;
    case ARG_STR: {
        /* Python prefers single quotes unless the text has one and no double quote */
        char q = '"';
        if (py) q = (memchr(a->v.s, '\'', a->n) && !memchr(a->v.s, '"', a->n)) ? '"' : '\'';
        format_string(sb, a, q);
        break;
    }
    case ARG_OP: sb_printf(sb, "Ops.%s", op_name(a->v.op)); break;
    case ARG_AXIS: sb_printf(sb, py ? "AxisType.%s" : "%s", axis_name(a->v.axis)); break;
    case ARG_DTYPE: if (py) dt_format_tinygrad(sb, a->v.dt); else dt_format(sb, a->v.dt); break;
    case ARG_INVALID: sb_puts(sb, "Invalid"); break;
    case ARG_TUPLE:
        sb_putc(sb, '(');
        for (uint32_t i = 0; i < a->n; i++) {
            if (i) sb_puts(sb, ", ");
            format_any(sb, a->items[i], py);
        }
        if (a->n == 1) sb_putc(sb, ',');
        sb_putc(sb, ')');
        break;
    }
}

void arg_format(StrBuf *sb, const Arg *a) { format_any(sb, a, false); }
void arg_format_python(StrBuf *sb, const Arg *a) { format_any(sb, a, true); }
