/*
 * ffma_d64.cu - the FAST f32 kernel (kernels/ffma_attention.cuh) for head
 * sizes up to 64: the launch function of each line of
 * OPP__FFMA_D64_KERNELS (kernels/kernel_list.h).
 */
#include "kernels/ffma_attention.cuh"

OPP__FFMA_D64_KERNELS(OPP__FFMA_LAUNCHER)
