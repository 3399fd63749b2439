/*
 * attention_claim_check_test.c - CPU tests of opp_attention_claim_check
 * (lib/attention_desc.c): one test per invalid or unsupported claim-time
 * field (dtypes, heads, head sizes, scale, softcap, is_causal, algo), each
 * checking the status AND the message, for claim_check and desc_check
 * alike, plus the order in which faults are reported.
 */
#include "tests/desc_fixture.h"

// --- 1. NULL

// A NULL descriptor is BAD_PARAM_NULL_POINTER for both checks.
static void test_desc_check_null_desc_rejected(void **state) {
    (void)state;
    assert_opp_status(opp_attention_claim_check(NULL), OPP_STATUS_BAD_PARAM_NULL_POINTER,
                      "desc is NULL");
    assert_opp_status(opp_attention_desc_check(NULL), OPP_STATUS_BAD_PARAM_NULL_POINTER,
                      "desc is NULL");
}

// --- 2. dtypes

// An unset (0) dtype in any of the four slots is BAD_PARAM_DTYPE naming the slot.
static void test_desc_check_unset_dtype_rejected(void **state) {
    (void)state;
    opp_attention_desc_t d = valid_desc();
    d.k_dtype = OPP_DTYPE_UNDEFINED;
    assert_claim_fails(d, OPP_STATUS_BAD_PARAM_DTYPE, "k_dtype = 0 (undefined) is not set");
    d = valid_desc();
    d.out_dtype = OPP_DTYPE_UNDEFINED;
    assert_claim_fails(d, OPP_STATUS_BAD_PARAM_DTYPE, "out_dtype = 0 (undefined) is not set");
}

// A value outside the ONNX range is BAD_PARAM_DTYPE with the raw value.
static void test_desc_check_non_onnx_dtype_rejected(void **state) {
    (void)state;
    opp_attention_desc_t d = valid_desc();
    d.v_dtype = (opp_dtype_t)99;
    assert_claim_fails(d, OPP_STATUS_BAD_PARAM_DTYPE, "v_dtype = 99 is not an ONNX element type");
    d = valid_desc();
    d.q_dtype = (opp_dtype_t)29;
    assert_claim_fails(d, OPP_STATUS_BAD_PARAM_DTYPE, "q_dtype = 29 is not an ONNX element type");
    d = valid_desc();
    d.out_dtype = (opp_dtype_t)-1;
    assert_claim_fails(d, OPP_STATUS_BAD_PARAM_DTYPE, "out_dtype = -1 is not an ONNX element type");
}

// All four dtypes are checked for validity before any mismatch is reported.
static void test_desc_check_invalid_dtype_before_mismatch(void **state) {
    (void)state;
    opp_attention_desc_t d = valid_desc();
    set_dtypes(&d, OPP_DTYPE_F16, OPP_DTYPE_F32, OPP_DTYPE_F16, 99);
    assert_claim_fails(d, OPP_STATUS_BAD_PARAM_DTYPE, "out_dtype = 99");
}

// k, v or out differing from q is BAD_PARAM_DTYPE_MISMATCH naming both types.
static void test_desc_check_dtype_mismatch_rejected(void **state) {
    (void)state;
    opp_attention_desc_t d = valid_desc();
    set_dtypes(&d, OPP_DTYPE_F32, OPP_DTYPE_F16, OPP_DTYPE_F32, OPP_DTYPE_F32);
    assert_claim_fails(d, OPP_STATUS_BAD_PARAM_DTYPE_MISMATCH,
                       "k_dtype = f16 differs from q_dtype = f32");
    set_dtypes(&d, OPP_DTYPE_F16, OPP_DTYPE_F16, OPP_DTYPE_BF16, OPP_DTYPE_F16);
    assert_claim_fails(d, OPP_STATUS_BAD_PARAM_DTYPE_MISMATCH,
                       "v_dtype = bf16 differs from q_dtype = f16");
    set_dtypes(&d, OPP_DTYPE_BF16, OPP_DTYPE_BF16, OPP_DTYPE_BF16, OPP_DTYPE_F32);
    assert_claim_fails(d, OPP_STATUS_BAD_PARAM_DTYPE_MISMATCH,
                       "out_dtype = f32 differs from q_dtype = bf16");
    /* a mismatch is reported before an unsupported dtype */
    set_dtypes(&d, OPP_DTYPE_F64, OPP_DTYPE_F64, OPP_DTYPE_F64, 3);
    assert_claim_fails(d, OPP_STATUS_BAD_PARAM_DTYPE_MISMATCH,
                       "out_dtype = int8 differs from q_dtype = f64");
}

