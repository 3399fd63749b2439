/*
 * opp_reference.h - the exact CPU references (slow, simple, trusted).
 *
 * Two references, both computing in double in the fixed order of
 * numerics/exact_order.h and rounding once to the output dtype:
 *
 *  - opp_ref_packed_attention(): PackedVarlenAttention (DESIGN.md §2.1-2.2)
 *    on the packed layout, described by the library's own descriptor.
 *  - opp_ref_attention24(): the full padded ONNX Attention-24 operator
 *    (DESIGN.md §2.3): 3D and 4D inputs, bool and float attn_mask with
 *    broadcasting and short masks, past_key/past_value with present_*
 *    outputs, nonpad_kv_seqlen, the three causal offsets, qk_matmul_output
 *    modes 0-3 and softmax_precision.
 *
 * All pointers are HOST pointers. Both allocate host scratch with malloc and
 * return OPP_STATUS_HOST_ALLOC_FAILED if that fails. On the same logical
 * batch the two agree bit for bit on the valid rows (the L0 contract).
 *
 * Threads: both spread their query rows over opp_ref_threads() POSIX
 * threads (default: the online CPUs; the environment variable
 * OPP_REF_THREADS or opp_ref_set_threads() override it). Every output
 * element is computed by one thread in the fixed order, so the result is
 * bit-identical for any thread count. OPP_REF_SIMD=0 in the environment
 * makes them use portable C instead of AVX2+FMA kernels (same bits; a
 * diagnostic). The calls themselves are reentrant.
 */
#ifndef OPP_REFERENCE_H
#define OPP_REFERENCE_H

#include <stddef.h>
#include <stdint.h>

#include "lib/oppacked.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Upper bound of the thread count (larger requests are clamped to it). */
#define OPP_REF_MAX_THREADS 1024

/*! opp_ref_set_threads() :
 * Sets the number of threads the CPU references use from now on, process
 * wide: n >= 1 uses n (at most OPP_REF_MAX_THREADS); n <= 0 returns to the
 * default (OPP_REF_THREADS if it is set to an integer >= 1, else the number
 * of online CPUs). Safe to call from any thread; a reference call already
 * running keeps its count. */
void opp_ref_set_threads(int n);

/*! opp_ref_threads() :
 * @return : the number of threads the next reference call uses at most
 *           (>= 1; a call with fewer row blocks than that uses fewer): the
 *           value of opp_ref_set_threads(), else OPP_REF_THREADS, else
 *           sysconf(_SC_NPROCESSORS_ONLN). */
int opp_ref_threads(void);

/*! opp_ref_packed_attention() :
 * out = PackedVarlenAttention(q, k, v) for the packed layout of desc.
 * q   : host, [total_q, num_heads, head_size] (row stride desc->q_row_stride)
 * k   : host, [total_kv, kv_num_heads, head_size]
 * v   : host, [total_kv, kv_num_heads, v_head_size]
 * out : host, [total_q, num_heads, v_head_size]; every element of every
 *       row is written (rows of a sequence with no visible key, and rows
 *       past cu_seqlens_q[batch] <= total_q: zeros)
 * cu_seqlens_q / cu_seqlens_kv : host, int32 [batch + 1]
 * The descriptor and cu_seqlens are validated as by opp_varlen_check().
 * desc->algo is ignored: the reference is the exact algorithm.
 * @return : OPP_STATUS_SUCCESS, a BAD_PARAM_* / NOT_SUPPORTED_* status from
 *           validation, or OPP_STATUS_HOST_ALLOC_FAILED. */
opp_status_t opp_ref_packed_attention(const opp_attention_desc_t *desc, const int32_t *cu_seqlens_q,
                                      const int32_t *cu_seqlens_kv, const void *q, const void *k,
                                      const void *v, void *out);

/* ONNX Attention-24 attributes and shapes. Dims are those of the 4D form:
 *   Q [B, Hq, S_q, D], K [B, Hkv, S_kv, D], V [B, Hkv, S_kv, Dv],
 *   Y [B, Hq, S_q, Dv]; with input_rank 3 the tensors are
 *   Q [B, S_q, Hq*D], K [B, S_kv, Hkv*D], V [B, S_kv, Hkv*Dv], Y [B, S_q, Hq*Dv].
 *   past_key [B, Hkv, P, D], past_value [B, Hkv, P, Dv] (always 4D);
 *   present_key [B, Hkv, P+S_kv, D], present_value [B, Hkv, P+S_kv, Dv];
 *   qk_matmul_output [B, Hq, S_q, P+S_kv]. */
