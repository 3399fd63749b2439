/*
 * attention_desc_test.c - CPU tests of opp_attention_desc_init and
 * opp_attention_desc_check (lib/attention_desc.c): defaults, valid
 * descriptors, and one test per invalid batch-shape field (batch, totals,
 * max_seqlens, row strides), each checking the status AND the message.
 * Claim-time fields are in attention_claim_check_test.c.
 */
#include "tests/desc_fixture.h"

// --- init and valid descriptors

// _init sets every documented default and overwrites whatever was there.
static void test_desc_init_sets_defaults(void **state) {
    (void)state;
    opp_attention_desc_t d;
    memset(&d, 0xAB, sizeof d);
    opp_attention_desc_init(&d);
    assert_int_equal(d.q_dtype, OPP_DTYPE_UNDEFINED);
    assert_int_equal(d.k_dtype, OPP_DTYPE_UNDEFINED);
    assert_int_equal(d.v_dtype, OPP_DTYPE_UNDEFINED);
    assert_int_equal(d.out_dtype, OPP_DTYPE_UNDEFINED);
    assert_int_equal(d.batch, 0);
    assert_int_equal(d.num_heads, 0);
    assert_int_equal(d.kv_num_heads, 0);
    assert_int_equal(d.head_size, 0);
    assert_int_equal(d.v_head_size, 0);
    assert_int_equal(d.total_q, 0);
    assert_int_equal(d.total_kv, 0);
    assert_int_equal(d.max_seqlen_q, 0);
    assert_int_equal(d.max_seqlen_kv, 0);
    assert_true(d.scale == 0.0f && !signbit(d.scale));
    assert_int_equal(d.is_causal, 0);
    assert_true(d.softcap == 0.0f && !signbit(d.softcap));
    assert_int_equal(d.q_row_stride, 0);
    assert_int_equal(d.k_row_stride, 0);
    assert_int_equal(d.v_row_stride, 0);
    assert_int_equal(d.out_row_stride, 0);
    assert_int_equal(d.algo, OPP_ALGO_AUTO);
}

// _init(NULL) does nothing (and does not crash).
static void test_desc_init_null_ignored(void **state) {
    (void)state;
    opp_attention_desc_init(NULL);
}

// A freshly initialised descriptor is rejected because q_dtype is not set.
static void test_desc_check_init_only_rejects_unset_dtype(void **state) {
    (void)state;
    opp_attention_desc_t d;
    opp_attention_desc_init(&d);
    assert_claim_fails(d, OPP_STATUS_BAD_PARAM_DTYPE, "q_dtype = 0 (undefined) is not set");
}

// A valid descriptor passes both checks and is not modified by them.
static void test_desc_check_valid_passes_unchanged(void **state) {
    (void)state;
    const opp_attention_desc_t d = valid_desc();
    opp_attention_desc_t copy = d;
    assert_opp_ok(opp_attention_claim_check(&d));
    assert_opp_ok(opp_attention_desc_check(&d));
    assert_memory_equal(&d, &copy, sizeof d);
}

// Every supported dtype, MHA/MQA, explicit strides, causal, scale and softcap are accepted.
static void test_desc_check_valid_variants_pass(void **state) {
    (void)state;
    const int dtypes[] = {OPP_DTYPE_F32, OPP_DTYPE_F16, OPP_DTYPE_BF16};
    for (size_t i = 0; i < 3; ++i) {
        opp_attention_desc_t d = valid_desc();
        set_dtypes(&d, dtypes[i], dtypes[i], dtypes[i], dtypes[i]);
        assert_opp_ok(opp_attention_desc_check(&d));
    }
    opp_attention_desc_t d = valid_desc();
    d.kv_num_heads = 0; /* means num_heads */
    d.v_head_size = 0;  /* means head_size */
    assert_opp_ok(opp_attention_desc_check(&d));
    d.kv_num_heads = 1; /* MQA */
    d.v_head_size = 32;
    d.head_size = OPP_MAX_HEAD_SIZE;
    d.is_causal = 1;
    d.scale = 0.125f;
    d.softcap = 30.0f;
    d.q_row_stride = 8 * OPP_MAX_HEAD_SIZE; /* == width */
    d.k_row_stride = 3 * OPP_MAX_HEAD_SIZE; /* > width */
    d.v_row_stride = 32;                    /* == Hkv * Dv */
    d.out_row_stride = 1000;                /* > Hq * Dv = 256 */
    assert_opp_ok(opp_attention_desc_check(&d));
    d.total_q = d.total_kv = d.max_seqlen_q = d.max_seqlen_kv = 0; /* empty batch */
    assert_opp_ok(opp_attention_desc_check(&d));
}

