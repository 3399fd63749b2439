/*
 * lb_fill_test.c - CPU tests of the logical batch generator's bulk fills
 * (harness/lb_fill.c): the threaded random fill writes the bytes, and
 * leaves the state, of the sequential loop it replaced (computed here
 * element by element), at 1, 2, 3 and 7 threads, for every storage type
 * and for counts around the per-thread minimum; the poison pattern equals
 * an element-wise fill at the same thread counts; opp_rng_skip(n) equals
 * n draws.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness/lb_fill.h"
#include "harness/rng.h"
#include "numerics/fp_convert.h"
#include "reference/opp_reference.h"
#include "tests/test_util.h"

/* The sequential loop opp_lb_fill_values replaced. */
static void fill_sequential(void *dst, size_t count, opp_dtype_t dtype, double amplitude,
                            uint64_t *state) {
    for (size_t i = 0; i < count; ++i) {
        opp__store_elem(dst, i, (int)dtype, amplitude * opp_rng_normalish(state));
    }
}

// Same bytes and same final state as the sequential loop, at any thread count.
static void test_fill_values_matches_sequential(void **state) {
    (void)state;
    static const opp_dtype_t dts[3] = {OPP_DTYPE_F32, OPP_DTYPE_F16, OPP_DTYPE_BF16};
    static const size_t counts[6] = {0, 1, 5, (1u << 18) - 1, (1u << 19) + 3, 3u * (1u << 18) + 7};
    static const int threads[4] = {1, 2, 3, 7};
    for (int d = 0; d < 3; ++d) {
        const size_t es = opp_dtype_size(dts[d]);
        for (int c = 0; c < 6; ++c) {
            const size_t n = counts[c];
            unsigned char *want = malloc(n * es + 1), *got = malloc(n * es + 1);
            assert_non_null(want);
            assert_non_null(got);
            uint64_t s_want = 0x1234u + (uint64_t)c;
            fill_sequential(want, n, dts[d], 1.75, &s_want);
            for (int t = 0; t < 4; ++t) {
                opp_ref_set_threads(threads[t]);
                memset(got, 0xA5, n * es + 1);
                uint64_t s_got = 0x1234u + (uint64_t)c;
                opp_lb_fill_values(got, n, dts[d], 1.75, &s_got);
                assert_memory_equal(got, want, n * es);
                assert_int_equal(got[n * es], 0xA5); /* nothing past the end */
                assert_true(s_got == s_want);
            }
            free(want);
            free(got);
        }
    }
    opp_ref_set_threads(0);
}

// The two-element pattern equals an element-wise fill, odd and even counts,
// NaN too, at 1, 2, 3 and 7 threads (a thread per 2 MiB: the last counts
// reach 7 threads).
static void test_fill_pattern2_matches_elementwise(void **state) {
    (void)state;
    static const opp_dtype_t dts[3] = {OPP_DTYPE_F32, OPP_DTYPE_F16, OPP_DTYPE_BF16};
    static const size_t counts[8] = {0, 1, 2, 3, 1000, 40999, (1u << 21) + 3, 8u * (1u << 20) + 1};
    static const int threads[4] = {1, 2, 3, 7};
    for (int d = 0; d < 3; ++d) {
        const size_t es = opp_dtype_size(dts[d]);
        for (int c = 0; c < 8; ++c) {
            const size_t n = counts[c];
            for (int nan = 0; nan < 2; ++nan) {
                const double v0 = nan ? (double)NAN : 1.0e30, v1 = nan ? (double)NAN : -1.0e30;
                unsigned char *want = malloc(n * es + 1), *got = malloc(n * es + 1);
                assert_non_null(want);
                assert_non_null(got);
                for (size_t i = 0; i < n; ++i) {
                    opp__store_elem(want, i, (int)dts[d], (i & 1) ? v1 : v0);
                }
                for (int t = 0; t < 4; ++t) {
                    opp_ref_set_threads(threads[t]);
                    memset(got, 0x5A, n * es + 1);
                    opp_lb_fill_pattern2(got, n, dts[d], v0, v1);
                    assert_memory_equal(got, want, n * es);
                    assert_int_equal(got[n * es], 0x5A);
                }
                free(want);
                free(got);
            }
        }
    }
    opp_ref_set_threads(0);
}

// opp_rng_skip(n) lands where n draws do.
static void test_rng_skip_equals_draws(void **state) {
    (void)state;
    static const uint64_t ns[4] = {0, 1, 4, 1000003};
    for (int k = 0; k < 4; ++k) {
        uint64_t a = 0xDEADBEEFull, b = 0xDEADBEEFull;
        for (uint64_t i = 0; i < ns[k]; ++i) {
            (void)opp_rng_u64(&a);
        }
        opp_rng_skip(&b, ns[k]);
        assert_true(a == b);
        assert_true(opp_rng_u64(&a) == opp_rng_u64(&b));
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fill_values_matches_sequential),
        cmocka_unit_test(test_fill_pattern2_matches_elementwise),
        cmocka_unit_test(test_rng_skip_equals_draws),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
