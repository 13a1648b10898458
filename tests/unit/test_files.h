/* test_files.h - reading a whole file (golden ASTs and listings) in the
 * unit tests, which run from the repository root. */
#ifndef UOPDB_TEST_FILES_H
#define UOPDB_TEST_FILES_H
#include <stdio.h>
#include <stdlib.h>

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

#endif
