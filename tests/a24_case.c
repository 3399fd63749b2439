/*
 * a24_case.c - building, running and mirroring into the naive model one
 * hand-built case of the CPU Attention-24 reference (see a24_case.h).
 */
#include "tests/a24_case.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness/rng.h"
#include "numerics/fp_convert.h"

uint64_t a24_rand_u64(uint64_t *state) {
    return opp_rng_u64(state);
}

int32_t a24_rand_int(uint64_t *state, int32_t lo, int32_t hi) {
    return opp_rng_int(state, lo, hi);
}

int64_t a24_total(const opp_ref_attention24_desc_t *d) {
    return (int64_t)d->past_seqlen + d->kv_seqlen;
}

static void *alloc_elems(size_t n, size_t esize) {
    return malloc((n + 1) * esize);
}

static void fill_random(void *dst, size_t n, opp_dtype_t dtype, double amplitude, uint64_t *st) {
    for (size_t i = 0; i < n; ++i) {
        opp__store_elem(dst, i, (int)dtype, amplitude * opp_rng_normalish(st));
    }
}

static void poison(void *dst, size_t n, opp_dtype_t dtype) {
    for (size_t i = 0; i < n; ++i) {
        opp__store_elem(dst, i, (int)dtype, (double)NAN);
    }
}

void a24_case_poison_outputs(a24_case_t *c) {
    poison(c->y, c->y_elems, c->d.dtype);
    poison(c->qk, c->qk_elems, c->d.dtype);
    poison(c->present_key, c->prk_elems, c->d.dtype);
    poison(c->present_value, c->prv_elems, c->d.dtype);
}

int a24_case_alloc(a24_case_t *c, uint64_t seed, double amplitude) {
    const opp_ref_attention24_desc_t *d = &c->d;
    const size_t es = opp_dtype_size(d->dtype);
    const int64_t B = d->batch, T = a24_total(d);
    c->q_elems = (size_t)(B * d->q_num_heads * d->q_seqlen * d->head_size);
    c->k_elems = (size_t)(B * d->kv_num_heads * d->kv_seqlen * d->head_size);
    c->v_elems = (size_t)(B * d->kv_num_heads * d->kv_seqlen * d->v_head_size);
    c->pk_elems = (size_t)(B * d->kv_num_heads * d->past_seqlen * d->head_size);
    c->pv_elems = (size_t)(B * d->kv_num_heads * d->past_seqlen * d->v_head_size);
    c->y_elems = (size_t)(B * d->q_num_heads * d->q_seqlen * d->v_head_size);
    c->qk_elems = (size_t)(B * d->q_num_heads * d->q_seqlen * T);
    c->prk_elems = (size_t)(B * d->kv_num_heads * T * d->head_size);
    c->prv_elems = (size_t)(B * d->kv_num_heads * T * d->v_head_size);
    c->mask_elems = 0;
    if (d->mask_dtype != OPP_DTYPE_UNDEFINED) {
        c->mask_elems = 1;
        for (int32_t i = 0; i < d->mask_rank; ++i) {
            c->mask_elems *= (size_t)d->mask_dims[i];
        }
    }
    const size_t mask_es = d->mask_dtype == OPP_DTYPE_BOOL_ ? 1 : es;
    c->q = alloc_elems(c->q_elems, es);
    c->k = alloc_elems(c->k_elems, es);
    c->v = alloc_elems(c->v_elems, es);
    c->past_key = alloc_elems(c->pk_elems, es);
    c->past_value = alloc_elems(c->pv_elems, es);
    c->mask = alloc_elems(c->mask_elems, mask_es);
    c->nonpad = malloc(sizeof(int64_t) * (size_t)(B > 0 ? B : 1));
    c->y = alloc_elems(c->y_elems, es);
    c->qk = alloc_elems(c->qk_elems, es);
    c->present_key = alloc_elems(c->prk_elems, es);
    c->present_value = alloc_elems(c->prv_elems, es);
    if (!c->q || !c->k || !c->v || !c->past_key || !c->past_value || !c->mask || !c->nonpad ||
        !c->y || !c->qk || !c->present_key || !c->present_value) {
        a24_case_free(c);
        return -1;
    }
    uint64_t st = seed;
    fill_random(c->q, c->q_elems, d->dtype, amplitude, &st);
    fill_random(c->k, c->k_elems, d->dtype, amplitude, &st);
    fill_random(c->v, c->v_elems, d->dtype, 1.0, &st);
    fill_random(c->past_key, c->pk_elems, d->dtype, amplitude, &st);
    fill_random(c->past_value, c->pv_elems, d->dtype, 1.0, &st);
    static const double mask_values[6] = {0.0, 0.0, 0.75, -1.5, 2.25, -INFINITY};
    for (size_t i = 0; i < c->mask_elems; ++i) {
        if (d->mask_dtype == OPP_DTYPE_BOOL_) {
            ((uint8_t *)c->mask)[i] = a24_rand_int(&st, 0, 3) != 0;
        } else {
            opp__store_elem(c->mask, i, (int)d->dtype, mask_values[a24_rand_int(&st, 0, 5)]);
        }
    }
    for (int64_t b = 0; b < B; ++b) {
        c->nonpad[b] = d->kv_seqlen;
    }
    a24_case_poison_outputs(c);
    return 0;
}

