/*
 * attention24_desc.c - defaults and host-side validation of
 * opp_attention24_desc_t, the descriptor of the Attention-24 layout entry
 * (pure C, never touches a GPU; the validation-only API must link without
 * the CUDA runtime).
 *
 *   4D: Q [B, Hq, S_q, D], K [B, Hkv, S_kv, D], V [B, Hkv, S_kv, Dv],
 *       Y [B, Hq, S_q, Dv];  3D: Q [B, S_q, Hq*D] and likewise.
 *
 * The claim-time fields (dtypes, heads, head sizes, scale, softcap,
 * is_causal, algo) are checked by opp_attention_claim_check() itself, on a
 * packed descriptor carrying the same fields, so both entries give the same
 * statuses and messages. Then: input_rank, batch, sequence lengths, and
 * that every tensor's byte size fits in int64.
 */
#include <inttypes.h>

#include "lib/internal/check.h"

// --- helpers

/* The claim-time fields of desc, as a packed descriptor. */
static opp_attention_desc_t claim_fields(const opp_attention24_desc_t *desc) {
    opp_attention_desc_t c;
    opp_attention_desc_init(&c);
    c.q_dtype = desc->q_dtype;
    c.k_dtype = desc->k_dtype;
    c.v_dtype = desc->v_dtype;
    c.out_dtype = desc->out_dtype;
    c.num_heads = desc->num_heads;
    c.kv_num_heads = desc->kv_num_heads;
    c.head_size = desc->head_size;
    c.v_head_size = desc->v_head_size;
    c.scale = desc->scale;
    c.is_causal = desc->is_causal;
    c.softcap = desc->softcap;
    c.algo = desc->algo;
    return c;
}

/* B * S * H * W elements of esize bytes must fit in INT64_MAX bytes (all
 * factors >= 0 here). */
static opp_status_t check_extent(const char *tensor, int64_t b, int64_t s, int64_t h, int64_t w,
                                 int64_t esize) {
    const int64_t f[4] = {b, s, h, w};
    int64_t bytes = esize;
    for (int i = 0; i < 4; ++i) {
        OPP_RETURN_IF(f[i] > 0 && bytes > INT64_MAX / f[i], OPP_STATUS_BAD_PARAM_SHAPE,
                      "%s of %" PRId64 " x %" PRId64 " x %" PRId64 " x %" PRId64
                      " elements of %" PRId64 " bytes exceeds INT64_MAX bytes",
                      tensor, b, s, h, w, esize);
        bytes *= f[i];
    }
    return OPP_STATUS_SUCCESS;
}

// --- public entry

void opp_attention24_desc_init(opp_attention24_desc_t *desc) {
    if (desc == NULL) {
        return;
    }
    *desc = (opp_attention24_desc_t){
        .q_dtype = OPP_DTYPE_UNDEFINED,
        .k_dtype = OPP_DTYPE_UNDEFINED,
        .v_dtype = OPP_DTYPE_UNDEFINED,
        .out_dtype = OPP_DTYPE_UNDEFINED,
        .input_rank = 4,
        .algo = OPP_ALGO_EXACT,
    };
}

opp_status_t opp_attention24_desc_check(const opp_attention24_desc_t *desc) {
    OPP_RETURN_IF(desc == NULL, OPP_STATUS_BAD_PARAM_NULL_POINTER, "desc is NULL");
    const opp_attention_desc_t claim = claim_fields(desc);
    OPP_TRY(opp_attention_claim_check(&claim));
    OPP_RETURN_IF(desc->input_rank != 3 && desc->input_rank != 4, OPP_STATUS_BAD_PARAM_SHAPE,
                  "input_rank = %" PRId32 " must be 3 or 4", desc->input_rank);
    OPP_RETURN_IF(desc->batch <= 0, OPP_STATUS_BAD_PARAM_BATCH, "batch = %" PRId32 " must be >= 1",
                  desc->batch);
    OPP_RETURN_IF(desc->q_seqlen < 0, OPP_STATUS_BAD_PARAM_SHAPE,
                  "q_seqlen = %" PRId32 " must be >= 0", desc->q_seqlen);
    OPP_RETURN_IF(desc->kv_seqlen < 0, OPP_STATUS_BAD_PARAM_SHAPE,
                  "kv_seqlen = %" PRId32 " must be >= 0", desc->kv_seqlen);
    const int64_t hq = desc->num_heads;
    const int64_t hkv = desc->kv_num_heads != 0 ? desc->kv_num_heads : hq;
    const int64_t d = desc->head_size;
    const int64_t dv = desc->v_head_size != 0 ? desc->v_head_size : d;
    const int64_t es = (int64_t)opp_dtype_size(desc->q_dtype);
    OPP_TRY(check_extent("q", desc->batch, desc->q_seqlen, hq, d, es));
    OPP_TRY(check_extent("k", desc->batch, desc->kv_seqlen, hkv, d, es));
    OPP_TRY(check_extent("v", desc->batch, desc->kv_seqlen, hkv, dv, es));
    OPP_TRY(check_extent("y", desc->batch, desc->q_seqlen, hq, dv, es));
    return OPP_STATUS_SUCCESS;
}
