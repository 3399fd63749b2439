/*
 * varlen_fuzz.c - libFuzzer target: opp_varlen_check() on arbitrary host
 * cu_seqlens arrays against small valid-or-not descriptors (fuzz/README.md).
 *
 * Input: batch (1 byte: 1..32, or 0 / -1 when the byte is 0xFF / 0xFE), a
 * count tweak byte (entries of each array: batch + 1, or off by one, or
 * mismatched), total_q, total_kv, max_seqlen_q, max_seqlen_kv (int32 each),
 * then the int32 entries of cu_seqlens_q and cu_seqlens_kv. The claim-time
 * fields are fixed and valid (f16, 2 heads, head_size 8, EXACT).
 * Oracle: an independent re-implementation of the whole documented rule -
 * the descriptor's batch shape, then counts (mismatch, then batch + 1),
 * then for q and then kv: [0] == 0, non-decreasing, [batch] <= total
 * (oracle_cu_last_ok),
 * every length <= max_seqlen - predicting the exact status. Accepted input
 * therefore always has consistent extents; the library reads no entry past
 * the counts it was given (ASan: the arrays are malloc'ed to size).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz_common.h"
#include "fuzz/oracle.h"

static opp_status_t oracle_array(const int32_t *cu, int32_t batch, int64_t total, int32_t max) {
    if (cu[0] != 0) {
        return OPP_STATUS_BAD_PARAM_SEQLENS_START;
    }
    for (int32_t b = 1; b <= batch; ++b) {
        if (cu[b] < cu[b - 1]) {
            return OPP_STATUS_BAD_PARAM_SEQLENS_DECREASING;
        }
    }
    if (!oracle_cu_last_ok(cu[batch], total)) {
        return OPP_STATUS_BAD_PARAM_SEQLENS_TOTAL;
    }
    for (int32_t b = 0; b < batch; ++b) {
        if ((int64_t)cu[b + 1] - cu[b] > max) {
            return OPP_STATUS_BAD_PARAM_MAX_SEQLEN;
        }
    }
    return OPP_STATUS_SUCCESS;
}

static opp_status_t oracle(const opp_attention_desc_t *d, size_t nq, size_t nkv,
                           const int32_t *cu_q, const int32_t *cu_kv) {
    if (d->batch < 1) {
        return OPP_STATUS_BAD_PARAM_BATCH;
    }
    const int64_t totals[2] = {d->total_q, d->total_kv};
    const int32_t maxs[2] = {d->max_seqlen_q, d->max_seqlen_kv};
    for (int i = 0; i < 2; ++i) {
        if (totals[i] < 0) {
            return OPP_STATUS_BAD_PARAM_TOTAL;
        }
    }
    for (int i = 0; i < 2; ++i) {
        if (!oracle_max_seqlen_ok(maxs[i], totals[i], d->batch)) {
            return OPP_STATUS_BAD_PARAM_MAX_SEQLEN;
        }
    }
    if (nq != nkv) {
        return OPP_STATUS_BAD_PARAM_SEQLENS_COUNT_MISMATCH;
    }
    if (nq != (size_t)d->batch + 1) {
        return OPP_STATUS_BAD_PARAM_SEQLENS_COUNT;
    }
    const opp_status_t q = oracle_array(cu_q, d->batch, d->total_q, d->max_seqlen_q);
    return q != OPP_STATUS_SUCCESS ? q
                                   : oracle_array(cu_kv, d->batch, d->total_kv, d->max_seqlen_kv);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    uint8_t b8 = 0, tweak = 0;
    int32_t totals[2], maxs[2];
    fuzz_take(&b8, 1, &data, &size);
    fuzz_take(&tweak, 1, &data, &size);
    fuzz_take(totals, sizeof totals, &data, &size);
    fuzz_take(maxs, sizeof maxs, &data, &size);
    opp_attention_desc_t d;
    opp_attention_desc_init(&d);
    d.q_dtype = d.k_dtype = d.v_dtype = d.out_dtype = OPP_DTYPE_F16;
    d.num_heads = 2;
    d.head_size = 8;
    d.algo = OPP_ALGO_EXACT;
    d.batch = b8 == 0xFF ? 0 : b8 == 0xFE ? -1 : 1 + b8 % 32;
    d.total_q = totals[0];
    d.total_kv = totals[1];
    d.max_seqlen_q = maxs[0];
    d.max_seqlen_kv = maxs[1];
    /* entries of each array: batch + 1, or one of the count faults */
    const size_t n = d.batch > 0 ? (size_t)d.batch + 1 : 1;
    size_t nq = n, nkv = n;
    switch (tweak % 8) {
    case 5:
        nq = n - 1;
        nkv = n - 1;
        break;
    case 6:
        nq = n + 1;
        nkv = n + 1;
        break;
    case 7:
        nkv = n + 1;
        break;
    default:
        break;
    }
    /* exact-size heap arrays: ASan sees any read past the counts */
    int32_t *cu_q = malloc((nq > 0 ? nq : 1) * sizeof(int32_t));
    int32_t *cu_kv = malloc((nkv > 0 ? nkv : 1) * sizeof(int32_t));
    if (cu_q == NULL || cu_kv == NULL) {
        free(cu_q);
        free(cu_kv);
        return 0;
    }
    fuzz_take(cu_q, nq * sizeof(int32_t), &data, &size);
    fuzz_take(cu_kv, nkv * sizeof(int32_t), &data, &size);
    const opp_status_t st = opp_varlen_check(&d, cu_q, nq, cu_kv, nkv);
    fuzz_check_result(st, "opp_varlen_check");
    const opp_status_t want = oracle(&d, nq, nkv, cu_q, cu_kv);
    FUZZ_REQUIRE(st == want, "opp_varlen_check %s, oracle %s (batch %d, counts %zu %zu)",
                 opp_status_name(st), opp_status_name(want), (int)d.batch, nq, nkv);
    free(cu_q);
    free(cu_kv);
    return 0;
}
