/*
 * gpu_run.h - the three GPU implementations the harness runs, each as one
 * call of a context struct (opp_hgpu_run_fn, harness/gpu_timer.h), so the
 * tests, tools/oppcheck and bench/oppbench run and time them alike:
 *
 *   opp_hgpu_packed_run   opp_packed_attention_fwd()   (the library, packed)
 *   opp_hgpu_nonpad_run   opp_attention24_nonpad_fwd() (the library, padded
 *                                                       Attention-24 layout)
 *   opp_hgpu_ref_run      opp_ref_gpu_attention24()    (the cuBLAS reference)
 *
 * Every pointer in a context is a device pointer except the descriptors
 * (host). Each call only enqueues on the context's stream and returns the
 * status of the call it wraps. Host C.
 */
#ifndef OPP_HARNESS_GPU_RUN_H
#define OPP_HARNESS_GPU_RUN_H

#include <cuda_runtime_api.h>
#include <stddef.h>
#include <stdint.h>

#include "harness/gpu_tensors.h"
#include "lib/oppacked.h"
#include "reference/opp_reference_gpu.h"

/* The exact kernel on a packed batch on the device. */
typedef struct opp_hgpu_packed_call {
    opp_attention_desc_t desc;    /* opp_lb_packed_desc() of the batch */
    const opp_hgpu_packed_t *dev; /* inputs, out, cu_seqlens, workspace */
    cudaStream_t stream;
} opp_hgpu_packed_call_t;

opp_status_t opp_hgpu_packed_run(void *packed_call);

/* The exact kernel on the padded Attention-24 layout:
 * q [B, Hq, S_q, D] (or 3D), k/v [B, Hkv, S_kv, D|Dv], y [B, Hq, S_q, Dv],
 * nonpad [B] int64. */
typedef struct opp_hgpu_nonpad_call {
    opp_attention24_desc_t desc; /* opp_hgpu_nonpad_desc() */
    const int64_t *nonpad;
    const void *q, *k, *v;
    void *y, *workspace;
    size_t workspace_bytes;
    cudaStream_t stream;
} opp_hgpu_nonpad_call_t;

opp_status_t opp_hgpu_nonpad_run(void *nonpad_call);

/* The library's padded-layout descriptor for the reference descriptor d
 * (no mask, no past): dtypes, rank, B, heads, head sizes, S_q, S_kv,
 * scale, is_causal, softcap copied; the rest defaults. */
void opp_hgpu_nonpad_desc(const opp_ref_attention24_desc_t *d, opp_attention24_desc_t *desc);

/* The cuBLAS Attention-24 reference on device tensors. */
typedef struct opp_hgpu_ref_call {
    opp_ref_gpu_t *ref;
    const opp_ref_attention24_desc_t *desc;
    const opp_ref_attention24_tensors_t *dev;
    void *workspace;
    size_t workspace_bytes;
    cudaStream_t stream;
} opp_hgpu_ref_call_t;

opp_status_t opp_hgpu_ref_run(void *ref_call);

#endif /* OPP_HARNESS_GPU_RUN_H */
