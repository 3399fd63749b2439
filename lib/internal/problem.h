/*
 * problem.h - the one internal description of an attention call.
 *
 * Each public descriptor is resolved ONCE into an opp__problem_t (defaults
 * applied, strides in elements for either layout, where per-sequence lengths
 * come from); everything below the public API - the workspace plan, the
 * dispatch table, the device guard and the kernel launchers - takes only the
 * problem. Built by lib/problem.c (attributes) and by the descriptor files
 * (lib/attention_desc.c: packed; lib/attention24_desc.c: Attention-24
 * layout). Host code; tensor pointers are device addresses never
 * dereferenced on the host.
 *
 * Dims: B = batch, Hq = query heads, Hkv = key/value heads, G = Hq / Hkv,
 * D = head size of Q and K, Dv = head size of V and out.
 * Element (sequence b, row i, head h, column c) of a tensor t lives at
 *   t.ptr + base_b + i * t.row + h * t.head + c
 * with base_b = cu_seqlens[b] * t.row (packed) or b * t.batch (padded).
 * LSE element (b, i, h) lives at lse + lse_base_b + h * lse_head + i with
 * lse_base_b = cu_seqlens_q[b] (packed) or b * lse_batch (padded).
 */
#ifndef OPP_INTERNAL_PROBLEM_H
#define OPP_INTERNAL_PROBLEM_H

#include <stddef.h>
#include <stdint.h>

#include "lib/oppacked.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The claim-time fields of either public descriptor, exactly as the caller
 * set them (no defaults applied): the input of opp__attrs_resolve(). */
typedef struct opp__claim_fields {
    opp_dtype_t q_dtype, k_dtype, v_dtype, out_dtype;
    int32_t num_heads, kv_num_heads, head_size, v_head_size;
    float scale;
    int32_t is_causal;
    float softcap;
    opp_algo_t algo;
} opp__claim_fields_t;

/* The claim-time fields of a public descriptor (either kind: both name them
 * alike), as set by the caller. */
#define OPP__CLAIM_FIELDS(desc)                                                                    \
    ((opp__claim_fields_t){(desc)->q_dtype, (desc)->k_dtype, (desc)->v_dtype, (desc)->out_dtype,   \
                           (desc)->num_heads, (desc)->kv_num_heads, (desc)->head_size,             \
                           (desc)->v_head_size, (desc)->scale, (desc)->is_causal, (desc)->softcap, \
                           (desc)->algo})

/* Claim-time facts with every default applied. */
typedef struct opp__attrs {
    opp_algo_t algo;    /* as requested: EXACT, FAST, AUTO or TF32X3 */
    opp_dtype_t dtype;  /* of Q, K, V and out (checked equal) */
    int32_t hq, hkv, g; /* g = hq / hkv */
    int32_t d, dv;
    float scale;         /* as given; 0 selects the default */
    float softmax_scale; /* scale, or 1/sqrt(D) rounded to float (set by bind) */
    double sqrt_scale;   /* the exact path's s, numerics/exact_order.h (set by bind) */
    float softcap;       /* 0: off */
    int32_t is_causal;
} opp__attrs_t;

/* Where per-sequence lengths come from. */
typedef enum opp__layout {
    OPP__LAYOUT_PACKED = 0, /* cu_seqlens_q / cu_seqlens_kv */
    OPP__LAYOUT_PADDED = 1  /* L_q = S_q, L_kv = nonpad_kv_seqlen[b] */
} opp__layout_t;

/* One tensor: device base pointer and element strides (file comment). */
typedef struct opp__tensor {
    const void *ptr;
    int64_t row, head, batch; /* batch is used by the padded layout only */
} opp__tensor_t;

typedef struct opp__problem {
    opp__attrs_t a;
    opp__layout_t layout;
    const char *entry; /* the public function, for messages */
    int32_t batch;
    int32_t max_seqlen_q, max_seqlen_kv;         /* bounds on L_q, L_kv (padded: S_q, S_kv) */
    int32_t q_seqlen, kv_seqlen;                 /* padded: S_q, S_kv; packed: 0 */
    int64_t total_q, total_kv;                   /* packed: the totals; padded: B * S */
    int32_t input_rank;                          /* padded: 3 or 4; packed: 3 */
    opp__tensor_t q, k, v, out;                  /* strides set by the builder; pointers by bind */
    float *lse;                                  /* optional [Hq, total_q] / [B, Hq, S_q] */
    int64_t lse_head, lse_batch;                 /* elements */
    const int32_t *cu_seqlens_q, *cu_seqlens_kv; /* packed: device [B + 1] */
    const int64_t *nonpad;                       /* padded: device [B] */
} opp__problem_t;

/*! opp__claim_fields_check() :
 * Validates the claim-time fields (dtypes, heads, head sizes, scale, softcap,
 * is_causal, algo) in a fixed order and resolves their defaults into *attrs.
 * The one place both public descriptors are checked at claim time.
 * @return : SUCCESS, or the first BAD_PARAM_* / NOT_SUPPORTED_DTYPE /
 *           NOT_SUPPORTED_HEAD_SIZE with a message naming field and value. */
opp_status_t opp__claim_fields_check(const opp__claim_fields_t *f, opp__attrs_t *attrs);

/*! opp__problem_from_desc() : checks a packed descriptor and resolves it
 * (tensor pointers stay NULL): claim-time fields, whether some kernel serves
 * them, the batch shape, whether some kernel serves the whole problem on
 * some GPU - the order of opp_attention_desc_check(), which is this.
 * @return : SUCCESS or the first failure. */
opp_status_t opp__problem_from_desc(const opp_attention_desc_t *desc, opp__problem_t *p);

/*! opp__problem_from_attention24() : the same for the Attention-24 layout
 * descriptor (opp_attention24_desc_check()). @return : SUCCESS or the first
 * failure. */
opp_status_t opp__problem_from_attention24(const opp_attention24_desc_t *desc, opp__problem_t *p);

/*! opp__problem_bind() :
 * Checks and sets the device pointers of a resolved problem: q, k, v, out
 * (16-byte aligned; NULL only for a tensor with no row), lse (optional,
 * 4-byte aligned), and the length arrays of its layout (cu_seqlens: int32
 * aligned, non-NULL; nonpad: int64 aligned, non-NULL). `out_name` is "out"
 * or "y" for messages.
 * @return : SUCCESS, BAD_PARAM_NULL_POINTER or BAD_PARAM_MISALIGNED. */
opp_status_t opp__problem_bind(opp__problem_t *p, const int32_t *cu_seqlens_q,
                               const int32_t *cu_seqlens_kv, const int64_t *nonpad, const void *q,
                               const void *k, const void *v, void *out, const char *out_name,
                               float *lse);

#ifdef __cplusplus
}
#endif
#endif /* OPP_INTERNAL_PROBLEM_H */
