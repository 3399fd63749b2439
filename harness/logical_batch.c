/*
 * logical_batch.c - seeded generation of logical batches, their
 * recomposition from other batches' sequences, and their packed
 * representation (see logical_batch.h and DESIGN.md §3).
 *
 * Randomness is splitmix64 (no libm, no global state), so a seed gives the
 * same batch on every machine.
 */
#include "harness/logical_batch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/lb_fill.h"
#include "harness/rng.h"
#include "numerics/fp_convert.h"

void opp_lb_spec_random(opp_lb_spec_t *spec) {
    memset(spec, 0, sizeof(*spec));
    spec->is_causal = -1;
    spec->softcap = -1.0f;
    spec->scale = -1.0f;
}

static int lb_alloc(opp_lb_t *lb) {
    const size_t es = opp_dtype_size(lb->dtype);
    lb->cu_q = calloc((size_t)lb->batch + 1, sizeof(int32_t));
    lb->cu_kv = calloc((size_t)lb->batch + 1, sizeof(int32_t));
    if (lb->cu_q == NULL || lb->cu_kv == NULL) {
        return -1;
    }
    lb->max_lq = 0;
    lb->max_lkv = 0;
    for (int32_t b = 0; b < lb->batch; ++b) {
        lb->cu_q[b + 1] = lb->cu_q[b] + lb->lq[b];
        lb->cu_kv[b + 1] = lb->cu_kv[b] + lb->lkv[b];
        lb->max_lq = lb->lq[b] > lb->max_lq ? lb->lq[b] : lb->max_lq;
        lb->max_lkv = lb->lkv[b] > lb->max_lkv ? lb->lkv[b] : lb->max_lkv;
    }
    lb->total_q = lb->cu_q[lb->batch];
    lb->total_kv = lb->cu_kv[lb->batch];
    /* +1 row so that a batch with no tokens still has valid pointers. */
    lb->q = malloc(((size_t)lb->total_q + 1) * (size_t)lb->num_heads * (size_t)lb->head_size * es);
    lb->k =
        malloc(((size_t)lb->total_kv + 1) * (size_t)lb->kv_num_heads * (size_t)lb->head_size * es);
    lb->v = malloc(((size_t)lb->total_kv + 1) * (size_t)lb->kv_num_heads * (size_t)lb->v_head_size *
                   es);
    return (lb->q == NULL || lb->k == NULL || lb->v == NULL) ? -1 : 0;
}

static int lb_fill(opp_lb_t *lb, uint64_t seed) {
    if (lb_alloc(lb) != 0) {
        opp_lb_free(lb);
        return -1;
    }
    uint64_t st = seed ^ 0x5EEDF00Dull;
    /* Amplitudes vary so softmax ranges from near-uniform to near-one-hot. */
    const double amp = 0.25 + 2.75 * opp_rng_unit(&st);
    opp_lb_fill_values(lb->q, (size_t)lb->total_q * (size_t)lb->num_heads * (size_t)lb->head_size,
                       lb->dtype, amp, &st);
    opp_lb_fill_values(lb->k,
                       (size_t)lb->total_kv * (size_t)lb->kv_num_heads * (size_t)lb->head_size,
                       lb->dtype, amp, &st);
    opp_lb_fill_values(lb->v,
                       (size_t)lb->total_kv * (size_t)lb->kv_num_heads * (size_t)lb->v_head_size,
                       lb->dtype, 1.0, &st);
    return 0;
}

int opp_lb_from_lengths(opp_lb_t *lb, opp_dtype_t dtype, int32_t batch, const int32_t *lq,
                        const int32_t *lkv, int32_t num_heads, int32_t kv_num_heads,
                        int32_t head_size, int32_t v_head_size, float scale, int32_t is_causal,
                        float softcap, uint64_t seed) {
    memset(lb, 0, sizeof(*lb));
    lb->dtype = dtype;
    lb->batch = batch;
    lb->num_heads = num_heads;
    lb->kv_num_heads = kv_num_heads;
    lb->head_size = head_size;
    lb->v_head_size = v_head_size;
    lb->scale = scale;
    lb->is_causal = is_causal;
    lb->softcap = softcap;
    lb->seed = seed;
    lb->lq = malloc(sizeof(int32_t) * (size_t)batch);
    lb->lkv = malloc(sizeof(int32_t) * (size_t)batch);
    if (lb->lq == NULL || lb->lkv == NULL) {
        opp_lb_free(lb);
        return -1;
    }
    memcpy(lb->lq, lq, sizeof(int32_t) * (size_t)batch);
    memcpy(lb->lkv, lkv, sizeof(int32_t) * (size_t)batch);
    return lb_fill(lb, seed);
}

