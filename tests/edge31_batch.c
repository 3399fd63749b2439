/*
 * edge31_batch.c - part (b) of edge31_gpu_test (issue 12 item 1): one
 * batch whose element offsets pass 2^31 in every tensor.
 *   bf16, Hq 32, Hkv 8, D = Dv = 128, causal; ~1170 sequences of
 *   L_q = 768..1024 queries and L_kv = 2 L_q + 64..128 keys (tail-aligned
 *   causal: every query sees more than L_kv - L_q keys), until total_q >=
 *   2^20 + 1024: q and out hold ~4.3e9 elements (offsets past 2^32), k and
 *   v ~2.2e9 (past 2^31); total_q and total_kv are the batch's ends + 3
 *   and + 5 rows of capacity (rows past the batch: zeros, LSE -inf).
 * Inputs: a hash fill on the device (tests/edge31_fill.cu); the host
 * copies back only the sampled sequences: the first, the last, and those
 * holding query row 2^19 (q / out element 2^31), query row 2^20 (element
 * 2^32) and key row 2^21 (k / v element 2^31).
 * Checks per sampled sequence: EXACT == the CPU reference
 * (opp_ref_packed_attention on the copied sequence) bit for bit, and its
 * LSE within 1 float ulp of a plain double model on five tokens x 32
 * heads (EXACT rounds m + log(S) once from double; the model sums in
 * another order, ~1e-16 apart); FAST within fast_gpu_test's contract bound
 * of EXACT (opp_ft_check_accuracy: 2^-7 (max |EXACT| + max |V| / 2) for
 * bf16, LSE 1e-3 + 1e-4 |LSE|), no NaN, and bit-identical to the same
 * sequence run alone (batch invariance at these offsets). The FAST run
 * includes split-KV rows (the last 16 tokens of every sequence, L_kv >
 * 1024).
 */
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/logical_batch.h"
#include "harness/progress.h"
#include "harness/rng.h"
#include "numerics/fp_convert.h"
#include "tests/edge31.h"
#include "tests/edge31_fill.h"
#include "tests/exact_gpu_util.h"
#include "tests/fast_gpu_util.h"
#include "tests/gpu_util.h"
#include "tests/test_util.h"

#define HQ          32
#define HKV         8
#define DH          128
#define ROW_Q       ((int64_t)HQ * DH)  /* elements per query / output row */
#define ROW_KV      ((int64_t)HKV * DH) /* elements per key / value row */
#define MIN_TOKENS  (((int64_t)1 << 20) + 1024)
#define MAX_SAMPLES 5

/* The batch's lengths and prefix sums (host; cu as int64, uploaded as int32). */
typedef struct big {
    int32_t batch, max_lq, max_lkv;
    int32_t *lq, *lkv;
    int64_t *cu_q, *cu_kv;
    int64_t total_q, total_kv; /* capacities: ends + 3, + 5 */
    double flops;
} big_t;

static void big_lengths(big_t *bb) {
    memset(bb, 0, sizeof(*bb));
    const int32_t cap = 2000;
    bb->lq = malloc(cap * sizeof(int32_t));
    bb->lkv = malloc(cap * sizeof(int32_t));
    bb->cu_q = malloc((cap + 1) * sizeof(int64_t));
    bb->cu_kv = malloc((cap + 1) * sizeof(int64_t));
    assert_true(bb->lq && bb->lkv && bb->cu_q && bb->cu_kv);
    uint64_t st = 31;
    bb->cu_q[0] = bb->cu_kv[0] = 0;
    int32_t b = 0;
    while (bb->cu_q[b] < MIN_TOKENS) {
        assert_true(b < cap);
        const int32_t lq = opp_rng_int(&st, 768, 1024);
        const int32_t lkv = 2 * lq + 64 + opp_rng_int(&st, 0, 64);
        bb->lq[b] = lq;
        bb->lkv[b] = lkv;
        bb->cu_q[b + 1] = bb->cu_q[b] + lq;
        bb->cu_kv[b + 1] = bb->cu_kv[b] + lkv;
        bb->max_lq = lq > bb->max_lq ? lq : bb->max_lq;
        bb->max_lkv = lkv > bb->max_lkv ? lkv : bb->max_lkv;
        /* tail-aligned causal, L_kv > L_q: query i sees L_kv - L_q + i + 1 keys */
        const double pairs = (double)lq * (lkv - lq) + 0.5 * (double)lq * (lq + 1);
        bb->flops += 4.0 * pairs * HQ * DH;
        b++;
    }
    bb->batch = b;
    bb->total_q = bb->cu_q[b] + 3;
    bb->total_kv = bb->cu_kv[b] + 5;
    assert_true(bb->total_q <= INT32_MAX && bb->total_kv <= INT32_MAX);
    assert_true(bb->cu_kv[b] > ((int64_t)1 << 21)); /* k / v elements past 2^31 */
}

