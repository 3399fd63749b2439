/*
 * softmax_rows.cuh - the float arithmetic of the FAST kernels' online
 * softmax and epilogue, on the scores and outputs of one thread's pair of
 * rows, shared by the flash kernel (kernels/flash_attention.cuh, mma.sync)
 * and the Hopper kernel (kernels/hopper_attention.cuh, wgmma): softcap,
 * masks, running max, frame and sum with the rescale factor, and O / l
 * and LSE. The rules are written out in flash_attention.cuh's header and at
 * flash_row_frame below.
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

/* The frame of row's P in key block j (log2 domain): P = 2^(s sl - f), O
 * and l kept in the same frame. With bm the block's max (raw), mx the new
 * running max and bs = bm sl (all roundings written out, none contracted):
 *   f = bs - ceil(bs - mx sl)        so that bm's P is exactly 2^k, k <= 0
 * f lies in (mx sl - 1, mx sl]: every P <= 1 and O, l stay within a factor
 * 2 of the running-max frame. The block's largest weight is thus exact in
 * the 16-bit type P V multiplies (with the running max as the frame, as
 * FlashAttention's, it is rounded unless the block raised the max), which
 * removes the error of the weights that dominate a peaked row. The split
 * kernels' decode_gqa_bf16 on an H100: RMS error against EXACT's rounded
 * output 64 % below FlashAttention-2's (29 % before), against the double
 * result 2.3 % (1.5 %), for 0.3 % more time (bench/RESULTS.md,
 * twenty-ninth session; the Hopper kernel's switch OPP__HOPPER_FRAME has
 * the figures of its workloads). alpha = 2^(f_old - f): the factor O and l
 * are rescaled by before the block's P V; exactly 1 when the frame did not
 * move, and the frame does not move in a block with no visible key (bm
 * -inf), so such a block changes none of the row's bits. A row whose max
 * is still -inf has f = 0 (p = 0, l and O stay 0) and alpha 0 on its first
 * visible block. m: the running max (in/out); f: the frame (in/out). */
__device__ __forceinline__ float flash_row_frame(float &m, float &f, float bm, float sl) {
    if (bm == -INFINITY) {
        return 1.0f;
    }
    const float mx = fmaxf(m, bm);
    const float bs = __fmul_rn(bm, sl);
    const float fn = __fadd_rn(bs, -ceilf(__fadd_rn(bs, -__fmul_rn(mx, sl))));
    const float alpha = m == -INFINITY ? 0.0f : fn == f ? 1.0f : flash_exp2(__fadd_rn(f, -fn));
    m = mx;
    f = fn;
    return alpha;
}

/* The online softmax of one key block on a row pair, P = 2^(s sl - fr):
 * FRAME (the portable 16-bit kernels, whose P V rounds P, and the Hopper
 * kernel under OPP__HOPPER_FRAME 1): fr = the row's frame f
 * (flash_row_frame, from the block's max over the quad); else (the 3xTF32
 * kernel, whose P keeps its low part; an A/B build of the Hopper kernel,
 * OPP__HOPPER_FRAME 0): fr = f = m sl for m the new running max
 * (a row whose max is still -inf uses 0: p = 0, l and O stay 0), alpha =
 * 2^(m_old sl - m sl), exactly 1 when the max did not change (no
 * contraction of m sl - fr into an FFMA, whose residual is not 0). P into
 * s, l = l alpha + this thread's sum of P (reduced over the quad only at
 * the end). s: [N8][4] scores in, P out; m, f, l, alpha: per row h. */
template <bool FRAME, int N8>
__device__ __forceinline__ void flash_softmax_block(float (&s)[N8][4], float (&m)[2], float (&f)[2],
                                                    float (&l)[2], float (&alpha)[2], float sl) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        float mx = FRAME ? -INFINITY : m[h];
#pragma unroll
        for (int n = 0; n < N8; ++n) {
            mx = fmaxf(mx, fmaxf(s[n][2 * h], s[n][2 * h + 1]));
        }
        mx = fmaxf(mx, __shfl_xor_sync(0xFFFFFFFFu, mx, 1));
        mx = fmaxf(mx, __shfl_xor_sync(0xFFFFFFFFu, mx, 2));
        float fr;
        if constexpr (FRAME) {
            alpha[h] = flash_row_frame(m[h], f[h], mx, sl); /* mx: the block's max */
            fr = f[h];
        } else {
            fr = mx == -INFINITY ? 0.0f : __fmul_rn(mx, sl);
            alpha[h] = mx == m[h] ? 1.0f : flash_exp2(__fmul_rn(m[h], sl) - fr);
            m[h] = mx;
            f[h] = fr; /* the frame is m sl: flash_frame_lse gives flash_row_lse's LSE */
        }
        float sum = 0.0f;
#pragma unroll
        for (int n = 0; n < N8; ++n) {
#pragma unroll
            for (int e = 0; e < 2; ++e) {
                const float p = flash_exp2(fmaf(s[n][2 * h + e], sl, -fr));
                s[n][2 * h + e] = p;
                sum += p;
            }
        }
        l[h] = l[h] * alpha[h] + sum;
    }
}

