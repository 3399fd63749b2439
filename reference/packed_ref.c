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
 * to double once (keys scaled by sqrt(scale)) and shared by the threads that
 * work on them (reference/ref_threads.h; an item is a block of query rows of
 * one head). Query heads h with h / (Hq / Hkv) == hk (repeat-interleave GQA)
 * use them: row i sees keys j < key_end(i), key_end = L_kv when not causal,
 * else clamp(i + L_kv - L_q + 1, 0, L_kv) (tail-aligned causal; a negative
 * offset leaves the first rows with no key, which then output zeros). The
 * row kernels are reference/exact_kernels_impl.h. As the library does, the
 * totals are the capacity: rows cu_seqlens_q[batch] .. total_q - 1 are
 * zeros, and max_seqlen is only a bound (scratch rows are sized from
 * min(max_seqlen_kv, total_kv)).
 */
#include <math.h>
#include <stddef.h>

#include "lib/internal/check.h"
#include "numerics/exact_order.h"
#include "numerics/fp_convert.h"
#include "reference/exact_row.h"
#include "reference/opp_reference.h"
#include "reference/ref_threads.h"

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

/* One call: what every item needs (shared read-only by the threads). */
typedef struct packed_ctx {
    const opp_attention_desc_t *desc;
    packed_shape_t s;
    const int32_t *cu_q, *cu_kv;
    const char *q, *k, *v;
    char *out;
    double sc;     /* sqrt(scale) */
    int32_t group; /* query heads per kv head */
    size_t mkv;    /* keys of the longest sequence (scratch row length) */
    const opp__exact_row_ops_t *ops;
} packed_ctx_t;

static int64_t row_blocks(int32_t rows) {
    return ((int64_t)rows + OPP__REF_ROWS_PER_ITEM - 1) / OPP__REF_ROWS_PER_ITEM;
}

/* Group g = (sequence b, kv head hk) = (g / Hkv, g % Hkv); its items are
 * (query head of hk's group, block of query rows). */
static int64_t packed_group_items(void *ctx, int64_t g) {
    const packed_ctx_t *c = ctx;
    const int64_t b = g / c->s.hkv;
    return c->group * row_blocks(c->cu_q[b + 1] - c->cu_q[b]);
}

static int32_t packed_group_keys(void *ctx, int64_t g) {
    const packed_ctx_t *c = ctx;
    const int64_t b = g / c->s.hkv;
    return c->cu_kv[b + 1] - c->cu_kv[b];
}

/* Widens the keys (scaled) and values of kv head hk, rows kv0 .. kv0+lkv-1. */
static void packed_load(void *ctx, int64_t g, opp__exact_kv_t *kv) {
    const packed_ctx_t *c = ctx;
    const packed_shape_t *s = &c->s;
    const int64_t b = g / s->hkv, hk = g % s->hkv, kv0 = c->cu_kv[b];
    for (int32_t j = 0; j < kv->n; ++j) {
        const int64_t row = kv0 + j;
        opp__exact_kv_set_key(kv, j,
                              c->k + ((size_t)(row * s->k_stride) + (size_t)hk * s->d) * s->esize,
                              s->dtype, c->sc);
        opp__exact_kv_set_value(
            kv, j, c->v + ((size_t)(row * s->v_stride) + (size_t)hk * s->dv) * s->esize, s->dtype);
    }
}

/* One block of query rows of one head: row i sees keys j < key_end(i).
 * Scratch: x, p [R, max_seqlen_kv]; qs [R, D]; y [R, Dv rounded up]. */
