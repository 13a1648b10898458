/* tensor_data.h - host data of the tensor graph's BUFFER nodes, kept per
 * Lua state: the Tensor front end writes it, the program runner reads the
 * inputs and registers the outputs, the reference reads it too. */
#ifndef UOPDB_TENSOR_DATA_H
#define UOPDB_TENSOR_DATA_H
#include <lua.h>
#include <stdint.h>
#include "../core/ir/uop.h"

/* A new BUFFER(UNIQUE(n), DEVICE("CPU")) of dt with count elements and
 * zeroed host data (buffer_alloc'd, owned by the registry); *data_out gets
 * the storage.  NULL (and a Lua error raised) when out of memory. */
const UOp *luop_buffer_new(lua_State *L, const DType *dt, int64_t count, void **data_out);
/* The host data of a BUFFER node, NULL if it has none. */
const void *luop_buffer_data(lua_State *L, const UOp *buffer);
/* As a RefBufferFn (ud is the lua_State). */
const void *luop_buffer_lookup(void *ud, const UOp *buffer);

#endif
