/*
 * attention24_gpu_test.c - the cuBLAS padded Attention-24 reference
 * (reference/opp_reference_gpu.h):
 *   L3  on generated logical batches (4D and 3D, finite and NaN padding, all
 *       dtypes, GQA up to 32, head sizes 32..256, Dv != D, chunked and not):
 *       the valid rows equal the CPU padded reference's bit for bit for f16
 *       and bf16, within 1 ulp for f32 (the flip rate is printed);
 *   the full operator on random descriptors (masks, past/present, qk
 *       modes) against the CPU reference, every output and row
 *       (tests/attention24_gpu_random.c);
 *   ONNX's 66 conformance cases and the golden cases: every output
 *       (tests/attention24_gpu_cases.c);
 *   errors (workspace, nonpad values on the device, a failed cuBLAS call is
 *       CUBLAS_ERROR) and the workspace sizes
 *       of the benchmark workloads (CPU-runnable); with $OPP_WORKLOADS set
 *       (../shared/bench/workloads.json), each workload shape also runs at
 *       full size on pattern data (timed).
 * GPU tests skip() without a device.
 *
 * Outside Bazel: OPP_ONNX_CONFORMANCE_DIR, OPP_GOLDEN_DIR (data folders),
 * OPP_L3_BATCHES (default 240), OPP_L3_RANDOM (default 300), OPP_L3_SEED
 * (default 20261203),
 * OPP_WORKLOADS (optional: the workload file);
 * LD_LIBRARY_PATH must reach libcublas, libcmocka and libprotobuf-c.
 */
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/workloads.h"
#include "harness/compare.h"
#include "harness/logical_batch.h"
#include "harness/rng.h"
#include "reference/attention24_gpu_internal.h"
#include "tests/attention24_gpu_cases.h"
#include "tests/attention24_gpu_run.h"
#include "tests/gpu_util.h"

static opp_ref_gpu_t *g_ref;
static cudaStream_t g_stream;
static opp_a24g_ws_t g_ws;

static int group_setup(void **state) {
    (void)state;
    if (opp_test_gpu_count() == 0) {
        return 0;
    }
    if (opp_ref_gpu_create(&g_ref) != OPP_STATUS_SUCCESS ||
        cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking) != cudaSuccess) {
        fprintf(stderr, "FATAL: cannot create the GPU reference: %s\n", opp_last_error_message());
        return -1;
    }
    return 0;
}

static int group_teardown(void **state) {
    (void)state;
    if (g_ref != NULL) {
        opp_a24g_ws_free(&g_ws);
        (void)cudaStreamDestroy(g_stream);
        opp_ref_gpu_destroy(g_ref);
    }
    return 0;
}

static long env_long(const char *name, long fallback) {
    const char *s = getenv(name);
    return (s != NULL && *s != '\0') ? strtol(s, NULL, 10) : fallback;
}

static int32_t pick(uint64_t *st, const int32_t *v, int n) {
    return v[opp_rng_u64(st) % (uint64_t)n];
}

// --- L3 on generated logical batches

/* What test_gpu_ref_l3 accumulates. */
typedef struct l3_stats {
    size_t runs, chunked, exact_elems, f32_elems, f32_flips;
} l3_stats_t;

/* The planner budget (doubles) that makes pad's run take several chunks:
 * mode 1: two batch entries per chunk; mode 2: three query rows per chunk. */
static uint64_t chunk_budget(const opp_ref_attention24_desc_t *a, int mode) {
    const uint64_t T = (uint64_t)a->kv_seqlen, hq = (uint64_t)a->q_num_heads;
    const uint64_t row = T + (uint64_t)a->head_size + (uint64_t)a->v_head_size + 1;
    const uint64_t per_b = hq * (uint64_t)a->q_seqlen * row;
    const uint64_t per_kv =
        (uint64_t)a->kv_num_heads * T * (uint64_t)(a->head_size + a->v_head_size);
    if (mode == 1) {
        return 2 * (per_b > per_kv ? per_b : per_kv);
    }
    return mode == 2 ? 3 * hq * row : 0;
}

