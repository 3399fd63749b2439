/*
 * varlen_check_test.c - CPU tests of opp_varlen_check (lib/varlen_check.c):
 * host cu_seqlens prefix sums [batch + 1] checked against a descriptor.
 * One test per bad input, each checking the status AND the message, plus
 * the order in which faults are reported.
 */
#include <string.h>

#include "tests/test_util.h"

/* B = 4, total_q = 100, total_kv = 120, max_seqlen_q = 40, max_seqlen_kv = 50. */
static opp_attention_desc_t desc_b4(void) {
    opp_attention_desc_t d;
    opp_attention_desc_init(&d);
    d.q_dtype = d.k_dtype = d.v_dtype = d.out_dtype = OPP_DTYPE_BF16;
    d.batch = 4;
    d.num_heads = 4;
    d.head_size = 32;
    d.total_q = 100;
    d.total_kv = 120;
    d.max_seqlen_q = 40;
    d.max_seqlen_kv = 50;
    return d;
}

/* Lengths q: 30 0 40 30, kv: 50 20 0 50 (an empty sequence on each side). */
static const int32_t k_cu_q[5] = {0, 30, 30, 70, 100};
static const int32_t k_cu_kv[5] = {0, 50, 70, 70, 120};

/* The whole message: user-facing messages carry no "file:line: " prefix. */
static const char *message_body(void) {
    return opp_last_error_message();
}

// Valid arrays pass, including empty sequences and lengths exactly at max_seqlen.
static void test_varlen_check_valid_passes(void **state) {
    (void)state;
    const opp_attention_desc_t d = desc_b4();
    assert_opp_ok(opp_varlen_check(&d, k_cu_q, 5, k_cu_kv, 5));
    opp_attention_desc_t one = desc_b4();
    one.batch = 1;
    one.max_seqlen_q = 100;
    one.max_seqlen_kv = 120;
    const int32_t q1[2] = {0, 100}, kv1[2] = {0, 120};
    assert_opp_ok(opp_varlen_check(&one, q1, 2, kv1, 2));
    one.total_q = one.total_kv = one.max_seqlen_q = one.max_seqlen_kv = 0;
    const int32_t zero[2] = {0, 0};
    assert_opp_ok(opp_varlen_check(&one, zero, 2, zero, 2));
}

// The descriptor is checked first: its error wins even over NULL arrays.
static void test_varlen_check_bad_desc_reported_first(void **state) {
    (void)state;
    opp_attention_desc_t d = desc_b4();
    d.batch = 0;
    assert_opp_status(opp_varlen_check(&d, NULL, 0, NULL, 7), OPP_STATUS_BAD_PARAM_BATCH,
                      "batch = 0 must be >= 1");
    assert_opp_status(opp_varlen_check(NULL, k_cu_q, 5, k_cu_kv, 5),
                      OPP_STATUS_BAD_PARAM_NULL_POINTER, "desc is NULL");
}

// A NULL array is BAD_PARAM_NULL_POINTER naming it.
static void test_varlen_check_null_array_rejected(void **state) {
    (void)state;
    const opp_attention_desc_t d = desc_b4();
    assert_opp_status(opp_varlen_check(&d, NULL, 5, k_cu_kv, 5), OPP_STATUS_BAD_PARAM_NULL_POINTER,
                      "cu_seqlens_q is NULL");
    assert_opp_status(opp_varlen_check(&d, k_cu_q, 5, NULL, 5), OPP_STATUS_BAD_PARAM_NULL_POINTER,
                      "cu_seqlens_kv is NULL");
}

// Arrays of different lengths are BAD_PARAM_SEQLENS_COUNT_MISMATCH (before the batch check).
static void test_varlen_check_count_mismatch_rejected(void **state) {
    (void)state;
    const opp_attention_desc_t d = desc_b4();
    assert_opp_status(opp_varlen_check(&d, k_cu_q, 5, k_cu_kv, 4),
                      OPP_STATUS_BAD_PARAM_SEQLENS_COUNT_MISMATCH,
                      "cu_seqlens_q has 5 entries but cu_seqlens_kv has 4");
    assert_opp_status(opp_varlen_check(&d, k_cu_q, 3, k_cu_kv, 5),
                      OPP_STATUS_BAD_PARAM_SEQLENS_COUNT_MISMATCH,
                      "cu_seqlens_q has 3 entries but cu_seqlens_kv has 5");
}

