/*
 * gpu_packed.h - the library on the device, for the tests, tools/oppcheck
 * and bench/oppbench: a logical batch (harness/logical_batch.h) uploaded
 * in its packed representation, and the library's two entries as calls a
 * timer can repeat (opp_hgpu_run_fn, harness/gpu_timer.h):
 *
 *   opp_hgpu_packed_run   opp_packed_attention_fwd_lse() on the packed batch:
 *                         q [total_q, Hq, D], k [total_kv, Hkv, D],
 *                         v [total_kv, Hkv, Dv], cu_q / cu_kv [B + 1] int32,
 *                         out [total_q, Hq, Dv] (poisoned before the run),
 *                         lse [Hq, total_q] float32 (optional)
 *   opp_hgpu_nonpad_run   opp_attention24_nonpad_fwd_lse() on the padded
 *                         Attention-24 layout: q [B, Hq, S_q, D] (or 3D),
 *                         k/v [B, Hkv, S_kv, D|Dv], y [B, Hq, S_q, Dv],
 *                         nonpad [B] int64 (harness/gpu_a24.h uploads them),
 *                         lse [B, Hq, S_q] float32 (optional)
 *
 * Every pointer in a call is a device pointer except the descriptors
 * (host); a call only enqueues on its stream and returns the status of
 * the entry it wraps. Host C against the CUDA runtime API; failed CUDA
 * calls go to the process's handler (harness/gpu_status.h).
 */
#ifndef OPP_HARNESS_GPU_PACKED_H
#define OPP_HARNESS_GPU_PACKED_H

#include <cuda_runtime_api.h>
#include <stddef.h>
#include <stdint.h>

#include "harness/gpu_buffer.h"
#include "harness/logical_batch.h"
#include "lib/oppacked.h"
#include "reference/opp_reference.h"

// --- the packed batch on the device

/* Every pointer a device pointer. */
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

// --- the library's entries as calls

typedef struct opp_hgpu_packed_call {
    opp_attention_desc_t desc;    /* opp_lb_packed_desc() of the batch */
    const opp_hgpu_packed_t *dev; /* inputs, out, cu_seqlens, workspace */
    cudaStream_t stream;
    float *lse; /* device [Hq, total_q] float32, or NULL (not written) */
} opp_hgpu_packed_call_t;

opp_status_t opp_hgpu_packed_run(void *packed_call);

typedef struct opp_hgpu_nonpad_call {
    opp_attention24_desc_t desc; /* opp_hgpu_nonpad_desc() */
    const int64_t *nonpad;
    const void *q, *k, *v;
    void *y, *workspace;
    size_t workspace_bytes;
    cudaStream_t stream;
    float *lse; /* device [B, Hq, S_q] float32, or NULL (not written) */
} opp_hgpu_nonpad_call_t;

opp_status_t opp_hgpu_nonpad_run(void *nonpad_call);

/* The library's padded-layout descriptor for the reference descriptor d
 * (no mask, no past): dtypes, rank, B, heads, head sizes, S_q, S_kv,
 * scale, is_causal, softcap copied; the rest defaults. */
void opp_hgpu_nonpad_desc(const opp_ref_attention24_desc_t *d, opp_attention24_desc_t *desc);

#endif /* OPP_HARNESS_GPU_PACKED_H */
