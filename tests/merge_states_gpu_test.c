/*
 * merge_states_gpu_test.c - GPU tests of opp_merge_attention_states():
 *
 *   states_out [n, rows, Hq, Dv], states_lse [n, Hq, rows] -> out [rows, Hq, Dv],
 *   lse [Hq, rows]
 *
 * (a) the kernel against the double CPU reference (reference/
 *     merge_states_ref.h) on random states of every dtype (keyless states
 *     holding NaN/inf, keyless rows, float32-underflowing weights; vector
 *     and scalar column paths; more units than the grid), out and LSE,
 *     without LSE, repeated runs bit for bit, a CUDA-graph replay;
 * (b) against the EXACT path: the keys of random non-causal batches split
 *     into 2-3 disjoint contiguous ranges per sequence (some empty), each
 *     part run through opp_packed_attention_fwd_lse with OPP_ALGO_EXACT,
 *     the parts merged, compared with EXACT on all keys; a batch with
 *     keyless sequences (out +0, lse -inf bit for bit).
 * The bounds are stated beside each comparison. Outputs are NaN-poisoned
 * before each run, so an element the kernel misses fails.
 * Skips without a device. Run on the GPU machine (tools/gpu_stage.sh).
 */
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/gpu_buffer.h"
#include "harness/gpu_packed.h"
#include "harness/logical_batch.h"
#include "harness/rng.h"
#include "numerics/fp_convert.h"
#include "reference/merge_states_ref.h"
#include "tests/exact_gpu_util.h"
#include "tests/gpu_util.h"
#include "tests/merge_states_util.h"
#include "tests/test_util.h"

static cudaStream_t g_stream;

static void cuda_ok(cudaError_t err, const char *what) {
    if (err != cudaSuccess) {
        fail_msg("%s: %s (%s)", what, cudaGetErrorName(err), cudaGetErrorString(err));
    }
}

// --- bounds

/* Kernel (float32) vs reference (double), per out element. With k the
 * states summed and O = max |o_i| over them: the kernel's float32 value
 * differs from the exact merge of the stored inputs by
 *   delta <= 2^-24 O ((|d_i| + 5) w_i / W for each weight: the rounding of
 *            d_i = lse_i - M and expf's 2 ulps; w |d| <= 1/e, so
 *            <= 0.37 k + 5) + k (the fmaf sum) + k (the weight sum) + 1
 *            (the division)  <=  2^-24 (4k + 8) O;
 * the reference's double value by < 2^-48 O. Each is rounded once to the
 * storage dtype (unit roundoff u, smallest subnormal s), so
 *   |got - want| <= 2u (1 + u) |want| + 2 delta + s. */
static double kernel_out_bound(const opp_test_merge_t *m, int64_t t, int32_t h, int32_t c,
                               double got, double want) {
    (void)got;
    opp_test_merge_line_t f;
    opp_test_merge_line_facts(m, t, h, &f);
    const double u = opp_test_unit_roundoff(m->dtype);
    const double delta =
        0x1p-24 * (4.0 * f.contributing + 8.0) * opp_test_merge_max_abs_o(m, t, h, c);
    return 2.0 * u * (1.0 + u) * fabs(want) + 2.0 * delta + opp_test_min_subnormal(m->dtype);
}

/* LSE: M + logf(W) against M + log(W) in double, both rounded to float32:
 * W's relative error <= 2^-24 (0.37k + 4 + k), logf's ulp <= 2^-23 log k,
 * the final roundings 2^-24 (|got| + |want|):
 *   |got - want| <= 2^-24 (|got| + |want| + 2k + 8). */
static double kernel_lse_bound(const opp_test_merge_t *m, int64_t t, int32_t h, int32_t c,
                               double got, double want) {
    (void)c;
    opp_test_merge_line_t f;
    opp_test_merge_line_facts(m, t, h, &f);
    return 0x1p-24 * (fabs(got) + fabs(want) + 2.0 * f.contributing + 8.0);
}

/* Merged parts vs EXACT on all keys. The parts are EXACT results rounded
 * once to the storage dtype (|o_i - true o_i| <= u |o_i| + s/2) and their
 * LSEs to float32 (|l_i - true l_i| <= 2^-24 |l_i|, which moves the
 * weights w_i / W by <= 2 * 2^-24 max |l_i| relative); the kernel adds its
 * float32 delta (above) and one rounding (u |got|); EXACT on all keys is
 * the true value rounded once (u |want| + s/2):
 *   |got - want| <= u (O + |got| + |want|) + 2^-24 (2 max|l| + 4k + 8) O + 2s. */
