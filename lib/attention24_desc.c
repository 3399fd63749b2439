/*
 * attention24_desc.c - host-side validation of
 * opp_attention24_desc_t, the descriptor of the Attention-24 layout entry
 * (pure C, never touches a GPU; the validation-only API must link without
 * the CUDA runtime).
 *
 *   4D: Q [B, Hq, S_q, D], K [B, Hkv, S_kv, D], V [B, Hkv, S_kv, Dv],
 *       Y [B, Hq, S_q, Dv];  3D: Q [B, S_q, Hq*D] and likewise.
 *
 * The claim-time fields (dtypes, heads, head sizes, scale, softcap,
 * is_causal, algo) are checked by opp__claim_fields_check() (lib/problem.c),
 * as for the packed descriptor, so both entries give the same statuses and
 * messages. Then: input_rank, batch, sequence lengths, and that every
 * tensor's byte size fits in int64. opp__problem_from_attention24() is the
 * one place this descriptor is resolved into the internal problem; it
 * reads the caller's descriptor through opp__attention24_desc_load()
 * (lib/desc_size.c) first.
 */
#include <inttypes.h>

#include "lib/internal/check.h"
#include "lib/internal/desc_size.h"
#include "lib/internal/dispatch.h"
#include "lib/internal/problem.h"

// --- helpers

/* Element strides of a [B, H, S, W] (rank 4) or [B, S, H*W] (rank 3) tensor. */
static opp__tensor_t padded_tensor(int32_t rank, int64_t h, int64_t s, int64_t w) {
    if (rank == 4) {
        return (opp__tensor_t){NULL, w, s * w, h * s * w};
    }
    return (opp__tensor_t){NULL, h * w, w, h * s * w};
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

// --- the problem

opp_status_t opp__problem_from_attention24(const opp_attention24_desc_t *user, opp__problem_t *p) {
    opp_attention24_desc_t local; /* the caller's struct_size bytes, defaults beyond */
    OPP_TRY(opp__attention24_desc_load(user, &local));
    const opp_attention24_desc_t *desc = &local;
    const opp__claim_fields_t f = OPP__CLAIM_FIELDS(desc);
    opp__attrs_t a;
    OPP_TRY(opp__claim_fields_check(&f, &a));
    OPP_TRY(opp__dispatch_claim(&a)); /* claim-time faults before batch-shape faults */
    OPP_RETURN_IF(desc->input_rank != 3 && desc->input_rank != 4, OPP_STATUS_BAD_PARAM_SHAPE,
                  "input_rank = %" PRId32 " must be 3 or 4", desc->input_rank);
    OPP_RETURN_IF(desc->batch <= 0, OPP_STATUS_BAD_PARAM_BATCH, "batch = %" PRId32 " must be >= 1",
                  desc->batch);
    OPP_RETURN_IF(desc->q_seqlen < 0, OPP_STATUS_BAD_PARAM_SHAPE,
                  "q_seqlen = %" PRId32 " must be >= 0", desc->q_seqlen);
    OPP_RETURN_IF(desc->kv_seqlen < 0, OPP_STATUS_BAD_PARAM_SHAPE,
                  "kv_seqlen = %" PRId32 " must be >= 0", desc->kv_seqlen);
    const int64_t es = (int64_t)opp_dtype_size(a.dtype);
    OPP_TRY(check_extent("q", desc->batch, desc->q_seqlen, a.hq, a.d, es));
    OPP_TRY(check_extent("k", desc->batch, desc->kv_seqlen, a.hkv, a.d, es));
    OPP_TRY(check_extent("v", desc->batch, desc->kv_seqlen, a.hkv, a.dv, es));
    OPP_TRY(check_extent("y", desc->batch, desc->q_seqlen, a.hq, a.dv, es));
    const int32_t rank = desc->input_rank;
    *p = (opp__problem_t){0};
    p->a = a;
    p->layout = OPP__LAYOUT_PADDED;
    p->entry = "opp_attention24_nonpad_fwd";
    p->batch = desc->batch;
    p->max_seqlen_q = p->q_seqlen = desc->q_seqlen;
    p->max_seqlen_kv = p->kv_seqlen = desc->kv_seqlen;
    p->total_q = (int64_t)desc->batch * desc->q_seqlen;
    p->total_kv = (int64_t)desc->batch * desc->kv_seqlen;
    p->input_rank = rank;
    p->q = padded_tensor(rank, a.hq, desc->q_seqlen, a.d);
    p->k = padded_tensor(rank, a.hkv, desc->kv_seqlen, a.d);
    p->v = padded_tensor(rank, a.hkv, desc->kv_seqlen, a.dv);
    p->out = padded_tensor(rank, a.hq, desc->q_seqlen, a.dv);
    p->lse_head = desc->q_seqlen; /* [B, Hq, S_q] */
    p->lse_batch = (int64_t)a.hq * desc->q_seqlen;
    const opp__kernel_row_t *row; /* the whole problem: strides too */
    return opp__dispatch_select(p, 0, &row);
}

// --- public entry

opp_status_t opp_attention24_desc_check(const opp_attention24_desc_t *desc) {
    opp__problem_t p;
    return opp__problem_from_attention24(desc, &p);
}

opp_status_t opp_attention24_kernel_query(const opp_attention24_desc_t *desc, int32_t sm_arch,
                                          const char **kernel_name) {
    if (kernel_name != NULL) {
        *kernel_name = NULL;
    }
    opp__problem_t p;
    OPP_TRY(opp__problem_from_attention24(desc, &p)); /* the descriptor first */
    OPP_TRY(opp__dispatch_query_args(sm_arch, kernel_name));
    return opp__dispatch_name(&p, sm_arch, kernel_name);
}
