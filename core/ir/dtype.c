/* dtype.c - interned data types and tinygrad's promotion lattice. */
#include "dtype.h"
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <ctype.h>
#include <strings.h>

static const struct { const char *name; int prio; int bits; } sk_info[SK_COUNT] = {
#define X(E, n, prio, bits) {#n, prio, bits},
    SCALAR_KINDS(X)
#undef X
};

static DType scalars[SK_COUNT];
static pthread_once_t scalars_once = PTHREAD_ONCE_INIT;

static void init_scalars(void) {
    for (int i = 0; i < SK_COUNT; i++) {
        DType *d = &scalars[i];
        d->kind = DTK_SCALAR;
        d->sk = (ScalarKind)i;
        d->count = 1;
        d->scalar = d;
        d->base = d;
        d->size = -1;
        d->v = 1;
        d->ptr_scalar = d;
    }
}

const DType *dt_scalar(ScalarKind sk) {
    pthread_once(&scalars_once, init_scalars);
    return (unsigned)sk < SK_COUNT ? &scalars[sk] : NULL;
}

/* Derived (vector and pointer) types live in one process-wide hash table.
 * They are few (one per distinct buffer size at most) and never freed. */
typedef struct DerivedNode { DType dt; struct DerivedNode *next; } DerivedNode;
#define DERIVED_BUCKETS 1024
static DerivedNode *derived[DERIVED_BUCKETS];
static pthread_mutex_t derived_lock = PTHREAD_MUTEX_INITIALIZER;

/* identity of a derived type: vec = (scalar kind, count);
 * ptr = (pointee, address space, size, pointer-vector width) */
static unsigned derived_hash(const DType *k) {
    uint64_t h = (uint64_t)k->kind * 0x9E3779B97F4A7C15ull + (uint64_t)k->sk * 131 + (uint64_t)k->count * 7;
    if (k->kind == DTK_PTR)
        h ^= (uint64_t)(uintptr_t)k->base * 31 + (uint64_t)k->addrspace * 1009 +
             (uint64_t)k->size * 0xff51afd7ed558ccdull + (uint64_t)k->v * 17;
    return (unsigned)((h ^ (h >> 29)) % DERIVED_BUCKETS);
}

static bool derived_same(const DType *a, const DType *b) {
    if (a->kind != b->kind || a->sk != b->sk || a->count != b->count) return false;
    if (a->kind == DTK_VEC) return true;
    return a->base == b->base && a->addrspace == b->addrspace && a->size == b->size && a->v == b->v;
}

static const DType *intern_derived(DType key) {
    unsigned h = derived_hash(&key);
    pthread_mutex_lock(&derived_lock);
    for (DerivedNode *n = derived[h]; n; n = n->next)
        if (derived_same(&n->dt, &key)) { pthread_mutex_unlock(&derived_lock); return &n->dt; }
    DerivedNode *n = malloc(sizeof *n);
    if (!n) { pthread_mutex_unlock(&derived_lock); return NULL; }
    n->dt = key;
    /* self references are patched after placement */
    if (key.kind == DTK_VEC) n->dt.base = &n->dt;
    if (key.kind == DTK_PTR && key.v == 1) n->dt.ptr_scalar = &n->dt;
    n->next = derived[h];
    derived[h] = n;
    pthread_mutex_unlock(&derived_lock);
    return &n->dt;
}

/* When the library is unloaded (a Lua module closed by lua5.4 at exit), its
 * globals stop being roots for leak checkers: free the table then. */
__attribute__((destructor)) static void release_derived(void) {
    for (int b = 0; b < DERIVED_BUCKETS; b++) {
        DerivedNode *n = derived[b];
        while (n) {
            DerivedNode *next = n->next;
            free(n);
            n = next;
        }
        derived[b] = NULL;
    }
}

const DType *dt_vec(const DType *dt, int n) {
    /* vec(0) exists: the empty shape of a reshape to () is an index.vec(0) */
    if (!dt || n < 0 || n > 65536) return NULL;
    if (dt->kind == DTK_PTR) return n ? dt_ptr_vec(dt, n) : NULL;
    if (dt->count != 1) return NULL;
    if (n == 1 || dt->sk == SK_VOID) return dt;
    DType k = {0};
    k.kind = DTK_VEC;
    k.sk = dt->sk;
    k.count = n;
    k.scalar = dt;
    k.base = NULL; /* patched to self */
    k.size = -1;
    k.v = 1;
    k.ptr_scalar = NULL;
    /* the hash must not depend on the patched fields: use a stable key */
    return intern_derived(k);
}

const DType *dt_with_count(const DType *dt, int n) {
    if (!dt) return NULL;
    if (dt->kind == DTK_PTR) return dt_ptr_vec(dt->ptr_scalar, n);
    return dt_vec(dt->scalar, n);
}

