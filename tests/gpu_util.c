/*
 * gpu_util.c - GPU helpers for CMocka tests (see gpu_util.h): thin
 * wrappers of the harness's GPU adapters (harness/gpu_buffer.h), whose
 * CUDA failures fail the current test here.
 */
#include "tests/gpu_util.h"

#include <cuda_runtime_api.h>

#include "harness/gpu_buffer.h"
#include "harness/gpu_status.h"

/* A failed CUDA call in a harness GPU adapter fails the current test. */
static void fail_test(const char *what, cudaError_t err, const char *file, int line) {
    (void)file;
    (void)line;
    fail_msg("%s: %s: %s", what, cudaGetErrorName(err), cudaGetErrorString(err));
}

/* Installed before main() in every binary that links this file, so that
 * the harness never exits a test binary. */
__attribute__((constructor)) static void install_fail_test(void) {
    opp_hgpu_set_fail_handler(fail_test);
}

int opp_test_gpu_count(void) {
    static int cached = -1;
    if (cached < 0) {
        cached = opp_hgpu_device_count();
    }
    return cached;
}

void *opp_test_gpu_alloc(size_t bytes) {
    return opp_hgpu_alloc(bytes);
}

void opp_test_gpu_free(void *ptr) {
    OPP_HGPU_CHECK(opp_hgpu_free(ptr));
}

void opp_test_h2d(void *dst, const void *src, size_t bytes) {
    opp_hgpu_h2d(dst, src, bytes);
}

void opp_test_d2h(void *dst, const void *src, size_t bytes) {
    opp_hgpu_d2h(dst, src, bytes);
}

void opp_test_gpu_fill(void *dst, int byte, size_t bytes) {
    opp_hgpu_fill(dst, byte, bytes);
}

void opp_test_gpu_sync(void) {
    OPP_HGPU_CHECK(cudaDeviceSynchronize());
}
