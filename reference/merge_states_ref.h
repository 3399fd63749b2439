/*
 * merge_states_ref.h - the CPU reference of opp_merge_attention_states()
 * (lib/oppacked.h, "Merge attention states"), in double.
 *
 *   states_out [n, rows, Hq, Dv] dtype    states_lse [n, Hq, rows] float32
 *   out        [rows, Hq, Dv]    dtype    lse_out    [Hq, rows]    float32
 */
#ifndef OPP_REFERENCE_MERGE_STATES_REF_H
#define OPP_REFERENCE_MERGE_STATES_REF_H

#include <stdint.h>

#include "lib/oppacked.h"

#ifdef __cplusplus
extern "C" {
#endif

/*! opp_ref_merge_attention_states() :
 * The merge of opp_merge_attention_states() on HOST pointers, computed in
 * double: per (row t, head h), M = max_i lse_i; w_i = exp(lse_i - M)
 * (numerics/exact_math.h's opp__exp); states with w_i == 0 in double are
 * skipped; out = (sum_i w_i o_i) / (sum_i w_i), sums in ascending i with
 * fma(), rounded once (RNE) to dtype; lse = M + log(sum_i w_i) rounded
 * once to float32. All lse_i = -inf: out +0, lse -inf; a NaN or +inf
 * lse_i: out and lse quiet NaN. The GPU kernel differs only by computing
 * in float32 (its w_i underflow to 0 below about -104, the double's below
 * about -745). Every output element is written; lse_out may be NULL.
 * @return : OPP_STATUS_SUCCESS, the status of
 *           opp_merge_attention_states_check(), or BAD_PARAM_NULL_POINTER
 *           (a NULL tensor with rows > 0). */
opp_status_t opp_ref_merge_attention_states(opp_dtype_t dtype, int32_t num_states, int64_t rows,
                                            int32_t num_heads, int32_t v_head_size,
                                            const void *states_out, const float *states_lse,
                                            void *out, float *lse_out);

#ifdef __cplusplus
}
#endif
#endif /* OPP_REFERENCE_MERGE_STATES_REF_H */