static double exact_out_bound(const opp_test_merge_t *m, int64_t t, int32_t h, int32_t c,
                              double got, double want) {
    opp_test_merge_line_t f;
    opp_test_merge_line_facts(m, t, h, &f);
    const double u = opp_test_unit_roundoff(m->dtype);
    const double o = opp_test_merge_max_abs_o(m, t, h, c);
    return u * (o + fabs(got) + fabs(want)) +
           0x1p-24 * (2.0 * f.max_abs_lse + 4.0 * f.contributing + 8.0) * o +
           2.0 * opp_test_min_subnormal(m->dtype);
}

/* LSE of the merged parts vs EXACT on all keys: the parts' LSE roundings
 * move the result by <= 2^-24 max |l_i|, the rest as kernel_lse_bound. */
static double exact_lse_bound(const opp_test_merge_t *m, int64_t t, int32_t h, int32_t c,
                              double got, double want) {
    (void)c;
    opp_test_merge_line_t f;
    opp_test_merge_line_facts(m, t, h, &f);
    return 0x1p-24 * (f.max_abs_lse + fabs(got) + fabs(want) + 2.0 * f.contributing + 8.0);
}

// --- runs

/* The merge of m on the device (outputs NaN-poisoned first): host copies
 * of out and (with_lse) lse, malloc'ed; *lse = NULL without. */
static void gpu_merge(const opp_test_merge_t *m, int with_lse, void **out, float **lse) {
    const size_t es = opp_dtype_size(m->dtype);
    const size_t oe = opp_test_merge_out_elems(m), le = opp_test_merge_lse_elems(m);
    void *so = opp_hgpu_upload(m->states_out, oe * (size_t)m->n * es);
    void *sl = opp_hgpu_upload(m->states_lse, le * (size_t)m->n * sizeof(float));
    void *d_out = opp_hgpu_alloc_poisoned(oe, m->dtype, OPP_HGPU_POISON_NAN);
    float *d_lse =
        with_lse ? opp_hgpu_alloc_poisoned(le, OPP_DTYPE_F32, OPP_HGPU_POISON_NAN) : NULL;
    assert_opp_ok(opp_merge_attention_states(m->dtype, m->n, m->rows, m->hq, m->dv, so, sl, d_out,
                                             d_lse, g_stream));
    cuda_ok(cudaStreamSynchronize(g_stream), "cudaStreamSynchronize");
    *out = malloc(oe * es + 1);
    assert_non_null(*out);
    opp_test_d2h(*out, d_out, oe * es);
    *lse = NULL;
    if (with_lse) {
        *lse = malloc(le * sizeof(float) + 1);
        assert_non_null(*lse);
        opp_test_d2h(*lse, d_lse, le * sizeof(float));
    }
    const void *all[] = {so, sl, d_out, d_lse};
    cuda_ok(opp_hgpu_free_all(all, 4), "cudaFree");
}

/* The CPU reference of m (host, malloc'ed). */
static void ref_merge(const opp_test_merge_t *m, void **out, float **lse) {
    const size_t oe = opp_test_merge_out_elems(m), le = opp_test_merge_lse_elems(m);
    *out = malloc(oe * opp_dtype_size(m->dtype) + 1);
    *lse = malloc(le * sizeof(float) + 1);
    assert_non_null(*out);
    assert_non_null(*lse);
    assert_opp_ok(opp_ref_merge_attention_states(m->dtype, m->n, m->rows, m->hq, m->dv,
                                                 m->states_out, m->states_lse, *out, *lse));
}

/* Kernel vs reference on m within the kernel bounds; without lse_out the
 * same out bits; a second run the same bits. */
