/*
 * attention24_gpu.c - the padded ONNX Attention-24 reference on the GPU
 * (reference/opp_reference_gpu.h): host side. Plans the workspace, walks the
 * chunks, calls cuBLAS for the two double GEMMs and the exact-stage kernels
 * of attention24_gpu_kernels.cu for everything else.
 *
 *   Q [B, Hq, S_q, D], K [B, Hkv, S_kv, D], V [B, Hkv, S_kv, Dv] (or 3D),
 *   T = P + S_kv keys, G = Hq / Hkv. Per chunk (batch entries b0.., all
 *   heads, query rows r0..):
 *     kd, vd = widened K (times s) and V; rows j >= nonpad[b] are 0.0
 *              (keys: all T rows are real when qk_matmul_output mode 0-2
 *              is requested, as ONNX defines those outputs);
 *     qd     = widened Q times s, the G query heads of kv head hk adjacent;
 *     sc     = qd kd^T    cublasGemmStridedBatchedEx, CUBLAS_COMPUTE_64F,
 *                         one batch per (b, hk): [G*rows, D] x [D, T];
 *     exact stage (softcap, bias, guard, softmax: exact_order.h) -> P in sc;
 *     yd     = P vd       [G*rows, T] x [T, Dv], same batching;
 *     y      = yd rounded once (exact zeros for rows with no visible key).
 *   The only difference from the CPU reference is the GEMMs' summation
 *   order (DESIGN.md §4) - for finite K and V. A V row that is real data
 *   (j < nonpad[b]) but hidden from a query by attn_mask or the causal rule
 *   still enters the P.V GEMM with p = 0, so a NaN or inf stored there gives
 *   NaN, as in ONNX's reference, where the CPU reference skips the row.
 *   Padding rows are 0.0 in vd and never carry a NaN into Y.
 *
 * Workspace (bytes; every region rounded up to 256, base 256-aligned):
 *   W = 256                                   nonpad check report
 *     + 8*nb*Hkv*T*D + 8*nb*Hkv*T*Dv          kd, vd
 *     + 8*N*D + 8*N*T + 8*N*Dv + 4*N          qd, sc, yd, zero_rows
 *   with N = nb*Hq*rows query rows per chunk, chosen by plan() from a
 *   budget of 2^27 doubles (1 GiB) for each of the two parts:
 *     rows = S_q and nb = min(B, 2^27 / (Hq*S_q*(T+D+Dv+1)),
 *                             max(1, 2^27 / (Hkv*T*(D+Dv))))
 *            when Hq*S_q*(T+D+Dv+1) <= 2^27, else
 *     nb = 1, rows = max(1, 2^27 / (Hq*(T+D+Dv+1))).
 *   So W <= 7*256 + max(1 GiB, 8*Hq*(T+D+Dv+1)) + max(1 GiB, 8*Hkv*T*(D+Dv)):
 *   at most 2 GiB + 1792 bytes unless one query row of all heads or the
 *   K/V of one batch entry alone exceed 1 GiB as doubles. The score matrix
 *   of a chunk (8*N*T bytes) is part of the first 1 GiB.
 *
 * Test: bazel test //tests:attention24_gpu_test (skips without a GPU).
 */
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/internal/check.h"
#include "numerics/exact_order.h"
#include "reference/attention24_gpu_internal.h"
#include "reference/attention24_internal.h"
#include "reference/opp_reference_gpu.h"

#define A24G_ALIGN        ((uint64_t)256)
#define A24G_BUDGET_ELEMS ((uint64_t)1 << 27) /* doubles per part: 1 GiB */

/* Test hook (opp__a24g_set_budget_elems): 0 selects A24G_BUDGET_ELEMS. */
static uint64_t g_budget_elems;

struct opp_ref_gpu {
    cublasHandle_t handle;
};

/* The chunking and the workspace layout (byte offsets from the base). */
typedef struct a24g_plan {
    int32_t nb, rows; /* batch entries and query rows per chunk (0: nothing to do) */
    uint64_t off_report, off_kd, off_vd, off_qd, off_sc, off_yd, off_zero, total;
} a24g_plan_t;

// --- planning

