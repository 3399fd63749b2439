/*
 * packed_ref.c - the exact CPU reference of PackedVarlenAttention
 * (DESIGN.md §2.1-2.2) on the packed layout.
 *
 *   q   [total_q,  Hq,  D ]   (row stride q_row_stride, elements)
 *   k   [total_kv, Hkv, D ]
 *   v   [total_kv, Hkv, Dv]
 *   out [total_q,  Hq,  Dv]
 *
 * Per sequence b and kv head hk the sequence's keys and values are widened
 * to double once (keys scaled by sqrt(scale)); query heads h with
 * h / (Hq / Hkv) == hk (repeat-interleave GQA) then use them: row i sees keys j < key_end(i),
 * key_end = L_kv when not causal, else clamp(i + L_kv - L_q + 1, 0, L_kv)
 * (tail-aligned causal; a negative offset leaves the first rows with no key,
 * which then output zeros). The row itself is reference/exact_row.c.
 */
#include <math.h>
#include <stdlib.h>

#include "lib/internal/check.h"
#include "numerics/exact_order.h"
#include "numerics/fp_convert.h"
#include "reference/exact_row.h"
#include "reference/opp_reference.h"

/* The effective shape of a validated descriptor (defaults resolved). */
typedef struct packed_shape {
    int32_t hq, hkv, d, dv;
    int64_t q_stride, k_stride, v_stride, out_stride; /* elements per row */
    size_t esize;
    int dtype;
} packed_shape_t;

static packed_shape_t packed_shape_of(const opp_attention_desc_t *desc) {
    packed_shape_t s;
    s.hq = desc->num_heads;
    s.hkv = desc->kv_num_heads != 0 ? desc->kv_num_heads : desc->num_heads;
    s.d = desc->head_size;
    s.dv = desc->v_head_size != 0 ? desc->v_head_size : desc->head_size;
    s.q_stride = desc->q_row_stride != 0 ? desc->q_row_stride : (int64_t)s.hq * s.d;
    s.k_stride = desc->k_row_stride != 0 ? desc->k_row_stride : (int64_t)s.hkv * s.d;
    s.v_stride = desc->v_row_stride != 0 ? desc->v_row_stride : (int64_t)s.hkv * s.dv;
    s.out_stride = desc->out_row_stride != 0 ? desc->out_row_stride : (int64_t)s.hq * s.dv;
    s.dtype = (int)desc->q_dtype;
    s.esize = opp_dtype_size(desc->q_dtype);
    return s;
}

/* Widens the keys (scaled) and values of kv head hk, rows kv0 .. kv0+lkv-1. */
static void packed_load_kv(const packed_shape_t *s, int32_t hk, int64_t kv0, int32_t lkv, double sc,
                           const char *k, const char *v, double *ks, double *vd) {
    for (int32_t j = 0; j < lkv; ++j) {
        const int64_t row = kv0 + j;
        opp__exact_load_scaled(ks + (int64_t)j * s->d,
                               k + ((size_t)(row * s->k_stride) + (size_t)hk * s->d) * s->esize,
                               s->d, s->dtype, sc);
        opp__exact_load(vd + (int64_t)j * s->dv,
                        v + ((size_t)(row * s->v_stride) + (size_t)hk * s->dv) * s->esize, s->dv,
                        s->dtype);
    }
}

