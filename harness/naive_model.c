/*
 * naive_model.c - the plain long double model of ONNX Attention-24 declared
 * in naive_model.h. Written from onnx 1.23's op_attention.py, one numpy step
 * per block below, on materialised 4D arrays; nothing here is shared with
 * reference/ (no fixed summation order, no fma, libm expl/tanhl/sqrtl).
 */
#include "harness/naive_model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "numerics/fp_convert.h"

typedef long double ld;

/* A dense row-major 4D array [n0, n1, n2, n3] of long double. */
typedef struct arr4 {
    ld *a;
    int64_t n[4];
} arr4_t;

static int arr4_alloc(arr4_t *x, int64_t n0, int64_t n1, int64_t n2, int64_t n3) {
    x->n[0] = n0;
    x->n[1] = n1;
    x->n[2] = n2;
    x->n[3] = n3;
    const size_t count = (size_t)(n0 * n1 * n2 * n3);
    x->a = calloc(count + 1, sizeof(ld));
    return x->a == NULL ? -1 : 0;
}

static ld *at(const arr4_t *x, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    return x->a + ((i0 * x->n[1] + i1) * x->n[2] + i2) * x->n[3] + i3;
}

/* np.reshape(X, [B, S, H, W]) then np.transpose(X, (0, 2, 1, 3)) for rank 3;
 * a plain copy for rank 4. dst is [B, H, S, W]. */
static void load_4d(arr4_t *dst, const void *src, int rank, int dtype) {
    const int64_t B = dst->n[0], H = dst->n[1], S = dst->n[2], W = dst->n[3];
    for (int64_t b = 0; b < B; ++b) {
        for (int64_t h = 0; h < H; ++h) {
            for (int64_t s = 0; s < S; ++s) {
                for (int64_t w = 0; w < W; ++w) {
                    const int64_t src_index =
                        rank == 3 ? ((b * S + s) * H + h) * W + w : ((b * H + h) * S + s) * W + w;
                    *at(dst, b, h, s, w) = (ld)opp__load_elem(src, (size_t)src_index, dtype);
                }
            }
        }
    }
}

/* present = np.concatenate((past, new), axis=2); past may be NULL (P = 0). */
static void concat_seq(arr4_t *present, const void *past, int64_t p, const arr4_t *cur, int dtype) {
    for (int64_t b = 0; b < present->n[0]; ++b) {
        for (int64_t h = 0; h < present->n[1]; ++h) {
            for (int64_t j = 0; j < present->n[2]; ++j) {
                for (int64_t w = 0; w < present->n[3]; ++w) {
                    ld value;
                    if (j < p) {
                        const int64_t index = ((b * present->n[1] + h) * p + j) * present->n[3] + w;
                        value = (ld)opp__load_elem(past, (size_t)index, dtype);
                    } else {
                        value = *at(cur, b, h, j - p, w);
                    }
                    *at(present, b, h, j, w) = value;
                }
            }
        }
    }
}

/* The padded attn_mask element at [b, h, i, j] under numpy broadcasting:
 * the mask's dims are right-aligned with [B, Hq, S_q, T]; a size-1 dim
 * repeats; columns j >= M are the padding (False for bool, -inf for float).
 * Returned as the additive value: bool True -> 0, False -> -inf. */
static ld mask_value(const opp_naive_case_t *c, int64_t b, int64_t h, int64_t i, int64_t j) {
    const int64_t m_cols = c->mask_dims[c->mask_rank - 1];
    if (j >= m_cols) {
        return -INFINITY; /* np.pad(..., constant_values=False or -inf) */
    }
    const int64_t coord[4] = {b, h, i, j};
    int64_t index = 0;
    for (int r = 0; r < c->mask_rank; ++r) {
        const int axis = 4 - c->mask_rank + r;
        const int64_t dim = c->mask_dims[r];
        const int64_t k = (axis == 3) ? j : (dim == 1 ? 0 : coord[axis]);
        index = index * dim + k;
    }
    if (c->mask_dtype == OPP_NAIVE_BOOL) {
        return ((const uint8_t *)c->attn_mask)[index] ? 0.0L : -INFINITY;
    }
    return (ld)opp__load_elem(c->attn_mask, (size_t)index, c->mask_dtype);
}

