/*
 * attention24_gpu_kernels.cu - the non-GEMM stages of the cuBLAS padded ONNX
 * Attention-24 reference (reference/attention24_gpu.c drives them), and
 * their extern "C" launchers (reference/attention24_gpu_internal.h).
 *
 * Shapes (dims of the 4D form; 3D inputs are [B, S, H*D]):
 *   Q [B, Hq, S_q, D], K [B, Hkv, S_kv, D], V [B, Hkv, S_kv, Dv],
 *   past_* [B, Hkv, P, D|Dv], Y [B, Hq, S_q, Dv], qk [B, Hq, S_q, T],
 *   T = P + S_kv keys (past first). Chunk buffers: see the internal header.
 *
 * Every stage follows numerics/exact_order.h and the CPU reference
 * (reference/attention24_ref.c + exact_row.c) operation for operation, so
 * the only difference from the CPU is the summation order of the two GEMMs.
 * Built by nvcc_object() with -fmad=false: no multiply-add is fused unless
 * written as fma(). All loops are grid-stride with 64-bit indices.
 */
#include <cuda_runtime.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/internal/check.h"
#include "numerics/exact_math.h"
#include "numerics/exact_order.h"
#include "numerics/fp_convert.h"
#include "reference/attention24_gpu_internal.h"

typedef opp__a24g_params_t params_t;

#define STAGE_THREADS_MAX 256 /* block size bound of the exact stage */
#define ELEM_THREADS      256
#define MAX_BLOCKS        (1 << 22)

// --- device helpers (the index rules of reference/attention24_internal.h)

/* Element offset of row (b, h, t) of Q (width D) or Y (width Dv). */
__device__ static int64_t q_row(const params_t &p, int64_t b, int64_t h, int64_t t, int64_t width) {
    if (p.input_rank == 3) {
        return ((b * p.q_seqlen + t) * p.q_num_heads + h) * width;
    }
    return ((b * p.q_num_heads + h) * p.q_seqlen + t) * width;
}

/* Element offset of new key/value row r (< S_kv) of kv head hk. */
__device__ static int64_t kv_row(const params_t &p, int64_t b, int64_t hk, int64_t r,
                                 int64_t width) {
    if (p.input_rank == 3) {
        return ((b * p.kv_seqlen + r) * p.kv_num_heads + hk) * width;
    }
    return ((b * p.kv_num_heads + hk) * p.kv_seqlen + r) * width;
}

/* Mask element of (b, h, t, j < M): numpy broadcasting, right-aligned. */
__device__ static int64_t mask_index(const params_t &p, int64_t b, int64_t h, int64_t t,
                                     int64_t j) {
    const int64_t coord[4] = {b, h, t, j};
    int64_t index = 0;
    for (int32_t i = 0; i < p.mask_rank; ++i) {
        const int32_t axis = 4 - p.mask_rank + i;
        const int64_t dim = p.mask_dims[i];
        index = index * dim + (dim == 1 && axis != 3 ? 0 : coord[axis]);
    }
    return index;
}

/* nonpad[b] clamped to 0..S_kv (values were checked before any launch). */
__device__ static int64_t nonpad_of(const params_t &p, const int64_t *nonpad, int64_t b) {
    const int64_t n = nonpad[b];
    return n < 0 ? 0 : (n > p.kv_seqlen ? p.kv_seqlen : n);
}

/* Keys j < n_valid enter the softmax (all T without nonpad_kv_seqlen). */
__device__ static int64_t valid_keys(const params_t &p, const int64_t *nonpad, int64_t b) {
    return p.has_nonpad ? nonpad_of(p, nonpad, b) : (int64_t)p.total;
}

