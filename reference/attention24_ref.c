/*
 * attention24_ref.c - the exact CPU reference of the padded ONNX
 * Attention-24 operator (DESIGN.md §2.3), as onnx 1.23's reference computes
 * a float64 copy, rounded once to the output dtype.
 *
 *   Q [B, Hq, S_q, D]  K [B, Hkv, S_kv, D]  V [B, Hkv, S_kv, Dv]  (or 3D)
 *   keys j = 0 .. T-1, T = P + S_kv: j < P from past_*, else K/V row j - P
 *   bias_j = (mask_j + causal_j) + padding_j, each 0 or -inf (float masks
 *            add their value; a short mask is -inf past its last column)
 *   causal offset: P with past; nonpad[b] - S_q with nonpad; else 0
 *   a row whose bias is all -inf outputs zeros (Y and mode-3 output)
 *
 * Per (b, kv head hk) the keys (scaled by sqrt(scale)) and values are
 * widened to double once; keys j >= nonpad_kv_seqlen[b] are never read for
 * Y (only for qk_matmul_output modes 0-2, which are the literal products).
 * The row computation is reference/exact_row.c, shared with the packed
 * reference.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/internal/check.h"
#include "numerics/exact_order.h"
#include "numerics/fp_convert.h"
#include "reference/attention24_internal.h"
#include "reference/exact_row.h"

/* Host scratch for one (b, hk) block. */
typedef struct a24_scratch {
    double *ks;   /* [T, D] scaled keys */
    double *vd;   /* [T, Dv] values */
    double *bias; /* [T] */
    double *sc;   /* [T] scores after softcap */
    double *x;    /* [T] logits for Y */
    double *p;    /* [T] probabilities */
    double *qs;   /* [D] */
    double *y;    /* [Dv] */
} a24_scratch_t;

static const char *key_row(const opp_ref_attention24_desc_t *a,
                           const opp_ref_attention24_tensors_t *t, int64_t b, int64_t hk, int64_t j,
                           int value) {
    const int64_t width = value ? a->v_head_size : a->head_size;
    const size_t esize = opp_dtype_size(a->dtype);
    if (j < a->past_seqlen) {
        const char *past = value ? t->past_value : t->past_key;
        return past + (size_t)(((b * a->kv_num_heads + hk) * a->past_seqlen + j) * width) * esize;
    }
    const char *cur = value ? t->v : t->k;
    return cur + (size_t)opp__a24_kv_index(a, b, hk, j - a->past_seqlen, width) * esize;
}

/* bias_j of row (b, h, t) for j < T; returns 1 if every bias_j is -inf. */
static int row_bias(const opp_ref_attention24_desc_t *a, const opp_ref_attention24_tensors_t *t,
                    int64_t b, int64_t h, int64_t tq, double *bias) {
    const int64_t total = (int64_t)a->past_seqlen + a->kv_seqlen;
    int64_t offset = 0;
    if (a->has_past) {
        offset = a->past_seqlen;
    } else if (a->has_nonpad) {
        offset = t->nonpad_kv_seqlen[b] - a->q_seqlen;
    }
    const int64_t mask_cols = a->mask_rank > 0 ? a->mask_dims[a->mask_rank - 1] : 0;
    int all_masked = 1;
    for (int64_t j = 0; j < total; ++j) {
        double mask = 0.0;
        if (a->mask_dtype != OPP_DTYPE_UNDEFINED) {
            if (j >= mask_cols) {
                mask = -INFINITY;
            } else if (a->mask_dtype == OPP_DTYPE_BOOL_) {
                const uint8_t *m = t->attn_mask;
                mask = m[opp__a24_mask_index(a, b, h, tq, j)] ? 0.0 : -INFINITY;
            } else {
                mask = opp__load_elem(t->attn_mask, (size_t)opp__a24_mask_index(a, b, h, tq, j),
                                      (int)a->dtype);
            }
        }
        double v;
        if (a->is_causal) {
            v = mask + (j <= tq + offset ? 0.0 : -INFINITY);
        } else {
            v = 0.0 + mask;
        }
        if (a->has_nonpad) {
            v = v + (j < t->nonpad_kv_seqlen[b] ? 0.0 : -INFINITY);
        }
        bias[j] = v;
        all_masked = all_masked && v == -INFINITY;
    }
    return all_masked;
}

static void store_row(void *dst, int64_t base, const double *src, int64_t n, int dtype) {
    for (int64_t i = 0; i < n; ++i) {
        opp__store_elem(dst, (size_t)(base + i), dtype, src[i]);
    }
}

