/*
 * tf32x3_d64.cu - the opt-in 3xTF32 f32 kernel (kernels/tf32x3_attention.cuh)
 * for head sizes up to 64: the launch function of each line of
 * OPP__TF32X3_D64_KERNELS (kernels/kernel_list.h).
 */
#include "kernels/tf32x3_attention.cuh"

OPP__TF32X3_D64_KERNELS(OPP__TF32X3_LAUNCHER)
