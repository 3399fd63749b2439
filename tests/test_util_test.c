/*
 * test_util_test.c - CPU tests of the shared test helpers (tests/test_util.c):
 * bit equality and ulp distance for f32/f16/bf16/f64 (NaN == NaN, +0 != -0
 * in bits, 0 ulp apart), mismatch counts, statistics, and the status
 * assertion clearing stale messages.
 */
#include <math.h>
#include <string.h>

#include "lib/internal/check.h"
#include "tests/test_util.h"

static uint32_t f32_bits(float x) {
    uint32_t u;
    memcpy(&u, &x, 4);
    return u;
}

// Identical f32 buffers have no mismatch; each differing element counts once.
static void test_bits_equal_f32_counts_mismatches(void **state) {
    (void)state;
    const float want[4] = {1.0f, -2.5f, 3.0e-40f, INFINITY};
    float got[4];
    memcpy(got, want, sizeof got);
    assert_int_equal(opp_test_bits_equal(got, want, 4, OPP_DTYPE_F32, "same"), 0);
    got[1] = nextafterf(-2.5f, 0.0f);
    got[3] = -INFINITY;
    assert_int_equal(opp_test_bits_equal(got, want, 4, OPP_DTYPE_F32, "two_off"), 2);
}

// +0 and -0 differ in bits; any two NaNs are equal; NaN vs a number differs.
static void test_bits_equal_signed_zero_and_nan(void **state) {
    (void)state;
    const uint32_t want[3] = {0x00000000u, 0x7fc00000u, 0x3f800000u};
    const uint32_t got[3] = {0x80000000u, 0xffc00001u, 0x3f800000u};
    assert_int_equal(opp_test_bits_equal(got, want, 3, OPP_DTYPE_F32, "zero_nan"), 1);
    const uint32_t nan_vs_one[1] = {0x7fc00000u};
    assert_int_equal(opp_test_bits_equal(nan_vs_one, &want[2], 1, OPP_DTYPE_F32, "nan1"), 1);
    const uint16_t h_want[3] = {0x0000, 0x7e00, 0x3c00}; /* f16: 0, NaN, 1 */
    const uint16_t h_got[3] = {0x8000, 0xfc01, 0x3c00};
    assert_int_equal(opp_test_bits_equal(h_got, h_want, 3, OPP_DTYPE_F16, "h"), 1);
    const uint16_t b_want[2] = {0x7fc0, 0x3f80}; /* bf16: NaN, 1 */
    const uint16_t b_got[2] = {0xff81, 0x3f81};
    assert_int_equal(opp_test_bits_equal(b_got, b_want, 2, OPP_DTYPE_BF16, "b"), 1);
}

// ulp distances follow the ordered-integer mapping in every format.
static void test_ulp_distance_ordered_mapping(void **state) {
    (void)state;
    assert_int_equal(
        opp_test_ulp_distance(f32_bits(1.0f), f32_bits(nextafterf(1.0f, 2.0f)), OPP_DTYPE_F32), 1);
    assert_int_equal(opp_test_ulp_distance(0x00000000u, 0x80000000u, OPP_DTYPE_F32), 0);
    assert_int_equal(opp_test_ulp_distance(0x00000001u, 0x80000001u, OPP_DTYPE_F32), 2);
    assert_int_equal(opp_test_ulp_distance(0x7f7fffffu, 0x7f800000u, OPP_DTYPE_F32), 1);
    assert_int_equal(opp_test_ulp_distance(0x3f800000u, 0xbf800000u, OPP_DTYPE_F32),
                     2 * 0x3f800000u);
    assert_int_equal(opp_test_ulp_distance(0x7fc00000u, 0xffc12345u, OPP_DTYPE_F32), 0);
    assert_true(opp_test_ulp_distance(0x7fc00000u, 0x3f800000u, OPP_DTYPE_F32) == UINT64_MAX);
    assert_int_equal(opp_test_ulp_distance(0x3c00, 0x3c01, OPP_DTYPE_F16), 1);
    assert_int_equal(opp_test_ulp_distance(0x0001, 0x8001, OPP_DTYPE_F16), 2);
    assert_int_equal(opp_test_ulp_distance(0x7bff, 0x7c00, OPP_DTYPE_F16), 1);
    assert_int_equal(opp_test_ulp_distance(0x3f80, 0x3f83, OPP_DTYPE_BF16), 3);
    assert_int_equal(opp_test_ulp_distance(0x8000, 0x0000, OPP_DTYPE_BF16), 0);
    assert_int_equal(opp_test_ulp_distance(0x3ff0000000000000u, 0x3ff0000000000002u, OPP_DTYPE_F64),
                     2);
    assert_true(opp_test_ulp_distance(0, 1, (opp_dtype_t)3) == UINT64_MAX);
}

