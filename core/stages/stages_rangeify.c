/* stages_rangeify.c - placeholder: the stages below pass the root through until written. */
#include "stages.h"

const UOp *stage_early_movement_ops(StageCtx *sc, const UOp *root) { (void)sc; return root; }
const UOp *stage_load_collapse(StageCtx *sc, const UOp *root) { (void)sc; return root; }
const UOp *stage_split_ranges(StageCtx *sc, const UOp *root) { (void)sc; return root; }
const UOp *stage_initial_symbolic(StageCtx *sc, const UOp *root) { (void)sc; return root; }
const UOp *stage_simplify_ranges(StageCtx *sc, const UOp *root) { (void)sc; return root; }
const UOp *stage_split_store(StageCtx *sc, const UOp *root) { (void)sc; return root; }
const UOp *stage_postopt_symbolic(StageCtx *sc, const UOp *root) { (void)sc; return root; }
const UOp *stage_add_local_buffers(StageCtx *sc, const UOp *root) { (void)sc; return root; }