void a24_case_tensors(const a24_case_t *c, opp_ref_attention24_tensors_t *t) {
    memset(t, 0, sizeof(*t));
    t->q = c->q;
    t->k = c->k;
    t->v = c->v;
    t->attn_mask = c->d.mask_dtype != OPP_DTYPE_UNDEFINED ? c->mask : NULL;
    t->past_key = c->d.has_past ? c->past_key : NULL;
    t->past_value = c->d.has_past ? c->past_value : NULL;
    t->nonpad_kv_seqlen = c->d.has_nonpad ? c->nonpad : NULL;
    t->y = c->y;
    t->present_key = c->want_present ? c->present_key : NULL;
    t->present_value = c->want_present ? c->present_value : NULL;
    t->qk_matmul_output = c->want_qk ? c->qk : NULL;
}

opp_status_t a24_case_run(a24_case_t *c) {
    opp_ref_attention24_tensors_t t;
    a24_case_tensors(c, &t);
    return opp_ref_attention24(&c->d, &t);
}

void a24_case_to_naive(const a24_case_t *c, opp_naive_case_t *n) {
    const opp_ref_attention24_desc_t *d = &c->d;
    memset(n, 0, sizeof(*n));
    n->dtype = d->dtype;
    n->input_rank = d->input_rank;
    n->batch = d->batch;
    n->q_num_heads = d->q_num_heads;
    n->kv_num_heads = d->kv_num_heads;
    n->q_seqlen = d->q_seqlen;
    n->kv_seqlen = d->kv_seqlen;
    n->head_size = d->head_size;
    n->v_head_size = d->v_head_size;
    n->q = c->q;
    n->k = c->k;
    n->v = c->v;
    if (d->has_past) {
        n->past_key = c->past_key;
        n->past_value = c->past_value;
        n->past_seqlen = d->past_seqlen;
    }
    if (d->mask_dtype != OPP_DTYPE_UNDEFINED) {
        n->attn_mask = c->mask;
        n->mask_dtype = (int)d->mask_dtype;
        n->mask_rank = d->mask_rank;
        memcpy(n->mask_dims, d->mask_dims, sizeof(n->mask_dims));
    }
    n->nonpad_kv_seqlen = d->has_nonpad ? c->nonpad : NULL;
    n->has_scale = d->scale != 0.0f; /* opp_reference.h: 0 means the attribute is absent */
    n->scale = d->scale;
    n->is_causal = d->is_causal;
    n->softcap = d->softcap;
    n->qk_matmul_output_mode = d->qk_matmul_output_mode;
}

