/*
 * attention_packed.c - the public run path of PackedVarlenAttention:
 * opp_packed_attention_workspace_size() and opp_packed_attention_fwd().
 *
 *   q [total_q, Hq, D], k [total_kv, Hkv, D], v [total_kv, Hkv, Dv],
 *   out [total_q, Hq, Dv]   (device; row strides from the descriptor,
 *                            elements; 0 = dense)
 *   cu_seqlens_q / cu_seqlens_kv : device int32 [B + 1]
 *
 * fwd = descriptor check -> pointer checks (NULL, alignment) -> workspace
 * plan -> kernels/ launch (guard, then the exact kernel). Every host-side
 * check runs before the first CUDA call, so a bad argument returns without
 * touching the GPU. No allocation, no synchronization, no host copy of
 * cu_seqlens: the guard validates them on the device.
 */
#include <stddef.h>

#include "kernels/kernels.h"
#include "lib/internal/attention_run.h"
#include "lib/internal/check.h"
#include "numerics/exact_order.h"

// --- helpers

/* Kernel arguments of a checked descriptor (defaults resolved). */
static void packed_args(const opp_attention_desc_t *desc, const opp_varlen_t *varlen, const void *q,
                        const void *k, const void *v, void *out, opp__exact_args_t *a) {
    const int32_t hq = desc->num_heads;
    const int32_t hkv = desc->kv_num_heads != 0 ? desc->kv_num_heads : hq;
    const int32_t d = desc->head_size;
    const int32_t dv = desc->v_head_size != 0 ? desc->v_head_size : d;
    *a = (opp__exact_args_t){0};
    a->dtype = (int32_t)desc->q_dtype;
    a->batch = desc->batch;
    a->hq = hq;
    a->hkv = hkv;
    a->d = d;
    a->dv = dv;
    a->max_seqlen_q = desc->max_seqlen_q;
    a->max_seqlen_kv = desc->max_seqlen_kv;
    a->total_q = desc->total_q;
    a->total_kv = desc->total_kv;
    a->cu_seqlens_q = varlen->cu_seqlens_q;
    a->cu_seqlens_kv = varlen->cu_seqlens_kv;
    a->q = (opp__exact_tensor_t){q, desc->q_row_stride != 0 ? desc->q_row_stride : (int64_t)hq * d,
                                 d, 0};
    a->k = (opp__exact_tensor_t){k, desc->k_row_stride != 0 ? desc->k_row_stride : (int64_t)hkv * d,
                                 d, 0};
    a->v = (opp__exact_tensor_t){
        v, desc->v_row_stride != 0 ? desc->v_row_stride : (int64_t)hkv * dv, dv, 0};
    a->out = (opp__exact_tensor_t){
        out, desc->out_row_stride != 0 ? desc->out_row_stride : (int64_t)hq * dv, dv, 0};
    a->sqrt_scale = opp__exact_sqrt_scale(desc->scale, d);
    a->softcap = (double)desc->softcap;
    a->is_causal = desc->is_causal;
}

// --- public entry

opp_status_t opp_packed_attention_workspace_size(const opp_attention_desc_t *desc,
                                                 size_t *workspace_bytes) {
    OPP_RETURN_IF(desc == NULL, OPP_STATUS_BAD_PARAM_NULL_POINTER, "desc is NULL");
    OPP_RETURN_IF(workspace_bytes == NULL, OPP_STATUS_BAD_PARAM_NULL_POINTER,
                  "workspace_bytes is NULL");
    OPP_TRY(opp_attention_desc_check(desc));
    opp__attention_plan_t plan;
    opp__attention_plan_layout(NULL, &plan);
    *workspace_bytes = plan.workspace_bytes;
    return OPP_STATUS_SUCCESS;
}

opp_status_t opp_packed_attention_fwd(const opp_attention_desc_t *desc, const opp_varlen_t *varlen,
                                      const void *q, const void *k, const void *v, void *out,
                                      void *workspace, size_t workspace_bytes,
                                      struct CUstream_st *stream) {
    OPP_RETURN_IF(desc == NULL, OPP_STATUS_BAD_PARAM_NULL_POINTER, "desc is NULL");
    OPP_TRY(opp_attention_desc_check(desc));
    OPP_RETURN_IF(varlen == NULL, OPP_STATUS_BAD_PARAM_NULL_POINTER, "varlen is NULL");
    OPP_TRY(opp__check_device_array("varlen->cu_seqlens_q", varlen->cu_seqlens_q, 4));
    OPP_TRY(opp__check_device_array("varlen->cu_seqlens_kv", varlen->cu_seqlens_kv, 4));
    OPP_TRY(opp__check_device_tensor("q", q, desc->total_q));
    OPP_TRY(opp__check_device_tensor("k", k, desc->total_kv));
    OPP_TRY(opp__check_device_tensor("v", v, desc->total_kv));
    OPP_TRY(opp__check_device_tensor("out", out, desc->total_q));
    opp__attention_plan_t plan;
    OPP_TRY(opp__attention_plan_bind(workspace, workspace_bytes, &plan));
    opp__exact_args_t args;
    packed_args(desc, varlen, q, k, v, out, &args);
    OPP_TRY(opp__exact_attention_supported(args.dtype, args.d, args.dv));
    return opp__exact_attention_launch(&args, plan.guard_record, stream);
}
