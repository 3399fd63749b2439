/*
 * graph_replay_test.c - CUDA-graph replay with changing batches (DESIGN.md
 * section 5; lib/oppacked.h, opp_packed_attention_fwd): a serving engine
 * captures opp_packed_attention_fwd_lse once per batch-size bucket, with
 * the descriptor's totals as the capacity and max_seqlen as a loose bound,
 * and replays the graph with new cu_seqlens uploaded into the same device
 * buffers.
 *
 *   capacity: q [CAP_Q, Hq, D], k [CAP_KV, Hkv, D], v [CAP_KV, Hkv, Dv],
 *             out [CAP_Q, Hq, Dv], lse [Hq, CAP_Q] (CAP_Q = 640, CAP_KV =
 *             896 rows); every replay has NSEQ = 5 sequences
 *
 * For EXACT and FAST, each configuration captures one graph and replays it
 * OPP_GPU_TEST_REPLAYS times (default 60) with fresh cu_seqlens (random
 * lengths within the bounds, zero-length sequences, an all-empty batch, a
 * full one), out and lse poisoned before every replay. Each replay must be
 * bit-identical, out and lse, to
 *   (a) a direct (non-graph) run of the same capacity descriptor, whole
 *       buffers, and
 *   (b) a direct run of the same batch with tight totals (cu_seqlens[5])
 *       and tight max_seqlens, on its rows;
 * rows t >= cu_seqlens_q[5] must be zeros with lse -inf, and the rows
 * below it finite (so written). One replay in the middle carries
 * cu_seqlens_q[5] = 641: every out and lse element becomes quiet NaN and
 * opp_attention_device_status() names it; the next replays are clean.
 * Configurations: max_seqlen_q above the total and bounds below the
 * average length; causal, GQA, MQA, softcap, Dv != D; bf16, f16, f32.
 *
 * Every test skip()s without a CUDA device; FAST configurations are
 * skipped (printed) below compute capability 8.0.
 * Run (Bazel): bazel test //tests:graph_replay_test --test_output=all
 * Run (GPU machine): ./graph_replay_test (no data files)
 */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/logical_batch.h"
#include "harness/rng.h"
#include "tests/exact_gpu_util.h"
#include "tests/gpu_util.h"
#include "tests/test_util.h"

#define NSEQ   5
#define CAP_Q  640
#define CAP_KV 896
#define QNAN   0x7FC00000u /* lse */
#define NEG_I  0xFF800000u /* -inf */

static void cuda_ok(cudaError_t err, const char *what) {
    if (err != cudaSuccess) {
        fail_msg("%s: %s (%s)", what, cudaGetErrorName(err), cudaGetErrorString(err));
    }
}

typedef struct replay_cfg {
    opp_algo_t algo;
    opp_dtype_t dtype;
    int32_t hq, hkv, d, dv, causal;
    float softcap;
    int32_t bound_q, bound_kv; /* the descriptor's max_seqlen_q / kv */
} replay_cfg_t;

/* Everything one configuration works on (device pointers, host copies). */
typedef struct replay_ctx {
    const replay_cfg_t *cfg;
    opp_lb_t lb; /* capacity-sized random values (its lengths are not used) */
    opp_test_packed_dev_t dev;
    float *lse, *lse_t;        /* device [Hq, CAP_Q] */
    void *out_t;               /* device [CAP_Q, Hq, Dv]: the tight run's */
    opp_attention_desc_t desc; /* the capacity descriptor */
    cudaStream_t stream;
    size_t es, row_elems, out_bytes, lse_bytes;
} replay_ctx_t;

/* One replay's batch: NSEQ lengths, each <= bound, summing to <= cap. */
static void draw_cu(uint64_t *rng, int replay, int32_t cap, int32_t bound, int32_t *cu) {
    int32_t left = replay % 10 == 1 ? 0 : replay % 10 == 0 ? cap : opp_rng_int(rng, 0, cap);
    cu[0] = 0;
    for (int b = 0; b < NSEQ; ++b) {
        const int32_t hi = left < bound ? left : bound;
        const int32_t len =
            b == NSEQ - 1 || opp_rng_int(rng, 0, 5) == 0 ? hi : opp_rng_int(rng, 0, hi);
        cu[b + 1] = cu[b] + len;
        left -= len;
    }
}

