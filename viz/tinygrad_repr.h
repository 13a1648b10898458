/* tinygrad_repr.h - tinygrad's Python repr of a UOp graph, both ways:
 *
 *   UOp(Ops.SINK, dtypes.void, arg=None, src=(
 *     UOp(Ops.STORE, dtypes.void, arg=None, src=(
 *       x2:=UOp(Ops.DEFINE_GLOBAL, dtypes.float.ptr(9), arg=0, src=()),
 *       ...
 *
 * as tinygrad's pretty_print writes it (shared nodes as x<N>:= and later
 * references as x<N>), so a kernel AST printed by tinygrad can be pasted in. */
#ifndef UOPDB_TINYGRAD_REPR_H
#define UOPDB_TINYGRAD_REPR_H
#include "../core/ir/uop.h"
#include "../core/util/strbuf.h"

void uop_to_tinygrad(StrBuf *sb, const UOp *root);
/* NULL on error, with "line L, column C: what" in err. */
const UOp *uop_from_tinygrad(UCtx *c, const char *text, char *err, size_t errlen);

#endif