/* CPU and GPU on one padded variant; compares the valid rows. */
static void l3_variant(const opp_lb_t *lb, int32_t rank, opp_lb_poison_t poison, int chunk_mode,
                       const char *what, l3_stats_t *s) {
    opp_lb_padded_t pad;
    assert_int_equal(opp_lb_to_padded(lb, rank, poison, &pad), 0);
    const size_t es = opp_dtype_size(lb->dtype);
    void *gpu_y = malloc((pad.y_elems + 1) * es);
    assert_non_null(gpu_y);
    opp_ref_attention24_tensors_t t = opp_lb_padded_tensors(&pad);
    assert_opp_ok(opp_ref_attention24(&pad.desc, &t));
    t.y = gpu_y;
    const uint64_t budget = chunk_budget(&pad.desc, chunk_mode);
    opp__a24g_set_budget_elems(budget);
    const opp_status_t st = opp_a24g_run_host(g_ref, &pad.desc, &t, &g_ws, g_stream);
    opp__a24g_set_budget_elems(0);
    assert_opp_ok(st);
    const size_t n = (size_t)lb->total_q * (size_t)lb->num_heads * (size_t)lb->v_head_size;
    void *want = malloc((n + 1) * es), *got = malloc((n + 1) * es);
    assert_true(want != NULL && got != NULL);
    opp_lb_padded_valid_rows(lb, &pad, pad.y, want);
    opp_lb_padded_valid_rows(lb, &pad, gpu_y, got);
    opp_cmp_stats_t cs = {0, 0, 0, 0};
    const int f32 = lb->dtype == OPP_DTYPE_F32;
    const size_t bad = opp_cmp(got, want, n, lb->dtype, !f32, 1, what, 5, &cs);
    if (bad != 0) {
        print_error("L3 %s (rank %d, %s padding, chunk mode %d): %zu of %zu elements differ%s\n",
                    what, (int)rank, poison ? "NaN" : "finite", chunk_mode, bad, n,
                    f32 ? " by more than 1 ulp" : "");
    }
    assert_int_equal(bad, 0);
    s->runs++;
    s->chunked += budget > 0;
    if (f32) {
        s->f32_elems += n;
        s->f32_flips += cs.compared - cs.identical;
    } else {
        s->exact_elems += n;
    }
    free(want);
    free(got);
    free(gpu_y);
    opp_lb_padded_free(&pad);
}

/* L3: the GPU reference's valid rows equal the CPU padded reference's on
 * generated batches: bit for bit for f16/bf16, within 1 ulp for f32. */
static void test_gpu_ref_l3_generated_batches_match_cpu(void **state) {
    (void)state;
    OPP_TEST_REQUIRE_GPU();
    static const int32_t ratios[6] = {1, 2, 4, 8, 16, 32};
    static const int32_t sizes[7] = {32, 64, 80, 96, 128, 160, 256};
    static const opp_dtype_t dtypes[3] = {OPP_DTYPE_F32, OPP_DTYPE_F16, OPP_DTYPE_BF16};
    const long batches = env_long("OPP_L3_BATCHES", 240);
    const uint64_t seed = (uint64_t)env_long("OPP_L3_SEED", 20261203);
    l3_stats_t s;
    memset(&s, 0, sizeof(s));
    for (long i = 0; i < batches; ++i) {
        uint64_t st = seed + (uint64_t)i * 7919u;
        opp_lb_spec_t spec;
        opp_lb_spec_random(&spec);
        spec.dtype = dtypes[i % 3];
        spec.kv_num_heads = 1 + (int32_t)(opp_rng_u64(&st) % 2);
        spec.num_heads = spec.kv_num_heads * pick(&st, ratios, 6);
        spec.head_size = pick(&st, sizes, 7);
        spec.v_head_size = opp_rng_u64(&st) % 4 == 0 ? pick(&st, sizes, 7) : spec.head_size;
        opp_lb_t lb;
        assert_int_equal(opp_lb_generate(&spec, opp_rng_u64(&st), &lb), 0);
        char what[512];
        opp_lb_describe(&lb, what, sizeof(what));
        for (int32_t rank = 3; rank <= 4; ++rank) {
            for (int p = 0; p < 2; ++p) {
                l3_variant(&lb, rank, (opp_lb_poison_t)p, (int)((i + rank + p) % 3), what, &s);
            }
        }
        opp_lb_free(&lb);
    }
    printf("L3 vs CPU padded reference: %ld batches, %zu runs (%zu chunked): f16/bf16 %zu valid "
           "elements bit-identical; f32 %zu of %zu valid elements differ by 1 ulp "
           "(flip rate %.3g)\n",
           batches, s.runs, s.chunked, s.exact_elems, s.f32_flips, s.f32_elems,
           s.f32_elems ? (double)s.f32_flips / (double)s.f32_elems : 0.0);
}