static void big_free(big_t *bb) {
    free(bb->lq);
    free(bb->lkv);
    free(bb->cu_q);
    free(bb->cu_kv);
}

/* The sequence holding row `row` of cu (cu[b] <= row < cu[b + 1]). */
static int32_t seq_of(const int64_t *cu, int32_t batch, int64_t row) {
    for (int32_t b = 0; b < batch; ++b) {
        if (cu[b] <= row && row < cu[b + 1]) {
            return b;
        }
    }
    fail_msg("no sequence holds row %lld", (long long)row);
    return -1;
}

/* The sampled sequences, ascending, distinct. @return : their count. */
static int samples(const big_t *bb, int32_t out[MAX_SAMPLES]) {
    const int32_t want[MAX_SAMPLES] = {0, seq_of(bb->cu_q, bb->batch, (int64_t)1 << 19),
                                       seq_of(bb->cu_q, bb->batch, (int64_t)1 << 20),
                                       seq_of(bb->cu_kv, bb->batch, (int64_t)1 << 21),
                                       bb->batch - 1};
    int n = 0;
    for (int i = 0; i < MAX_SAMPLES; ++i) {
        int seen = 0;
        for (int j = 0; j < n; ++j) {
            seen |= out[j] == want[i];
        }
        if (!seen) {
            int k = n++;
            for (; k > 0 && out[k - 1] > want[i]; --k) {
                out[k] = out[k - 1];
            }
            out[k] = want[i];
        }
    }
    return n;
}

/* The device side. */
typedef struct big_dev {
    uint16_t *q, *k, *v, *out;
    float *lse; /* [HQ, total_q] */
    int32_t *cu_q, *cu_kv;
    void *ws;
    size_t ws_bytes;
} big_dev_t;

static void big_desc(const big_t *bb, opp_algo_t algo, opp_attention_desc_t *desc) {
    opp_attention_desc_init(desc);
    desc->q_dtype = desc->k_dtype = desc->v_dtype = desc->out_dtype = OPP_DTYPE_BF16;
    desc->batch = bb->batch;
    desc->num_heads = HQ;
    desc->kv_num_heads = HKV;
    desc->head_size = DH;
    desc->total_q = bb->total_q;
    desc->total_kv = bb->total_kv;
    desc->max_seqlen_q = bb->max_lq;
    desc->max_seqlen_kv = bb->max_lkv;
    desc->is_causal = 1;
    desc->algo = algo;
}

/* One sampled sequence's results: out [L_q, HQ, DH], lse [HQ, L_q]. */
typedef struct seq_res {
    uint16_t *out;
    float *lse;
} seq_res_t;

/* Runs the batch with algo (outputs NaN-poisoned first), checks the rows
 * past the batch (zeros, LSE -inf) and copies the sampled sequences'
 * rows into res[i]. @return : seconds of the run. */
