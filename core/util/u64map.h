/* u64map.h - a map from 64-bit keys to non-NULL pointers (open addressing,
 * grows by doubling).  The text parsers use it for node labels (%12, x3).
 * Hand-written: it is 50 lines, and no small C library with a stable Debian
 * package offers exactly this without macros or per-type generation. */
#ifndef UOPDB_U64MAP_H
#define UOPDB_U64MAP_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct U64Map {
    uint64_t *keys;
    const void **vals;    /* NULL: empty slot */
    size_t cap, count;    /* cap is 0 or a power of two */
} U64Map;

/* the value for key, NULL if absent */
const void *u64map_get(const U64Map *m, uint64_t key);
/* sets key to val (non-NULL); false when out of memory */
bool u64map_put(U64Map *m, uint64_t key, const void *val);
void u64map_free(U64Map *m);

#endif
