/* lua_tensor.c - placeholder for the Tensor front end's C helpers. */
#include "lua_internal.h"
#include "tensor_data.h"
void luop_open_tensor(lua_State *L) { (void)L; }
const UOp *luop_buffer_new(lua_State *L, const DType *dt, int64_t count, void **data_out) {
    (void)L; (void)dt; (void)count; (void)data_out; return NULL;
}
const void *luop_buffer_data(lua_State *L, const UOp *buffer) { (void)L; (void)buffer; return NULL; }
const void *luop_buffer_lookup(void *ud, const UOp *buffer) { return luop_buffer_data(ud, buffer); }
