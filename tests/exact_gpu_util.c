/*
 * exact_gpu_util.c - see exact_gpu_util.h. The device side is the
 * harness's (harness/gpu_packed.h); this file adds the CMocka
 * checks.
 */
#include "tests/exact_gpu_util.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/gpu_status.h"
#include "reference/opp_reference.h"
#include "tests/gpu_util.h"
#include "tests/test_util.h"

long opp_test_env_long(const char *name, long fallback) {
    const char *s = getenv(name);
    return (s != NULL && *s != '\0') ? strtol(s, NULL, 10) : fallback;
}

size_t opp_test_out_elems(const opp_lb_t *lb) {
    return opp_hgpu_out_elems(lb);
}

void opp_test_packed_upload(const opp_lb_t *lb, opp_test_packed_dev_t *dev) {
    assert_opp_ok(opp_hgpu_packed_upload(lb, OPP_HGPU_POISON_NAN, dev));
}

void opp_test_packed_free(opp_test_packed_dev_t *dev) {
    OPP_HGPU_CHECK(opp_hgpu_packed_free(dev));
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
    opp_hgpu_packed_call_t call = {.dev = &dev, .stream = stream};
    opp_lb_packed_desc(lb, &call.desc);
    assert_opp_ok(opp_hgpu_packed_run(&call));
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