static void check_kernel_case(const opp_test_merge_t *m, const char *what) {
    void *want, *got, *got2, *got_nolse;
    float *want_lse, *got_lse, *got2_lse, *none;
    ref_merge(m, &want, &want_lse);
    gpu_merge(m, 1, &got, &got_lse);
    gpu_merge(m, 0, &got_nolse, &none);
    gpu_merge(m, 1, &got2, &got2_lse);
    const size_t oe = opp_test_merge_out_elems(m), le = opp_test_merge_lse_elems(m);
    assert_int_equal(opp_test_merge_compare_out(m, got, want, kernel_out_bound, what), 0);
    assert_int_equal(opp_test_merge_compare_lse(m, got_lse, want_lse, kernel_lse_bound, what), 0);
    assert_int_equal(opp_test_bits_equal(got_nolse, got, oe, m->dtype, "out without lse"), 0);
    assert_int_equal(opp_test_bits_equal(got2, got, oe, m->dtype, "repeated out"), 0);
    assert_int_equal(opp_test_bits_equal(got2_lse, got_lse, le, OPP_DTYPE_F32, "repeated lse"), 0);
    free(want);
    free(want_lse);
    free(got);
    free(got_lse);
    free(got2);
    free(got2_lse);
    free(got_nolse);
}

// --- (a) kernel vs CPU reference

/* Random states (merge_states_util.h) of every dtype, 1-8 states, head
 * sizes that take the 16-byte and the one-element column paths, match the
 * reference within the kernel bounds; no LSE and repeated runs agree bit
 * for bit. */
static void test_merge_kernel_matches_reference(void **state) {
    (void)state;
    OPP_TEST_REQUIRE_GPU();
    static const int32_t dvs[12] = {1, 2, 3, 5, 8, 16, 40, 64, 72, 128, 256, 512};
    const opp_dtype_t dts[3] = {OPP_DTYPE_F32, OPP_DTYPE_F16, OPP_DTYPE_BF16};
    uint64_t st = (uint64_t)opp_test_env_long("OPP_GPU_TEST_SEED", 2026);
    const long cases = opp_test_env_long("OPP_GPU_TEST_BATCHES", 60) / 3 + 1;
    for (int d = 0; d < 3; ++d) {
        for (long k = 0; k < cases; ++k) {
            opp_test_merge_t m;
            const int32_t n = opp_rng_int(&st, 1, 8);
            const int64_t rows = opp_rng_int(&st, 1, 70);
            const int32_t hq = opp_rng_int(&st, 1, 4);
            const int32_t dv = dvs[opp_rng_int(&st, 0, 11)];
            opp_test_merge_random(&m, dts[d], n, rows, hq, dv, opp_rng_u64(&st));
            char what[96];
            snprintf(what, sizeof what, "%s n=%d rows=%lld Hq=%d Dv=%d", opp_dtype_name(dts[d]), n,
                     (long long)rows, hq, dv);
            check_kernel_case(&m, what);
            opp_test_merge_free(&m);
        }
    }
}

/* More units (19.2M lines of one column) than the 65536 x 256 threads of
 * the grid: the grid-stride loop reaches every line. */
static void test_merge_kernel_covers_more_units_than_threads(void **state) {
    (void)state;
    OPP_TEST_REQUIRE_GPU();
    opp_test_merge_t m;
    opp_test_merge_random(&m, OPP_DTYPE_F16, 2, 600000, 32, 1, 99);
    check_kernel_case(&m, "f16 n=2 rows=600000 Hq=32 Dv=1");
    opp_test_merge_free(&m);
}

/* A NaN or +inf LSE makes its line NaN (out and lse); a NaN o value with
 * weight > 0 reaches its element; f32 on the 16-byte path (Dv = 4). */
static void test_merge_kernel_undefined_lse_is_nan(void **state) {
    (void)state;
    OPP_TEST_REQUIRE_GPU();
    /* n = 2, rows = 3, Hq = 1, Dv = 4 */
    float so[24] = {1,  2,  3,  4,  5,  6,  7,  8,  NAN, 10, 11, 12,
                    13, 14, 15, 16, 17, 18, 19, 20, 21,  22, 23, 24};
    float sl[6] = {0.5f, NAN, 1.0f, 0.25f, 2.0f, INFINITY};
    opp_test_merge_t m = {.dtype = OPP_DTYPE_F32,
                          .n = 2,
                          .rows = 3,
                          .hq = 1,
                          .dv = 4,
                          .states_out = so,
                          .states_lse = sl};
    check_kernel_case(&m, "f32 NaN/+inf lse");
    sl[5] = 1.0f; /* row 2: both weights 1, state 0 holds a NaN in column 0 */
    void *got;
    float *got_lse;
    gpu_merge(&m, 1, &got, &got_lse);
    const float *o = got;
    /* (10 + 22) / 2, (11 + 23) / 2, (12 + 24) / 2: exact */
    assert_true(isnan(o[8]) && o[9] == 16.0f && o[10] == 17.0f && o[11] == 18.0f);
    assert_true(isnan(o[4]) && isnan(got_lse[1]));
    free(got);
    free(got_lse);
}

