/* ops.h - the op enum and its properties, generated from the one table in
 * ops.def.  Every switch, printer and parser asks these functions instead of
 * keeping its own list of ops. */
#ifndef UOPDB_OPS_H
#define UOPDB_OPS_H
#include <stdbool.h>
#include <stdint.h>

/* display groups (colours in DOT, sections in listings) */
typedef enum OpGroup {
    OPG_DEFINE, OPG_META, OPG_VECTOR, OPG_MEMORY, OPG_ALU, OPG_CONTROL,
    OPG_CONST, OPG_SCHED, OPG_MOVEMENT, OPG_REDUCE, OPG_COUNT
} OpGroup;

/* tinygrad GroupOp memberships */
enum {
    OPF_UNARY = 1 << 0, OPF_BINARY = 1 << 1, OPF_TERNARY = 1 << 2,
    OPF_COMMUTATIVE = 1 << 3, OPF_ASSOCIATIVE = 1 << 4, OPF_IDEMPOTENT = 1 << 5,
    OPF_COMPARISON = 1 << 6, OPF_MOVEMENT = 1 << 7, OPF_BUFFER = 1 << 8,
    OPF_DEFINE = 1 << 9, OPF_IRREDUCIBLE = 1 << 10, OPF_UNSAFE_PAD = 1 << 11,
    OPF_ELEMENTWISE = 1 << 12,
    OPF_ALU = OPF_UNARY | OPF_BINARY | OPF_TERNARY
};

typedef enum Op {
#define OP(name, lo, hi, grp, flags) OP_##name,
#include "ops.def"
#undef OP
    OP_COUNT
} Op;

const char *op_name(Op op);            /* "ADD" */
bool op_from_name(const char *s, Op *out); /* accepts "ADD" and "Ops.ADD" */
int op_min_srcs(Op op);
int op_max_srcs(Op op);                /* -1: any */
OpGroup op_group(Op op);
const char *op_group_name(OpGroup g);
uint32_t op_flags(Op op);
static inline bool op_is(Op op, uint32_t flag) { return (op_flags(op) & flag) != 0; }
static inline bool op_is_alu(Op op) { return op_is(op, OPF_ALU); }
/* tinygrad's GroupOp classes by name ("Binary", "ALU", also "GroupOp.ALU"):
 * the OPF_ flags of the class; false for an unknown name */
bool op_class_from_name(const char *s, uint32_t *flags);

/* A set of ops, e.g. for patterns. */
typedef struct OpSet { uint64_t w[(OP_COUNT + 63) / 64]; } OpSet;
static inline void opset_add(OpSet *s, Op op) { s->w[op / 64] |= 1ull << (op % 64); }
static inline bool opset_has(const OpSet *s, Op op) { return (s->w[op / 64] >> (op % 64)) & 1; }
bool opset_empty(const OpSet *s);

#endif