/* The full operator on random descriptors (masks, past/present, nonpad,
 * qk_matmul_output modes, 3D/4D, empty sizes): every output on every row
 * equals the CPU reference's (f32 within 1 ulp). */
static void test_gpu_ref_random_operator_cases_match_cpu(void **state) {
    (void)state;
    OPP_TEST_REQUIRE_GPU();
    const long count = env_long("OPP_L3_RANDOM", 300);
    opp_a24g_cases_result_t r;
    opp_a24g_random_cases(count, (uint64_t)env_long("OPP_L3_SEED", 20261203), g_ref, &g_ws,
                          g_stream, &r);
    printf("random operator cases: %d run, %d pass, %d outputs outside the rule; f32: %zu of %zu "
           "elements flipped by 1 ulp\n",
           r.cases, r.identical, r.failed, r.f32_flips, r.f32_elems);
    assert_int_equal(r.failed, 0);
}

// --- ONNX cases

/* ONNX's 66 conformance cases: Y and every optional output (present_*,
 * qk_matmul_output) equal the expected outputs (f32 within 1 ulp). */
static void test_gpu_ref_conformance_cases(void **state) {
    (void)state;
    OPP_TEST_REQUIRE_GPU();
    opp_a24g_cases_result_t r;
    opp_a24g_run_cases("OPP_ONNX_CONFORMANCE_DIR", "testdata/onnx-attention-conformance", 66, g_ref,
                       &g_ws, g_stream, &r);
    assert_int_equal(r.failed, 0);
}

/* The regenerated golden cases: every Y row (valid and padded) equals the
 * golden (f32 within 1 ulp). */
static void test_gpu_ref_golden_cases(void **state) {
    (void)state;
    OPP_TEST_REQUIRE_GPU();
    opp_a24g_cases_result_t r;
    opp_a24g_run_cases("OPP_GOLDEN_DIR", "testdata/cases", 20, g_ref, &g_ws, g_stream, &r);
    assert_int_equal(r.failed, 0);
}

// --- errors

/* A small case of generated batch 1 in 4D (finite padding). */
static void small_padded(opp_lb_t *lb, opp_lb_padded_t *pad) {
    static const int32_t lq[2] = {3, 5}, lkv[2] = {4, 6};
    assert_int_equal(
        opp_lb_from_lengths(lb, OPP_DTYPE_F16, 2, lq, lkv, 4, 2, 64, 64, 0.0f, 1, 0.0f, 11u), 0);
    assert_int_equal(opp_lb_to_padded(lb, 4, OPP_LB_POISON_FINITE, pad), 0);
}

/* A nonpad value outside 0..S_kv is BAD_PARAM_NONPAD naming index and value. */
static void test_gpu_ref_rejects_nonpad_out_of_range(void **state) {
    (void)state;
    OPP_TEST_REQUIRE_GPU();
    opp_lb_t lb;
    opp_lb_padded_t pad;
    small_padded(&lb, &pad);
    opp_ref_attention24_tensors_t t = opp_lb_padded_tensors(&pad);
    pad.nonpad[1] = pad.desc.kv_seqlen + 1;
    assert_opp_status(opp_a24g_run_host(g_ref, &pad.desc, &t, &g_ws, g_stream),
                      OPP_STATUS_BAD_PARAM_NONPAD, "nonpad_kv_seqlen[1] = 7");
    pad.nonpad[1] = -1;
    assert_opp_status(opp_a24g_run_host(g_ref, &pad.desc, &t, &g_ws, g_stream),
                      OPP_STATUS_BAD_PARAM_NONPAD, "nonpad_kv_seqlen[1] = -1");
    opp_lb_padded_free(&pad);
    opp_lb_free(&lb);
}