// ulp_compare counts only elements beyond max_ulp and accumulates statistics.
static void test_ulp_compare_threshold_and_stats(void **state) {
    (void)state;
    const uint16_t want[5] = {0x3c00, 0x3c00, 0x3c00, 0x0000, 0x7e00};
    const uint16_t got[5] = {0x3c00, 0x3c01, 0x3c03, 0x8000, 0x7e01};
    opp_test_ulp_stats_t st = {0};
    assert_int_equal(opp_test_ulp_compare(got, want, 5, OPP_DTYPE_F16, 1, "h", &st), 1);
    assert_int_equal(st.compared, 5);
    assert_int_equal(st.identical, 2); /* equal bits, and NaN vs NaN */
    assert_int_equal(st.max_ulp, 3);
    assert_int_equal(opp_test_ulp_compare(got, want, 5, OPP_DTYPE_F16, 3, "h", &st), 0);
    assert_int_equal(st.compared, 10);
    assert_int_equal(st.identical, 4);
    const uint16_t nan_got[1] = {0x7e00};
    assert_int_equal(opp_test_ulp_compare(nan_got, want, 1, OPP_DTYPE_F16, 1000, "n", &st), 1);
    assert_true(st.max_ulp == UINT64_MAX);
    assert_int_equal(opp_test_ulp_compare(got, want, 5, OPP_DTYPE_F16, 0, "nostats", NULL), 2);
}

// Unsupported dtypes and NULL buffers are reported as SIZE_MAX; n = 0 compares nothing.
static void test_compare_rejects_bad_input(void **state) {
    (void)state;
    const uint8_t a[4] = {0};
    assert_true(opp_test_bits_equal(a, a, 4, (opp_dtype_t)3, "int8") == SIZE_MAX);
    assert_true(opp_test_ulp_compare(a, a, 1, OPP_DTYPE_UNDEFINED, 0, "u", NULL) == SIZE_MAX);
    assert_true(opp_test_bits_equal(NULL, a, 1, OPP_DTYPE_F32, "null") == SIZE_MAX);
    assert_int_equal(opp_test_bits_equal(NULL, NULL, 0, OPP_DTYPE_F32, "empty"), 0);
}

// assert_opp_status clears a stale message before evaluating its expression.
static void test_assert_opp_status_clears_stale_message(void **state) {
    (void)state;
    opp__set_error(OPP_STATUS_BAD_PARAM, "stale.c", 1, "stale message");
    assert_opp_status(OPP_STATUS_BAD_PARAM, OPP_STATUS_BAD_PARAM, NULL);
    assert_string_equal(opp_last_error_message(), "");
    assert_opp_status(opp_attention_claim_check(NULL), OPP_STATUS_BAD_PARAM_NULL_POINTER,
                      "desc is NULL");
    assert_opp_ok(OPP_STATUS_SUCCESS);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bits_equal_f32_counts_mismatches),
        cmocka_unit_test(test_bits_equal_signed_zero_and_nan),
        cmocka_unit_test(test_ulp_distance_ordered_mapping),
        cmocka_unit_test(test_ulp_compare_threshold_and_stats),
        cmocka_unit_test(test_compare_rejects_bad_input),
        cmocka_unit_test(test_assert_opp_status_clears_stale_message),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
