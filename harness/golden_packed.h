/*
 * golden_packed.h - helpers of tests/golden_test.c: cross-check a golden case
 * (testdata/cases/<name>) against its logical_batch.txt sidecar, check the
 * padding poison, and derive the PACKED representation of the logical batch
 * by gathering the valid rows out of the golden's padded tensors (queries at
 * the tail of their block, rows S_q - L_q[b] .. S_q - 1; keys and values
 * rows 0 .. L_kv[b] - 1; 4D [B,H,S,D] or 3D [B,S,H*D] per the sidecar).
 * Every function returns 0 on success and -1 with a message in err.
 */
#ifndef OPP_HARNESS_GOLDEN_PACKED_H
#define OPP_HARNESS_GOLDEN_PACKED_H

#include <stddef.h>
#include <stdint.h>

#include "harness/onnx_attention_case.h"
#include "lib/oppacked.h"

/* The packed representation of a golden case plus its expected output. */
typedef struct golden_packed {
    opp_attention_desc_t desc; /* dense strides */
    int32_t *cu_q, *cu_kv;     /* [batch + 1] */
    void *q, *k, *v;           /* [total_q, Hq, D], [total_kv, Hkv, D], [total_kv, Hkv, Dv] */
    void *want;                /* golden Y's valid rows, [total_q, Hq, Dv] */
    void *out;                 /* for the packed reference, [total_q, Hq, Dv], NaN-filled */
    size_t out_elems;
} golden_packed_t;

/*! The sidecar s agrees with the loaded case c and its mapped descriptor d:
 * name == case_name, dtype, layout, batch, heads, head sizes, scale, is_causal,
 * softcap, S_q = max(1, max L_q), S_kv = max(1, max L_kv), nonpad_kv_seqlen ==
 * lkv, no attn_mask, no past, Y the only output. */
int golden_crosscheck(const opp_onnx_sidecar_t *s, const opp_onnx_case_t *c,
                      const opp_ref_attention24_desc_t *d, const char *case_name, char *err,
                      size_t err_size);

/*! Counts padding elements of Q, K and V that are not the poison pattern
 * (+P at even flat index, -P at odd; q_poison for Q, kv_poison for K and V).
 * @bad    : set to the number of such elements (the first is named in err). */
int golden_check_poison(const opp_onnx_sidecar_t *s, const opp_onnx_case_t *c, size_t *bad,
                        char *err, size_t err_size);

/*! Derives the packed batch from the golden's padded inputs and Y.
 * s and c must have passed golden_crosscheck(). Free with golden_packed_free. */
int golden_packed_derive(const opp_onnx_sidecar_t *s, const opp_onnx_case_t *c, golden_packed_t *p,
                         char *err, size_t err_size);

void golden_packed_free(golden_packed_t *p);

#endif /* OPP_HARNESS_GOLDEN_PACKED_H */