// A valid ONNX type other than f32/f16/bf16 is NOT_SUPPORTED_DTYPE.
static void test_desc_check_unsupported_dtype_rejected(void **state) {
    (void)state;
    opp_attention_desc_t d = valid_desc();
    set_dtypes(&d, OPP_DTYPE_F64, OPP_DTYPE_F64, OPP_DTYPE_F64, OPP_DTYPE_F64);
    assert_claim_fails(d, OPP_STATUS_NOT_SUPPORTED_DTYPE,
                       "q_dtype = f64 is not supported (f32, f16, bf16 are)");
    set_dtypes(&d, 3, 3, 3, 3);
    assert_claim_fails(d, OPP_STATUS_NOT_SUPPORTED_DTYPE, "q_dtype = int8 is not supported");
    set_dtypes(&d, 17, 17, 17, 17);
    assert_claim_fails(d, OPP_STATUS_NOT_SUPPORTED_DTYPE,
                       "q_dtype = float8e4m3fn is not supported");
}

// --- 3. heads

// num_heads <= 0 is BAD_PARAM_NUM_HEADS.
static void test_desc_check_num_heads_not_positive_rejected(void **state) {
    (void)state;
    opp_attention_desc_t d = valid_desc();
    d.num_heads = 0;
    assert_claim_fails(d, OPP_STATUS_BAD_PARAM_NUM_HEADS, "num_heads = 0 must be >= 1");
    d.num_heads = -3;
    assert_claim_fails(d, OPP_STATUS_BAD_PARAM_NUM_HEADS, "num_heads = -3 must be >= 1");
}

// kv_num_heads < 0 is BAD_PARAM_KV_NUM_HEADS.
static void test_desc_check_kv_num_heads_negative_rejected(void **state) {
    (void)state;
    opp_attention_desc_t d = valid_desc();
    d.kv_num_heads = -1;
    assert_claim_fails(d, OPP_STATUS_BAD_PARAM_KV_NUM_HEADS, "kv_num_heads = -1 must be >= 0");
}

// kv_num_heads not dividing num_heads (including kv > q) is BAD_PARAM_KV_HEADS_NOT_DIVIDING.
static void test_desc_check_kv_heads_not_dividing_rejected(void **state) {
    (void)state;
    opp_attention_desc_t d = valid_desc();
    d.num_heads = 6;
    d.kv_num_heads = 4;
    assert_claim_fails(d, OPP_STATUS_BAD_PARAM_KV_HEADS_NOT_DIVIDING,
                       "num_heads = 6 is not a multiple of kv_num_heads = 4");
    d.num_heads = 4;
    d.kv_num_heads = 8;
    assert_claim_fails(d, OPP_STATUS_BAD_PARAM_KV_HEADS_NOT_DIVIDING,
                       "num_heads = 4 is not a multiple of kv_num_heads = 8");
}

// --- 4. head sizes

// head_size <= 0 is BAD_PARAM_HEAD_SIZE.
static void test_desc_check_head_size_not_positive_rejected(void **state) {
    (void)state;
    opp_attention_desc_t d = valid_desc();
    d.head_size = 0;
    assert_claim_fails(d, OPP_STATUS_BAD_PARAM_HEAD_SIZE, "head_size = 0 must be >= 1");
    d.head_size = -64;
    assert_claim_fails(d, OPP_STATUS_BAD_PARAM_HEAD_SIZE, "head_size = -64 must be >= 1");
}

