/* arena.c - chunked bump allocator with free lists of blocks handed back,
 * see arena.h. */
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
    size_t units;
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

/* n bytes (a multiple of 16) from the current chunk or a new one */
static void *bump(Arena *a, size_t n) {
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

/* A block of `units` units of `unit` bytes from the lists (one per size
 * up to ARENA_FREE_CLASSES units, [0] for the larger), zeroed; NULL if
 * none.  A block of a size class is poisoned whole; a larger one keeps its
 * header readable, since the shared list is walked. */
static void *take(Arena *a, ArenaFreeBlock **lists, size_t units, size_t unit) {
    bool classed = units <= ARENA_FREE_CLASSES;
    ArenaFreeBlock **at = &lists[classed ? units : 0];
    for (ArenaFreeBlock *b; (b = *at); at = &b->next) {
        if (classed) UNPOISON(b, sizeof *b);
        if (b->units != units) continue;
        *at = b->next;
        size_t n = units * unit;
        UNPOISON(b, n);
        memset(b, 0, n);
        a->free_bytes -= n;
        a->used_bytes += n;
        return b;
    }
    return NULL;
}

static void give(Arena *a, ArenaFreeBlock **lists, void *p, size_t units, size_t unit) {
    bool classed = units <= ARENA_FREE_CLASSES;
    ArenaFreeBlock *b = p;
    ArenaFreeBlock **head = &lists[classed ? units : 0];
    b->next = *head;
    b->units = units;
    *head = b;
    a->free_bytes += units * unit;
    a->used_bytes -= units * unit;
    if (classed) POISON(b, units * unit);
    else POISON((char *)b + sizeof *b, units * unit - sizeof *b);
}

void *arena_alloc(Arena *a, size_t n) {
    n = (n + 15) & ~(size_t)15;
    void *p = n ? take(a, a->free_small, n / 16, 16) : NULL;
    return p ? p : bump(a, n);
}

void arena_free_block(Arena *a, void *p, size_t n) {
    n = (n + 15) & ~(size_t)15;
    if (p && n) give(a, a->free_small, p, n / 16, 16);
}

void arena_free_lines(Arena *a, void *p, size_t n) {
    if (p) give(a, a->free_lines, p, (n + 63) / 64, 64);
}

void *arena_alloc_lines(Arena *a, size_t n) {
    n = (n + 63) & ~(size_t)63;
    void *reused = take(a, a->free_lines, n / 64, 64);
    if (reused) return reused;
    ArenaChunk *c = a->head;
    if (c) {
        size_t pad = (size_t)(-(uintptr_t)(c->data + c->off) & 63);
        if (c->cap - c->off >= n + pad) {
            c->off += pad;
            /* lines are handed out one after another: start fetching, for
             * writing, the one four lines ahead, so making a node does not
             * wait for its memory */
            if (c->cap - c->off >= n + 256) __builtin_prefetch(c->data + c->off + 256, 1);
            return bump(a, n);
        }
    }
    /* a new chunk (or a one-off block): 16-byte aligned, so at most 48 bytes
     * of padding bring it to a line */
    unsigned char *p = bump(a, n + 48);
    return p ? p + (-(uintptr_t)p & 63) : NULL;
}

char *arena_strdup(Arena *a, const char *s) {
    size_t n = strlen(s) + 1;
    char *p = arena_alloc(a, n);
    if (p) memcpy(p, s, n);
    return p;
}
