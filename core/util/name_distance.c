/* name_distance.c - the edit distance of name_distance.h, with three rows
 * of the usual table (a swap looks two rows back). */
#include "name_distance.h"
#include <string.h>

int name_distance(const char *a, const char *b) {
    enum { W = NAME_DISTANCE_MAX_LEN + 1 };
    size_t la = strlen(a), lb = strlen(b);
    if (la > NAME_DISTANCE_MAX_LEN || lb > NAME_DISTANCE_MAX_LEN) return NAME_DISTANCE_MAX_LEN + 1;
    int rows[3][W];
    int *two_back = rows[0], *prev = rows[1], *cur = rows[2];
    for (size_t j = 0; j <= lb; j++) prev[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        cur[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int best = prev[j - 1] + (a[i - 1] != b[j - 1]);
            if (prev[j] + 1 < best) best = prev[j] + 1;
            if (cur[j - 1] + 1 < best) best = cur[j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && two_back[j - 2] + 1 < best)
                best = two_back[j - 2] + 1;
            cur[j] = best;
        }
        int *t = two_back;
        two_back = prev, prev = cur, cur = t;
    }
    return prev[lb];
}
