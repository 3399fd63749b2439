/*
 * tf32x3_d64.cu - the opt-in 3xTF32 f32 kernel (kernels/tf32x3_ws.cuh; the
 * one-warpgroup kernels/tf32x3_attention.cuh under OPP__TF32X3_WS 0)
 * for head sizes up to 64: the launch function of each line of
 * OPP__TF32X3_D64_KERNELS (kernels/kernel_list.h).
 */
#include "kernels/kernel_list.h"

#if OPP__TF32X3_WS
#include "kernels/tf32x3_ws.cuh"
OPP__TF32X3_D64_KERNELS(OPP__TF32X3_WS_LAUNCHER)
#else
#include "kernels/tf32x3_attention.cuh"
OPP__TF32X3_D64_KERNELS(OPP__TF32X3_LAUNCHER)
#endif