static double big_run(const big_t *bb, const big_dev_t *g, opp_algo_t algo, const int32_t *s, int n,
                      seq_res_t *res) {
    opp_attention_desc_t desc;
    big_desc(bb, algo, &desc);
    opp_test_gpu_fill(g->out, 0xFF, (size_t)(bb->total_q * ROW_Q) * sizeof(uint16_t));
    opp_test_gpu_fill(g->lse, 0xFF, (size_t)(HQ * bb->total_q) * sizeof(float));
    opp_test_gpu_sync();
    const opp_varlen_t varlen = {g->cu_q, g->cu_kv};
    const double t0 = opp_progress_now_s();
    assert_opp_ok(opp_packed_attention_fwd_lse(&desc, &varlen, g->q, g->k, g->v, g->out, g->lse,
                                               g->ws, g->ws_bytes, NULL));
    opp_test_gpu_sync();
    const double secs = opp_progress_now_s() - t0;
    assert_opp_ok(opp_attention_device_status(g->ws, g->ws_bytes, NULL));
    const int64_t end = bb->cu_q[bb->batch], past = bb->total_q - end;
    uint16_t *tail = malloc((size_t)(past * ROW_Q) * sizeof(uint16_t));
    float tail_lse[HQ * 3];
    assert_non_null(tail);
    assert_true(past <= 3);
    opp_test_d2h(tail, g->out + end * ROW_Q, (size_t)(past * ROW_Q) * sizeof(uint16_t));
    for (int64_t i = 0; i < past * ROW_Q; ++i) {
        assert_int_equal(tail[i], 0);
    }
    opp_e31_cuda_ok(cudaMemcpy2D(tail_lse, (size_t)past * sizeof(float), g->lse + end,
                                 (size_t)bb->total_q * sizeof(float), (size_t)past * sizeof(float),
                                 HQ, cudaMemcpyDeviceToHost),
                    "lse rows past the batch");
    for (int64_t i = 0; i < HQ * past; ++i) {
        assert_true(isinf(tail_lse[i]) && tail_lse[i] < 0.0f);
    }
    free(tail);
    for (int i = 0; i < n; ++i) {
        const int32_t b = s[i], lq = bb->lq[b];
        res[i].out = malloc((size_t)(lq * ROW_Q) * sizeof(uint16_t));
        res[i].lse = malloc((size_t)HQ * (size_t)lq * sizeof(float));
        assert_true(res[i].out != NULL && res[i].lse != NULL);
        opp_test_d2h(res[i].out, g->out + bb->cu_q[b] * ROW_Q,
                     (size_t)(lq * ROW_Q) * sizeof(uint16_t));
        opp_e31_cuda_ok(cudaMemcpy2D(res[i].lse, (size_t)lq * sizeof(float), g->lse + bb->cu_q[b],
                                     (size_t)bb->total_q * sizeof(float),
                                     (size_t)lq * sizeof(float), HQ, cudaMemcpyDeviceToHost),
                        "lse of a sampled sequence");
    }
    return secs;
}

/* The LSE of (token i, head h) of lb in plain double: s = sqrt(1 / sqrt(D)),
 * x_j = sum_d (q_d s)(k_d s) over the visible keys, m + log(sum exp(x - m)). */
static double model_lse(const opp_lb_t *lb, int32_t i, int32_t h) {
    const double s = sqrt(1.0 / sqrt((double)DH));
    const int32_t hk = h / (HQ / HKV), lq = lb->lq[0], lkv = lb->lkv[0];
    const int64_t n = (int64_t)i + lkv - lq + 1; /* causal, tail-aligned */
    double *x = malloc((size_t)n * sizeof(double));
    assert_non_null(x);
    double m = -INFINITY;
    for (int64_t j = 0; j < n; ++j) {
        double acc = 0.0;
        for (int d = 0; d < DH; ++d) {
            const double q =
                opp__load_elem(lb->q, (size_t)(i * ROW_Q + h * DH + d), OPP_DTYPE_BF16);
            const double k =
                opp__load_elem(lb->k, (size_t)(j * ROW_KV + hk * DH + d), OPP_DTYPE_BF16);
            acc += (q * s) * (k * s);
        }
        x[j] = acc;
        m = acc > m ? acc : m;
    }
    double sum = 0.0;
    for (int64_t j = 0; j < n; ++j) {
        sum += exp(x[j] - m);
    }
    free(x);
    return m + log(sum);
}

