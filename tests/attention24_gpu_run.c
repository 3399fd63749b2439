/*
 * attention24_gpu_run.c - host-tensor wrapper around the cuBLAS
 * Attention-24 reference for tests (see attention24_gpu_run.h). Uploads,
 * poison, downloads and timing are the harness's (harness/gpu_a24.h,
 * gpu_timer.h); this file adds the CMocka checks.
 */
#include "tests/attention24_gpu_run.h"

#include <stdlib.h>
#include <string.h>

#include "harness/gpu_a24.h"
#include "harness/gpu_status.h"
#include "harness/gpu_timer.h"
#include "tests/gpu_util.h"

opp_status_t opp_a24g_run_host(opp_ref_gpu_t *ref, const opp_ref_attention24_desc_t *a,
                               const opp_ref_attention24_tensors_t *t, opp_a24g_ws_t *ws,
                               struct CUstream_st *stream) {
    size_t need = 0;
    assert_opp_ok(opp_ref_gpu_attention24_workspace_size(a, &need));
    opp_hgpu_ws_reserve(ws, need);
    opp_ref_attention24_tensors_t d;
    opp_hgpu_a24_upload(a, t, OPP_HGPU_POISON_ONES, &d);
    opp_test_gpu_sync();
    const opp_status_t st = opp_ref_gpu_attention24(ref, a, &d, ws->ptr, ws->bytes, stream);
    opp_test_gpu_sync();
    if (st == OPP_STATUS_SUCCESS) {
        opp_hgpu_a24_download(a, &d, t);
    }
    OPP_HGPU_CHECK(opp_hgpu_a24_free(&d));
    return st;
}

void opp_a24g_ws_free(opp_a24g_ws_t *ws) {
    OPP_HGPU_CHECK(opp_hgpu_ws_free(ws));
}

size_t opp_a24g_run_pattern(opp_ref_gpu_t *ref, const opp_ref_attention24_desc_t *a,
                            struct CUstream_st *stream, float *ms, size_t *ws_bytes) {
    opp_ref_attention24_sizes_t n;
    opp_ref_attention24_sizes(a, &n);
    const size_t es = opp_dtype_size(a->dtype);
    assert_opp_ok(opp_ref_gpu_attention24_workspace_size(a, ws_bytes));
    void *host_y = malloc(n.y * es);
    assert_true(host_y != NULL);
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
    t.nonpad_kv_seqlen = opp_hgpu_upload_full_nonpad(a->batch, a->kv_seqlen);
    opp_test_gpu_sync();
    opp_hgpu_ref_call_t call = {ref, a, &t, ws, *ws_bytes, stream};
    opp_hgpu_timer_t timer;
    opp_hgpu_timer_init(&timer);
    assert_opp_ok(opp_hgpu_timer_run(&timer, opp_hgpu_ref_run, &call, stream, ms));
    opp_hgpu_timer_destroy(&timer);
    opp_test_gpu_sync();
    opp_test_d2h(host_y, t.y, n.y * es);
    const uint32_t c = a->dtype == OPP_DTYPE_F32 ? 0x40404040u : 0x4040u;
    size_t bad = 0;
    for (size_t i = 0; i < n.y; ++i) {
        const uint32_t got = a->dtype == OPP_DTYPE_F32 ? ((const uint32_t *)host_y)[i]
                                                       : ((const uint16_t *)host_y)[i];
        bad += got != c;
    }
    void *all[6] = {q, k, v, y, (void *)t.nonpad_kv_seqlen, ws};
    for (int i = 0; i < 6; ++i) {
        opp_test_gpu_free(all[i]);
    }
    free(host_y);
    return bad;
}
