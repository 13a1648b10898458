/* random_args.h - the random generator and random args shared by the text
 * round-trip tests (listing, tinygrad repr): every arg kind, with the
 * awkward values (quotes, escapes, -0.0, nan, inf, 1e16, INT64_MIN). */
#ifndef UOPDB_TEST_RANDOM_ARGS_H
#define UOPDB_TEST_RANDOM_ARGS_H
#include <math.h>
#include <stdint.h>
#include "core/ir/uop.h"

static uint64_t rng_state = 0x2545F4914F6CDD1Dull;
static inline void rng_seed(uint64_t seed) { rng_state = seed ? seed : 1; }
static inline uint32_t rnd(uint32_t n) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state % n);
}

static inline const Arg *random_arg(UCtx *c, int depth) {
    static const double floats[] = {0.1, -0.0, 0.0, 1.5, -2.25, 1e-300, 3.0e20, 123456.789, 1e6, 1e16, 1.5e-7, -1e-300};
    static const char *strs[] = {"gidx0", "it's", "say \"hi\"", "both ' and \"", "back\\slash", "tab\there",
                                 "new\nline", "", "#x"};
    switch (rnd(depth < 2 ? 11 : 10)) {
    case 0: return arg_int(c, (int64_t)rnd(2000) - 1000);
    case 1: return arg_float(c, floats[rnd(12)]);
    case 2: return arg_float(c, rnd(3) == 0 ? NAN : rnd(2) ? INFINITY : -INFINITY);
    case 3: return arg_bool(c, rnd(2));
    case 4: return arg_str(c, strs[rnd(9)]);
    case 5: return arg_op(c, (Op)rnd(OP_COUNT));
    case 6: return arg_axis(c, (AxisType)rnd(AXIS_COUNT));
    case 7: return arg_dtype(c, rnd(2) ? dt_vec(DT_FLOAT32, 4) : dt_ptr(DT_INT32, 16, ADDR_LOCAL));
    case 8: return arg_invalid(c);
    case 9: return arg_int(c, INT64_MIN + rnd(3));
    default: {
        const Arg *items[4];
        uint32_t n = rnd(5);
        for (uint32_t i = 0; i < n; i++) items[i] = rnd(6) == 0 ? NULL : random_arg(c, depth + 1);
        return arg_tuple(c, items, n);
    }
    }
}

#endif
