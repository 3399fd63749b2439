/*
 * attention24_check.c - validation of the CPU Attention-24 reference's
 * descriptor (opp_ref_attention24_desc_t) and the attn_mask broadcasting
 * rule it implies: mask dims right-aligned against [B, Hq, S_q, M], each of
 * the leading dims 1 or equal to its target, M <= P + S_kv (keys >= M are
 * masked: ONNX pads a short mask with False / -inf).
 */
#include <math.h>
#include <string.h>

#include "lib/internal/check.h"
#include "reference/attention24_internal.h"

void opp_ref_attention24_desc_init(opp_ref_attention24_desc_t *desc) {
    if (desc != NULL) {
        memset(desc, 0, sizeof(*desc));
        desc->input_rank = 4;
    }
}

void opp_ref_attention24_sizes(const opp_ref_attention24_desc_t *a,
                               opp_ref_attention24_sizes_t *s) {
    const size_t B = (size_t)a->batch, hq = (size_t)a->q_num_heads, hkv = (size_t)a->kv_num_heads;
    const size_t sq = (size_t)a->q_seqlen, skv = (size_t)a->kv_seqlen, P = (size_t)a->past_seqlen;
    const size_t d = (size_t)a->head_size, dv = (size_t)a->v_head_size, T = P + skv;
    memset(s, 0, sizeof(*s));
    s->q = B * hq * sq * d;
    s->k = B * hkv * skv * d;
    s->v = B * hkv * skv * dv;
    if (a->mask_dtype != OPP_DTYPE_UNDEFINED) {
        s->mask = 1;
        for (int i = 0; i < a->mask_rank; ++i) {
            s->mask *= (size_t)a->mask_dims[i];
        }
    }
    s->past_key = a->has_past ? B * hkv * P * d : 0;
    s->past_value = a->has_past ? B * hkv * P * dv : 0;
    s->y = B * hq * sq * dv;
    s->present_key = B * hkv * T * d;
    s->present_value = B * hkv * T * dv;
    s->qk = B * hq * sq * T;
}

int64_t opp__a24_mask_index(const opp_ref_attention24_desc_t *a, int64_t b, int64_t h, int64_t t,
                            int64_t j) {
    const int64_t coord[4] = {b, h, t, j};
    int64_t index = 0;
    for (int32_t i = 0; i < a->mask_rank; ++i) {
        const int32_t axis = 4 - a->mask_rank + i; /* right-aligned */
        const int64_t dim = a->mask_dims[i];
        index = index * dim + (dim == 1 && axis != 3 ? 0 : coord[axis]);
    }
    return index;
}

static opp_status_t check_mask(const opp_ref_attention24_desc_t *a) {
    if (a->mask_dtype == OPP_DTYPE_UNDEFINED) {
        return OPP_STATUS_SUCCESS;
    }
    OPP_RETURN_IF(a->mask_dtype != OPP_DTYPE_BOOL_ && a->mask_dtype != a->dtype,
                  OPP_STATUS_BAD_PARAM_MASK,
                  "attn_mask dtype = %s must be bool or the dtype of Q (%s)",
                  opp_dtype_name(a->mask_dtype), opp_dtype_name(a->dtype));
    OPP_RETURN_IF(a->mask_rank < 1 || a->mask_rank > 4, OPP_STATUS_BAD_PARAM_MASK,
                  "attn_mask rank = %d must be 1..4", (int)a->mask_rank);
    const int64_t total = (int64_t)a->past_seqlen + a->kv_seqlen;
    const int64_t target[3] = {a->batch, a->q_num_heads, a->q_seqlen};
    static const char *const names[3] = {"batch", "q_num_heads", "q_sequence_length"};
    for (int32_t i = 0; i < a->mask_rank; ++i) {
        const int32_t axis = 4 - a->mask_rank + i;
        const int64_t dim = a->mask_dims[i];
        if (axis == 3) {
            OPP_RETURN_IF(dim < 0 || dim > total, OPP_STATUS_BAD_PARAM_MASK,
                          "attn_mask dims[%d] = %lld must be 0..total_sequence_length = %lld",
                          (int)i, (long long)dim, (long long)total);
        } else {
            OPP_RETURN_IF(dim != 1 && dim != target[axis], OPP_STATUS_BAD_PARAM_MASK,
                          "attn_mask dims[%d] = %lld does not broadcast to %s = %lld", (int)i,
                          (long long)dim, names[axis], (long long)target[axis]);
        }
    }
    return OPP_STATUS_SUCCESS;
}

