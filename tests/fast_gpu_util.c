/*
 * fast_gpu_util.c - see fast_gpu_util.h. The device side is the harness's
 * (harness/gpu_packed.h, harness/gpu_a24.h); runs through one chosen row
 * use the library's internal run path (lib/internal/attention_run.h).
 */
#include "tests/fast_gpu_util.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/gpu_a24.h"
#include "harness/gpu_packed.h"
#include "harness/gpu_status.h"
#include "harness/rng.h"
#include "lib/internal/attention_run.h"
#include "numerics/fp_convert.h"
#include "tests/exact_gpu_util.h"
#include "tests/gpu_util.h"
#include "tests/test_util.h"

int opp_ft_device_ok(void) {
    static int cached = -1;
    if (cached < 0) {
        int32_t sm = 0;
        cached =
            opp_test_gpu_count() > 0 && opp_device_sm_arch(&sm) == OPP_STATUS_SUCCESS && sm >= 80;
        if (!cached && opp_test_gpu_count() > 0) {
            printf("FAST needs compute capability 8.0 or newer (this device: %d): skipped\n",
                   (int)sm);
        }
    }
    return cached;
}

size_t opp_ft_device_smem_optin(void) {
    int dev = 0, bytes = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) !=
            cudaSuccess) {
        fail_msg("cudaDevAttrMaxSharedMemoryPerBlockOptin could not be read");
    }
    return (size_t)bytes;
}

int32_t opp_ft_cap_len(int32_t len) {
    const long cap = opp_test_env_long("OPP_GPU_TEST_MAX_LEN", 0);
    return cap > 0 && len > cap ? (int32_t)cap : len;
}

// --- generated batches

/* (D, Dv): every FAST bucket, and Dv != D across buckets. */
static const int32_t head_pairs[][2] = {{32, 32},   {64, 64},  {96, 96},   {128, 128}, {192, 192},
                                        {256, 256}, {64, 256}, {192, 128}, {128, 64},  {40, 72},
                                        {8, 16},    {80, 80},  {248, 200}};
#define N_HEAD_PAIRS ((long)(sizeof(head_pairs) / sizeof(head_pairs[0])))

/* Mostly short, sometimes 0 or 1, sometimes over several 64-key blocks. */
static int32_t rand_len(uint64_t *st) {
    const int32_t r = opp_rng_int(st, 0, 19);
    if (r == 0) {
        return 0;
    }
    if (r <= 2) {
        return 1;
    }
    return r <= 11 ? opp_rng_int(st, 2, 64) : opp_rng_int(st, 65, 300);
}

/* One sequence's (L_q, L_kv): self-attention, independent, L_q > L_kv
 * (a negative causal offset), or a few queries on many keys. */
static void rand_lengths(uint64_t *st, int32_t *lq, int32_t *lkv) {
    switch (opp_rng_int(st, 0, 3)) {
    case 0:
        *lq = *lkv = rand_len(st);
        break;
    case 1:
        *lq = rand_len(st);
        *lkv = rand_len(st);
        break;
    case 2:
        *lq = 1 + rand_len(st);
        *lkv = opp_rng_int(st, 0, *lq - 1);
        break;
    default:
        *lq = opp_rng_int(st, 1, 8);
        *lkv = rand_len(st);
        break;
    }
}

/* Decode-shaped lengths: 0..16 queries (mostly 1) against 0..5000 keys,
 * often at the split-KV edges (OPP__SPLIT_KEYS = 1024 keys per split; the
 * split threshold, 512 keys from G 4 and 1024 below; 8 splits and more,
 * where the combine stops keeping a row's splits in registers): such
 * sequences run as splits when their G L_q rows fit OPP__SPLIT_ROWS. */
static void decode_lengths(uint64_t *st, int32_t *lq, int32_t *lkv) {
    static const int32_t edges[14] = {511,  512,  513,  1023, 1024, 1025, 2047,
                                      2048, 2049, 3073, 4096, 8192, 8193, 9217};
    const int k = opp_rng_int(st, 0, 5);
    *lq = k == 0 ? 0 : (k == 1 ? opp_rng_int(st, 2, 16) : 1);
    *lkv = opp_rng_int(st, 0, 2) == 0 ? edges[opp_rng_int(st, 0, 13)] : opp_rng_int(st, 0, 5000);
}

