/* arena.c - chunked bump allocator with free lists for line blocks, see
 * arena.h. */
#include "arena.h"
#include <stdlib.h>
#include <string.h>
#include <stdbool.h>
#include <stdint.h>

/* Under AddressSanitizer a block on a free list is poisoned, so a pointer
 * kept to a freed node is reported where it is used. */
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define POISON(p, n) ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

/* what a freed block holds while it is on a list */
struct ArenaFreeBlock {
    ArenaFreeBlock *next;
    size_t lines;
};

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
        UNPOISON(c->data, c->cap);
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

/* A block of `lines` lines from the free lists, zeroed; NULL if none.  A
 * block of a size class is poisoned whole; a larger one keeps its header
 * readable, since the shared list is walked. */
static void *reuse_lines(Arena *a, size_t lines) {
    bool classed = lines <= ARENA_LINE_CLASSES;
    ArenaFreeBlock **at = &a->free_lines[classed ? lines : 0];
    for (ArenaFreeBlock *b; (b = *at); at = &b->next) {
        if (classed) UNPOISON(b, sizeof *b);
        if (b->lines != lines) continue;
        *at = b->next;
        size_t n = lines * 64;
        UNPOISON(b, n);
        memset(b, 0, n);
        a->free_bytes -= n;
        a->used_bytes += n;
        return b;
    }
    return NULL;
}

void arena_free_lines(Arena *a, void *p, size_t n) {
    if (!p) return;
    size_t lines = (n + 63) / 64;
    bool classed = lines <= ARENA_LINE_CLASSES;
    ArenaFreeBlock *b = p;
    ArenaFreeBlock **head = &a->free_lines[classed ? lines : 0];
    b->next = *head;
    b->lines = lines;
    *head = b;
    a->free_bytes += lines * 64;
    a->used_bytes -= lines * 64;
    if (classed) POISON(b, lines * 64);
    else POISON((char *)b + sizeof *b, lines * 64 - sizeof *b);
}

void *arena_alloc_lines(Arena *a, size_t n) {
    n = (n + 63) & ~(size_t)63;
    void *reused = reuse_lines(a, n / 64);
    if (reused) return reused;
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
