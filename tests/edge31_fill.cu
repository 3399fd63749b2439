/*
 * edge31_fill.cu - device side of edge31_gpu_test: the fills of
 * tests/edge31_fill.h. Shapes: 1-D arrays of n 16-bit elements, size_t
 * indices throughout (the arrays of the edge tests hold up to 2^32
 * elements), grid-stride loops over 4096 blocks of 256 threads.
 */
#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

#include "numerics/fp_convert.h"
#include "tests/edge31_fill.h"

#define FILL_BLOCKS  4096
#define FILL_THREADS 256

// --- kernels

/* dst[i] = bits: 8 elements per 16-byte store, the tail one by one. */
static __global__ void fill16_kernel(uint16_t *dst, size_t n, uint16_t bits) {
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    const size_t first = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const uint32_t w = (uint32_t)bits | ((uint32_t)bits << 16);
    const uint4 v = make_uint4(w, w, w, w);
    const size_t n8 = n / 8;
    for (size_t i = first; i < n8; i += stride) {
        ((uint4 *)dst)[i] = v;
    }
    for (size_t i = n8 * 8 + first; i < n; i += stride) {
        dst[i] = bits;
    }
}

/* splitmix64 of (seed, i) -> uniform in [-1, 1) on a grid of 2^-23. */
static __device__ double hash_value(uint64_t seed, uint64_t i) {
    uint64_t z = seed + 0x9E3779B97F4A7C15ull * (i + 1);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (double)(int64_t)(z >> 40) * 0x1p-23 - 1.0;
}

static __global__ void fill_hash_kernel(uint16_t *dst, size_t n, int dtype, uint64_t seed) {
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const double x = hash_value(seed, i);
        dst[i] = dtype == OPP_DTYPE_BF16 ? opp__double_to_bf16(x) : opp__double_to_f16(x);
    }
}

// --- launchers

extern "C" int opp_edge31_fill16(void *dst, size_t n, uint16_t bits) {
    if (n == 0) {
        return 0;
    }
    fill16_kernel<<<FILL_BLOCKS, FILL_THREADS>>>((uint16_t *)dst, n, bits);
    return (int)cudaGetLastError();
}

extern "C" int opp_edge31_fill_hash(void *dst, size_t n, int dtype, uint64_t seed) {
    if (n == 0) {
        return 0;
    }
    fill_hash_kernel<<<FILL_BLOCKS, FILL_THREADS>>>((uint16_t *)dst, n, dtype, seed);
    return (int)cudaGetLastError();
}
