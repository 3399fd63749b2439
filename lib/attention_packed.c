/*
 * attention_packed.c - the public entries of the packed layout:
 * opp_packed_attention_workspace_size(), opp_packed_attention_fwd() and
 * opp_packed_attention_fwd_lse().
 *
 *   q [total_q, Hq, D], k [total_kv, Hkv, D], v [total_kv, Hkv, Dv],
 *   out [total_q, Hq, Dv]   (device; row strides from the descriptor,
 *                            elements; 0 = dense)
 *   lse [Hq, total_q] float32 (optional)
 *   cu_seqlens_q / cu_seqlens_kv : device int32 [B + 1]
 *
 * fwd = descriptor -> problem (lib/attention_desc.c) -> dispatch at claim
 * level -> pointers bound -> the one run path (lib/attention_run.c). Every
 * host-side check runs before the first CUDA call, so a bad argument
 * returns without touching the GPU.
 */
#include <stddef.h>

#include "lib/internal/attention_plan.h"
#include "lib/internal/attention_run.h"
#include "lib/internal/check.h"

// --- public entry

opp_status_t opp_packed_attention_workspace_size(const opp_attention_desc_t *desc,
                                                 size_t *workspace_bytes) {
    opp__problem_t p;
    OPP_TRY(opp__problem_from_desc(desc, &p)); /* the descriptor first, then the arguments */
    return opp__plan_workspace_bytes(&p, workspace_bytes);
}

opp_status_t opp_packed_attention_fwd_lse(const opp_attention_desc_t *desc,
                                          const opp_varlen_t *varlen, const void *q, const void *k,
                                          const void *v, void *out, float *lse, void *workspace,
                                          size_t workspace_bytes, struct CUstream_st *stream) {
    opp__problem_t p;
    OPP_TRY(opp__problem_from_desc(desc, &p));
    OPP_RETURN_IF(varlen == NULL, OPP_STATUS_BAD_PARAM_NULL_POINTER, "varlen is NULL");
    OPP_TRY(opp__problem_bind(&p, varlen->cu_seqlens_q, varlen->cu_seqlens_kv, NULL, q, k, v, out,
                              "out", lse));
    return opp__attention_run(&p, workspace, workspace_bytes, stream);
}

opp_status_t opp_packed_attention_fwd(const opp_attention_desc_t *desc, const opp_varlen_t *varlen,
                                      const void *q, const void *k, const void *v, void *out,
                                      void *workspace, size_t workspace_bytes,
                                      struct CUstream_st *stream) {
    return opp_packed_attention_fwd_lse(desc, varlen, q, k, v, out, NULL, workspace,
                                        workspace_bytes, stream);
}

opp_status_t opp_device_sm_arch(int32_t *sm_arch) {
    OPP_RETURN_IF(sm_arch == NULL, OPP_STATUS_BAD_PARAM_NULL_POINTER, "sm_arch is NULL");
    int device = 0;
    return opp__device_sm(&device, sm_arch);
}
