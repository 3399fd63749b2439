/*
 * test_util.c - status assertions and bit / ulp comparators for CMocka
 * tests (see test_util.h). The comparators forward to harness/compare.c
 * (shared with the tools), which reports mismatches on stderr.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "harness/compare.h"
#include "lib/internal/check.h"
#include "tests/test_util.h"

// --- status assertions

void opp_test_clear_last_error_(void) {
    opp__clear_error();
}

void opp_test_check_status_(opp_status_t got, opp_status_t want, const char *want_substring,
                            const char *expr, const char *file, int line) {
    const char *msg = opp_last_error_message();
    const int status_ok = got == want;
    const int message_ok = want_substring == NULL || strstr(msg, want_substring) != NULL;
    if (status_ok && message_ok) {
        return;
    }
    print_error("%s\n  returned %s (%d), expected %s (%d)\n  last error: \"%s\"\n", expr,
                opp_status_name(got), (int)got, opp_status_name(want), (int)want, msg);
    if (!message_ok) {
        print_error("  expected the last error to contain \"%s\"\n", want_substring);
    }
    _fail(file, line);
}

// --- public entry

size_t opp_test_bits_equal(const void *got, const void *want, size_t n, opp_dtype_t dtype,
                           const char *what) {
    return opp_cmp(got, want, n, dtype, 1, 0, what, OPP_TEST_MAX_REPORTED, NULL);
}

size_t opp_test_ulp_compare(const void *got, const void *want, size_t n, opp_dtype_t dtype,
                            uint64_t max_ulp, const char *what, opp_test_ulp_stats_t *stats) {
    opp_cmp_stats_t st = {0, 0, 0, 0};
    const size_t bad = opp_cmp(got, want, n, dtype, 0, max_ulp, what, OPP_TEST_MAX_REPORTED, &st);
    if (stats != NULL) {
        stats->compared += st.compared;
        stats->identical += st.identical;
        stats->max_ulp = st.max_ulp > stats->max_ulp ? st.max_ulp : stats->max_ulp;
    }
    return bad;
}

uint64_t opp_test_ulp_distance(uint64_t a_bits, uint64_t b_bits, opp_dtype_t dtype) {
    return opp_cmp_ulp_distance(a_bits, b_bits, dtype);
}