/* Poisons out and lse, copies cu_seqlens in and runs (graph or direct
 * entry) on the context's stream, synchronizes; @return : the device
 * status of the run. */
static opp_status_t run_once(replay_ctx_t *c, cudaGraphExec_t exec, const int32_t *cu_q,
                             const int32_t *cu_kv, int poison) {
    const size_t cb = (NSEQ + 1) * sizeof(int32_t);
    cuda_ok(cudaMemsetAsync(c->dev.out, poison, c->out_bytes, c->stream), "poison out");
    cuda_ok(cudaMemsetAsync(c->lse, poison, c->lse_bytes, c->stream), "poison lse");
    cuda_ok(cudaMemcpyAsync(c->dev.cu_q, cu_q, cb, cudaMemcpyHostToDevice, c->stream), "cu_q");
    cuda_ok(cudaMemcpyAsync(c->dev.cu_kv, cu_kv, cb, cudaMemcpyHostToDevice, c->stream), "cu_kv");
    if (exec != NULL) {
        cuda_ok(cudaGraphLaunch(exec, c->stream), "cudaGraphLaunch");
    } else {
        const opp_varlen_t varlen = {c->dev.cu_q, c->dev.cu_kv};
        assert_opp_ok(opp_packed_attention_fwd_lse(&c->desc, &varlen, c->dev.q, c->dev.k, c->dev.v,
                                                   c->dev.out, c->lse, c->dev.workspace,
                                                   c->dev.workspace_bytes, c->stream));
    }
    cuda_ok(cudaStreamSynchronize(c->stream), "cudaStreamSynchronize");
    return opp_attention_device_status(c->dev.workspace, c->dev.workspace_bytes, c->stream);
}

/* Copies out and lse of the context to host buffers. */
static void download(const replay_ctx_t *c, void *out, uint32_t *lse) {
    opp_test_d2h(out, c->dev.out, c->out_bytes);
    opp_test_d2h(lse, c->lse, c->lse_bytes);
}

/* The same batch run directly with tight totals and max_seqlens into
 * out_t / lse_t ([end_q rows], [Hq, end_q]); results to host. */
static void run_tight(replay_ctx_t *c, const int32_t *cu_q, const int32_t *cu_kv, void *out,
                      uint32_t *lse) {
    opp_attention_desc_t t = c->desc;
    t.total_q = cu_q[NSEQ];
    t.total_kv = cu_kv[NSEQ];
    t.max_seqlen_q = t.max_seqlen_kv = 0;
    for (int b = 0; b < NSEQ; ++b) {
        const int32_t lq = cu_q[b + 1] - cu_q[b], lkv = cu_kv[b + 1] - cu_kv[b];
        t.max_seqlen_q = lq > t.max_seqlen_q ? lq : t.max_seqlen_q;
        t.max_seqlen_kv = lkv > t.max_seqlen_kv ? lkv : t.max_seqlen_kv;
    }
    const size_t rows = (size_t)cu_q[NSEQ];
    cuda_ok(cudaMemsetAsync(c->out_t, 0xFF, c->out_bytes, c->stream), "poison out_t");
    cuda_ok(cudaMemsetAsync(c->lse_t, 0xFF, c->lse_bytes, c->stream), "poison lse_t");
    const opp_varlen_t varlen = {c->dev.cu_q, c->dev.cu_kv}; /* holds cu_q / cu_kv already */
    assert_opp_ok(opp_packed_attention_fwd_lse(&t, &varlen, c->dev.q, c->dev.k, c->dev.v, c->out_t,
                                               c->lse_t, c->dev.workspace, c->dev.workspace_bytes,
                                               c->stream));
    cuda_ok(cudaStreamSynchronize(c->stream), "cudaStreamSynchronize");
    assert_opp_ok(opp_attention_device_status(c->dev.workspace, c->dev.workspace_bytes, c->stream));
    opp_test_d2h(out, c->out_t, rows * c->row_elems * c->es);
    opp_test_d2h(lse, c->lse_t, rows * (size_t)c->cfg->hq * sizeof(float));
}

