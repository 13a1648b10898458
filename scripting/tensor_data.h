/* tensor_data.h - host data of the tensor graph's BUFFER nodes, kept per
 * Lua state as long as the node is there: the Tensor front end writes it,
 * the program runner reads the inputs and registers the outputs, the
 * reference reads it too. */
#ifndef UOPDB_TENSOR_DATA_H
#define UOPDB_TENSOR_DATA_H
#include <lua.h>
#include <stdint.h>
#include "../core/ir/uop.h"

/* A new BUFFER(UNIQUE(n), DEVICE("CPU")) of dt with count elements and
 * zeroed host data (buffer_alloc'd, owned by the registry); *data_out gets
 * the storage.  NULL (and a Lua error raised) when out of memory. */
const UOp *luop_buffer_new(lua_State *L, const DType *dt, int64_t count, void **data_out);
/* New zeroed host data of dt, count elements, for any node (the
 * DEFINE_GLOBALs of a kernel compiled from its AST), replacing what it had;
 * raises when out of memory. */
void *luop_buffer_attach(lua_State *L, const UOp *node, const DType *dt, int64_t count);
/* Writes the Lua number or bool at idx as element k of data (dtype dt). */
void luop_buffer_write(lua_State *L, const DType *dt, void *data, int64_t k, int idx);
/* The host data of a BUFFER node (or a DEFINE_GLOBAL given data), NULL if it has none. */
const void *luop_buffer_data(lua_State *L, const UOp *buffer);
/* Host data held (bytes), and how many nodes have some. */
size_t luop_buffer_bytes(lua_State *L);
size_t luop_buffer_count(lua_State *L);
/* Frees the host data of nodes a compaction freed; returns how many, with
 * their bytes in *bytes_freed. */
size_t luop_buffer_prune(lua_State *L, size_t *bytes_freed);
/* As a RefBufferFn (ud is the lua_State). */
const void *luop_buffer_lookup(void *ud, const UOp *buffer);

#endif
