/*
 * merge_states.c - opp_merge_attention_states(), the public entry of the
 * merge (lib/oppacked.h, "Merge attention states"): shape check
 * (lib/merge_states_check.c) -> device pointers (NULL, alignment, overlap)
 * -> the kernel (kernels/merge_states.cu). Every check runs before the
 * first CUDA call; rows == 0 enqueues nothing.
 *
 *   states_out [n, rows, Hq, Dv] dtype    states_lse [n, Hq, rows] float32
 *   out        [rows, Hq, Dv]    dtype    lse_out    [Hq, rows]    float32
 */
#include <stddef.h>
#include <stdint.h>

#include "kernels/merge_states.h"
#include "lib/internal/check.h"
#include "lib/internal/merge_states.h"

static opp_status_t check_pointer(const char *name, const void *ptr, size_t align) {
    OPP_RETURN_IF(ptr == NULL, OPP_STATUS_BAD_PARAM_NULL_POINTER, "%s is NULL", name);
    OPP_RETURN_IF((uintptr_t)ptr % align != 0, OPP_STATUS_BAD_PARAM_MISALIGNED,
                  "%s = %p is not %zu-byte aligned", name, ptr, align);
    return OPP_STATUS_SUCCESS;
}

/* Fails when the byte ranges [a, a + a_bytes) and [b, b + b_bytes) meet. */
static opp_status_t check_disjoint(const char *a_name, const void *a, int64_t a_bytes,
                                   const char *b_name, const void *b, int64_t b_bytes) {
    const uintptr_t a0 = (uintptr_t)a, b0 = (uintptr_t)b;
    const int overlap = a0 < b0 + (uintptr_t)b_bytes && b0 < a0 + (uintptr_t)a_bytes;
    OPP_RETURN_IF(overlap, OPP_STATUS_BAD_PARAM,
                  "%s = %p (%lld bytes) overlaps %s = %p (%lld bytes)", a_name, a,
                  (long long)a_bytes, b_name, b, (long long)b_bytes);
    return OPP_STATUS_SUCCESS;
}

// --- public entry

opp_status_t opp_merge_attention_states(opp_dtype_t dtype, int32_t num_states, int64_t rows,
                                        int32_t num_heads, int32_t v_head_size,
                                        const void *states_out, const float *states_lse, void *out,
                                        float *lse_out, struct CUstream_st *stream) {
    OPP_TRY(opp_merge_attention_states_check(dtype, num_states, rows, num_heads, v_head_size));
    if (rows == 0) {
        return OPP_STATUS_SUCCESS; /* nothing to read or write */
    }
    OPP_TRY(check_pointer("states_out", states_out, 16));
    OPP_TRY(check_pointer("states_lse", states_lse, 4));
    OPP_TRY(check_pointer("out", out, 16));
    OPP_RETURN_IF((uintptr_t)lse_out % 4 != 0, OPP_STATUS_BAD_PARAM_MISALIGNED,
                  "lse_out = %p is not 4-byte aligned", (void *)lse_out);
    opp__merge_sizes_t s;
    opp__merge_sizes(dtype, num_states, rows, num_heads, v_head_size, &s);
    OPP_TRY(check_disjoint("out", out, s.out_bytes, "states_out", states_out, s.states_out_bytes));
    OPP_TRY(check_disjoint("out", out, s.out_bytes, "states_lse", states_lse, s.states_lse_bytes));
    if (lse_out != NULL) {
        OPP_TRY(check_disjoint("lse_out", lse_out, s.lse_out_bytes, "states_out", states_out,
                               s.states_out_bytes));
        OPP_TRY(check_disjoint("lse_out", lse_out, s.lse_out_bytes, "states_lse", states_lse,
                               s.states_lse_bytes));
        OPP_TRY(check_disjoint("lse_out", lse_out, s.lse_out_bytes, "out", out, s.out_bytes));
    }
    return opp__merge_states_launch(dtype, num_states, rows, num_heads, v_head_size, states_out,
                                    states_lse, out, lse_out, stream);
}