/* bias_j = (mask_j + causal_j) + padding_j, exactly as row_bias() of the CPU. */
__device__ static double bias_of(const params_t &p, const void *mask, int64_t b, int64_t h,
                                 int64_t t, int64_t j, int64_t offset, int64_t mask_cols,
                                 int64_t n_pad) {
    double mk = 0.0;
    if (p.mask_kind != OPP__A24G_MASK_NONE) {
        if (j >= mask_cols) {
            mk = -INFINITY;
        } else if (p.mask_kind == OPP__A24G_MASK_BOOL) {
            mk = ((const uint8_t *)mask)[mask_index(p, b, h, t, j)] ? 0.0 : -INFINITY;
        } else {
            mk = opp__load_elem(mask, (size_t)mask_index(p, b, h, t, j), p.dtype);
        }
    }
    double v;
    if (p.is_causal) {
        v = mk + (j <= t + offset ? 0.0 : -INFINITY);
    } else {
        v = 0.0 + mk;
    }
    if (p.has_nonpad) {
        v = v + (j < n_pad ? 0.0 : -INFINITY);
    }
    return v;
}

// --- kernels

/* report [2] <- first bad nonpad entry and its value; nonpad [B]. <<<1, 1>>> */
__global__ static void check_nonpad_kernel(const int64_t *nonpad, int32_t batch, int32_t kv_seqlen,
                                           int64_t *report) {
    report[0] = -1;
    report[1] = 0;
    for (int32_t b = 0; b < batch; ++b) {
        if (nonpad[b] < 0 || nonpad[b] > kv_seqlen) {
            report[0] = b;
            report[1] = nonpad[b];
            return;
        }
    }
}

/* qd [nb*Hq*rows, D] <- Q rows (b0+bl, h, r0+i) widened and scaled by s. */
__global__ static void load_q_kernel(params_t p, const void *q, double *qd, int64_t n) {
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; idx < n; idx += stride) {
        const int64_t d = idx % p.head_size, r = idx / p.head_size;
        const int64_t i = r % p.rows, bh = r / p.rows;
        const int64_t h = bh % p.q_num_heads, b = p.b0 + bh / p.q_num_heads;
        const int64_t src = q_row(p, b, h, p.r0 + i, p.head_size) + d;
        qd[idx] = opp__load_elem(q, (size_t)src, p.dtype) * p.sqrt_scale;
    }
}

/* dst [nb*Hkv, T, width] <- concat(past, cur) rows j < kept(b), 0.0 beyond. */
__global__ static void load_kv_kernel(params_t p, const void *cur, const void *past,
                                      const int64_t *nonpad, int value, double *dst, int64_t n) {
    const int64_t width = value ? p.v_head_size : p.head_size;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; idx < n; idx += stride) {
        const int64_t d = idx % width, rest = idx / width;
        const int64_t j = rest % p.total, bk = rest / p.total;
        const int64_t hk = bk % p.kv_num_heads, b = p.b0 + bk / p.kv_num_heads;
        const int64_t kept =
            (!value && p.want_scores) ? (int64_t)p.total : valid_keys(p, nonpad, b);
        double x = 0.0;
        if (j < kept) {
            if (j < p.past_seqlen) {
                const int64_t src = ((b * p.kv_num_heads + hk) * p.past_seqlen + j) * width + d;
                x = opp__load_elem(past, (size_t)src, p.dtype);
            } else {
                const int64_t src = kv_row(p, b, hk, j - p.past_seqlen, width) + d;
                x = opp__load_elem(cur, (size_t)src, p.dtype);
            }
            if (!value) {
                x = x * p.sqrt_scale;
            }
        }
        dst[idx] = x;
    }
}

/* One block per row r of sc [nb*Hq*rows, T] (r = (bl*Hq + h)*rows + i):
 *   pass 1: x_j = softcap(score_j) + bias_j (j < n_valid, else -inf); the
 *           qk_matmul_output row for modes 0-2; fully-masked flag on the
 *           bias; NaN-propagating max m over visible keys;
 *   pass 2: e_j = opp__exp(x_j - m) (-inf kept as the "not visible" mark);
 *   pass 3: S = sum of 64-key chunk partials, each ascending, partials
 *           ascending (OPP_EXACT_SUM; one thread per chunk, thread 0 adds);
 *   pass 4: p_j = e_j / S (0 for keys not visible), mode-3 output.
 * A row with no visible key gets p = 0 and zero_rows[r] = 1. */
