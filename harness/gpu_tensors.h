/*
 * gpu_tensors.h - the two representations of DESIGN.md §3 on the device:
 *
 *   packed         a logical batch (harness/logical_batch.h) uploaded for
 *                  opp_packed_attention_fwd(): q [total_q, Hq, D],
 *                  k [total_kv, Hkv, D], v [total_kv, Hkv, Dv],
 *                  cu_q / cu_kv [B + 1] int32, a poisoned
 *                  out [total_q, Hq, Dv] and the workspace the library asks for
 *   Attention-24   a reference tensors struct (reference/opp_reference.h)
 *                  uploaded for the cuBLAS reference or the library's
 *                  padded entry: every input the host struct has (q, k, v,
 *                  attn_mask, past_*, nonpad_kv_seqlen), a poisoned device
 *                  buffer for every output it names (y, present_*,
 *                  qk_matmul_output), and the way back
 *
 * Shapes in elements follow opp_ref_attention24_sizes(). Host C against
 * the CUDA runtime API; failed CUDA calls go to the process's handler
 * (harness/gpu_status.h). Shared by the tests, tools/oppcheck and
 * bench/oppbench.
 */
#ifndef OPP_HARNESS_GPU_TENSORS_H
#define OPP_HARNESS_GPU_TENSORS_H

#include <cuda_runtime_api.h>
#include <stddef.h>
#include <stdint.h>

#include "harness/gpu_buffer.h"
#include "harness/logical_batch.h"
#include "lib/oppacked.h"
#include "reference/opp_reference.h"

// --- packed

/* A packed batch on the device (every pointer a device pointer). */
typedef struct opp_hgpu_packed {
    void *q, *k, *v, *out;
    int32_t *cu_q, *cu_kv;
    void *workspace; /* NULL when the workspace size query failed */
    size_t workspace_bytes, out_bytes;
} opp_hgpu_packed_t;

/* Elements of the packed output: total_q * Hq * Dv. */
size_t opp_hgpu_out_elems(const opp_lb_t *lb);

/*! Uploads lb's packed representation into dev, out poisoned with poison,
 * and allocates the workspace opp_packed_attention_workspace_size() names.
 * @return : that query's status; on failure every buffer but the
 *           workspace is allocated (free with opp_hgpu_packed_free). */
opp_status_t opp_hgpu_packed_upload(const opp_lb_t *lb, opp_hgpu_poison_t poison,
                                    opp_hgpu_packed_t *dev);

/* Frees every buffer of dev and zeroes it. @return : the first cudaFree
 * error (reports nothing, like opp_hgpu_free). */
cudaError_t opp_hgpu_packed_free(opp_hgpu_packed_t *dev);

// --- Attention-24

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
 * error (reports nothing). */
cudaError_t opp_hgpu_a24_free(opp_ref_attention24_tensors_t *dev);

/* A device nonpad_kv_seqlen [batch] int64 with every entry kv_seqlen (no
 * key is padding). Free with opp_hgpu_free. */
int64_t *opp_hgpu_upload_full_nonpad(int32_t batch, int64_t kv_seqlen);

#endif /* OPP_HARNESS_GPU_TENSORS_H */