/* The checks of one sampled sequence b (file comment). */
static void check_sample(const big_t *bb, const big_dev_t *g, int32_t b, const seq_res_t *exact,
                         const seq_res_t *fast, opp_ft_err_t *err) {
    const int32_t lq = bb->lq[b], lkv = bb->lkv[b];
    opp_lb_t lb;
    assert_int_equal(opp_lb_from_lengths(&lb, OPP_DTYPE_BF16, 1, &lq, &lkv, HQ, HKV, DH, DH, 0.0f,
                                         1, 0.0f, (uint64_t)b),
                     0);
    opp_test_d2h(lb.q, g->q + bb->cu_q[b] * ROW_Q, (size_t)(lq * ROW_Q) * sizeof(uint16_t));
    opp_test_d2h(lb.k, g->k + bb->cu_kv[b] * ROW_KV, (size_t)(lkv * ROW_KV) * sizeof(uint16_t));
    opp_test_d2h(lb.v, g->v + bb->cu_kv[b] * ROW_KV, (size_t)(lkv * ROW_KV) * sizeof(uint16_t));
    char what[256];
    snprintf(what, sizeof(what),
             "sequence %d of %d (L_q %d, L_kv %d; q rows %lld.., element offset %.4g; k rows "
             "%lld..)",
             (int)b, (int)bb->batch, (int)lq, (int)lkv, (long long)bb->cu_q[b],
             (double)(bb->cu_q[b] * ROW_Q), (long long)bb->cu_kv[b]);
    void *ref = opp_test_packed_ref(&lb);
    opp_test_assert_out_equal(&lb, exact->out, ref, what);
    free(ref);
    const int32_t tokens[5] = {0, 1, lq / 2, lq - 2, lq - 1};
    for (int k = 0; k < 5; ++k) {
        for (int32_t h = 0; h < HQ; ++h) {
            const float want = (float)model_lse(&lb, tokens[k], h);
            const float got = exact->lse[(size_t)h * (size_t)lq + (size_t)tokens[k]];
            uint32_t a, c;
            memcpy(&a, &want, 4);
            memcpy(&c, &got, 4);
            if (opp_test_ulp_distance(a, c, OPP_DTYPE_F32) > 1) {
                fail_msg("%s: EXACT lse of token %d head %d = %.9g, double model %.9g", what,
                         (int)tokens[k], (int)h, (double)got, (double)want);
            }
        }
    }
    opp_ft_res_t f = {fast->out, fast->lse}, e = {exact->out, exact->lse};
    opp_ft_assert_sane(&lb, &f, what);
    opp_ft_check_accuracy(&lb, &f, &e, err, what);
    opp_ft_res_t alone;
    opp_ft_run_packed(&lb, OPP_ALGO_FAST, NULL, &alone);
    opp_ft_assert_seq_equal(&lb, &f, 0, &lb, &alone, 0, what);
    opp_ft_res_free(&alone);
    opp_lb_free(&lb);
    printf("edge31:   %s: EXACT == CPU reference bit for bit, LSE <= 1 ulp; FAST within the "
           "bound, == the sequence alone bit for bit\n",
           what);
    fflush(stdout);
}

