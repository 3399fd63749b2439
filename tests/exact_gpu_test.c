/*
 * exact_gpu_test.c - L2 of the agreement contract (DESIGN.md section 4):
 * the exact GPU kernel (opp_packed_attention_fwd, OPP_ALGO_EXACT) is bit
 * identical to the CPU packed reference (opp_ref_packed_attention) on
 * generated logical batches, long sequences, strided rows, non-finite
 * values, and across CUDA-graph replays; and so is every EXACT tile of the
 * dispatch table that fits the device, not only the one the table picks
 * for it (on an H200 also the sm_80 and the 99 KB tiles). Output buffers
 * are poisoned with NaN before every run, so unwritten elements are caught.
 *
 * Every test skip()s without a CUDA device.
 * Run (Bazel): bazel test //tests:exact_gpu_test --test_output=all
 * Run (GPU machine, no Bazel): LD_LIBRARY_PATH=<dir of libcmocka.so.0>
 *   ./exact_gpu_test          (needs no data files)
 * Environment: OPP_GPU_TEST_BATCHES (default 300) generated batches,
 *   seeded by OPP_GPU_TEST_SEED (default 20261203); OPP_GPU_TEST_MAX_LEN
 *   (default 0: no cap) caps every sequence length of the hand-picked and
 *   generated shapes - for runs under compute-sanitizer, which is 100-1000x
 *   slower; a cap of 160 still spans two 128-key tiles, three 64-key chunks
 *   and several 64-row blocks, so every code path of the kernel runs.
 *   OPP_GPU_TEST_ROW_BATCHES (default 8) generated batches per dtype for
 *   the every-tile test, besides its hand-picked shapes.
 */
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness/logical_batch.h"
#include "lib/internal/attention_run.h"
#include "lib/internal/dispatch.h"
#include "lib/internal/problem.h"
#include "numerics/fp_convert.h"
#include "tests/exact_gpu_util.h"
#include "tests/gpu_util.h"
#include "tests/test_util.h"

/* Runs lb on the GPU and the CPU and asserts bit equality. */
static void check_batch(const opp_lb_t *lb, const char *label) {
    char what[600];
    char desc[512];
    opp_lb_describe(lb, desc, sizeof(desc));
    snprintf(what, sizeof(what), "%s: %s", label, desc);
    void *want = opp_test_packed_ref(lb);
    void *got = opp_test_packed_gpu(lb, NULL);
    opp_test_assert_out_equal(lb, got, want, what);
    free(got);
    free(want);
}

/* len capped by OPP_GPU_TEST_MAX_LEN (when set and > 0). */
static int32_t cap_len(int32_t len) {
    const long cap = opp_test_env_long("OPP_GPU_TEST_MAX_LEN", 0);
    return cap > 0 && len > cap ? (int32_t)cap : len;
}

/* The spec of generated batch i: mostly anything, plus MQA with 32 query
 * heads per kv head, long sequences over many tiles and chunks, and the
 * largest head sizes. */
static void spec_of(long i, opp_lb_spec_t *spec) {
    opp_lb_spec_random(spec);
    switch (i % 10) {
    case 6:
        spec->num_heads = 32;
        spec->kv_num_heads = 1;
        break;
    case 7:
        spec->num_heads = 64;
        spec->kv_num_heads = 2;
        spec->max_len = 40;
        break;
    case 8:
        spec->num_heads = 2;
        spec->kv_num_heads = 1;
        spec->batch = 2;
        spec->min_len = cap_len(100);
        spec->max_len = cap_len(600);
        break;
    case 9:
        spec->head_size = (i / 10) % 2 ? 256 : 0;
        spec->v_head_size = (i / 10) % 2 ? 0 : 256;
        break;
    default:
        break;
    }
}

/* Generated batches (ragged lengths with 0 and 1, L_kv < L_q, GQA up to 32,
 * MQA, head sizes 8..256, Dv != D, softcap, scale, causal, all dtypes) give
 * the reference's bits. */
