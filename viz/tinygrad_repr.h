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

/* The exporter nests a node as deep as it is first reached and indents each
 * line by that depth, as tinygrad does; past this many spaces (100 levels,
 * deeper than Python's parser reads nested parentheses) the indent stops
 * growing, so the text of a deep chain grows linearly with its depth. */
enum { TINYGRAD_REPR_MAX_INDENT = 200 };

/* Appends root's repr to sb.  False with a message in err when memory ran
 * out. */
bool uop_to_tinygrad(StrBuf *sb, const UOp *root, char *err, size_t errlen);
/* NULL on error, with "line L, column C: what" in err. */
const UOp *uop_from_tinygrad(UCtx *c, const char *text, char *err, size_t errlen);

#endif
