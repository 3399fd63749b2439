/*
 * edge31_fill.h - device-side fills of tests/edge31_fill.cu for
 * edge31_gpu_test (plain C, no CUDA headers): the inputs of the 2^31
 * edge tests are tens of GiB, written on the device, never uploaded.
 * dst is device memory of n 16-bit elements (f16 or bf16 bits); both
 * enqueue on the legacy default stream and return without waiting.
 * @return : 0, or the cudaError_t of the launch.
 */
#ifndef OPP_TESTS_EDGE31_FILL_H
#define OPP_TESTS_EDGE31_FILL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* dst[i] = bits for i < n (dst 16-byte aligned). */
int opp_edge31_fill16(void *dst, size_t n, uint16_t bits);

/* dst[i] = a hash of (seed, i) (splitmix64), uniform in [-1, 1) on a grid
 * of 2^-23, rounded once (RNE) to dtype (OPP_DTYPE_F16 = 10 or
 * OPP_DTYPE_BF16 = 16), for i < n. The host never regenerates these: it
 * copies the elements it checks back with cudaMemcpy. */
int opp_edge31_fill_hash(void *dst, size_t n, int dtype, uint64_t seed);

#ifdef __cplusplus
}
#endif

#endif /* OPP_TESTS_EDGE31_FILL_H */
