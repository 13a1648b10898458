/* index_dtype.c - placeholder: the stages below pass the root through until written. */
#include "stages.h"

const UOp *stage_lower_index_dtype(StageCtx *sc, const UOp *root) { (void)sc; return root; }
