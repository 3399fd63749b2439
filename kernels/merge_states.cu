/*
 * merge_states.cu - the kernel of opp_merge_attention_states(): merges n
 * partial attention states (o_i, lse_i) over disjoint key sets into the
 * state over their union (lib/oppacked.h, "Merge attention states").
 *
 *   states_out [n, rows, Hq, Dv]  dtype      (n = num_states)
 *   states_lse [n, Hq, rows]      float32    (natural log, -inf: no key)
 *   out        [rows, Hq, Dv]     dtype
 *   lse_out    [Hq, rows]         float32 or NULL
 *
 * Per line (row t, head h), each thread of the line's columns:
 *   M   = max_i lse_i (a NaN or +inf lse makes the line NaN)
 *   w_i = expf(lse_i - M); states with w_i == 0 are skipped (never read)
 *   out = (sum_i w_i o_i) / (sum_i w_i), ascending i, fmaf, one IEEE
 *         division, one RNE rounding to dtype; M = -inf: out = +0
 *   lse = M + logf(sum_i w_i)    (written by the line's first thread)
 * Every output element is computed by one thread in that fixed order, so
 * the bits depend only on the inputs, never on the grid. Compiled with
 * -fmad=false: every multiply-add is the explicit fmaf.
 * Threads: one per unit (line, chunk of VEC columns); VEC = 16 bytes of
 * the dtype when a line is a multiple of 16 bytes (the base pointers are
 * 16-byte aligned, checked by the host), else 1. Blocks of 256 threads, a
 * grid-stride loop over the units, at most MERGE_MAX_BLOCKS blocks.
 * No shared memory, no atomics, no allocation, no synchronization.
 * Build: nvcc_object(//kernels:merge).
 */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "kernels/merge_states.h"
#include "lib/internal/check.h"

#define MERGE_THREADS    256
#define MERGE_MAX_BLOCKS 65536

// --- kernels

/* Storage types: float <-> dtype (decoding is exact; encoding one RNE). */
template <int DT> struct merge_type;
template <> struct merge_type<OPP_DTYPE_F32> {
    typedef float storage;
    static __device__ __forceinline__ float load(storage x) {
        return x;
    }
    static __device__ __forceinline__ storage store(float x) {
        return x;
    }
    static __device__ __forceinline__ storage nan() {
        return __uint_as_float(0x7FC00000u);
    }
};
template <> struct merge_type<OPP_DTYPE_F16> {
    typedef __half storage;
    static __device__ __forceinline__ float load(storage x) {
        return __half2float(x);
    }
    static __device__ __forceinline__ storage store(float x) {
        return __float2half_rn(x);
    }
    static __device__ __forceinline__ storage nan() {
        return __ushort_as_half(0x7E00);
    }
};
template <> struct merge_type<OPP_DTYPE_BF16> {
    typedef __nv_bfloat16 storage;
    static __device__ __forceinline__ float load(storage x) {
        return __bfloat162float(x);
    }
    static __device__ __forceinline__ storage store(float x) {
        return __float2bfloat16_rn(x);
    }
    static __device__ __forceinline__ storage nan() {
        return __ushort_as_bfloat16(0x7FC0);
    }
};

/* VEC elements of storage type S moved as one access (16 bytes or one
 * element). */
template <typename S, int VEC> struct alignas(sizeof(S) * VEC) merge_vec { S x[VEC]; };

struct merge_args {
    const void *states_out;  /* [n, rows, Hq, Dv] */
    const float *states_lse; /* [n, Hq, rows] */
    void *out;               /* [rows, Hq, Dv] */
    float *lse_out;          /* [Hq, rows] or NULL */
    int64_t rows;
    int32_t n, hq, dv;
};