/* The 16-bit kernels' softmax of a key block (P in the row's frame). */
template <int N8>
__device__ __forceinline__ void flash_softmax_rows(float (&s)[N8][4], float (&m)[2], float (&f)[2],
                                                   float (&l)[2], float (&alpha)[2], float sl) {
    flash_softmax_block<true>(s, m, f, l, alpha, sl);
}

/* The 3xTF32 kernel's (P against the running max; LSE flash_row_lse). */
template <int N8>
__device__ __forceinline__ void flash_softmax_rows_max(float (&s)[N8][4], float (&m)[2],
                                                       float (&l)[2], float (&alpha)[2], float sl) {
    float unused[2];
    flash_softmax_block<false>(s, m, unused, l, alpha, sl);
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

/* Folds a slice's partial of a row pair into the split's (OPP__SPLIT_SLICES,
 * kernels/split_config.h), slices in order: per row h, fs = the slice's
 * frame (-inf: it saw no key, and changes nothing), ls its sum (the whole
 * row's, flash_quad_sum); F, L: the fold's frame and sum so far (-inf, 0
 * before the first slice that saw a key, which is taken as it is); else F'
 * = max(F, fs), a = 2^(F - F'), b = 2^(fs - F') (each exactly 1 at the
 * max), O = fma(os, b, O a), L = fma(ls, b, L a). o, os: [N8][4] output
 * accumulators (this thread's columns; the caller's N8 may cover part of
 * the row). Every tile folds through this function, so a partial's bits do
 * not depend on which tile ran its slices. */
template <int N8>
__device__ __forceinline__ void flash_slice_fold(float (&o)[N8][4], float (&F)[2], float (&L)[2],
                                                 const float (&os)[N8][4], const float (&fs)[2],
                                                 const float (&ls)[2]) {
    float a[2], b[2];
    bool take[2], skip[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        skip[h] = fs[h] == -INFINITY;
        take[h] = !skip[h] && F[h] == -INFINITY;
        const float fn = fmaxf(F[h], fs[h]);
        a[h] = F[h] == fn ? 1.0f : flash_exp2(__fadd_rn(F[h], -fn));
        b[h] = fs[h] == fn ? 1.0f : flash_exp2(__fadd_rn(fs[h], -fn));
        if (take[h]) {
            F[h] = fs[h];
            L[h] = ls[h];
        } else if (!skip[h]) {
            F[h] = fn;
            L[h] = fmaf(ls[h], b[h], __fmul_rn(L[h], a[h]));
        }
    }
#pragma unroll
    for (int n = 0; n < N8; ++n) {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            const int h = e / 2;
            o[n][e] = take[h]   ? os[n][e]
                      : skip[h] ? o[n][e]
                                : fmaf(os[n][e], b[h], __fmul_rn(o[n][e], a[h]));
        }
    }
}

/* The fold's state before its first slice (flash_slice_fold): frame -inf,
 * sum 0, O 0 (a row no slice reaches stores zeros). */
template <int N8>
__device__ __forceinline__ void flash_slice_start(float (&o)[N8][4], float (&F)[2], float (&L)[2]) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        F[h] = -INFINITY;
        L[h] = 0.0f;
    }
#pragma unroll
    for (int n = 0; n < N8; ++n) {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            o[n][e] = 0.0f;
        }
    }
}

/* A slice's last block done (the split tile and the cp.async narrow tile,
 * which run the slices in turn): the slice's frame (-inf for a row that
 * saw no key) and sum over the quad folded into (ao, F, L) by
 * flash_slice_fold, then the online softmax's state m, f, l and O reset
 * for the next slice. */
template <int N8>
__device__ __forceinline__ void flash_slice_end(float (&ao)[N8][4], float (&F)[2], float (&L)[2],
                                                float (&o)[N8][4], float (&m)[2], float (&f)[2],
                                                float (&l)[2]) {
    float fs[2], ls[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        fs[h] = m[h] == -INFINITY ? -INFINITY : f[h];
        ls[h] = flash_quad_sum(l[h]);
        m[h] = -INFINITY;
        f[h] = 0.0f;
        l[h] = 0.0f;
    }
    flash_slice_fold(ao, F, L, o, fs, ls);
#pragma unroll
    for (int n = 0; n < N8; ++n) {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            o[n][e] = 0.0f;
        }
    }
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

/* A row's LSE (natural log) from its frame f (flash_row_frame) and its sum
 * l in that frame: (f + log2 l) ln 2, -inf for l = 0. */
__device__ __forceinline__ float flash_frame_lse(float f, float sum) {
    return sum > 0.0f ? (f + __log2f(sum)) * 0.69314718055994531f : -INFINITY;
}

/* A row's LSE from its raw max m and sum l (P against the running max: the
 * frame is m sl): (m sl + log2 l) ln 2, -inf for l = 0. */
__device__ __forceinline__ float flash_row_lse(float m, float sum, float sl) {
    return flash_frame_lse(__fmul_rn(m, sl), sum);
}

#endif /* OPP_KERNELS_SOFTMAX_ROWS_CUH */
