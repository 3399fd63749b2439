/*
 * hopper_d64.cu - the FAST Hopper kernel's instances for head sizes up to
 * 64 (the OPP__HOPPER_D64_KERNELS lines of kernels/kernel_list.h), sm_90a
 * only: one translation unit per bucket keeps each nvcc process small.
 * Build: nvcc_object(//kernels:hopper). Resource report:
 *   nvcc -c -gencode=arch=compute_90a,code=sm_90a -std=c++17 -O3 -Xptxas -v \
 *        -I. -I/usr/local/cuda/include kernels/hopper_d64.cu
 */
#include "kernels/hopper_launch.cuh"

/* each line with its wide configuration (kernel_list.h) */
typedef hop_cfg<64, OPP__HOPPER_WIDE_D64_BN, OPP__HOPPER_WIDE_D64_BM / 64> hop_wide_d64;
#define HOPPER_D64_LAUNCHER(name, ALGO, DTYPE, ...)                                              \
    OPP__HOPPER_LAUNCHER(name, ALGO, DTYPE, __VA_ARGS__, OPP__FLASH_SPLIT_ENTRY_NAME(DTYPE, 64), \
                         hop_wide_d64)
OPP__HOPPER_D64_KERNELS(HOPPER_D64_LAUNCHER)
#undef HOPPER_D64_LAUNCHER