// A count other than batch + 1 is BAD_PARAM_SEQLENS_COUNT.
static void test_varlen_check_count_not_batch_plus_one_rejected(void **state) {
    (void)state;
    opp_attention_desc_t d = desc_b4();
    d.batch = 3;
    assert_opp_status(opp_varlen_check(&d, k_cu_q, 5, k_cu_kv, 5),
                      OPP_STATUS_BAD_PARAM_SEQLENS_COUNT,
                      "cu_seqlens_q has 5 entries, expected batch + 1 = 4");
    d = desc_b4();
    assert_opp_status(opp_varlen_check(&d, k_cu_q, 0, k_cu_kv, 0),
                      OPP_STATUS_BAD_PARAM_SEQLENS_COUNT,
                      "cu_seqlens_q has 0 entries, expected batch + 1 = 5");
}

// A first entry other than 0 is BAD_PARAM_SEQLENS_START, for q and for kv.
static void test_varlen_check_start_not_zero_rejected(void **state) {
    (void)state;
    const opp_attention_desc_t d = desc_b4();
    const int32_t q[5] = {3, 30, 30, 70, 100};
    assert_opp_status(opp_varlen_check(&d, q, 5, k_cu_kv, 5), OPP_STATUS_BAD_PARAM_SEQLENS_START,
                      "cu_seqlens_q[0] = 3, expected 0");
    const int32_t kv[5] = {-1, 50, 70, 70, 120};
    assert_opp_status(opp_varlen_check(&d, k_cu_q, 5, kv, 5), OPP_STATUS_BAD_PARAM_SEQLENS_START,
                      "cu_seqlens_kv[0] = -1, expected 0");
}

// A decrease is BAD_PARAM_SEQLENS_DECREASING with exactly "a[i] = x < a[i-1] = y".
static void test_varlen_check_decreasing_rejected(void **state) {
    (void)state;
    const opp_attention_desc_t d = desc_b4();
    const int32_t kv[5] = {0, 5, 20, 17, 120};
    assert_opp_status(opp_varlen_check(&d, k_cu_q, 5, kv, 5),
                      OPP_STATUS_BAD_PARAM_SEQLENS_DECREASING, "cu_seqlens_kv[3]");
    assert_string_equal(message_body(), "cu_seqlens_kv[3] = 17 < cu_seqlens_kv[2] = 20");
    const int32_t q[5] = {0, -5, 30, 70, 100};
    assert_opp_status(opp_varlen_check(&d, q, 5, k_cu_kv, 5),
                      OPP_STATUS_BAD_PARAM_SEQLENS_DECREASING, "cu_seqlens_q[1]");
    assert_string_equal(message_body(), "cu_seqlens_q[1] = -5 < cu_seqlens_q[0] = 0");
    const int32_t by_one[5] = {0, 30, 29, 70, 100};
    assert_opp_status(opp_varlen_check(&d, by_one, 5, k_cu_kv, 5),
                      OPP_STATUS_BAD_PARAM_SEQLENS_DECREASING,
                      "cu_seqlens_q[2] = 29 < cu_seqlens_q[1] = 30");
}

// The first decrease is reported, and before a wrong total or an over-long sequence.
static void test_varlen_check_first_decrease_reported(void **state) {
    (void)state;
    const opp_attention_desc_t d = desc_b4();
    const int32_t q[5] = {0, 90, 80, 10, 555}; /* L_0 = 90 > 40, last != 100, two decreases */
    assert_opp_status(opp_varlen_check(&d, q, 5, k_cu_kv, 5),
                      OPP_STATUS_BAD_PARAM_SEQLENS_DECREASING,
                      "cu_seqlens_q[2] = 80 < cu_seqlens_q[1] = 90");
}

// A last entry above the total (the capacity) is BAD_PARAM_SEQLENS_TOTAL, for q and for kv.
static void test_varlen_check_last_above_total_rejected(void **state) {
    (void)state;
    opp_attention_desc_t d = desc_b4();
    d.total_q = 99;
    assert_opp_status(opp_varlen_check(&d, k_cu_q, 5, k_cu_kv, 5),
                      OPP_STATUS_BAD_PARAM_SEQLENS_TOTAL, "cu_seqlens_q[4] = 100 > total_q = 99");
    d = desc_b4();
    const int32_t kv[5] = {0, 50, 70, 70, 121};
    assert_opp_status(opp_varlen_check(&d, k_cu_q, 5, kv, 5), OPP_STATUS_BAD_PARAM_SEQLENS_TOTAL,
                      "cu_seqlens_kv[4] = 121 > total_kv = 120");
}

