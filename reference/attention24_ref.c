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
 * widened to double once and shared by the threads that work on them
 * (reference/ref_threads.h; an item is a block of query rows of one head);
 * keys j >= nonpad_kv_seqlen[b] are never read for Y (only for
 * qk_matmul_output modes 0-2, which are the literal products). A key whose
 * bias is -inf is left unscored when its score is certainly finite (it is
 * invisible either way). present_* are copied on the calling thread. The
 * row kernels are reference/exact_kernels_impl.h, shared with the packed
 * reference.
 */
#include <math.h>
#include <string.h>

#include "lib/internal/check.h"
#include "numerics/exact_order.h"
#include "numerics/fp_convert.h"
#include "reference/attention24_internal.h"
#include "reference/exact_row.h"
#include "reference/ref_threads.h"

/* One call: what every item needs (shared read-only by the threads). */
typedef struct a24_ctx {
    const opp_ref_attention24_desc_t *a;
    const opp_ref_attention24_tensors_t *t;
    int64_t total;   /* T = P + S_kv */
    size_t tn;       /* max(T, 1): the scratch row length */
    double sq;       /* sqrt(scale) */
    int32_t group;   /* query heads per kv head */
    int want_scores; /* qk_matmul_output modes 0-2: the literal scores of every key */
    const opp__exact_row_ops_t *ops;
} a24_ctx_t;

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

static int64_t row_blocks(int64_t rows) {
    return (rows + OPP__REF_ROWS_PER_ITEM - 1) / OPP__REF_ROWS_PER_ITEM;
}

/* Keys j < n_valid(b) enter Y; the rest are padding (never read for Y). */
static int64_t n_valid_of(const a24_ctx_t *c, int64_t b) {
    return c->a->has_nonpad ? c->t->nonpad_kv_seqlen[b] : c->total;
}

/* Group g = (batch entry b, kv head hk) = (g / Hkv, g % Hkv); its items are
 * (query head of hk's group, block of query rows). */
static int64_t a24_group_items(void *ctx, int64_t g) {
    const a24_ctx_t *c = ctx;
    return c->group * row_blocks(c->a->q_seqlen);
}

/* Keys widened: every column for qk modes 0-2, else the valid ones. */
static int32_t a24_group_keys(void *ctx, int64_t g) {
    const a24_ctx_t *c = ctx;
    return (int32_t)(c->want_scores ? c->total : n_valid_of(c, g / c->a->kv_num_heads));
}

static void a24_load(void *ctx, int64_t g, opp__exact_kv_t *kv) {
    const a24_ctx_t *c = ctx;
    const int64_t b = g / c->a->kv_num_heads, hk = g % c->a->kv_num_heads;
    const int64_t n_valid = n_valid_of(c, b);
    for (int32_t j = 0; j < kv->n; ++j) {
        opp__exact_kv_set_key(kv, j, key_row(c->a, c->t, b, hk, j, 0), (int)c->a->dtype, c->sq);
        if (j < n_valid) {
            opp__exact_kv_set_value(kv, j, key_row(c->a, c->t, b, hk, j, 1), (int)c->a->dtype);
        }
    }
}

/* Keys whose score row tq needs: j < hi. Beyond hi every valid key has bias
 * -inf and a finite score (finite scaled q and k; softcap is validated
 * finite), so x_j = score + bias = -inf: the key is not visible, exactly as
 * if its score had been computed. A NaN or inf score of a masked key is
 * computed, and makes the row NaN as in ONNX. */
static int64_t scored_keys(const a24_ctx_t *c, const opp__exact_kv_t *kv, int64_t n_valid,
                           int q_finite, const double *bias) {
    if (c->want_scores) {
        return kv->n;
    }
    if (!q_finite) {
        return n_valid;
    }
    int64_t hi = kv->last_nonfinite + 1;
    for (int64_t j = hi; j < n_valid; ++j) {
        if (bias[j] != -INFINITY) {
            hi = j + 1;
        }
    }
    return hi;
}

/* One block of query rows of query head h (kv head hk) in batch entry b.
 * Scratch: bias, sc, x, p [R, max(T, 1)]; qs [R, D]; y [R, Dv rounded up]. */