// --- 9-11. batch, totals, max_seqlens (desc_check only)

// claim_check ignores batch shape; desc_check rejects batch <= 0.
static void test_desc_check_batch_not_positive_rejected(void **state) {
    (void)state;
    opp_attention_desc_t d = valid_desc();
    d.batch = 0;
    assert_desc_fails(d, OPP_STATUS_BAD_PARAM_BATCH, "batch = 0 must be >= 1");
    d.batch = -4;
    assert_desc_fails(d, OPP_STATUS_BAD_PARAM_BATCH, "batch = -4 must be >= 1");
}

// A negative total is BAD_PARAM_TOTAL.
static void test_desc_check_total_negative_rejected(void **state) {
    (void)state;
    opp_attention_desc_t d = valid_desc();
    d.total_q = -1;
    assert_desc_fails(d, OPP_STATUS_BAD_PARAM_TOTAL, "total_q = -1 must be >= 0");
    d = valid_desc();
    d.total_kv = -5;
    assert_desc_fails(d, OPP_STATUS_BAD_PARAM_TOTAL, "total_kv = -5 must be >= 0");
}

// A total above INT32_MAX is BAD_PARAM_TOTAL; INT32_MAX itself is accepted.
static void test_desc_check_total_above_int32_rejected(void **state) {
    (void)state;
    opp_attention_desc_t d = valid_desc();
    d.total_q = 3000000000LL;
    assert_desc_fails(d, OPP_STATUS_BAD_PARAM_TOTAL,
                      "total_q = 3000000000 exceeds INT32_MAX (cu_seqlens are int32)");
    d = valid_desc();
    d.total_kv = (int64_t)INT32_MAX + 1;
    assert_desc_fails(d, OPP_STATUS_BAD_PARAM_TOTAL, "total_kv = 2147483648 exceeds INT32_MAX");
    d = valid_desc();
    d.total_kv = INT32_MAX;
    d.max_seqlen_kv = INT32_MAX;
    assert_opp_ok(opp_attention_desc_check(&d));
}

// A negative max_seqlen is BAD_PARAM_MAX_SEQLEN.
static void test_desc_check_max_seqlen_negative_rejected(void **state) {
    (void)state;
    opp_attention_desc_t d = valid_desc();
    d.max_seqlen_q = -1;
    assert_desc_fails(d, OPP_STATUS_BAD_PARAM_MAX_SEQLEN, "max_seqlen_q = -1 must be >= 0");
    d = valid_desc();
    d.max_seqlen_kv = -1;
    assert_desc_fails(d, OPP_STATUS_BAD_PARAM_MAX_SEQLEN, "max_seqlen_kv = -1 must be >= 0");
}

// max_seqlen is an upper bound only: above its total (up to INT32_MAX) is accepted.
static void test_desc_check_max_seqlen_above_total_accepted(void **state) {
    (void)state;
    opp_attention_desc_t d = valid_desc(); /* total_q 100, total_kv 120 */
    d.max_seqlen_q = 101;
    d.max_seqlen_kv = 121;
    assert_opp_ok(opp_attention_desc_check(&d));
    d.max_seqlen_q = INT32_MAX;
    d.max_seqlen_kv = INT32_MAX;
    assert_opp_ok(opp_attention_desc_check(&d));
    d.total_q = d.total_kv = 0; /* an empty capacity with any bound */
    assert_opp_ok(opp_attention_desc_check(&d));
}

// The totals are a capacity (cu_seqlens[batch] may be below them), so a
// max_seqlen below the average length total / batch is accepted, 0 included.
static void test_desc_check_max_seqlen_below_average_accepted(void **state) {
    (void)state;
    opp_attention_desc_t d = valid_desc(); /* batch 3, total_q 100, total_kv 120 */
    d.max_seqlen_q = 33;                   /* 3 * 33 < 100 */
    d.max_seqlen_kv = 0;                   /* every sequence empty */
    assert_opp_ok(opp_attention_desc_check(&d));
}

// --- 12. strides

