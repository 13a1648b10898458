/* sched_graph.h - graph helpers of the scheduler that other layers use too
 * (codegen stage 2 substitutes with them). */
#ifndef UOPDB_SCHED_GRAPH_H
#define UOPDB_SCHED_GRAPH_H
#include "../ir/uop.h"
#include "../util/u64map.h"

/* root with every node in map (id -> replacement) replaced, without looking
 * inside replaced nodes; NULL with uctx_error on failure */
const UOp *sched_substitute(UCtx *c, const UOp *root, const U64Map *map);
/* the same, not looking inside nodes for which stop(u) is true either */
const UOp *sched_substitute_stop(UCtx *c, const UOp *root, const U64Map *map, bool (*stop)(const UOp *u));
/* the node that replaces u, made from u's new sources src (u->nsrc of
 * them); u itself to have u rebuilt from them as usual; NULL with
 * uctx_error on failure */
typedef const UOp *(*SchedRebuild)(void *ud, const UOp *u, const UOp *const *src);
/* root with the nodes in map replaced and the others made by rebuild */
const UOp *sched_substitute_rebuild(UCtx *c, const UOp *root, const U64Map *map, SchedRebuild rebuild, void *ud);
/* root with every node's tag removed (v0.12.0's remove-all-tags): nodes
 * that differed only in their tags become one */
const UOp *sched_remove_tags(UCtx *c, const UOp *root);
#endif