static void test_exact_gpu_generated_batches_bit_identical(void **state) {
    (void)state;
    OPP_TEST_REQUIRE_GPU();
    const long batches = opp_test_env_long("OPP_GPU_TEST_BATCHES", 300);
    const uint64_t seed = (uint64_t)opp_test_env_long("OPP_GPU_TEST_SEED", 20261203);
    size_t elements = 0, per_dtype[3] = {0, 0, 0}, causal = 0, softcap = 0, gqa = 0, big = 0;
    const clock_t t0 = clock();
    for (long i = 0; i < batches; ++i) {
        opp_lb_spec_t spec;
        spec_of(i, &spec);
        opp_lb_t lb;
        assert_int_equal(opp_lb_generate(&spec, seed + (uint64_t)i * 7919u, &lb), 0);
        char label[64];
        snprintf(label, sizeof(label), "batch %ld", i);
        check_batch(&lb, label);
        elements += opp_test_out_elems(&lb);
        per_dtype[lb.dtype == OPP_DTYPE_F32 ? 0 : lb.dtype == OPP_DTYPE_F16 ? 1 : 2]++;
        causal += lb.is_causal != 0;
        softcap += lb.softcap > 0.0f;
        gqa += lb.num_heads != lb.kv_num_heads;
        big += lb.head_size > 128 || lb.v_head_size > 128;
        opp_lb_free(&lb);
    }
    printf("L2: %ld batches (f32 %zu, f16 %zu, bf16 %zu; causal %zu, softcap %zu, GQA/MQA %zu, "
           "head size > 128: %zu), %zu output elements, all bit-identical (%.1f s CPU)%s\n",
           batches, per_dtype[0], per_dtype[1], per_dtype[2], causal, softcap, gqa, big, elements,
           (double)(clock() - t0) / CLOCKS_PER_SEC,
           cap_len(INT32_MAX) < INT32_MAX ? "; lengths capped by OPP_GPU_TEST_MAX_LEN" : "");
}

/* Hand-picked shapes: many tiles and chunks, decode (L_q = 1), L_kv < L_q
 * under causal (first rows see nothing: zeros), empty sequences, a batch
 * without any query, odd head sizes (1, 3, 17, 129, 255). */
static void test_exact_gpu_edge_shapes_bit_identical(void **state) {
    (void)state;
    OPP_TEST_REQUIRE_GPU();
    static const struct {
        opp_dtype_t dtype;
        int32_t batch, lq[3], lkv[3], hq, hkv, d, dv, causal;
        float softcap;
    } cases[] = {
        {OPP_DTYPE_BF16, 2, {700, 131}, {700, 131}, 8, 2, 128, 128, 1, 0.0f},
        {OPP_DTYPE_F32, 2, {257, 64}, {300, 65}, 4, 4, 64, 64, 0, 0.0f},
        {OPP_DTYPE_F16, 3, {1, 1, 1}, {900, 5, 0}, 8, 1, 128, 64, 1, 0.0f},
        {OPP_DTYPE_BF16, 2, {300, 40}, {100, 7}, 4, 2, 96, 80, 1, 30.0f},
        {OPP_DTYPE_F16, 3, {0, 70, 0}, {0, 0, 129}, 2, 1, 32, 32, 0, 0.0f},
        {OPP_DTYPE_F32, 2, {0, 0}, {10, 3}, 2, 2, 16, 16, 1, 0.0f},
        {OPP_DTYPE_BF16, 2, {77, 9}, {130, 200}, 3, 1, 1, 3, 1, 0.0f},
        {OPP_DTYPE_F16, 1, {150}, {150}, 2, 2, 17, 255, 1, 5.0f},
        {OPP_DTYPE_F32, 1, {65}, {129}, 4, 2, 129, 33, 0, 0.0f},
        {OPP_DTYPE_BF16, 1, {200}, {200}, 32, 1, 256, 256, 1, 0.0f},
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); ++c) {
        int32_t lq[3], lkv[3];
        for (int32_t b = 0; b < cases[c].batch; ++b) {
            lq[b] = cap_len(cases[c].lq[b]);
            lkv[b] = cap_len(cases[c].lkv[b]);
        }
        opp_lb_t lb;
        assert_int_equal(opp_lb_from_lengths(&lb, cases[c].dtype, cases[c].batch, lq, lkv,
                                             cases[c].hq, cases[c].hkv, cases[c].d, cases[c].dv,
                                             0.0f, cases[c].causal, cases[c].softcap, 1000u + c),
                         0);
        char label[64];
        snprintf(label, sizeof(label), "edge case %zu", c);
        check_batch(&lb, label);
        opp_lb_free(&lb);
    }
}