const DType *dt_ptr(const DType *base, int64_t size, AddrSpace as) {
    if (!base || base->kind == DTK_PTR) return NULL;
    DType k = {0};
    k.kind = DTK_PTR;
    k.sk = base->sk;
    k.count = base->count;
    k.scalar = base->scalar;
    k.base = base;
    k.addrspace = as;
    k.size = size < 0 ? -1 : size;
    k.v = 1;
    k.ptr_scalar = NULL;
    return intern_derived(k);
}

const DType *dt_ptr_vec(const DType *ptr, int v) {
    if (!ptr || ptr->kind != DTK_PTR || v < 1) return NULL;
    ptr = ptr->ptr_scalar;
    if (v == 1) return ptr;
    DType k = *ptr;
    k.v = v;
    k.ptr_scalar = ptr;
    return intern_derived(k);
}

int dt_vcount(const DType *d) { return d->kind == DTK_PTR ? d->v : d->count; }
bool dt_is_float(const DType *d) { return d->sk >= SK_FP8E4M3 && d->sk <= SK_FLOAT64; }
bool dt_is_int(const DType *d) { return d->sk == SK_INDEX || (d->sk >= SK_INT8 && d->sk <= SK_UINT64); }
bool dt_is_unsigned(const DType *d) {
    return d->sk == SK_UINT8 || d->sk == SK_UINT16 || d->sk == SK_UINT32 || d->sk == SK_UINT64;
}
bool dt_is_bool(const DType *d) { return d->sk == SK_BOOL; }
int dt_bitsize(const DType *d) { return sk_info[d->sk].bits; }
int dt_itemsize(const DType *d) { return (sk_info[d->sk].bits * d->count + 7) / 8; }
int dt_priority(const DType *d) { return sk_info[d->sk].prio; }

int64_t dt_min_int(const DType *d) {
    if (d->sk == SK_BOOL || dt_is_unsigned(d)) return 0;
    if (d->sk == SK_INDEX) return INT64_MIN;
    int b = dt_bitsize(d);
    return b >= 64 ? INT64_MIN : -((int64_t)1 << (b - 1));
}

int64_t dt_max_int(const DType *d) {
    if (d->sk == SK_BOOL) return 1;
    if (d->sk == SK_INDEX) return INT64_MAX;
    int b = dt_bitsize(d);
    if (dt_is_unsigned(d)) return b >= 63 ? INT64_MAX : ((int64_t)1 << b) - 1;
    return b >= 64 ? INT64_MAX : ((int64_t)1 << (b - 1)) - 1;
}

int64_t dt_wrap_int(const DType *d, int64_t v) {
    if (dt_is_bool(d)) return v != 0;
    int bits = d->sk == SK_INDEX ? 64 : dt_bitsize(d);
    if (bits >= 64) return v;
    uint64_t mask = (1ull << bits) - 1, x = (uint64_t)v & mask;
    if (!dt_is_unsigned(d) && (x >> (bits - 1)) & 1) x |= ~mask;
    return (int64_t)x;
}

const char *sk_name(ScalarKind sk) { return (unsigned)sk < SK_COUNT ? sk_info[sk].name : "?"; }

/* tinygrad's short names (INVERSE_DTYPES_DICT) */
static const char *sk_tinygrad_name(ScalarKind sk) {
    static const char *n[SK_COUNT] = {"void", "index", "bool", "char", "uchar", "short", "ushort", "int",
                                      "uint", "long", "ulong", "fp8e4m3", "fp8e5m2", "half", "bfloat16",
                                      "float", "double"};
    return n[sk];
}

static const char *addr_name(AddrSpace a) { return a == ADDR_LOCAL ? "local" : a == ADDR_REG ? "reg" : "global"; }
static const char *addr_name_tg(AddrSpace a) {
    return a == ADDR_LOCAL ? "AddrSpace.LOCAL" : a == ADDR_REG ? "AddrSpace.REG" : "AddrSpace.GLOBAL";
}

static void dt_format_any(StrBuf *sb, const DType *d, bool tg) {
    if (d->kind == DTK_PTR) {
        dt_format_any(sb, d->base, tg);
        sb_printf(sb, ".ptr(%lld", (long long)d->size);
        if (d->addrspace != ADDR_GLOBAL) sb_printf(sb, ", %s", tg ? addr_name_tg(d->addrspace) : addr_name(d->addrspace));
        sb_putc(sb, ')');
        if (d->v != 1) sb_printf(sb, ".vec(%d)", d->v);
        return;
    }
    if (tg) sb_printf(sb, "dtypes.%s", sk_tinygrad_name(d->sk));
    else sb_puts(sb, sk_name(d->sk));
    if (d->count != 1) sb_printf(sb, ".vec(%d)", d->count);
}

