/*
 * api_contract_test.c - the conventions every public entry shares
 * (lib/oppacked.h): user-facing messages carry no "file:line: " source
 * prefix; with several bad arguments every entry reports the descriptor
 * first (NULL desc, then its struct_size and fields), the packed and the
 * Attention-24 entries alike; a run-path call without a usable CUDA device
 * says NO_DEVICE (not CUDA_ERROR), opp_attention_device_status() included.
 * CPU: every call here fails before any CUDA call, except the NO_DEVICE
 * test, which skips when a device is present.
 * Run (Bazel): bazel test //tests:api_contract_test --test_output=all
 */
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <string.h>

#include "tests/test_util.h"

static _Alignas(256) char fake[1024]; /* aligned host bytes: never dereferenced as device memory */

static opp_attention_desc_t packed_desc(void) {
    opp_attention_desc_t d;
    opp_attention_desc_init(&d);
    d.q_dtype = d.k_dtype = d.v_dtype = d.out_dtype = OPP_DTYPE_F16;
    d.batch = 2;
    d.num_heads = 4;
    d.head_size = 64;
    d.total_q = d.total_kv = 10;
    d.max_seqlen_q = d.max_seqlen_kv = 7;
    return d;
}

static opp_attention24_desc_t a24_desc(void) {
    opp_attention24_desc_t d;
    opp_attention24_desc_init(&d);
    d.q_dtype = d.k_dtype = d.v_dtype = d.out_dtype = OPP_DTYPE_F16;
    d.batch = 2;
    d.num_heads = 4;
    d.head_size = 64;
    d.q_seqlen = 3;
    d.kv_seqlen = 9;
    return d;
}

/* The call returns want and the last error is exactly text: a
 * "file:line: " prefix (or anything else) in front of it fails. */
#define assert_exact_message(expr, want, text)                 \
    do {                                                       \
        assert_opp_status((expr), (want), NULL);               \
        assert_string_equal(opp_last_error_message(), (text)); \
    } while (0)

// --- messages

// Failures recorded in different files of the library read exactly as documented, no prefix.
static void test_messages_have_no_source_prefix(void **state) {
    (void)state;
    assert_exact_message(opp_attention_claim_check(NULL), OPP_STATUS_BAD_PARAM_NULL_POINTER,
                         "desc is NULL");
    opp_attention_desc_t d = packed_desc();
    d.num_heads = 6;
    d.kv_num_heads = 4;
    assert_exact_message(opp_attention_desc_check(&d), OPP_STATUS_BAD_PARAM_KV_HEADS_NOT_DIVIDING,
                         "num_heads = 6 is not a multiple of kv_num_heads = 4");
    d = packed_desc();
    const int32_t cu_q[3] = {0, 3, 10}, cu_kv[3] = {0, 8, 7};
    d.total_kv = 7;
    assert_exact_message(opp_varlen_check(&d, cu_q, 3, cu_kv, 3),
                         OPP_STATUS_BAD_PARAM_SEQLENS_DECREASING,
                         "cu_seqlens_kv[2] = 7 < cu_seqlens_kv[1] = 8");
    d = packed_desc();
    const char *name = NULL;
    assert_exact_message(opp_attention_kernel_query(&d, 0, &name), OPP_STATUS_BAD_PARAM,
                         "sm_arch = 0 must be a compute capability such as 80 or 90");
    opp_attention24_desc_t a = a24_desc();
    a.input_rank = 5;
    assert_exact_message(opp_attention24_desc_check(&a), OPP_STATUS_BAD_PARAM_SHAPE,
                         "input_rank = 5 must be 3 or 4");
    d = packed_desc();
    assert_exact_message(
        opp_packed_attention_fwd(&d, NULL, fake, fake, fake, fake, fake, 256, NULL),
        OPP_STATUS_BAD_PARAM_NULL_POINTER, "varlen is NULL");
    assert_opp_status(opp_attention_device_status(fake + 1, 256, NULL),
                      OPP_STATUS_BAD_PARAM_MISALIGNED, " is not 256-byte aligned");
    assert_int_equal(strncmp(opp_last_error_message(), "workspace = ", 12), 0);
}

// --- the order of checks

// Both arguments NULL: the packed and the Attention-24 workspace queries both name desc.
static void test_null_order_workspace_size_desc_first(void **state) {
    (void)state;
    assert_exact_message(opp_packed_attention_workspace_size(NULL, NULL),
                         OPP_STATUS_BAD_PARAM_NULL_POINTER, "desc is NULL");
    assert_exact_message(opp_attention24_nonpad_workspace_size(NULL, NULL),
                         OPP_STATUS_BAD_PARAM_NULL_POINTER, "desc is NULL");
    /* a valid desc: then the other argument */
    const opp_attention_desc_t d = packed_desc();
    assert_exact_message(opp_packed_attention_workspace_size(&d, NULL),
                         OPP_STATUS_BAD_PARAM_NULL_POINTER, "workspace_bytes is NULL");
    const opp_attention24_desc_t a = a24_desc();
    assert_exact_message(opp_attention24_nonpad_workspace_size(&a, NULL),
                         OPP_STATUS_BAD_PARAM_NULL_POINTER, "workspace_bytes is NULL");
}