/* Too small, NULL or misaligned workspaces are rejected before any work. */
static void test_gpu_ref_rejects_bad_workspace(void **state) {
    (void)state;
    OPP_TEST_REQUIRE_GPU();
    opp_lb_t lb;
    opp_lb_padded_t pad;
    small_padded(&lb, &pad);
    size_t need = 0;
    assert_opp_ok(opp_ref_gpu_attention24_workspace_size(&pad.desc, &need));
    char *ws = opp_test_gpu_alloc(need + 256);
    opp_ref_attention24_tensors_t t;
    memset(&t, 0, sizeof(t));
    t.q = t.k = t.v = ws; /* never read: the call fails first */
    t.y = ws;
    t.nonpad_kv_seqlen = (const int64_t *)ws;
    char want[128];
    snprintf(want, sizeof(want), "workspace_bytes = %zu < %zu needed", need - 1, need);
    assert_opp_status(opp_ref_gpu_attention24(g_ref, &pad.desc, &t, ws, need - 1, g_stream),
                      OPP_STATUS_BAD_PARAM_WORKSPACE, want);
    assert_opp_status(opp_ref_gpu_attention24(g_ref, &pad.desc, &t, NULL, need, g_stream),
                      OPP_STATUS_BAD_PARAM_NULL_POINTER, "workspace is NULL");
    assert_opp_status(opp_ref_gpu_attention24(g_ref, &pad.desc, &t, ws + 8, need, g_stream),
                      OPP_STATUS_BAD_PARAM_MISALIGNED, "256-byte aligned");
    t.v = NULL;
    assert_opp_status(opp_ref_gpu_attention24(g_ref, &pad.desc, &t, ws, need, g_stream),
                      OPP_STATUS_BAD_PARAM_NULL_POINTER, "V is NULL");
    assert_opp_status(opp_ref_gpu_attention24(NULL, &pad.desc, &t, ws, need, g_stream),
                      OPP_STATUS_BAD_PARAM_NULL_POINTER, "ref is NULL");
    opp_test_gpu_free(ws);
    opp_lb_padded_free(&pad);
    opp_lb_free(&lb);
}

// --- CPU-runnable

/* Without a device, create says NO_DEVICE (with one, it succeeds). */
static void test_gpu_ref_create_reports_no_device(void **state) {
    (void)state;
    opp_ref_gpu_t *ref = (opp_ref_gpu_t *)&ref;
    if (opp_test_gpu_count() == 0) {
        assert_opp_status(opp_ref_gpu_create(&ref), OPP_STATUS_NO_DEVICE, "no CUDA device");
        assert_null(ref);
    } else {
        assert_opp_ok(opp_ref_gpu_create(&ref));
        assert_non_null(ref);
    }
    opp_ref_gpu_destroy(ref);
    opp_ref_gpu_destroy(NULL);
    assert_opp_status(opp_ref_gpu_create(NULL), OPP_STATUS_BAD_PARAM_NULL_POINTER, "ref is NULL");
}

/* A failed cuBLAS call is CUBLAS_ERROR, its message naming the call and
 * cuBLAS's status (the path of every cuBLAS call of the reference). */
static void test_gpu_ref_cublas_failure_is_cublas_error(void **state) {
    (void)state;
    assert_opp_status(opp__a24g_cublas_error(CUBLAS_STATUS_EXECUTION_FAILED, "cublasGemmEx(x)"),
                      OPP_STATUS_CUBLAS_ERROR, NULL);
    assert_string_equal(opp_last_error_message(),
                        "cublasGemmEx(x): CUBLAS_STATUS_EXECUTION_FAILED");
    assert_opp_status(opp__a24g_cublas_error(CUBLAS_STATUS_NOT_INITIALIZED, "cublasCreate"),
                      OPP_STATUS_CUBLAS_ERROR, "cublasCreate: CUBLAS_STATUS_NOT_INITIALIZED");
}

