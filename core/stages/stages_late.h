/* stages_late.h - what the late stages (11-22) share outside the stage
 * table: their rule sets, built on first use, are freed here at teardown,
 * and load_store_indexing is offered to the devectorizer too. */
#ifndef UOPDB_STAGES_LATE_H
#define UOPDB_STAGES_LATE_H
#include "../rewrite/pattern.h"

/* tinygrad's load_store_indexing (drop a true gate; NULL if it cannot be built) */
const RuleSet *stage_rules_load_store_indexing(void);

void remove_reduce_free(void);   /* stage 11 */
void index_dtype_free(void);     /* stage 15 and load_store_indexing */
void stages_late_rules_free(void); /* stages 13, 16, 18, 19 */
void linearize_free(void);       /* stages 20-22 */
/* all of the above */
void late_stages_free(void);

#endif
