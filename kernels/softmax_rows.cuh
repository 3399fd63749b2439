/*
 * softmax_rows.cuh - the float arithmetic of the FAST kernels' online
 * softmax and epilogue, on the scores and outputs of one thread's pair of
 * rows, shared by the flash kernel (kernels/flash_attention.cuh, mma.sync)
 * and the Hopper kernel (kernels/hopper_attention.cuh, wgmma): softcap,
 * masks, running max and sum with the rescale factor, and O / l and LSE.
 * The rules (what each step computes, and why alpha is exactly 1 for an
 * unchanged max) are written out in flash_attention.cuh's header.
 *
 * Fragment layout (the fp32 accumulator of mma.m16n8k16 and of wgmma
 * m64nNk16 alike, per warp; g = lane / 4, t = lane % 4 = qc):
 *   s [N8][4]   N8 groups of 8 columns; s[n][0..1]: row g, columns
 *               8n + 2t, 8n + 2t + 1; s[n][2..3]: row g + 8, the same columns
 * so row h (0: g, 1: g + 8) of the pair is s[n][2h + e], e = 0, 1, and the
 * four lanes of a quad (t = 0..3) hold one row between them. The Hopper
 * kernel's flat accumulators (float[4 N8], element 4n + e) are this array.
 * Every helper is __forceinline__ and fully unrolled: with constant indices
 * the fragments stay in registers. Scalars the callers read from their
 * kernel arguments (cap_log2, cap_scale, cap_x2, dv) are taken by reference, so the
 * reads stay where the loops were written inline before: the PTX and SASS
 * of both kernels are those of the inline code, instruction for instruction
 * (tools/sass_diff.sh; by value, nvcc picked another, equal, load of dv and
 * swapped the operands of the softcap's multiply in the PTX).
 */
#ifndef OPP_KERNELS_SOFTMAX_ROWS_CUH
#define OPP_KERNELS_SOFTMAX_ROWS_CUH

#include <math.h>
#include <stdint.h>

#include "kernels/flash_tile.cuh"

/* Softcap in the log2 domain: s = cap_log2 tanh(s cap_scale), with
 * cap_log2 = c log2(e) and cap_scale = scale / c (then sl = 1).
 * FOLD (the Hopper kernel) writes it as
 *   sign(s) (cap_log2 - 2 cap_log2 / (2^(|s| cap_x2) + 1)),  cap_x2 = 2 log2(e) cap_scale
 * (tanh y = 1 - 2 / (e^{2y} + 1)): per score one FMUL, MUFU.EX2, FADD,
 * MUFU.RCP, one FFMA and the sign, the product with cap_log2 folded into
 * the FFMA (one rounding where 1 - 2 r and its product took two); two FMUL
 * a score fewer than !FOLD, cap_log2 flash_tanh(s cap_scale), which the
 * portable kernels keep: on the H200 FOLD made softcap_hd256_bf16 2.7 %
 * faster on the Hopper kernel, 0.8-1.2 % on the portable one, where it made
 * the D 64 kernel (no softcap) 2.1-2.6 % slower (bench/RESULTS.md, eighteenth
 * session). Both saturate to +-cap_log2; +-0 stays +-0; NaN stays NaN.
 * s: [N8][4] raw scores. */
template <bool FOLD, int N8>
__device__ __forceinline__ void flash_softcap(float (&s)[N8][4], const float &cap_log2,
                                              const float &cap_scale, const float &cap_x2) {
    if constexpr (FOLD) {
        const float m2 = -2.0f * cap_log2;
#pragma unroll
        for (int n = 0; n < N8; ++n) {
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const float x = s[n][e];
                const float r = flash_rcp(flash_exp2(fabsf(x) * cap_x2) + 1.0f);
                s[n][e] = copysignf(fmaf(r, m2, cap_log2), x);
            }
        }
    } else {
#pragma unroll
        for (int n = 0; n < N8; ++n) {
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                s[n][e] = cap_log2 * flash_tanh(s[n][e] * cap_scale);
            }
        }
    }
}

/* Sets the scores of row h at columns >= kend (relative to the key block)
 * to -inf. s: [N8][4]; qc: lane % 4. */