/* Element index of (row r, head h, column c) in a [rows, H, W] tensor. */
static size_t at(int64_t r, int64_t h, int64_t c, int64_t heads, int64_t w) {
    return (size_t)((r * heads + h) * w + c);
}

/* Non-finite and tiny values follow the reference: K = +-inf gives +-inf or
 * NaN scores; NaN and inf in V rows that causal masking hides never touch
 * the rows that cannot see them; subnormals and -0 in Q, K, V decode
 * exactly. */
static void test_exact_gpu_nonfinite_values_match_reference(void **state) {
    (void)state;
    OPP_TEST_REQUIRE_GPU();
    const opp_dtype_t dtypes[3] = {OPP_DTYPE_F32, OPP_DTYPE_F16, OPP_DTYPE_BF16};
    for (int t = 0; t < 3; ++t) {
        const int32_t lq[2] = {90, 33}, lkv[2] = {90, 40};
        opp_lb_t lb;
        assert_int_equal(
            opp_lb_from_lengths(&lb, dtypes[t], 2, lq, lkv, 4, 2, 64, 64, 0.0f, 1, 0.0f, 77u + t),
            0);
        const int64_t d = lb.head_size, dv = lb.v_head_size, hkv = lb.kv_num_heads;
        const int dt = (int)lb.dtype;
        /* V rows 70 .. 89 of sequence 0 (hidden from rows < 70): NaN and inf */
        for (int64_t j = 70; j < 90; ++j) {
            for (int64_t c = 0; c < dv; ++c) {
                opp__store_elem(lb.v, at(j, 0, c, hkv, dv), dt, (j & 1) ? NAN : INFINITY);
            }
        }
        /* K of sequence 1, key 5, head 1: -inf, +inf (scores +-inf, NaN) */
        opp__store_elem(lb.k, at(lb.cu_kv[1] + 5, 1, 0, hkv, d), dt, -INFINITY);
        opp__store_elem(lb.k, at(lb.cu_kv[1] + 6, 1, 3, hkv, d), dt, INFINITY);
        /* subnormals and signed zeros of the dtype in Q, K and V (sequence 0,
         * head 1): the decoder's rare path */
        const double tiny =
            dt == OPP_DTYPE_F16 ? 0x1p-24 : (dt == OPP_DTYPE_BF16 ? 0x1p-133 : 0x1p-149);
        const double sub[6] = {tiny, -tiny, 3 * tiny, -0.0, 0.0, 1000 * tiny};
        for (int64_t r = 0; r < 30; ++r) {
            for (int64_t c = 0; c < 6; ++c) {
                opp__store_elem(lb.q, at(r, 1, c, lb.num_heads, d), dt, sub[(r + c) % 6]);
                opp__store_elem(lb.k, at(r, 1, c + 10, hkv, d), dt, sub[(r + 2 * c) % 6]);
                opp__store_elem(lb.v, at(r, 1, c + 20, hkv, dv), dt, sub[(r + 3 * c) % 6]);
            }
        }
        check_batch(&lb, "non-finite values");
        opp_lb_free(&lb);
    }
}