/* The merge captured in a CUDA graph and replayed twice writes the bits of
 * a direct run. */
static void test_merge_graph_replay_equals_direct_run(void **state) {
    (void)state;
    OPP_TEST_REQUIRE_GPU();
    opp_test_merge_t m;
    opp_test_merge_random(&m, OPP_DTYPE_BF16, 3, 37, 4, 128, 5);
    void *direct;
    float *direct_lse;
    gpu_merge(&m, 1, &direct, &direct_lse);
    const size_t oe = opp_test_merge_out_elems(&m), le = opp_test_merge_lse_elems(&m);
    void *so = opp_hgpu_upload(m.states_out, oe * 3 * 2);
    void *sl = opp_hgpu_upload(m.states_lse, le * 3 * sizeof(float));
    void *d_out = opp_hgpu_alloc_poisoned(oe, m.dtype, OPP_HGPU_POISON_NAN);
    float *d_lse = opp_hgpu_alloc_poisoned(le, OPP_DTYPE_F32, OPP_HGPU_POISON_NAN);
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    cuda_ok(cudaStreamBeginCapture(g_stream, cudaStreamCaptureModeGlobal), "BeginCapture");
    const opp_status_t st =
        opp_merge_attention_states(m.dtype, 3, m.rows, m.hq, m.dv, so, sl, d_out, d_lse, g_stream);
    cuda_ok(cudaStreamEndCapture(g_stream, &graph), "EndCapture");
    assert_opp_ok(st);
    cuda_ok(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
    void *got = malloc(oe * 2);
    float *got_lse = malloc(le * sizeof(float));
    assert_non_null(got);
    assert_non_null(got_lse);
    for (int r = 0; r < 2; ++r) {
        opp_hgpu_poison(d_out, oe, m.dtype, OPP_HGPU_POISON_NAN);
        opp_hgpu_poison(d_lse, le, OPP_DTYPE_F32, OPP_HGPU_POISON_NAN);
        cuda_ok(cudaGraphLaunch(exec, g_stream), "cudaGraphLaunch");
        cuda_ok(cudaStreamSynchronize(g_stream), "cudaStreamSynchronize");
        opp_test_d2h(got, d_out, oe * 2);
        opp_test_d2h(got_lse, d_lse, le * sizeof(float));
        assert_int_equal(opp_test_bits_equal(got, direct, oe, m.dtype, "replayed out"), 0);
        assert_int_equal(
            opp_test_bits_equal(got_lse, direct_lse, le, OPP_DTYPE_F32, "replayed lse"), 0);
    }
    cuda_ok(cudaGraphExecDestroy(exec), "cudaGraphExecDestroy");
    cuda_ok(cudaGraphDestroy(graph), "cudaGraphDestroy");
    const void *all[] = {so, sl, d_out, d_lse};
    cuda_ok(opp_hgpu_free_all(all, 4), "cudaFree");
    free(got);
    free(got_lse);
    free(direct);
    free(direct_lse);
    opp_test_merge_free(&m);
}

// --- (b) against the EXACT path

/* EXACT on lb with LSE: host out [total_q, Hq, Dv] and lse [Hq, total_q]
 * written at out / lse. */
static void exact_run(const opp_lb_t *lb, void *out, float *lse) {
    opp_test_packed_dev_t dev;
    opp_test_packed_upload(lb, &dev);
    const size_t le = (size_t)lb->total_q * (size_t)lb->num_heads;
    float *d_lse = opp_hgpu_alloc_poisoned(le, OPP_DTYPE_F32, OPP_HGPU_POISON_NAN);
    opp_hgpu_packed_call_t call = {.dev = &dev, .stream = g_stream, .lse = d_lse};
    opp_lb_packed_desc(lb, &call.desc);
    assert_int_equal(call.desc.algo, OPP_ALGO_EXACT);
    assert_opp_ok(opp_hgpu_packed_run(&call));
    cuda_ok(cudaStreamSynchronize(g_stream), "cudaStreamSynchronize");
    assert_opp_ok(opp_attention_device_status(dev.workspace, dev.workspace_bytes, g_stream));
    opp_test_d2h(out, dev.out, dev.out_bytes);
    opp_test_d2h(lse, d_lse, le * sizeof(float));
    cuda_ok(opp_hgpu_free(d_lse), "cudaFree");
    opp_test_packed_free(&dev);
}

/* Part p of lb: the same queries against keys [cut[b][p], cut[b][p+1]) of
 * each sequence b (cut: [B][nparts + 1], host). */
static void make_part(const opp_lb_t *lb, const int32_t *cut, int32_t nparts, int32_t p,
                      opp_lb_t *part) {
    int32_t *lkv = malloc(sizeof(int32_t) * (size_t)lb->batch);
    assert_non_null(lkv);
    for (int32_t b = 0; b < lb->batch; ++b) {
        lkv[b] = cut[b * (nparts + 1) + p + 1] - cut[b * (nparts + 1) + p];
    }
    assert_int_equal(opp_lb_from_lengths(part, lb->dtype, lb->batch, lb->lq, lkv, lb->num_heads,
                                         lb->kv_num_heads, lb->head_size, lb->v_head_size,
                                         lb->scale, 0, lb->softcap, 1),
                     0);
    const size_t es = opp_dtype_size(lb->dtype);
    memcpy(part->q, lb->q, (size_t)lb->total_q * lb->num_heads * lb->head_size * es);
    const size_t krow = (size_t)lb->kv_num_heads * lb->head_size * es;
    const size_t vrow = (size_t)lb->kv_num_heads * lb->v_head_size * es;
    for (int32_t b = 0; b < lb->batch; ++b) {
        const size_t src = (size_t)lb->cu_kv[b] + (size_t)cut[b * (nparts + 1) + p];
        memcpy((char *)part->k + (size_t)part->cu_kv[b] * krow, (const char *)lb->k + src * krow,
               (size_t)lkv[b] * krow);
        memcpy((char *)part->v + (size_t)part->cu_kv[b] * vrow, (const char *)lb->v + src * vrow,
               (size_t)lkv[b] * vrow);
    }
    free(lkv);
}

/* Splits lb's keys into nparts contiguous ranges per sequence (random
 * cuts, empty ranges allowed), runs EXACT on every part and on lb, merges
 * the parts on the GPU and compares with the exact-path bounds.
 * @return : the number of keyless (row, head) lines seen. */
static size_t check_split_against_exact(const opp_lb_t *lb, int32_t nparts, uint64_t seed) {
    uint64_t st = seed;
    int32_t *cut = malloc(sizeof(int32_t) * (size_t)lb->batch * (size_t)(nparts + 1));
    assert_non_null(cut);
    for (int32_t b = 0; b < lb->batch; ++b) {
        int32_t *c = cut + b * (nparts + 1);
        c[0] = 0;
        c[nparts] = lb->lkv[b];
        for (int32_t p = 1; p < nparts; ++p) { /* sorted draws in [c[p-1], L_kv] */
            c[p] = opp_rng_int(&st, c[p - 1], lb->lkv[b]);
        }
    }
    opp_test_merge_t m = {.dtype = lb->dtype,
                          .n = nparts,
                          .rows = lb->total_q,
                          .hq = lb->num_heads,
                          .dv = lb->v_head_size};
    const size_t es = opp_dtype_size(lb->dtype);
    const size_t oe = opp_test_merge_out_elems(&m), le = opp_test_merge_lse_elems(&m);
    m.states_out = malloc(oe * (size_t)nparts * es + 1);
    m.states_lse = malloc(le * (size_t)nparts * sizeof(float) + 1);
    void *want = malloc(oe * es + 1);
    float *want_lse = malloc(le * sizeof(float) + 1);
    assert_non_null(m.states_out);
    assert_non_null(m.states_lse);
    assert_non_null(want);
    assert_non_null(want_lse);
    for (int32_t p = 0; p < nparts; ++p) {
        opp_lb_t part;
        make_part(lb, cut, nparts, p, &part);
        exact_run(&part, (char *)m.states_out + (size_t)p * oe * es, m.states_lse + (size_t)p * le);
        opp_lb_free(&part);
    }
    exact_run(lb, want, want_lse);
    char what[256];
    opp_lb_describe(lb, what, sizeof what);
    size_t keyless = 0;
    if (m.rows > 0) {
        void *got;
        float *got_lse;
        gpu_merge(&m, 1, &got, &got_lse);
        assert_int_equal(opp_test_merge_compare_out(&m, got, want, exact_out_bound, what), 0);
        assert_int_equal(opp_test_merge_compare_lse(&m, got_lse, want_lse, exact_lse_bound, what),
                         0);
        for (size_t e = 0; e < le; ++e) {
            keyless += want_lse[e] == -INFINITY;
        }
        free(got);
        free(got_lse);
    }
    free(want);
    free(want_lse);
    free(cut);
    opp_test_merge_free(&m);
    return keyless;
}

/* Random non-causal batches of every dtype (GQA, head sizes, softcap and
 * scale as the generator draws them, lengths 0-150), keys split into 2 or
 * 3 parts: the merged parts equal EXACT on all keys within the bound. */
static void test_merge_of_split_keys_matches_exact(void **state) {
    (void)state;
    OPP_TEST_REQUIRE_GPU();
    const opp_dtype_t dts[3] = {OPP_DTYPE_F32, OPP_DTYPE_F16, OPP_DTYPE_BF16};
    const uint64_t seed = (uint64_t)opp_test_env_long("OPP_GPU_TEST_SEED", 2026);
    const long batches = opp_test_env_long("OPP_GPU_TEST_BATCHES", 60) / 6 + 1;
    for (int d = 0; d < 3; ++d) {
        for (long k = 0; k < batches; ++k) {
            opp_lb_spec_t spec;
            opp_lb_spec_random(&spec);
            spec.dtype = dts[d];
            spec.is_causal = 0;
            opp_lb_t lb;
            assert_int_equal(opp_lb_generate(&spec, seed * 1000u + (uint64_t)(d * 100 + k), &lb),
                             0);
            check_split_against_exact(&lb, 2 + (int32_t)(k % 2), seed + (uint64_t)k);
            opp_lb_free(&lb);
        }
    }
}

/* Sequences without keys (L_kv = 0) and parts without keys: keyless lines
 * merge to +0 and -inf, as EXACT writes them (compared bit for bit). */
static void test_merge_of_keyless_rows_is_zero(void **state) {
    (void)state;
    OPP_TEST_REQUIRE_GPU();
    const int32_t lq[4] = {3, 2, 4, 1};
    const int32_t lkv[4] = {5, 0, 70, 0};
    const opp_dtype_t dts[3] = {OPP_DTYPE_F32, OPP_DTYPE_F16, OPP_DTYPE_BF16};
    for (int d = 0; d < 3; ++d) {
        opp_lb_t lb;
        assert_int_equal(
            opp_lb_from_lengths(&lb, dts[d], 4, lq, lkv, 4, 2, 32, 40, 0.0f, 0, 0.0f, 31u + d), 0);
        const size_t keyless = check_split_against_exact(&lb, 3, 7u + (uint64_t)d);
        assert_true(keyless >= (size_t)(2 + 1) * 4); /* sequences 1 and 3: 3 rows x 4 heads */
        opp_lb_free(&lb);
    }
}

// --- group

static int group_setup(void **state) {
    (void)state;
    if (opp_test_gpu_count() > 0 && cudaStreamCreate(&g_stream) != cudaSuccess) {
        return -1;
    }
    return 0;
}

static int group_teardown(void **state) {
    (void)state;
    if (g_stream != NULL) {
        cudaStreamDestroy(g_stream);
    }
    return 0;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_merge_kernel_matches_reference),
        cmocka_unit_test(test_merge_kernel_covers_more_units_than_threads),
        cmocka_unit_test(test_merge_kernel_undefined_lse_is_nan),
        cmocka_unit_test(test_merge_graph_replay_equals_direct_run),
        cmocka_unit_test(test_merge_of_split_keys_matches_exact),
        cmocka_unit_test(test_merge_of_keyless_rows_is_zero),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