// v_head_size < 0 is BAD_PARAM_V_HEAD_SIZE.
static void test_desc_check_v_head_size_negative_rejected(void **state) {
    (void)state;
    opp_attention_desc_t d = valid_desc();
    d.v_head_size = -2;
    assert_claim_fails(d, OPP_STATUS_BAD_PARAM_V_HEAD_SIZE, "v_head_size = -2 must be >= 0");
}

// head_size or v_head_size above OPP_MAX_HEAD_SIZE is NOT_SUPPORTED_HEAD_SIZE; 256 is fine.
static void test_desc_check_head_size_above_max_rejected(void **state) {
    (void)state;
    opp_attention_desc_t d = valid_desc();
    d.head_size = 300;
    assert_claim_fails(d, OPP_STATUS_NOT_SUPPORTED_HEAD_SIZE,
                       "head_size = 300 is above the supported maximum 256");
    d.head_size = OPP_MAX_HEAD_SIZE + 1;
    assert_claim_fails(d, OPP_STATUS_NOT_SUPPORTED_HEAD_SIZE,
                       "head_size = 257 is above the supported maximum 256");
    d.head_size = 64;
    d.v_head_size = 300;
    assert_claim_fails(d, OPP_STATUS_NOT_SUPPORTED_HEAD_SIZE,
                       "v_head_size = 300 is above the supported maximum 256");
    d.v_head_size = OPP_MAX_HEAD_SIZE;
    assert_opp_ok(opp_attention_desc_check(&d));
}

// --- 5-8. scale, softcap, is_causal, algo

// scale NaN, +-inf or negative is BAD_PARAM_SCALE printing the value; -0.0 counts as 0.
static void test_desc_check_bad_scale_rejected(void **state) {
    (void)state;
    opp_attention_desc_t d = valid_desc();
    d.scale = NAN;
    assert_claim_fails(d, OPP_STATUS_BAD_PARAM_SCALE,
                       "nan must be finite and >= 0 (0 selects 1/sqrt(head_size))");
    d.scale = INFINITY;
    assert_claim_fails(d, OPP_STATUS_BAD_PARAM_SCALE, "scale = inf must be finite and >= 0");
    d.scale = -INFINITY;
    assert_claim_fails(d, OPP_STATUS_BAD_PARAM_SCALE, "scale = -inf must be finite and >= 0");
    d.scale = -0.5f;
    assert_claim_fails(d, OPP_STATUS_BAD_PARAM_SCALE, "scale = -0.5 must be finite and >= 0");
    d.scale = -0.0f;
    assert_opp_ok(opp_attention_desc_check(&d));
}

// softcap NaN, inf or negative is BAD_PARAM_SOFTCAP; -0.0 counts as 0 (off).
static void test_desc_check_bad_softcap_rejected(void **state) {
    (void)state;
    opp_attention_desc_t d = valid_desc();
    d.softcap = NAN;
    assert_claim_fails(d, OPP_STATUS_BAD_PARAM_SOFTCAP, "nan must be finite and >= 0");
    d.softcap = INFINITY;
    assert_claim_fails(d, OPP_STATUS_BAD_PARAM_SOFTCAP, "softcap = inf must be finite and >= 0");
    d.softcap = -2.0f;
    assert_claim_fails(d, OPP_STATUS_BAD_PARAM_SOFTCAP, "softcap = -2 must be finite and >= 0");
    d.softcap = -0.0f;
    assert_opp_ok(opp_attention_desc_check(&d));
}

// is_causal other than 0 or 1 is BAD_PARAM_IS_CAUSAL.
static void test_desc_check_is_causal_not_bool_rejected(void **state) {
    (void)state;
    opp_attention_desc_t d = valid_desc();
    d.is_causal = 2;
    assert_claim_fails(d, OPP_STATUS_BAD_PARAM_IS_CAUSAL, "is_causal = 2 must be 0 or 1");
    d.is_causal = -1;
    assert_claim_fails(d, OPP_STATUS_BAD_PARAM_IS_CAUSAL, "is_causal = -1 must be 0 or 1");
}