/* A length: mostly small, sometimes 0 or 1, sometimes across key chunks. */
static int32_t rand_len(uint64_t *st, const opp_lb_spec_t *spec) {
    if (spec->max_len > 0) {
        return opp_rng_int(st, spec->min_len, spec->max_len);
    }
    const int32_t r = opp_rng_int(st, 0, 19);
    if (r == 0) {
        return 0;
    }
    if (r == 1) {
        return 1;
    }
    if (r == 2) {
        return opp_rng_int(st, 60, 150); /* crosses OPP_EXACT_KEY_CHUNK boundaries */
    }
    return opp_rng_int(st, 2, 40);
}

int opp_lb_generate(const opp_lb_spec_t *spec, uint64_t seed, opp_lb_t *lb) {
    static const opp_dtype_t dtypes[3] = {OPP_DTYPE_F32, OPP_DTYPE_F16, OPP_DTYPE_BF16};
    static const int32_t head_sizes[12] = {8, 16, 32, 32, 64, 64, 64, 80, 96, 128, 128, 256};
    static const int32_t ratios[5] = {1, 2, 4, 8, 1};
    uint64_t st = seed;
    const opp_dtype_t dtype =
        spec->dtype != OPP_DTYPE_UNDEFINED ? spec->dtype : dtypes[opp_rng_int(&st, 0, 2)];
    const int32_t batch = spec->batch > 0 ? spec->batch : opp_rng_int(&st, 1, 5);
    int32_t hkv = spec->kv_num_heads > 0 ? spec->kv_num_heads
                  : spec->num_heads > 0  ? spec->num_heads
                                         : opp_rng_int(&st, 1, 3);
    int32_t hq = spec->num_heads > 0 ? spec->num_heads : hkv * ratios[opp_rng_int(&st, 0, 4)];
    const int32_t d = spec->head_size > 0 ? spec->head_size : head_sizes[opp_rng_int(&st, 0, 11)];
    int32_t dv = spec->v_head_size > 0 ? spec->v_head_size : d;
    if (spec->v_head_size == 0 && opp_rng_int(&st, 0, 3) == 0) {
        dv = head_sizes[opp_rng_int(&st, 0, 11)];
    }
    const int32_t causal = spec->is_causal >= 0 ? spec->is_causal : opp_rng_int(&st, 0, 1);
    float softcap = spec->softcap;
    if (softcap < 0.0f) {
        softcap = opp_rng_int(&st, 0, 2) == 0 ? (float)(2.0 + 48.0 * opp_rng_unit(&st)) : 0.0f;
    }
    float scale = spec->scale;
    if (scale < 0.0f) {
        scale = opp_rng_int(&st, 0, 2) == 0 ? (float)(0.02 + 0.5 * opp_rng_unit(&st)) : 0.0f;
    }
    int32_t *lq = malloc(sizeof(int32_t) * (size_t)batch);
    int32_t *lkv = malloc(sizeof(int32_t) * (size_t)batch);
    if (lq == NULL || lkv == NULL) {
        free(lq);
        free(lkv);
        return -1;
    }
    for (int32_t b = 0; b < batch; ++b) {
        lq[b] = rand_len(&st, spec);
        lkv[b] = spec->equal_lengths ? lq[b] : rand_len(&st, spec);
    }
    const int rc = opp_lb_from_lengths(lb, dtype, batch, lq, lkv, hq, hkv, d, dv, scale, causal,
                                       softcap, opp_rng_u64(&st));
    free(lq);
    free(lkv);
    return rc;
}

void opp_lb_free(opp_lb_t *lb) {
    if (lb == NULL) {
        return;
    }
    free(lb->lq);
    free(lb->lkv);
    free(lb->cu_q);
    free(lb->cu_kv);
    free(lb->q);
    free(lb->k);
    free(lb->v);
    memset(lb, 0, sizeof(*lb));
}

/* 1 if a and b have the same attributes (everything but lengths and values). */
static int same_attrs(const opp_lb_t *a, const opp_lb_t *b) {
    return a->dtype == b->dtype && a->num_heads == b->num_heads &&
           a->kv_num_heads == b->kv_num_heads && a->head_size == b->head_size &&
           a->v_head_size == b->v_head_size && a->scale == b->scale &&
           a->is_causal == b->is_causal && a->softcap == b->softcap;
}

/* Copies rows [row0, row0 + n) of a packed [total, heads, width] tensor. */
static void copy_rows(void *dst, int64_t dst_row0, const void *src, int64_t src_row0, int64_t n,
                      int64_t row_elems, size_t es) {
    memcpy((char *)dst + (size_t)(dst_row0 * row_elems) * es,
           (const char *)src + (size_t)(src_row0 * row_elems) * es, (size_t)(n * row_elems) * es);
}