template <int DT, int VEC>
static __global__ void __launch_bounds__(MERGE_THREADS) merge_states_kernel(const merge_args a) {
    typedef typename merge_type<DT>::storage S;
    typedef merge_vec<S, VEC> V;
    const int64_t chunks = a.dv / VEC;
    const int64_t lines = a.rows * a.hq;
    const int64_t state_elems = lines * a.dv;
    const int64_t lse_state = (int64_t)a.hq * a.rows;
    const S *so = (const S *)a.states_out;
    S *out = (S *)a.out;
    for (int64_t u = (int64_t)blockIdx.x * MERGE_THREADS + threadIdx.x; u < lines * chunks;
         u += (int64_t)gridDim.x * MERGE_THREADS) {
        const int64_t line = u / chunks; /* t * Hq + h */
        const int64_t col = (u - line * chunks) * VEC;
        const int64_t t = line / a.hq;
        const int64_t h = line - t * a.hq;
        const float *lse = a.states_lse + h * a.rows + t; /* state i at + i * lse_state */
        float m = -INFINITY;
        bool undefined = false;
        for (int32_t i = 0; i < a.n; ++i) {
            const float l = __ldg(lse + i * lse_state);
            undefined = undefined || l != l || l == INFINITY;
            m = fmaxf(m, l);
        }
        V res;
        float lse_res;
        if (undefined) {
#pragma unroll
            for (int k = 0; k < VEC; ++k) {
                res.x[k] = merge_type<DT>::nan();
            }
            lse_res = __uint_as_float(0x7FC00000u);
        } else if (m == -INFINITY) { /* no state saw a key */
#pragma unroll
            for (int k = 0; k < VEC; ++k) {
                res.x[k] = merge_type<DT>::store(0.0f);
            }
            lse_res = -INFINITY;
        } else {
            float acc[VEC];
#pragma unroll
            for (int k = 0; k < VEC; ++k) {
                acc[k] = 0.0f;
            }
            float wsum = 0.0f;
            const V *src = (const V *)(so + line * a.dv + col); /* state i at + i * state_elems */
            for (int32_t i = 0; i < a.n; ++i) {
                const float w = expf(__ldg(lse + i * lse_state) - m);
                if (w == 0.0f) {
                    continue; /* skipped: its out is never read */
                }
                wsum += w;
                const V o = *(const V *)((const S *)src + i * state_elems);
#pragma unroll
                for (int k = 0; k < VEC; ++k) {
                    acc[k] = fmaf(w, merge_type<DT>::load(o.x[k]), acc[k]);
                }
            }
#pragma unroll
            for (int k = 0; k < VEC; ++k) {
                res.x[k] = merge_type<DT>::store(__fdiv_rn(acc[k], wsum));
            }
            lse_res = m + logf(wsum); /* wsum >= 1: the max state has w = 1 */
        }
        *(V *)(out + line * a.dv + col) = res;
        if (a.lse_out != NULL && col == 0) {
            a.lse_out[h * a.rows + t] = lse_res;
        }
    }
}

// --- launchers

template <int DT>
static opp_status_t merge_launch_dt(const merge_args &a, size_t esize, cudaStream_t stream) {
    const int vec = (int)(16 / esize);
    const bool vector = ((size_t)a.dv * esize) % 16 == 0;
    const int64_t units = a.rows * a.hq * (vector ? a.dv / vec : a.dv);
    const int64_t want = (units + MERGE_THREADS - 1) / MERGE_THREADS;
    const unsigned blocks = (unsigned)(want < MERGE_MAX_BLOCKS ? want : MERGE_MAX_BLOCKS);
    if (vector) {
        merge_states_kernel<DT, (int)(16 / sizeof(typename merge_type<DT>::storage))>
            <<<blocks, MERGE_THREADS, 0, stream>>>(a);
    } else {
        merge_states_kernel<DT, 1><<<blocks, MERGE_THREADS, 0, stream>>>(a);
    }
    OPP_CUDA_TRY(cudaGetLastError());
    return OPP_STATUS_SUCCESS;
}

/* states_out [n, rows, Hq, Dv], states_lse [n, Hq, rows] -> out [rows, Hq, Dv],
 * lse_out [Hq, rows]; Tq = rows (one merged query row per line). */
extern "C" opp_status_t opp__merge_states_launch(opp_dtype_t dtype, int32_t num_states,
                                                 int64_t rows, int32_t num_heads,
                                                 int32_t v_head_size, const void *states_out,
                                                 const float *states_lse, void *out, float *lse_out,
                                                 struct CUstream_st *stream) {
    const merge_args a = {states_out, states_lse, out,       lse_out,
                          rows,       num_states, num_heads, v_head_size};
    switch ((int)dtype) {
    case OPP_DTYPE_F32:
        return merge_launch_dt<OPP_DTYPE_F32>(a, 4, stream);
    case OPP_DTYPE_F16:
        return merge_launch_dt<OPP_DTYPE_F16>(a, 2, stream);
    case OPP_DTYPE_BF16:
        return merge_launch_dt<OPP_DTYPE_BF16>(a, 2, stream);
    default:
        return opp__set_error(OPP_STATUS_INTERNAL_ERROR, __FILE__, __LINE__,
                              "merge launcher called with dtype %d", (int)dtype);
    }
}