/* One long sequence (2k..8k): both long, decode on a long prefix, or more
 * queries than keys. */
static void long_lengths(uint64_t *st, int32_t *lq, int32_t *lkv) {
    const int32_t n = opp_rng_int(st, 2048, 8192);
    switch (opp_rng_int(st, 0, 2)) {
    case 0:
        *lq = *lkv = n;
        break;
    case 1:
        *lq = opp_rng_int(st, 1, 300);
        *lkv = n;
        break;
    default:
        *lq = n;
        *lkv = n - opp_rng_int(st, 1, 500);
        break;
    }
}

void opp_ft_gen_batch(long i, uint64_t seed, opp_lb_t *lb) {
    opp_ft_gen_batch_dtype(i, seed, (i & 1) ? OPP_DTYPE_BF16 : OPP_DTYPE_F16, lb);
}

void opp_ft_gen_batch_dtype(long i, uint64_t seed, opp_dtype_t dtype, opp_lb_t *lb) {
    uint64_t st = seed + (uint64_t)i * 0x9E3779B97F4A7C15ull;
    (void)opp_rng_u64(&st);
    const int32_t *hd = head_pairs[(i / 2) % N_HEAD_PAIRS];
    const int is_long = i % 25 == 24;
    const int is_decode = i % 5 == 2 && !is_long;     /* split-KV shapes */
    static const int32_t ratios[5] = {1, 2, 4, 8, 0}; /* 0: MQA */
    const int32_t ratio = ratios[opp_rng_int(&st, 0, 4)];
    int32_t hkv, hq;
    if (is_long) {
        hkv = 1;
        hq = 1 << opp_rng_int(&st, 0, 2);
    } else if (ratio == 0) {
        hkv = 1;
        hq = opp_rng_int(&st, 2, 12);
    } else {
        hkv = opp_rng_int(&st, 1, ratio == 8 ? 2 : 3);
        hq = hkv * ratio;
    }
    const int32_t causal = opp_rng_int(&st, 0, 1);
    const float softcap = opp_rng_int(&st, 0, 2) == 0 ? (float)(5.0 + 45.0 * opp_rng_unit(&st)) : 0;
    const float scale = opp_rng_int(&st, 0, 2) == 0 ? (float)(0.02 + 0.5 * opp_rng_unit(&st)) : 0;
    const int32_t batch = is_long ? opp_rng_int(&st, 1, 2) : opp_rng_int(&st, 1, 6);
    int32_t lq[6], lkv[6];
    for (int32_t b = 0; b < batch; ++b) {
        if (is_long && b == 0) {
            long_lengths(&st, &lq[b], &lkv[b]);
        } else if (is_decode) {
            decode_lengths(&st, &lq[b], &lkv[b]);
        } else {
            rand_lengths(&st, &lq[b], &lkv[b]);
        }
        lq[b] = opp_ft_cap_len(lq[b]);
        lkv[b] = opp_ft_cap_len(lkv[b]);
    }
    assert_int_equal(opp_lb_from_lengths(lb, dtype, batch, lq, lkv, hq, hkv, hd[0], hd[1], scale,
                                         causal, softcap, opp_rng_u64(&st)),
                     0);
}

