/*
 * edge31_gpu_test.c - issue 12 item 1: the run path at the edges that
 * validation accepts (totals up to INT32_MAX rows), on the GPU.
 *   (a) test_edge31_long_sequence: ONE sequence of L_kv = 2^31 - 1 keys
 *       (f16, not causal) and of 2^31 - 127 keys (bf16, causal), D = Dv =
 *       8, Hq = Hkv = 1, 73 query tokens, packed, FAST. With G = 1 the
 *       last 64 tokens run split-KV (2^21 splits of 1024 keys, then the
 *       combine) and the first 9 in the main kernel, whose one block walks
 *       all 2^24 key blocks. Then the bf16 case on the Attention-24 entry:
 *       S_kv = 2^31 - 1, nonpad_kv_seqlen = 2^31 - 127, NaN in the 126
 *       padding rows, S_q = 9 (the packed run's last 9 queries): the oracle
 *       and the packed rows' bits. K and V (32 GiB each) are written on the
 *       device (cudaMemset, tests/edge31_fill.cu), never uploaded.
 *   (b) test_edge31_big_batch (edge31_batch.c): ~2^20 query tokens x 32
 *       heads x 128 (Q and out elements past 2^32), K and V past 2^31
 *       elements, EXACT and FAST, sampled sequences against the CPU
 *       reference.
 * The oracle of (a), independent of every reference: K is zero except 8
 * hot keys, K[h_d] = 8 e_d (e_d the unit vector of column d); V is 1.0
 * except V[h_d][c] = a(d, c) = (-1)^c (1/2 + d/16 + c/128) (exact in f16
 * and bf16); a query token is 8 e_d or zero; scale 1. So a token's scores
 * are 64 at its hot key and 0 at every other key. Let n be the keys it
 * sees (L_kv; causal: t + L_kv - L_q + 1).
 *   - It sees its hot key: the rest weigh (n - 1) e^-64 < 2^-60 together,
 *     so out = a(d, .) (to ~1e-18 relative; a dtype ulp is >= 2^-11) and
 *     LSE = 64 + log1p((n - 1) e^-64) = 64.
 *   - Otherwise every score it sees is 0: out_c = (n - m + sum of the m
 *     visible hot values) / n, within 16 / n < 2^-26 of 1.0, so 1.0;
 *     LSE = log(n).
 * The oracle is rounded once from double and must not change when the
 * double moves by 2^-20 relative (checked), which covers both paths'
 * accumulation error. Hot keys: h_0 = L - 2, h_1 = L - 1 (the last),
 * h_2 = 0, h_3 = 2^28 (element offset 2^31), h_4 = 2^27 (byte offset
 * 2^31), h_5 = L - 66, h_6 = the first key of the last 1024-key split,
 * h_7 = the key before it. The causal queries put tokens exactly on their
 * hot key's frontier (they see it) and one token before (they do not).
 * Comparison: EXACT bit for bit on out, LSE within 1 float ulp (EXACT
 * rounds m + log(S) once from double; CUDA's log is within 1 double ulp);
 * FAST within fast_gpu_test's contract bound (2^-9 (f16) or 2^-7 (bf16)
 * x (max |oracle| + max |V| / 2); LSE 1e-3 + 1e-4 |LSE|), the count of
 * bit-exact elements printed - except the out of a token that sees no hot
 * key in FAST's main kernel: its P V sums n ~ 2^31 equal terms into one
 * fp32 accumulator (the tensor cores add 16 products at a time; past
 * 2^24 - 2^26 the additions are lost), which no FP32-accumulating flash
 * kernel survives (README.md, Algorithms: FAST's limit); its LSE (the row
 * sum, added 128 keys at a time) is still checked, and the split-KV
 * tokens (1024-key partials) are checked in full.
 * Cost on an H200 (estimated, never measured yet): (a) FAST ~15 s per
 * packed run (the main kernel's block walks 2^24 key blocks alone), (b)
 * ~20 s with the CPU reference; device memory ~70 GiB for (a), ~27 GiB
 * for (b), freed between. Opt-in, far longer: OPP_EDGE31_EXACT=1 runs
 * EXACT, and nothing else of (a), on the bf16 causal case (one block walks
 * 2^24 key tiles in three passes; on the EXACT row of the smallest BM,
 * exact_row, bm32: 538.9 s on an H200 for =1, bench/RESULTS.md, eighth
 * session; the default bm64 row's rate would give ~754 s, past a device
 * command's 600 s), =2 on the f16 case instead (each its own device
 * command, with OPP_EDGE31_ONLY=a; =2 not timed yet);
 * OPP_EDGE31_FLASH=1 adds the portable flash row (kernels/flash_*.cuh,
 * which an H200 dispatches only for G > 128) on both cases (its one block
 * walks 2^25 key blocks: estimated 30-60 s each).
 * Every test skip()s without a CUDA device of compute capability >= 8.0,
 * with less free device memory than it needs, or when OPP_GPU_TEST_MAX_LEN
 * is set (the reduced sanitizer runs): these edges exist only at full size.
 * OPP_EDGE31_ONLY=a (or b) runs one part (the other is reported skipped).
 * Run (GPU machine): LD_LIBRARY_PATH=<dir of libcmocka.so.0> ./edge31_gpu_test
 */
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/progress.h"
#include "kernels/kernel_list.h"
#include "lib/internal/attention_run.h"
#include "lib/internal/dispatch.h"
#include "lib/internal/problem.h"
#include "numerics/fp_convert.h"
#include "tests/edge31.h"
#include "tests/edge31_fill.h"
#include "tests/exact_gpu_util.h"
#include "tests/fast_gpu_util.h"
#include "tests/gpu_util.h"
#include "tests/test_util.h"

