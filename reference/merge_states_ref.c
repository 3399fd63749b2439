/*
 * merge_states_ref.c - opp_ref_merge_attention_states(): the CPU reference
 * of the merge of attention states, in double (merge_states_ref.h).
 *
 *   states_out [n, rows, Hq, Dv] dtype    states_lse [n, Hq, rows] float32
 *   out        [rows, Hq, Dv]    dtype    lse_out    [Hq, rows]    float32
 *
 * One (row, head) line at a time; within a line the states in ascending i.
 */
#include "reference/merge_states_ref.h"

#include <math.h>
#include <stddef.h>

#include "lib/internal/check.h"
#include "numerics/exact_math.h"
#include "numerics/fp_convert.h"

// --- reference

/* Merges line (t, h): out elements at line * Dv, lse at h * rows + t. */
static void merge_line(opp_dtype_t dtype, int32_t n, int64_t rows, int32_t hq, int32_t dv,
                       int64_t t, int32_t h, const void *states_out, const float *states_lse,
                       void *out, float *lse_out) {
    const int64_t line = t * hq + h;
    const int64_t state_elems = rows * hq * dv;
    const int64_t lse_state = (int64_t)hq * rows;
    const float *lse = states_lse + (int64_t)h * rows + t;
    double m = -INFINITY;
    int undefined = 0;
    for (int32_t i = 0; i < n; ++i) {
        const double l = lse[i * lse_state];
        undefined |= isnan(l) || l == INFINITY;
        m = l > m ? l : m;
    }
    double lse_res;
    if (undefined) {
        for (int32_t c = 0; c < dv; ++c) {
            opp__store_elem(out, (size_t)(line * dv + c), dtype, NAN);
        }
        lse_res = NAN;
    } else if (m == -INFINITY) {
        for (int32_t c = 0; c < dv; ++c) {
            opp__store_elem(out, (size_t)(line * dv + c), dtype, 0.0);
        }
        lse_res = -INFINITY;
    } else {
        double wsum = 0.0;
        for (int32_t i = 0; i < n; ++i) {
            wsum += opp__exp(lse[i * lse_state] - m);
        }
        for (int32_t c = 0; c < dv; ++c) {
            double acc = 0.0;
            for (int32_t i = 0; i < n; ++i) {
                const double w = opp__exp(lse[i * lse_state] - m);
                if (w != 0.0) {
                    const size_t e = (size_t)(i * state_elems + line * dv + c);
                    acc = fma(w, opp__load_elem(states_out, e, dtype), acc);
                }
            }
            opp__store_elem(out, (size_t)(line * dv + c), dtype, acc / wsum);
        }
        lse_res = m + log(wsum);
    }
    if (lse_out != NULL) {
        lse_out[(int64_t)h * rows + t] = (float)lse_res;
    }
}

// --- public entry

opp_status_t opp_ref_merge_attention_states(opp_dtype_t dtype, int32_t num_states, int64_t rows,
                                            int32_t num_heads, int32_t v_head_size,
                                            const void *states_out, const float *states_lse,
                                            void *out, float *lse_out) {
    OPP_TRY(opp_merge_attention_states_check(dtype, num_states, rows, num_heads, v_head_size));
    if (rows == 0) {
        return OPP_STATUS_SUCCESS;
    }
    OPP_RETURN_IF(states_out == NULL, OPP_STATUS_BAD_PARAM_NULL_POINTER, "states_out is NULL");
    OPP_RETURN_IF(states_lse == NULL, OPP_STATUS_BAD_PARAM_NULL_POINTER, "states_lse is NULL");
    OPP_RETURN_IF(out == NULL, OPP_STATUS_BAD_PARAM_NULL_POINTER, "out is NULL");
    for (int64_t t = 0; t < rows; ++t) {
        for (int32_t h = 0; h < num_heads; ++h) {
            merge_line(dtype, num_states, rows, num_heads, v_head_size, t, h, states_out,
                       states_lse, out, lse_out);
        }
    }
    return OPP_STATUS_SUCCESS;
}
