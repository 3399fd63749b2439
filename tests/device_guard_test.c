/*
 * device_guard_test.c - the run path's device-side guard and
 * opp_packed_attention_device_status():
 *   GPU: inconsistent device cu_seqlens (decreasing, [0] != 0, last above
 *        total, a length above max_seqlen) and bad nonpad_kv_seqlen values:
 *        fwd still returns SUCCESS (it only enqueues), the run fails loudly
 *        - every out / y element within the extents and every lse element
 *        is the canonical quiet NaN (poison of another pattern before the
 *        run), row-stride gaps keep their poison - and device_status
 *        returns the host check's status with the host check's message +
 *        " (found on the device)"; a good run on the same workspace then
 *        reports SUCCESS and the reference's bits. A batch that ends below
 *        total_q (graph replay) gets zero out rows and -inf lse past its
 *        end, the reference's bits before it, gaps untouched.
 *   GPU, adversarial (issue 12 item 8): negative, decreasing, past the
 *        total (INT32_MIN, INT32_MAX), above max_seqlen, at full-size
 *        extents (8192 rows, max_seqlen 4096), EXACT and FAST: each a guard
 *        finding with everything NaN; a batch below the totals: zeros past
 *        its end. tools/gpu_run_all.sh runs this binary under
 *        compute-sanitizer (0 out-of-bounds accesses).
 *   CPU: device_status argument errors (before any CUDA call).
 * GPU tests skip() without a CUDA device.
 * Run (Bazel): bazel test //tests:device_guard_test --test_output=all
 * Run (GPU machine): ./device_guard_test (no data files, no environment)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/logical_batch.h"
#include "tests/exact_gpu_util.h"
#include "tests/gpu_util.h"
#include "tests/test_util.h"

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
     {0, 5, 20, 25, 31},
     0,
     OPP_STATUS_BAD_PARAM_SEQLENS_TOTAL,
     "cu_seqlens_kv[4] = 31 > total_kv = 30 (found on the device)"},
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

/* Poison before a run: 0xA5 bytes, a finite value in f16 / bf16 / f32,
 * unlike every bit pattern the guard or a kernel writes here. */
#define POISON_BYTE 0xA5
#define POISON_16   0xA5A5u
#define POISON_32   0xA5A5A5A5u
#define QNAN_F16    0x7E00u
#define QNAN_BF16   0x7FC0u
#define QNAN_F32    0x7FC00000u
#define NEG_INF_F32 0xFF800000u

/* Fails unless the n 16-bit elements at p are all `bits`. */
static void assert_all_bits16(const void *p, size_t n, uint16_t bits, const char *what) {
    const uint16_t *e = p;
    for (size_t i = 0; i < n; ++i) {
        if (e[i] != bits) {
            fail_msg("%s: element %zu is 0x%04x, want 0x%04x", what, i, e[i], bits);
        }
    }
}

/* Fails unless the n 32-bit elements at p are all `bits`. */
static void assert_all_bits32(const void *p, size_t n, uint32_t bits, const char *what) {
    const uint32_t *e = p;
    for (size_t i = 0; i < n; ++i) {
        if (e[i] != bits) {
            fail_msg("%s: element %zu is 0x%08x, want 0x%08x", what, i, e[i], bits);
        }
    }
}