static void packed_run(void *ctx, int64_t g, int64_t item, const opp__exact_kv_t *kv,
                       double *scratch) {
    const packed_ctx_t *c = ctx;
    const packed_shape_t *s = &c->s;
    const int64_t b = g / s->hkv, hk = g % s->hkv;
    const int32_t lq = c->cu_q[b + 1] - c->cu_q[b], lkv = kv->n;
    const int64_t blocks = row_blocks(lq);
    const int64_t h = hk * c->group + item / blocks;
    const int32_t i0 = (int32_t)(item % blocks) * OPP__REF_ROWS_PER_ITEM;
    const int32_t rows = lq - i0 < OPP__REF_ROWS_PER_ITEM ? lq - i0 : OPP__REF_ROWS_PER_ITEM;
    const size_t ld = c->mkv;
    double *x = scratch, *p = x + OPP__REF_ROWS_PER_ITEM * ld;
    double *qs = p + OPP__REF_ROWS_PER_ITEM * ld, *y = qs + OPP__REF_ROWS_PER_ITEM * (size_t)s->d;
    int32_t key_end[OPP__REF_ROWS_PER_ITEM] = {0};
    for (int32_t r = 0; r < rows; ++r) {
        const int64_t i = i0 + r, row = c->cu_q[b] + i;
        int64_t end = lkv;
        if (c->desc->is_causal) {
            end = i + lkv - lq + 1;
            end = end < 0 ? 0 : (end > lkv ? lkv : end);
        }
        /* keys j >= key_end are invisible: leaving them out of x and the
         * softmax is the same as x_j = -inf (exact_order.h) */
        key_end[r] = (int32_t)end;
        opp__exact_load_scaled(qs + (size_t)r * s->d,
                               c->q + ((size_t)(row * s->q_stride) + (size_t)h * s->d) * s->esize,
                               s->d, s->dtype, c->sc);
    }
    c->ops->scores(qs, rows, key_end, kv, (double)c->desc->softcap, x, ld);
    c->ops->softmax_pv(x, rows, key_end, kv, y, p, ld);
    for (int32_t r = 0; r < rows; ++r) {
        const int64_t row = c->cu_q[b] + i0 + r;
        char *dst = c->out + ((size_t)(row * s->out_stride) + (size_t)h * s->dv) * s->esize;
        for (int32_t v = 0; v < s->dv; ++v) {
            opp__store_elem(dst, (size_t)v, s->dtype, y[(size_t)r * kv->dv_pad + v]);
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
    packed_ctx_t c;
    c.desc = desc;
    c.s = packed_shape_of(desc);
    c.cu_q = cu_seqlens_q;
    c.cu_kv = cu_seqlens_kv;
    c.q = q;
    c.k = k;
    c.v = v;
    c.out = out;
    c.sc = opp__exact_sqrt_scale(desc->scale, c.s.d);
    c.group = c.s.hq / c.s.hkv;
    const int64_t mkv = desc->max_seqlen_kv < desc->total_kv ? desc->max_seqlen_kv : desc->total_kv;
    c.mkv = (size_t)(mkv > 0 ? mkv : 1);
    c.ops = opp__exact_row_ops();
    opp__ref_work_t w;
    w.n_groups = (int64_t)desc->batch * c.s.hkv;
    w.d = c.s.d;
    w.dv = c.s.dv;
    /* x, p [R, max_seqlen_kv]; qs [R, D]; y [R, Dv rounded up] */
    w.scratch_doubles =
        OPP__REF_ROWS_PER_ITEM * (2 * c.mkv + (size_t)c.s.d + (size_t)c.s.dv + OPP__EXACT_KB);
    w.ctx = &c;
    w.group_items = packed_group_items;
    w.group_keys = packed_group_keys;
    w.load = packed_load;
    w.run = packed_run;
    OPP_TRY(opp__ref_run(&w));
    for (int64_t row = cu_seqlens_q[desc->batch]; row < desc->total_q; ++row) {
        char *dst = c.out + (size_t)(row * c.s.out_stride) * c.s.esize; /* past the batch */
        for (size_t e = 0; e < (size_t)c.s.hq * (size_t)c.s.dv; ++e) {
            opp__store_elem(dst, e, c.s.dtype, 0.0);
        }
    }
    return OPP_STATUS_SUCCESS;
}