__global__ static void exact_stage_kernel(params_t p, const void *mask, const int64_t *nonpad,
                                          double *sc, int32_t *zero_rows, void *qk_out,
                                          int64_t n_rows) {
    __shared__ double s_m[STAGE_THREADS_MAX];
    __shared__ double s_part[STAGE_THREADS_MAX];
    __shared__ int s_any[STAGE_THREADS_MAX];
    __shared__ int s_all[STAGE_THREADS_MAX];
    const int tid = (int)threadIdx.x, nt = (int)blockDim.x;
    const int64_t T = p.total;
    const int64_t mask_cols = p.mask_rank > 0 ? p.mask_dims[p.mask_rank - 1] : 0;
    for (int64_t r = blockIdx.x; r < n_rows; r += gridDim.x) {
        const int64_t i = r % p.rows, bh = r / p.rows;
        const int64_t h = bh % p.q_num_heads, b = p.b0 + bh / p.q_num_heads;
        const int64_t t = p.r0 + i;
        const int64_t n_pad = p.has_nonpad ? nonpad_of(p, nonpad, b) : T;
        const int64_t n_valid = valid_keys(p, nonpad, b);
        const int64_t n_scored = p.want_scores ? T : n_valid;
        const int64_t offset = p.has_past ? p.past_seqlen : (p.has_nonpad ? n_pad - p.q_seqlen : 0);
        const size_t qk_base = (size_t)(((b * p.q_num_heads + h) * p.q_seqlen + t) * T);
        double *x = sc + r * T;
        double m = -INFINITY;
        int any = 0, all = 1;
        for (int64_t j = tid; j < T; j += nt) {
            const double s =
                j < n_scored ? (p.softcap > 0.0 ? p.softcap * opp__tanh(x[j] / p.softcap) : x[j])
                             : 0.0;
            const double bias = bias_of(p, mask, b, h, t, j, offset, mask_cols, n_pad);
            all = all && bias == -INFINITY;
            const double xv = j < n_valid ? s + bias : -INFINITY;
            if (p.qk_mode == 0 || p.qk_mode == 1) {
                opp__store_elem(qk_out, qk_base + (size_t)j, p.dtype, s);
            } else if (p.qk_mode == 2) {
                opp__store_elem(qk_out, qk_base + (size_t)j, p.dtype, s + bias);
            }
            x[j] = xv;
            if (xv != -INFINITY) {
                m = any ? opp__max_nan(m, xv) : xv;
                any = 1;
            }
        }
        s_m[tid] = m;
        s_any[tid] = any;
        s_all[tid] = all;
        __syncthreads();
        for (int half = nt / 2; half > 0; half /= 2) {
            if (tid < half) {
                const int a = s_any[tid], c = s_any[tid + half];
                s_m[tid] = a && c ? opp__max_nan(s_m[tid], s_m[tid + half])
                                  : (a ? s_m[tid] : s_m[tid + half]);
                s_any[tid] = a || c;
                s_all[tid] = s_all[tid] && s_all[tid + half];
            }
            __syncthreads();
        }
        m = s_m[0];
        const int zero = s_all[0] || !s_any[0] || m == -INFINITY;
        __syncthreads(); /* s_* are rewritten below */
        if (tid == 0) {
            zero_rows[r] = zero;
        }
        if (zero) {
            for (int64_t j = tid; j < T; j += nt) {
                x[j] = 0.0;
                if (p.qk_mode == 3) {
                    opp__store_elem(qk_out, qk_base + (size_t)j, p.dtype, 0.0);
                }
            }
            continue; /* uniform across the block */
        }
        for (int64_t j = tid; j < T; j += nt) {
            const double xv = x[j];
            x[j] = xv != -INFINITY ? opp__exp(xv - m) : -INFINITY;
        }
        __syncthreads(); /* pass 3 reads other threads' e_j */
        const int64_t n_chunks = (n_valid + OPP_EXACT_KEY_CHUNK - 1) / OPP_EXACT_KEY_CHUNK;
        double total = 0.0; /* meaningful in thread 0 */
        for (int64_t c_base = 0; c_base < n_chunks; c_base += nt) {
            const int64_t c = c_base + tid;
            double part = 0.0;
            if (c < n_chunks) {
                const int64_t c0 = c * OPP_EXACT_KEY_CHUNK;
                const int64_t c1 =
                    n_valid - c0 < OPP_EXACT_KEY_CHUNK ? n_valid : c0 + OPP_EXACT_KEY_CHUNK;
                for (int64_t j = c0; j < c1; ++j) {
                    const double e = x[j];
                    if (e != -INFINITY) {
                        part = part + e;
                    }
                }
            }
            s_part[tid] = part;
            __syncthreads();
            if (tid == 0) {
                const int64_t here = n_chunks - c_base < nt ? n_chunks - c_base : nt;
                for (int64_t k = 0; k < here; ++k) {
                    total = total + s_part[k];
                }
            }
            __syncthreads();
        }
        if (tid == 0) {
            s_m[0] = total;
        }
        __syncthreads();
        total = s_m[0];
        for (int64_t j = tid; j < T; j += nt) {
            const double e = x[j];
            const double pj = e != -INFINITY ? e / total : 0.0;
            x[j] = pj;
            if (p.qk_mode == 3) {
                opp__store_elem(qk_out, qk_base + (size_t)j, p.dtype, pj);
            }
        }
        __syncthreads(); /* s_m[0] is reused by the next row */
    }
}