/* Each inconsistency is caught on the device, out and lse become quiet
 * NaN, the status and message are the host check's; then a good run
 * succeeds. */
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
    const size_t n_out = opp_test_out_elems(&lb), n_lse = (size_t)lb.num_heads * 30;
    float *lse = opp_test_gpu_alloc(n_lse * sizeof(float));
    uint32_t *host_lse = malloc(n_lse * sizeof(float));
    assert_non_null(host_lse);
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
                 opp_last_error_message());
        assert_string_equal(host_text, cases[c].message);
        opp_test_h2d(dev.cu_q, cases[c].cu_q, sizeof(cases[c].cu_q));
        opp_test_h2d(dev.cu_kv, cases[c].cu_kv, sizeof(cases[c].cu_kv));
        opp_test_gpu_fill(dev.out, POISON_BYTE, dev.out_bytes);
        opp_test_gpu_fill(lse, POISON_BYTE, n_lse * sizeof(float));
        assert_opp_ok(opp_packed_attention_fwd_lse(&desc, &varlen, dev.q, dev.k, dev.v, dev.out,
                                                   lse, dev.workspace, dev.workspace_bytes, NULL));
        opp_test_gpu_sync();
        void *got = opp_test_packed_download(&dev);
        assert_all_bits16(got, n_out, QNAN_F16, cases[c].name);
        free(got);
        opp_test_d2h(host_lse, lse, n_lse * sizeof(float));
        assert_all_bits32(host_lse, n_lse, QNAN_F32, cases[c].name);
        assert_opp_status(
            opp_packed_attention_device_status(dev.workspace, dev.workspace_bytes, NULL),
            cases[c].status, cases[c].message);
        printf("%-20s -> %s: %s\n", cases[c].name, opp_status_name(cases[c].status),
               opp_last_error_message());
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
    free(host_lse);
    opp_test_gpu_free(lse);
    opp_test_packed_free(&dev);
    opp_lb_free(&lb);
}

/* Rows of out with a padded row stride: a failed run writes NaN to every
 * element of the [total_q, Hq, Dv] extents and nothing else; a batch that
 * ends below total_q (cu_seqlens_q[B] = 25 of 30, cu_seqlens_kv[B] = 28 of
 * 30: its last sequence empty) gets the reference's rows before the end,
 * zero rows and -inf lse past it; the gaps keep their poison in both. */
static void test_device_guard_fills_within_row_strides(void **state) {
    (void)state;
    OPP_TEST_REQUIRE_GPU();
    const int32_t lq[4] = {5, 15, 5, 5}, lkv[4] = {5, 15, 5, 5};
    opp_lb_t lb;
    assert_int_equal(
        opp_lb_from_lengths(&lb, OPP_DTYPE_BF16, 4, lq, lkv, 4, 2, 24, 40, 0.0f, 1, 0.0f, 9u), 0);
    const size_t width = 4 * 40, stride = width + 5, total = 30, n = total * stride;
    opp_test_packed_dev_t dev;
    opp_test_packed_upload(&lb, &dev);
    void *out = opp_test_gpu_alloc(n * 2);
    const size_t n_lse = 4 * total;
    float *lse = opp_test_gpu_alloc(n_lse * sizeof(float));
    opp_attention_desc_t desc;
    opp_lb_packed_desc(&lb, &desc); /* EXACT: any row stride */
    desc.out_row_stride = (int64_t)stride;
    const opp_varlen_t varlen = {dev.cu_q, dev.cu_kv};
    uint16_t *got = malloc(n * 2);
    uint32_t *got_lse = malloc(n_lse * sizeof(float));
    assert_true(got != NULL && got_lse != NULL);
    void *want = opp_test_packed_ref(&lb); /* dense [30, 4, 40] */
    const int32_t bad_q[5] = {0, 5, 20, 19, 30}, short_q[5] = {0, 5, 20, 25, 25};
    const int32_t short_kv[5] = {0, 5, 20, 25, 28};
    for (int run = 0; run < 2; ++run) {
        const int failed = run == 0;
        opp_test_h2d(dev.cu_q, failed ? bad_q : short_q, sizeof(bad_q));
        opp_test_h2d(dev.cu_kv, failed ? lb.cu_kv : short_kv, sizeof(short_kv));
        opp_test_gpu_fill(out, POISON_BYTE, n * 2);
        opp_test_gpu_fill(lse, POISON_BYTE, n_lse * sizeof(float));
        assert_opp_ok(opp_packed_attention_fwd_lse(&desc, &varlen, dev.q, dev.k, dev.v, out, lse,
                                                   dev.workspace, dev.workspace_bytes, NULL));
        opp_test_gpu_sync();
        const opp_status_t st =
            opp_attention_device_status(dev.workspace, dev.workspace_bytes, NULL);
        assert_int_equal(st, failed ? OPP_STATUS_BAD_PARAM_SEQLENS_DECREASING : OPP_STATUS_SUCCESS);
        opp_test_d2h(got, out, n * 2);
        opp_test_d2h(got_lse, lse, n_lse * sizeof(float));
        for (size_t t = 0; t < total; ++t) {
            char what[96];
            snprintf(what, sizeof(what), "%s run, row %zu", failed ? "failed" : "short", t);
            const uint16_t *row = got + t * stride;
            if (failed) {
                assert_all_bits16(row, width, QNAN_BF16, what);
            } else if (t >= 25) {
                assert_all_bits16(row, width, 0, what);
            } else if (memcmp(row, (const uint16_t *)want + t * width, width * 2) != 0) {
                fail_msg("%s differs from the reference", what);
            }
            assert_all_bits16(row + width, stride - width, POISON_16, what); /* the gap */
            for (size_t h = 0; h < 4; ++h) {
                const uint32_t bits = got_lse[h * total + t];
                const uint32_t expect = failed ? QNAN_F32 : t >= 25 ? NEG_INF_F32 : bits;
                float f;
                memcpy(&f, &bits, sizeof(f));
                if (bits != expect || (!failed && t < 25 && !isfinite(f))) {
                    fail_msg("%s: lse of head %zu is 0x%08x", what, h, bits);
                }
            }
        }
    }
    free(want);
    free(got);
    free(got_lse);
    opp_test_gpu_free(out);
    opp_test_gpu_free(lse);
    opp_test_packed_free(&dev);
    opp_lb_free(&lb);
}