/* Row strides wider than the rows (gaps poisoned with NaN): the same bits
 * as the dense run, and the gaps of out are never written. Odd strides take
 * the scalar loads, 16-byte multiples the vector loads. */
static void test_exact_gpu_strided_rows_bit_identical(void **state) {
    (void)state;
    OPP_TEST_REQUIRE_GPU();
    opp_lb_spec_t spec;
    opp_lb_spec_random(&spec);
    for (int i = 0; i < 24; ++i) {
        opp_lb_t lb;
        assert_int_equal(opp_lb_generate(&spec, 4242u + (uint64_t)i, &lb), 0);
        void *want = opp_test_packed_ref(&lb);
        opp_attention_desc_t desc;
        opp_lb_packed_desc(&lb, &desc);
        const size_t es = opp_dtype_size(lb.dtype);
        const int64_t pad = i % 2 ? (int64_t)(16 / es) : 3; /* vector or scalar path */
        const int64_t w[4] = {
            (int64_t)lb.num_heads * lb.head_size, (int64_t)lb.kv_num_heads * lb.head_size,
            (int64_t)lb.kv_num_heads * lb.v_head_size, (int64_t)lb.num_heads * lb.v_head_size};
        const int64_t rows[4] = {lb.total_q, lb.total_kv, lb.total_kv, lb.total_q};
        const void *src[3] = {lb.q, lb.k, lb.v};
        int64_t stride[4];
        char *host[4];
        void *dev[4];
        for (int t = 0; t < 4; ++t) {
            stride[t] = w[t] + pad * (t + 1);
            const size_t n = (size_t)(rows[t] * stride[t]) + 1;
            host[t] = malloc(n * es);
            assert_non_null(host[t]);
            opp_lb_poison_fill(host[t], n, lb.dtype, OPP_LB_POISON_NAN);
            for (int64_t r = 0; t < 3 && r < rows[t]; ++r) {
                memcpy(host[t] + (size_t)(r * stride[t]) * es,
                       (const char *)src[t] + (size_t)(r * w[t]) * es, (size_t)w[t] * es);
            }
            dev[t] = opp_test_gpu_alloc(n * es);
            opp_test_h2d(dev[t], host[t], n * es);
        }
        desc.q_row_stride = stride[0];
        desc.k_row_stride = stride[1];
        desc.v_row_stride = stride[2];
        desc.out_row_stride = stride[3];
        const size_t cb = ((size_t)lb.batch + 1) * sizeof(int32_t);
        int32_t *cu_q = opp_test_gpu_alloc(cb), *cu_kv = opp_test_gpu_alloc(cb);
        opp_test_h2d(cu_q, lb.cu_q, cb);
        opp_test_h2d(cu_kv, lb.cu_kv, cb);
        size_t ws_bytes = 0;
        assert_opp_ok(opp_packed_attention_workspace_size(&desc, &ws_bytes));
        void *ws = opp_test_gpu_alloc(ws_bytes);
        const opp_varlen_t varlen = {cu_q, cu_kv};
        assert_opp_ok(opp_packed_attention_fwd(&desc, &varlen, dev[0], dev[1], dev[2], dev[3], ws,
                                               ws_bytes, NULL));
        opp_test_gpu_sync();
        const size_t nout = (size_t)(rows[3] * stride[3]) + 1;
        char *out = malloc(nout * es);
        assert_non_null(out);
        opp_test_d2h(out, dev[3], nout * es);
        for (int64_t r = 0; r < rows[3]; ++r) {
            char *row = out + (size_t)(r * stride[3]) * es;
            assert_int_equal(opp_test_bits_equal(row, (char *)want + (size_t)(r * w[3]) * es,
                                                 (size_t)w[3], lb.dtype, "strided out row"),
                             0);
            /* the gap after the row still holds the poison bits */
            assert_memory_equal(row + (size_t)w[3] * es,
                                host[3] + (size_t)(r * stride[3] + w[3]) * es,
                                (size_t)(stride[3] - w[3]) * es);
        }
        for (int t = 0; t < 4; ++t) {
            free(host[t]);
            opp_test_gpu_free(dev[t]);
        }
        free(out);
        free(want);
        opp_test_gpu_free(cu_q);
        opp_test_gpu_free(cu_kv);
        opp_test_gpu_free(ws);
        opp_lb_free(&lb);
    }
}