// Every argument NULL or bad: every entry of both layouts reports desc.
static void test_null_order_every_entry_desc_first(void **state) {
    (void)state;
    const char *want = "desc is NULL";
    const opp_status_t np = OPP_STATUS_BAD_PARAM_NULL_POINTER;
    assert_exact_message(opp_attention_desc_check(NULL), np, want);
    assert_exact_message(opp_attention24_desc_check(NULL), np, want);
    assert_exact_message(opp_varlen_check(NULL, NULL, 0, NULL, 1), np, want);
    assert_exact_message(opp_attention_kernel_query(NULL, 0, NULL), np, want);
    assert_exact_message(opp_attention24_kernel_query(NULL, 0, NULL), np, want);
    assert_exact_message(
        opp_packed_attention_fwd(NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0, NULL), np, want);
    assert_exact_message(opp_packed_attention_fwd_lse(NULL, NULL, NULL, NULL, NULL, NULL,
                                                      (float *)(fake + 1), NULL, 0, NULL),
                         np, want);
    assert_exact_message(
        opp_attention24_nonpad_fwd(NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0, NULL), np, want);
    assert_exact_message(opp_attention24_nonpad_fwd_lse(NULL, NULL, NULL, NULL, NULL, NULL,
                                                        (float *)(fake + 1), NULL, 0, NULL),
                         np, want);
}

// A bad descriptor field comes before bad other arguments, in both layouts.
static void test_order_desc_fields_before_arguments(void **state) {
    (void)state;
    opp_attention_desc_t d = packed_desc();
    d.head_size = 0;
    assert_opp_status(opp_packed_attention_workspace_size(&d, NULL), OPP_STATUS_BAD_PARAM_HEAD_SIZE,
                      "head_size = 0");
    assert_opp_status(opp_attention_kernel_query(&d, 0, NULL), OPP_STATUS_BAD_PARAM_HEAD_SIZE,
                      "head_size = 0");
    assert_opp_status(opp_packed_attention_fwd(&d, NULL, NULL, NULL, NULL, NULL, NULL, 0, NULL),
                      OPP_STATUS_BAD_PARAM_HEAD_SIZE, "head_size = 0");
    opp_attention24_desc_t a = a24_desc();
    a.head_size = 0;
    assert_opp_status(opp_attention24_nonpad_workspace_size(&a, NULL),
                      OPP_STATUS_BAD_PARAM_HEAD_SIZE, "head_size = 0");
    assert_opp_status(opp_attention24_kernel_query(&a, 0, NULL), OPP_STATUS_BAD_PARAM_HEAD_SIZE,
                      "head_size = 0");
    assert_opp_status(opp_attention24_nonpad_fwd(&a, NULL, NULL, NULL, NULL, NULL, NULL, 0, NULL),
                      OPP_STATUS_BAD_PARAM_HEAD_SIZE, "head_size = 0");
    /* a valid desc, then the arguments in parameter order: sm_arch before kernel_name */
    d = packed_desc();
    assert_exact_message(opp_attention_kernel_query(&d, 0, NULL), OPP_STATUS_BAD_PARAM,
                         "sm_arch = 0 must be a compute capability such as 80 or 90");
    assert_exact_message(opp_attention_kernel_query(&d, 90, NULL),
                         OPP_STATUS_BAD_PARAM_NULL_POINTER, "kernel_name is NULL");
}

// --- no device

// Without a usable CUDA device, the run-path calls say NO_DEVICE, device_status included.
static void test_no_device_everywhere(void **state) {
    (void)state;
    int count = 0;
    if (cudaGetDeviceCount(&count) == cudaSuccess && count > 0) {
        skip();
    }
    assert_opp_status(opp_attention_device_status(fake, 256, NULL), OPP_STATUS_NO_DEVICE,
                      "cudaError");
    int32_t sm = 0;
    assert_opp_status(opp_device_sm_arch(&sm), OPP_STATUS_NO_DEVICE, "no CUDA device");
    const opp_attention24_desc_t a = a24_desc();
    const int64_t *nonpad = (const int64_t *)(void *)fake;
    assert_opp_status(
        opp_attention24_nonpad_fwd(&a, nonpad, fake, fake, fake, fake, fake, sizeof fake, NULL),
        OPP_STATUS_NO_DEVICE, "no CUDA device");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_messages_have_no_source_prefix),
        cmocka_unit_test(test_null_order_workspace_size_desc_first),
        cmocka_unit_test(test_null_order_every_entry_desc_first),
        cmocka_unit_test(test_order_desc_fields_before_arguments),
        cmocka_unit_test(test_no_device_everywhere),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
