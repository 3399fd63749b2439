/*
 * attention_desc.c - defaults and host-side validation of
 * opp_attention_desc_t (pure C, never touches a GPU).
 *
 * opp_attention_claim_check() checks what a runtime knows at claim time
 * (dtypes, heads, head sizes, scale, softcap, is_causal, algo);
 * opp_attention_desc_check() adds the shape of the batch (batch, totals,
 * max_seqlens, row strides). Checks run in a fixed order and the first
 * failure is returned, with a message naming the field and its value.
 * Dims: B = batch, Hq = num_heads, Hkv = kv_num_heads, D = head_size,
 * Dv = v_head_size; row widths q: Hq*D, k: Hkv*D, v: Hkv*Dv, out: Hq*Dv
 * (elements). The descriptor is const and never modified.
 */
#include <inttypes.h>
#include <math.h>

#include "lib/internal/check.h"
#include "lib/internal/dtype_check.h"

// --- field helpers

/* kv_num_heads with 0 meaning num_heads. */
static int64_t effective_kv_heads(const opp_attention_desc_t *desc) {
    return desc->kv_num_heads == 0 ? desc->num_heads : desc->kv_num_heads;
}

/* v_head_size with 0 meaning head_size. */
static int64_t effective_v_head_size(const opp_attention_desc_t *desc) {
    return desc->v_head_size == 0 ? desc->head_size : desc->v_head_size;
}

static opp_status_t check_dtype_known(const char *field, opp_dtype_t dtype) {
    OPP_RETURN_IF(dtype == OPP_DTYPE_UNDEFINED, OPP_STATUS_BAD_PARAM_DTYPE,
                  "%s = 0 (undefined) is not set", field);
    OPP_RETURN_IF(!opp__dtype_is_onnx(dtype), OPP_STATUS_BAD_PARAM_DTYPE,
                  "%s = %d is not an ONNX element type", field, (int)dtype);
    return OPP_STATUS_SUCCESS;
}

static opp_status_t check_dtype_matches_q(const char *field, opp_dtype_t dtype,
                                          opp_dtype_t q_dtype) {
    OPP_RETURN_IF(dtype != q_dtype, OPP_STATUS_BAD_PARAM_DTYPE_MISMATCH,
                  "%s = %s differs from q_dtype = %s", field, opp_dtype_name(dtype),
                  opp_dtype_name(q_dtype));
    return OPP_STATUS_SUCCESS;
}

static opp_status_t check_dtypes(const opp_attention_desc_t *desc) {
    OPP_TRY(check_dtype_known("q_dtype", desc->q_dtype));
    OPP_TRY(check_dtype_known("k_dtype", desc->k_dtype));
    OPP_TRY(check_dtype_known("v_dtype", desc->v_dtype));
    OPP_TRY(check_dtype_known("out_dtype", desc->out_dtype));
    OPP_TRY(check_dtype_matches_q("k_dtype", desc->k_dtype, desc->q_dtype));
    OPP_TRY(check_dtype_matches_q("v_dtype", desc->v_dtype, desc->q_dtype));
    OPP_TRY(check_dtype_matches_q("out_dtype", desc->out_dtype, desc->q_dtype));
    OPP_RETURN_IF(!opp__dtype_is_supported(desc->q_dtype), OPP_STATUS_NOT_SUPPORTED_DTYPE,
                  "q_dtype = %s is not supported (f32, f16, bf16 are)",
                  opp_dtype_name(desc->q_dtype));
    return OPP_STATUS_SUCCESS;
}

static opp_status_t check_heads(const opp_attention_desc_t *desc) {
    OPP_RETURN_IF(desc->num_heads <= 0, OPP_STATUS_BAD_PARAM_NUM_HEADS,
                  "num_heads = %" PRId32 " must be >= 1", desc->num_heads);
    OPP_RETURN_IF(desc->kv_num_heads < 0, OPP_STATUS_BAD_PARAM_KV_NUM_HEADS,
                  "kv_num_heads = %" PRId32 " must be >= 0 (0 means num_heads)",
                  desc->kv_num_heads);
    OPP_RETURN_IF(desc->num_heads % effective_kv_heads(desc) != 0,
                  OPP_STATUS_BAD_PARAM_KV_HEADS_NOT_DIVIDING,
                  "num_heads = %" PRId32 " is not a multiple of kv_num_heads = %" PRId32,
                  desc->num_heads, desc->kv_num_heads);
    return OPP_STATUS_SUCCESS;
}

