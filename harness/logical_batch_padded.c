/*
 * logical_batch_padded.c - the padded Attention-24 representation of a
 * logical batch (DESIGN.md §3): 4D [B, H, S, D] or 3D [B, S, H*D] tensors,
 * S_q = max L_q, S_kv = max L_kv, KV rows right-padded, query rows at the
 * tail of their block, nonpad_kv_seqlen[b] = L_kv[b], padding poisoned.
 */
#include <stdlib.h>
#include <string.h>

#include "harness/lb_fill.h"
#include "harness/logical_batch.h"
#include "numerics/fp_convert.h"

void opp_lb_poison_fill(void *dst, size_t count, opp_dtype_t dtype, opp_lb_poison_t poison) {
    /* Large but finite in every dtype: products stay finite in double. */
    const double big = dtype == OPP_DTYPE_F16 ? 30000.0 : 1.0e30;
    if (poison == OPP_LB_POISON_NAN) {
        opp_lb_fill_pattern2(dst, count, dtype, (double)NAN, (double)NAN);
    } else {
        opp_lb_fill_pattern2(dst, count, dtype, big, -big); /* big, -big, big, .. */
    }
}

/* Copies rows [n, width] of sequence data into a padded tensor. For rank 4
 * the destination row (b, h, t) is ((b*H + h)*S + t)*width, for rank 3 it is
 * ((b*S + t)*H + h)*width. Source rows are packed [total, H, width]. */
static void scatter(void *dst, const void *src, int32_t rank, int64_t b, int64_t heads, int64_t s,
                    int64_t width, int64_t src_row0, int64_t n, int64_t dst_t0, size_t esize) {
    for (int64_t i = 0; i < n; ++i) {
        for (int64_t h = 0; h < heads; ++h) {
            const int64_t t = dst_t0 + i;
            const int64_t drow = rank == 4 ? (b * heads + h) * s + t : (b * s + t) * heads + h;
            const int64_t srow = (src_row0 + i) * heads + h;
            memcpy((char *)dst + (size_t)(drow * width) * esize,
                   (const char *)src + (size_t)(srow * width) * esize, (size_t)width * esize);
        }
    }
}

int opp_lb_to_padded(const opp_lb_t *lb, int32_t input_rank, opp_lb_poison_t poison,
                     opp_lb_padded_t *pad) {
    memset(pad, 0, sizeof(*pad));
    opp_ref_attention24_desc_t *a = &pad->desc;
    opp_ref_attention24_desc_init(a);
    a->dtype = lb->dtype;
    a->input_rank = input_rank;
    a->batch = lb->batch;
    a->q_num_heads = lb->num_heads;
    a->kv_num_heads = lb->kv_num_heads;
    a->q_seqlen = lb->max_lq;
    a->kv_seqlen = lb->max_lkv;
    a->head_size = lb->head_size;
    a->v_head_size = lb->v_head_size;
    a->scale = lb->scale;
    a->is_causal = lb->is_causal;
    a->softcap = lb->softcap;
    a->has_nonpad = 1;
    const size_t es = opp_dtype_size(lb->dtype);
    const int64_t B = lb->batch, sq = a->q_seqlen, skv = a->kv_seqlen;
    pad->q_elems = (size_t)(B * lb->num_heads * sq * lb->head_size);
    pad->k_elems = (size_t)(B * lb->kv_num_heads * skv * lb->head_size);
    pad->v_elems = (size_t)(B * lb->kv_num_heads * skv * lb->v_head_size);
    pad->y_elems = (size_t)(B * lb->num_heads * sq * lb->v_head_size);
    pad->q = malloc((pad->q_elems + 1) * es);
    pad->k = malloc((pad->k_elems + 1) * es);
    pad->v = malloc((pad->v_elems + 1) * es);
    pad->y = malloc((pad->y_elems + 1) * es);
    pad->nonpad = malloc(sizeof(int64_t) * (size_t)B);
    if (pad->q == NULL || pad->k == NULL || pad->v == NULL || pad->y == NULL ||
        pad->nonpad == NULL) {
        opp_lb_padded_free(pad);
        return -1;
    }
    opp_lb_poison_fill(pad->q, pad->q_elems, lb->dtype, poison);
    opp_lb_poison_fill(pad->k, pad->k_elems, lb->dtype, poison);
    opp_lb_poison_fill(pad->v, pad->v_elems, lb->dtype, poison);
    opp_lb_poison_fill(pad->y, pad->y_elems, lb->dtype, OPP_LB_POISON_NAN);
    for (int64_t b = 0; b < B; ++b) {
        pad->nonpad[b] = lb->lkv[b];
        scatter(pad->q, lb->q, input_rank, b, lb->num_heads, sq, lb->head_size, lb->cu_q[b],
                lb->lq[b], sq - lb->lq[b], es);
        scatter(pad->k, lb->k, input_rank, b, lb->kv_num_heads, skv, lb->head_size, lb->cu_kv[b],
                lb->lkv[b], 0, es);
        scatter(pad->v, lb->v, input_rank, b, lb->kv_num_heads, skv, lb->v_head_size, lb->cu_kv[b],
                lb->lkv[b], 0, es);
    }
    return 0;
}

opp_ref_attention24_tensors_t opp_lb_padded_tensors(const opp_lb_padded_t *pad) {
    opp_ref_attention24_tensors_t t;
    memset(&t, 0, sizeof(t));
    t.q = pad->q;
    t.k = pad->k;
    t.v = pad->v;
    t.nonpad_kv_seqlen = pad->nonpad;
    t.y = pad->y;
    return t;
}

void opp_lb_padded_free(opp_lb_padded_t *pad) {
    if (pad == NULL) {
        return;
    }
    free(pad->q);
    free(pad->k);
    free(pad->v);
    free(pad->y);
    free(pad->nonpad);
    memset(pad, 0, sizeof(*pad));
}

void opp_lb_padded_valid_rows(const opp_lb_t *lb, const opp_lb_padded_t *pad, const void *y,
                              void *out) {
    const size_t es = opp_dtype_size(lb->dtype);
    const int64_t sq = pad->desc.q_seqlen, hq = lb->num_heads, dv = lb->v_head_size;
    const int32_t rank = pad->desc.input_rank;
    for (int64_t b = 0; b < lb->batch; ++b) {
        for (int64_t i = 0; i < lb->lq[b]; ++i) {
            const int64_t t = sq - lb->lq[b] + i;
            for (int64_t h = 0; h < hq; ++h) {
                const int64_t srow = rank == 4 ? (b * hq + h) * sq + t : (b * sq + t) * hq + h;
                const int64_t drow = (lb->cu_q[b] + i) * hq + h;
                memcpy((char *)out + (size_t)(drow * dv) * es,
                       (const char *)y + (size_t)(srow * dv) * es, (size_t)dv * es);
            }
        }
    }
}

void opp_lb_padded_valid_lse(const opp_lb_t *lb, const opp_lb_padded_t *pad,
                             const float *lse_padded, float *lse) {
    const int64_t sq = pad->desc.q_seqlen, hq = lb->num_heads;
    for (int64_t b = 0; b < lb->batch; ++b) {
        for (int64_t h = 0; h < hq; ++h) {
            memcpy(lse + h * lb->total_q + lb->cu_q[b],
                   lse_padded + (b * hq + h) * sq + sq - lb->lq[b],
                   sizeof(float) * (size_t)lb->lq[b]);
        }
    }
}