/* attn_bias [B, Hq, S_q, T] exactly as the Python builds it. */
static void build_bias(const opp_naive_case_t *c, arr4_t *bias) {
    const int64_t T = bias->n[3];
    for (int64_t b = 0; b < bias->n[0]; ++b) {
        for (int64_t h = 0; h < bias->n[1]; ++h) {
            for (int64_t i = 0; i < bias->n[2]; ++i) {
                for (int64_t j = 0; j < T; ++j) {
                    ld v = 0.0L;
                    if (c->is_causal) {
                        const ld base = c->attn_mask != NULL ? mask_value(c, b, h, i, j) : 0.0L;
                        int64_t offset = 0;
                        if (c->past_key == NULL && c->nonpad_kv_seqlen != NULL) {
                            offset = c->nonpad_kv_seqlen[b] - c->q_seqlen;
                        } else if (c->past_key != NULL) {
                            offset = c->past_seqlen;
                        }
                        v = base + (j <= i + offset ? 0.0L : -INFINITY);
                    } else if (c->attn_mask != NULL) {
                        v = 0.0L + mask_value(c, b, h, i, j);
                    }
                    if (c->nonpad_kv_seqlen != NULL) {
                        v = v + (j < c->nonpad_kv_seqlen[b] ? 0.0L : -INFINITY);
                    }
                    *at(bias, b, h, i, j) = v;
                }
            }
        }
    }
}

/* np.repeat(X, reps, axis=1): head hk becomes heads hk*reps .. hk*reps+reps-1. */
static int repeat_heads(const arr4_t *src, int64_t reps, arr4_t *dst) {
    if (arr4_alloc(dst, src->n[0], src->n[1] * reps, src->n[2], src->n[3]) != 0) {
        return -1;
    }
    for (int64_t b = 0; b < src->n[0]; ++b) {
        for (int64_t hk = 0; hk < src->n[1]; ++hk) {
            for (int64_t r = 0; r < reps; ++r) {
                memcpy(at(dst, b, hk * reps + r, 0, 0), at(src, b, hk, 0, 0),
                       sizeof(ld) * (size_t)(src->n[2] * src->n[3]));
            }
        }
    }
    return 0;
}

/* np.max along the last axis: NaN wins; an empty row counts as -inf. */
static ld row_max(const ld *x, int64_t n) {
    ld m = -INFINITY;
    for (int64_t j = 0; j < n; ++j) {
        if (isnan(x[j])) {
            return x[j];
        }
        m = x[j] > m ? x[j] : m;
    }
    return m;
}

/* _softmax of one row (onnx 1.23): safe max, exp, sum, 0 sum -> 1. */
static void softmax_row(const ld *x, int64_t n, ld *p) {
    const ld x_max = row_max(x, n);
    const ld safe_max = isinf(x_max) && x_max < 0 ? 0.0L : x_max;
    ld s = 0.0L;
    for (int64_t j = 0; j < n; ++j) {
        p[j] = expl(x[j] - safe_max);
        s += p[j];
    }
    if (s == 0.0L) {
        s = 1.0L;
    }
    for (int64_t j = 0; j < n; ++j) {
        p[j] = p[j] / s;
    }
}

static void free4(arr4_t *a, int n) {
    for (int i = 0; i < n; ++i) {
        free(a[i].a);
    }
}

/* arrays: 0 Q, 1 K(new), 2 V(new), 3 present K, 4 present V, 5 K rep, 6 V rep,
 * 7 bias, 8 qk, 9 qk_with_bias, 10 probabilities. */
#define NAIVE_ARRAYS 11

