/* ops.c - op properties read from ops.def. */
#include "ops.h"
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct OpInfo {
    const char *name;
    int min_srcs, max_srcs;
    OpGroup group;
    uint32_t flags;
} OpInfo;

static const OpInfo op_table[OP_COUNT] = {
#define OP(name, lo, hi, grp, flags) {#name, lo, hi, grp, flags},
#include "ops.def"
#undef OP
};

const char *op_name(Op op) { return (unsigned)op < OP_COUNT ? op_table[op].name : "?"; }
int op_min_srcs(Op op) { return op_table[op].min_srcs; }
int op_max_srcs(Op op) { return op_table[op].max_srcs; }
OpGroup op_group(Op op) { return op_table[op].group; }
uint32_t op_flags(Op op) { return op_table[op].flags; }

/* Ops sorted by name, for the parsers' per-line lookups (a linear scan of
 * ~90 names per node showed in the listing parser's profile). */
static Op by_name[OP_COUNT];
static pthread_once_t by_name_once = PTHREAD_ONCE_INIT;

static int cmp_op_name(const void *a, const void *b) {
    return strcmp(op_table[*(const Op *)a].name, op_table[*(const Op *)b].name);
}
static void sort_by_name(void) {
    for (int i = 0; i < OP_COUNT; i++) by_name[i] = (Op)i;
    qsort(by_name, OP_COUNT, sizeof by_name[0], cmp_op_name);
}

bool op_from_name(const char *s, Op *out) {
    if (strncmp(s, "Ops.", 4) == 0) s += 4;
    pthread_once(&by_name_once, sort_by_name);
    size_t lo = 0, hi = OP_COUNT;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(s, op_table[by_name[mid]].name);
        if (c == 0) { *out = by_name[mid]; return true; }
        if (c < 0) hi = mid; else lo = mid + 1;
    }
    return false;
}

const char *op_group_name(OpGroup g) {
    static const char *names[OPG_COUNT] = {"define", "meta", "vector", "memory", "alu",
                                           "control", "const", "sched", "movement", "reduce"};
    return (unsigned)g < OPG_COUNT ? names[g] : "?";
}

/* tinygrad's GroupOp names for the flag sets of ops.def */
static const struct { const char *name; uint32_t flags; } op_classes[] = {
    {"Unary", OPF_UNARY}, {"Binary", OPF_BINARY}, {"Ternary", OPF_TERNARY}, {"ALU", OPF_ALU},
    {"Commutative", OPF_COMMUTATIVE}, {"Associative", OPF_ASSOCIATIVE}, {"Idempotent", OPF_IDEMPOTENT},
    {"Comparison", OPF_COMPARISON}, {"Movement", OPF_MOVEMENT}, {"Buffer", OPF_BUFFER},
    {"Defines", OPF_DEFINE}, {"Irreducible", OPF_IRREDUCIBLE}, {"UnsafePad", OPF_UNSAFE_PAD},
    {"Elementwise", OPF_ELEMENTWISE},
};

bool op_class_from_name(const char *s, uint32_t *flags) {
    if (strncmp(s, "GroupOp.", 8) == 0) s += 8;
    for (size_t i = 0; i < sizeof op_classes / sizeof *op_classes; i++)
        if (!strcmp(s, op_classes[i].name)) { *flags = op_classes[i].flags; return true; }
    return false;
}

bool opset_empty(const OpSet *s) {
    for (unsigned i = 0; i < sizeof s->w / sizeof s->w[0]; i++)
        if (s->w[i]) return false;
    return true;
}