opp_status_t opp_ref_attention24_check(const opp_ref_attention24_desc_t *a) {
    OPP_RETURN_IF(a == NULL, OPP_STATUS_BAD_PARAM_NULL_POINTER, "desc is NULL");
    OPP_RETURN_IF(a->dtype == OPP_DTYPE_UNDEFINED, OPP_STATUS_BAD_PARAM_DTYPE,
                  "dtype = 0 (undefined) is not set");
    OPP_RETURN_IF((int)a->dtype < 1 || (int)a->dtype > 28, OPP_STATUS_BAD_PARAM_DTYPE,
                  "dtype = %d is not an ONNX element type", (int)a->dtype);
    OPP_RETURN_IF(a->dtype != OPP_DTYPE_F32 && a->dtype != OPP_DTYPE_F16 &&
                      a->dtype != OPP_DTYPE_BF16,
                  OPP_STATUS_NOT_SUPPORTED_DTYPE,
                  "dtype = %s is not supported (f32, f16, bf16 are)", opp_dtype_name(a->dtype));
    OPP_RETURN_IF(a->input_rank != 3 && a->input_rank != 4, OPP_STATUS_BAD_PARAM_SHAPE,
                  "input_rank = %d must be 3 or 4", (int)a->input_rank);
    OPP_RETURN_IF(a->batch < 1, OPP_STATUS_BAD_PARAM_BATCH, "batch = %d must be >= 1",
                  (int)a->batch);
    OPP_RETURN_IF(a->q_num_heads < 1, OPP_STATUS_BAD_PARAM_NUM_HEADS,
                  "q_num_heads = %d must be >= 1", (int)a->q_num_heads);
    OPP_RETURN_IF(a->kv_num_heads < 1, OPP_STATUS_BAD_PARAM_KV_NUM_HEADS,
                  "kv_num_heads = %d must be >= 1", (int)a->kv_num_heads);
    OPP_RETURN_IF(a->q_num_heads % a->kv_num_heads != 0, OPP_STATUS_BAD_PARAM_KV_HEADS_NOT_DIVIDING,
                  "q_num_heads = %d is not a multiple of kv_num_heads = %d", (int)a->q_num_heads,
                  (int)a->kv_num_heads);
    OPP_RETURN_IF(a->q_seqlen < 0 || a->kv_seqlen < 0 || a->past_seqlen < 0,
                  OPP_STATUS_BAD_PARAM_SHAPE,
                  "sequence lengths must be >= 0 (q %d, kv %d, past %d)", (int)a->q_seqlen,
                  (int)a->kv_seqlen, (int)a->past_seqlen);
    OPP_RETURN_IF(a->has_past != 0 && a->has_past != 1, OPP_STATUS_BAD_PARAM_PAST,
                  "has_past = %d must be 0 or 1", (int)a->has_past);
    OPP_RETURN_IF(!a->has_past && a->past_seqlen != 0, OPP_STATUS_BAD_PARAM_PAST,
                  "past_seqlen = %d without past_key/past_value", (int)a->past_seqlen);
    OPP_RETURN_IF(a->head_size < 1, OPP_STATUS_BAD_PARAM_HEAD_SIZE, "head_size = %d must be >= 1",
                  (int)a->head_size);
    OPP_RETURN_IF(a->v_head_size < 1, OPP_STATUS_BAD_PARAM_V_HEAD_SIZE,
                  "v_head_size = %d must be >= 1", (int)a->v_head_size);
    OPP_RETURN_IF(!(a->scale >= 0.0f) || isinf(a->scale), OPP_STATUS_BAD_PARAM_SCALE,
                  "scale = %g must be finite and >= 0 (0 selects 1/sqrt(head_size))",
                  (double)a->scale);
    OPP_RETURN_IF(!(a->softcap >= 0.0f) || isinf(a->softcap), OPP_STATUS_BAD_PARAM_SOFTCAP,
                  "softcap = %g must be finite and >= 0 (0 is off)", (double)a->softcap);
    OPP_RETURN_IF(a->is_causal != 0 && a->is_causal != 1, OPP_STATUS_BAD_PARAM_IS_CAUSAL,
                  "is_causal = %d must be 0 or 1", (int)a->is_causal);
    OPP_RETURN_IF(a->qk_matmul_output_mode < 0 || a->qk_matmul_output_mode > 3,
                  OPP_STATUS_BAD_PARAM_QK_MATMUL_OUTPUT_MODE,
                  "qk_matmul_output_mode = %d must be 0..3", (int)a->qk_matmul_output_mode);
    const int32_t sp = a->softmax_precision;
    OPP_RETURN_IF(sp != 0 && sp != OPP_DTYPE_F32 && sp != OPP_DTYPE_F16 && sp != OPP_DTYPE_F64 &&
                      sp != OPP_DTYPE_BF16,
                  OPP_STATUS_BAD_PARAM_SOFTMAX_PRECISION,
                  "softmax_precision = %d must be FLOAT (1), FLOAT16 (10), DOUBLE (11) or "
                  "BFLOAT16 (16)",
                  (int)sp);
    OPP_RETURN_IF(a->has_nonpad != 0 && a->has_nonpad != 1, OPP_STATUS_BAD_PARAM_NONPAD,
                  "has_nonpad = %d must be 0 or 1", (int)a->has_nonpad);
    OPP_RETURN_IF(a->has_nonpad && a->has_past, OPP_STATUS_BAD_PARAM_NONPAD,
                  "nonpad_kv_seqlen cannot be combined with past_key/past_value");
    return check_mask(a);
}

