/* name_distance.h - how far a typed name is from a known one, for the
 * "did you mean" of mistyped commands, methods and rule names. */
#ifndef UOPDB_NAME_DISTANCE_H
#define UOPDB_NAME_DISTANCE_H

/* The most characters a name may have for name_distance to measure it. */
enum { NAME_DISTANCE_MAX_LEN = 63 };

/* The edit distance between a and b: insertions, deletions, changes, and
 * swaps of two neighbours ("sotp" is 1 from "stop"), each counting 1.  A
 * name longer than NAME_DISTANCE_MAX_LEN is NAME_DISTANCE_MAX_LEN + 1 from
 * anything. */
int name_distance(const char *a, const char *b);

#endif
