/*
 * exact_math_gpu.h - host-callable entry points of tests/exact_math_gpu.cu,
 * which evaluate the exact path's shared numerics (numerics/exact_math.h,
 * numerics/fp_convert.h) on the GPU, so exact_math_gpu_test.c (plain C,
 * no CUDA headers) can compare the device's bits with the host's.
 * All pointers are host memory; n is in elements. Return: 0 on success,
 * -1 when there is no CUDA device (cudaGetDeviceCount fails or returns 0),
 * -2 when a CUDA call fails. n == 0 only checks for a device.
 */
#ifndef OPP_TESTS_EXACT_MATH_GPU_H
#define OPP_TESTS_EXACT_MATH_GPU_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* For each in[i]: exp_out[i] = opp__exp, tanh_out[i] = opp__tanh,
 * f16_out[i] = opp__double_to_f16, bf16_out[i] = opp__double_to_bf16. */
int opp_test_exact_math_on_device(const double *in, size_t n, double *exp_out, double *tanh_out,
                                  uint16_t *f16_out, uint16_t *bf16_out);

/* For each i: f16_dec[i] = opp__f16_to_double(low 16 bits of bits[i]),
 * bf16_dec[i] = opp__bf16_to_double(high 16 bits), f32_dec[i] =
 * opp__f32_to_double(the float with bits[i]), f32_enc[i] =
 * opp__double_to_f32(in[i]). */
int opp_test_convert_on_device(const uint32_t *bits, const double *in, size_t n, double *f16_dec,
                               double *bf16_dec, double *f32_dec, float *f32_enc);

#ifdef __cplusplus
}
#endif

#endif /* OPP_TESTS_EXACT_MATH_GPU_H */
