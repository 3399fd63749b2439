/*
 * exact_gpu_util.c - see exact_gpu_util.h. Plain C against the CUDA
 * runtime API and the public header.
 */
#include "tests/exact_gpu_util.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference/opp_reference.h"
#include "tests/gpu_util.h"
#include "tests/test_util.h"

long opp_test_env_long(const char *name, long fallback) {
    const char *s = getenv(name);
    return (s != NULL && *s != '\0') ? strtol(s, NULL, 10) : fallback;
}

size_t opp_test_out_elems(const opp_lb_t *lb) {
    return (size_t)lb->total_q * (size_t)lb->num_heads * (size_t)lb->v_head_size;
}

void opp_test_packed_upload(const opp_lb_t *lb, opp_test_packed_dev_t *dev) {
    const size_t es = opp_dtype_size(lb->dtype);
    const size_t qb = (size_t)lb->total_q * (size_t)lb->num_heads * (size_t)lb->head_size * es;
    const size_t kb = (size_t)lb->total_kv * (size_t)lb->kv_num_heads * (size_t)lb->head_size * es;
    const size_t vb =
        (size_t)lb->total_kv * (size_t)lb->kv_num_heads * (size_t)lb->v_head_size * es;
    const size_t cb = ((size_t)lb->batch + 1) * sizeof(int32_t);
    memset(dev, 0, sizeof(*dev));
    dev->out_bytes = opp_test_out_elems(lb) * es;
    dev->q = opp_test_gpu_alloc(qb);
    dev->k = opp_test_gpu_alloc(kb);
    dev->v = opp_test_gpu_alloc(vb);
    dev->out = opp_test_gpu_alloc(dev->out_bytes);
    dev->cu_q = opp_test_gpu_alloc(cb);
    dev->cu_kv = opp_test_gpu_alloc(cb);
    opp_test_h2d(dev->q, lb->q, qb);
    opp_test_h2d(dev->k, lb->k, kb);
    opp_test_h2d(dev->v, lb->v, vb);
    opp_test_h2d(dev->cu_q, lb->cu_q, cb);
    opp_test_h2d(dev->cu_kv, lb->cu_kv, cb);
    void *poison = malloc(dev->out_bytes + es);
    assert_non_null(poison);
    opp_lb_poison_fill(poison, opp_test_out_elems(lb), lb->dtype, OPP_LB_POISON_NAN);
    opp_test_h2d(dev->out, poison, dev->out_bytes);
    free(poison);
    opp_attention_desc_t desc;
    opp_lb_packed_desc(lb, &desc);
    assert_opp_ok(opp_packed_attention_workspace_size(&desc, &dev->workspace_bytes));
    dev->workspace = opp_test_gpu_alloc(dev->workspace_bytes);
}

void opp_test_packed_free(opp_test_packed_dev_t *dev) {
    opp_test_gpu_free(dev->q);
    opp_test_gpu_free(dev->k);
    opp_test_gpu_free(dev->v);
    opp_test_gpu_free(dev->out);
    opp_test_gpu_free(dev->cu_q);
    opp_test_gpu_free(dev->cu_kv);
    opp_test_gpu_free(dev->workspace);
    memset(dev, 0, sizeof(*dev));
}

void *opp_test_packed_download(const opp_test_packed_dev_t *dev) {
    void *out = malloc(dev->out_bytes + 16);
    assert_non_null(out);
    opp_test_d2h(out, dev->out, dev->out_bytes);
    return out;
}

void *opp_test_packed_ref(const opp_lb_t *lb) {
    const size_t n = opp_test_out_elems(lb);
    void *out = malloc((n + 1) * opp_dtype_size(lb->dtype));
    assert_non_null(out);
    opp_lb_poison_fill(out, n, lb->dtype, OPP_LB_POISON_NAN);
    opp_attention_desc_t desc;
    opp_lb_packed_desc(lb, &desc);
    assert_opp_ok(opp_ref_packed_attention(&desc, lb->cu_q, lb->cu_kv, lb->q, lb->k, lb->v, out));
    return out;
}

void *opp_test_packed_gpu(const opp_lb_t *lb, struct CUstream_st *stream) {
    opp_test_packed_dev_t dev;
    opp_test_packed_upload(lb, &dev);
    opp_attention_desc_t desc;
    opp_lb_packed_desc(lb, &desc);
    const opp_varlen_t varlen = {dev.cu_q, dev.cu_kv};
    assert_opp_ok(opp_packed_attention_fwd(&desc, &varlen, dev.q, dev.k, dev.v, dev.out,
                                           dev.workspace, dev.workspace_bytes, stream));
    const cudaError_t err = cudaStreamSynchronize(stream);
    if (err != cudaSuccess) {
        fail_msg("cudaStreamSynchronize: %s", cudaGetErrorString(err));
    }
    assert_opp_ok(opp_packed_attention_device_status(dev.workspace, dev.workspace_bytes, stream));
    void *out = opp_test_packed_download(&dev);
    opp_test_packed_free(&dev);
    return out;
}

void opp_test_assert_out_equal(const opp_lb_t *lb, const void *got, const void *want,
                               const char *what) {
    const size_t bad = opp_test_bits_equal(got, want, opp_test_out_elems(lb), lb->dtype, what);
    if (bad != 0) {
        print_error("%zu of %zu output elements differ: %s\n", bad, opp_test_out_elems(lb), what);
    }
    assert_int_equal(bad, 0);
}
