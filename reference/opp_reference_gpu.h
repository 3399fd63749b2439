/*
 * opp_reference_gpu.h - the padded ONNX Attention-24 reference on the GPU,
 * built on cuBLAS double-precision GEMMs (DESIGN.md §4, "cuBLAS padded
 * reference").
 *
 * The full operator of opp_reference.h (same descriptor, same tensors struct,
 * but every tensor pointer is a DEVICE pointer): QK^T and P.V are cuBLAS
 * GEMMs in double (strided-batched; GQA without materialising repeated
 * heads); softcap, masks, causal offsets and the softmax are the shared
 * exact code (numerics/exact_order.h), so the only difference from the
 * exact path is the GEMMs' summation order. Work proceeds in chunks of
 * (batch, kv head, query rows) so the workspace is bounded (see
 * opp_ref_gpu_attention24_workspace_size).
 */
#ifndef OPP_REFERENCE_GPU_H
#define OPP_REFERENCE_GPU_H

#include <stddef.h>

#include "reference/opp_reference.h"

#ifdef __cplusplus
extern "C" {
#endif

struct CUstream_st;

/* Owns a private cuBLAS handle (callers' handles are never touched). */
typedef struct opp_ref_gpu opp_ref_gpu_t;

/*! opp_ref_gpu_create() : creates the reference on the current device.
 * @return : OPP_STATUS_SUCCESS, NO_DEVICE, CUBLAS_ERROR or HOST_ALLOC_FAILED. */
opp_status_t opp_ref_gpu_create(opp_ref_gpu_t **ref);

/*! opp_ref_gpu_destroy() : accepts NULL. */
void opp_ref_gpu_destroy(opp_ref_gpu_t *ref);

/*! opp_ref_gpu_attention24_workspace_size() :
 * Device workspace bytes for desc (documented bound: see the .c file; at
 * most 2 GiB + 1792 bytes unless one query row of all heads, or the K/V of
 * one batch entry, alone exceed 1 GiB as doubles). The workspace passed to
 * opp_ref_gpu_attention24() must be 256-byte aligned.
 * @return : OPP_STATUS_SUCCESS, the status of opp_ref_attention24_check(),
 *           BAD_PARAM_NULL_POINTER, BAD_PARAM_SHAPE (size overflow) or
 *           NOT_SUPPORTED (a GEMM dimension beyond 32 bits). */
opp_status_t opp_ref_gpu_attention24_workspace_size(const opp_ref_attention24_desc_t *desc,
                                                    size_t *workspace_bytes);

/*! opp_ref_gpu_attention24() :
 * The ONNX Attention-24 operator on DEVICE tensors t (layouts as in
 * opp_reference.h); bit-identical to the CPU reference for f16/bf16 and
 * within 1 ulp for f32 (GEMM summation order). Enqueues on stream; may
 * synchronize (it is a reference, not a run path). nonpad values are
 * checked on the device and padding rows never enter Y.
 * @return : OPP_STATUS_SUCCESS, BAD_PARAM_* / NOT_SUPPORTED_*,
 *           BAD_PARAM_WORKSPACE, CUDA_ERROR, CUBLAS_ERROR. */
opp_status_t opp_ref_gpu_attention24(opp_ref_gpu_t *ref, const opp_ref_attention24_desc_t *desc,
                                     const opp_ref_attention24_tensors_t *t, void *workspace,
                                     size_t workspace_bytes, struct CUstream_st *stream);

#ifdef __cplusplus
}
#endif
#endif /* OPP_REFERENCE_GPU_H */
