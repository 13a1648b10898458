/* kernel_name.h - a kernel's name as tinygrad gives it, from its graph
 * (kernel_name.c says how). */
#ifndef UOPDB_KERNEL_NAME_H
#define UOPDB_KERNEL_NAME_H
#include <stdbool.h>
#include <stddef.h>
#include "../ir/uop.h"

/* Writes the name of the kernel under root ("r_128_128_4_4_128_4") into
 * out; false when out of memory or when it does not fit in outlen bytes
 * (out then holds as much as fits). */
bool kernel_shape_name(const UOp *root, char *out, size_t outlen);

/* tinygrad's axis_to_pos: where a kind of range goes in a kernel's order of
 * ranges (Scheduler.rngs), LOOP (-1) first, UNROLL (5) last */
int axis_to_pos(AxisType t);
#endif