static void cuda_ok(cudaError_t err, const char *what) {
    if (err != cudaSuccess) {
        fail_msg("%s: %s (%s)", what, cudaGetErrorName(err), cudaGetErrorString(err));
    }
}

/* Runs lb through table row `row` (opp__attention_run_row: the run path
 * with the tile chosen here instead of by the table), synchronizes, checks
 * the device status. @return : the host output. */
static void *run_row(const opp_lb_t *lb, const opp__kernel_row_t *row) {
    opp_test_packed_dev_t dev;
    opp_test_packed_upload(lb, &dev);
    opp_attention_desc_t desc;
    opp_lb_packed_desc(lb, &desc);
    opp__problem_t p;
    assert_opp_ok(opp__problem_from_desc(&desc, &p));
    assert_opp_ok(opp__problem_bind(&p, dev.cu_q, dev.cu_kv, NULL, dev.q, dev.k, dev.v, dev.out,
                                    "out", NULL));
    assert_opp_ok(opp__attention_run_row(&p, row, dev.workspace, dev.workspace_bytes, NULL));
    cuda_ok(cudaStreamSynchronize(NULL), row->name);
    assert_opp_ok(opp_packed_attention_device_status(dev.workspace, dev.workspace_bytes, NULL));
    void *out = opp_test_packed_download(&dev);
    opp_test_packed_free(&dev);
    return out;
}

/* Runs lb through every row in fits[] (EXACT rows that fit the device) of
 * lb's dtype whose DMAX serves its head sizes, comparing each with the
 * reference; counts the runs per row in ran[]. */
static void check_rows(const opp_lb_t *lb, const char *label, const int *fits, int *ran) {
    char what[700];
    char desc[512];
    opp_lb_describe(lb, desc, sizeof(desc));
    void *want = opp_test_packed_ref(lb);
    const int32_t dmax = lb->head_size > lb->v_head_size ? lb->head_size : lb->v_head_size;
    for (int i = 0; i < OPP__KERNEL_COUNT; ++i) {
        const opp__kernel_row_t *row = &opp__kernel_table[i];
        if (!fits[i] || row->dtype != lb->dtype || row->dmax < dmax) {
            continue;
        }
        snprintf(what, sizeof(what), "%s, tile %s: %s", label, row->name, desc);
        void *got = run_row(lb, row);
        opp_test_assert_out_equal(lb, got, want, what);
        free(got);
        ran[i]++;
    }
    free(want);
}

/* Every EXACT row of the dispatch table whose shared memory fits this
 * device (cudaDevAttrMaxSharedMemoryPerBlockOptin) - not only the row the
 * table picks here - gives the reference's bits: hand-picked shapes (GQA,
 * MQA, causal with L_kv < L_q and > L_q, softcap, a scale, zero-length
 * sequences, D and Dv in {1, 8, 64, 100, 128} and, for the DMAX 256 rows,
 * {192, 256}, lengths across several 64- and 128-key tiles and 32- and
 * 64-row blocks) and generated batches of every dtype. Every fitting row
 * must have run. */
