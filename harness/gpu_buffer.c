/*
 * gpu_buffer.c - device allocation, copies, uploads, poison and the grown
 * workspace (see gpu_buffer.h). Every CUDA call is checked through
 * harness/gpu_status.h with the call's name and size.
 */
#include "harness/gpu_buffer.h"

#include <stdio.h>
#include <stdlib.h>

#include "harness/gpu_status.h"
#include "harness/logical_batch.h"

/* Checks err, describing the call as "<call> (<bytes> bytes)". */
static void check(cudaError_t err, const char *call, size_t bytes, int line) {
    if (err != cudaSuccess) {
        char what[96];
        snprintf(what, sizeof(what), "%s (%zu bytes)", call, bytes);
        opp_hgpu_check(err, what, __FILE__, line);
    }
}

void *opp_hgpu_alloc(size_t bytes) {
    void *p = NULL;
    check(cudaMalloc(&p, bytes > 0 ? bytes : 1), "cudaMalloc", bytes, __LINE__);
    return p;
}

cudaError_t opp_hgpu_free(const void *ptr) {
    return ptr != NULL ? cudaFree((void *)ptr) : cudaSuccess;
}

cudaError_t opp_hgpu_free_all(const void *const *ptrs, size_t n) {
    cudaError_t first = cudaSuccess;
    for (size_t i = 0; i < n; ++i) {
        const cudaError_t err = opp_hgpu_free(ptrs[i]);
        first = first != cudaSuccess ? first : err;
    }
    return first;
}

void opp_hgpu_h2d(void *dst, const void *src, size_t bytes) {
    if (bytes > 0) {
        check(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice), "cudaMemcpy H2D", bytes,
              __LINE__);
    }
}

void opp_hgpu_d2h(void *dst, const void *src, size_t bytes) {
    if (bytes > 0) {
        check(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy D2H", bytes,
              __LINE__);
    }
}

void opp_hgpu_fill(void *dst, int byte, size_t bytes) {
    if (bytes > 0) {
        check(cudaMemset(dst, byte, bytes), "cudaMemset", bytes, __LINE__);
    }
}

void *opp_hgpu_upload(const void *src, size_t bytes) {
    void *dst = opp_hgpu_alloc(bytes);
    opp_hgpu_h2d(dst, src, bytes);
    return dst;
}

void opp_hgpu_poison(void *dst, size_t elems, opp_dtype_t dtype, opp_hgpu_poison_t poison) {
    const size_t es = opp_dtype_size(dtype);
    if (poison == OPP_HGPU_POISON_ONES) {
        opp_hgpu_fill(dst, 0xFF, elems * es);
        return;
    }
    void *host = malloc(elems * es + es);
    if (host == NULL) { /* reported like a failed device allocation */
        check(cudaErrorMemoryAllocation, "malloc of the host poison", elems * es, __LINE__);
        return;
    }
    opp_lb_poison_fill(host, elems, dtype,
                       poison == OPP_HGPU_POISON_NAN ? OPP_LB_POISON_NAN : OPP_LB_POISON_FINITE);
    opp_hgpu_h2d(dst, host, elems * es);
    free(host);
}

void *opp_hgpu_alloc_poisoned(size_t elems, opp_dtype_t dtype, opp_hgpu_poison_t poison) {
    void *dst = opp_hgpu_alloc(elems * opp_dtype_size(dtype));
    opp_hgpu_poison(dst, elems, dtype, poison);
    return dst;
}

void *opp_hgpu_ws_reserve(opp_hgpu_ws_t *ws, size_t bytes) {
    if (bytes > ws->bytes || ws->ptr == NULL) {
        (void)opp_hgpu_free(ws->ptr); /* a broken context fails the allocation */
        ws->ptr = opp_hgpu_alloc(bytes);
        ws->bytes = bytes;
    }
    return ws->ptr;
}

cudaError_t opp_hgpu_ws_free(opp_hgpu_ws_t *ws) {
    cudaError_t err = cudaSuccess;
    if (ws != NULL) {
        err = opp_hgpu_free(ws->ptr);
        ws->ptr = NULL;
        ws->bytes = 0;
    }
    return err;
}
