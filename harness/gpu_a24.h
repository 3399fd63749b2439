/*
 * gpu_a24.h - the padded Attention-24 tensors on the device, for the
 * tests, tools/oppcheck and bench/oppbench: a reference tensors struct
 * (reference/opp_reference.h) uploaded for the cuBLAS reference or the
 * library's padded entry (harness/gpu_packed.h) - every input the host
 * struct has (q, k, v, attn_mask, past_*, nonpad_kv_seqlen), a poisoned
 * device buffer for every output it names (y, present_*, qk_matmul_output)
 * and the way back - and the cuBLAS reference as a call a timer can repeat
 * (opp_hgpu_run_fn, harness/gpu_timer.h).
 *
 * Shapes in elements follow opp_ref_attention24_sizes(): Q [B, Hq, S_q, D]
 * (or 3D), K [B, Hkv, S_kv, D], V [B, Hkv, S_kv, Dv], past_* [B, Hkv, P,
 * D|Dv], attn_mask prod(mask_dims) (bool: 1 byte), nonpad [B] int64,
 * Y [B, Hq, S_q, Dv], present_* [B, Hkv, P + S_kv, D|Dv],
 * qk [B, Hq, S_q, P + S_kv]. Host C against the CUDA runtime API; failed
 * CUDA calls go to the process's handler (harness/gpu_status.h).
 */
#ifndef OPP_HARNESS_GPU_A24_H
#define OPP_HARNESS_GPU_A24_H

#include <cuda_runtime_api.h>
#include <stddef.h>
#include <stdint.h>

#include "harness/gpu_buffer.h"
#include "reference/opp_reference.h"
#include "reference/opp_reference_gpu.h"

// --- the tensors on the device

/*! Device copies of host's inputs (NULL stays NULL) and, for every output
 * host names (non-NULL), a device buffer of its size poisoned with poison;
 * outputs host does not name stay NULL. @dev : written. */
void opp_hgpu_a24_upload(const opp_ref_attention24_desc_t *d,
                         const opp_ref_attention24_tensors_t *host, opp_hgpu_poison_t poison,
                         opp_ref_attention24_tensors_t *dev);

/* Copies every output that both dev and host name into host. */
void opp_hgpu_a24_download(const opp_ref_attention24_desc_t *d,
                           const opp_ref_attention24_tensors_t *dev,
                           const opp_ref_attention24_tensors_t *host);

/* Frees every buffer of dev and zeroes it. @return : the first cudaFree
 * error (reports nothing, like opp_hgpu_free). */
cudaError_t opp_hgpu_a24_free(opp_ref_attention24_tensors_t *dev);

/* A device nonpad_kv_seqlen [batch] int64 with every entry kv_seqlen (no
 * key is padding). Free with opp_hgpu_free. */
int64_t *opp_hgpu_upload_full_nonpad(int32_t batch, int64_t kv_seqlen);

// --- the cuBLAS reference as a call

typedef struct opp_hgpu_ref_call {
    opp_ref_gpu_t *ref;
    const opp_ref_attention24_desc_t *desc;
    const opp_ref_attention24_tensors_t *dev;
    void *workspace;
    size_t workspace_bytes;
    cudaStream_t stream;
} opp_hgpu_ref_call_t;

opp_status_t opp_hgpu_ref_run(void *ref_call);

#endif /* OPP_HARNESS_GPU_A24_H */