void opp_ft_gen_like(const opp_lb_t *lb, int32_t n, uint64_t seed, int nan_values, opp_lb_t *out) {
    uint64_t st = seed;
    int32_t *lq = malloc(sizeof(int32_t) * (size_t)n), *lkv = malloc(sizeof(int32_t) * (size_t)n);
    assert_true(lq != NULL && lkv != NULL);
    for (int32_t b = 0; b < n; ++b) {
        lq[b] = opp_ft_cap_len(opp_rng_int(&st, 0, 400));
        lkv[b] = opp_ft_cap_len(opp_rng_int(&st, 0, 400));
    }
    const int rc = opp_lb_from_lengths(out, lb->dtype, n, lq, lkv, lb->num_heads, lb->kv_num_heads,
                                       lb->head_size, lb->v_head_size, lb->scale, lb->is_causal,
                                       lb->softcap, opp_rng_u64(&st));
    free(lq);
    free(lkv);
    assert_int_equal(rc, 0);
    if (nan_values) {
        const size_t q = (size_t)out->total_q * (size_t)out->num_heads * (size_t)out->head_size;
        const size_t k = (size_t)out->total_kv * (size_t)out->kv_num_heads;
        opp_lb_poison_fill(out->q, q, out->dtype, OPP_LB_POISON_NAN);
        opp_lb_poison_fill(out->k, k * (size_t)out->head_size, out->dtype, OPP_LB_POISON_NAN);
        opp_lb_poison_fill(out->v, k * (size_t)out->v_head_size, out->dtype, OPP_LB_POISON_NAN);
    }
}

void opp_ft_gen_for_row(const opp__kernel_row_t *row, int v, uint64_t seed, opp_lb_t *lb) {
    const int32_t dmax = row->dmax;
    const int32_t d[3] = {dmax, dmax > 32 ? dmax - 24 : 8, dmax};
    const int32_t dv[3] = {dmax, dmax, dmax / 2};
    const int32_t hq[3] = {8, 6, 3}, hkv[3] = {2, 1, 3};
    const float softcap[3] = {0.0f, 20.0f, 7.5f};
    int32_t lq[5] = {0, 1, 200, 300, 77}, lkv[5] = {5, 0, 140, 300, 260};
    for (int b = 0; b < 5; ++b) {
        lq[b] = opp_ft_cap_len(lq[b] + 13 * v);
        lkv[b] = opp_ft_cap_len(lkv[b] > 0 ? lkv[b] + 29 * v : 0);
    }
    lq[0] = 0;
    assert_int_equal(opp_lb_from_lengths(lb, row->dtype, 5, lq, lkv, hq[v], hkv[v], d[v], dv[v],
                                         v == 2 ? 0.3f : 0.0f, v != 1, softcap[v], seed),
                     0);
}

// --- runs

void opp_ft_res_free(opp_ft_res_t *r) {
    free(r->out);
    free(r->lse);
    memset(r, 0, sizeof(*r));
}

/* A device float32 [n] filled with NaN (all bits set). */
static float *nan_floats(size_t n) {
    float *p = opp_test_gpu_alloc(n * sizeof(float));
    opp_test_gpu_fill(p, 0xFF, n * sizeof(float));
    return p;
}

/* n floats from the device into a new host buffer. */
static float *download_floats(const float *dev, size_t n) {
    float *h = malloc((n + 1) * sizeof(float));
    assert_non_null(h);
    opp_test_d2h(h, dev, n * sizeof(float));
    return h;
}

/* Waits for the run and checks what the device guard found. */
static void finish_run(void *workspace, size_t workspace_bytes) {
    opp_test_gpu_sync();
    assert_opp_ok(opp_attention_device_status(workspace, workspace_bytes, NULL));
}

void opp_ft_run_packed(const opp_lb_t *lb, opp_algo_t algo, const opp__kernel_row_t *row,
                       opp_ft_res_t *res) {
    opp_test_packed_dev_t dev;
    opp_test_packed_upload(lb, &dev);
    const size_t nl = (size_t)lb->num_heads * (size_t)lb->total_q;
    opp_hgpu_packed_call_t c = {.dev = &dev, .stream = NULL, .lse = nan_floats(nl)};
    opp_lb_packed_desc(lb, &c.desc);
    c.desc.algo = row != NULL ? row->algo : algo;
    if (row == NULL) {
        assert_opp_ok(opp_hgpu_packed_run(&c));
    } else {
        opp__problem_t p;
        assert_opp_ok(opp__problem_from_desc(&c.desc, &p));
        assert_opp_ok(opp__problem_bind(&p, dev.cu_q, dev.cu_kv, NULL, dev.q, dev.k, dev.v, dev.out,
                                        "out", c.lse));
        assert_opp_ok(opp__attention_run_row(&p, row, dev.workspace, dev.workspace_bytes, NULL));
    }
    finish_run(dev.workspace, dev.workspace_bytes);
    res->out = opp_test_packed_download(&dev);
    res->lse = download_floats(c.lse, nl);
    opp_test_gpu_free(c.lse);
    opp_test_packed_free(&dev);
}

