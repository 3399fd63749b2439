/*
 * golden_packed.c - golden case vs sidecar cross-check, poison check and the
 * packed representation gathered from the padded tensors (golden_packed.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/errbuf.h"
#include "harness/golden_packed.h"
#include "numerics/fp_convert.h"

#define SAME(field_s, field_d, what)                                                 \
    FAIL_IF((field_s) != (field_d), "sidecar %s = %lld but the case has %lld", what, \
            (long long)(field_s), (long long)(field_d))

static int32_t max_len(const int32_t *l, int32_t n) {
    int32_t m = 1;
    for (int32_t b = 0; b < n; ++b) {
        m = l[b] > m ? l[b] : m;
    }
    return m;
}

int golden_crosscheck(const opp_onnx_sidecar_t *s, const opp_onnx_case_t *c,
                      const opp_ref_attention24_desc_t *d, const char *case_name, char *err,
                      size_t err_size) {
    FAIL_IF(strcmp(s->name, case_name) != 0, "sidecar name '%s' is not the folder name '%s'",
            s->name, case_name);
    FAIL_IF(s->dtype != d->dtype, "sidecar dtype %s but the case has %s", opp_dtype_name(s->dtype),
            opp_dtype_name(d->dtype));
    SAME(s->input_rank, d->input_rank, "layout rank");
    SAME(s->batch, d->batch, "batch");
    SAME(s->num_heads, d->q_num_heads, "num_heads");
    SAME(s->kv_num_heads, d->kv_num_heads, "kv_num_heads");
    SAME(s->head_size, d->head_size, "head_size");
    SAME(s->v_head_size, d->v_head_size, "v_head_size");
    SAME(s->is_causal, d->is_causal, "is_causal");
    FAIL_IF(s->scale != d->scale, "sidecar scale %.9g but the case has %.9g (0 = default)",
            (double)s->scale, (double)d->scale);
    FAIL_IF(s->softcap != d->softcap, "sidecar softcap %.9g but the case has %.9g",
            (double)s->softcap, (double)d->softcap);
    SAME(max_len(s->lq, s->batch), d->q_seqlen, "S_q = max(1, max lq)");
    SAME(max_len(s->lkv, s->batch), d->kv_seqlen, "S_kv = max(1, max lkv)");
    FAIL_IF(d->mask_dtype != OPP_DTYPE_UNDEFINED || d->has_past,
            "a golden case has no attn_mask and no past");
    FAIL_IF(!d->has_nonpad, "the case has no nonpad_kv_seqlen");
    const int64_t *np = (const int64_t *)c->inputs[OPP_A24_IN_NONPAD].data;
    for (int32_t b = 0; b < s->batch; ++b) {
        FAIL_IF(np[b] != s->lkv[b], "nonpad_kv_seqlen[%d] = %lld but sidecar lkv[%d] = %d", (int)b,
                (long long)np[b], (int)b, (int)s->lkv[b]);
    }
    for (int slot = 1; slot < OPP_A24_NUM_OUTPUTS; ++slot) {
        FAIL_IF(opp_onnx_case_output(c, slot) != NULL, "the case has output %s besides Y",
                opp_onnx_attention_output_name(slot));
    }
    return 0;
}

/* Geometry of one padded tensor: [B,H,S,Dh] (rank 4) or [B,S,H*Dh] (rank 3). */
typedef struct padded {
    const opp_onnx_tensor_t *t;
    int rank;
    int64_t batch, heads, seq, dh;
} padded_t;

static size_t flat_index(const padded_t *p, int64_t b, int64_t h, int64_t r, int64_t e) {
    if (p->rank == 4) {
        return (size_t)(((b * p->heads + h) * p->seq + r) * p->dh + e);
    }
    return (size_t)((b * p->seq + r) * p->heads * p->dh + h * p->dh + e);
}

static padded_t padded_of(const opp_onnx_tensor_t *t, int rank, int64_t heads, int64_t dh) {
    padded_t p = {t, rank, t->dims[0], heads, t->dims[rank == 4 ? 2 : 1], dh};
    return p;
}

/* Padding rows of tensor p (tail: valid rows at the end) hold +-P. */
static size_t poison_count(const padded_t *p, const int32_t *len, int tail, double poison,
                           opp_dtype_t dtype, char *first, size_t first_size) {
    size_t bad = 0;
    for (int64_t b = 0; b < p->batch; ++b) {
        for (int64_t h = 0; h < p->heads; ++h) {
            for (int64_t r = 0; r < p->seq; ++r) {
                const int valid = tail ? r >= p->seq - len[b] : r < len[b];
                for (int64_t e = 0; !valid && e < p->dh; ++e) {
                    const size_t n = flat_index(p, b, h, r, e);
                    const double want = (n % 2 == 0) ? poison : -poison;
                    const double got = opp__load_elem(p->t->data, n, (int)dtype);
                    if (got != want && bad++ == 0) {
                        snprintf(first, first_size, "%s[%zu] (b %lld row %lld) = %.17g, want %.17g",
                                 p->t->name, n, (long long)b, (long long)r, got, want);
                    }
                }
            }
        }
    }
    return bad;
}