// A last entry below the total is a smaller batch in the same capacity (graph
// replay): accepted, down to every sequence empty; max_seqlen may exceed the total.
static void test_varlen_check_last_below_total_accepted(void **state) {
    (void)state;
    opp_attention_desc_t d = desc_b4(); /* totals 100 / 120 */
    const int32_t q[5] = {0, 30, 30, 70, 99}, kv[5] = {0, 50, 70, 70, 119};
    assert_opp_ok(opp_varlen_check(&d, q, 5, kv, 5));
    const int32_t none[5] = {0, 0, 0, 0, 0};
    assert_opp_ok(opp_varlen_check(&d, none, 5, none, 5));
    d.max_seqlen_q = 1000;
    d.max_seqlen_kv = 1000;
    assert_opp_ok(opp_varlen_check(&d, k_cu_q, 5, k_cu_kv, 5));
}

// A sequence longer than max_seqlen is BAD_PARAM_MAX_SEQLEN naming the sequence and entries.
static void test_varlen_check_length_above_max_rejected(void **state) {
    (void)state;
    opp_attention_desc_t d = desc_b4();
    d.max_seqlen_q = 32;
    const int32_t q[5] = {0, 30, 30, 70, 100}; /* sequence 2 has L_q = 40 */
    assert_opp_status(
        opp_varlen_check(&d, q, 5, k_cu_kv, 5), OPP_STATUS_BAD_PARAM_MAX_SEQLEN,
        "sequence 2: L_q = cu_seqlens_q[3] - cu_seqlens_q[2] = 40 > max_seqlen_q = 32");
    d = desc_b4();
    d.max_seqlen_kv = 49;
    assert_opp_status(opp_varlen_check(&d, k_cu_q, 5, k_cu_kv, 5), OPP_STATUS_BAD_PARAM_MAX_SEQLEN,
                      "sequence 0: L_kv = cu_seqlens_kv[1] - cu_seqlens_kv[0] = 50 > "
                      "max_seqlen_kv = 49");
}

// The q array is fully checked before the kv array.
static void test_varlen_check_q_reported_before_kv(void **state) {
    (void)state;
    opp_attention_desc_t d = desc_b4();
    d.max_seqlen_q = 35;
    const int32_t kv[5] = {7, 50, 70, 70, 120}; /* bad start; q has L_q = 40 > 35 */
    assert_opp_status(opp_varlen_check(&d, k_cu_q, 5, kv, 5), OPP_STATUS_BAD_PARAM_MAX_SEQLEN,
                      "sequence 2: L_q");
}

// Checks within one array run in order: start, decreasing, total, lengths.
static void test_varlen_check_array_checks_in_order(void **state) {
    (void)state;
    opp_attention_desc_t d = desc_b4();
    d.max_seqlen_q = 35;
    const int32_t start_and_more[5] = {1, 0, 30, 70, 99};
    assert_opp_status(opp_varlen_check(&d, start_and_more, 5, k_cu_kv, 5),
                      OPP_STATUS_BAD_PARAM_SEQLENS_START, "cu_seqlens_q[0] = 1");
    const int32_t total_and_length[5] = {0, 30, 30, 70, 101}; /* L_2 = 40 > 35 too */
    assert_opp_status(opp_varlen_check(&d, total_and_length, 5, k_cu_kv, 5),
                      OPP_STATUS_BAD_PARAM_SEQLENS_TOTAL, "cu_seqlens_q[4] = 101 > total_q = 100");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_varlen_check_valid_passes),
        cmocka_unit_test(test_varlen_check_bad_desc_reported_first),
        cmocka_unit_test(test_varlen_check_null_array_rejected),
        cmocka_unit_test(test_varlen_check_count_mismatch_rejected),
        cmocka_unit_test(test_varlen_check_count_not_batch_plus_one_rejected),
        cmocka_unit_test(test_varlen_check_start_not_zero_rejected),
        cmocka_unit_test(test_varlen_check_decreasing_rejected),
        cmocka_unit_test(test_varlen_check_first_decrease_reported),
        cmocka_unit_test(test_varlen_check_last_above_total_rejected),
        cmocka_unit_test(test_varlen_check_last_below_total_accepted),
        cmocka_unit_test(test_varlen_check_length_above_max_rejected),
        cmocka_unit_test(test_varlen_check_q_reported_before_kv),
        cmocka_unit_test(test_varlen_check_array_checks_in_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
