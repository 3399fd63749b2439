/*
 * merge_states_check.c - opp_merge_attention_states_check(): the shape
 * arguments of the merge (lib/oppacked.h, "Merge attention states"), and
 * the tensor sizes they give (lib/internal/merge_states.h). Pure host code
 * with no CUDA symbol: a validation-only program links it without cudart.
 *
 *   states_out [n, rows, Hq, Dv], out [rows, Hq, Dv]     (dtype)
 *   states_lse [n, Hq, rows],     lse_out [Hq, rows]     (float32)
 */
#include <inttypes.h>
#include <stddef.h>

#include "lib/internal/check.h"
#include "lib/internal/dtype_check.h"
#include "lib/internal/merge_states.h"

/* a * b for a, b >= 0, or -1 when it exceeds INT64_MAX. */
static int64_t mul_or_neg(int64_t a, int64_t b) {
    if (a < 0 || b < 0 || (b != 0 && a > INT64_MAX / b)) {
        return -1;
    }
    return a * b;
}

// --- internal (lib/internal/merge_states.h)

void opp__merge_sizes(opp_dtype_t dtype, int32_t num_states, int64_t rows, int32_t num_heads,
                      int32_t v_head_size, opp__merge_sizes_t *sizes) {
    const int64_t lines = rows * num_heads;
    sizes->out_bytes = lines * v_head_size * (int64_t)opp_dtype_size(dtype);
    sizes->states_out_bytes = sizes->out_bytes * num_states;
    sizes->lse_out_bytes = lines * (int64_t)sizeof(float);
    sizes->states_lse_bytes = sizes->lse_out_bytes * num_states;
}

// --- public entry

opp_status_t opp_merge_attention_states_check(opp_dtype_t dtype, int32_t num_states, int64_t rows,
                                              int32_t num_heads, int32_t v_head_size) {
    OPP_RETURN_IF(dtype == OPP_DTYPE_UNDEFINED, OPP_STATUS_BAD_PARAM_DTYPE,
                  "dtype = 0 (undefined) is not set");
    OPP_RETURN_IF(!opp__dtype_is_onnx(dtype), OPP_STATUS_BAD_PARAM_DTYPE,
                  "dtype = %d is not an ONNX element type", (int)dtype);
    OPP_RETURN_IF(!opp__dtype_is_supported(dtype), OPP_STATUS_NOT_SUPPORTED_DTYPE,
                  "dtype = %s is not supported (f32, f16, bf16 are)", opp_dtype_name(dtype));
    OPP_RETURN_IF(num_states < 1, OPP_STATUS_BAD_PARAM_SHAPE,
                  "num_states = %" PRId32 " must be >= 1", num_states);
    OPP_RETURN_IF(rows < 0, OPP_STATUS_BAD_PARAM_SHAPE, "rows = %" PRId64 " must be >= 0", rows);
    OPP_RETURN_IF(num_heads < 1, OPP_STATUS_BAD_PARAM_NUM_HEADS,
                  "num_heads = %" PRId32 " must be >= 1", num_heads);
    OPP_RETURN_IF(v_head_size < 1, OPP_STATUS_BAD_PARAM_V_HEAD_SIZE,
                  "v_head_size = %" PRId32 " must be >= 1", v_head_size);
    /* the largest tensor (states_out, or states_lse when Dv * esize < 4) in
     * bytes must fit int64: every index the kernel forms then does too */
    const int64_t esize = (int64_t)opp_dtype_size(dtype);
    const int64_t line_bytes = (int64_t)v_head_size * esize > 4 ? (int64_t)v_head_size * esize : 4;
    const int64_t bytes =
        mul_or_neg(mul_or_neg(mul_or_neg(rows, num_heads), num_states), line_bytes);
    OPP_RETURN_IF(bytes < 0, OPP_STATUS_BAD_PARAM_SHAPE,
                  "num_states = %" PRId32 " x rows = %" PRId64 " x num_heads = %" PRId32
                  " x v_head_size = %" PRId32 " elements of %s exceed 64-bit byte addressing",
                  num_states, rows, num_heads, v_head_size, opp_dtype_name(dtype));
    return OPP_STATUS_SUCCESS;
}