int opp_lb_compose(opp_lb_t *dst, const opp_lb_t *const *src, const int32_t *seq, int32_t n) {
    memset(dst, 0, sizeof(*dst));
    if (n < 1) {
        return -1;
    }
    for (int32_t k = 0; k < n; ++k) {
        if (!same_attrs(src[0], src[k]) || seq[k] < 0 || seq[k] >= src[k]->batch) {
            return -1;
        }
    }
    const opp_lb_t *a = src[0];
    *dst = *a; /* the attributes; lengths, offsets and values are dst's own */
    dst->batch = n;
    dst->cu_q = dst->cu_kv = NULL;
    dst->q = dst->k = dst->v = NULL;
    dst->lq = malloc(sizeof(int32_t) * (size_t)n);
    dst->lkv = malloc(sizeof(int32_t) * (size_t)n);
    if (dst->lq == NULL || dst->lkv == NULL) {
        opp_lb_free(dst);
        return -1;
    }
    for (int32_t k = 0; k < n; ++k) {
        dst->lq[k] = src[k]->lq[seq[k]];
        dst->lkv[k] = src[k]->lkv[seq[k]];
    }
    if (lb_alloc(dst) != 0) {
        opp_lb_free(dst);
        return -1;
    }
    const size_t es = opp_dtype_size(a->dtype);
    const int64_t qw = (int64_t)a->num_heads * a->head_size;
    const int64_t kw = (int64_t)a->kv_num_heads * a->head_size;
    const int64_t vw = (int64_t)a->kv_num_heads * a->v_head_size;
    for (int32_t k = 0; k < n; ++k) {
        const opp_lb_t *s = src[k];
        const int32_t b = seq[k];
        copy_rows(dst->q, dst->cu_q[k], s->q, s->cu_q[b], s->lq[b], qw, es);
        copy_rows(dst->k, dst->cu_kv[k], s->k, s->cu_kv[b], s->lkv[b], kw, es);
        copy_rows(dst->v, dst->cu_kv[k], s->v, s->cu_kv[b], s->lkv[b], vw, es);
    }
    return 0;
}

void opp_lb_packed_desc(const opp_lb_t *lb, opp_attention_desc_t *desc) {
    opp_attention_desc_init(desc);
    desc->q_dtype = desc->k_dtype = desc->v_dtype = desc->out_dtype = lb->dtype;
    desc->batch = lb->batch;
    desc->num_heads = lb->num_heads;
    desc->kv_num_heads = lb->kv_num_heads;
    desc->head_size = lb->head_size;
    desc->v_head_size = lb->v_head_size;
    desc->total_q = lb->total_q;
    desc->total_kv = lb->total_kv;
    desc->max_seqlen_q = lb->max_lq;
    desc->max_seqlen_kv = lb->max_lkv;
    desc->scale = lb->scale;
    desc->is_causal = lb->is_causal;
    desc->softcap = lb->softcap;
    desc->algo = OPP_ALGO_EXACT; /* bit-identity with the references; callers may change it */
}

static size_t append_list(char *buf, size_t size, size_t pos, const char *name, const int32_t *v,
                          int32_t n) {
    pos += (size_t)snprintf(buf + pos, pos < size ? size - pos : 0, " %s=[", name);
    for (int32_t i = 0; i < n && pos < size; ++i) {
        if (i == 8 && n > 10) {
            pos += (size_t)snprintf(buf + pos, size - pos, ",...(%d)", (int)n);
            break;
        }
        pos += (size_t)snprintf(buf + pos, size - pos, i ? ",%d" : "%d", (int)v[i]);
    }
    pos += (size_t)snprintf(buf + pos, pos < size ? size - pos : 0, "]");
    return pos;
}

void opp_lb_describe(const opp_lb_t *lb, char *buf, size_t size) {
    size_t pos = (size_t)snprintf(
        buf, size, "%s B=%d Hq=%d Hkv=%d D=%d Dv=%d%s scale=%g softcap=%g seed=%llu",
        opp_dtype_name(lb->dtype), (int)lb->batch, (int)lb->num_heads, (int)lb->kv_num_heads,
        (int)lb->head_size, (int)lb->v_head_size, lb->is_causal ? " causal" : "", (double)lb->scale,
        (double)lb->softcap, (unsigned long long)lb->seed);
    pos = append_list(buf, size, pos, "lq", lb->lq, lb->batch);
    append_list(buf, size, pos, "lkv", lb->lkv, lb->batch);
}