// A negative row stride is BAD_PARAM_STRIDE naming the tensor.
static void test_desc_check_stride_negative_rejected(void **state) {
    (void)state;
    opp_attention_desc_t d = valid_desc();
    d.q_row_stride = -1;
    assert_desc_fails(d, OPP_STATUS_BAD_PARAM_STRIDE, "q_row_stride = -1 must be >= 0");
    d = valid_desc();
    d.out_row_stride = -512;
    assert_desc_fails(d, OPP_STATUS_BAD_PARAM_STRIDE, "out_row_stride = -512 must be >= 0");
}

// A row stride below its dense row width is BAD_PARAM_STRIDE naming the width formula.
static void test_desc_check_stride_below_width_rejected(void **state) {
    (void)state;
    opp_attention_desc_t d = valid_desc(); /* Hq 8, Hkv 2, D 64 */
    d.num_heads = 2;
    d.kv_num_heads = 1;
    d.v_head_size = 32;
    d.q_row_stride = 100;
    assert_desc_fails(d, OPP_STATUS_BAD_PARAM_STRIDE,
                      "q_row_stride = 100 is smaller than num_heads * head_size = 128");
    d.q_row_stride = 128;
    d.k_row_stride = 63;
    assert_desc_fails(d, OPP_STATUS_BAD_PARAM_STRIDE,
                      "k_row_stride = 63 is smaller than kv_num_heads * head_size = 64");
    d.k_row_stride = 64;
    d.v_row_stride = 31;
    assert_desc_fails(d, OPP_STATUS_BAD_PARAM_STRIDE,
                      "v_row_stride = 31 is smaller than kv_num_heads * v_head_size = 32");
    d.v_row_stride = 32;
    d.out_row_stride = 1;
    assert_desc_fails(d, OPP_STATUS_BAD_PARAM_STRIDE,
                      "out_row_stride = 1 is smaller than num_heads * v_head_size = 64");
    d.out_row_stride = 64;
    assert_opp_ok(opp_attention_desc_check(&d));
}

// A stride whose byte extent overflows int64 is BAD_PARAM_STRIDE, exactly at the boundary.
static void test_desc_check_stride_overflow_rejected(void **state) {
    (void)state;
    opp_attention_desc_t d = valid_desc(); /* f16: 2 bytes; q width 8 * 64 = 512 */
    d.total_q = 2;
    d.max_seqlen_q = 2;
    /* extent (2 - 1) * stride + 512 elements must be <= INT64_MAX / 2 */
    d.q_row_stride = INT64_MAX / 2 - 512;
    assert_opp_ok(opp_attention_desc_check(&d));
    d.q_row_stride = INT64_MAX / 2 - 511;
    assert_desc_fails(d, OPP_STATUS_BAD_PARAM_STRIDE,
                      "q_row_stride = 4611686018427387392 overflows");
    d = valid_desc();
    d.k_row_stride = INT64_MAX;
    assert_desc_fails(d, OPP_STATUS_BAD_PARAM_STRIDE,
                      "k_row_stride = 9223372036854775807 overflows");
}

// Dense rows (stride 0) also overflow when heads * head_size * total is too large.
static void test_desc_check_dense_extent_overflow_rejected(void **state) {
    (void)state;
    opp_attention_desc_t d = valid_desc();
    d.num_heads = INT32_MAX;
    d.kv_num_heads = 1;
    d.head_size = OPP_MAX_HEAD_SIZE;
    d.total_q = INT32_MAX;
    d.max_seqlen_q = INT32_MAX;
    assert_desc_fails(d, OPP_STATUS_BAD_PARAM_STRIDE, "q_row_stride = 0 overflows");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_desc_init_sets_defaults),
        cmocka_unit_test(test_desc_init_null_ignored),
        cmocka_unit_test(test_desc_check_init_only_rejects_unset_dtype),
        cmocka_unit_test(test_desc_check_valid_passes_unchanged),
        cmocka_unit_test(test_desc_check_valid_variants_pass),
        cmocka_unit_test(test_desc_check_batch_not_positive_rejected),
        cmocka_unit_test(test_desc_check_total_negative_rejected),
        cmocka_unit_test(test_desc_check_total_above_int32_rejected),
        cmocka_unit_test(test_desc_check_max_seqlen_negative_rejected),
        cmocka_unit_test(test_desc_check_max_seqlen_above_total_accepted),
        cmocka_unit_test(test_desc_check_max_seqlen_below_average_accepted),
        cmocka_unit_test(test_desc_check_stride_negative_rejected),
        cmocka_unit_test(test_desc_check_stride_below_width_rejected),
        cmocka_unit_test(test_desc_check_stride_overflow_rejected),
        cmocka_unit_test(test_desc_check_dense_extent_overflow_rejected),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