/* Whether element bits e of dtype are finite (exponent not all ones). */
static int finite_bits(uint32_t e, opp_dtype_t dtype) {
    if (dtype == OPP_DTYPE_F32) {
        return (e & 0x7F800000u) != 0x7F800000u;
    }
    return dtype == OPP_DTYPE_F16 ? (e & 0x7C00u) != 0x7C00u : (e & 0x7F80u) != 0x7F80u;
}

static uint32_t elem_bits(const void *p, size_t i, size_t es) {
    if (es == 4) {
        return ((const uint32_t *)p)[i];
    }
    return ((const uint16_t *)p)[i];
}

/* The checks of one clean replay (file comment). */
static void check_replay(const replay_ctx_t *c, const int32_t *cu_q, const void *got,
                         const uint32_t *got_lse, const void *direct, const uint32_t *direct_lse,
                         const void *tight, const uint32_t *tight_lse, const char *what) {
    const size_t n_out = (size_t)CAP_Q * c->row_elems, n_lse = (size_t)c->cfg->hq * CAP_Q;
    const size_t end = (size_t)cu_q[NSEQ];
    if (memcmp(got, direct, c->out_bytes) != 0 || memcmp(got_lse, direct_lse, c->lse_bytes) != 0) {
        opp_test_bits_equal(got, direct, n_out, c->cfg->dtype, what);
        opp_test_bits_equal(got_lse, direct_lse, n_lse, OPP_DTYPE_F32, what);
        fail_msg("%s: the replay differs from a direct run of the same descriptor", what);
    }
    if (memcmp(got, tight, end * c->row_elems * c->es) != 0) {
        opp_test_bits_equal(got, tight, end * c->row_elems, c->cfg->dtype, what);
        fail_msg("%s: out differs from a direct run with tight totals and bounds", what);
    }
    for (size_t i = 0; i < n_out; ++i) {
        const uint32_t e = elem_bits(got, i, c->es);
        if (i < end * c->row_elems ? !finite_bits(e, c->cfg->dtype) : e != 0) {
            fail_msg("%s: out element %zu (row %zu of %zu) is 0x%x", what, i, i / c->row_elems, end,
                     e);
        }
    }
    for (size_t h = 0; h < (size_t)c->cfg->hq; ++h) {
        for (size_t t = 0; t < CAP_Q; ++t) {
            const uint32_t e = got_lse[h * CAP_Q + t];
            const int ok = t < end ? e == tight_lse[h * end + t] &&
                                         (finite_bits(e, OPP_DTYPE_F32) || e == NEG_I)
                                   : e == NEG_I;
            if (!ok) {
                fail_msg("%s: lse (head %zu, row %zu of %zu) is 0x%08x", what, h, t, end, e);
            }
        }
    }
}

