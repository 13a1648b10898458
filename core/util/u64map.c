/* u64map.c - 64-bit keys to pointers, see u64map.h. */
#include "u64map.h"
#include <stdlib.h>

/* Fibonacci hashing: the top bits of the product depend on every bit of the
 * key (the low bits would ignore the high half, which packed keys such as
 * id << 32 | other vary) */
static size_t slot_of(const U64Map *m, uint64_t key) {
    size_t i = (size_t)((key * 0x9E3779B97F4A7C15ull) >> (64 - __builtin_ctzll(m->cap)));
    while (m->vals[i] && m->keys[i] != key) i = (i + 1) & (m->cap - 1);
    return i;
}

const void *u64map_get(const U64Map *m, uint64_t key) { return m->cap ? m->vals[slot_of(m, key)] : NULL; }

bool u64map_put(U64Map *m, uint64_t key, const void *val) {
    if ((m->count + 1) * 2 > m->cap) {
        size_t ncap = m->cap ? m->cap * 2 : 64;
        U64Map nm = {calloc(ncap, sizeof *nm.keys), calloc(ncap, sizeof *nm.vals), ncap, m->count};
        if (!nm.keys || !nm.vals) { free(nm.keys); free(nm.vals); return false; }
        for (size_t i = 0; i < m->cap; i++)
            if (m->vals[i]) {
                size_t j = slot_of(&nm, m->keys[i]);
                nm.keys[j] = m->keys[i];
                nm.vals[j] = m->vals[i];
            }
        free(m->keys);
        free(m->vals);
        *m = nm;
    }
    size_t i = slot_of(m, key);
    if (!m->vals[i]) m->count++;
    m->keys[i] = key;
    m->vals[i] = val;
    return true;
}

void u64map_free(U64Map *m) {
    free(m->keys);
    free(m->vals);
    m->keys = NULL;
    m->vals = NULL;
    m->cap = m->count = 0;
}
