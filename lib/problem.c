/*
 * problem.c - the claim-time checks shared by both public descriptors
 * (lib/internal/problem.h). Pure host code with no CUDA or libm symbol:
 * the validation-only API links with liboppacked.a alone.
 *
 * opp__claim_fields_check() checks dtypes, heads, head sizes, scale,
 * softcap, is_causal and algo in a fixed order (the first failure is
 * returned, its message naming the field and value) and applies the
 * defaults: kv_num_heads 0 -> num_heads, v_head_size 0 -> head_size,
 * scale 0 -> 1/sqrt(head_size). Whether a kernel exists for the result is
 * the dispatch table's question (lib/dispatch.c), not this file's.
 */
#include <inttypes.h>
#include <math.h> /* isfinite: a macro, no libm symbol */

#include "lib/internal/check.h"
#include "lib/internal/dtype_check.h"
#include "lib/internal/problem.h"

// --- claim-time fields

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

static opp_status_t check_dtypes(const opp__claim_fields_t *f) {
    OPP_TRY(check_dtype_known("q_dtype", f->q_dtype));
    OPP_TRY(check_dtype_known("k_dtype", f->k_dtype));
    OPP_TRY(check_dtype_known("v_dtype", f->v_dtype));
    OPP_TRY(check_dtype_known("out_dtype", f->out_dtype));
    OPP_TRY(check_dtype_matches_q("k_dtype", f->k_dtype, f->q_dtype));
    OPP_TRY(check_dtype_matches_q("v_dtype", f->v_dtype, f->q_dtype));
    OPP_TRY(check_dtype_matches_q("out_dtype", f->out_dtype, f->q_dtype));
    OPP_RETURN_IF(!opp__dtype_is_supported(f->q_dtype), OPP_STATUS_NOT_SUPPORTED_DTYPE,
                  "q_dtype = %s is not supported (f32, f16, bf16 are)", opp_dtype_name(f->q_dtype));
    return OPP_STATUS_SUCCESS;
}

static opp_status_t check_heads(const opp__claim_fields_t *f) {
    OPP_RETURN_IF(f->num_heads <= 0, OPP_STATUS_BAD_PARAM_NUM_HEADS,
                  "num_heads = %" PRId32 " must be >= 1", f->num_heads);
    OPP_RETURN_IF(f->kv_num_heads < 0, OPP_STATUS_BAD_PARAM_KV_NUM_HEADS,
                  "kv_num_heads = %" PRId32 " must be >= 0 (0 means num_heads)", f->kv_num_heads);
    const int32_t hkv = f->kv_num_heads == 0 ? f->num_heads : f->kv_num_heads;
    OPP_RETURN_IF(f->num_heads % hkv != 0, OPP_STATUS_BAD_PARAM_KV_HEADS_NOT_DIVIDING,
                  "num_heads = %" PRId32 " is not a multiple of kv_num_heads = %" PRId32,
                  f->num_heads, f->kv_num_heads);
    return OPP_STATUS_SUCCESS;
}

static opp_status_t check_head_sizes(const opp__claim_fields_t *f) {
    OPP_RETURN_IF(f->head_size <= 0, OPP_STATUS_BAD_PARAM_HEAD_SIZE,
                  "head_size = %" PRId32 " must be >= 1", f->head_size);
    OPP_RETURN_IF(f->v_head_size < 0, OPP_STATUS_BAD_PARAM_V_HEAD_SIZE,
                  "v_head_size = %" PRId32 " must be >= 0 (0 means head_size)", f->v_head_size);
    OPP_RETURN_IF(f->head_size > OPP_MAX_HEAD_SIZE, OPP_STATUS_NOT_SUPPORTED_HEAD_SIZE,
                  "head_size = %" PRId32 " is above the supported maximum %d", f->head_size,
                  OPP_MAX_HEAD_SIZE);
    OPP_RETURN_IF(f->v_head_size > OPP_MAX_HEAD_SIZE, OPP_STATUS_NOT_SUPPORTED_HEAD_SIZE,
                  "v_head_size = %" PRId32 " is above the supported maximum %d", f->v_head_size,
                  OPP_MAX_HEAD_SIZE);
    return OPP_STATUS_SUCCESS;
}

static opp_status_t check_options(const opp__claim_fields_t *f) {
    /* -0.0 < 0 is false, so -0.0 passes as 0 (the default scale / no softcap). */
    OPP_RETURN_IF(!isfinite(f->scale) || f->scale < 0.0f, OPP_STATUS_BAD_PARAM_SCALE,
                  "scale = %g must be finite and >= 0 (0 selects 1/sqrt(head_size))",
                  (double)f->scale);
    OPP_RETURN_IF(!isfinite(f->softcap) || f->softcap < 0.0f, OPP_STATUS_BAD_PARAM_SOFTCAP,
                  "softcap = %g must be finite and >= 0 (0 turns it off)", (double)f->softcap);
    OPP_RETURN_IF(f->is_causal != 0 && f->is_causal != 1, OPP_STATUS_BAD_PARAM_IS_CAUSAL,
                  "is_causal = %" PRId32 " must be 0 or 1", f->is_causal);
    OPP_RETURN_IF(f->algo != OPP_ALGO_EXACT && f->algo != OPP_ALGO_FAST &&
                      f->algo != OPP_ALGO_AUTO && f->algo != OPP_ALGO_TF32X3,
                  OPP_STATUS_BAD_PARAM_ALGO,
                  "algo = %d is none of OPP_ALGO_EXACT (0), OPP_ALGO_FAST (1), OPP_ALGO_AUTO (2), "
                  "OPP_ALGO_TF32X3 (3)",
                  (int)f->algo);
    return OPP_STATUS_SUCCESS;
}

opp_status_t opp__claim_fields_check(const opp__claim_fields_t *f, opp__attrs_t *attrs) {
    OPP_TRY(check_dtypes(f));
    OPP_TRY(check_heads(f));
    OPP_TRY(check_head_sizes(f));
    OPP_TRY(check_options(f));
    opp__attrs_t a;
    a.algo = f->algo;
    a.dtype = f->q_dtype;
    a.hq = f->num_heads;
    a.hkv = f->kv_num_heads == 0 ? f->num_heads : f->kv_num_heads;
    a.g = a.hq / a.hkv;
    a.d = f->head_size;
    a.dv = f->v_head_size == 0 ? f->head_size : f->v_head_size;
    a.scale = f->scale;
    a.sqrt_scale = 0.0;     /* resolved by opp__problem_bind(): keeps libm out of */
    a.softmax_scale = 0.0f; /* the validation-only objects */
    a.softcap = f->softcap;
    a.is_causal = f->is_causal;
    *attrs = a;
    return OPP_STATUS_SUCCESS;
}
