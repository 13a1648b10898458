/* interp_error.h - tells an interpreter error that says the kernel accessed
 * memory outside a buffer from the other errors (a form the interpreter
 * cannot run, an interrupt, the instruction budget).  A kernel that reads
 * or writes outside its buffers computes something wrong, so a check can
 * count it as wrong instead of as not checkable.  The messages recognised
 * are those of ast_interp.c ("interp: out-of-range access: ...") and
 * linear_interp.c ("interp: INDEX %N reads buffer 1 at 9, past its 9
 * elements ..."); the unit tests of both hold them to it. */
#ifndef UOPDB_INTERP_ERROR_H
#define UOPDB_INTERP_ERROR_H
#include <stdbool.h>
#include <string.h>

static inline bool interp_error_is_out_of_range(const char *err) {
    const char *at = err ? strstr(err, "interp: ") : NULL;
    if (!at) return false;
    if (strstr(at, "interp: out-of-range access: ")) return true;
    return strstr(at, " elements") && (strstr(at, ", past its ") || strstr(at, ", before the start of its "));
}

#endif