/* One rank of test_device_guard_reports_bad_nonpad. */
static void check_bad_nonpad(int32_t rank) {
    opp_attention24_desc_t d;
    opp_attention24_desc_init(&d);
    d.q_dtype = d.k_dtype = d.v_dtype = d.out_dtype = OPP_DTYPE_BF16;
    d.input_rank = rank;
    d.batch = 3;
    d.num_heads = 4;
    d.kv_num_heads = 2;
    d.head_size = 16;
    d.q_seqlen = 6;
    d.kv_seqlen = 8;
    const size_t q_bytes = 3 * 4 * 6 * 16 * 2, kv_bytes = 3 * 2 * 8 * 16 * 2;
    const size_t n_lse = 3 * 4 * 6;
    void *q = opp_test_gpu_alloc(q_bytes), *k = opp_test_gpu_alloc(kv_bytes);
    void *v = opp_test_gpu_alloc(kv_bytes), *y = opp_test_gpu_alloc(q_bytes);
    float *lse = opp_test_gpu_alloc(n_lse * sizeof(float));
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
    uint32_t *host_lse = malloc(n_lse * sizeof(float));
    assert_true(host_y != NULL && host_lse != NULL);
    for (size_t c = 0; c < 2; ++c) {
        opp_test_gpu_fill(y, POISON_BYTE, q_bytes);
        opp_test_gpu_fill(lse, POISON_BYTE, n_lse * sizeof(float));
        opp_test_h2d(np, bad[c].nonpad, sizeof(bad[c].nonpad));
        assert_opp_ok(opp_attention24_nonpad_fwd_lse(&d, np, q, k, v, y, lse, ws, 256, NULL));
        opp_test_gpu_sync();
        opp_test_d2h(host_y, y, q_bytes);
        opp_test_d2h(host_lse, lse, n_lse * sizeof(float));
        assert_all_bits16(host_y, q_bytes / 2, QNAN_BF16, bad[c].message);
        assert_all_bits32(host_lse, n_lse, QNAN_F32, bad[c].message);
        assert_opp_status(opp_packed_attention_device_status(ws, 256, NULL),
                          OPP_STATUS_BAD_PARAM_NONPAD, bad[c].message);
    }
    const int64_t good[3] = {0, 8, 5};
    opp_test_h2d(np, good, sizeof(good));
    assert_opp_ok(opp_attention24_nonpad_fwd_lse(&d, np, q, k, v, y, lse, ws, 256, NULL));
    opp_test_gpu_sync();
    assert_opp_ok(opp_packed_attention_device_status(ws, 256, NULL));
    opp_test_d2h(host_y, y, q_bytes);
    opp_test_d2h(host_lse, lse, n_lse * sizeof(float));
    /* batch 0 has no key: its rows (the first 4 * 6 * 16 elements in either
     * rank) are exact zeros, its lse -inf; batch 1 averages equal V rows */
    assert_all_bits16(host_y, 4 * 6 * 16, 0, "batch 0 of a good run");
    assert_int_equal(host_y[4 * 6 * 16 * 2], 0x3C);
    assert_all_bits32(host_lse, 4 * 6, NEG_INF_F32, "lse of batch 0 of a good run");
    free(host_y);
    free(host_lse);
    opp_test_gpu_free(q);
    opp_test_gpu_free(k);
    opp_test_gpu_free(v);
    opp_test_gpu_free(y);
    opp_test_gpu_free(lse);
    opp_test_gpu_free(np);
    opp_test_gpu_free(ws);
}