/* Captures one graph for cfg and replays it (file comment). */
static void replay_config(const replay_cfg_t *cfg, uint64_t seed) {
    replay_ctx_t c;
    memset(&c, 0, sizeof(c));
    c.cfg = cfg;
    const int32_t lq[NSEQ] = {128, 128, 128, 128, 128}, lkv[NSEQ] = {180, 179, 179, 179, 179};
    assert_int_equal(opp_lb_from_lengths(&c.lb, cfg->dtype, NSEQ, lq, lkv, cfg->hq, cfg->hkv,
                                         cfg->d, cfg->dv, 0.0f, cfg->causal, cfg->softcap, seed),
                     0);
    assert_int_equal(c.lb.total_q, CAP_Q);
    assert_int_equal(c.lb.total_kv, CAP_KV);
    opp_test_packed_upload(&c.lb, &c.dev);
    c.es = opp_dtype_size(cfg->dtype);
    c.row_elems = (size_t)cfg->hq * (size_t)cfg->dv;
    c.out_bytes = c.dev.out_bytes;
    c.lse_bytes = (size_t)cfg->hq * CAP_Q * sizeof(float);
    c.lse = opp_test_gpu_alloc(c.lse_bytes);
    c.lse_t = opp_test_gpu_alloc(c.lse_bytes);
    c.out_t = opp_test_gpu_alloc(c.out_bytes);
    opp_lb_packed_desc(&c.lb, &c.desc);
    c.desc.algo = cfg->algo;
    c.desc.max_seqlen_q = cfg->bound_q;
    c.desc.max_seqlen_kv = cfg->bound_kv;
    /* the workspace of the capacity descriptor: its bounds can admit
     * split-KV rows (partials) that the upload's tight descriptor does not */
    size_t need = 0;
    assert_opp_ok(opp_packed_attention_workspace_size(&c.desc, &need));
    if (need > c.dev.workspace_bytes) {
        opp_test_gpu_free(c.dev.workspace);
        c.dev.workspace = opp_test_gpu_alloc(need);
        c.dev.workspace_bytes = need;
    }
    cuda_ok(cudaStreamCreateWithFlags(&c.stream, cudaStreamNonBlocking), "cudaStreamCreate");
    uint64_t rng = seed;
    int32_t cu_q[NSEQ + 1], cu_kv[NSEQ + 1];
    draw_cu(&rng, 2, CAP_Q, cfg->bound_q, cu_q);
    draw_cu(&rng, 2, CAP_KV, cfg->bound_kv, cu_kv);
    assert_opp_ok(run_once(&c, NULL, cu_q, cu_kv, 0xFF)); /* warm-up: attributes set */
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    cuda_ok(cudaStreamBeginCapture(c.stream, cudaStreamCaptureModeGlobal), "BeginCapture");
    const opp_varlen_t varlen = {c.dev.cu_q, c.dev.cu_kv};
    const opp_status_t st =
        opp_packed_attention_fwd_lse(&c.desc, &varlen, c.dev.q, c.dev.k, c.dev.v, c.dev.out, c.lse,
                                     c.dev.workspace, c.dev.workspace_bytes, c.stream);
    cuda_ok(cudaStreamEndCapture(c.stream, &graph), "EndCapture");
    assert_opp_ok(st);
    cuda_ok(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
    const size_t n_lse = (size_t)cfg->hq * CAP_Q;
    void *got = malloc(c.out_bytes), *direct = malloc(c.out_bytes), *tight = malloc(c.out_bytes);
    uint32_t *got_lse = malloc(c.lse_bytes), *direct_lse = malloc(c.lse_bytes);
    uint32_t *tight_lse = malloc(c.lse_bytes);
    assert_true(got && direct && tight && got_lse && direct_lse && tight_lse);
    const long replays = opp_test_env_long("OPP_GPU_TEST_REPLAYS", 60);
    long clean = 0, short_batches = 0;
    for (long r = 0; r < replays; ++r) {
        char what[160];
        draw_cu(&rng, (int)r, CAP_Q, cfg->bound_q, cu_q);
        draw_cu(&rng, (int)r, CAP_KV, cfg->bound_kv, cu_kv);
        snprintf(what, sizeof(what), "%s %s replay %ld (cu_q[5] = %d, cu_kv[5] = %d)",
                 cfg->algo == OPP_ALGO_FAST ? "FAST" : "EXACT", opp_dtype_name(cfg->dtype), r,
                 cu_q[NSEQ], cu_kv[NSEQ]);
        if (r == replays / 2) { /* a bad batch: the graph fails loudly, then recovers */
            int32_t bad[NSEQ + 1];
            memcpy(bad, cu_q, sizeof(bad));
            bad[NSEQ] = CAP_Q + 1;
            assert_opp_status(run_once(&c, exec, bad, cu_kv, 0), OPP_STATUS_BAD_PARAM_SEQLENS_TOTAL,
                              "cu_seqlens_q[5] = 641 > total_q = 640 (found on the device)");
            download(&c, got, got_lse);
            const uint32_t nan = cfg->dtype == OPP_DTYPE_F32   ? 0x7FC00000u
                                 : cfg->dtype == OPP_DTYPE_F16 ? 0x7E00u
                                                               : 0x7FC0u;
            for (size_t i = 0; i < (size_t)CAP_Q * c.row_elems; ++i) {
                if (elem_bits(got, i, c.es) != nan) {
                    fail_msg("%s, bad cu_seqlens: out element %zu is not the quiet NaN", what, i);
                }
            }
            for (size_t i = 0; i < n_lse; ++i) {
                if (got_lse[i] != QNAN) {
                    fail_msg("%s, bad cu_seqlens: lse element %zu is not the quiet NaN", what, i);
                }
            }
        }
        assert_opp_ok(run_once(&c, exec, cu_q, cu_kv, 0xFF));
        download(&c, got, got_lse);
        assert_opp_ok(run_once(&c, NULL, cu_q, cu_kv, 0xFE));
        download(&c, direct, direct_lse);
        run_tight(&c, cu_q, cu_kv, tight, tight_lse);
        check_replay(&c, cu_q, got, got_lse, direct, direct_lse, tight, tight_lse, what);
        clean++;
        short_batches += cu_q[NSEQ] < CAP_Q;
    }
    printf("%s %s Hq=%d Hkv=%d D=%d Dv=%d causal=%d softcap=%g bounds %d/%d: %ld replays of one "
           "graph bit-identical to direct runs (%ld with rows past the batch), one bad batch NaN\n",
           cfg->algo == OPP_ALGO_FAST ? "FAST" : "EXACT", opp_dtype_name(cfg->dtype), cfg->hq,
           cfg->hkv, cfg->d, cfg->dv, cfg->causal, (double)cfg->softcap, cfg->bound_q,
           cfg->bound_kv, clean, short_batches);
    free(got);
    free(direct);
    free(tight);
    free(got_lse);
    free(direct_lse);
    free(tight_lse);
    cuda_ok(cudaGraphExecDestroy(exec), "cudaGraphExecDestroy");
    cuda_ok(cudaGraphDestroy(graph), "cudaGraphDestroy");
    cuda_ok(cudaStreamDestroy(c.stream), "cudaStreamDestroy");
    opp_test_gpu_free(c.lse);
    opp_test_gpu_free(c.lse_t);
    opp_test_gpu_free(c.out_t);
    opp_test_packed_free(&c.dev);
    opp_lb_free(&c.lb);
}

/* EXACT: one graph per configuration, replayed with changing batches. */
static void test_graph_replay_exact_changing_batches(void **state) {
    (void)state;
    OPP_TEST_REQUIRE_GPU();
    static const replay_cfg_t cfg[] = {
        {OPP_ALGO_EXACT, OPP_DTYPE_BF16, 8, 2, 64, 64, 1, 0.0f, CAP_Q + 1000, CAP_KV},
        {OPP_ALGO_EXACT, OPP_DTYPE_F32, 4, 4, 40, 24, 0, 20.0f, 300, 400},
        {OPP_ALGO_EXACT, OPP_DTYPE_F16, 6, 1, 32, 32, 1, 0.0f, 200, INT32_MAX},
    };
    for (size_t i = 0; i < sizeof(cfg) / sizeof(cfg[0]); ++i) {
        replay_config(&cfg[i], 0x9e3779b97f4a7c15ull + i);
    }
}

/* FAST: the same on the tensor-core kernel (compute capability >= 8.0). */
static void test_graph_replay_fast_changing_batches(void **state) {
    (void)state;
    OPP_TEST_REQUIRE_GPU();
    int32_t sm = 0;
    assert_opp_ok(opp_device_sm_arch(&sm));
    if (sm < 80) {
        printf("FAST needs compute capability 8.0, the device has %d.%d: skipped\n", sm / 10,
               sm % 10);
        skip();
    }
    static const replay_cfg_t cfg[] = {
        {OPP_ALGO_FAST, OPP_DTYPE_BF16, 8, 2, 128, 128, 1, 0.0f, CAP_Q + 1000, CAP_KV + 1},
        {OPP_ALGO_FAST, OPP_DTYPE_F16, 6, 1, 96, 64, 0, 30.0f, 300, 400},
        {OPP_ALGO_FAST, OPP_DTYPE_BF16, 4, 4, 64, 64, 1, 0.0f, 150, 250},
    };
    for (size_t i = 0; i < sizeof(cfg) / sizeof(cfg[0]); ++i) {
        replay_config(&cfg[i], 0xc2b2ae3d27d4eb4full + i);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_graph_replay_exact_changing_batches),
        cmocka_unit_test(test_graph_replay_fast_changing_batches),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