/* The padded Attention-24 descriptor of a workload: S = the longest sequence. */
static void workload_desc(opp_dtype_t dtype, int32_t batch, int32_t hq, int32_t hkv, int32_t d,
                          int32_t max_lq, int32_t max_lkv, int32_t causal, float softcap,
                          opp_ref_attention24_desc_t *a) {
    opp_ref_attention24_desc_init(a);
    a->dtype = dtype;
    a->batch = batch;
    a->q_num_heads = hq;
    a->kv_num_heads = hkv;
    a->q_seqlen = max_lq;
    a->kv_seqlen = max_lkv;
    a->head_size = a->v_head_size = d;
    a->is_causal = causal;
    a->softcap = softcap;
    a->has_nonpad = 1;
}

/* Workspace bytes of a; fails the test above the documented bound. */
static size_t workload_bytes(const char *name, const opp_ref_attention24_desc_t *a) {
    const size_t bound = ((size_t)2 << 30) + 1792;
    size_t bytes = 0;
    assert_opp_ok(opp_ref_gpu_attention24_workspace_size(a, &bytes));
    printf("workspace %-24s B %3d S_q %5d S_kv %5d: %zu bytes (%.1f MiB)\n", name, (int)a->batch,
           (int)a->q_seqlen, (int)a->kv_seqlen, bytes, (double)bytes / (1 << 20));
    assert_true(bytes <= bound);
    return bytes;
}

static int32_t max_of(const int32_t *v, int32_t n) {
    int32_t m = 0;
    for (int32_t i = 0; i < n; ++i) {
        m = v[i] > m ? v[i] : m;
    }
    return m;
}

/* The workspace of every workload of ../shared/bench/workloads.json (padded:
 * S = the longest sequence, nonpad = the lengths; the shapes are copied
 * below, and $OPP_WORKLOADS, when set, names the file to check as well)
 * stays below the bound documented in reference/attention24_gpu.c:
 * 2 GiB + 1792 bytes. */
static void test_gpu_ref_workspace_size_of_workloads_within_bound(void **state) {
    (void)state;
    static const struct {
        const char *name;
        opp_dtype_t dtype;
        int32_t batch, hq, hkv, d, max_lq, max_lkv, causal;
        float softcap;
    } w[7] = {
        {"prefill_gqa_causal_bf16", OPP_DTYPE_BF16, 16, 32, 8, 128, 3825, 3825, 1, 0.0f},
        {"encoder_mha_f16", OPP_DTYPE_F16, 64, 16, 16, 64, 1003, 1003, 0, 0.0f},
        {"short_many_causal_bf16", OPP_DTYPE_BF16, 128, 32, 8, 128, 230, 230, 1, 0.0f},
        {"decode_gqa_bf16", OPP_DTYPE_BF16, 64, 32, 8, 128, 1, 8187, 1, 0.0f},
        {"long_causal_bf16", OPP_DTYPE_BF16, 1, 32, 8, 128, 16384, 16384, 1, 0.0f},
        {"prefill_f32", OPP_DTYPE_F32, 8, 8, 8, 64, 1768, 1768, 1, 0.0f},
        {"softcap_hd256_bf16", OPP_DTYPE_BF16, 8, 16, 8, 256, 3008, 3008, 1, 50.0f},
    };
    for (int i = 0; i < 7; ++i) {
        opp_ref_attention24_desc_t a;
        workload_desc(w[i].dtype, w[i].batch, w[i].hq, w[i].hkv, w[i].d, w[i].max_lq, w[i].max_lkv,
                      w[i].causal, w[i].softcap, &a);
        assert_true(workload_bytes(w[i].name, &a) > ((size_t)1 << 20));
    }
    const char *path = getenv("OPP_WORKLOADS");
    if (path == NULL || *path == '\0') {
        return;
    }
    opp_workload_set_t set;
    char err[1024];
    if (opp_workloads_load(path, &set, err, sizeof(err)) != 0) {
        fail_msg("OPP_WORKLOADS: %s", err);
    }
    for (int i = 0; i < set.count; ++i) {
        const opp_workload_t *x = &set.items[i];
        opp_ref_attention24_desc_t a;
        workload_desc(x->dtype, x->batch, x->heads, x->kv_heads, x->head_size,
                      max_of(x->lq, x->batch), max_of(x->lkv, x->batch), x->causal, x->softcap, &a);
        (void)workload_bytes(x->name, &a);
    }
    opp_workloads_free(&set);
}

