/*
 * attention24_internal.h - shapes and index helpers of the CPU Attention-24
 * reference, shared by attention24_check.c (validation) and
 * attention24_ref.c (computation).
 */
#ifndef OPP_REFERENCE_ATTENTION24_INTERNAL_H
#define OPP_REFERENCE_ATTENTION24_INTERNAL_H

#include <stdint.h>

#include "reference/opp_reference.h"

/* Element offsets of the tensors of a validated descriptor (4D dims
 * [B, H, S, D]; 3D inputs are [B, S, H*D]). */
static inline int64_t opp__a24_q_index(const opp_ref_attention24_desc_t *a, int64_t b, int64_t h,
                                       int64_t t, int64_t d) {
    if (a->input_rank == 3) {
        return ((b * a->q_seqlen + t) * a->q_num_heads + h) * a->head_size + d;
    }
    return ((b * a->q_num_heads + h) * a->q_seqlen + t) * a->head_size + d;
}

/* New key/value row r (0 <= r < S_kv) of kv head hk; width is D or Dv. */
static inline int64_t opp__a24_kv_index(const opp_ref_attention24_desc_t *a, int64_t b, int64_t hk,
                                        int64_t r, int64_t width) {
    if (a->input_rank == 3) {
        return ((b * a->kv_seqlen + r) * a->kv_num_heads + hk) * width;
    }
    return ((b * a->kv_num_heads + hk) * a->kv_seqlen + r) * width;
}

static inline int64_t opp__a24_y_index(const opp_ref_attention24_desc_t *a, int64_t b, int64_t h,
                                       int64_t t) {
    if (a->input_rank == 3) {
        return ((b * a->q_seqlen + t) * a->q_num_heads + h) * a->v_head_size;
    }
    return ((b * a->q_num_heads + h) * a->q_seqlen + t) * a->v_head_size;
}

/* Offset of mask element for (b, h, t, j < M) under numpy broadcasting of
 * mask_dims (right-aligned against [B, Hq, S_q, M]; size-1 dims repeat). */
int64_t opp__a24_mask_index(const opp_ref_attention24_desc_t *a, int64_t b, int64_t h, int64_t t,
                            int64_t j);

/* The pointer rules shared by the CPU and the GPU reference: Q, K, V, Y
 * required; attn_mask, past_*, nonpad given exactly when desc says so. */
opp_status_t opp__a24_check_pointers(const opp_ref_attention24_desc_t *a,
                                     const opp_ref_attention24_tensors_t *t);

#endif /* OPP_REFERENCE_ATTENTION24_INTERNAL_H */