opp_status_t opp__a24_check_pointers(const opp_ref_attention24_desc_t *a,
                                     const opp_ref_attention24_tensors_t *t) {
    OPP_RETURN_IF(t == NULL, OPP_STATUS_BAD_PARAM_NULL_POINTER, "tensors is NULL");
    OPP_RETURN_IF(t->q == NULL || t->k == NULL || t->v == NULL || t->y == NULL,
                  OPP_STATUS_BAD_PARAM_NULL_POINTER, "Q, K, V and Y are required (%s is NULL)",
                  t->q == NULL   ? "Q"
                  : t->k == NULL ? "K"
                  : t->v == NULL ? "V"
                                 : "Y");
    OPP_RETURN_IF((a->mask_dtype != OPP_DTYPE_UNDEFINED) != (t->attn_mask != NULL),
                  OPP_STATUS_BAD_PARAM_NULL_POINTER, "attn_mask is %s but mask_dtype = %s",
                  t->attn_mask == NULL ? "NULL" : "given", opp_dtype_name(a->mask_dtype));
    OPP_RETURN_IF(a->has_past && (t->past_key == NULL || t->past_value == NULL),
                  OPP_STATUS_BAD_PARAM_PAST, "has_past = 1 but past_%s is NULL",
                  t->past_key == NULL ? "key" : "value");
    OPP_RETURN_IF(!a->has_past && (t->past_key != NULL || t->past_value != NULL),
                  OPP_STATUS_BAD_PARAM_PAST, "past_key/past_value given but has_past = 0");
    OPP_RETURN_IF(a->has_nonpad != (t->nonpad_kv_seqlen != NULL), OPP_STATUS_BAD_PARAM_NONPAD,
                  "nonpad_kv_seqlen is %s but has_nonpad = %d",
                  t->nonpad_kv_seqlen == NULL ? "NULL" : "given", (int)a->has_nonpad);
    return OPP_STATUS_SUCCESS;
}
