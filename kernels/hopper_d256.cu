/*
 * hopper_d256.cu - the FAST Hopper kernel's instances for head sizes up to
 * 256 (the OPP__HOPPER_D256_KERNELS lines of kernels/kernel_list.h), sm_90a
 * only: one translation unit per bucket keeps each nvcc process small.
 * Build: nvcc_object(//kernels:hopper). Resource report:
 *   nvcc -c -gencode=arch=compute_90a,code=sm_90a -std=c++17 -O3 -Xptxas -v \
 *        -I. -I/usr/local/cuda/include kernels/hopper_d256.cu
 */
#include "kernels/hopper_launch.cuh"

#define HOPPER_D256_LAUNCHER(name, ALGO, DTYPE, ...) \
    OPP__HOPPER_LAUNCHER(name, ALGO, DTYPE, __VA_ARGS__, NULL, cfg_t)
OPP__HOPPER_D256_KERNELS(HOPPER_D256_LAUNCHER)
#undef HOPPER_D256_LAUNCHER
