/*
 * oracle.h - the fuzz targets' independent re-implementation, from the rules
 * in lib/oppacked.h and the README's status table, of the acceptance rules
 * (written without lib/ code on purpose):
 *   - oracle_claim_status(): the claim-time field checks both descriptors
 *     share (dtypes, heads, head sizes, scale, softcap, is_causal, algo, in
 *     the documented order): the status of the first failing field, or
 *     SUCCESS when every field is valid (the library may then still say
 *     NOT_SUPPORTED_* from its kernel table, which is not modelled here);
 *   - oracle_max_seqlen_ok() and oracle_cu_last_ok(): the packed batch's
 *     max_seqlen and cu_seqlens[batch] rules, shared by fuzz/desc_fuzz.c and
 *     fuzz/varlen_fuzz.c (the one place to change if those rules change).
 */
#ifndef OPP_FUZZ_ORACLE_H
#define OPP_FUZZ_ORACLE_H

#include <math.h>
#include <stdint.h>

#include "lib/oppacked.h"

typedef struct oracle_claim {
    int32_t q_dtype, k_dtype, v_dtype, out_dtype;
    int32_t num_heads, kv_num_heads, head_size, v_head_size;
    float scale, softcap;
    int32_t is_causal, algo;
} oracle_claim_t;

#define ORACLE_CLAIM_OF(d)                                                                        \
    ((oracle_claim_t){(int32_t)(d)->q_dtype, (int32_t)(d)->k_dtype, (int32_t)(d)->v_dtype,        \
                      (int32_t)(d)->out_dtype, (d)->num_heads, (d)->kv_num_heads, (d)->head_size, \
                      (d)->v_head_size, (d)->scale, (d)->softcap, (d)->is_causal,                 \
                      (int32_t)(d)->algo})

static inline opp_status_t oracle_claim_status(const oracle_claim_t *c) {
    const int32_t dt[4] = {c->q_dtype, c->k_dtype, c->v_dtype, c->out_dtype};
    for (int i = 0; i < 4; ++i) {
        if (dt[i] < 1 || dt[i] > 28) { /* ONNX TensorProto types 1..28; 0 is "unset" */
            return OPP_STATUS_BAD_PARAM_DTYPE;
        }
    }
    for (int i = 1; i < 4; ++i) {
        if (dt[i] != dt[0]) {
            return OPP_STATUS_BAD_PARAM_DTYPE_MISMATCH;
        }
    }
    if (dt[0] != 1 && dt[0] != 10 && dt[0] != 16) { /* f32, f16, bf16 */
        return OPP_STATUS_NOT_SUPPORTED_DTYPE;
    }
    if (c->num_heads < 1) {
        return OPP_STATUS_BAD_PARAM_NUM_HEADS;
    }
    if (c->kv_num_heads < 0) {
        return OPP_STATUS_BAD_PARAM_KV_NUM_HEADS;
    }
    if (c->kv_num_heads > 0 && c->num_heads % c->kv_num_heads != 0) {
        return OPP_STATUS_BAD_PARAM_KV_HEADS_NOT_DIVIDING;
    }
    if (c->head_size < 1) {
        return OPP_STATUS_BAD_PARAM_HEAD_SIZE;
    }
    if (c->v_head_size < 0) {
        return OPP_STATUS_BAD_PARAM_V_HEAD_SIZE;
    }
    if (c->head_size > 256 || c->v_head_size > 256) {
        return OPP_STATUS_NOT_SUPPORTED_HEAD_SIZE;
    }
    if (!(c->scale >= 0.0f) || isinf(c->scale)) { /* NaN fails >= */
        return OPP_STATUS_BAD_PARAM_SCALE;
    }
    if (!(c->softcap >= 0.0f) || isinf(c->softcap)) {
        return OPP_STATUS_BAD_PARAM_SOFTCAP;
    }
    if (c->is_causal != 0 && c->is_causal != 1) {
        return OPP_STATUS_BAD_PARAM_IS_CAUSAL;
    }
    if (c->algo < 0 || c->algo > 3) { /* EXACT 0, FAST 1, AUTO 2, TF32X3 3 */
        return OPP_STATUS_BAD_PARAM_ALGO;
    }
    return OPP_STATUS_SUCCESS;
}

/* A status of the 2xxx category (valid, but unsupported). */
static inline int oracle_is_unsupported(opp_status_t st) {
    return (int)st >= 2000 && (int)st < 3000;
}

/* max_seqlen is an upper bound only (CUDA-graph replay): any value >= 0,
 * above the total too; it bounds the lengths, which varlen_check checks. */
static inline int oracle_max_seqlen_ok(int32_t max_seqlen, int64_t total, int32_t batch) {
    (void)total;
    (void)batch;
    return max_seqlen >= 0;
}

/* The totals are the capacity: cu_seqlens[batch] <= total. */
static inline int oracle_cu_last_ok(int32_t last, int64_t total) {
    return last <= total;
}

#endif /* OPP_FUZZ_ORACLE_H */