static uint64_t align_up(uint64_t x) {
    return (x + A24G_ALIGN - 1) / A24G_ALIGN * A24G_ALIGN;
}

/* *out = a * b * c * d, or 0 when it overflows or exceeds 2^56 bytes (64 PiB: no
 * device has that; the cap keeps the sum of the regions far from overflow). */
static int mul4(uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t *out) {
    uint64_t x, y;
    const int bad = __builtin_mul_overflow(a, b, &x) || __builtin_mul_overflow(x, c, &y) ||
                    __builtin_mul_overflow(y, d, out) || *out > ((uint64_t)1 << 56);
    if (bad) {
        *out = 0;
    }
    return !bad;
}

static uint64_t min_u64(uint64_t a, uint64_t b) {
    return a < b ? a : b;
}

/* Appends a region of `bytes` at *cursor; returns its offset. */
static uint64_t take(uint64_t *cursor, uint64_t bytes) {
    const uint64_t at = *cursor;
    *cursor = at + align_up(bytes);
    return at;
}

void opp__a24g_set_budget_elems(uint64_t elems) {
    g_budget_elems = elems;
}

static opp_status_t plan(const opp_ref_attention24_desc_t *a, a24g_plan_t *pl) {
    memset(pl, 0, sizeof(*pl));
    const uint64_t budget = g_budget_elems > 0 ? g_budget_elems : A24G_BUDGET_ELEMS;
    const uint64_t T = (uint64_t)a->past_seqlen + (uint64_t)a->kv_seqlen;
    const uint64_t hq = (uint64_t)a->q_num_heads, hkv = (uint64_t)a->kv_num_heads;
    const uint64_t d = (uint64_t)a->head_size, dv = (uint64_t)a->v_head_size;
    const uint64_t sq = (uint64_t)a->q_seqlen, batch = (uint64_t)a->batch;
    const uint64_t row_cost = T + d + dv + 1; /* doubles per query row and head */
    OPP_RETURN_IF(T > INT32_MAX, OPP_STATUS_NOT_SUPPORTED,
                  "past_sequence_length + kv_sequence_length = %llu exceeds 32-bit GEMM sizes",
                  (unsigned long long)T);
    uint64_t per_b_rows = 0, per_b_kv = 0;
    OPP_RETURN_IF(!mul4(hq, sq, row_cost, 1, &per_b_rows) || !mul4(hkv, T, d + dv, 1, &per_b_kv),
                  OPP_STATUS_BAD_PARAM_SHAPE,
                  "the workspace size overflows (Hq %d, S_q %d, T %llu)", (int)a->q_num_heads,
                  (int)a->q_seqlen, (unsigned long long)T);
    if (sq > 0) {
        if (per_b_rows <= budget) {
            const uint64_t by_rows = budget / per_b_rows;
            const uint64_t by_kv = per_b_kv > 0 ? budget / per_b_kv : batch;
            pl->nb = (int32_t)min_u64(batch, min_u64(by_rows, by_kv > 0 ? by_kv : 1));
            pl->rows = (int32_t)sq;
        } else {
            const uint64_t fit = budget / (hq * row_cost);
            pl->nb = 1;
            pl->rows = (int32_t)(fit > 0 ? fit : 1);
        }
    }
    const uint64_t nb = (uint64_t)pl->nb, n_rows = nb * hq * (uint64_t)pl->rows;
    OPP_RETURN_IF((hq / hkv) * (uint64_t)pl->rows > INT32_MAX || nb * hkv > INT32_MAX,
                  OPP_STATUS_NOT_SUPPORTED, "a GEMM of the chunk exceeds 32-bit sizes");
    uint64_t kd, vd, qd, sc, yd, zero;
    OPP_RETURN_IF(!mul4(nb * hkv, T, d, 8, &kd) || !mul4(nb * hkv, T, dv, 8, &vd) ||
                      !mul4(n_rows, d, 8, 1, &qd) || !mul4(n_rows, T, 8, 1, &sc) ||
                      !mul4(n_rows, dv, 8, 1, &yd) || !mul4(n_rows, 4, 1, 1, &zero),
                  OPP_STATUS_BAD_PARAM_SHAPE, "the workspace size overflows");
    uint64_t cursor = 0;
    pl->off_report = take(&cursor, 2 * sizeof(int64_t));
    pl->off_kd = take(&cursor, kd);
    pl->off_vd = take(&cursor, vd);
    pl->off_qd = take(&cursor, qd);
    pl->off_sc = take(&cursor, sc);
    pl->off_yd = take(&cursor, yd);
    pl->off_zero = take(&cursor, zero);
    pl->total = cursor;
    return OPP_STATUS_SUCCESS;
}

