/*
 * merge_states.h - the launcher of the merge-attention-states kernel
 * (kernels/merge_states.cu), called by lib/merge_states.c. Internal, not
 * public API; the public entry and the math are in lib/oppacked.h
 * ("Merge attention states").
 *
 *   states_out [n, rows, Hq, Dv]  dtype      (n = num_states)
 *   states_lse [n, Hq, rows]      float32
 *   out        [rows, Hq, Dv]     dtype
 *   lse_out    [Hq, rows]         float32 or NULL
 */
#ifndef OPP_KERNELS_MERGE_STATES_H
#define OPP_KERNELS_MERGE_STATES_H

#include <stdint.h>

#include "lib/oppacked.h"

#ifdef __cplusplus
extern "C" {
#endif

struct CUstream_st;

/*! opp__merge_states_launch() :
 * Enqueues the merge kernel on stream. The caller has validated every
 * argument (lib/merge_states.c): dtype F32/F16/BF16, n >= 1, rows >= 1,
 * Hq >= 1, Dv >= 1, sizes addressable, states_out and out 16-byte aligned,
 * the lse arrays 4-byte aligned, no output overlapping an input.
 * @return : SUCCESS when enqueued, CUDA_ERROR if the launch failed. */
opp_status_t opp__merge_states_launch(opp_dtype_t dtype, int32_t num_states, int64_t rows,
                                      int32_t num_heads, int32_t v_head_size,
                                      const void *states_out, const float *states_lse, void *out,
                                      float *lse_out, struct CUstream_st *stream);

#ifdef __cplusplus
}
#endif
#endif /* OPP_KERNELS_MERGE_STATES_H */