/* nonpad_kv_seqlen outside 0..S_kv (negative, above S_kv) is caught on the
 * device; every element of y and lse becomes quiet NaN, in 4D and 3D; a
 * good nonpad then runs. */
static void test_device_guard_reports_bad_nonpad(void **state) {
    (void)state;
    OPP_TEST_REQUIRE_GPU();
    for (int32_t rank = 4; rank >= 3; --rank) {
        check_bad_nonpad(rank);
    }
}

/* One adversarial case: the device arrays of test_device_guard_adversarial. */
typedef struct adv_case {
    const char *name;
    int32_t cu_q[5], cu_kv[5];
    int32_t max_seqlen_q; /* 0: the batch's own */
    opp_status_t status;
} adv_case_t;

#define ADV_TOTAL 8192 /* rows of q / out and of k / v */
#define ADV_MAX   4096 /* the longest sequence: max_seqlen_q = max_seqlen_kv */

static const adv_case_t adv_cases[] = {
    {"q negative start",
     {-1, 4096, 6000, 8000, 8192},
     {0, 4096, 6000, 8000, 8192},
     0,
     OPP_STATUS_BAD_PARAM_SEQLENS_START},
    {"kv negative inside",
     {0, 4096, 6000, 8000, 8192},
     {0, 4096, -5, 8000, 8192},
     0,
     OPP_STATUS_BAD_PARAM_SEQLENS_DECREASING},
    {"kv last INT32_MIN",
     {0, 4096, 6000, 8000, 8192},
     {0, 4096, 6000, 8000, INT32_MIN},
     0,
     OPP_STATUS_BAD_PARAM_SEQLENS_DECREASING},
    {"q decreasing",
     {0, 4096, 100, 8000, 8192},
     {0, 4096, 6000, 8000, 8192},
     0,
     OPP_STATUS_BAD_PARAM_SEQLENS_DECREASING},
    {"kv past the total inside",
     {0, 4096, 6000, 8000, 8192},
     {0, 4096, 9000, 9500, 10000},
     0,
     OPP_STATUS_BAD_PARAM_SEQLENS_TOTAL},
    {"kv last = total + 1",
     {0, 4096, 6000, 8000, 8192},
     {0, 4096, 6000, 8000, 8193},
     0,
     OPP_STATUS_BAD_PARAM_SEQLENS_TOTAL},
    {"q last INT32_MAX",
     {0, 4096, 6000, 8000, INT32_MAX},
     {0, 4096, 6000, 8000, 8192},
     0,
     OPP_STATUS_BAD_PARAM_SEQLENS_TOTAL},
    {"kv above max_seqlen",
     {0, 4096, 6000, 8000, 8192},
     {0, 100, 4300, 8000, 8192},
     0,
     OPP_STATUS_BAD_PARAM_MAX_SEQLEN},
    {"q above a lower max_seqlen",
     {0, 4096, 6000, 8000, 8192},
     {0, 4096, 6000, 8000, 8192},
     1024,
     OPP_STATUS_BAD_PARAM_MAX_SEQLEN},
};

