/*
 * naive_model.h - an INDEPENDENT, deliberately plain model of ONNX
 * Attention-24 (onnx 1.23 reference, onnx/reference/ops/op_attention.py) in
 * long double, used by the reference property tests as a second opinion on
 * the CPU references' semantics (including what both references share).
 *
 * It shares no code with reference/: only elements are loaded and stored
 * through numerics/fp_convert.h. It follows the Python source step by
 * step on materialised 4D arrays:
 *   3D inputs reshaped/transposed to [B, H, S, D]; present_* = concat(past, new)
 *   along the sequence; the mask padded to T = P + S_kv with False / -inf;
 *   attn_bias = causal ? (mask as 0/-inf or float) + causal(offset) : 0 + mask,
 *   then + padding (nonpad); K/V heads np.repeat-ed (interleaved) to Hq;
 *   qk = (Q*s)(K*s)^T with s = sqrt(scale); softcap; qk + bias; the ONNX
 *   _softmax (safe max, sum 0 -> 1); rows whose bias is all -inf -> 0;
 *   Y = P V, transposed back for 3D.
 * Deliberate differences from the Python reference, as the project defines
 * its semantics (DESIGN.md §2.3, §3):
 *   - math in long double with libm expl/tanhl/sqrtl, rounded once at the end
 *     (ONNX casts sqrt(scale) and intermediates to the input dtype);
 *   - keys j >= nonpad_kv_seqlen[b] never enter the softmax or Y (ONNX computes
 *     them and masks them; identical for finite inputs);
 *   - softmax_precision is ignored (the project computes in double always);
 *   - causal with a mask whose query axis broadcasts (rank 1, or dim 1 there)
 *     applies the causal rule per query row, as the spec means it: onnx
 *     1.23.2's _apply_causal takes the query length from the mask's shape, so
 *     it applies row 0's causal frontier to every row (rank >= 2) or raises
 *     ValueError (rank 1).
 * Checked once against onnx 1.23.2's _compute_attention on float64 copies of
 * ~2400 random f32 cases (every option): |diff| <= 1.1e-15 * max(1, |value|).
 * Shapes (4D names): Q [B, Hq, S_q, D], K [B, Hkv, S_kv, D], V [B, Hkv, S_kv, Dv]
 * or 3D Q [B, S_q, Hq*D] ...; past_* [B, Hkv, P, D|Dv]; mask rank 1..4, last
 * dim M <= T.
 */
#ifndef OPP_HARNESS_NAIVE_MODEL_H
#define OPP_HARNESS_NAIVE_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "lib/oppacked.h"

/* ONNX TensorProto.BOOL: a mask of 1-byte booleans. */
#define OPP_NAIVE_BOOL 9

/* One call of the operator, as ONNX sees it (host pointers). */
typedef struct opp_naive_case {
    opp_dtype_t dtype; /* storage of Q, K, V, past_* (F32, F16, BF16) */
    int input_rank;    /* 3 or 4 */
    int64_t batch, q_num_heads, kv_num_heads;
    int64_t q_seqlen, kv_seqlen, head_size, v_head_size;
    const void *q, *k, *v;
    const void *past_key, *past_value; /* NULL: no past; else [B, Hkv, P, D|Dv] */
    int64_t past_seqlen;               /* P */
    const void *attn_mask;             /* NULL: no mask */
    int mask_dtype;                    /* OPP_NAIVE_BOOL or a float dtype */
    int mask_rank;                     /* 1..4 */
    int64_t mask_dims[4];
    const int64_t *nonpad_kv_seqlen; /* NULL: absent; else [B] */
    int has_scale;                   /* 0: scale = 1/sqrt(D) */
    float scale;
    int is_causal;
    float softcap; /* 0: absent */
    int qk_matmul_output_mode;
} opp_naive_case_t;

/* Outputs in long double (before any rounding). */
typedef struct opp_naive_result {
    long double *y;             /* ONNX layout: [B, Hq, S_q, Dv] or 3D [B, S_q, Hq*Dv] */
    long double *qk;            /* [B, Hq, S_q, T], per qk_matmul_output_mode */
    long double *present_key;   /* [B, Hkv, T, D] */
    long double *present_value; /* [B, Hkv, T, Dv] */
    size_t y_elems, qk_elems, present_key_elems, present_value_elems;
} opp_naive_result_t;

/* Evaluates the case. @return : 0, or -1 on allocation failure. */
int opp_naive_attention24(const opp_naive_case_t *c, opp_naive_result_t *r);

void opp_naive_result_free(opp_naive_result_t *r);

/* Rounds n values once (via double) into dst, an array of dtype. */
void opp_naive_round(const long double *src, size_t n, opp_dtype_t dtype, void *dst);

/* Rounds n values into a new malloc'ed array of dtype; NULL if out of memory. */
void *opp_naive_rounded(const long double *src, size_t n, opp_dtype_t dtype);

#endif /* OPP_HARNESS_NAIVE_MODEL_H */
