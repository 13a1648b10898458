/* stages_late.c - placeholder: the stages below pass the root through until written. */
#include "stages.h"

const UOp *stage_add_gpudims(StageCtx *sc, const UOp *root) { (void)sc; return root; }
const UOp *stage_add_loads(StageCtx *sc, const UOp *root) { (void)sc; return root; }
const UOp *stage_post_index_symbolic(StageCtx *sc, const UOp *root) { (void)sc; return root; }
const UOp *stage_pre_matcher(StageCtx *sc, const UOp *root) { (void)sc; return root; }
const UOp *stage_decompositions(StageCtx *sc, const UOp *root) { (void)sc; return root; }
const UOp *stage_final_rewrite(StageCtx *sc, const UOp *root) { (void)sc; return root; }