int golden_check_poison(const opp_onnx_sidecar_t *s, const opp_onnx_case_t *c, size_t *bad,
                        char *err, size_t err_size) {
    const int rank = s->input_rank;
    const padded_t q = padded_of(&c->inputs[0], rank, s->num_heads, s->head_size);
    const padded_t k = padded_of(&c->inputs[1], rank, s->kv_num_heads, s->head_size);
    const padded_t v = padded_of(&c->inputs[2], rank, s->kv_num_heads, s->v_head_size);
    char first[3][256] = {"", "", ""};
    *bad = poison_count(&q, s->lq, 1, s->q_poison, s->dtype, first[0], 256);
    *bad += poison_count(&k, s->lkv, 0, s->kv_poison, s->dtype, first[1], 256);
    *bad += poison_count(&v, s->lkv, 0, s->kv_poison, s->dtype, first[2], 256);
    if (*bad > 0) {
        return opp_errbuf_fail(err, err_size,
                               "%zu padding elements are not the poison; first: %s%s%s", *bad,
                               first[0], first[1], first[2]);
    }
    return 0;
}

/* Copies the valid rows of p (tail or head aligned) into dst [total, H, Dh]. */
static void gather(const padded_t *p, const int32_t *len, const int32_t *cu, int tail, size_t es,
                   void *dst) {
    const unsigned char *src = (const unsigned char *)p->t->data;
    unsigned char *out = (unsigned char *)dst;
    for (int64_t b = 0; b < p->batch; ++b) {
        const int64_t first = tail ? p->seq - len[b] : 0;
        for (int64_t i = 0; i < len[b]; ++i) {
            for (int64_t h = 0; h < p->heads; ++h) {
                const size_t to = (size_t)(((cu[b] + i) * p->heads + h) * p->dh);
                memcpy(out + to * es, src + flat_index(p, b, h, first + i, 0) * es,
                       (size_t)p->dh * es);
            }
        }
    }
}

static int32_t *prefix_sums(const int32_t *len, int32_t n) {
    int32_t *cu = (int32_t *)malloc(sizeof(int32_t) * (size_t)(n + 1));
    if (cu != NULL) {
        cu[0] = 0;
        for (int32_t b = 0; b < n; ++b) {
            cu[b + 1] = cu[b] + len[b];
        }
    }
    return cu;
}

static void *alloc_elems(size_t n, size_t es) {
    return malloc(n * es > 0 ? n * es : 1);
}

int golden_packed_derive(const opp_onnx_sidecar_t *s, const opp_onnx_case_t *c, golden_packed_t *p,
                         char *err, size_t err_size) {
    memset(p, 0, sizeof(*p));
    const size_t es = opp_onnx_dtype_size((int32_t)s->dtype);
    p->cu_q = prefix_sums(s->lq, s->batch);
    p->cu_kv = prefix_sums(s->lkv, s->batch);
    if (p->cu_q == NULL || p->cu_kv == NULL) {
        golden_packed_free(p);
        return opp_errbuf_fail(err, err_size, "out of memory");
    }
    const int64_t tq = p->cu_q[s->batch], tkv = p->cu_kv[s->batch];
    const size_t hq = (size_t)s->num_heads, hkv = (size_t)s->kv_num_heads;
    p->out_elems = (size_t)tq * hq * (size_t)s->v_head_size;
    p->q = alloc_elems((size_t)tq * hq * (size_t)s->head_size, es);
    p->k = alloc_elems((size_t)tkv * hkv * (size_t)s->head_size, es);
    p->v = alloc_elems((size_t)tkv * hkv * (size_t)s->v_head_size, es);
    p->want = alloc_elems(p->out_elems, es);
    p->out = alloc_elems(p->out_elems, es);
    if (p->q == NULL || p->k == NULL || p->v == NULL || p->want == NULL || p->out == NULL) {
        golden_packed_free(p);
        return opp_errbuf_fail(err, err_size, "out of memory");
    }
    memset(p->out, 0xff, p->out_elems * es);
    const int rank = s->input_rank;
    const padded_t q = padded_of(&c->inputs[0], rank, s->num_heads, s->head_size);
    const padded_t k = padded_of(&c->inputs[1], rank, s->kv_num_heads, s->head_size);
    const padded_t v = padded_of(&c->inputs[2], rank, s->kv_num_heads, s->v_head_size);
    const padded_t y = padded_of(&c->outputs[0], rank, s->num_heads, s->v_head_size);
    gather(&q, s->lq, p->cu_q, 1, es, p->q);
    gather(&k, s->lkv, p->cu_kv, 0, es, p->k);
    gather(&v, s->lkv, p->cu_kv, 0, es, p->v);
    gather(&y, s->lq, p->cu_q, 1, es, p->want);

    opp_attention_desc_t *d = &p->desc;
    opp_attention_desc_init(d);
    d->algo = OPP_ALGO_EXACT; /* compared bit for bit with the goldens */
    d->q_dtype = d->k_dtype = d->v_dtype = d->out_dtype = s->dtype;
    d->batch = s->batch;
    d->num_heads = s->num_heads;
    d->kv_num_heads = s->kv_num_heads;
    d->head_size = s->head_size;
    d->v_head_size = s->v_head_size;
    d->total_q = tq;
    d->total_kv = tkv;
    d->max_seqlen_q = 0;
    d->max_seqlen_kv = 0;
    for (int32_t b = 0; b < s->batch; ++b) {
        d->max_seqlen_q = s->lq[b] > d->max_seqlen_q ? s->lq[b] : d->max_seqlen_q;
        d->max_seqlen_kv = s->lkv[b] > d->max_seqlen_kv ? s->lkv[b] : d->max_seqlen_kv;
    }
    d->scale = s->scale;
    d->is_causal = s->is_causal;
    d->softcap = s->softcap;
    return 0;
}

void golden_packed_free(golden_packed_t *p) {
    if (p != NULL) {
        free(p->cu_q);
        free(p->cu_kv);
        free(p->q);
        free(p->k);
        free(p->v);
        free(p->want);
        free(p->out);
        memset(p, 0, sizeof(*p));
    }
}
