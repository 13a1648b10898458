/* graph_query.h - looking for nodes by op in a graph, for the unit tests. */
#ifndef UOPDB_TEST_GRAPH_QUERY_H
#define UOPDB_TEST_GRAPH_QUERY_H
#include <stdlib.h>
#include "core/ir/uop.h"

/* The nodes of root's graph with this op, in toposort order: the first max
 * go to out; returns how many there are in all. */
__attribute__((unused)) static int find(const UOp *root, Op op, const UOp **out, int max) {
    size_t n;
    const UOp **topo = uop_toposort(root, &n);
    int k = 0;
    for (size_t i = 0; i < n; i++)
        if (uop_op(topo[i]) == op) {
            if (k < max) out[k] = topo[i];
            k++;
        }
    free(topo);
    return k;
}

#endif