void a24_case_free(a24_case_t *c) {
    free(c->q);
    free(c->k);
    free(c->v);
    free(c->past_key);
    free(c->past_value);
    free(c->mask);
    free(c->nonpad);
    free(c->y);
    free(c->qk);
    free(c->present_key);
    free(c->present_value);
    c->q = c->k = c->v = c->past_key = c->past_value = c->mask = NULL;
    c->y = c->qk = c->present_key = c->present_value = NULL;
    c->nonpad = NULL;
}

size_t a24_case_compare_naive(const a24_case_t *c, uint64_t max_ulp, const char *what,
                              opp_test_ulp_stats_t *y_stats, opp_test_ulp_stats_t *qk_stats) {
    opp_naive_case_t n;
    a24_case_to_naive(c, &n);
    opp_naive_result_t r;
    if (opp_naive_attention24(&n, &r) != 0) {
        return SIZE_MAX;
    }
    size_t bad = SIZE_MAX;
    void *y = opp_naive_rounded(r.y, r.y_elems, c->d.dtype);
    void *qk = opp_naive_rounded(r.qk, r.qk_elems, c->d.dtype);
    if (y != NULL && qk != NULL) {
        bad = opp_test_ulp_compare(c->y, y, c->y_elems, c->d.dtype, max_ulp, what, y_stats);
        if (c->want_qk) {
            bad +=
                opp_test_ulp_compare(c->qk, qk, c->qk_elems, c->d.dtype, max_ulp, what, qk_stats);
        }
    }
    free(y);
    free(qk);
    opp_naive_result_free(&r);
    return bad;
}

void *a24_mask_bool_to_float(const void *mask, size_t n, opp_dtype_t dtype) {
    void *dst = malloc((n + 1) * opp_dtype_size(dtype));
    for (size_t i = 0; dst != NULL && i < n; ++i) {
        opp__store_elem(dst, i, (int)dtype, ((const uint8_t *)mask)[i] ? 0.0 : -INFINITY);
    }
    return dst;
}

void *a24_mask_expand(const opp_ref_attention24_desc_t *d, const void *mask,
                      const int64_t target[4]) {
    const int is_bool = d->mask_dtype == OPP_DTYPE_BOOL_;
    const size_t es = is_bool ? 1 : opp_dtype_size(d->dtype);
    const size_t n = (size_t)(target[0] * target[1] * target[2] * target[3]);
    char *dst = malloc((n + 1) * es);
    if (dst == NULL) {
        return NULL;
    }
    /* dims4: the mask's dims right-aligned in 4 axes, missing axes size 1 */
    int64_t dims4[4] = {1, 1, 1, 1};
    for (int32_t i = 0; i < d->mask_rank; ++i) {
        dims4[4 - d->mask_rank + i] = d->mask_dims[i];
    }
    size_t out = 0;
    for (int64_t b = 0; b < target[0]; ++b) {
        for (int64_t h = 0; h < target[1]; ++h) {
            for (int64_t t = 0; t < target[2]; ++t) {
                for (int64_t j = 0; j < target[3]; ++j, ++out) {
                    if (j >= dims4[3]) {
                        if (is_bool) {
                            dst[out] = 0;
                        } else {
                            opp__store_elem(dst, out, (int)d->dtype, -INFINITY);
                        }
                        continue;
                    }
                    const int64_t src =
                        ((((dims4[0] == 1 ? 0 : b) * dims4[1] + (dims4[1] == 1 ? 0 : h)) *
                              dims4[2] +
                          (dims4[2] == 1 ? 0 : t)) *
                         dims4[3]) +
                        j;
                    memcpy(dst + out * es, (const char *)mask + (size_t)src * es, es);
                }
            }
        }
    }
    return dst;
}
