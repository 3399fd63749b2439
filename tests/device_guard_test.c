/*
 * device_guard_test.c - the run path's device-side guard and
 * opp_packed_attention_device_status():
 *   GPU: inconsistent device cu_seqlens (decreasing, [0] != 0, last !=
 *        total, a length above max_seqlen) and bad nonpad_kv_seqlen values:
 *        fwd still returns SUCCESS (it only enqueues), out stays exactly as
 *        poisoned, and device_status returns the host check's status with
 *        the host check's message + " (found on the device)"; a good run on
 *        the same workspace then reports SUCCESS and the reference's bits.
 *   CPU: device_status argument errors (before any CUDA call).
 * GPU tests skip() without a CUDA device.
 * Run (Bazel): bazel test //tests:device_guard_test --test_output=all
 * Run (GPU machine): ./device_guard_test (no data files, no environment)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/logical_batch.h"
#include "tests/exact_gpu_util.h"
#include "tests/gpu_util.h"
#include "tests/test_util.h"

/* The message without its "file:line: " prefix. */
static const char *message_text(const char *msg) {
    const char *p = strstr(msg, ": ");
    return p != NULL ? p + 2 : msg;
}

/* One bad cu_seqlens case: the device arrays differ from the (good) host
 * ones; desc may lower max_seqlen. */
typedef struct guard_case {
    const char *name;
    int32_t cu_q[5], cu_kv[5];
    int32_t max_seqlen_q; /* 0: the batch's own */
    opp_status_t status;
    const char *message; /* expected device message */
} guard_case_t;

static const guard_case_t cases[] = {
    {"kv decreasing",
     {0, 5, 20, 25, 30},
     {0, 5, 20, 17, 30},
     0,
     OPP_STATUS_BAD_PARAM_SEQLENS_DECREASING,
     "cu_seqlens_kv[3] = 17 < cu_seqlens_kv[2] = 20 (found on the device)"},
    {"q start",
     {1, 5, 20, 25, 30},
     {0, 5, 20, 25, 30},
     0,
     OPP_STATUS_BAD_PARAM_SEQLENS_START,
     "cu_seqlens_q[0] = 1, expected 0 (found on the device)"},
    {"kv total",
     {0, 5, 20, 25, 30},
     {0, 5, 20, 25, 29},
     0,
     OPP_STATUS_BAD_PARAM_SEQLENS_TOTAL,
     "cu_seqlens_kv[4] = 29 != total_kv = 30 (found on the device)"},
    {"q length",
     {0, 5, 20, 25, 30},
     {0, 5, 20, 25, 30},
     10,
     OPP_STATUS_BAD_PARAM_MAX_SEQLEN,
     "sequence 1: L_q = cu_seqlens_q[2] - cu_seqlens_q[1] = 15 > max_seqlen_q = 10 (found on the "
     "device)"},
    {"first failure wins",
     {0, 9, 3, 25, 31},
     {0, 5, 2, 17, 30},
     0,
     OPP_STATUS_BAD_PARAM_SEQLENS_DECREASING,
     "cu_seqlens_q[2] = 3 < cu_seqlens_q[1] = 9 (found on the device)"},
};

static void check_out_untouched(const opp_test_packed_dev_t *dev, const opp_lb_t *lb) {
    const size_t n = opp_test_out_elems(lb);
    const size_t es = opp_dtype_size(lb->dtype);
    void *poison = malloc((n + 1) * es);
    assert_non_null(poison);
    opp_lb_poison_fill(poison, n, lb->dtype, OPP_LB_POISON_NAN);
    void *got = opp_test_packed_download(dev);
    assert_memory_equal(got, poison, n * es);
    free(got);
    free(poison);
}

/* Each inconsistency is caught on the device, nothing is written, the
 * status and message are the host check's; then a good run succeeds. */
static void test_device_guard_reports_bad_cu_seqlens(void **state) {
    (void)state;
    OPP_TEST_REQUIRE_GPU();
    const int32_t lq[4] = {5, 15, 5, 5}, lkv[4] = {5, 15, 5, 5};
    opp_lb_t lb;
    assert_int_equal(
        opp_lb_from_lengths(&lb, OPP_DTYPE_F16, 4, lq, lkv, 4, 2, 32, 32, 0.0f, 1, 0.0f, 5u), 0);
    opp_test_packed_dev_t dev;
    opp_test_packed_upload(&lb, &dev);
    const opp_varlen_t varlen = {dev.cu_q, dev.cu_kv};
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); ++c) {
        opp_attention_desc_t desc;
        opp_lb_packed_desc(&lb, &desc);
        if (cases[c].max_seqlen_q > 0) {
            desc.max_seqlen_q = cases[c].max_seqlen_q;
        }
        /* the host check on the same arrays gives the same status and text */
        opp_status_t host = opp_varlen_check(&desc, cases[c].cu_q, 5, cases[c].cu_kv, 5);
        assert_int_equal(host, cases[c].status);
        char host_text[512];
        snprintf(host_text, sizeof(host_text), "%s (found on the device)",
                 message_text(opp_last_error_message()));
        assert_string_equal(host_text, cases[c].message);
        opp_test_h2d(dev.cu_q, cases[c].cu_q, sizeof(cases[c].cu_q));
        opp_test_h2d(dev.cu_kv, cases[c].cu_kv, sizeof(cases[c].cu_kv));
        assert_opp_ok(opp_packed_attention_fwd(&desc, &varlen, dev.q, dev.k, dev.v, dev.out,
                                               dev.workspace, dev.workspace_bytes, NULL));
        opp_test_gpu_sync();
        check_out_untouched(&dev, &lb);
        assert_opp_status(
            opp_packed_attention_device_status(dev.workspace, dev.workspace_bytes, NULL),
            cases[c].status, cases[c].message);
        printf("%-20s -> %s: %s\n", cases[c].name, opp_status_name(cases[c].status),
               message_text(opp_last_error_message()));
    }
    /* a good run on the same workspace */
    opp_attention_desc_t desc;
    opp_lb_packed_desc(&lb, &desc);
    opp_test_h2d(dev.cu_q, lb.cu_q, sizeof(int32_t) * 5);
    opp_test_h2d(dev.cu_kv, lb.cu_kv, sizeof(int32_t) * 5);
    assert_opp_ok(opp_packed_attention_fwd(&desc, &varlen, dev.q, dev.k, dev.v, dev.out,
                                           dev.workspace, dev.workspace_bytes, NULL));
    opp_test_gpu_sync();
    assert_opp_ok(opp_packed_attention_device_status(dev.workspace, dev.workspace_bytes, NULL));
    void *got = opp_test_packed_download(&dev);
    void *want = opp_test_packed_ref(&lb);
    opp_test_assert_out_equal(&lb, got, want, "good run after bad ones");
    free(got);
    free(want);
    opp_test_packed_free(&dev);
    opp_lb_free(&lb);
}