#define D          8          /* head size = v head size */
#define LQ         73         /* query tokens */
#define MAIN       9          /* tokens of the main (unsplit) FAST kernel: LQ - 64 / G */
#define NHOT       8          /* hot keys, one per column */
#define ROWS_ALLOC 2147483647 /* K / V rows allocated: INT32_MAX, the largest total_kv */
#define L_LONG     2147483647 /* 2^31 - 1 */
#define L_SHORTER  2147483521 /* 2^31 - 127 */
#define HOT        8.0        /* hot query and key value: score 64 */

_Static_assert(MAIN == LQ - OPP__SPLIT_MOST(1),
               "G = 1: the last 64 tokens split (no OPP__SPLIT_TOKENS cap)");

// --- shared helpers (edge31.h)

void opp_e31_cuda_ok(int err, const char *what) {
    if (err != (int)cudaSuccess) {
        fail_msg("%s: %s (%s)", what, cudaGetErrorName((cudaError_t)err),
                 cudaGetErrorString((cudaError_t)err));
    }
}

void opp_e31_require(char part, size_t bytes, const char *what) {
    const char *only = getenv("OPP_EDGE31_ONLY");
    if (only != NULL && only[0] != '\0' && strchr(only, part) == NULL) {
        printf("edge31: %s: skipped (OPP_EDGE31_ONLY=%s)\n", what, only);
        skip();
    }
    if (opp_test_env_long("OPP_GPU_TEST_MAX_LEN", 0) > 0) {
        printf("edge31: %s: skipped (OPP_GPU_TEST_MAX_LEN caps lengths; this edge exists only "
               "at full size)\n",
               what);
        skip();
    }
    size_t free_b = 0, total_b = 0;
    opp_e31_cuda_ok(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo");
    const size_t need = bytes + ((size_t)1 << 30);
    if (free_b < need) {
        printf("edge31: %s: skipped: needs %.1f GiB of device memory, the device has %.1f of "
               "%.1f GiB free\n",
               what, (double)need / 1073741824.0, (double)free_b / 1073741824.0,
               (double)total_b / 1073741824.0);
        skip();
    }
}

// --- the oracle of part (a)

static uint16_t enc(opp_dtype_t dt, double x) {
    return dt == OPP_DTYPE_BF16 ? opp__double_to_bf16(x) : opp__double_to_f16(x);
}

/* V[h_d][c]: distinct, never 1.0, 7 significant bits. */
static double hot_value(int d, int c) {
    return (c % 2 ? -1.0 : 1.0) * (0.5 + d / 16.0 + c / 128.0);
}

/* The hot keys of a sequence of L keys (file comment). */
static void hot_keys(int64_t L, int64_t h[NHOT]) {
    const int64_t last_split = (L - 1) / OPP__SPLIT_KEYS * OPP__SPLIT_KEYS;
    const int64_t keys[NHOT] = {
        L - 2, L - 1, 0, (int64_t)1 << 28, (int64_t)1 << 27, L - 66, last_split, last_split - 1};
    for (int d = 0; d < NHOT; ++d) {
        h[d] = keys[d];
        for (int e = 0; e < d; ++e) {
            assert_true(h[e] != h[d]);
        }
    }
}

/* The hot column of each query token (-1: a zero query). Not causal: main
 * tokens 0..7 and split tokens 65..72 take columns 0..7. Causal (offset
 * L - 73): token t sees keys < t + L - 72; tokens 7, 71, 72 sit exactly on
 * their hot key's frontier, tokens 5, 6, 64, 70 just before it. */
static void query_dims(int causal, int8_t dims[LQ]) {
    memset(dims, -1, LQ);
    if (!causal) {
        for (int d = 0; d < NHOT; ++d) {
            dims[d] = (int8_t)d;
            dims[65 + d] = (int8_t)d;
        }
        return;
    }
    static const int8_t main_dims[8] = {2, 3, 4, 6, 7, 0, 5, 5};
    static const int8_t split_dims[9] = {1, 2, 3, 6, 7, 5, 0, 0, 1}; /* tokens 64..72 */
    memcpy(dims, main_dims, sizeof(main_dims));
    memcpy(dims + 64, split_dims, sizeof(split_dims));
}

/* out[c] and lse of token t in double (file comment). */
static void oracle(int64_t L, int causal, const int8_t dims[LQ], int t, double out[D],
                   double *lse) {
    int64_t h[NHOT];
    hot_keys(L, h);
    const int64_t n = causal ? t + L - LQ + 1 : L;
    const int d = dims[t];
    if (d >= 0 && h[d] < n) {
        for (int c = 0; c < D; ++c) {
            out[c] = hot_value(d, c);
        }
        *lse = 64.0 + log1p((double)(n - 1) * exp(-64.0));
        return;
    }
    for (int c = 0; c < D; ++c) {
        double sum = (double)n;
        for (int k = 0; k < NHOT; ++k) {
            if (h[k] < n) {
                sum += hot_value(k, c) - 1.0;
            }
        }
        out[c] = sum / (double)n;
    }
    *lse = log((double)n);
}

// --- device buffers and fills

typedef struct long_dev {
    uint16_t *k, *v;   /* [ROWS_ALLOC, 1, D] */
    uint16_t *q, *out; /* [LQ, 1, D] */
    float *lse;        /* [1, LQ] */
    int32_t *cu_q, *cu_kv;
    int64_t *nonpad;
    void *ws;
    size_t ws_bytes;
} long_dev_t;

static void put_row(uint16_t *base, int64_t row, const uint16_t vals[D]) {
    opp_test_h2d(base + (size_t)row * D, vals, D * sizeof(uint16_t));
}

/* Writes (on) or clears (back to K 0, V 1.0) the hot rows of L keys. */
static void set_hot(const long_dev_t *g, opp_dtype_t dt, int64_t L, int on) {
    int64_t h[NHOT];
    hot_keys(L, h);
    for (int d = 0; d < NHOT; ++d) {
        uint16_t kr[D], vr[D];
        for (int c = 0; c < D; ++c) {
            kr[c] = enc(dt, on && c == d ? HOT : 0.0);
            vr[c] = enc(dt, on ? hot_value(d, c) : 1.0);
        }
        put_row(g->k, h[d], kr);
        put_row(g->v, h[d], vr);
    }
}

static void put_queries(const long_dev_t *g, opp_dtype_t dt, const int8_t dims[LQ]) {
    uint16_t q[LQ * D];
    for (int t = 0; t < LQ; ++t) {
        for (int c = 0; c < D; ++c) {
            q[t * D + c] = enc(dt, dims[t] == c ? HOT : 0.0);
        }
    }
    opp_test_h2d(g->q, q, sizeof(q));
}

// --- runs

/* One case of part (a). */
typedef struct long_case {
    const char *name;
    opp_dtype_t dtype;
    int64_t lkv;
    int32_t causal;
} long_case_t;

static void long_desc(const long_case_t *c, opp_algo_t algo, opp_attention_desc_t *desc) {
    opp_attention_desc_init(desc);
    desc->q_dtype = desc->k_dtype = desc->v_dtype = desc->out_dtype = c->dtype;
    desc->batch = 1;
    desc->num_heads = desc->kv_num_heads = 1;
    desc->head_size = D;
    desc->total_q = desc->max_seqlen_q = LQ;
    desc->total_kv = c->lkv;
    desc->max_seqlen_kv = (int32_t)c->lkv;
    desc->scale = 1.0f;
    desc->is_causal = c->causal;
    desc->algo = algo;
}

/* Poisons out / lse (NaN), runs, synchronizes, checks the device status,
 * downloads n rows. row: NULL (the public entry) or a dispatch row. */
static double run_packed(const long_dev_t *g, const long_case_t *c, opp_algo_t algo,
                         const opp__kernel_row_t *row, uint16_t *out, float *lse) {
    opp_attention_desc_t desc;
    long_desc(c, algo, &desc);
    const int32_t cu_q[2] = {0, LQ}, cu_kv[2] = {0, (int32_t)c->lkv};
    opp_test_h2d(g->cu_q, cu_q, sizeof(cu_q));
    opp_test_h2d(g->cu_kv, cu_kv, sizeof(cu_kv));
    opp_test_gpu_fill(g->out, 0xFF, LQ * D * sizeof(uint16_t));
    opp_test_gpu_fill(g->lse, 0xFF, LQ * sizeof(float));
    opp_test_gpu_sync();
    const double t0 = opp_progress_now_s();
    if (row == NULL) {
        const opp_varlen_t varlen = {g->cu_q, g->cu_kv};
        assert_opp_ok(opp_packed_attention_fwd_lse(&desc, &varlen, g->q, g->k, g->v, g->out, g->lse,
                                                   g->ws, g->ws_bytes, NULL));
    } else {
        opp__problem_t p;
        assert_opp_ok(opp__problem_from_desc(&desc, &p));
        assert_opp_ok(opp__problem_bind(&p, g->cu_q, g->cu_kv, NULL, g->q, g->k, g->v, g->out,
                                        "out", g->lse));
        assert_opp_ok(opp__attention_run_row(&p, row, g->ws, g->ws_bytes, NULL));
    }
    opp_test_gpu_sync();
    const double secs = opp_progress_now_s() - t0;
    assert_opp_ok(opp_attention_device_status(g->ws, g->ws_bytes, NULL));
    opp_test_d2h(out, g->out, LQ * D * sizeof(uint16_t));
    opp_test_d2h(lse, g->lse, LQ * sizeof(float));
    return secs;
}

/* The Attention-24 entry, 4D, B = 1: q = the packed queries 64..72,
 * S_kv = ROWS_ALLOC keys of which nonpad are valid. */
static double run_a24(const long_dev_t *g, const long_case_t *c, uint16_t *y, float *lse) {
    opp_attention24_desc_t d;
    opp_attention24_desc_init(&d);
    d.q_dtype = d.k_dtype = d.v_dtype = d.out_dtype = c->dtype;
    d.input_rank = 4;
    d.batch = 1;
    d.num_heads = d.kv_num_heads = 1;
    d.head_size = D;
    d.q_seqlen = LQ - 64;
    d.kv_seqlen = ROWS_ALLOC;
    d.scale = 1.0f;
    d.is_causal = c->causal;
    d.algo = OPP_ALGO_FAST;
    size_t ws = 0;
    assert_opp_ok(opp_attention24_nonpad_workspace_size(&d, &ws));
    assert_true(ws <= g->ws_bytes);
    const int64_t nonpad = c->lkv;
    opp_test_h2d(g->nonpad, &nonpad, sizeof(nonpad));
    opp_test_gpu_fill(g->out, 0xFF, LQ * D * sizeof(uint16_t));
    opp_test_gpu_fill(g->lse, 0xFF, LQ * sizeof(float));
    opp_test_gpu_sync();
    const double t0 = opp_progress_now_s();
    assert_opp_ok(opp_attention24_nonpad_fwd_lse(&d, g->nonpad, g->q + 64 * D, g->k, g->v, g->out,
                                                 g->lse, g->ws, g->ws_bytes, NULL));
    opp_test_gpu_sync();
    const double secs = opp_progress_now_s() - t0;
    assert_opp_ok(opp_attention_device_status(g->ws, g->ws_bytes, NULL));
    opp_test_d2h(y, g->out, (LQ - 64) * D * sizeof(uint16_t));
    opp_test_d2h(lse, g->lse, (LQ - 64) * sizeof(float));
    return secs;
}

// --- checks

/* Rows t0 .. t0 + n - 1 (got[0] is row t0) against the oracle: EXACT bit
 * for bit (LSE 1 float ulp), FAST within the contract bound (file
 * comment). @return : the number of bit-exact out elements. */
static int check_rows(const long_case_t *c, opp_algo_t algo, const int8_t dims[LQ], int t0, int n,
                      int n_main, const uint16_t *got, const float *lse, const char *what) {
    const opp_dtype_t dt = c->dtype;
    const double rel = dt == OPP_DTYPE_BF16 ? 0x1p-7 : 0x1p-9;
    const double bound = rel * (1.0 + 0.5 * 1.0); /* max |oracle| <= 1, max |V| = 1 */
    int bad = 0, exact_bits = 0;
    for (int t = t0; t < t0 + n; ++t) {
        double want[D], want_lse;
        oracle(c->lkv, c->causal, dims, t, want, &want_lse);
        /* FAST's main kernel (tokens t0 .. t0 + n_main - 1), no hot key seen
         * (LSE log(n) < 32, not 64): out is beyond fp32 accumulation (file
         * comment) and not checked; said once per token */
        const int fp32_limit = algo == OPP_ALGO_FAST && t < t0 + n_main && want_lse < 32.0 &&
                               c->lkv > ((int64_t)1 << 24);
        if (fp32_limit) {
            printf("%s: token %d sees no hot key in the main kernel: %lld equal weights, out not "
                   "checked (fp32 accumulation), LSE checked\n",
                   what, t, (long long)c->lkv);
        }
        for (int col = 0; col < D && !fp32_limit; ++col) {
            const uint16_t w = enc(dt, want[col]);
            /* the oracle's rounding is insensitive to the paths' errors */
            assert_int_equal(enc(dt, want[col] * (1.0 + 0x1p-20)), w);
            assert_int_equal(enc(dt, want[col] * (1.0 - 0x1p-20)), w);
            const uint16_t g = got[(t - t0) * D + col];
            const double gv = dt == OPP_DTYPE_BF16 ? opp__bf16_to_double(g) : opp__f16_to_double(g);
            exact_bits += g == w;
            const int ok = algo == OPP_ALGO_EXACT ? g == w : fabs(gv - want[col]) <= bound;
            if (!ok && bad++ < OPP_TEST_MAX_REPORTED) {
                print_error("%s: token %d (column %d hot, %s) out[%d] = 0x%04x (%.9g), oracle "
                            "0x%04x (%.9g)\n",
                            what, t, dims[t], c->causal ? "causal" : "not causal", col, g, gv, w,
                            want[col]);
            }
        }
        const float wl = (float)want_lse, gl = lse[t - t0];
        uint32_t a, b;
        memcpy(&a, &wl, 4);
        memcpy(&b, &gl, 4);
        const int ok_lse = algo == OPP_ALGO_EXACT
                               ? opp_test_ulp_distance(a, b, OPP_DTYPE_F32) <= 1
                               : fabs((double)gl - want_lse) <= 1e-3 + 1e-4 * fabs(want_lse);
        if (!ok_lse && bad++ < OPP_TEST_MAX_REPORTED) {
            print_error("%s: token %d lse %.9g, oracle %.9g\n", what, t, (double)gl, want_lse);
        }
    }
    if (bad != 0) {
        print_error("%s: %d mismatches\n", what, bad);
    }
    assert_int_equal(bad, 0);
    return exact_bits;
}

/* The first FAST row of the table on which the portable flash kernel of
 * dtype serves D (SM 80: not the Hopper rows). */
static const opp__kernel_row_t *flash_row(opp_dtype_t dt) {
    for (int i = 0; i < OPP__KERNEL_COUNT; ++i) {
        const opp__kernel_row_t *r = &opp__kernel_table[i];
        if (r->algo == OPP_ALGO_FAST && r->dtype == dt && r->sm == 80 && r->dmax >= D) {
            return r;
        }
    }
    fail_msg("no flash row for %s", opp_dtype_name(dt));
    return NULL;
}

/* The EXACT row of the smallest BM (then BN 128) for dtype dt: every EXACT
 * row gives the same bits (DESIGN.md section 3), and one sequence's block
 * walks all 2^24 key tiles alone, each tile's work ~ BM x BN: bm64 took
 * 1473 ms for 2^22 keys on an H200 (bench/RESULTS.md, seventh session), ~754
 * s at 2^31 - 127, past one device command's 600 s; bm32 does half the work
 * per tile: 538.9 s there (eighth session). */
static const opp__kernel_row_t *exact_row(opp_dtype_t dt) {
    const opp__kernel_row_t *best = NULL;
    for (int i = 0; i < OPP__KERNEL_COUNT; ++i) {
        const opp__kernel_row_t *r = &opp__kernel_table[i];
        if (r->algo == OPP_ALGO_EXACT && r->dtype == dt && r->dmax >= D &&
            (best == NULL || r->bm < best->bm || (r->bm == best->bm && r->bn > best->bn))) {
            best = r;
        }
    }
    if (best == NULL) {
        fail_msg("no EXACT row for %s", opp_dtype_name(dt));
    }
    return best;
}

/* One packed run of case c with algo (or row) and its check. */
static void run_and_check(const long_dev_t *g, const long_case_t *c, opp_algo_t algo,
                          const opp__kernel_row_t *row, const int8_t dims[LQ], uint16_t *out,
                          float *lse) {
    const char *kernel = row != NULL ? row->name : "?";
    int32_t sm = 0;
    opp_attention_desc_t desc;
    long_desc(c, algo, &desc);
    if (row == NULL && opp_device_sm_arch(&sm) == OPP_STATUS_SUCCESS) {
        assert_opp_ok(opp_attention_kernel_query(&desc, sm, &kernel));
    }
    const double secs = run_packed(g, c, algo, row, out, lse);
    char what[256];
    snprintf(what, sizeof(what), "%s %s L_kv=%lld %s L_q=%d %s (%s)", c->name,
             opp_dtype_name(c->dtype), (long long)c->lkv, c->causal ? "causal" : "not causal", LQ,
             algo == OPP_ALGO_EXACT ? "EXACT" : "FAST", kernel);
    /* packed: the last OPP__SPLIT_MOST(1) tokens split, the first MAIN run
     * in the main kernel */
    const int bits = check_rows(c, algo, dims, 0, LQ, MAIN, out, lse, what);
    printf("edge31: %s: %.1f s; %d tokens x %d columns match the oracle (%d bit-exact), LSE too\n",
           what, secs, LQ, D, bits);
    fflush(stdout);
}

// --- (a)

static void test_edge31_long_sequence(void **state) {
    (void)state;
    OPP_FT_REQUIRE_DEVICE();
    /* OPP_EDGE31_EXACT=1 (=2): EXACT alone on a2 (a1), nothing else */
    const long exact_case = opp_test_env_long("OPP_EDGE31_EXACT", 0);
    const int flash = opp_test_env_long("OPP_EDGE31_FLASH", 0) > 0 && exact_case == 0;
    const long_case_t cases[2] = {{"a1", OPP_DTYPE_F16, L_LONG, 0},
                                  {"a2", OPP_DTYPE_BF16, L_SHORTER, 1}};
    opp_attention_desc_t desc;
    long_desc(&cases[0], OPP_ALGO_FAST, &desc);
    long_dev_t g;
    memset(&g, 0, sizeof(g));
    assert_opp_ok(opp_packed_attention_workspace_size(&desc, &g.ws_bytes)); /* the largest */
    const size_t kv_bytes = (size_t)ROWS_ALLOC * D * sizeof(uint16_t);
    opp_e31_require('a', 2 * kv_bytes + g.ws_bytes + ((size_t)1 << 20),
                    "part (a), one sequence of 2^31 - 1 keys");
    const double t_start = opp_progress_now_s();
    g.k = opp_test_gpu_alloc(kv_bytes);
    g.v = opp_test_gpu_alloc(kv_bytes);
    g.q = opp_test_gpu_alloc(LQ * D * sizeof(uint16_t));
    g.out = opp_test_gpu_alloc(LQ * D * sizeof(uint16_t));
    g.lse = opp_test_gpu_alloc(LQ * sizeof(float));
    g.cu_q = opp_test_gpu_alloc(2 * sizeof(int32_t));
    g.cu_kv = opp_test_gpu_alloc(2 * sizeof(int32_t));
    g.nonpad = opp_test_gpu_alloc(sizeof(int64_t));
    g.ws = opp_test_gpu_alloc(g.ws_bytes);
    opp_test_gpu_fill(g.k, 0, kv_bytes); /* +0.0 in f16 and bf16 */
    printf("edge31: part (a): K, V %.1f GiB each, workspace %.2f GiB; %d query tokens (%d in the "
           "main FAST kernel, %d split-KV)\n",
           (double)kv_bytes / 1073741824.0, (double)g.ws_bytes / 1073741824.0, LQ, MAIN, LQ - MAIN);
    uint16_t out[LQ * D], a2_out[LQ * D], y[(LQ - 64) * D];
    float lse[LQ], a2_lse[LQ], y_lse[LQ - 64];
    for (int i = 0; i < 2; ++i) {
        const long_case_t *c = &cases[i];
        if (exact_case != 0 && i != (exact_case == 1 ? 1 : 0)) {
            continue;
        }
        const double t_fill = opp_progress_now_s();
        opp_e31_cuda_ok(opp_edge31_fill16(g.v, (size_t)ROWS_ALLOC * D, enc(c->dtype, 1.0)),
                        "V fill");
        set_hot(&g, c->dtype, c->lkv, 1);
        if (c->lkv < ROWS_ALLOC) { /* rows past the sequence: NaN, for the Attention-24 run */
            const uint16_t nan = c->dtype == OPP_DTYPE_BF16 ? 0x7FC0u : 0x7E00u;
            const size_t from = (size_t)c->lkv * D, n = (size_t)(ROWS_ALLOC - c->lkv) * D;
            opp_e31_cuda_ok(opp_edge31_fill16(g.k + from, n, nan), "K padding");
            opp_e31_cuda_ok(opp_edge31_fill16(g.v + from, n, nan), "V padding");
        }
        int8_t dims[LQ];
        query_dims(c->causal, dims);
        put_queries(&g, c->dtype, dims);
        opp_test_gpu_sync();
        printf("edge31: %s: inputs written on the device in %.2f s\n", c->name,
               opp_progress_now_s() - t_fill);
        if (exact_case != 0) {
            run_and_check(&g, c, OPP_ALGO_EXACT, exact_row(c->dtype), dims, out, lse);
            continue;
        }
        run_and_check(&g, c, OPP_ALGO_FAST, NULL, dims, out, lse);
        if (i == 1) {
            memcpy(a2_out, out, sizeof(out));
            memcpy(a2_lse, lse, sizeof(lse));
        }
        if (flash) {
            run_and_check(&g, c, OPP_ALGO_FAST, flash_row(c->dtype), dims, out, lse);
        }
        if (i == 1) { /* the same 9 split rows through the Attention-24 entry */
            const double secs = run_a24(&g, c, y, y_lse);
            char what[160];
            snprintf(what, sizeof(what),
                     "a3 %s Attention-24 4D S_kv=%d nonpad=%lld causal S_q=%d FAST",
                     opp_dtype_name(c->dtype), ROWS_ALLOC, (long long)c->lkv, LQ - 64);
            const int bits = check_rows(c, OPP_ALGO_FAST, dims, 64, LQ - 64, 0, y, y_lse, what);
            assert_int_equal(opp_test_bits_equal(y, a2_out + 64 * D, (LQ - 64) * D, c->dtype, what),
                             0);
            assert_int_equal(opp_test_bits_equal(y_lse, a2_lse + 64, LQ - 64, OPP_DTYPE_F32, what),
                             0);
            printf("edge31: %s: %.1f s; %d tokens match the oracle (%d bit-exact) and the packed "
                   "run's tokens 64..72 bit for bit, out and LSE; NaN padding never read\n",
                   what, secs, LQ - 64, bits);
        }
        if (i == 0) {
            set_hot(&g, c->dtype, c->lkv, 0);
        }
    }
    if (exact_case == 0) {
        printf("edge31: EXACT at L_kv ~ 2^31 not run (OPP_EDGE31_EXACT=1: the bf16 causal case, "
               "=2: the f16 one, each alone, several minutes on an H200)\n");
    }
    void *bufs[9] = {g.k, g.v, g.q, g.out, g.lse, g.cu_q, g.cu_kv, g.nonpad, g.ws};
    for (int i = 0; i < 9; ++i) {
        opp_test_gpu_free(bufs[i]);
    }
    printf("edge31: part (a) done in %.1f s\n", opp_progress_now_s() - t_start);
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0); /* each line out at once: a timeout keeps the progress */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_edge31_long_sequence),
        cmocka_unit_test(test_edge31_big_batch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
