/*
 * rng.h - the harness's seeded random numbers: splitmix64 on a caller's
 * uint64_t state (no libm, no global state), so a seed gives the same
 * values on every machine. Header-only (static inline); used by the
 * logical batch generator (harness/logical_batch.c) and the tests' random
 * cases.
 *
 *   opp_rng_u64        the next 64 random bits
 *   opp_rng_int        uniform integer in lo..hi inclusive (modulo draw)
 *   opp_rng_unit       uniform double in [0, 1) (53 bits)
 *   opp_rng_normalish  roughly normal: Irwin-Hall of 4 uniforms, centred,
 *                      unit variance (4 draws)
 *   opp_rng_skip       the state n draws ahead
 */
#ifndef OPP_HARNESS_RNG_H
#define OPP_HARNESS_RNG_H

#include <stdint.h>

/* splitmix64's state advances by this constant a draw, so the state n
 * draws ahead is state + n OPP_RNG_GAMMA (opp_rng_skip): a stream can be
 * cut into ranges that threads fill, with the same values. */
#define OPP_RNG_GAMMA 0x9E3779B97F4A7C15ull

static inline uint64_t opp_rng_u64(uint64_t *state) {
    uint64_t z = (*state += OPP_RNG_GAMMA);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* The state after n more draws (modulo 2^64, as the draws themselves). */
static inline void opp_rng_skip(uint64_t *state, uint64_t n) {
    *state += n * OPP_RNG_GAMMA;
}

static inline int32_t opp_rng_int(uint64_t *state, int32_t lo, int32_t hi) {
    return lo + (int32_t)(opp_rng_u64(state) % (uint64_t)(hi - lo + 1));
}

static inline double opp_rng_unit(uint64_t *state) {
    return (double)(opp_rng_u64(state) >> 11) * 0x1.0p-53;
}

/* Draws one opp_rng_normalish takes. */
#define OPP_RNG_NORMALISH_DRAWS 4

static inline double opp_rng_normalish(uint64_t *state) {
    double s = 0.0;
    for (int i = 0; i < OPP_RNG_NORMALISH_DRAWS; ++i) {
        s += opp_rng_unit(state);
    }
    return (s - 2.0) * 1.7320508075688772;
}

#endif /* OPP_HARNESS_RNG_H */
