/* test_files.h - reading a whole file (golden ASTs and listings) in the
 * unit tests, which run from the repository root, and importing the golden
 * tinygrad matmul AST most of them start from. */
#ifndef UOPDB_TEST_FILES_H
#define UOPDB_TEST_FILES_H
#include <stdio.h>
#include <stdlib.h>
#include "viz/tinygrad_repr.h"

/* The file's bytes, NUL-terminated (free() them); NULL if unreadable. */
static inline char *read_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *s = NULL;
    if (fseek(f, 0, SEEK_END) == 0) {
        long n = ftell(f);
        if (n >= 0 && fseek(f, 0, SEEK_SET) == 0 && (s = malloc((size_t)n + 1)) != NULL) {
            if (fread(s, 1, (size_t)n, f) != (size_t)n) {
                free(s);
                s = NULL;
            } else {
                s[n] = 0;
            }
        }
    }
    fclose(f);
    return s;
}

#define GOLDEN_MATMUL_AST "tests/golden/tinygrad_matmul_ast.txt"

/* The kernel AST in a tinygrad-repr file, imported into c; NULL with the
 * reason in err when the file cannot be read or does not import. */
static inline const UOp *read_golden_ast(UCtx *c, const char *path, char *err, size_t errlen) {
    char *text = read_file(path);
    if (!text) {
        snprintf(err, errlen, "cannot read %s", path);
        return NULL;
    }
    const UOp *ast = uop_from_tinygrad(c, text, err, errlen);
    free(text);
    return ast;
}

#endif