static void a24_run(void *ctx, int64_t g, int64_t item, const opp__exact_kv_t *kv,
                    double *scratch) {
    const a24_ctx_t *c = ctx;
    const opp_ref_attention24_desc_t *a = c->a;
    const opp_ref_attention24_tensors_t *t = c->t;
    const int64_t b = g / a->kv_num_heads, hk = g % a->kv_num_heads;
    const int64_t blocks = row_blocks(a->q_seqlen);
    const int64_t h = hk * c->group + item / blocks;
    const int64_t t0 = (item % blocks) * OPP__REF_ROWS_PER_ITEM;
    const int32_t rows =
        (int32_t)(a->q_seqlen - t0 < OPP__REF_ROWS_PER_ITEM ? a->q_seqlen - t0
                                                            : OPP__REF_ROWS_PER_ITEM);
    const int64_t total = c->total, n_valid = n_valid_of(c, b);
    const size_t esize = opp_dtype_size(a->dtype), ld = c->tn, rl = OPP__REF_ROWS_PER_ITEM * ld;
    const int dt = (int)a->dtype;
    double *bias = scratch, *sc = bias + rl, *x = sc + rl, *p = x + rl, *qs = p + rl;
    double *y = qs + OPP__REF_ROWS_PER_ITEM * (size_t)a->head_size;
    int32_t n_sc[OPP__REF_ROWS_PER_ITEM] = {0}, n_x[OPP__REF_ROWS_PER_ITEM] = {0};
    for (int32_t r = 0; r < rows; ++r) {
        const int q_finite = opp__exact_load_scaled(
            qs + (size_t)r * a->head_size,
            (const char *)t->q + (size_t)opp__a24_q_index(a, b, h, t0 + r, 0) * esize, a->head_size,
            dt, c->sq);
        const int all_masked = row_bias(a, t, b, h, t0 + r, bias + r * ld);
        const int64_t hi = scored_keys(c, kv, n_valid, q_finite, bias + r * ld);
        n_sc[r] = (int32_t)hi;
        /* keys n_x .. n_valid-1 are invisible: left out of the softmax; a
         * row whose bias is all -inf gets zeros (n_x = 0) */
        n_x[r] = all_masked ? 0 : (int32_t)(hi < n_valid ? hi : n_valid);
    }
    c->ops->scores(qs, rows, n_sc, kv, (double)a->softcap, sc, ld);
    for (int32_t r = 0; r < rows; ++r) {
        for (int64_t j = 0; j < n_x[r]; ++j) {
            x[r * ld + j] = sc[r * ld + j] + bias[r * ld + j];
        }
    }
    c->ops->softmax_pv(x, rows, n_x, kv, y, p, ld);
    for (int32_t r = 0; r < rows; ++r) {
        const int64_t tq = t0 + r;
        double *pr = p + r * ld, *xr = x + r * ld, *scr = sc + r * ld, *br = bias + r * ld;
        for (int64_t j = n_x[r]; j < total; ++j) {
            pr[j] = 0.0;
        }
        store_row(t->y, opp__a24_y_index(a, b, h, tq), y + (size_t)r * kv->dv_pad, a->v_head_size,
                  dt);
        if (t->qk_matmul_output != NULL) {
            const int64_t base = ((b * a->q_num_heads + h) * a->q_seqlen + tq) * total;
            if (a->qk_matmul_output_mode == 3) {
                store_row(t->qk_matmul_output, base, pr, total, dt);
            } else if (a->qk_matmul_output_mode == 2) {
                for (int64_t j = 0; j < total; ++j) {
                    xr[j] = scr[j] + br[j];
                }
                store_row(t->qk_matmul_output, base, xr, total, dt);
            } else {
                store_row(t->qk_matmul_output, base, scr, total, dt);
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
    a24_ctx_t c;
    c.a = a;
    c.t = t;
    c.total = (int64_t)a->past_seqlen + a->kv_seqlen;
    c.tn = c.total > 0 ? (size_t)c.total : 1;
    c.sq = opp__exact_sqrt_scale(a->scale, a->head_size);
    c.group = a->q_num_heads / a->kv_num_heads;
    c.want_scores = t->qk_matmul_output != NULL && a->qk_matmul_output_mode <= 2;
    c.ops = opp__exact_row_ops();
    opp__ref_work_t w;
    w.n_groups = (int64_t)a->batch * a->kv_num_heads;
    w.d = a->head_size;
    w.dv = a->v_head_size;
    /* bias, sc, x, p [R, T]; qs [R, D]; y [R, Dv rounded up] */
    w.scratch_doubles = OPP__REF_ROWS_PER_ITEM *
                        (4 * c.tn + (size_t)a->head_size + (size_t)a->v_head_size + OPP__EXACT_KB);
    w.ctx = &c;
    w.group_items = a24_group_items;
    w.group_keys = a24_group_keys;
    w.load = a24_load;
    w.run = a24_run;
    OPP_TRY(opp__ref_run(&w));
    copy_present(a, t, 0);
    copy_present(a, t, 1);
    return OPP_STATUS_SUCCESS;
}