typedef struct opp_ref_attention24_desc {
    opp_dtype_t dtype;             /* of Q, K, V, past_*, Y, present_*, qk output */
    int32_t input_rank;            /* 3 or 4 */
    int32_t batch;                 /* B >= 1 */
    int32_t q_num_heads;           /* Hq >= 1 */
    int32_t kv_num_heads;          /* Hkv >= 1, divides Hq */
    int32_t q_seqlen;              /* S_q >= 0 */
    int32_t kv_seqlen;             /* S_kv >= 0: rows of K and V */
    int32_t past_seqlen;           /* P >= 0: rows of past_*; only with has_past */
    int32_t has_past;              /* 0 or 1: past_key and past_value given */
    int32_t head_size;             /* D >= 1 */
    int32_t v_head_size;           /* Dv >= 1 */
    float scale;                   /* > 0; 0 means 1/sqrt(D) (attribute absent) */
    int32_t is_causal;             /* 0 or 1 */
    float softcap;                 /* >= 0; 0 is off */
    int32_t qk_matmul_output_mode; /* 0..3, used when qk_matmul_output != NULL */
    int32_t softmax_precision;     /* 0 (absent) or ONNX 1, 10, 11, 16: computed in
                                      double regardless, the widest of them */
    opp_dtype_t mask_dtype;        /* UNDEFINED: no mask; 9 (BOOL, 1 byte) or dtype */
    int32_t mask_rank;             /* 1..4, numpy broadcasting to [B, Hq, S_q, *] */
    int64_t mask_dims[4];          /* last dim M <= P+S_kv; keys >= M are masked */
    int32_t has_nonpad;            /* 0 or 1: nonpad_kv_seqlen given (no past) */
} opp_ref_attention24_desc_t;

#define OPP_DTYPE_BOOL_ ((opp_dtype_t)9)

typedef struct opp_ref_attention24_tensors {
    const void *q, *k, *v;             /* required */
    const void *attn_mask;             /* iff mask_dtype != UNDEFINED */
    const void *past_key, *past_value; /* iff has_past */
    const int64_t *nonpad_kv_seqlen;   /* [B], iff has_nonpad; 0 <= nonpad <= S_kv */
    void *y;                           /* required */
    void *present_key, *present_value; /* optional (NULL: not produced) */
    void *qk_matmul_output;            /* optional (NULL: not produced) */
} opp_ref_attention24_tensors_t;

/*! opp_ref_attention24_desc_init() : zeros, dtype UNDEFINED, no mask. */
void opp_ref_attention24_desc_init(opp_ref_attention24_desc_t *desc);

/*! opp_ref_attention24_check() :
 * Validates desc alone (shapes, attributes, mask broadcasting).
 * @return : OPP_STATUS_SUCCESS or the first BAD_PARAM_* / NOT_SUPPORTED_*. */
opp_status_t opp_ref_attention24_check(const opp_ref_attention24_desc_t *desc);

/* Element counts of every tensor desc describes (mask: elements, 1 byte
 * each for bool; 0 for an absent mask or past). Q [B, Hq, S_q, D] (or 3D),
 * K [B, Hkv, S_kv, D], V [B, Hkv, S_kv, Dv], past_* [B, Hkv, P, D|Dv],
 * Y [B, Hq, S_q, Dv], present_* [B, Hkv, P+S_kv, D|Dv], qk [B, Hq, S_q, P+S_kv]. */
typedef struct opp_ref_attention24_sizes {
    size_t q, k, v, mask, past_key, past_value, y, present_key, present_value, qk;
} opp_ref_attention24_sizes_t;

/*! opp_ref_attention24_sizes() : the element counts of desc's tensors (desc
 * should pass opp_ref_attention24_check(); nothing is validated here). */
void opp_ref_attention24_sizes(const opp_ref_attention24_desc_t *desc,
                               opp_ref_attention24_sizes_t *sizes);

/*! opp_ref_attention24() :
 * The ONNX Attention-24 operator on host tensors, exactly as onnx 1.23's
 * reference evaluates a float64 copy with one final rounding, except that
 * keys at j >= nonpad_kv_seqlen[b] never enter Y or the softmax (padding is
 * never read for them; qk_matmul_output modes 0-2 are the literal products
 * over every key column, as ONNX defines them).
 * @return : OPP_STATUS_SUCCESS, BAD_PARAM_* (desc, NULL tensors, nonpad values
 *           out of range), or OPP_STATUS_HOST_ALLOC_FAILED. */
opp_status_t opp_ref_attention24(const opp_ref_attention24_desc_t *desc,
                                 const opp_ref_attention24_tensors_t *t);

#ifdef __cplusplus
}
#endif
#endif /* OPP_REFERENCE_H */