template <int N8>
__device__ __forceinline__ void flash_mask_row(float (&s)[N8][4], int h, int32_t kend, int qc) {
#pragma unroll
    for (int n = 0; n < N8; ++n) {
#pragma unroll
        for (int e = 0; e < 2; ++e) {
            if (n * 8 + 2 * qc + e >= kend) {
                s[n][2 * h + e] = -INFINITY;
            }
        }
    }
}

/* The online softmax of one key block on a row pair: the new running max m
 * (raw, over the quad), alpha = 2^(m_old sl - m_new sl) (exactly 1 when the
 * max did not change), P = 2^(s sl - m sl) into s, l = l alpha + this
 * thread's sum of P (reduced over the quad only at the end). A row whose
 * max is still -inf uses 0 in its exponentials: p = 0, l and O stay 0.
 * s: [N8][4] scores in, P out; m, l, alpha: per row h. */
template <int N8>
__device__ __forceinline__ void flash_softmax_rows(float (&s)[N8][4], float (&m)[2], float (&l)[2],
                                                   float (&alpha)[2], float sl) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        float mx = m[h];
#pragma unroll
        for (int n = 0; n < N8; ++n) {
            mx = fmaxf(mx, fmaxf(s[n][2 * h], s[n][2 * h + 1]));
        }
        mx = fmaxf(mx, __shfl_xor_sync(0xFFFFFFFFu, mx, 1));
        mx = fmaxf(mx, __shfl_xor_sync(0xFFFFFFFFu, mx, 2));
        /* all masked so far: exponentials against 0, so p = 0 and l, O stay 0 */
        const float mu = mx == -INFINITY ? 0.0f : __fmul_rn(mx, sl);
        /* exactly 1 when the max did not change: an unchanged row's bits
         * do not depend on how many blocks its tile runs (no contraction
         * of m sl - mu into an FFMA, whose residual is not 0) */
        alpha[h] = mx == m[h] ? 1.0f : flash_exp2(__fmul_rn(m[h], sl) - mu);
        m[h] = mx;
        float sum = 0.0f;
#pragma unroll
        for (int n = 0; n < N8; ++n) {
#pragma unroll
            for (int e = 0; e < 2; ++e) {
                const float p = flash_exp2(fmaf(s[n][2 * h + e], sl, -mu));
                s[n][2 * h + e] = p;
                sum += p;
            }
        }
        l[h] = l[h] * alpha[h] + sum;
    }
}

/* O *= alpha, row h of the pair by alpha[h] (the caller decides whether
 * some row of the warp needs it). o: [N8][4] output accumulators. */
template <int N8>
__device__ __forceinline__ void flash_rescale_rows(float (&o)[N8][4], const float (&alpha)[2]) {
#pragma unroll
    for (int n = 0; n < N8; ++n) {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            o[n][e] *= alpha[e / 2];
        }
    }
}

/* A row's l: this thread's partial sum added over its quad. */
__device__ __forceinline__ float flash_quad_sum(float x) {
    x += __shfl_xor_sync(0xFFFFFFFFu, x, 1);
    x += __shfl_xor_sync(0xFFFFFFFFu, x, 2);
    return x;
}

/* A row's 1 / l (0 for l = 0: a row that saw no key stores zeros). */
__device__ __forceinline__ float flash_row_inv(float sum) {
    return sum > 0.0f ? 1.0f / sum : 0.0f;
}

/* Stores row h of O / l in the storage type, columns < dv of this thread
 * (8n + 2 qc, + 1). orow: the row's first element; o: [N8][4] fp32
 * accumulators; inv: flash_row_inv(l). */
template <int DT, int N8>
__device__ __forceinline__ void flash_store_row(uint16_t *orow, const float (&o)[N8][4], int h,
                                                float inv, int qc, const int &dv) {
#pragma unroll
    for (int n = 0; n < N8; ++n) {
        const int col = n * 8 + 2 * qc;
        if (col < dv) {
            *(uint32_t *)(orow + col) =
                flash_type<DT>::pack(o[n][2 * h] * inv, o[n][2 * h + 1] * inv);
        }
    }
}

/* A row's LSE (natural log) from its raw max m and sum l:
 * (m sl + log2 l) ln 2, -inf for l = 0. */
__device__ __forceinline__ float flash_row_lse(float m, float sum, float sl) {
    return sum > 0.0f ? (__fmul_rn(m, sl) + __log2f(sum)) * 0.69314718055994531f : -INFINITY;
}

#endif /* OPP_KERNELS_SOFTMAX_ROWS_CUH */