static opp_status_t check_head_sizes(const opp_attention_desc_t *desc) {
    OPP_RETURN_IF(desc->head_size <= 0, OPP_STATUS_BAD_PARAM_HEAD_SIZE,
                  "head_size = %" PRId32 " must be >= 1", desc->head_size);
    OPP_RETURN_IF(desc->v_head_size < 0, OPP_STATUS_BAD_PARAM_V_HEAD_SIZE,
                  "v_head_size = %" PRId32 " must be >= 0 (0 means head_size)", desc->v_head_size);
    OPP_RETURN_IF(desc->head_size > OPP_MAX_HEAD_SIZE, OPP_STATUS_NOT_SUPPORTED_HEAD_SIZE,
                  "head_size = %" PRId32 " is above the supported maximum %d", desc->head_size,
                  OPP_MAX_HEAD_SIZE);
    OPP_RETURN_IF(desc->v_head_size > OPP_MAX_HEAD_SIZE, OPP_STATUS_NOT_SUPPORTED_HEAD_SIZE,
                  "v_head_size = %" PRId32 " is above the supported maximum %d", desc->v_head_size,
                  OPP_MAX_HEAD_SIZE);
    return OPP_STATUS_SUCCESS;
}

static opp_status_t check_options(const opp_attention_desc_t *desc) {
    /* -0.0 < 0 is false, so -0.0 passes as 0 (the default scale / no softcap). */
    OPP_RETURN_IF(!isfinite(desc->scale) || desc->scale < 0.0f, OPP_STATUS_BAD_PARAM_SCALE,
                  "scale = %g must be finite and >= 0 (0 selects 1/sqrt(head_size))",
                  (double)desc->scale);
    OPP_RETURN_IF(!isfinite(desc->softcap) || desc->softcap < 0.0f, OPP_STATUS_BAD_PARAM_SOFTCAP,
                  "softcap = %g must be finite and >= 0 (0 turns it off)", (double)desc->softcap);
    OPP_RETURN_IF(desc->is_causal != 0 && desc->is_causal != 1, OPP_STATUS_BAD_PARAM_IS_CAUSAL,
                  "is_causal = %" PRId32 " must be 0 or 1", desc->is_causal);
    OPP_RETURN_IF(desc->algo != OPP_ALGO_EXACT && desc->algo != OPP_ALGO_FAST,
                  OPP_STATUS_BAD_PARAM_ALGO,
                  "algo = %d is neither OPP_ALGO_EXACT (0) nor OPP_ALGO_FAST (1)", (int)desc->algo);
    OPP_RETURN_IF(desc->algo == OPP_ALGO_FAST, OPP_STATUS_NOT_SUPPORTED_ALGO,
                  "algo = FAST is not available in this build");
    return OPP_STATUS_SUCCESS;
}

// --- batch shape helpers

static opp_status_t check_total(const char *field, int64_t total) {
    OPP_RETURN_IF(total < 0, OPP_STATUS_BAD_PARAM_TOTAL, "%s = %" PRId64 " must be >= 0", field,
                  total);
    OPP_RETURN_IF(total > INT32_MAX, OPP_STATUS_BAD_PARAM_TOTAL,
                  "%s = %" PRId64 " exceeds INT32_MAX (cu_seqlens are int32)", field, total);
    return OPP_STATUS_SUCCESS;
}

/* max_seqlen must bound every sequence of a batch whose lengths sum to total:
 * 0 <= max_seqlen <= total and batch * max_seqlen >= total (the average). */
static opp_status_t check_max_seqlen(const char *side, int32_t max_seqlen, int64_t total,
                                     int32_t batch) {
    OPP_RETURN_IF(max_seqlen < 0, OPP_STATUS_BAD_PARAM_MAX_SEQLEN,
                  "max_seqlen_%s = %" PRId32 " must be >= 0", side, max_seqlen);
    OPP_RETURN_IF(max_seqlen > total, OPP_STATUS_BAD_PARAM_MAX_SEQLEN,
                  "max_seqlen_%s = %" PRId32 " is above total_%s = %" PRId64, side, max_seqlen,
                  side, total);
    OPP_RETURN_IF(total > 0 && (int64_t)max_seqlen * batch < total, OPP_STATUS_BAD_PARAM_MAX_SEQLEN,
                  "max_seqlen_%s = %" PRId32 " is below the average sequence length: batch * "
                  "max_seqlen_%s = %" PRId64 " < total_%s = %" PRId64,
                  side, max_seqlen, side, (int64_t)max_seqlen * batch, side, total);
    return OPP_STATUS_SUCCESS;
}