void test_edge31_big_batch(void **state) {
    (void)state;
    OPP_FT_REQUIRE_DEVICE();
    big_t bb;
    big_lengths(&bb);
    big_dev_t g;
    memset(&g, 0, sizeof(g));
    opp_attention_desc_t desc;
    big_desc(&bb, OPP_ALGO_FAST, &desc);
    assert_opp_ok(opp_packed_attention_workspace_size(&desc, &g.ws_bytes));
    const size_t q_bytes = (size_t)(bb.total_q * ROW_Q) * sizeof(uint16_t);
    const size_t kv_bytes = (size_t)(bb.total_kv * ROW_KV) * sizeof(uint16_t);
    const size_t lse_bytes = (size_t)(HQ * bb.total_q) * sizeof(float);
    const size_t cu_bytes = (size_t)(bb.batch + 1) * sizeof(int32_t);
    opp_e31_require('b', 2 * q_bytes + 2 * kv_bytes + lse_bytes + g.ws_bytes + 2 * cu_bytes,
                    "part (b), a batch of 2^32 query elements");
    const double t_start = opp_progress_now_s();
    g.q = opp_test_gpu_alloc(q_bytes);
    g.out = opp_test_gpu_alloc(q_bytes);
    g.k = opp_test_gpu_alloc(kv_bytes);
    g.v = opp_test_gpu_alloc(kv_bytes);
    g.lse = opp_test_gpu_alloc(lse_bytes);
    g.ws = opp_test_gpu_alloc(g.ws_bytes);
    g.cu_q = opp_test_gpu_alloc(cu_bytes);
    g.cu_kv = opp_test_gpu_alloc(cu_bytes);
    int32_t *cu = malloc(cu_bytes);
    assert_non_null(cu);
    for (int32_t b = 0; b <= bb.batch; ++b) {
        cu[b] = (int32_t)bb.cu_q[b];
    }
    opp_test_h2d(g.cu_q, cu, cu_bytes);
    for (int32_t b = 0; b <= bb.batch; ++b) {
        cu[b] = (int32_t)bb.cu_kv[b];
    }
    opp_test_h2d(g.cu_kv, cu, cu_bytes);
    free(cu);
    opp_e31_cuda_ok(opp_edge31_fill_hash(g.q, q_bytes / 2, OPP_DTYPE_BF16, 101), "q fill");
    opp_e31_cuda_ok(opp_edge31_fill_hash(g.k, kv_bytes / 2, OPP_DTYPE_BF16, 102), "k fill");
    opp_e31_cuda_ok(opp_edge31_fill_hash(g.v, kv_bytes / 2, OPP_DTYPE_BF16, 103), "v fill");
    opp_test_gpu_sync();
    printf("edge31: part (b): bf16 Hq %d Hkv %d D %d causal, B = %d, total_q = %lld (q/out %.3g "
           "elements, %.1f GiB each), total_kv = %lld (k/v %.3g elements), workspace %.2f GiB, "
           "%.1f TFLOP; inputs written in %.1f s\n",
           HQ, HKV, DH, (int)bb.batch, (long long)bb.total_q, (double)(bb.total_q * ROW_Q),
           (double)q_bytes / 1073741824.0, (long long)bb.total_kv, (double)(bb.total_kv * ROW_KV),
           (double)g.ws_bytes / 1073741824.0, bb.flops / 1e12, opp_progress_now_s() - t_start);
    int32_t s[MAX_SAMPLES];
    const int n = samples(&bb, s);
    seq_res_t exact[MAX_SAMPLES], fast[MAX_SAMPLES];
    const double t_exact = big_run(&bb, &g, OPP_ALGO_EXACT, s, n, exact);
    const double t_fast = big_run(&bb, &g, OPP_ALGO_FAST, s, n, fast);
    printf("edge31: part (b): EXACT %.2f s (%.2f TFLOP/s), FAST %.3f s (%.1f TFLOP/s); rows past "
           "the batch zero, LSE -inf; checking %d sampled sequences:\n",
           t_exact, bb.flops / t_exact / 1e12, t_fast, bb.flops / t_fast / 1e12, n);
    fflush(stdout);
    opp_ft_err_t err;
    memset(&err, 0, sizeof(err));
    const double t_check = opp_progress_now_s();
    for (int i = 0; i < n; ++i) {
        check_sample(&bb, &g, s[i], &exact[i], &fast[i], &err);
        free(exact[i].out);
        free(exact[i].lse);
        free(fast[i].out);
        free(fast[i].lse);
    }
    printf("edge31: part (b): FAST vs EXACT on the sampled sequences:\n");
    opp_ft_err_print("bf16 D 128", &err);
    void *bufs[8] = {g.q, g.out, g.k, g.v, g.lse, g.ws, g.cu_q, g.cu_kv};
    for (int i = 0; i < 8; ++i) {
        opp_test_gpu_free(bufs[i]);
    }
    big_free(&bb);
    printf("edge31: part (b) done in %.1f s (checks %.1f s)\n", opp_progress_now_s() - t_start,
           opp_progress_now_s() - t_check);
}
