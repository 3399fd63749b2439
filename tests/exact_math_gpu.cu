/*
 * exact_math_gpu.cu - device side of exact_math_gpu_test: kernels that
 * evaluate opp__exp, opp__tanh and the fp_convert.h conversions element-wise
 * on device copies of host arrays, and the extern "C" launchers declared in
 * tests/exact_math_gpu.h. Compiled by nvcc_object() with -fmad=false (the
 * exact path's flag); shapes: 1-D arrays of n elements, grid-stride loops.
 */
#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

#include "numerics/exact_math.h"
#include "numerics/fp_convert.h"
#include "tests/exact_math_gpu.h"

// --- kernels

static __global__ void exact_math_kernel(const double *in, size_t n, double *exp_out,
                                         double *tanh_out, uint16_t *f16_out, uint16_t *bf16_out) {
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const double x = in[i];
        exp_out[i] = opp__exp(x);
        tanh_out[i] = opp__tanh(x);
        f16_out[i] = opp__double_to_f16(x);
        bf16_out[i] = opp__double_to_bf16(x);
    }
}

static __global__ void convert_kernel(const uint32_t *bits, const double *in, size_t n,
                                      double *f16_dec, double *bf16_dec, double *f32_dec,
                                      float *f32_enc) {
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const uint32_t b = bits[i];
        f16_dec[i] = opp__f16_to_double((uint16_t)(b & 0xFFFFu));
        bf16_dec[i] = opp__bf16_to_double((uint16_t)(b >> 16));
        f32_dec[i] = opp__f32_to_double(opp__float_from_bits(b));
        f32_enc[i] = opp__double_to_f32(in[i]);
    }
}

// --- launchers

static int device_present(void) {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        (void)cudaGetLastError(); /* clear the error the query recorded */
        return 0;
    }
    return 1;
}

/* Device buffers of one call; freed together. */
struct dev_bufs {
    void *p[8];
    int count;
};

static void *dev_alloc(struct dev_bufs *b, size_t bytes) {
    void *p = NULL;
    if (cudaMalloc(&p, bytes) != cudaSuccess) {
        return NULL;
    }
    b->p[b->count++] = p;
    return p;
}

static void dev_free_all(struct dev_bufs *b) {
    for (int i = 0; i < b->count; ++i) {
        (void)cudaFree(b->p[i]);
    }
}

#define TRY(expr)                    \
    do {                             \
        if ((expr) != cudaSuccess) { \
            rc = -2;                 \
            goto done;               \
        }                            \
    } while (0)

extern "C" int opp_test_exact_math_on_device(const double *in, size_t n, double *exp_out,
                                             double *tanh_out, uint16_t *f16_out,
                                             uint16_t *bf16_out) {
    if (!device_present()) {
        return -1;
    }
    if (n == 0) {
        return 0;
    }
    int rc = 0;
    struct dev_bufs b = {{NULL}, 0};
    cudaStream_t stream = NULL;
    double *d_in, *d_exp, *d_tanh;
    uint16_t *d_f16, *d_bf16;
    TRY(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    d_in = (double *)dev_alloc(&b, n * sizeof(double));
    d_exp = (double *)dev_alloc(&b, n * sizeof(double));
    d_tanh = (double *)dev_alloc(&b, n * sizeof(double));
    d_f16 = (uint16_t *)dev_alloc(&b, n * sizeof(uint16_t));
    d_bf16 = (uint16_t *)dev_alloc(&b, n * sizeof(uint16_t));
    if (!d_in || !d_exp || !d_tanh || !d_f16 || !d_bf16) {
        rc = -2;
        goto done;
    }
    TRY(cudaMemcpyAsync(d_in, in, n * sizeof(double), cudaMemcpyHostToDevice, stream));
    exact_math_kernel<<<1024, 256, 0, stream>>>(d_in, n, d_exp, d_tanh, d_f16, d_bf16);
    TRY(cudaGetLastError());
    TRY(cudaMemcpyAsync(exp_out, d_exp, n * sizeof(double), cudaMemcpyDeviceToHost, stream));
    TRY(cudaMemcpyAsync(tanh_out, d_tanh, n * sizeof(double), cudaMemcpyDeviceToHost, stream));
    TRY(cudaMemcpyAsync(f16_out, d_f16, n * sizeof(uint16_t), cudaMemcpyDeviceToHost, stream));
    TRY(cudaMemcpyAsync(bf16_out, d_bf16, n * sizeof(uint16_t), cudaMemcpyDeviceToHost, stream));
    TRY(cudaStreamSynchronize(stream));
done:
    dev_free_all(&b);
    if (stream) {
        (void)cudaStreamDestroy(stream);
    }
    return rc;
}

extern "C" int opp_test_convert_on_device(const uint32_t *bits, const double *in, size_t n,
                                          double *f16_dec, double *bf16_dec, double *f32_dec,
                                          float *f32_enc) {
    if (!device_present()) {
        return -1;
    }
    if (n == 0) {
        return 0;
    }
    int rc = 0;
    struct dev_bufs b = {{NULL}, 0};
    cudaStream_t stream = NULL;
    uint32_t *d_bits;
    double *d_in, *d_f16, *d_bf16, *d_f32;
    float *d_enc;
    TRY(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    d_bits = (uint32_t *)dev_alloc(&b, n * sizeof(uint32_t));
    d_in = (double *)dev_alloc(&b, n * sizeof(double));
    d_f16 = (double *)dev_alloc(&b, n * sizeof(double));
    d_bf16 = (double *)dev_alloc(&b, n * sizeof(double));
    d_f32 = (double *)dev_alloc(&b, n * sizeof(double));
    d_enc = (float *)dev_alloc(&b, n * sizeof(float));
    if (!d_bits || !d_in || !d_f16 || !d_bf16 || !d_f32 || !d_enc) {
        rc = -2;
        goto done;
    }
    TRY(cudaMemcpyAsync(d_bits, bits, n * sizeof(uint32_t), cudaMemcpyHostToDevice, stream));
    TRY(cudaMemcpyAsync(d_in, in, n * sizeof(double), cudaMemcpyHostToDevice, stream));
    convert_kernel<<<1024, 256, 0, stream>>>(d_bits, d_in, n, d_f16, d_bf16, d_f32, d_enc);
    TRY(cudaGetLastError());
    TRY(cudaMemcpyAsync(f16_dec, d_f16, n * sizeof(double), cudaMemcpyDeviceToHost, stream));
    TRY(cudaMemcpyAsync(bf16_dec, d_bf16, n * sizeof(double), cudaMemcpyDeviceToHost, stream));
    TRY(cudaMemcpyAsync(f32_dec, d_f32, n * sizeof(double), cudaMemcpyDeviceToHost, stream));
    TRY(cudaMemcpyAsync(f32_enc, d_enc, n * sizeof(float), cudaMemcpyDeviceToHost, stream));
    TRY(cudaStreamSynchronize(stream));
done:
    dev_free_all(&b);
    if (stream) {
        (void)cudaStreamDestroy(stream);
    }
    return rc;
}
