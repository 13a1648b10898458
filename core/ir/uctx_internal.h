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

struct UCtx {
    Arena arena;
    PtrTable nodes;       /* UOp*, keyed by UOp.hash */
    PtrTable args;        /* Arg*, keyed by Arg.hash */
    const UOp **by_id;    /* id -> node */
    size_t nid, cap_id;
    char err[1024];
};

#endif
