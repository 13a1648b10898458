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

/* id -> node, in pages of ID_PAGE ids made on demand: a compaction frees
 * the pages whose nodes are all gone, so the map costs what the live nodes'
 * id ranges cost, not one word per id ever handed out */
#define ID_PAGE_BITS 12
#define ID_PAGE (1u << ID_PAGE_BITS)
typedef struct IdPage {
    uint32_t live;               /* nodes of the page still there */
    const UOp *node[ID_PAGE];    /* NULL: freed (or never made) */
} IdPage;

/* the integer constants made last, by (dtype, value): rules make the same
 * few constants over and over, and a hit here skips interning the arg and
 * the node; emptied by a compaction, which may free what it points to */
#define CONST_CACHE 256
typedef struct ConstCacheEntry {
    const DType *dtype;
    int64_t v;
    const UOp *u;
} ConstCacheEntry;

/* the nodes found or made last, by the low bits of their hash: rules build
 * the same candidate nodes again within a few steps (x + c, x // d), and a
 * hit here is a cache-resident slot instead of a probe into a node set of
 * millions of slots; emptied by a compaction */
#define RECENT_NODES 4096
typedef struct RecentNode {
    uint64_t hash;
    const UOp *u;
} RecentNode;

struct UCtx {
    Arena arena;
    ConstCacheEntry const_cache[CONST_CACHE];
    RecentNode recent[RECENT_NODES];
    NodeTable nodes;      /* UOp*, keyed by the hash of (op, dtype, src, arg, tag) */
    PtrTable args;        /* Arg*, keyed by Arg.hash */
    IdPage **id_pages;    /* [id >> ID_PAGE_BITS], NULL where no node is left */
    size_t cap_pages, live_pages;
    size_t nid;           /* the next id (ids are never reused) */
    size_t lookups, recent_hits; /* interning calls; those the recent table answered */
    size_t compactions, freed_nodes, freed_args; /* totals of uctx_sweep */
    char err[1024];
};

/* the node of id, NULL if none (freed, or not made yet) */
static inline const UOp *uctx_node_at(const UCtx *c, size_t id) {
    size_t p = id >> ID_PAGE_BITS;
    return p < c->cap_pages && c->id_pages[p] ? c->id_pages[p]->node[id & (ID_PAGE - 1)] : NULL;
}

/* Rebuilds the node set with ncap slots (a power of two at least twice the
 * live nodes) from the id map; false when out of memory. */
bool nodetable_rebuild(UCtx *c, size_t ncap);
/* The same into ns, ncap zeroed slots the context takes over. */
void nodetable_fill(UCtx *c, uint64_t *ns, size_t ncap);

#endif
