/*
 * fastdiv_test.c - x / d by a multiply and a shift (kernels/fastdiv.h, the
 * flash kernel's index arithmetic) against C's division: every divisor the
 * kernels use in practice (G, Hkv, B Hkv: 1 .. 4096) on dividends near 0,
 * near every multiple of d up to 2^20, near 2^31 and at random; powers of
 * two and the extremes of d; and the {0, 0} of a divisor out of range.
 * CPU only.
 * Run (Bazel): bazel test //tests:fastdiv_test --test_output=all
 */
#include <stdint.h>

#include "kernels/fastdiv.h"
#include "tests/test_util.h"

/* x / d for x in [lo, hi] (0 <= lo <= hi < 2^31): the count of mismatches. */
static long check_range(int64_t d, int64_t lo, int64_t hi) {
    const opp__fastdiv_t f = opp__fastdiv_make(d);
    long bad = 0;
    for (int64_t x = lo; x <= hi; ++x) {
        bad += opp__fastdiv((int32_t)x, &f) != (int32_t)(x / d);
    }
    return bad;
}

/* A deterministic 31-bit generator (xorshift64). */
static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static int32_t next31(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (int32_t)(rng_state & 0x7FFFFFFF);
}

// Every d of 1 .. 4096: small dividends, the neighbours of each multiple of
// d below 2^20, the top of the range, and random dividends.
static void test_fastdiv_small_divisors(void **state) {
    (void)state;
    long bad = 0;
    for (int64_t d = 1; d <= 4096; ++d) {
        const opp__fastdiv_t f = opp__fastdiv_make(d);
        assert_true(f.shr >= 31 && f.mul != 0);
        bad += check_range(d, 0, 4 * d + 3);
        for (int64_t m = d; m < ((int64_t)1 << 20); m += d) {
            bad += check_range(d, m - 1, m);
        }
        bad += check_range(d, 0x7FFFFFFF - 2 * d, 0x7FFFFFFF);
        for (int k = 0; k < 2000; ++k) {
            const int32_t x = next31();
            bad += opp__fastdiv(x, &f) != x / (int32_t)d;
        }
    }
    assert_int_equal(bad, 0);
}

// Powers of two and their neighbours up to 2^30, and the largest divisors.
static void test_fastdiv_large_divisors(void **state) {
    (void)state;
    long bad = 0;
    for (int l = 12; l <= 30; ++l) {
        for (int64_t d = ((int64_t)1 << l) - 1; d <= ((int64_t)1 << l) + 1; ++d) {
            bad += check_range(d, 0, 3000);
            bad += check_range(d, d - 2, d + 2);
            bad += check_range(d, 0x7FFFFFFF - 3000, 0x7FFFFFFF);
        }
    }
    for (int64_t d = 0x7FFFFFFF - 3; d <= 0x7FFFFFFF; ++d) {
        bad += check_range(d, 0, 100);
        bad += check_range(d, 0x7FFFFFFF - 100, 0x7FFFFFFF);
    }
    assert_int_equal(bad, 0);
}

// A divisor out of 1 .. 2^31 - 1 is {0, 0}: its quotients are 0.
static void test_fastdiv_out_of_range(void **state) {
    (void)state;
    const int64_t outside[] = {0, -1, (int64_t)1 << 31, INT64_MAX};
    for (int i = 0; i < (int)(sizeof outside / sizeof outside[0]); ++i) {
        const opp__fastdiv_t f = opp__fastdiv_make(outside[i]);
        assert_int_equal(f.mul, 0);
        assert_int_equal(f.shr, 0);
        assert_int_equal(opp__fastdiv(12345, &f), 0);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fastdiv_small_divisors),
        cmocka_unit_test(test_fastdiv_large_divisors),
        cmocka_unit_test(test_fastdiv_out_of_range),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
