/*
 * logical_batch.h - one logical batch, two representations (DESIGN.md §3).
 *
 * A logical batch is B sequences with lengths L_q[b], L_kv[b], the
 * attributes, the dtype and the values. The values are stored once, packed
 * and dense:
 *   q [total_q, Hq, D], k [total_kv, Hkv, D], v [total_kv, Hkv, Dv]
 * From it the harness derives
 *   - the packed representation (the same arrays plus cu_seqlens_q/kv), and
 *   - the padded Attention-24 representation: S_q = max L_q, S_kv = max L_kv,
 *     4D [B, H, S, D] or 3D [B, S, H*D], nonpad_kv_seqlen[b] = L_kv[b], KV
 *     rows right-padded, query rows placed at the TAIL of their block (rows
 *     S_q - L_q[b] .. S_q - 1) so Attention-24's causal offset
 *     nonpad[b] - S_q equals the packed offset L_kv - L_q. Padding holds
 *     poison: large finite values, or NaN.
 * Used by the L0 test, the GPU tests and tools/oppcheck.
 */
#ifndef OPP_HARNESS_LOGICAL_BATCH_H
#define OPP_HARNESS_LOGICAL_BATCH_H

#include <stddef.h>
#include <stdint.h>

#include "lib/oppacked.h"
#include "reference/opp_reference.h"

typedef struct opp_lb {
    opp_dtype_t dtype;
    int32_t batch, num_heads, kv_num_heads, head_size, v_head_size;
    float scale; /* 0: default 1/sqrt(D) */
    int32_t is_causal;
    float softcap;             /* 0: off */
    int32_t *lq, *lkv;         /* [batch] */
    int32_t *cu_q, *cu_kv;     /* [batch + 1] prefix sums */
    int64_t total_q, total_kv; /* cu_q[batch], cu_kv[batch] */
    int32_t max_lq, max_lkv;
    void *q, *k, *v; /* packed dense values in dtype (see file comment) */
    uint64_t seed;   /* what generated the values */
} opp_lb_t;

/* What a generated batch may contain (ranges are inclusive). */
typedef struct opp_lb_spec {
    opp_dtype_t dtype; /* UNDEFINED: random among f32, f16, bf16 */
    int32_t batch;     /* 0: random 1..5 */
    int32_t num_heads, kv_num_heads, head_size, v_head_size; /* 0: random */
    int32_t is_causal;                                       /* -1: random */
    float softcap;                                           /* < 0: random (often 0) */
    float scale;                                             /* < 0: random (often default) */
    int32_t min_len, max_len; /* query and key lengths; max 0: random small */
    int32_t equal_lengths;    /* 1: L_kv[b] = L_q[b] (self-attention) */
} opp_lb_spec_t;

/* A spec meaning "anything" (all random). */
void opp_lb_spec_random(opp_lb_spec_t *spec);

/* Generates batch number `index` of the seeded stream; deterministic.
 * @return : 0 on success, -1 on allocation failure. Free with opp_lb_free. */
int opp_lb_generate(const opp_lb_spec_t *spec, uint64_t seed, opp_lb_t *lb);

/* Builds a batch from explicit lengths (copied) with random values. */
int opp_lb_from_lengths(opp_lb_t *lb, opp_dtype_t dtype, int32_t batch, const int32_t *lq,
                        const int32_t *lkv, int32_t num_heads, int32_t kv_num_heads,
                        int32_t head_size, int32_t v_head_size, float scale, int32_t is_causal,
                        float softcap, uint64_t seed);

void opp_lb_free(opp_lb_t *lb);

/* Another composition of existing sequences (batch invariance tests):
 * sequence k of dst is sequence seq[k] of *src[k], values copied, for
 * k = 0 .. n-1 (n >= 1). Every src[k] must have the attributes of src[0]
 * (dtype, heads, head sizes, scale, causal, softcap), which dst takes.
 * @return : 0 on success, -1 on allocation failure or differing
 *           attributes. Free with opp_lb_free. */
int opp_lb_compose(opp_lb_t *dst, const opp_lb_t *const *src, const int32_t *seq, int32_t n);

/* The packed descriptor of the batch (dense strides, exact algo). */
void opp_lb_packed_desc(const opp_lb_t *lb, opp_attention_desc_t *desc);

/* One-line description, e.g. "f16 B=3 Hq=8 Hkv=2 D=64 Dv=64 causal lq=[..] lkv=[..]". */
void opp_lb_describe(const opp_lb_t *lb, char *buf, size_t size);

/* The padded Attention-24 representation. */
typedef enum opp_lb_poison { OPP_LB_POISON_FINITE = 0, OPP_LB_POISON_NAN = 1 } opp_lb_poison_t;

typedef struct opp_lb_padded {
    opp_ref_attention24_desc_t desc; /* with has_nonpad = 1 */
    void *q, *k, *v;                 /* padded, dtype */
    int64_t *nonpad;                 /* [B] */
    void *y;                         /* [B, Hq, S_q, Dv] or 3D, poisoned before runs */
    size_t q_elems, k_elems, v_elems, y_elems;
} opp_lb_padded_t;

/* Derives the padded representation (input_rank 3 or 4) with the poison. */
int opp_lb_to_padded(const opp_lb_t *lb, int32_t input_rank, opp_lb_poison_t poison,
                     opp_lb_padded_t *pad);

void opp_lb_padded_free(opp_lb_padded_t *pad);

/* The reference's tensors of pad: q, k, v, nonpad_kv_seqlen and y point into
 * pad; no mask, no past, no optional outputs. */
opp_ref_attention24_tensors_t opp_lb_padded_tensors(const opp_lb_padded_t *pad);

/* Copies the valid (tail) rows of a padded output y into packed order
 * out [total_q, Hq, Dv]. */
void opp_lb_padded_valid_rows(const opp_lb_t *lb, const opp_lb_padded_t *pad, const void *y,
                              void *out);

/* Copies the valid (tail) rows of a padded LSE [B, Hq, S_q] into the
 * packed layout lse [Hq, total_q]. */
void opp_lb_padded_valid_lse(const opp_lb_t *lb, const opp_lb_padded_t *pad,
                             const float *lse_padded, float *lse);

/* The poison bit pattern of one element for dtype (finite: large value whose
 * sign alternates with index; NaN: quiet NaN). */
void opp_lb_poison_fill(void *dst, size_t count, opp_dtype_t dtype, opp_lb_poison_t poison);

#endif /* OPP_HARNESS_LOGICAL_BATCH_H */
