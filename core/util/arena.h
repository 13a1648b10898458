/* arena.h - bump allocator for objects that live as long as their owner
 * (a UOp context).  Hand-written because it is 40 lines and every candidate
 * library (talloc, apr pools) would add a dependency for less than we need. */
#ifndef UOPDB_ARENA_H
#define UOPDB_ARENA_H
#include <stddef.h>

typedef struct ArenaChunk ArenaChunk;
typedef struct Arena {
    ArenaChunk *head;
    size_t used_bytes;     /* bytes handed out */
    size_t reserved_bytes; /* bytes obtained from malloc */
} Arena;

void arena_init(Arena *a);
void arena_free(Arena *a);
/* Returns zeroed, 16-byte aligned memory, or NULL when out of memory. */
void *arena_alloc(Arena *a, size_t n);
/* The same, 64-byte aligned and rounded up to a multiple of 64 bytes, so an
 * object of at most 64 bytes sits in one cache line. */
void *arena_alloc_lines(Arena *a, size_t n);
char *arena_strdup(Arena *a, const char *s);

#endif