/* The benchmark workload shapes run at full size within the planned
 * workspace (chunked), with the expected Y; $OPP_WORKLOADS names the file
 * (skipped when unset: the shapes need ~3 GiB of device memory). */
static void test_gpu_ref_workload_shapes_run(void **state) {
    (void)state;
    OPP_TEST_REQUIRE_GPU();
    const char *path = getenv("OPP_WORKLOADS");
    if (path == NULL || *path == '\0') {
        skip();
    }
    opp_workload_set_t set;
    char err[1024];
    if (opp_workloads_load(path, &set, err, sizeof(err)) != 0) {
        fail_msg("OPP_WORKLOADS: %s", err);
    }
    for (int i = 0; i < set.count; ++i) {
        const opp_workload_t *x = &set.items[i];
        opp_ref_attention24_desc_t a;
        workload_desc(x->dtype, x->batch, x->heads, x->kv_heads, x->head_size,
                      max_of(x->lq, x->batch), max_of(x->lkv, x->batch), x->causal, x->softcap, &a);
        float ms = 0.0f;
        size_t ws_bytes = 0;
        const size_t bad = opp_a24g_run_pattern(g_ref, &a, g_stream, &ms, &ws_bytes);
        printf("workload %-24s ws %7.1f MiB: %9.1f ms, %zu Y elements != V\n", x->name,
               (double)ws_bytes / (1 << 20), (double)ms, bad);
        assert_int_equal(bad, 0);
    }
    opp_workloads_free(&set);
}

/* The workspace query validates the descriptor and its pointer. */
static void test_gpu_ref_workspace_size_rejects_bad_desc(void **state) {
    (void)state;
    opp_ref_attention24_desc_t a;
    opp_ref_attention24_desc_init(&a);
    a.dtype = OPP_DTYPE_F16;
    a.batch = 1;
    a.q_num_heads = 6;
    a.kv_num_heads = 4;
    a.q_seqlen = a.kv_seqlen = 8;
    a.head_size = a.v_head_size = 64;
    size_t bytes = 7;
    assert_opp_status(opp_ref_gpu_attention24_workspace_size(&a, &bytes),
                      OPP_STATUS_BAD_PARAM_KV_HEADS_NOT_DIVIDING, "not a multiple");
    assert_int_equal(bytes, 0);
    a.kv_num_heads = 2;
    assert_opp_status(opp_ref_gpu_attention24_workspace_size(&a, NULL),
                      OPP_STATUS_BAD_PARAM_NULL_POINTER, "workspace_bytes is NULL");
    assert_opp_ok(opp_ref_gpu_attention24_workspace_size(&a, &bytes));
    assert_int_equal(bytes % 256, 0);
    /* S_q = 0: only the nonpad report region */
    a.q_seqlen = 0;
    assert_opp_ok(opp_ref_gpu_attention24_workspace_size(&a, &bytes));
    assert_int_equal(bytes, 256);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gpu_ref_create_reports_no_device),
        cmocka_unit_test(test_gpu_ref_cublas_failure_is_cublas_error),
        cmocka_unit_test(test_gpu_ref_workspace_size_of_workloads_within_bound),
        cmocka_unit_test(test_gpu_ref_workspace_size_rejects_bad_desc),
        cmocka_unit_test(test_gpu_ref_rejects_nonpad_out_of_range),
        cmocka_unit_test(test_gpu_ref_rejects_bad_workspace),
        cmocka_unit_test(test_gpu_ref_l3_generated_batches_match_cpu),
        cmocka_unit_test(test_gpu_ref_random_operator_cases_match_cpu),
        cmocka_unit_test(test_gpu_ref_conformance_cases),
        cmocka_unit_test(test_gpu_ref_golden_cases),
        cmocka_unit_test(test_gpu_ref_workload_shapes_run),
    };
    return cmocka_run_group_tests_name("attention24_gpu", tests, group_setup, group_teardown);
}
