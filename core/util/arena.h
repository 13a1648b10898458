/* arena.h - bump allocator for objects that live as long as their owner
 * (a UOp context), with free lists for blocks handed back one at a time
 * (the nodes and args a compaction frees), which later allocations of the
 * same size reuse.  Hand-written because it is 100 lines and every candidate
 * library (talloc, apr pools) would add a dependency for less than we need. */
#ifndef UOPDB_ARENA_H
#define UOPDB_ARENA_H
#include <stddef.h>

typedef struct ArenaChunk ArenaChunk;
/* freed blocks of up to this many units (16 bytes, or 64-byte lines) have
 * a list per size; larger ones share one list searched for an exact size */
#define ARENA_FREE_CLASSES 64
typedef struct ArenaFreeBlock ArenaFreeBlock;
typedef struct Arena {
    ArenaChunk *head;
    size_t used_bytes;     /* bytes handed out (less those handed back) */
    size_t reserved_bytes; /* bytes obtained from malloc */
    size_t free_bytes;     /* bytes on the free lists */
    ArenaFreeBlock *free_lines[ARENA_FREE_CLASSES + 1]; /* [k]: blocks of k lines; [0]: larger */
    ArenaFreeBlock *free_small[ARENA_FREE_CLASSES + 1]; /* [k]: blocks of 16k bytes; [0]: larger */
} Arena;

void arena_init(Arena *a);
void arena_free(Arena *a);
/* Returns zeroed, 16-byte aligned memory, or NULL when out of memory. */
void *arena_alloc(Arena *a, size_t n);
/* Hands back a block of arena_alloc(a, n) (the same n), for reuse. */
void arena_free_block(Arena *a, void *p, size_t n);
/* The same, 64-byte aligned and rounded up to a multiple of 64 bytes, so an
 * object of at most 64 bytes sits in one cache line. */
void *arena_alloc_lines(Arena *a, size_t n);
/* Hands back a block of arena_alloc_lines(a, n) (the same n): a later
 * arena_alloc_lines of that size reuses it.  The memory stays with the
 * arena (it is not returned to the system). */
void arena_free_lines(Arena *a, void *p, size_t n);
char *arena_strdup(Arena *a, const char *s);

#endif
