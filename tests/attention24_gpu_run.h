/*
 * attention24_gpu_run.h - runs the cuBLAS Attention-24 reference
 * (reference/opp_reference_gpu.h) on HOST tensors for tests: uploads every
 * input of the tensors struct, poisons device outputs (all-ones bytes, NaN
 * in every float dtype, so an element the reference does not write shows
 * up), runs, synchronizes and downloads every output into the host buffers.
 *
 * Sizes (elements) follow opp_reference.h: Q [B, Hq, S_q, D] (or 3D),
 * K [B, Hkv, S_kv, D], V [B, Hkv, S_kv, Dv], past_* [B, Hkv, P, D|Dv],
 * attn_mask prod(mask_dims) (bool: 1 byte), nonpad [B] int64,
 * Y [B, Hq, S_q, Dv], present_* [B, Hkv, T, D|Dv], qk [B, Hq, S_q, T].
 * Test-only: CUDA failures fail the current CMocka test. The device side
 * is the harness's (harness/gpu_a24.h, gpu_timer.h).
 */
#ifndef OPP_TESTS_ATTENTION24_GPU_RUN_H
#define OPP_TESTS_ATTENTION24_GPU_RUN_H

#include <stddef.h>

#include "harness/gpu_buffer.h"
#include "reference/opp_reference_gpu.h"

/* Device workspace kept between runs (grown on demand; harness/gpu_buffer.h). */
typedef opp_hgpu_ws_t opp_a24g_ws_t;

/*! Runs the GPU reference on host tensors t (inputs read, non-NULL outputs
 * written). desc must pass opp_ref_attention24_check().
 * @return : the status of opp_ref_gpu_attention24 (outputs are downloaded
 *           only on success). */
opp_status_t opp_a24g_run_host(opp_ref_gpu_t *ref, const opp_ref_attention24_desc_t *desc,
                               const opp_ref_attention24_tensors_t *t, opp_a24g_ws_t *ws,
                               struct CUstream_st *stream);

/*! Runs desc (no mask, no past; has_nonpad with nonpad[b] = S_kv) on
 * device tensors filled with byte patterns - Q and K 0x3C, V 0x40 - so every
 * score of a row is equal and every V element is the same value c; then
 * every Y element must be exactly c. Allocates and frees its own buffers.
 * @ms, @ws_bytes : the call's time (events on stream) and workspace size.
 * @return : the number of Y elements that are not c. */
size_t opp_a24g_run_pattern(opp_ref_gpu_t *ref, const opp_ref_attention24_desc_t *desc,
                            struct CUstream_st *stream, float *ms, size_t *ws_bytes);

/* Frees the workspace (accepts a zeroed one). */
void opp_a24g_ws_free(opp_a24g_ws_t *ws);

#endif /* OPP_TESTS_ATTENTION24_GPU_RUN_H */
