/*
 * test_util.h - helpers shared by every liboppacked CMocka test.
 *
 * Include this instead of <cmocka.h>: it pulls in the headers CMocka needs
 * first, then cmocka.h and the public API.
 *
 *   assert_opp_ok(expr)                     expr must return OPP_STATUS_SUCCESS
 *   assert_opp_status(expr, status, substr) expr must return status AND
 *                                           opp_last_error_message() must
 *                                           contain substr (NULL: not checked)
 *   opp_test_bits_equal(...)                element-wise bit comparison
 *   opp_test_ulp_compare(...)               element-wise ulp-distance comparison
 *
 * The comparators read f32, f16, bf16 (and f64) host buffers, print the
 * first OPP_TEST_MAX_REPORTED mismatches as
 *   what[index]: got 0x3f800001 (1.00000012) want 0x3f800000 (1) ulp 1
 * and return the number of mismatches, so tests write
 *   assert_int_equal(opp_test_bits_equal(got, want, n, OPP_DTYPE_F16, "out"), 0);
 * GPU helpers (device count, skip without a device) live elsewhere.
 */
#ifndef OPP_TESTS_TEST_UTIL_H
#define OPP_TESTS_TEST_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "lib/oppacked.h"

/* At most this many mismatches are printed per comparison. */
#define OPP_TEST_MAX_REPORTED 5

/* Fails the current test unless expr (evaluated once) returns SUCCESS; the
 * failure names the expression, the status and opp_last_error_message(). */
#define assert_opp_ok(expr) \
    opp_test_check_status_((expr), OPP_STATUS_SUCCESS, NULL, #expr, __FILE__, __LINE__)

/* Fails the current test unless expr returns expected_status and the
 * thread's last error message contains expected_substring (skipped when
 * NULL). The failure prints both statuses and the message. */
#define assert_opp_status(expr, expected_status, expected_substring)                  \
    opp_test_check_status_((opp_test_clear_last_error_(), (expr)), (expected_status), \
                           (expected_substring), #expr, __FILE__, __LINE__)

/* Implementation of the macros above; call them instead. assert_opp_status
 * clears the thread's last error before evaluating expr, so the message it
 * checks was recorded by expr itself, never left over from an earlier call. */
void opp_test_check_status_(opp_status_t got, opp_status_t want, const char *want_substring,
                            const char *expr, const char *file, int line);
void opp_test_clear_last_error_(void);

/* Statistics of opp_test_ulp_compare(); the function ADDS to them, so one
 * struct can sum several calls. Zero-initialize it first. */
typedef struct opp_test_ulp_stats {
    size_t compared;  /* elements compared */
    size_t identical; /* elements with identical bits (or both NaN) */
    uint64_t max_ulp; /* largest ulp distance seen; UINT64_MAX for NaN vs number */
} opp_test_ulp_stats_t;

/* Compares n elements of dtype bit for bit. Any NaN equals any NaN; +0 and
 * -0 differ. got, want: host, [n] elements of dtype. what names the
 * buffer in the report.
 * @return : the number of differing elements; SIZE_MAX (after printing why)
 *           when dtype is not F32/F16/BF16/F64 or a pointer is NULL. */
size_t opp_test_bits_equal(const void *got, const void *want, size_t n, opp_dtype_t dtype,
                           const char *what);

/* Compares n elements of dtype by ulp distance (sign-magnitude bits mapped
 * to ordered integers, so +0 and -0 are 0 ulp apart and the largest finite
 * value is 1 ulp below infinity). Any NaN equals any NaN; NaN vs a number
 * is an infinite distance. An element is a mismatch when its distance
 * exceeds max_ulp. stats (may be NULL) accumulates over calls.
 * @return : the number of mismatches; SIZE_MAX as opp_test_bits_equal. */
size_t opp_test_ulp_compare(const void *got, const void *want, size_t n, opp_dtype_t dtype,
                            uint64_t max_ulp, const char *what, opp_test_ulp_stats_t *stats);

/* The ulp distance between two elements of dtype given as raw bits (the
 * low 16, 32 or 64 bits); UINT64_MAX when exactly one is NaN, 0 when both
 * are. dtype must be F32, F16, BF16 or F64. */
uint64_t opp_test_ulp_distance(uint64_t a_bits, uint64_t b_bits, opp_dtype_t dtype);

#endif /* OPP_TESTS_TEST_UTIL_H */