static void test_exact_gpu_every_fitting_tile_bit_identical(void **state) {
    (void)state;
    OPP_TEST_REQUIRE_GPU();
    int device = 0, optin = 0, major = 0;
    cuda_ok(cudaGetDevice(&device), "cudaGetDevice");
    cuda_ok(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device),
            "cudaDeviceGetAttribute(MaxSharedMemoryPerBlockOptin)");
    cuda_ok(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device),
            "cudaDeviceGetAttribute(ComputeCapabilityMajor)");
    if (major < 8) {
        skip(); /* every row needs compute capability 8.0 (kernels/kernel_list.h) */
    }
    int fits[OPP__KERNEL_COUNT], ran[OPP__KERNEL_COUNT], nfit = 0;
    for (int i = 0; i < OPP__KERNEL_COUNT; ++i) {
        const opp__kernel_row_t *row = &opp__kernel_table[i];
        fits[i] = row->algo == OPP_ALGO_EXACT && row->smem_bytes <= (size_t)optin;
        ran[i] = 0;
        nfit += fits[i];
    }
    assert_true(nfit > 0);
    static const struct {
        int32_t batch, lq[3], lkv[3], hq, hkv, d, dv, causal;
        float scale, softcap;
    } cases[] = {
        {3, {130, 0, 65}, {200, 64, 0}, 8, 2, 128, 128, 1, 0.0f, 0.0f},
        {2, {1, 97}, {300, 97}, 4, 4, 100, 64, 0, 0.0f, 20.0f},
        {3, {64, 129, 0}, {64, 129, 0}, 6, 3, 64, 100, 1, 0.3f, 5.0f},
        {2, {33, 200}, {17, 257}, 2, 1, 8, 1, 1, 0.0f, 0.0f},
        {1, {70}, {190}, 3, 1, 1, 8, 0, 0.0f, 0.0f},
        {2, {128, 5}, {128, 300}, 4, 2, 128, 8, 1, 0.0f, 30.0f},
        {2, {100, 0}, {150, 10}, 4, 2, 192, 256, 1, 0.0f, 0.0f},
        {2, {65, 40}, {200, 0}, 2, 1, 256, 192, 0, 0.0f, 10.0f},
        {1, {90}, {90}, 8, 1, 256, 1, 1, 0.0f, 0.0f},
    };
    const opp_dtype_t dtypes[3] = {OPP_DTYPE_F32, OPP_DTYPE_F16, OPP_DTYPE_BF16};
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); ++c) {
        int32_t lq[3], lkv[3];
        for (int32_t b = 0; b < cases[c].batch; ++b) {
            lq[b] = cap_len(cases[c].lq[b]);
            lkv[b] = cap_len(cases[c].lkv[b]);
        }
        for (int t = 0; t < 3; ++t) {
            opp_lb_t lb;
            assert_int_equal(opp_lb_from_lengths(&lb, dtypes[t], cases[c].batch, lq, lkv,
                                                 cases[c].hq, cases[c].hkv, cases[c].d, cases[c].dv,
                                                 cases[c].scale, cases[c].causal, cases[c].softcap,
                                                 2000u + 10u * c + (unsigned)t),
                             0);
            char label[64];
            snprintf(label, sizeof(label), "tile case %zu", c);
            check_rows(&lb, label, fits, ran);
            opp_lb_free(&lb);
        }
    }
    static const int32_t sizes[7] = {1, 8, 64, 100, 128, 192, 256};
    const long batches = opp_test_env_long("OPP_GPU_TEST_ROW_BATCHES", 8);
    const uint64_t seed = (uint64_t)opp_test_env_long("OPP_GPU_TEST_SEED", 20261203);
    for (long i = 0; i < batches; ++i) {
        for (int t = 0; t < 3; ++t) {
            opp_lb_spec_t spec;
            opp_lb_spec_random(&spec);
            spec.dtype = dtypes[t];
            spec.head_size = sizes[i % 7];
            spec.v_head_size = sizes[(i * 3 + 2) % 7];
            spec.min_len = 0;
            spec.max_len = cap_len(300);
            opp_lb_t lb;
            assert_int_equal(opp_lb_generate(&spec, seed + 31u * (uint64_t)i + (uint64_t)t, &lb),
                             0);
            char label[64];
            snprintf(label, sizeof(label), "tile batch %ld", i);
            check_rows(&lb, label, fits, ran);
            opp_lb_free(&lb);
        }
    }
    printf("every tile: %d EXACT rows fit this device (%d bytes of shared memory per block):", nfit,
           optin);
    for (int i = 0; i < OPP__KERNEL_COUNT; ++i) {
        if (fits[i]) {
            printf(" %s x%d", opp__kernel_table[i].name, ran[i]);
            assert_true(ran[i] > 0);
        }
    }
    printf(", all bit-identical\n");
}