void dt_format(StrBuf *sb, const DType *d) { dt_format_any(sb, d, false); }
void dt_format_tinygrad(StrBuf *sb, const DType *d) { dt_format_any(sb, d, true); }

static const struct { const char *name; ScalarKind sk; } aliases[] = {
    {"void", SK_VOID}, {"index", SK_INDEX}, {"bool", SK_BOOL},
    {"int8", SK_INT8}, {"char", SK_INT8}, {"uint8", SK_UINT8}, {"uchar", SK_UINT8},
    {"int16", SK_INT16}, {"short", SK_INT16}, {"uint16", SK_UINT16}, {"ushort", SK_UINT16},
    {"int32", SK_INT32}, {"int", SK_INT32}, {"uint32", SK_UINT32}, {"uint", SK_UINT32},
    {"int64", SK_INT64}, {"long", SK_INT64}, {"uint64", SK_UINT64}, {"ulong", SK_UINT64},
    {"fp8e4m3", SK_FP8E4M3}, {"fp8e5m2", SK_FP8E5M2},
    {"float16", SK_FLOAT16}, {"half", SK_FLOAT16}, {"bfloat16", SK_BFLOAT16},
    {"float32", SK_FLOAT32}, {"float", SK_FLOAT32}, {"float64", SK_FLOAT64}, {"double", SK_FLOAT64},
};

const char *const dt_all_names[] = {
    "void", "index", "bool", "int8", "char", "uint8", "uchar", "int16", "short", "uint16", "ushort",
    "int32", "int", "uint32", "uint", "int64", "long", "uint64", "ulong", "fp8e4m3", "fp8e5m2",
    "float16", "half", "bfloat16", "float32", "float", "float64", "double", NULL};

bool sk_from_name(const char *s, ScalarKind *out) {
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (strcmp(s, aliases[i].name) == 0) { *out = aliases[i].sk; return true; }
    return false;
}

static int parse_int_arg(const char *s, int64_t *v) {
    char *end;
    long long x = strtoll(s, &end, 10);
    if (end == s) return 0;
    *v = x;
    return (int)(end - s);
}

int dt_parse(const char *s, const DType **out) {
    const char *p = s;
    if (strncmp(p, "dtypes.", 7) == 0) p += 7;
    char name[32];
    int n = 0;
    while ((isalnum((unsigned char)*p) || *p == '_') && n < 31) name[n++] = *p++;
    name[n] = 0;
    ScalarKind sk;
    if (!n || !sk_from_name(name, &sk)) return 0;
    const DType *d = dt_scalar(sk);
    for (;;) {
        if (strncmp(p, ".vec(", 5) == 0) {
            int64_t v;
            int k = parse_int_arg(p + 5, &v);
            if (!k || p[5 + k] != ')') return 0;
            d = dt_vec(d, (int)v);
            if (!d) return 0;
            p += 5 + k + 1;
        } else if (strncmp(p, ".ptr(", 5) == 0) {
            p += 5;
            int64_t size = -1;
            AddrSpace as = ADDR_GLOBAL;
            if (*p != ')') {
                int k = parse_int_arg(p, &size);
                if (!k) return 0;
                p += k;
                if (*p == ',') {
                    p++;
                    while (*p == ' ') p++;
                    if (strncmp(p, "AddrSpace.", 10) == 0) p += 10;
                    if (strncasecmp(p, "local", 5) == 0) { as = ADDR_LOCAL; p += 5; }
                    else if (strncasecmp(p, "global", 6) == 0) { as = ADDR_GLOBAL; p += 6; }
                    else if (strncasecmp(p, "reg", 3) == 0) { as = ADDR_REG; p += 3; }
                    else return 0;
                }
            }
            if (*p != ')') return 0;
            p++;
            d = dt_ptr(d, size, as);
            if (!d) return 0;
        } else break;
    }
    *out = d;
    return (int)(p - s);
}