int opp_naive_attention24(const opp_naive_case_t *c, opp_naive_result_t *r) {
    memset(r, 0, sizeof(*r));
    const int dt = (int)c->dtype;
    const int64_t B = c->batch, Hq = c->q_num_heads, Hkv = c->kv_num_heads;
    const int64_t Sq = c->q_seqlen, Skv = c->kv_seqlen, D = c->head_size, Dv = c->v_head_size;
    const int64_t P = c->past_key != NULL ? c->past_seqlen : 0;
    const int64_t T = P + Skv;
    arr4_t a[NAIVE_ARRAYS];
    memset(a, 0, sizeof(a));
    int fail = 0;
    fail |= arr4_alloc(&a[0], B, Hq, Sq, D);
    fail |= arr4_alloc(&a[1], B, Hkv, Skv, D);
    fail |= arr4_alloc(&a[2], B, Hkv, Skv, Dv);
    fail |= arr4_alloc(&a[3], B, Hkv, T, D);
    fail |= arr4_alloc(&a[4], B, Hkv, T, Dv);
    fail |= arr4_alloc(&a[7], B, Hq, Sq, T);
    fail |= arr4_alloc(&a[8], B, Hq, Sq, T);
    fail |= arr4_alloc(&a[9], B, Hq, Sq, T);
    fail |= arr4_alloc(&a[10], B, Hq, Sq, T);
    if (fail) {
        free4(a, NAIVE_ARRAYS);
        return -1;
    }
    load_4d(&a[0], c->q, c->input_rank, dt);
    load_4d(&a[1], c->k, c->input_rank, dt);
    load_4d(&a[2], c->v, c->input_rank, dt);

    /* scale = 1/sqrt(D) if absent; scale = sqrt(scale) */
    const ld scale = c->has_scale ? (ld)c->scale : 1.0L / sqrtl((ld)D);
    const ld s = sqrtl(scale);

    /* present_key / present_value: concatenate the past before the new rows */
    concat_seq(&a[3], c->past_key, P, &a[1], dt);
    concat_seq(&a[4], c->past_value, P, &a[2], dt);

    /* attn_bias (mask padded to T, causal, padding) */
    build_bias(c, &a[7]);

    /* GQA: np.repeat each K/V head Hq/Hkv times (only when the counts differ) */
    const int64_t reps = (Hq != Hkv && Hq % Hkv == 0) ? Hq / Hkv : 1;
    if (repeat_heads(&a[3], reps, &a[5]) != 0 || repeat_heads(&a[4], reps, &a[6]) != 0) {
        free4(a, NAIVE_ARRAYS);
        return -1;
    }

    /* qk = (Q*s) @ (K*s)^T; softcap; qk_with_bias = qk + bias */
    for (int64_t b = 0; b < B; ++b) {
        for (int64_t h = 0; h < Hq; ++h) {
            for (int64_t i = 0; i < Sq; ++i) {
                for (int64_t j = 0; j < T; ++j) {
                    ld dot = 0.0L;
                    for (int64_t d = 0; d < D; ++d) {
                        dot += (*at(&a[0], b, h, i, d) * s) * (*at(&a[5], b, h, j, d) * s);
                    }
                    if (c->softcap > 0.0f) {
                        const ld cap = (ld)c->softcap;
                        dot = tanhl(dot / cap) * cap;
                    }
                    *at(&a[8], b, h, i, j) = dot;
                    *at(&a[9], b, h, i, j) = dot + *at(&a[7], b, h, i, j);
                }
            }
        }
    }

    /* softmax with the fully-masked-row guard decided on the bias; keys
     * j >= nonpad never enter (their logit is -inf, not qk + bias) */
    for (int64_t b = 0; b < B; ++b) {
        const int64_t n_valid = c->nonpad_kv_seqlen != NULL ? c->nonpad_kv_seqlen[b] : T;
        for (int64_t h = 0; h < Hq; ++h) {
            for (int64_t i = 0; i < Sq; ++i) {
                ld *x = at(&a[9], b, h, i, 0);
                ld *p = at(&a[10], b, h, i, 0);
                ld *logits = malloc(sizeof(ld) * (size_t)(T + 1));
                if (logits == NULL) {
                    free4(a, NAIVE_ARRAYS);
                    return -1;
                }
                for (int64_t j = 0; j < T; ++j) {
                    logits[j] = j < n_valid ? x[j] : -INFINITY;
                }
                softmax_row(logits, T, p);
                free(logits);
                const ld bias_max = row_max(at(&a[7], b, h, i, 0), T);
                if (isinf(bias_max) && bias_max < 0) {
                    for (int64_t j = 0; j < T; ++j) {
                        p[j] = 0.0L;
                    }
                }
            }
        }
    }

    /* outputs */
    r->y_elems = (size_t)(B * Hq * Sq * Dv);
    r->qk_elems = (size_t)(B * Hq * Sq * T);
    r->present_key_elems = (size_t)(B * Hkv * T * D);
    r->present_value_elems = (size_t)(B * Hkv * T * Dv);
    r->y = calloc(r->y_elems + 1, sizeof(ld));
    r->qk = calloc(r->qk_elems + 1, sizeof(ld));
    r->present_key = calloc(r->present_key_elems + 1, sizeof(ld));
    r->present_value = calloc(r->present_value_elems + 1, sizeof(ld));
    if (r->y == NULL || r->qk == NULL || r->present_key == NULL || r->present_value == NULL) {
        free4(a, NAIVE_ARRAYS);
        opp_naive_result_free(r);
        return -1;
    }
    memcpy(r->present_key, a[3].a, sizeof(ld) * r->present_key_elems);
    memcpy(r->present_value, a[4].a, sizeof(ld) * r->present_value_elems);
    const int mode = c->qk_matmul_output_mode;
    const arr4_t *qk_src = mode == 3 ? &a[10] : mode == 2 ? &a[9] : &a[8];
    memcpy(r->qk, qk_src->a, sizeof(ld) * r->qk_elems);

    /* Y = P @ V, then for 3D: transpose (0, 2, 1, 3) and reshape [B, S_q, Hq*Dv] */
    for (int64_t b = 0; b < B; ++b) {
        const int64_t n_valid = c->nonpad_kv_seqlen != NULL ? c->nonpad_kv_seqlen[b] : T;
        for (int64_t h = 0; h < Hq; ++h) {
            for (int64_t i = 0; i < Sq; ++i) {
                for (int64_t e = 0; e < Dv; ++e) {
                    ld acc = 0.0L;
                    for (int64_t j = 0; j < n_valid; ++j) {
                        acc += *at(&a[10], b, h, i, j) * *at(&a[6], b, h, j, e);
                    }
                    const int64_t out = c->input_rank == 3 ? ((b * Sq + i) * Hq + h) * Dv + e
                                                           : ((b * Hq + h) * Sq + i) * Dv + e;
                    r->y[out] = acc;
                }
            }
        }
    }
    free4(a, NAIVE_ARRAYS);
    return 0;
}

void opp_naive_result_free(opp_naive_result_t *r) {
    if (r == NULL) {
        return;
    }
    free(r->y);
    free(r->qk);
    free(r->present_key);
    free(r->present_value);
    memset(r, 0, sizeof(*r));
}

void opp_naive_round(const long double *src, size_t n, opp_dtype_t dtype, void *dst) {
    for (size_t i = 0; i < n; ++i) {
        opp__store_elem(dst, i, (int)dtype, (double)src[i]);
    }
}

void *opp_naive_rounded(const long double *src, size_t n, opp_dtype_t dtype) {
    void *dst = malloc((n + 1) * opp_dtype_size(dtype));
    if (dst != NULL) {
        opp_naive_round(src, n, dtype, dst);
    }
    return dst;
}
