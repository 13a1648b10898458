/* fuzz_text.h - what the libFuzzer harnesses of the text parsers share: the
 * input as a NUL-terminated string (the parsers read C strings, so an input
 * stops at its first NUL byte) and a failed property reported as a crash,
 * which libFuzzer records with the input that caused it. */
#ifndef UOPDB_FUZZ_TEXT_H
#define UOPDB_FUZZ_TEXT_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A malloc'd copy of the input with a NUL after it (NULL if out of memory). */
static inline char *fuzz_text_copy(const uint8_t *data, size_t size) {
    char *s = malloc(size + 1);
    if (!s) return NULL;
    memcpy(s, data, size);
    s[size] = 0;
    return s;
}

/* A property that must hold for every input; a failure aborts, so libFuzzer
 * keeps the input as a finding (crash-<sha1>). */
#define FUZZ_CHECK(cond, ...)                                                   \
    do {                                                                        \
        if (!(cond)) {                                                          \
            fprintf(stderr, "fuzz property failed at %s:%d: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                       \
            fputc('\n', stderr);                                                \
            abort();                                                            \
        }                                                                       \
    } while (0)

#endif
