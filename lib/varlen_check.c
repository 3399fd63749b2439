/*
 * varlen_check.c - opp_varlen_check(): validates HOST copies of the
 * cu_seqlens prefix sums against a descriptor.
 *
 * cu_seqlens_q / cu_seqlens_kv: host int32 [batch + 1], [0] == 0,
 * non-decreasing, [batch] <= total_q / total_kv (the totals are the
 * capacity: a CUDA graph captured once is replayed with smaller batches),
 * and every sequence length L[b] = cu[b+1] - cu[b] <= max_seqlen_q /
 * max_seqlen_kv (an upper bound, which may exceed the total). The first
 * failure is returned; the message names the array, indices and values,
 * e.g. "cu_seqlens_kv[3] = 17 < cu_seqlens_kv[2] = 20". Pure host code.
 */
#include <inttypes.h>

#include "lib/internal/check.h"
#include "lib/internal/desc_size.h"

// --- helpers

/* Checks one prefix-sum array of batch + 1 entries; side is "q" or "kv". */
static opp_status_t check_cu_seqlens(const char *side, const int32_t *cu, int32_t batch,
                                     int64_t total, int32_t max_seqlen) {
    OPP_RETURN_IF(cu[0] != 0, OPP_STATUS_BAD_PARAM_SEQLENS_START,
                  "cu_seqlens_%s[0] = %" PRId32 ", expected 0", side, cu[0]);
    for (int64_t b = 1; b <= batch; ++b) {
        OPP_RETURN_IF(cu[b] < cu[b - 1], OPP_STATUS_BAD_PARAM_SEQLENS_DECREASING,
                      "cu_seqlens_%s[%" PRId64 "] = %" PRId32 " < cu_seqlens_%s[%" PRId64
                      "] = %" PRId32,
                      side, b, cu[b], side, b - 1, cu[b - 1]);
    }
    OPP_RETURN_IF(cu[batch] > total, OPP_STATUS_BAD_PARAM_SEQLENS_TOTAL,
                  "cu_seqlens_%s[%" PRId32 "] = %" PRId32 " > total_%s = %" PRId64, side, batch,
                  cu[batch], side, total);
    for (int64_t b = 0; b < batch; ++b) {
        /* Non-decreasing from 0, so the difference is in 0 .. INT32_MAX. */
        const int32_t len = cu[b + 1] - cu[b];
        OPP_RETURN_IF(len > max_seqlen, OPP_STATUS_BAD_PARAM_MAX_SEQLEN,
                      "sequence %" PRId64 ": L_%s = cu_seqlens_%s[%" PRId64
                      "] - cu_seqlens_%s[%" PRId64 "] = %" PRId32 " > max_seqlen_%s = %" PRId32,
                      b, side, side, b + 1, side, b, len, side, max_seqlen);
    }
    return OPP_STATUS_SUCCESS;
}

// --- public entry

opp_status_t opp_varlen_check(const opp_attention_desc_t *user, const int32_t *cu_seqlens_q,
                              size_t cu_seqlens_q_count, const int32_t *cu_seqlens_kv,
                              size_t cu_seqlens_kv_count) {
    opp_attention_desc_t local; /* the caller's struct_size bytes, defaults beyond */
    OPP_TRY(opp__attention_desc_load(user, &local));
    const opp_attention_desc_t *desc = &local;
    OPP_TRY(opp_attention_desc_check(desc));
    OPP_RETURN_IF(cu_seqlens_q == NULL, OPP_STATUS_BAD_PARAM_NULL_POINTER, "cu_seqlens_q is NULL");
    OPP_RETURN_IF(cu_seqlens_kv == NULL, OPP_STATUS_BAD_PARAM_NULL_POINTER,
                  "cu_seqlens_kv is NULL");
    OPP_RETURN_IF(cu_seqlens_q_count != cu_seqlens_kv_count,
                  OPP_STATUS_BAD_PARAM_SEQLENS_COUNT_MISMATCH,
                  "cu_seqlens_q has %zu entries but cu_seqlens_kv has %zu", cu_seqlens_q_count,
                  cu_seqlens_kv_count);
    /* batch >= 1 here (desc_check), so batch + 1 cannot overflow size_t. */
    const size_t expected = (size_t)desc->batch + 1;
    OPP_RETURN_IF(cu_seqlens_q_count != expected, OPP_STATUS_BAD_PARAM_SEQLENS_COUNT,
                  "cu_seqlens_q has %zu entries, expected batch + 1 = %zu", cu_seqlens_q_count,
                  expected);
    OPP_TRY(check_cu_seqlens("q", cu_seqlens_q, desc->batch, desc->total_q, desc->max_seqlen_q));
    OPP_TRY(
        check_cu_seqlens("kv", cu_seqlens_kv, desc->batch, desc->total_kv, desc->max_seqlen_kv));
    return OPP_STATUS_SUCCESS;
}