// An algo outside the enum (0..3) is BAD_PARAM_ALGO; 3 (TF32X3) is valid.
static void test_desc_check_unknown_algo_rejected(void **state) {
    (void)state;
    opp_attention_desc_t d = valid_desc();
    d.algo = (opp_algo_t)4;
    assert_claim_fails(d, OPP_STATUS_BAD_PARAM_ALGO,
                       "algo = 4 is none of OPP_ALGO_EXACT (0), OPP_ALGO_FAST (1), OPP_ALGO_AUTO "
                       "(2), OPP_ALGO_TF32X3 (3)");
    d.algo = (opp_algo_t)-1;
    assert_claim_fails(d, OPP_STATUS_BAD_PARAM_ALGO, "algo = -1 is none of");
    d.algo = (opp_algo_t)3;
    d.q_dtype = d.k_dtype = d.v_dtype = d.out_dtype = OPP_DTYPE_F32;
    assert_int_equal(d.algo, OPP_ALGO_TF32X3);
    assert_opp_ok(opp_attention_claim_check(&d));
    assert_opp_ok(opp_attention_desc_check(&d));
}

// OPP_ALGO_TF32X3 (opt-in) serves f32 with head sizes that are multiples of
// 4 up to 64 (on compute capability 9.0: the claim check accepts what some
// GPU runs); f16 / bf16, larger or odd head sizes and strides get the reason.
static void test_desc_check_tf32x3_algo_support(void **state) {
    (void)state;
    opp_attention_desc_t d = valid_desc();
    d.algo = OPP_ALGO_TF32X3;
    assert_claim_fails(d, OPP_STATUS_NOT_SUPPORTED_DTYPE, "TF32X3 serves f32 only");
    d.q_dtype = d.k_dtype = d.v_dtype = d.out_dtype = OPP_DTYPE_F32;
    d.head_size = 64;
    d.v_head_size = 32;
    assert_opp_ok(opp_attention_claim_check(&d));
    assert_opp_ok(opp_attention_desc_check(&d));
    d.v_head_size = 128;
    assert_claim_fails(d, OPP_STATUS_NOT_SUPPORTED_HEAD_SIZE, "TF32X3 serves head sizes up to 64");
    d.head_size = d.v_head_size = 42;
    assert_claim_fails(d, OPP_STATUS_NOT_SUPPORTED_HEAD_SIZE, "TF32X3 needs multiples of 4");
    d.head_size = d.v_head_size = 64;
    d.q_row_stride = 8 * 64 + 2;
    assert_desc_fails(d, OPP_STATUS_NOT_SUPPORTED_FEATURE, "multiple of 4 elements (q 514");
}

// OPP_ALGO_FAST serves f16/bf16 with head sizes that are multiples of 8 up
// to 256, f32 with multiples of 4; elsewhere it is NOT_SUPPORTED with the
// reason (AUTO falls back).
static void test_desc_check_fast_algo_support(void **state) {
    (void)state;
    opp_attention_desc_t d = valid_desc();
    d.algo = OPP_ALGO_FAST;
    assert_opp_ok(opp_attention_claim_check(&d));
    assert_opp_ok(opp_attention_desc_check(&d));
    d.q_dtype = d.k_dtype = d.v_dtype = d.out_dtype = OPP_DTYPE_F32;
    assert_opp_ok(opp_attention_claim_check(&d)); /* the FFMA rows */
    d.head_size = d.v_head_size = 102;
    assert_claim_fails(d, OPP_STATUS_NOT_SUPPORTED_HEAD_SIZE,
                       "no FAST kernel for head_size = 102, v_head_size = 102: FAST needs "
                       "multiples of 4");
    d.algo = OPP_ALGO_AUTO;
    assert_opp_ok(opp_attention_claim_check(&d));
    d = valid_desc();
    d.algo = OPP_ALGO_FAST;
    d.head_size = 100;
    assert_claim_fails(d, OPP_STATUS_NOT_SUPPORTED_HEAD_SIZE,
                       "no FAST kernel for head_size = 100, v_head_size = 100: FAST needs "
                       "multiples of 8");
    d.head_size = 64;
    d.v_head_size = 256;
    assert_opp_ok(opp_attention_claim_check(&d));
    d.q_row_stride = 8 * 64 + 4; /* a row stride that breaks 16-byte loads: desc level */
    assert_desc_fails(d, OPP_STATUS_NOT_SUPPORTED_FEATURE, "multiple of 8 elements (q 516");
}

