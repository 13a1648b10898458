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
/* The same from the kernel's nodes (its toposort, or any list holding each
 * of its RANGEs and REDUCEs once), for a caller that has them already. */
bool kernel_name_of(const UOp *const *nodes, size_t n, char *out, size_t outlen);
#endif
