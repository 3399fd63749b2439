/*
 * status_debug_test.c - lib/status.c built with -DOPP_DEBUG_MESSAGES (the
 * debug option of lib/oppacked.h's opp_last_error_message()): every
 * message is prefixed with the "file:line: " of the check that failed.
 * Links //lib:status_debug alone (not the library, whose status.c has no
 * prefix: //tests:status_test and //tests:api_contract_test check that).
 * Run (Bazel): bazel test //tests:status_debug_test --test_output=all
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "lib/internal/check.h"

static opp_status_t fail_here(void) {
    OPP_RETURN_IF(1, OPP_STATUS_BAD_PARAM_BATCH, "batch = %d must be >= 1", 0);
    return OPP_STATUS_SUCCESS;
}

// The debug build prefixes the recorded source location.
static void test_debug_messages_have_file_line_prefix(void **state) {
    (void)state;
    const opp_status_t s =
        opp__set_error(OPP_STATUS_INTERNAL_ERROR, "lib/example.c", 42, "v = %d", 7);
    assert_int_equal(s, OPP_STATUS_INTERNAL_ERROR);
    assert_string_equal(opp_last_error_message(), "lib/example.c:42: v = 7");
}

// OPP_RETURN_IF records __FILE__:__LINE__ of the check in the debug build.
static void test_debug_return_if_names_this_file(void **state) {
    (void)state;
    assert_int_equal(fail_here(), OPP_STATUS_BAD_PARAM_BATCH);
    const char *msg = opp_last_error_message();
    assert_non_null(strstr(msg, "status_debug_test.c:"));
    assert_non_null(strstr(msg, ": batch = 0 must be >= 1"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_debug_messages_have_file_line_prefix),
        cmocka_unit_test(test_debug_return_if_names_this_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