/* Query rows q0 .. q0+lq-1 of head h against the widened keys ks / values vd. */
static void packed_rows(const opp_attention_desc_t *desc, const packed_shape_t *s, int32_t h,
                        int64_t q0, int32_t lq, int32_t lkv, double sc, const char *q,
                        const double *ks, const double *vd, char *out, double *qs, double *x,
                        double *p, double *y) {
    for (int32_t i = 0; i < lq; ++i) {
        const int64_t row = q0 + i;
        int64_t key_end = lkv;
        if (desc->is_causal) {
            key_end = (int64_t)i + lkv - lq + 1;
            key_end = key_end < 0 ? 0 : (key_end > lkv ? lkv : key_end);
        }
        opp__exact_load_scaled(qs, q + ((size_t)(row * s->q_stride) + (size_t)h * s->d) * s->esize,
                               s->d, s->dtype, sc);
        for (int32_t j = 0; j < lkv; ++j) {
            x[j] = -INFINITY;
            if (j < key_end) {
                x[j] = opp__exact_softcap(opp__exact_dot(qs, ks + (int64_t)j * s->d, s->d),
                                          (double)desc->softcap);
            }
        }
        opp__exact_softmax_pv(x, lkv, vd, s->dv, y, p);
        char *dst = out + ((size_t)(row * s->out_stride) + (size_t)h * s->dv) * s->esize;
        for (int32_t c = 0; c < s->dv; ++c) {
            opp__store_elem(dst, (size_t)c, s->dtype, y[c]);
        }
    }
}

opp_status_t opp_ref_packed_attention(const opp_attention_desc_t *desc, const int32_t *cu_seqlens_q,
                                      const int32_t *cu_seqlens_kv, const void *q, const void *k,
                                      const void *v, void *out) {
    OPP_RETURN_IF(desc == NULL, OPP_STATUS_BAD_PARAM_NULL_POINTER, "desc is NULL");
    OPP_TRY(opp_attention_desc_check(desc));
    const size_t n = (size_t)desc->batch + 1;
    OPP_TRY(opp_varlen_check(desc, cu_seqlens_q, n, cu_seqlens_kv, n));
    OPP_RETURN_IF(q == NULL, OPP_STATUS_BAD_PARAM_NULL_POINTER, "q is NULL");
    OPP_RETURN_IF(k == NULL, OPP_STATUS_BAD_PARAM_NULL_POINTER, "k is NULL");
    OPP_RETURN_IF(v == NULL, OPP_STATUS_BAD_PARAM_NULL_POINTER, "v is NULL");
    OPP_RETURN_IF(out == NULL, OPP_STATUS_BAD_PARAM_NULL_POINTER, "out is NULL");
    const packed_shape_t s = packed_shape_of(desc);
    const size_t mkv = (size_t)(desc->max_seqlen_kv > 0 ? desc->max_seqlen_kv : 1);
    const size_t dmax = (size_t)(s.d > s.dv ? s.d : s.dv);
    double *ks = malloc(mkv * (size_t)s.d * sizeof(double));
    double *vd = malloc(mkv * (size_t)s.dv * sizeof(double));
    double *row = malloc((2 * mkv + 2 * dmax) * sizeof(double));
    if (ks == NULL || vd == NULL || row == NULL) {
        free(ks);
        free(vd);
        free(row);
        OPP_RETURN_IF(1, OPP_STATUS_HOST_ALLOC_FAILED,
                      "cannot allocate host scratch for max_seqlen_kv = %d",
                      (int)desc->max_seqlen_kv);
    }
    double *x = row, *p = row + mkv, *qs = row + 2 * mkv, *y = row + 2 * mkv + dmax;
    const double sc = opp__exact_sqrt_scale(desc->scale, s.d);
    const int32_t group = s.hq / s.hkv;
    for (int32_t b = 0; b < desc->batch; ++b) {
        const int32_t lq = cu_seqlens_q[b + 1] - cu_seqlens_q[b];
        const int32_t lkv = cu_seqlens_kv[b + 1] - cu_seqlens_kv[b];
        for (int32_t hk = 0; hk < s.hkv; ++hk) {
            packed_load_kv(&s, hk, cu_seqlens_kv[b], lkv, sc, k, v, ks, vd);
            for (int32_t h = hk * group; h < (hk + 1) * group; ++h) {
                packed_rows(desc, &s, h, cu_seqlens_q[b], lq, lkv, sc, q, ks, vd, out, qs, x, p, y);
            }
        }
    }
    free(ks);
    free(vd);
    free(row);
    return OPP_STATUS_SUCCESS;
}
