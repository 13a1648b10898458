/* arena.c - chunked bump allocator, see arena.h. */
#include "arena.h"
#include <stdlib.h>
#include <string.h>
#include <stdint.h>

struct ArenaChunk {
    ArenaChunk *next;
    size_t cap, off;
    _Alignas(16) unsigned char data[];
};

enum { ARENA_CHUNK = 1 << 16 };

void arena_init(Arena *a) { memset(a, 0, sizeof *a); }

void arena_free(Arena *a) {
    ArenaChunk *c = a->head;
    while (c) {
        ArenaChunk *n = c->next;
        free(c);
        c = n;
    }
    memset(a, 0, sizeof *a);
}

void *arena_alloc(Arena *a, size_t n) {
    n = (n + 15) & ~(size_t)15;
    ArenaChunk *c = a->head;
    if (!c || c->cap - c->off < n) {
        size_t cap = n > ARENA_CHUNK ? n : ARENA_CHUNK;
        ArenaChunk *nc = malloc(sizeof *nc + cap);
        if (!nc) return NULL;
        nc->cap = cap;
        nc->off = 0;
        /* a huge one-off allocation goes behind the current chunk so the
           current chunk keeps serving small requests */
        if (c && n > ARENA_CHUNK) {
            nc->next = c->next;
            c->next = nc;
        } else {
            nc->next = c;
            a->head = nc;
        }
        a->reserved_bytes += sizeof *nc + cap;
        c = nc;
    }
    void *p = c->data + c->off;
    c->off += n;
    a->used_bytes += n;
    memset(p, 0, n);
    return p;
}

void *arena_alloc_lines(Arena *a, size_t n) {
    n = (n + 63) & ~(size_t)63;
    ArenaChunk *c = a->head;
    if (c) {
        size_t pad = (size_t)(-(uintptr_t)(c->data + c->off) & 63);
        if (c->cap - c->off >= n + pad) {
            c->off += pad;
            return arena_alloc(a, n);
        }
    }
    /* a new chunk (or a one-off block): 16-byte aligned, so at most 48 bytes
     * of padding bring it to a line */
    unsigned char *p = arena_alloc(a, n + 48);
    return p ? p + (-(uintptr_t)p & 63) : NULL;
}

char *arena_strdup(Arena *a, const char *s) {
    size_t n = strlen(s) + 1;
    char *p = arena_alloc(a, n);
    if (p) memcpy(p, s, n);
    return p;
}