/* nonpad_kv_seqlen outside 0..S_kv (negative, above S_kv) is caught on the
 * device; Y stays poisoned; a good nonpad then runs. */
static void test_device_guard_reports_bad_nonpad(void **state) {
    (void)state;
    OPP_TEST_REQUIRE_GPU();
    opp_attention24_desc_t d;
    opp_attention24_desc_init(&d);
    d.q_dtype = d.k_dtype = d.v_dtype = d.out_dtype = OPP_DTYPE_BF16;
    d.batch = 3;
    d.num_heads = 4;
    d.kv_num_heads = 2;
    d.head_size = 16;
    d.q_seqlen = 6;
    d.kv_seqlen = 8;
    const size_t q_bytes = 3 * 4 * 6 * 16 * 2, kv_bytes = 3 * 2 * 8 * 16 * 2;
    void *q = opp_test_gpu_alloc(q_bytes), *k = opp_test_gpu_alloc(kv_bytes);
    void *v = opp_test_gpu_alloc(kv_bytes), *y = opp_test_gpu_alloc(q_bytes);
    opp_test_gpu_fill(q, 0x3C, q_bytes);
    opp_test_gpu_fill(k, 0x3C, kv_bytes);
    opp_test_gpu_fill(v, 0x3C, kv_bytes);
    int64_t *np = opp_test_gpu_alloc(3 * sizeof(int64_t));
    void *ws = opp_test_gpu_alloc(256);
    const struct {
        int64_t nonpad[3];
        const char *message;
    } bad[] = {
        {{3, 9, 8}, "nonpad_kv_seqlen[1] = 9 is outside 0..kv_seqlen = 8 (found on the device)"},
        {{-1, 2, 99}, "nonpad_kv_seqlen[0] = -1 is outside 0..kv_seqlen = 8 (found on the device)"},
    };
    unsigned char *host_y = malloc(q_bytes);
    assert_non_null(host_y);
    for (size_t c = 0; c < 2; ++c) {
        opp_test_gpu_fill(y, 0xFF, q_bytes);
        opp_test_h2d(np, bad[c].nonpad, sizeof(bad[c].nonpad));
        assert_opp_ok(opp_attention24_nonpad_fwd(&d, np, q, k, v, y, ws, 256, NULL));
        opp_test_gpu_sync();
        opp_test_d2h(host_y, y, q_bytes);
        for (size_t i = 0; i < q_bytes; ++i) {
            assert_int_equal(host_y[i], 0xFF);
        }
        assert_opp_status(opp_packed_attention_device_status(ws, 256, NULL),
                          OPP_STATUS_BAD_PARAM_NONPAD, bad[c].message);
    }
    const int64_t good[3] = {0, 8, 5};
    opp_test_h2d(np, good, sizeof(good));
    assert_opp_ok(opp_attention24_nonpad_fwd(&d, np, q, k, v, y, ws, 256, NULL));
    opp_test_gpu_sync();
    assert_opp_ok(opp_packed_attention_device_status(ws, 256, NULL));
    opp_test_d2h(host_y, y, q_bytes);
    /* batch 0 has no key: its rows are exact zeros; batch 1 is all 1.0 V */
    for (size_t i = 0; i < 4 * 6 * 16 * 2; ++i) {
        assert_int_equal(host_y[i], 0);
    }
    assert_int_equal(host_y[4 * 6 * 16 * 2], 0x3C);
    free(host_y);
    opp_test_gpu_free(q);
    opp_test_gpu_free(k);
    opp_test_gpu_free(v);
    opp_test_gpu_free(y);
    opp_test_gpu_free(np);
    opp_test_gpu_free(ws);
}

/* Argument errors come back before any CUDA call. */
static void test_device_status_rejects_bad_arguments(void **state) {
    (void)state;
    assert_opp_status(opp_packed_attention_device_status(NULL, 256, NULL),
                      OPP_STATUS_BAD_PARAM_NULL_POINTER, "workspace is NULL");
    assert_opp_status(opp_packed_attention_device_status((void *)(uintptr_t)0x10010, 256, NULL),
                      OPP_STATUS_BAD_PARAM_MISALIGNED, "is not 256-byte aligned");
    assert_opp_status(opp_packed_attention_device_status((void *)(uintptr_t)0x10000, 128, NULL),
                      OPP_STATUS_BAD_PARAM_WORKSPACE,
                      "workspace_bytes = 128 is below the 256-byte guard record");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_device_status_rejects_bad_arguments),
        cmocka_unit_test(test_device_guard_reports_bad_cu_seqlens),
        cmocka_unit_test(test_device_guard_reports_bad_nonpad),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