/* 1 when the bf16 bits are a NaN. */
static int bf16_is_nan(uint16_t b) {
    return (b & 0x7F80u) == 0x7F80u && (b & 0x7Fu) != 0;
}

/* Adversarial device cu_seqlens (issue 12 item 8) at full-size extents:
 * total_q = total_kv = 8192 rows, max_seqlen 4096 (grids of hundreds of
 * blocks, split-KV partials planned), bf16, Hq 8, Hkv 2, D 128, causal,
 * EXACT and FAST with LSE: negative entries (first, inside, last =
 * INT32_MIN), decreasing, past the total (inside, total + 1, INT32_MAX), a
 * length above max_seqlen_kv, and above a lowered max_seqlen_q. Each run
 * ends in the guard finding the host check names (status and message),
 * every out and lse element NaN; that nothing reads or writes out of
 * bounds is what the compute-sanitizer runs of tools/gpu_run_all.sh
 * (--sanitize, --sanitize-full) check. Then a batch that ends below the
 * totals (valid: graph replay) with short sequences under the same
 * max_seqlen bound: SUCCESS, rows past its end zero, their LSE -inf. */
static void test_device_guard_adversarial(void **state) {
    (void)state;
    OPP_TEST_REQUIRE_GPU();
    const int32_t len[4] = {4096, 1904, 2000, 192};
    opp_lb_t lb;
    assert_int_equal(
        opp_lb_from_lengths(&lb, OPP_DTYPE_BF16, 4, len, len, 8, 2, 128, 128, 0.0f, 1, 0.0f, 12u),
        0);
    assert_int_equal(lb.total_q, ADV_TOTAL);
    assert_int_equal(lb.max_lq, ADV_MAX);
    opp_test_packed_dev_t dev;
    opp_test_packed_upload(&lb, &dev);
    const size_t n_out = opp_test_out_elems(&lb), n_lse = (size_t)lb.num_heads * ADV_TOTAL;
    float *lse = opp_test_gpu_alloc(n_lse * sizeof(float));
    uint16_t *got = malloc(n_out * sizeof(uint16_t));
    uint32_t *got_lse = malloc(n_lse * sizeof(float));
    assert_true(got != NULL && got_lse != NULL);
    const opp_varlen_t varlen = {dev.cu_q, dev.cu_kv};
    int32_t sm = 0;
    assert_opp_ok(opp_device_sm_arch(&sm));
    const size_t n_cases = sizeof(adv_cases) / sizeof(adv_cases[0]);
    for (int a = 0; a < 2; ++a) {
        const opp_algo_t algo = a == 0 ? OPP_ALGO_EXACT : OPP_ALGO_FAST;
        opp_attention_desc_t desc;
        opp_lb_packed_desc(&lb, &desc);
        desc.algo = algo;
        const char *kernel = NULL;
        if (opp_attention_kernel_query(&desc, sm, &kernel) != OPP_STATUS_SUCCESS) {
            printf("adversarial cu_seqlens, %s: no kernel on sm %d (%s): not run\n",
                   a == 0 ? "EXACT" : "FAST", (int)sm, opp_last_error_message());
            continue;
        }
        for (size_t c = 0; c <= n_cases; ++c) {
            const int valid = c == n_cases; /* last: a short batch below the totals */
            const int32_t short_q[5] = {0, 100, 150, 200, 210},
                          short_kv[5] = {0, 100, 160, 200, 250};
            const int32_t *cu_q = valid ? short_q : adv_cases[c].cu_q;
            const int32_t *cu_kv = valid ? short_kv : adv_cases[c].cu_kv;
            const char *name = valid ? "batch below the totals (valid)" : adv_cases[c].name;
            desc.max_seqlen_q =
                !valid && adv_cases[c].max_seqlen_q > 0 ? adv_cases[c].max_seqlen_q : ADV_MAX;
            const opp_status_t want = valid ? OPP_STATUS_SUCCESS : adv_cases[c].status;
            assert_int_equal(opp_varlen_check(&desc, cu_q, 5, cu_kv, 5), want);
            char message[512];
            snprintf(message, sizeof(message), "%s (found on the device)",
                     opp_last_error_message());
            opp_test_h2d(dev.cu_q, cu_q, 5 * sizeof(int32_t));
            opp_test_h2d(dev.cu_kv, cu_kv, 5 * sizeof(int32_t));
            opp_test_gpu_fill(dev.out, POISON_BYTE, dev.out_bytes);
            opp_test_gpu_fill(lse, POISON_BYTE, n_lse * sizeof(float));
            assert_opp_ok(opp_packed_attention_fwd_lse(&desc, &varlen, dev.q, dev.k, dev.v, dev.out,
                                                       lse, dev.workspace, dev.workspace_bytes,
                                                       NULL));
            opp_test_gpu_sync();
            opp_test_d2h(got, dev.out, n_out * sizeof(uint16_t));
            opp_test_d2h(got_lse, lse, n_lse * sizeof(float));
            if (!valid) {
                assert_all_bits16(got, n_out, QNAN_BF16, name);
                assert_all_bits32(got_lse, n_lse, QNAN_F32, name);
                assert_opp_status(
                    opp_attention_device_status(dev.workspace, dev.workspace_bytes, NULL), want,
                    message);
                printf("%-5s %-28s -> %s: %s\n", a == 0 ? "EXACT" : "FAST", name,
                       opp_status_name(want), opp_last_error_message());
                continue;
            }
            assert_opp_ok(opp_attention_device_status(dev.workspace, dev.workspace_bytes, NULL));
            const size_t width = (size_t)lb.num_heads * 128, end = 210;
            assert_all_bits16(got + end * width, (ADV_TOTAL - end) * width, 0, name);
            for (size_t i = 0; i < end * width; ++i) {
                if (bf16_is_nan(got[i]) || got[i] == POISON_16) {
                    fail_msg("%s, %s: out element %zu is 0x%04x", name, kernel, i, got[i]);
                }
            }
            for (size_t h = 0; h < (size_t)lb.num_heads; ++h) {
                const uint32_t *row = got_lse + h * ADV_TOTAL;
                assert_all_bits32(row + end, ADV_TOTAL - end, NEG_INF_F32, name);
                for (size_t t = 0; t < end; ++t) {
                    float f;
                    memcpy(&f, &row[t], sizeof(f));
                    if (isnan(f) || row[t] == POISON_32) {
                        fail_msg("%s, %s: lse of head %zu row %zu is 0x%08x", name, kernel, h, t,
                                 row[t]);
                    }
                }
            }
            printf("%-5s %-28s -> SUCCESS, rows past 210 zero, LSE -inf (%s)\n",
                   a == 0 ? "EXACT" : "FAST", name, kernel);
        }
    }
    free(got);
    free(got_lse);
    opp_test_gpu_free(lse);
    opp_test_packed_free(&dev);
    opp_lb_free(&lb);
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
        cmocka_unit_test(test_device_guard_fills_within_row_strides),
        cmocka_unit_test(test_device_guard_reports_bad_nonpad),
        cmocka_unit_test(test_device_guard_adversarial),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