/* Checks one tensor's row stride against its dense row width (elements) and
 * that its byte extent, ((rows - 1) * stride + width) * elem_bytes, fits in
 * int64 so the run path can form every address without overflow. */
static opp_status_t check_stride(const char *tensor, int64_t stride, const char *width_text,
                                 int64_t width, int64_t rows, int64_t elem_bytes) {
    OPP_RETURN_IF(stride < 0, OPP_STATUS_BAD_PARAM_STRIDE,
                  "%s_row_stride = %" PRId64 " must be >= 0 (0 means dense)", tensor, stride);
    OPP_RETURN_IF(stride > 0 && stride < width, OPP_STATUS_BAD_PARAM_STRIDE,
                  "%s_row_stride = %" PRId64 " is smaller than %s = %" PRId64, tensor, stride,
                  width_text, width);
    if (rows <= 1) {
        return OPP_STATUS_SUCCESS; /* extent = width * elem_bytes < 2^31 * 2^8 * 8 */
    }
    const int64_t step = stride == 0 ? width : stride; /* 0 means dense */
    const int64_t limit = INT64_MAX / elem_bytes;      /* largest extent in elements */
    OPP_RETURN_IF(step > (limit - width) / (rows - 1), OPP_STATUS_BAD_PARAM_STRIDE,
                  "%s_row_stride = %" PRId64 " overflows: (%" PRId64 " - 1) * %" PRId64
                  " + %" PRId64 " elements of %" PRId64 " bytes exceed INT64_MAX bytes",
                  tensor, stride, rows, step, width, elem_bytes);
    return OPP_STATUS_SUCCESS;
}

static opp_status_t check_strides(const opp_attention_desc_t *desc) {
    const int64_t hq = desc->num_heads, hkv = effective_kv_heads(desc);
    const int64_t d = desc->head_size, dv = effective_v_head_size(desc);
    const int64_t bytes = (int64_t)opp_dtype_size(desc->q_dtype);
    OPP_TRY(check_stride("q", desc->q_row_stride, "num_heads * head_size", hq * d, desc->total_q,
                         bytes));
    OPP_TRY(check_stride("k", desc->k_row_stride, "kv_num_heads * head_size", hkv * d,
                         desc->total_kv, bytes));
    OPP_TRY(check_stride("v", desc->v_row_stride, "kv_num_heads * v_head_size", hkv * dv,
                         desc->total_kv, bytes));
    OPP_TRY(check_stride("out", desc->out_row_stride, "num_heads * v_head_size", hq * dv,
                         desc->total_q, bytes));
    return OPP_STATUS_SUCCESS;
}

// --- public entry

void opp_attention_desc_init(opp_attention_desc_t *desc) {
    if (desc == NULL) {
        return;
    }
    *desc = (opp_attention_desc_t){
        .q_dtype = OPP_DTYPE_UNDEFINED,
        .k_dtype = OPP_DTYPE_UNDEFINED,
        .v_dtype = OPP_DTYPE_UNDEFINED,
        .out_dtype = OPP_DTYPE_UNDEFINED,
        .scale = 0.0f,
        .is_causal = 0,
        .softcap = 0.0f,
        .algo = OPP_ALGO_EXACT,
    };
}

opp_status_t opp_attention_claim_check(const opp_attention_desc_t *desc) {
    OPP_RETURN_IF(desc == NULL, OPP_STATUS_BAD_PARAM_NULL_POINTER, "desc is NULL");
    OPP_TRY(check_dtypes(desc));
    OPP_TRY(check_heads(desc));
    OPP_TRY(check_head_sizes(desc));
    OPP_TRY(check_options(desc));
    return OPP_STATUS_SUCCESS;
}

opp_status_t opp_attention_desc_check(const opp_attention_desc_t *desc) {
    OPP_TRY(opp_attention_claim_check(desc));
    OPP_RETURN_IF(desc->batch <= 0, OPP_STATUS_BAD_PARAM_BATCH, "batch = %" PRId32 " must be >= 1",
                  desc->batch);
    OPP_TRY(check_total("total_q", desc->total_q));
    OPP_TRY(check_total("total_kv", desc->total_kv));
    OPP_TRY(check_max_seqlen("q", desc->max_seqlen_q, desc->total_q, desc->batch));
    OPP_TRY(check_max_seqlen("kv", desc->max_seqlen_kv, desc->total_kv, desc->batch));
    OPP_TRY(check_strides(desc));
    return OPP_STATUS_SUCCESS;
}