/* y[b0+bl, h, r0+i, v] <- yd [nb*Hq*rows, Dv] rounded once (0 for zero rows). */
__global__ static void store_y_kernel(params_t p, const double *yd, const int32_t *zero_rows,
                                      void *y, int64_t n) {
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; idx < n; idx += stride) {
        const int64_t v = idx % p.v_head_size, r = idx / p.v_head_size;
        const int64_t i = r % p.rows, bh = r / p.rows;
        const int64_t h = bh % p.q_num_heads, b = p.b0 + bh / p.q_num_heads;
        const double value = zero_rows[r] ? 0.0 : yd[idx];
        opp__store_elem(y, (size_t)(q_row(p, b, h, p.r0 + i, p.v_head_size) + v), p.dtype, value);
    }
}

/* present [B, Hkv, T, width] <- concat(past, cur), element bits copied. */
template <typename E>
__global__ static void present_kernel(params_t p, const E *cur, const E *past, int value,
                                      E *present, int64_t n) {
    const int64_t width = value ? p.v_head_size : p.head_size;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; idx < n; idx += stride) {
        const int64_t d = idx % width, rest = idx / width;
        const int64_t j = rest % p.total, bk = rest / p.total;
        const int64_t hk = bk % p.kv_num_heads, b = bk / p.kv_num_heads;
        if (j < p.past_seqlen) {
            present[idx] = past[((b * p.kv_num_heads + hk) * p.past_seqlen + j) * width + d];
        } else {
            present[idx] = cur[kv_row(p, b, hk, j - p.past_seqlen, width) + d];
        }
    }
}

// --- launchers

static unsigned elem_blocks(int64_t n) {
    const int64_t blocks = (n + ELEM_THREADS - 1) / ELEM_THREADS;
    return (unsigned)(blocks < MAX_BLOCKS ? blocks : MAX_BLOCKS);
}

extern "C" opp_status_t opp__a24g_check_nonpad_launch(const int64_t *nonpad, int32_t batch,
                                                      int32_t kv_seqlen, int64_t *report,
                                                      struct CUstream_st *stream) {
    // nonpad: [B] int64, report: [2] int64
    check_nonpad_kernel<<<1, 1, 0, stream>>>(nonpad, batch, kv_seqlen, report);
    OPP_CUDA_TRY(cudaGetLastError());
    return OPP_STATUS_SUCCESS;
}

extern "C" opp_status_t opp__a24g_load_q_launch(const opp__a24g_params_t *p, const void *q,
                                                double *qd, struct CUstream_st *stream) {
    // q: [B, Hq, S_q, D] or [B, S_q, Hq*D] -> qd: [nb*Hq*rows, D]
    const int64_t n = (int64_t)p->nb * p->q_num_heads * p->rows * p->head_size;
    if (n > 0) {
        load_q_kernel<<<elem_blocks(n), ELEM_THREADS, 0, stream>>>(*p, q, qd, n);
        OPP_CUDA_TRY(cudaGetLastError());
    }
    return OPP_STATUS_SUCCESS;
}