/* Every query row of query head h (kv head hk) in batch b. */
static void a24_rows(const opp_ref_attention24_desc_t *a, const opp_ref_attention24_tensors_t *t,
                     int64_t b, int64_t h, int64_t n_valid, int64_t n_scored, double sq,
                     const a24_scratch_t *s) {
    const int64_t total = (int64_t)a->past_seqlen + a->kv_seqlen;
    const size_t esize = opp_dtype_size(a->dtype);
    const int dt = (int)a->dtype;
    for (int64_t tq = 0; tq < a->q_seqlen; ++tq) {
        opp__exact_load_scaled(
            s->qs, (const char *)t->q + (size_t)opp__a24_q_index(a, b, h, tq, 0) * esize,
            a->head_size, dt, sq);
        const int all_masked = row_bias(a, t, b, h, tq, s->bias);
        for (int64_t j = 0; j < total; ++j) {
            s->sc[j] = 0.0;
            if (j < n_scored) {
                s->sc[j] = opp__exact_softcap(
                    opp__exact_dot(s->qs, s->ks + j * a->head_size, a->head_size),
                    (double)a->softcap);
            }
            s->x[j] = j < n_valid ? s->sc[j] + s->bias[j] : -INFINITY;
        }
        if (all_masked) {
            memset(s->y, 0, sizeof(double) * (size_t)a->v_head_size);
            memset(s->p, 0, sizeof(double) * (size_t)total);
        } else {
            opp__exact_softmax_pv(s->x, (int32_t)n_valid, s->vd, a->v_head_size, s->y, s->p);
            for (int64_t j = n_valid; j < total; ++j) {
                s->p[j] = 0.0;
            }
        }
        store_row(t->y, opp__a24_y_index(a, b, h, tq), s->y, a->v_head_size, dt);
        if (t->qk_matmul_output != NULL) {
            const int64_t base = ((b * a->q_num_heads + h) * a->q_seqlen + tq) * total;
            if (a->qk_matmul_output_mode == 3) {
                store_row(t->qk_matmul_output, base, s->p, total, dt);
            } else if (a->qk_matmul_output_mode == 2) {
                for (int64_t j = 0; j < total; ++j) {
                    s->x[j] = s->sc[j] + s->bias[j];
                }
                store_row(t->qk_matmul_output, base, s->x, total, dt);
            } else {
                store_row(t->qk_matmul_output, base, s->sc, total, dt);
            }
        }
    }
}

/* present_* [B, Hkv, T, width] = concat(past, new) along the sequence. */
static void copy_present(const opp_ref_attention24_desc_t *a,
                         const opp_ref_attention24_tensors_t *t, int value) {
    void *dst = value ? t->present_value : t->present_key;
    if (dst == NULL) {
        return;
    }
    const int64_t total = (int64_t)a->past_seqlen + a->kv_seqlen;
    const int64_t width = value ? a->v_head_size : a->head_size;
    const size_t row_bytes = (size_t)width * opp_dtype_size(a->dtype);
    for (int64_t b = 0; b < a->batch; ++b) {
        for (int64_t hk = 0; hk < a->kv_num_heads; ++hk) {
            for (int64_t j = 0; j < total; ++j) {
                char *out =
                    (char *)dst + (size_t)((b * a->kv_num_heads + hk) * total + j) * row_bytes;
                memcpy(out, key_row(a, t, b, hk, j, value), row_bytes);
            }
        }
    }
}

/* The host nonpad values must lie in 0..S_kv (pointers checked first). */
static opp_status_t check_tensors(const opp_ref_attention24_desc_t *a,
                                  const opp_ref_attention24_tensors_t *t) {
    OPP_TRY(opp__a24_check_pointers(a, t));
    for (int32_t b = 0; a->has_nonpad && b < a->batch; ++b) {
        const int64_t n = t->nonpad_kv_seqlen[b];
        OPP_RETURN_IF(n < 0 || n > a->kv_seqlen, OPP_STATUS_BAD_PARAM_NONPAD,
                      "nonpad_kv_seqlen[%d] = %lld is outside 0..kv_sequence_length = %d", (int)b,
                      (long long)n, (int)a->kv_seqlen);
    }
    return OPP_STATUS_SUCCESS;
}

opp_status_t opp_ref_attention24(const opp_ref_attention24_desc_t *a,
                                 const opp_ref_attention24_tensors_t *t) {
    OPP_TRY(opp_ref_attention24_check(a));
    OPP_TRY(check_tensors(a, t));
    const size_t total = (size_t)a->past_seqlen + (size_t)a->kv_seqlen;
    const size_t tn = total > 0 ? total : 1;
    const size_t d = (size_t)a->head_size, dv = (size_t)a->v_head_size;
    double *mem = malloc((tn * (d + dv + 4) + d + dv) * sizeof(double));
    OPP_RETURN_IF(mem == NULL, OPP_STATUS_HOST_ALLOC_FAILED,
                  "cannot allocate host scratch for %zu keys", total);
    a24_scratch_t s;
    s.ks = mem;
    s.vd = s.ks + tn * d;
    s.bias = s.vd + tn * dv;
    s.sc = s.bias + tn;
    s.x = s.sc + tn;
    s.p = s.x + tn;
    s.qs = s.p + tn;
    s.y = s.qs + d;
    const double sq = opp__exact_sqrt_scale(a->scale, a->head_size);
    const int dt = (int)a->dtype;
    const int32_t group = a->q_num_heads / a->kv_num_heads;
    const int want_scores = t->qk_matmul_output != NULL && a->qk_matmul_output_mode <= 2;
    for (int64_t b = 0; b < a->batch; ++b) {
        const int64_t n_valid = a->has_nonpad ? t->nonpad_kv_seqlen[b] : (int64_t)total;
        const int64_t n_scored = want_scores ? (int64_t)total : n_valid;
        for (int64_t hk = 0; hk < a->kv_num_heads; ++hk) {
            for (int64_t j = 0; j < n_scored; ++j) {
                opp__exact_load_scaled(s.ks + (size_t)j * d, key_row(a, t, b, hk, j, 0),
                                       a->head_size, dt, sq);
            }
            for (int64_t j = 0; j < n_valid; ++j) {
                opp__exact_load(s.vd + (size_t)j * dv, key_row(a, t, b, hk, j, 1), a->v_head_size,
                                dt);
            }
            for (int64_t h = hk * group; h < (hk + 1) * group; ++h) {
                a24_rows(a, t, b, h, n_valid, n_scored, sq, &s);
            }
        }
    }
    free(mem);
    copy_present(a, t, 0);
    copy_present(a, t, 1);
    return OPP_STATUS_SUCCESS;
}