// --- checks and cuBLAS glue

opp_status_t opp__a24g_cublas_error(int cublas_status, const char *call) {
    OPP_RETURN_IF(1, OPP_STATUS_CUBLAS_ERROR, "%s: %s", call,
                  cublasGetStatusName((cublasStatus_t)cublas_status));
    return OPP_STATUS_CUBLAS_ERROR;
}

#define CUBLAS_TRY(expr)                                               \
    do {                                                               \
        const cublasStatus_t opp_cublas_st_ = (expr);                  \
        if (opp_cublas_st_ != CUBLAS_STATUS_SUCCESS) {                 \
            return opp__a24g_cublas_error((int)opp_cublas_st_, #expr); \
        }                                                              \
    } while (0)

/* nonpad values on the device: one-thread kernel, then a synchronous read. */
static opp_status_t check_nonpad(const opp_ref_attention24_desc_t *a, const int64_t *nonpad,
                                 int64_t *report_dev, cudaStream_t stream) {
    int64_t report[2] = {0, 0};
    /* The kernel writes both words; set first all the same so that
     * compute-sanitizer's initcheck, filtered to the library's kernels
     * (tools/gpu_run_all.sh --sanitize-full), sees them written before the
     * copy reads them. */
    OPP_CUDA_TRY(cudaMemsetAsync(report_dev, 0xFF, sizeof(report), stream));
    OPP_TRY(opp__a24g_check_nonpad_launch(nonpad, a->batch, a->kv_seqlen, report_dev, stream));
    OPP_CUDA_TRY(
        cudaMemcpyAsync(report, report_dev, sizeof(report), cudaMemcpyDeviceToHost, stream));
    OPP_CUDA_TRY(cudaStreamSynchronize(stream));
    OPP_RETURN_IF(report[0] >= 0, OPP_STATUS_BAD_PARAM_NONPAD,
                  "nonpad_kv_seqlen[%lld] = %lld is outside 0..kv_sequence_length = %d",
                  (long long)report[0], (long long)report[1], (int)a->kv_seqlen);
    return OPP_STATUS_SUCCESS;
}

static void fill_params(const opp_ref_attention24_desc_t *a, const opp_ref_attention24_tensors_t *t,
                        opp__a24g_params_t *p) {
    memset(p, 0, sizeof(*p));
    p->dtype = (int32_t)a->dtype;
    p->input_rank = a->input_rank;
    p->batch = a->batch;
    p->q_num_heads = a->q_num_heads;
    p->kv_num_heads = a->kv_num_heads;
    p->group = a->q_num_heads / a->kv_num_heads;
    p->q_seqlen = a->q_seqlen;
    p->kv_seqlen = a->kv_seqlen;
    p->past_seqlen = a->past_seqlen;
    p->total = a->past_seqlen + a->kv_seqlen;
    p->head_size = a->head_size;
    p->v_head_size = a->v_head_size;
    p->has_past = a->has_past;
    p->has_nonpad = a->has_nonpad;
    p->is_causal = a->is_causal;
    p->qk_mode = t->qk_matmul_output != NULL ? a->qk_matmul_output_mode : -1;
    p->want_scores = p->qk_mode >= 0 && p->qk_mode <= 2;
    p->sqrt_scale = opp__exact_sqrt_scale(a->scale, a->head_size);
    p->softcap = (double)a->softcap;
    p->mask_kind = a->mask_dtype == OPP_DTYPE_UNDEFINED ? OPP__A24G_MASK_NONE
                   : a->mask_dtype == OPP_DTYPE_BOOL_   ? OPP__A24G_MASK_BOOL
                                                        : OPP__A24G_MASK_FLOAT;
    p->mask_rank = p->mask_kind == OPP__A24G_MASK_NONE ? 0 : a->mask_rank;
    for (int i = 0; i < 4; ++i) {
        p->mask_dims[i] = a->mask_dims[i];
    }
}

/* Pointers of the planned regions inside the caller's workspace. */
typedef struct a24g_bufs {
    int64_t *report;
    double *kd, *vd, *qd, *sc, *yd;
    int32_t *zero;
} a24g_bufs_t;

/* One chunk: p->b0/nb/r0/rows set; K/V are converted when load_kv is set. */
static opp_status_t run_chunk(opp_ref_gpu_t *ref, const opp__a24g_params_t *p,
                              const opp_ref_attention24_tensors_t *t, const a24g_bufs_t *w,
                              int load_kv, cudaStream_t stream) {
    if (load_kv) {
        OPP_TRY(
            opp__a24g_load_kv_launch(p, t->k, t->past_key, t->nonpad_kv_seqlen, 0, w->kd, stream));
        OPP_TRY(opp__a24g_load_kv_launch(p, t->v, t->past_value, t->nonpad_kv_seqlen, 1, w->vd,
                                         stream));
    }
    OPP_TRY(opp__a24g_load_q_launch(p, t->q, w->qd, stream));
    const int m_rows = p->group * p->rows; /* rows of one (b, hk) batch */
    const int batches = p->nb * p->kv_num_heads;
    const long long T = p->total, D = p->head_size, Dv = p->v_head_size;
    const double one = 1.0, zero = 0.0;
    if (T > 0) {
        /* column-major: sc_b^T [T, m_rows] = kd_b [T, D] . qd_b^T [D, m_rows] */
        CUBLAS_TRY(cublasGemmStridedBatchedEx(
            ref->handle, CUBLAS_OP_T, CUBLAS_OP_N, (int)T, m_rows, (int)D, &one, w->kd, CUDA_R_64F,
            (int)D, T * D, w->qd, CUDA_R_64F, (int)D, m_rows * D, &zero, w->sc, CUDA_R_64F, (int)T,
            m_rows * T, batches, CUBLAS_COMPUTE_64F, CUBLAS_GEMM_DEFAULT));
    }
    OPP_TRY(opp__a24g_exact_stage_launch(p, t->attn_mask, t->nonpad_kv_seqlen, w->sc, w->zero,
                                         t->qk_matmul_output, stream));
    if (T > 0) {
        /* column-major: yd_b^T [Dv, m_rows] = vd_b^T [Dv, T] . P_b^T [T, m_rows] */
        CUBLAS_TRY(cublasGemmStridedBatchedEx(
            ref->handle, CUBLAS_OP_N, CUBLAS_OP_N, (int)Dv, m_rows, (int)T, &one, w->vd, CUDA_R_64F,
            (int)Dv, T * Dv, w->sc, CUDA_R_64F, (int)T, m_rows * T, &zero, w->yd, CUDA_R_64F,
            (int)Dv, m_rows * Dv, batches, CUBLAS_COMPUTE_64F, CUBLAS_GEMM_DEFAULT));
    }
    return opp__a24g_store_y_launch(p, w->yd, w->zero, t->y, stream);
}

// --- public entry

opp_status_t opp_ref_gpu_create(opp_ref_gpu_t **ref) {
    OPP_RETURN_IF(ref == NULL, OPP_STATUS_BAD_PARAM_NULL_POINTER, "ref is NULL");
    *ref = NULL;
    int count = 0;
    const cudaError_t err = cudaGetDeviceCount(&count);
    (void)cudaGetLastError(); /* clear a "no device" error */
    OPP_RETURN_IF(err != cudaSuccess || count == 0, OPP_STATUS_NO_DEVICE,
                  "no CUDA device (cudaGetDeviceCount: %s, count %d)", cudaGetErrorName(err),
                  count);
    opp_ref_gpu_t *r = calloc(1, sizeof(*r));
    OPP_RETURN_IF(r == NULL, OPP_STATUS_HOST_ALLOC_FAILED, "cannot allocate the reference");
    cublasStatus_t st = cublasCreate(&r->handle);
    if (st != CUBLAS_STATUS_SUCCESS) {
        free(r);
        return opp__a24g_cublas_error((int)st, "cublasCreate");
    }
    /* Plain IEEE double GEMMs: no FP64 emulation. */
    st = cublasSetMathMode(r->handle, CUBLAS_DEFAULT_MATH);
    if (st != CUBLAS_STATUS_SUCCESS) {
        opp_ref_gpu_destroy(r);
        return opp__a24g_cublas_error((int)st, "cublasSetMathMode");
    }
    *ref = r;
    return OPP_STATUS_SUCCESS;
}

void opp_ref_gpu_destroy(opp_ref_gpu_t *ref) {
    if (ref != NULL) {
        (void)cublasDestroy(ref->handle);
        free(ref);
    }
}

opp_status_t opp_ref_gpu_attention24_workspace_size(const opp_ref_attention24_desc_t *desc,
                                                    size_t *workspace_bytes) {
    OPP_RETURN_IF(workspace_bytes == NULL, OPP_STATUS_BAD_PARAM_NULL_POINTER,
                  "workspace_bytes is NULL");
    *workspace_bytes = 0;
    OPP_TRY(opp_ref_attention24_check(desc));
    a24g_plan_t pl;
    OPP_TRY(plan(desc, &pl));
    *workspace_bytes = (size_t)pl.total;
    return OPP_STATUS_SUCCESS;
}

opp_status_t opp_ref_gpu_attention24(opp_ref_gpu_t *ref, const opp_ref_attention24_desc_t *desc,
                                     const opp_ref_attention24_tensors_t *t, void *workspace,
                                     size_t workspace_bytes, struct CUstream_st *stream) {
    OPP_RETURN_IF(ref == NULL, OPP_STATUS_BAD_PARAM_NULL_POINTER, "ref is NULL");
    OPP_TRY(opp_ref_attention24_check(desc));
    OPP_TRY(opp__a24_check_pointers(desc, t)); /* nonpad values: on the device */
    a24g_plan_t pl;
    OPP_TRY(plan(desc, &pl));
    OPP_RETURN_IF(workspace_bytes < pl.total, OPP_STATUS_BAD_PARAM_WORKSPACE,
                  "workspace_bytes = %zu < %llu needed (opp_ref_gpu_attention24_workspace_size)",
                  workspace_bytes, (unsigned long long)pl.total);
    OPP_RETURN_IF(workspace == NULL, OPP_STATUS_BAD_PARAM_NULL_POINTER, "workspace is NULL");
    OPP_RETURN_IF((uintptr_t)workspace % A24G_ALIGN != 0, OPP_STATUS_BAD_PARAM_MISALIGNED,
                  "workspace %p is not 256-byte aligned", workspace);
    char *base = workspace;
    const a24g_bufs_t w = {
        (int64_t *)(base + pl.off_report), (double *)(base + pl.off_kd),
        (double *)(base + pl.off_vd),      (double *)(base + pl.off_qd),
        (double *)(base + pl.off_sc),      (double *)(base + pl.off_yd),
        (int32_t *)(base + pl.off_zero),
    };
    if (desc->has_nonpad) {
        OPP_TRY(check_nonpad(desc, t->nonpad_kv_seqlen, w.report, stream));
    }
    CUBLAS_TRY(cublasSetStream(ref->handle, stream));
    opp__a24g_params_t p;
    fill_params(desc, t, &p);
    if (t->present_key != NULL) {
        OPP_TRY(opp__a24g_present_launch(&p, t->k, t->past_key, 0, t->present_key, stream));
    }
    if (t->present_value != NULL) {
        OPP_TRY(opp__a24g_present_launch(&p, t->v, t->past_value, 1, t->present_value, stream));
    }
    for (int32_t b0 = 0; pl.nb > 0 && b0 < desc->batch; b0 += pl.nb) {
        p.b0 = b0;
        p.nb = desc->batch - b0 < pl.nb ? desc->batch - b0 : pl.nb;
        for (int32_t r0 = 0; r0 < desc->q_seqlen; r0 += pl.rows) {
            p.r0 = r0;
            p.rows = desc->q_seqlen - r0 < pl.rows ? desc->q_seqlen - r0 : pl.rows;
            OPP_TRY(run_chunk(ref, &p, t, &w, r0 == 0, stream));
        }
    }
    return OPP_STATUS_SUCCESS;
}
