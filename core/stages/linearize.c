/* linearize.c - placeholder: the stages below pass the root through until written. */
#include "stages.h"

const UOp *stage_add_control_flow(StageCtx *sc, const UOp *root) { (void)sc; return root; }
const UOp *stage_linearize(StageCtx *sc, const UOp *root) { (void)sc; return root; }
const UOp *stage_cleanup_ifendif(StageCtx *sc, const UOp *root) { (void)sc; return root; }