extern "C" opp_status_t opp__a24g_load_kv_launch(const opp__a24g_params_t *p, const void *cur,
                                                 const void *past, const int64_t *nonpad, int value,
                                                 double *dst, struct CUstream_st *stream) {
    // cur: [B, Hkv, S_kv, W] or [B, S_kv, Hkv*W], past: [B, Hkv, P, W] -> dst: [nb*Hkv, T, W]
    const int64_t width = value ? p->v_head_size : p->head_size;
    const int64_t n = (int64_t)p->nb * p->kv_num_heads * p->total * width;
    if (n > 0) {
        load_kv_kernel<<<elem_blocks(n), ELEM_THREADS, 0, stream>>>(*p, cur, past, nonpad, value,
                                                                    dst, n);
        OPP_CUDA_TRY(cudaGetLastError());
    }
    return OPP_STATUS_SUCCESS;
}

extern "C" opp_status_t opp__a24g_exact_stage_launch(const opp__a24g_params_t *p,
                                                     const void *attn_mask, const int64_t *nonpad,
                                                     double *sc, int32_t *zero_rows, void *qk_out,
                                                     struct CUstream_st *stream) {
    // sc: [nb*Hq*rows, T] scores -> probabilities; zero_rows: [nb*Hq*rows];
    // qk_out: [B, Hq, S_q, T] (rows of this chunk only), attn_mask: broadcast to [B, Hq, S_q, M]
    const int64_t n_rows = (int64_t)p->nb * p->q_num_heads * p->rows;
    if (n_rows > 0) {
        const int threads = p->total >= 4096 ? 256 : (p->total >= 512 ? 128 : 32);
        const unsigned blocks = (unsigned)(n_rows < MAX_BLOCKS ? n_rows : MAX_BLOCKS);
        exact_stage_kernel<<<blocks, threads, 0, stream>>>(*p, attn_mask, nonpad, sc, zero_rows,
                                                           qk_out, n_rows);
        OPP_CUDA_TRY(cudaGetLastError());
    }
    return OPP_STATUS_SUCCESS;
}

extern "C" opp_status_t opp__a24g_store_y_launch(const opp__a24g_params_t *p, const double *yd,
                                                 const int32_t *zero_rows, void *y,
                                                 struct CUstream_st *stream) {
    // yd: [nb*Hq*rows, Dv], zero_rows: [nb*Hq*rows] -> y: [B, Hq, S_q, Dv] or [B, S_q, Hq*Dv]
    const int64_t n = (int64_t)p->nb * p->q_num_heads * p->rows * p->v_head_size;
    if (n > 0) {
        store_y_kernel<<<elem_blocks(n), ELEM_THREADS, 0, stream>>>(*p, yd, zero_rows, y, n);
        OPP_CUDA_TRY(cudaGetLastError());
    }
    return OPP_STATUS_SUCCESS;
}

extern "C" opp_status_t opp__a24g_present_launch(const opp__a24g_params_t *p, const void *cur,
                                                 const void *past, int value, void *present,
                                                 struct CUstream_st *stream) {
    // cur: [B, Hkv, S_kv, W] or 3D, past: [B, Hkv, P, W] -> present: [B, Hkv, T, W]
    const int64_t width = value ? p->v_head_size : p->head_size;
    const int64_t n = (int64_t)p->batch * p->kv_num_heads * p->total * width;
    if (n == 0) {
        return OPP_STATUS_SUCCESS;
    }
    if (p->dtype == OPP_DTYPE_F32) {
        present_kernel<uint32_t><<<elem_blocks(n), ELEM_THREADS, 0, stream>>>(
            *p, (const uint32_t *)cur, (const uint32_t *)past, value, (uint32_t *)present, n);
    } else {
        present_kernel<uint16_t><<<elem_blocks(n), ELEM_THREADS, 0, stream>>>(
            *p, (const uint16_t *)cur, (const uint16_t *)past, value, (uint16_t *)present, n);
    }
    OPP_CUDA_TRY(cudaGetLastError());
    return OPP_STATUS_SUCCESS;
}
