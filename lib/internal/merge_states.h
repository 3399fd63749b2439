/*
 * merge_states.h - internal helpers of opp_merge_attention_states(),
 * defined in lib/merge_states_check.c (host only, no CUDA symbol).
 */
#ifndef OPP_INTERNAL_MERGE_STATES_H
#define OPP_INTERNAL_MERGE_STATES_H

#include <stdint.h>

#include "lib/oppacked.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The byte sizes of the merge's tensors for validated shape arguments
 * (opp_merge_attention_states_check() succeeded, so none overflows). */
typedef struct opp__merge_sizes {
    int64_t states_out_bytes; /* n * rows * Hq * Dv * esize */
    int64_t states_lse_bytes; /* n * Hq * rows * 4 */
    int64_t out_bytes;        /* rows * Hq * Dv * esize */
    int64_t lse_out_bytes;    /* Hq * rows * 4 */
} opp__merge_sizes_t;

void opp__merge_sizes(opp_dtype_t dtype, int32_t num_states, int64_t rows, int32_t num_heads,
                      int32_t v_head_size, opp__merge_sizes_t *sizes);

#ifdef __cplusplus
}
#endif
#endif /* OPP_INTERNAL_MERGE_STATES_H */
