/*
 * attention24_nonpad.c - the Attention-24 layout entry:
 * opp_attention24_nonpad_workspace_size() and opp_attention24_nonpad_fwd(),
 * the exact kernels of the packed path on ONNX Attention-24's padded
 * tensors with nonpad_kv_seqlen (no mask, no past).
 *
 *   4D: Q [B, Hq, S_q, D], K [B, Hkv, S_kv, D], V [B, Hkv, S_kv, Dv],
 *       Y [B, Hq, S_q, Dv]
 *   3D: Q [B, S_q, Hq*D], K [B, S_kv, Hkv*D], V [B, S_kv, Hkv*Dv],
 *       Y [B, S_q, Hq*Dv]
 *   nonpad_kv_seqlen: device int64 [B], each in 0..S_kv (checked on the
 *   device by the guard)
 *
 * Sequence b has Tq = S_q query rows and Tkv = nonpad[b] keys; its element
 * (row i, head h, column d) is at b*batch + i*row + h*head + d with
 *   4D: row = W, head = S*W;  3D: row = H*W, head = W;  batch = H*S*W
 * (W = D or Dv, H and S of the tensor). Causal is tail-aligned: offset
 * nonpad[b] - S_q, ONNX's rule with nonpad_kv_seqlen. Keys j >= nonpad[b]
 * are never read; every Y row is written.
 */
#include <stddef.h>

#include "kernels/kernels.h"
#include "lib/internal/attention_run.h"
#include "lib/internal/check.h"
#include "numerics/exact_order.h"

// --- helpers

/* Element strides of a [B, H, S, W] (rank 4) or [B, S, H*W] (rank 3) tensor. */
static opp__exact_tensor_t padded_tensor(const void *ptr, int32_t rank, int64_t h, int64_t s,
                                         int64_t w) {
    if (rank == 4) {
        return (opp__exact_tensor_t){ptr, w, s * w, h * s * w};
    }
    return (opp__exact_tensor_t){ptr, h * w, w, h * s * w};
}

// --- public entry

opp_status_t opp_attention24_nonpad_workspace_size(const opp_attention24_desc_t *desc,
                                                   size_t *workspace_bytes) {
    OPP_RETURN_IF(workspace_bytes == NULL, OPP_STATUS_BAD_PARAM_NULL_POINTER,
                  "workspace_bytes is NULL");
    OPP_TRY(opp_attention24_desc_check(desc));
    opp__attention_plan_t plan;
    opp__attention_plan_layout(NULL, &plan);
    *workspace_bytes = plan.workspace_bytes;
    return OPP_STATUS_SUCCESS;
}

opp_status_t opp_attention24_nonpad_fwd(const opp_attention24_desc_t *desc,
                                        const int64_t *nonpad_kv_seqlen, const void *q,
                                        const void *k, const void *v, void *y, void *workspace,
                                        size_t workspace_bytes, struct CUstream_st *stream) {
    OPP_TRY(opp_attention24_desc_check(desc));
    OPP_TRY(opp__check_device_array("nonpad_kv_seqlen", nonpad_kv_seqlen, 8));
    const int64_t rows_q = (int64_t)desc->batch * desc->q_seqlen;
    const int64_t rows_kv = (int64_t)desc->batch * desc->kv_seqlen;
    OPP_TRY(opp__check_device_tensor("q", q, rows_q));
    OPP_TRY(opp__check_device_tensor("k", k, rows_kv));
    OPP_TRY(opp__check_device_tensor("v", v, rows_kv));
    OPP_TRY(opp__check_device_tensor("y", y, rows_q));
    opp__attention_plan_t plan;
    OPP_TRY(opp__attention_plan_bind(workspace, workspace_bytes, &plan));
    const int32_t hq = desc->num_heads;
    const int32_t hkv = desc->kv_num_heads != 0 ? desc->kv_num_heads : hq;
    const int32_t d = desc->head_size;
    const int32_t dv = desc->v_head_size != 0 ? desc->v_head_size : d;
    const int32_t rank = desc->input_rank;
    opp__exact_args_t a = {0};
    a.dtype = (int32_t)desc->q_dtype;
    a.batch = desc->batch;
    a.hq = hq;
    a.hkv = hkv;
    a.d = d;
    a.dv = dv;
    a.max_seqlen_q = desc->q_seqlen;
    a.max_seqlen_kv = desc->kv_seqlen;
    a.q_seqlen = desc->q_seqlen;
    a.kv_seqlen = desc->kv_seqlen;
    a.nonpad = nonpad_kv_seqlen;
    a.q = padded_tensor(q, rank, hq, desc->q_seqlen, d);
    a.k = padded_tensor(k, rank, hkv, desc->kv_seqlen, d);
    a.v = padded_tensor(v, rank, hkv, desc->kv_seqlen, dv);
    a.out = padded_tensor(y, rank, hq, desc->q_seqlen, dv);
    a.sqrt_scale = opp__exact_sqrt_scale(desc->scale, d);
    a.softcap = (double)desc->softcap;
    a.is_causal = desc->is_causal;
    OPP_TRY(opp__exact_attention_supported(a.dtype, d, dv));
    return opp__exact_attention_launch(&a, plan.guard_record, stream);
}
