/* ops.c - op properties read from ops.def. */
#include "ops.h"
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

bool op_from_name(const char *s, Op *out) {
    if (strncmp(s, "Ops.", 4) == 0) s += 4;
    for (int i = 0; i < OP_COUNT; i++)
        if (strcmp(s, op_table[i].name) == 0) { *out = (Op)i; return true; }
    return false;
}

const char *op_group_name(OpGroup g) {
    static const char *names[OPG_COUNT] = {"define", "meta", "vector", "memory", "alu",
                                           "control", "const", "sched", "movement", "reduce"};
    return (unsigned)g < OPG_COUNT ? names[g] : "?";
}

bool opset_empty(const OpSet *s) {
    for (unsigned i = 0; i < sizeof s->w / sizeof s->w[0]; i++)
        if (s->w[i]) return false;
    return true;
}
