/* apply_opts.c - placeholder: the stages below pass the root through until written. */
#include "stages.h"

const UOp *stage_apply_opts(StageCtx *sc, const UOp *root) { (void)sc; return root; }
