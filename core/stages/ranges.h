/* ranges.h - which loops each node of a kernel runs inside (tinygrad's
 * UOp.ranges / ended_ranges), the small insertion-ordered node sets the
 * late stages keep per node (a RANGE's arg, its ids and axis type, is read
 * with core/ir/range_arg.h).  A RANGE is inside itself; END, STORE, REDUCE,
 * BUFFERIZE and AFTER close the ranges they end. */
#ifndef UOPDB_STAGE_RANGES_H
#define UOPDB_STAGE_RANGES_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "../ir/range_arg.h"   /* range_axis_type, range_ids_cmp */
#include "../ir/uop.h"

/* An ordered set of nodes (insertion order, each node once). */
typedef struct NodeSet {
    const UOp **items;
    int n, cap;
} NodeSet;
bool nodeset_has(const NodeSet *s, const UOp *u);
bool nodeset_add(NodeSet *s, const UOp *u);            /* false when out of memory */
bool nodeset_union(NodeSet *dst, const NodeSet *src);  /* adds src's nodes in order */
void nodeset_remove(NodeSet *s, const UOp *u);
void nodeset_free(NodeSet *s);

/* The graph under a root, toposorted, with a slot per node. */
typedef struct NodeTable {
    const UOp **topo;   /* sources first, the root last */
    size_t n;
    int32_t *slot;      /* by node id: position in topo + 1, 0 if absent (zeroed on
                           allocation, so only the ids present are touched) */
    uint32_t nids;
} NodeTable;
bool node_table_init(NodeTable *t, const UOp *root);   /* false when out of memory */
/* u's position in topo, -1 if absent */
int32_t node_table_slot(const NodeTable *t, const UOp *u);
/* the same for a node known to be in the table */
static inline int32_t node_table_at(const NodeTable *t, const UOp *u) { return t->slot[u->id] - 1; }
void node_table_free(NodeTable *t);

/* The ranges each node of a graph is inside. */
typedef struct RangeMap {
    NodeTable t;
    NodeSet *ranges;    /* by slot */
} RangeMap;
bool range_map_init(RangeMap *m, const UOp *root);    /* false when out of memory */
const NodeSet *range_map_get(const RangeMap *m, const UOp *u);   /* NULL if u is not in the graph */
void range_map_free(RangeMap *m);

/* The ranges u ends directly (tinygrad's ended_ranges): END's sources from
 * 1 on, STORE's from 2, REDUCE's and BUFFERIZE's from 1, what AFTER's
 * dependencies end.  Appends to out; false when out of memory. */
bool ended_ranges(const UOp *u, NodeSet *out);

/* RANGE r with the same ids, the axis type t and the end `end`; NULL with
 * uctx_error on failure. */
const UOp *range_retyped(UCtx *c, const UOp *r, const UOp *end, AxisType t);

#endif
