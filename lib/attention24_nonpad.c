/*
 * attention24_nonpad.c - the public entries of the Attention-24 layout:
 * opp_attention24_nonpad_workspace_size(), opp_attention24_nonpad_fwd()
 * and opp_attention24_nonpad_fwd_lse(): the kernels of the packed path on
 * ONNX Attention-24's padded tensors with nonpad_kv_seqlen (no mask, no
 * past).
 *
 *   4D: Q [B, Hq, S_q, D], K [B, Hkv, S_kv, D], V [B, Hkv, S_kv, Dv],
 *       Y [B, Hq, S_q, Dv]
 *   3D: Q [B, S_q, Hq*D], K [B, S_kv, Hkv*D], V [B, S_kv, Hkv*Dv],
 *       Y [B, S_q, Hq*Dv]
 *   lse [B, Hq, S_q] float32 (optional)
 *   nonpad_kv_seqlen: device int64 [B], each in 0..S_kv (checked on the
 *   device by the guard)
 *
 * Sequence b has Tq = S_q query rows and Tkv = nonpad[b] keys (strides:
 * lib/attention24_desc.c). Causal is tail-aligned: offset nonpad[b] - S_q,
 * ONNX's rule with nonpad_kv_seqlen. Keys j >= nonpad[b] are never read;
 * every Y row is written. The run itself is the packed entry's
 * (lib/attention_run.c).
 */
#include <stddef.h>

#include "lib/internal/attention_plan.h"
#include "lib/internal/attention_run.h"
#include "lib/internal/check.h"

// --- public entry

opp_status_t opp_attention24_nonpad_workspace_size(const opp_attention24_desc_t *desc,
                                                   size_t *workspace_bytes) {
    opp__problem_t p;
    OPP_TRY(opp__problem_from_attention24(desc, &p)); /* the descriptor first, then the arguments */
    return opp__plan_workspace_bytes(&p, workspace_bytes);
}

opp_status_t opp_attention24_nonpad_fwd_lse(const opp_attention24_desc_t *desc,
                                            const int64_t *nonpad_kv_seqlen, const void *q,
                                            const void *k, const void *v, void *y, float *lse,
                                            void *workspace, size_t workspace_bytes,
                                            struct CUstream_st *stream) {
    opp__problem_t p;
    OPP_TRY(opp__problem_from_attention24(desc, &p));
    OPP_TRY(opp__problem_bind(&p, NULL, NULL, nonpad_kv_seqlen, q, k, v, y, "y", lse));
    return opp__attention_run(&p, workspace, workspace_bytes, stream);
}

opp_status_t opp_attention24_nonpad_fwd(const opp_attention24_desc_t *desc,
                                        const int64_t *nonpad_kv_seqlen, const void *q,
                                        const void *k, const void *v, void *y, void *workspace,
                                        size_t workspace_bytes, struct CUstream_st *stream) {
    return opp_attention24_nonpad_fwd_lse(desc, nonpad_kv_seqlen, q, k, v, y, NULL, workspace,
                                          workspace_bytes, stream);
}