const char *opp_ft_kernel_of(const opp_lb_t *lb, opp_algo_t algo, int32_t sm) {
    opp_attention_desc_t d;
    opp_lb_packed_desc(lb, &d);
    d.algo = algo;
    const char *name = NULL;
    assert_opp_ok(opp_attention_kernel_query(&d, sm, &name));
    return name;
}

void opp_ft_nonpad_call(const opp_lb_padded_t *pad, const opp_ref_attention24_tensors_t *dev,
                        opp_algo_t algo, opp_hgpu_nonpad_call_t *c) {
    memset(c, 0, sizeof(*c));
    opp_hgpu_nonpad_desc(&pad->desc, &c->desc);
    c->desc.algo = algo;
    c->nonpad = dev->nonpad_kv_seqlen;
    c->q = dev->q;
    c->k = dev->k;
    c->v = dev->v;
    c->y = dev->y;
    assert_opp_ok(opp_attention24_nonpad_workspace_size(&c->desc, &c->workspace_bytes));
    c->workspace = opp_test_gpu_alloc(c->workspace_bytes);
}

void opp_ft_run_padded(const opp_lb_t *lb, int32_t rank, opp_lb_poison_t poison, opp_algo_t algo,
                       const opp__kernel_row_t *row, opp_ft_res_t *res) {
    opp_lb_padded_t pad;
    assert_int_equal(opp_lb_to_padded(lb, rank, poison, &pad), 0);
    const opp_ref_attention24_tensors_t host = opp_lb_padded_tensors(&pad);
    opp_ref_attention24_tensors_t dev; /* y poisoned with NaN */
    opp_hgpu_a24_upload(&pad.desc, &host, OPP_HGPU_POISON_NAN, &dev);
    const size_t nl = (size_t)lb->batch * (size_t)lb->num_heads * (size_t)pad.desc.q_seqlen;
    opp_hgpu_nonpad_call_t c;
    opp_ft_nonpad_call(&pad, &dev, row != NULL ? row->algo : algo, &c);
    c.lse = nan_floats(nl);
    if (row == NULL) {
        assert_opp_ok(opp_hgpu_nonpad_run(&c));
    } else {
        opp__problem_t p;
        assert_opp_ok(opp__problem_from_attention24(&c.desc, &p));
        assert_opp_ok(opp__problem_bind(&p, NULL, NULL, c.nonpad, c.q, c.k, c.v, c.y, "y", c.lse));
        assert_opp_ok(opp__attention_run_row(&p, row, c.workspace, c.workspace_bytes, NULL));
    }
    finish_run(c.workspace, c.workspace_bytes);
    opp_hgpu_a24_download(&pad.desc, &dev, &host); /* y into pad.y */
    float *lse_padded = download_floats(c.lse, nl);
    res->out = malloc((opp_test_out_elems(lb) + 1) * opp_dtype_size(lb->dtype));
    res->lse = malloc(((size_t)lb->num_heads * (size_t)lb->total_q + 1) * sizeof(float));
    assert_true(res->out != NULL && res->lse != NULL);
    opp_lb_padded_valid_rows(lb, &pad, pad.y, res->out);
    opp_lb_padded_valid_lse(lb, &pad, lse_padded, res->lse);
    free(lse_padded);
    opp_test_gpu_free(c.lse);
    opp_test_gpu_free(c.workspace);
    OPP_HGPU_CHECK(opp_hgpu_a24_free(&dev));
    opp_lb_padded_free(&pad);
}

void opp_ft_strided_desc(const opp_lb_t *lb, const int64_t stride[4], opp_algo_t algo,
                         opp_attention_desc_t *desc) {
    opp_lb_packed_desc(lb, desc);
    desc->algo = algo;
    desc->q_row_stride = stride[0];
    desc->k_row_stride = stride[1];
    desc->v_row_stride = stride[2];
    desc->out_row_stride = stride[3];
}

