/*
 * attention24_gpu_run.c - host-tensor wrapper around the cuBLAS
 * Attention-24 reference for tests (see attention24_gpu_run.h).
 */
#include "tests/attention24_gpu_run.h"

#include <cuda_runtime_api.h>
#include <stdlib.h>
#include <string.h>

#include "tests/gpu_util.h"

/* Device copy of bytes of src (NULL stays NULL). */
static void *upload(const void *src, size_t bytes) {
    if (src == NULL) {
        return NULL;
    }
    void *dst = opp_test_gpu_alloc(bytes);
    opp_test_h2d(dst, src, bytes);
    return dst;
}

/* Poisoned device buffer for an output the caller wants (NULL: none). */
static void *device_output(const void *host, size_t bytes) {
    if (host == NULL) {
        return NULL;
    }
    void *dst = opp_test_gpu_alloc(bytes);
    opp_test_gpu_fill(dst, 0xFF, bytes);
    return dst;
}

opp_status_t opp_a24g_run_host(opp_ref_gpu_t *ref, const opp_ref_attention24_desc_t *a,
                               const opp_ref_attention24_tensors_t *t, opp_a24g_ws_t *ws,
                               struct CUstream_st *stream) {
    opp_ref_attention24_sizes_t n;
    opp_ref_attention24_sizes(a, &n);
    const size_t es = opp_dtype_size(a->dtype);
    const size_t mask_es = a->mask_dtype == OPP_DTYPE_BOOL_ ? 1 : es;
    size_t need = 0;
    assert_opp_ok(opp_ref_gpu_attention24_workspace_size(a, &need));
    if (need > ws->bytes) {
        opp_a24g_ws_free(ws);
        ws->ptr = opp_test_gpu_alloc(need);
        ws->bytes = need;
    }
    opp_ref_attention24_tensors_t d;
    memset(&d, 0, sizeof(d));
    d.q = upload(t->q, n.q * es);
    d.k = upload(t->k, n.k * es);
    d.v = upload(t->v, n.v * es);
    d.attn_mask = upload(t->attn_mask, n.mask * mask_es);
    d.past_key = upload(t->past_key, n.past_key * es);
    d.past_value = upload(t->past_value, n.past_value * es);
    d.nonpad_kv_seqlen = upload(t->nonpad_kv_seqlen, (size_t)a->batch * sizeof(int64_t));
    d.y = device_output(t->y, n.y * es);
    d.present_key = device_output(t->present_key, n.present_key * es);
    d.present_value = device_output(t->present_value, n.present_value * es);
    d.qk_matmul_output = device_output(t->qk_matmul_output, n.qk * es);
    opp_test_gpu_sync();
    const opp_status_t st = opp_ref_gpu_attention24(ref, a, &d, ws->ptr, ws->bytes, stream);
    opp_test_gpu_sync();
    if (st == OPP_STATUS_SUCCESS) {
        opp_test_d2h(t->y, d.y, n.y * es);
        if (t->present_key != NULL) {
            opp_test_d2h(t->present_key, d.present_key, n.present_key * es);
        }
        if (t->present_value != NULL) {
            opp_test_d2h(t->present_value, d.present_value, n.present_value * es);
        }
        if (t->qk_matmul_output != NULL) {
            opp_test_d2h(t->qk_matmul_output, d.qk_matmul_output, n.qk * es);
        }
    }
    void *all[11] = {(void *)d.q,
                     (void *)d.k,
                     (void *)d.v,
                     (void *)d.attn_mask,
                     (void *)d.past_key,
                     (void *)d.past_value,
                     (void *)d.nonpad_kv_seqlen,
                     d.y,
                     d.present_key,
                     d.present_value,
                     d.qk_matmul_output};
    for (int i = 0; i < 11; ++i) {
        opp_test_gpu_free(all[i]);
    }
    return st;
}

void opp_a24g_ws_free(opp_a24g_ws_t *ws) {
    if (ws != NULL) {
        opp_test_gpu_free(ws->ptr);
        ws->ptr = NULL;
        ws->bytes = 0;
    }
}

size_t opp_a24g_run_pattern(opp_ref_gpu_t *ref, const opp_ref_attention24_desc_t *a,
                            struct CUstream_st *stream, float *ms, size_t *ws_bytes) {
    opp_ref_attention24_sizes_t n;
    opp_ref_attention24_sizes(a, &n);
    const size_t es = opp_dtype_size(a->dtype), np_bytes = sizeof(int64_t) * (size_t)a->batch;
    assert_opp_ok(opp_ref_gpu_attention24_workspace_size(a, ws_bytes));
    int64_t *host_nonpad = malloc(np_bytes);
    void *host_y = malloc(n.y * es);
    assert_true(host_nonpad != NULL && host_y != NULL);
    for (int32_t b = 0; b < a->batch; ++b) {
        host_nonpad[b] = a->kv_seqlen;
    }
    void *ws = opp_test_gpu_alloc(*ws_bytes);
    void *q = opp_test_gpu_alloc(n.q * es), *k = opp_test_gpu_alloc(n.k * es);
    void *v = opp_test_gpu_alloc(n.v * es), *y = opp_test_gpu_alloc(n.y * es);
    opp_test_gpu_fill(q, 0x3C, n.q * es);
    opp_test_gpu_fill(k, 0x3C, n.k * es);
    opp_test_gpu_fill(v, 0x40, n.v * es);
    opp_test_gpu_fill(y, 0xFF, n.y * es);
    opp_ref_attention24_tensors_t t;
    memset(&t, 0, sizeof(t));
    t.q = q;
    t.k = k;
    t.v = v;
    t.y = y;
    t.nonpad_kv_seqlen = upload(host_nonpad, np_bytes);
    opp_test_gpu_sync();
    cudaEvent_t e0, e1;
    assert_int_equal(cudaEventCreate(&e0), cudaSuccess);
    assert_int_equal(cudaEventCreate(&e1), cudaSuccess);
    assert_int_equal(cudaEventRecord(e0, stream), cudaSuccess);
    assert_opp_ok(opp_ref_gpu_attention24(ref, a, &t, ws, *ws_bytes, stream));
    assert_int_equal(cudaEventRecord(e1, stream), cudaSuccess);
    opp_test_gpu_sync();
    assert_int_equal(cudaEventElapsedTime(ms, e0, e1), cudaSuccess);
    opp_test_d2h(host_y, t.y, n.y * es);
    const uint32_t c = a->dtype == OPP_DTYPE_F32 ? 0x40404040u : 0x4040u;
    size_t bad = 0;
    for (size_t i = 0; i < n.y; ++i) {
        const uint32_t got = a->dtype == OPP_DTYPE_F32 ? ((const uint32_t *)host_y)[i]
                                                       : ((const uint16_t *)host_y)[i];
        bad += got != c;
    }
    (void)cudaEventDestroy(e0);
    (void)cudaEventDestroy(e1);
    void *all[6] = {q, k, v, y, (void *)t.nonpad_kv_seqlen, ws};
    for (int i = 0; i < 6; ++i) {
        opp_test_gpu_free(all[i]);
    }
    free(host_y);
    free(host_nonpad);
    return bad;
}
