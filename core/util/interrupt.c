/* interrupt.c - the process-wide interrupt flag (see interrupt.h). */
#include "interrupt.h"

static volatile sig_atomic_t flag;

void uopdb_interrupt_request(void) { flag = 1; }
void uopdb_interrupt_clear(void) { flag = 0; }
bool uopdb_interrupted(void) { return flag != 0; }
volatile sig_atomic_t *uopdb_interrupt_flag(void) { return &flag; }
