/*
 * gpu_packed.c - the packed batch on the device and the library's two
 * entries as calls (see gpu_packed.h).
 */
#include "harness/gpu_packed.h"

#include <string.h>

// --- the packed batch on the device

size_t opp_hgpu_out_elems(const opp_lb_t *lb) {
    return (size_t)lb->total_q * (size_t)lb->num_heads * (size_t)lb->v_head_size;
}

opp_status_t opp_hgpu_packed_upload(const opp_lb_t *lb, opp_hgpu_poison_t poison,
                                    opp_hgpu_packed_t *dev) {
    const size_t es = opp_dtype_size(lb->dtype);
    const size_t qb = (size_t)lb->total_q * (size_t)lb->num_heads * (size_t)lb->head_size * es;
    const size_t kb = (size_t)lb->total_kv * (size_t)lb->kv_num_heads * (size_t)lb->head_size * es;
    const size_t vb =
        (size_t)lb->total_kv * (size_t)lb->kv_num_heads * (size_t)lb->v_head_size * es;
    const size_t cb = ((size_t)lb->batch + 1) * sizeof(int32_t);
    memset(dev, 0, sizeof(*dev));
    dev->q = opp_hgpu_upload(lb->q, qb);
    dev->k = opp_hgpu_upload(lb->k, kb);
    dev->v = opp_hgpu_upload(lb->v, vb);
    dev->cu_q = opp_hgpu_upload(lb->cu_q, cb);
    dev->cu_kv = opp_hgpu_upload(lb->cu_kv, cb);
    dev->out_bytes = opp_hgpu_out_elems(lb) * es;
    dev->out = opp_hgpu_alloc_poisoned(opp_hgpu_out_elems(lb), lb->dtype, poison);
    opp_attention_desc_t desc;
    opp_lb_packed_desc(lb, &desc);
    const opp_status_t st = opp_packed_attention_workspace_size(&desc, &dev->workspace_bytes);
    if (st == OPP_STATUS_SUCCESS) {
        dev->workspace = opp_hgpu_alloc(dev->workspace_bytes);
    }
    return st;
}

cudaError_t opp_hgpu_packed_free(opp_hgpu_packed_t *dev) {
    const void *all[] = {dev->q, dev->k, dev->v, dev->out, dev->cu_q, dev->cu_kv, dev->workspace};
    const cudaError_t err = opp_hgpu_free_all(all, sizeof(all) / sizeof(all[0]));
    memset(dev, 0, sizeof(*dev));
    return err;
}

// --- the library's entries as calls

opp_status_t opp_hgpu_packed_run(void *packed_call) {
    const opp_hgpu_packed_call_t *c = packed_call;
    const opp_varlen_t varlen = {c->dev->cu_q, c->dev->cu_kv};
    return opp_packed_attention_fwd_lse(&c->desc, &varlen, c->dev->q, c->dev->k, c->dev->v,
                                        c->dev->out, c->lse, c->dev->workspace,
                                        c->dev->workspace_bytes, c->stream);
}

opp_status_t opp_hgpu_nonpad_run(void *nonpad_call) {
    const opp_hgpu_nonpad_call_t *c = nonpad_call;
    return opp_attention24_nonpad_fwd_lse(&c->desc, c->nonpad, c->q, c->k, c->v, c->y, c->lse,
                                          c->workspace, c->workspace_bytes, c->stream);
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
    desc->algo = OPP_ALGO_EXACT; /* bit-identity with the references; callers may change it */
}
