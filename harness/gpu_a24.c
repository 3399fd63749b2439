/*
 * gpu_a24.c - the Attention-24 tensors on the device (upload, poisoned
 * outputs, download, free) and the cuBLAS reference as a call (see
 * gpu_a24.h).
 */
#include "harness/gpu_a24.h"

#include <stdlib.h>
#include <string.h>

#include "harness/gpu_status.h"

// --- the tensors on the device

/* A device copy of an input the host has (NULL: absent, stays NULL). */
static void *device_input(const void *host, size_t bytes) {
    return host != NULL ? opp_hgpu_upload(host, bytes) : NULL;
}

/* A poisoned device buffer of elems when the host names the output. */
static void *device_output(const void *host, size_t elems, opp_dtype_t dtype,
                           opp_hgpu_poison_t poison) {
    return host != NULL ? opp_hgpu_alloc_poisoned(elems, dtype, poison) : NULL;
}

void opp_hgpu_a24_upload(const opp_ref_attention24_desc_t *d,
                         const opp_ref_attention24_tensors_t *host, opp_hgpu_poison_t poison,
                         opp_ref_attention24_tensors_t *dev) {
    opp_ref_attention24_sizes_t n;
    opp_ref_attention24_sizes(d, &n);
    const size_t es = opp_dtype_size(d->dtype);
    const size_t mask_es = d->mask_dtype == OPP_DTYPE_BOOL_ ? 1 : es;
    memset(dev, 0, sizeof(*dev));
    dev->q = device_input(host->q, n.q * es);
    dev->k = device_input(host->k, n.k * es);
    dev->v = device_input(host->v, n.v * es);
    dev->attn_mask = device_input(host->attn_mask, n.mask * mask_es);
    dev->past_key = device_input(host->past_key, n.past_key * es);
    dev->past_value = device_input(host->past_value, n.past_value * es);
    dev->nonpad_kv_seqlen =
        device_input(host->nonpad_kv_seqlen, (size_t)d->batch * sizeof(int64_t));
    dev->y = device_output(host->y, n.y, d->dtype, poison);
    dev->present_key = device_output(host->present_key, n.present_key, d->dtype, poison);
    dev->present_value = device_output(host->present_value, n.present_value, d->dtype, poison);
    dev->qk_matmul_output = device_output(host->qk_matmul_output, n.qk, d->dtype, poison);
}

void opp_hgpu_a24_download(const opp_ref_attention24_desc_t *d,
                           const opp_ref_attention24_tensors_t *dev,
                           const opp_ref_attention24_tensors_t *host) {
    opp_ref_attention24_sizes_t n;
    opp_ref_attention24_sizes(d, &n);
    const size_t es = opp_dtype_size(d->dtype);
    void *const to[4] = {host->y, host->present_key, host->present_value, host->qk_matmul_output};
    const void *const from[4] = {dev->y, dev->present_key, dev->present_value,
                                 dev->qk_matmul_output};
    const size_t elems[4] = {n.y, n.present_key, n.present_value, n.qk};
    for (int i = 0; i < 4; ++i) {
        if (to[i] != NULL && from[i] != NULL) {
            opp_hgpu_d2h(to[i], from[i], elems[i] * es);
        }
    }
}

cudaError_t opp_hgpu_a24_free(opp_ref_attention24_tensors_t *dev) {
    const void *all[] = {dev->q,
                         dev->k,
                         dev->v,
                         dev->attn_mask,
                         dev->past_key,
                         dev->past_value,
                         dev->nonpad_kv_seqlen,
                         dev->y,
                         dev->present_key,
                         dev->present_value,
                         dev->qk_matmul_output};
    const cudaError_t err = opp_hgpu_free_all(all, sizeof(all) / sizeof(all[0]));
    memset(dev, 0, sizeof(*dev));
    return err;
}

int64_t *opp_hgpu_upload_full_nonpad(int32_t batch, int64_t kv_seqlen) {
    const size_t bytes = (size_t)batch * sizeof(int64_t);
    int64_t *host = malloc(bytes + sizeof(int64_t));
    if (host == NULL) { /* reported like a failed device allocation */
        opp_hgpu_check(cudaErrorMemoryAllocation, "malloc of nonpad_kv_seqlen", __FILE__, __LINE__);
        return NULL;
    }
    for (int32_t b = 0; b < batch; ++b) {
        host[b] = kv_seqlen;
    }
    int64_t *dev = opp_hgpu_upload(host, bytes);
    free(host);
    return dev;
}

// --- the cuBLAS reference as a call

opp_status_t opp_hgpu_ref_run(void *ref_call) {
    const opp_hgpu_ref_call_t *c = ref_call;
    return opp_ref_gpu_attention24(c->ref, c->desc, c->dev, c->workspace, c->workspace_bytes,
                                   c->stream);
}
