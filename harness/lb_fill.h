/*
 * lb_fill.h - the logical batch generator's bulk fills, spread over threads
 * with the same values a single thread writes (harness/lb_fill.c).
 */
#ifndef OPP_HARNESS_LB_FILL_H
#define OPP_HARNESS_LB_FILL_H

#include <stddef.h>
#include <stdint.h>

#include "lib/oppacked.h"

/* dst[i] = amplitude * opp_rng_normalish(state) for i = 0 .. count-1 in the
 * storage type, as the sequential loop does, and *state advanced past the
 * 4 count draws. Threads: opp_ref_threads(), fewer for small counts. */
void opp_lb_fill_values(void *dst, size_t count, opp_dtype_t dtype, double amplitude,
                        uint64_t *state);

/* dst[i] = value(i % 2) for i = 0 .. count-1, where value(k) is what
 * opp__store_elem writes for the k-th value of the pattern (the pattern
 * computed once, copied by threads: the same bytes as an element-wise
 * loop). */
void opp_lb_fill_pattern2(void *dst, size_t count, opp_dtype_t dtype, double v0, double v1);

#endif /* OPP_HARNESS_LB_FILL_H */