/* opp_packed_attention_fwd captured into a CUDA graph on a non-default
 * stream, replayed twice with different input values copied in between:
 * each replay gives the reference's bits for the values it saw. */
static void test_exact_gpu_graph_replays_bit_identical(void **state) {
    (void)state;
    OPP_TEST_REQUIRE_GPU();
    const int32_t lq[3] = {130, 1, 45}, lkv[3] = {130, 70, 20};
    opp_lb_t a, b;
    assert_int_equal(
        opp_lb_from_lengths(&a, OPP_DTYPE_BF16, 3, lq, lkv, 8, 2, 64, 64, 0.0f, 1, 0.0f, 11u), 0);
    assert_int_equal(
        opp_lb_from_lengths(&b, OPP_DTYPE_BF16, 3, lq, lkv, 8, 2, 64, 64, 0.0f, 1, 0.0f, 12u), 0);
    opp_test_packed_dev_t dev;
    opp_test_packed_upload(&a, &dev);
    opp_attention_desc_t desc;
    opp_lb_packed_desc(&a, &desc);
    const opp_varlen_t varlen = {dev.cu_q, dev.cu_kv};
    cudaStream_t stream;
    cuda_ok(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    cuda_ok(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), "cudaStreamBeginCapture");
    const opp_status_t st = opp_packed_attention_fwd(&desc, &varlen, dev.q, dev.k, dev.v, dev.out,
                                                     dev.workspace, dev.workspace_bytes, stream);
    cuda_ok(cudaStreamEndCapture(stream, &graph), "cudaStreamEndCapture");
    assert_opp_ok(st);
    cuda_ok(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
    const opp_lb_t *inputs[2] = {&a, &b};
    const size_t es = opp_dtype_size(a.dtype);
    for (int replay = 0; replay < 2; ++replay) {
        const opp_lb_t *in = inputs[replay];
        opp_test_h2d(dev.q, in->q, (size_t)in->total_q * 8 * 64 * es);
        opp_test_h2d(dev.k, in->k, (size_t)in->total_kv * 2 * 64 * es);
        opp_test_h2d(dev.v, in->v, (size_t)in->total_kv * 2 * 64 * es);
        cuda_ok(cudaGraphLaunch(exec, stream), "cudaGraphLaunch");
        cuda_ok(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
        assert_opp_ok(
            opp_packed_attention_device_status(dev.workspace, dev.workspace_bytes, stream));
        void *got = opp_test_packed_download(&dev);
        void *want = opp_test_packed_ref(in);
        opp_test_assert_out_equal(in, got, want, replay ? "graph replay 2" : "graph replay 1");
        free(got);
        free(want);
    }
    cuda_ok(cudaGraphExecDestroy(exec), "cudaGraphExecDestroy");
    cuda_ok(cudaGraphDestroy(graph), "cudaGraphDestroy");
    cuda_ok(cudaStreamDestroy(stream), "cudaStreamDestroy");
    opp_test_packed_free(&dev);
    opp_lb_free(&a);
    opp_lb_free(&b);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_gpu_edge_shapes_bit_identical),
        cmocka_unit_test(test_exact_gpu_nonfinite_values_match_reference),
        cmocka_unit_test(test_exact_gpu_strided_rows_bit_identical),
        cmocka_unit_test(test_exact_gpu_graph_replays_bit_identical),
        cmocka_unit_test(test_exact_gpu_every_fitting_tile_bit_identical),
        cmocka_unit_test(test_exact_gpu_generated_batches_bit_identical),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