/* ---- promotion: tinygrad's lattice, as bitsets of the kinds above each kind ---- */
static uint32_t parents_mask(ScalarKind sk) {
    static const ScalarKind up[SK_COUNT][2] = {
        [SK_BOOL] = {SK_INT8, SK_UINT8},       [SK_INT8] = {SK_INT16, SK_VOID},
        [SK_INT16] = {SK_INT32, SK_VOID},      [SK_INT32] = {SK_INT64, SK_VOID},
        [SK_INT64] = {SK_FP8E4M3, SK_FP8E5M2}, [SK_UINT8] = {SK_INT16, SK_UINT16},
        [SK_UINT16] = {SK_INT32, SK_UINT32},   [SK_UINT32] = {SK_INT64, SK_UINT64},
        [SK_UINT64] = {SK_FP8E4M3, SK_FP8E5M2}, [SK_FP8E5M2] = {SK_FLOAT16, SK_BFLOAT16},
        [SK_FP8E4M3] = {SK_FLOAT16, SK_BFLOAT16}, [SK_FLOAT16] = {SK_FLOAT32, SK_VOID},
        [SK_BFLOAT16] = {SK_FLOAT32, SK_VOID}, [SK_FLOAT32] = {SK_FLOAT64, SK_VOID},
    };
    uint32_t m = 1u << sk;
    for (int i = 0; i < 2; i++)
        if (up[sk][i] != SK_VOID) m |= parents_mask(up[sk][i]);
    return m;
}

const DType *dt_least_upper(const DType *a, const DType *b) {
    ScalarKind x = a->sk, y = b->sk;
    if (x == y) return dt_scalar(x);
    if (x == SK_VOID || y == SK_VOID || x == SK_INDEX || y == SK_INDEX) return NULL;
    uint32_t m = parents_mask(x) & parents_mask(y);
    /* the smallest by (priority, bitsize): priorities are distinct here */
    const DType *best = NULL;
    for (int k = 0; k < SK_COUNT; k++)
        if ((m >> k) & 1) {
            const DType *d = dt_scalar((ScalarKind)k);
            if (!best || dt_priority(d) < dt_priority(best)) best = d;
        }
    return best;
}

static bool sk_in(ScalarKind f, const ScalarKind *list) {
    for (; *list != SK_COUNT; list++)
        if (*list == f) return true;
    return false;
}

bool dt_can_lossless_cast(const DType *from, const DType *to) {
    ScalarKind f = from->sk, t = to->sk;
    if (from == to || f == SK_BOOL) return true;
#define IN(...) sk_in(f, (const ScalarKind[]){__VA_ARGS__, SK_COUNT})
    switch (t) {
    case SK_INDEX: return dt_is_int(from) && f != SK_INDEX;
    case SK_FLOAT64: return IN(SK_FLOAT32, SK_FLOAT16, SK_BFLOAT16, SK_FP8E4M3, SK_FP8E5M2, SK_UINT32, SK_UINT16,
                               SK_UINT8, SK_INT32, SK_INT16, SK_INT8);
    case SK_FLOAT32: return IN(SK_FLOAT16, SK_BFLOAT16, SK_FP8E4M3, SK_FP8E5M2, SK_UINT16, SK_UINT8, SK_INT16, SK_INT8);
    case SK_FLOAT16: return IN(SK_FP8E4M3, SK_FP8E5M2, SK_UINT8, SK_INT8);
    case SK_UINT64: return IN(SK_UINT32, SK_UINT16, SK_UINT8);
    case SK_UINT32: return IN(SK_UINT16, SK_UINT8);
    case SK_UINT16: return IN(SK_UINT8);
    case SK_INT64: return IN(SK_UINT32, SK_UINT16, SK_UINT8, SK_INT32, SK_INT16, SK_INT8);
    case SK_INT32: return IN(SK_UINT16, SK_UINT8, SK_INT16, SK_INT8);
    case SK_INT16: return IN(SK_UINT8, SK_INT8);
    default: return false;
    }
#undef IN
}

const char *dt_str(const DType *d, char *buf, size_t n) {
    StrBuf sb;
    sb_init(&sb);
    dt_format(&sb, d);
    snprintf(buf, n, "%s", sb_str(&sb) ? sb_str(&sb) : "");
    sb_free(&sb);
    return buf;
}

int64_t dt_float_to_int(const DType *d, double f) {
    if (d->sk == SK_BOOL) return f != 0;
    int bits = d->sk == SK_INDEX ? 64 : dt_bitsize(d);
    if (dt_is_unsigned(d) && bits >= 32) {
        /* one unsigned conversion; out of its range, all ones */
        if (!(f > -1.0 && f < ldexp(1.0, bits))) return bits >= 64 ? (int64_t)UINT64_MAX : (int64_t)UINT32_MAX;
        return (int64_t)(uint64_t)f;
    }
    if (bits >= 64) return f >= -0x1p63 && f < 0x1p63 ? (int64_t)f : INT64_MIN;
    /* narrower dtypes convert to int32 first, then wrap */
    int32_t v = f > -0x1p31 - 1.0 && f < 0x1p31 ? (int32_t)f : INT32_MIN;
    return dt_wrap_int(d, v);
}

int dt_shift_amount(const DType *d, uint64_t b) {
    int bits = d->sk == SK_INDEX ? 64 : dt_bitsize(d);
    if (bits < 1) return 0;
    return (int)(b % (uint64_t)bits);
}
