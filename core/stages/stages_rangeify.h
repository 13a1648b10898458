/* stages_rangeify.h - teardown for the rule sets the early stages (1-8, 10)
 * build on first use. */
#ifndef UOPDB_STAGES_RANGEIFY_H
#define UOPDB_STAGES_RANGEIFY_H

/* Frees the composed rule sets of stages 1-6, 8 and 10 (they are built
 * again on next use).  For process teardown and leak checks. */
void stages_rangeify_free(void);

#endif