opp_status_t opp_ft_run_strided(const opp_lb_t *lb, const int64_t stride[4], opp_algo_t algo,
                                opp_ft_res_t *res) {
    memset(res, 0, sizeof(*res));
    opp_attention_desc_t desc;
    opp_ft_strided_desc(lb, stride, algo, &desc);
    const size_t es = opp_dtype_size(lb->dtype);
    const int64_t w[4] = {
        (int64_t)lb->num_heads * lb->head_size, (int64_t)lb->kv_num_heads * lb->head_size,
        (int64_t)lb->kv_num_heads * lb->v_head_size, (int64_t)lb->num_heads * lb->v_head_size};
    const int64_t rows[4] = {lb->total_q, lb->total_kv, lb->total_kv, lb->total_q};
    const void *src[3] = {lb->q, lb->k, lb->v};
    char *host[4];
    void *dev[4];
    for (int t = 0; t < 4; ++t) {
        const size_t n = (size_t)(rows[t] * stride[t]) + 1;
        host[t] = malloc(n * es);
        assert_non_null(host[t]);
        opp_lb_poison_fill(host[t], n, lb->dtype, OPP_LB_POISON_NAN);
        for (int64_t r = 0; t < 3 && r < rows[t]; ++r) {
            memcpy(host[t] + (size_t)(r * stride[t]) * es,
                   (const char *)src[t] + (size_t)(r * w[t]) * es, (size_t)w[t] * es);
        }
        dev[t] = opp_hgpu_upload(host[t], n * es);
    }
    const size_t cb = ((size_t)lb->batch + 1) * sizeof(int32_t);
    const opp_varlen_t varlen = {opp_hgpu_upload(lb->cu_q, cb), opp_hgpu_upload(lb->cu_kv, cb)};
    const size_t nl = (size_t)lb->num_heads * (size_t)lb->total_q;
    float *lse = nan_floats(nl);
    opp_attention_desc_t dense; /* the workspace depends on neither strides nor algo */
    opp_lb_packed_desc(lb, &dense);
    size_t ws_bytes = 0;
    assert_opp_ok(opp_packed_attention_workspace_size(&dense, &ws_bytes));
    void *ws = opp_test_gpu_alloc(ws_bytes);
    const opp_status_t st = opp_packed_attention_fwd_lse(&desc, &varlen, dev[0], dev[1], dev[2],
                                                         dev[3], lse, ws, ws_bytes, NULL);
    if (st == OPP_STATUS_SUCCESS) {
        opp_test_gpu_sync();
        assert_opp_ok(opp_attention_device_status(ws, ws_bytes, NULL));
        const size_t nout = (size_t)(rows[3] * stride[3]) + 1;
        char *out = malloc(nout * es);
        res->out = malloc((size_t)(rows[3] * w[3] + 1) * es);
        res->lse = malloc((nl + 1) * sizeof(float));
        assert_true(out != NULL && res->out != NULL && res->lse != NULL);
        opp_test_d2h(out, dev[3], nout * es);
        opp_test_d2h(res->lse, lse, nl * sizeof(float));
        for (int64_t r = 0; r < rows[3]; ++r) {
            const size_t at = (size_t)(r * stride[3]) * es, row_bytes = (size_t)w[3] * es;
            memcpy((char *)res->out + (size_t)r * row_bytes, out + at, row_bytes);
            assert_memory_equal(out + at + row_bytes, host[3] + at + row_bytes,
                                (size_t)(stride[3] - w[3]) * es);
        }
        free(out);
    }
    for (int t = 0; t < 4; ++t) {
        free(host[t]);
        opp_test_gpu_free(dev[t]);
    }
    opp_test_gpu_free((void *)varlen.cu_seqlens_q);
    opp_test_gpu_free((void *)varlen.cu_seqlens_kv);
    opp_test_gpu_free(lse);
    opp_test_gpu_free(ws);
    return st;
}