// With several faults the first in the documented order wins (dtype, heads, sizes, options).
static void test_desc_check_first_fault_in_order_reported(void **state) {
    (void)state;
    opp_attention_desc_t d = valid_desc();
    d.algo = OPP_ALGO_FAST;
    d.is_causal = 5;
    d.softcap = -1.0f;
    d.scale = -1.0f;
    d.head_size = 0;
    d.num_heads = 0;
    d.batch = 0;
    d.q_dtype = OPP_DTYPE_F64;
    assert_claim_fails(d, OPP_STATUS_BAD_PARAM_DTYPE_MISMATCH, "k_dtype = f16");
    d.q_dtype = OPP_DTYPE_F16;
    assert_claim_fails(d, OPP_STATUS_BAD_PARAM_NUM_HEADS, "num_heads = 0");
    d.num_heads = 8;
    assert_claim_fails(d, OPP_STATUS_BAD_PARAM_HEAD_SIZE, "head_size = 0");
    d.head_size = 64;
    assert_claim_fails(d, OPP_STATUS_BAD_PARAM_SCALE, "scale = -1");
    d.scale = 0.0f;
    assert_claim_fails(d, OPP_STATUS_BAD_PARAM_SOFTCAP, "softcap = -1");
    d.softcap = 0.0f;
    assert_claim_fails(d, OPP_STATUS_BAD_PARAM_IS_CAUSAL, "is_causal = 5");
    d.is_causal = 0;
    d.head_size = 60; /* FAST needs multiples of 8: a claim-time fault, before batch */
    assert_claim_fails(d, OPP_STATUS_NOT_SUPPORTED_HEAD_SIZE, "FAST needs multiples of 8");
    d.algo = OPP_ALGO_EXACT;
    assert_desc_fails(d, OPP_STATUS_BAD_PARAM_BATCH, "batch = 0");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_desc_check_null_desc_rejected),
        cmocka_unit_test(test_desc_check_unset_dtype_rejected),
        cmocka_unit_test(test_desc_check_non_onnx_dtype_rejected),
        cmocka_unit_test(test_desc_check_invalid_dtype_before_mismatch),
        cmocka_unit_test(test_desc_check_dtype_mismatch_rejected),
        cmocka_unit_test(test_desc_check_unsupported_dtype_rejected),
        cmocka_unit_test(test_desc_check_num_heads_not_positive_rejected),
        cmocka_unit_test(test_desc_check_kv_num_heads_negative_rejected),
        cmocka_unit_test(test_desc_check_kv_heads_not_dividing_rejected),
        cmocka_unit_test(test_desc_check_head_size_not_positive_rejected),
        cmocka_unit_test(test_desc_check_v_head_size_negative_rejected),
        cmocka_unit_test(test_desc_check_head_size_above_max_rejected),
        cmocka_unit_test(test_desc_check_bad_scale_rejected),
        cmocka_unit_test(test_desc_check_bad_softcap_rejected),
        cmocka_unit_test(test_desc_check_is_causal_not_bool_rejected),
        cmocka_unit_test(test_desc_check_unknown_algo_rejected),
        cmocka_unit_test(test_desc_check_fast_algo_support),
        cmocka_unit_test(test_desc_check_tf32x3_algo_support),
        cmocka_unit_test(test_desc_check_first_fault_in_order_reported),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
