/*
 * gpu_run.c - the library's two entries and the cuBLAS reference as timer
 * calls (see gpu_run.h).
 */
#include "harness/gpu_run.h"

opp_status_t opp_hgpu_packed_run(void *packed_call) {
    const opp_hgpu_packed_call_t *c = packed_call;
    const opp_varlen_t varlen = {c->dev->cu_q, c->dev->cu_kv};
    return opp_packed_attention_fwd(&c->desc, &varlen, c->dev->q, c->dev->k, c->dev->v, c->dev->out,
                                    c->dev->workspace, c->dev->workspace_bytes, c->stream);
}

opp_status_t opp_hgpu_nonpad_run(void *nonpad_call) {
    const opp_hgpu_nonpad_call_t *c = nonpad_call;
    return opp_attention24_nonpad_fwd(&c->desc, c->nonpad, c->q, c->k, c->v, c->y, c->workspace,
                                      c->workspace_bytes, c->stream);
}

void opp_hgpu_nonpad_desc(const opp_ref_attention24_desc_t *d, opp_attention24_desc_t *desc) {
    opp_attention24_desc_init(desc);
    desc->q_dtype = desc->k_dtype = desc->v_dtype = desc->out_dtype = d->dtype;
    desc->input_rank = d->input_rank;
    desc->batch = d->batch;
    desc->num_heads = d->q_num_heads;
    desc->kv_num_heads = d->kv_num_heads;
    desc->head_size = d->head_size;
    desc->v_head_size = d->v_head_size;
    desc->q_seqlen = d->q_seqlen;
    desc->kv_seqlen = d->kv_seqlen;
    desc->scale = d->scale;
    desc->is_causal = d->is_causal;
    desc->softcap = d->softcap;
}

opp_status_t opp_hgpu_ref_run(void *ref_call) {
    const opp_hgpu_ref_call_t *c = ref_call;
    return opp_ref_gpu_attention24(c->ref, c->desc, c->dev, c->workspace, c->workspace_bytes,
                                   c->stream);
}
