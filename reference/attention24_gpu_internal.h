/*
 * attention24_gpu_internal.h - the parameter block and the extern "C"
 * launchers shared by reference/attention24_gpu.c (host: planning, cuBLAS,
 * chunk loop) and reference/attention24_gpu_kernels.cu (the exact stages).
 *
 * One chunk is a range of batch entries b0 .. b0+nb-1 times a range of query
 * rows r0 .. r0+rows-1 (all heads). Its double buffers in the workspace are
 *   kd [nb*Hkv, T, D]        scaled keys   (T = P + S_kv keys, past first)
 *   vd [nb*Hkv, T, Dv]       values
 *   qd [nb*Hq*rows, D]       scaled queries, row r = (bl*Hq + h)*rows + i
 *   sc [nb*Hq*rows, T]       scores, turned into probabilities in place
 *   yd [nb*Hq*rows, Dv]      P.V before the final rounding
 *   zero_rows [nb*Hq*rows]   1 where the row outputs exact zeros
 * For kv head hk the query heads h = hk*G .. hk*G+G-1 (G = Hq/Hkv) are
 * adjacent: rows of batch bi = bl*Hkv + hk start at bi*G*rows, so one
 * strided-batched GEMM (batch index bi) serves the whole group.
 */
#ifndef OPP_REFERENCE_ATTENTION24_GPU_INTERNAL_H
#define OPP_REFERENCE_ATTENTION24_GPU_INTERNAL_H

#include <stdint.h>

#include "lib/oppacked.h"

#ifdef __cplusplus
extern "C" {
#endif

struct CUstream_st;

/* Mask kinds of opp__a24g_params_t.mask_kind. */
#define OPP__A24G_MASK_NONE  0
#define OPP__A24G_MASK_BOOL  1 /* one byte per element, nonzero = attend */
#define OPP__A24G_MASK_FLOAT 2 /* additive, in the dtype of Q */

/* Everything the kernels need to know, passed by value. */
typedef struct opp__a24g_params {
    int32_t dtype;      /* ONNX value: 1 f32, 10 f16, 16 bf16 */
    int32_t input_rank; /* 3 or 4 */
    int32_t batch, q_num_heads, kv_num_heads, group;
    int32_t q_seqlen, kv_seqlen, past_seqlen, total; /* total = P + S_kv */
    int32_t head_size, v_head_size;
    int32_t has_past, has_nonpad, is_causal;
    int32_t qk_mode;     /* -1: no qk_matmul_output, else 0..3 */
    int32_t want_scores; /* qk_mode 0..2: keys past nonpad are scored too */
    double sqrt_scale;   /* s of exact_order.h */
    double softcap;      /* 0: off */
    int32_t mask_kind;   /* OPP__A24G_MASK_* */
    int32_t mask_rank;   /* 1..4 */
    int64_t mask_dims[4];
    /* the chunk */
    int32_t b0, nb;   /* batch entries b0 .. b0+nb-1 */
    int32_t r0, rows; /* query rows r0 .. r0+rows-1 */
} opp__a24g_params_t;

/* Test hook: the per-part budget of the planner in doubles (attention24_gpu.c
 * documents it; 0 restores the default 2^27). Lets tests force chunks of a
 * few rows on small shapes. Not thread-safe; affects every later call. */
void opp__a24g_set_budget_elems(uint64_t elems);

/* The status of a failed cuBLAS call: records "<call>: <cuBLAS status
 * name>" and returns OPP_STATUS_CUBLAS_ERROR (every cuBLAS call of
 * reference/attention24_gpu.c goes through it; cublas_status is a
 * cublasStatus_t other than CUBLAS_STATUS_SUCCESS). */
opp_status_t opp__a24g_cublas_error(int cublas_status, const char *call);

/* report[0] = first b with nonpad[b] outside 0..S_kv (or -1), report[1] =
 * its value. nonpad: device [B]; report: device [2]. One thread. */
opp_status_t opp__a24g_check_nonpad_launch(const int64_t *nonpad, int32_t batch, int32_t kv_seqlen,
                                           int64_t *report, struct CUstream_st *stream);

/* qd [nb*Hq*rows, D] = (double)Q[b, h, r0+i, :] * s. q: device, 4D or 3D. */
opp_status_t opp__a24g_load_q_launch(const opp__a24g_params_t *p, const void *q, double *qd,
                                     struct CUstream_st *stream);

/* dst [nb*Hkv, T, width] = (double)concat(past, cur)[b, hk, j, :] * s for
 * j < kept(b), 0.0 beyond: kept = T for keys when scores are wanted, else
 * nonpad[b] (or T without nonpad). value = 1 selects V (width Dv, s = 1). */
opp_status_t opp__a24g_load_kv_launch(const opp__a24g_params_t *p, const void *cur,
                                      const void *past, const int64_t *nonpad, int value,
                                      double *dst, struct CUstream_st *stream);

/* The exact stage, one block per row of sc [nb*Hq*rows, T]: softcap, bias,
 * fully-masked guard, max, exp, chunked sum, p = e / S (in place), the
 * qk_matmul_output row (may be NULL) and zero_rows [nb*Hq*rows]. */
opp_status_t opp__a24g_exact_stage_launch(const opp__a24g_params_t *p, const void *attn_mask,
                                          const int64_t *nonpad, double *sc, int32_t *zero_rows,
                                          void *qk_out, struct CUstream_st *stream);

/* y[b, h, r0+i, :] = round(zero_rows[r] ? 0 : yd[r, :]), 4D or 3D. */
opp_status_t opp__a24g_store_y_launch(const opp__a24g_params_t *p, const double *yd,
                                      const int32_t *zero_rows, void *y,
                                      struct CUstream_st *stream);

/* present [B, Hkv, T, width] = concat(past, cur) bit for bit (cur 4D or 3D). */
opp_status_t opp__a24g_present_launch(const opp__a24g_params_t *p, const void *cur,
                                      const void *past, int value, void *present,
                                      struct CUstream_st *stream);

#ifdef __cplusplus
}
#endif
#endif /* OPP_REFERENCE_ATTENTION24_GPU_INTERNAL_H */
