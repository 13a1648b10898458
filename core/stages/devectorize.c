/* devectorize.c - placeholder: the stages below pass the root through until written. */
#include "stages.h"

const UOp *stage_devectorize(StageCtx *sc, const UOp *root) { (void)sc; return root; }
