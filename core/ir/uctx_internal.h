/* uctx_internal.h - the layout of a UOp context, shared by uop.c and arg.c
 * only.  Everything else goes through uop.h / arg.h. */
#ifndef UOPDB_UCTX_INTERNAL_H
#define UOPDB_UCTX_INTERNAL_H
#include "uop.h"
#include "../util/arena.h"

/* open-addressing set of pointers keyed by a precomputed hash; the hash
 * sits beside the pointer so a probe touches only the table, not the
 * entries it passes over */
typedef struct PtrSlot {
    uint64_t hash;
    const void *p;       /* NULL: empty */
} PtrSlot;
typedef struct PtrTable {
    PtrSlot *slots;
    size_t cap, count;   /* cap is a power of two */
} PtrTable;

/* doubles the table; false when out of memory */
bool ptrtable_grow(PtrTable *t);

/* The node set: open addressing, one 8-byte word per slot holding the
 * node's address (below 2^48 on the 64-bit systems this runs on) with the
 * top 16 bits of its hash above it, so a probe compares hashes without
 * touching the node and a cache line holds eight slots. */
#define NODE_TAG_SHIFT 48
typedef struct NodeTable {
    uint64_t *slots;     /* 0: empty */
    size_t cap, count;   /* cap is a power of two */
} NodeTable;

struct UCtx {
    Arena arena;
    NodeTable nodes;      /* UOp*, keyed by the hash of (op, dtype, src, arg, tag) */
    PtrTable args;        /* Arg*, keyed by Arg.hash */
    const UOp **by_id;    /* id -> node */
    size_t nid, cap_id;
    char err[1024];
};

#endif
