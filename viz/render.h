/* render.h - compact infix rendering of index/ALU expressions in tinygrad's
 * style: ((a*4)+b), (x//2), max(a, b), (a if c else b), r0 for RANGE 0. */
#ifndef UOPDB_RENDER_H
#define UOPDB_RENDER_H
#include "../core/ir/uop.h"
#include "../core/util/strbuf.h"

void uop_render_expr(StrBuf *sb, const UOp *u);

#endif
