/*
 * gpu_util.c - GPU helpers for CMocka tests (see gpu_util.h). Plain C
 * against the CUDA runtime API.
 */
#include "tests/gpu_util.h"

#include <cuda_runtime_api.h>
#include <stdio.h>

int opp_test_gpu_count(void) {
    static int cached = -1;
    if (cached < 0) {
        int n = 0;
        cached = cudaGetDeviceCount(&n) == cudaSuccess ? n : 0;
        (void)cudaGetLastError(); /* clear the sticky "no device" error */
    }
    return cached;
}

static void check(cudaError_t err, const char *what, size_t bytes) {
    if (err != cudaSuccess) {
        fail_msg("%s (%zu bytes): %s: %s", what, bytes, cudaGetErrorName(err),
                 cudaGetErrorString(err));
    }
}

void *opp_test_gpu_alloc(size_t bytes) {
    void *p = NULL;
    check(cudaMalloc(&p, bytes > 0 ? bytes : 1), "cudaMalloc", bytes);
    return p;
}

void opp_test_gpu_free(void *ptr) {
    if (ptr != NULL) {
        check(cudaFree(ptr), "cudaFree", 0);
    }
}

void opp_test_h2d(void *dst, const void *src, size_t bytes) {
    if (bytes > 0) {
        check(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice), "cudaMemcpy H2D", bytes);
    }
}

void opp_test_d2h(void *dst, const void *src, size_t bytes) {
    if (bytes > 0) {
        check(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy D2H", bytes);
    }
}

void opp_test_gpu_fill(void *dst, int byte, size_t bytes) {
    if (bytes > 0) {
        check(cudaMemset(dst, byte, bytes), "cudaMemset", bytes);
    }
}

void opp_test_gpu_sync(void) {
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize", 0);
}
