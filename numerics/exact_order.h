/*
 * exact_order.h - THE fixed evaluation order of the exact attention path.
 *
 * Every exact implementation (the CPU packed reference, the CPU padded
 * Attention-24 reference, the GPU exact kernel, and the non-GEMM stages of
 * the cuBLAS reference) computes one query row exactly like this, so their
 * results are bit-identical. This header is host + device (static inline,
 * OPP_HD); code that includes it must be compiled without floating-point
 * contraction (gcc -ffp-contract=off, nvcc -fmad=false): every fused
 * multiply-add below is an explicit fma().
 *
 * One query row (query head h, key/value head hk, n keys j = 0 .. n-1 in the
 * sequence's own key numbering - for Attention-24 with past, the index into
 * the concatenation [past, new]):
 *
 *   s      = sqrt((double)scale)           (scale == 0: sqrt(1/sqrt((double)D)))
 *   qs_d   = (double)q_d * s               (one rounding per element)
 *   ks_jd  = (double)k_jd * s
 *   x_j    = 0.0; for d = 0 .. D-1 ascending: x_j = fma(qs_d, ks_jd, x_j)
 *   softcap c > 0: x_j = c * opp__tanh(x_j / c)                 (before masks)
 *   bias   (Attention-24 attn_mask / causal only): x_j = x_j + bias_j;
 *          a key that is not visible has x_j = -inf and is never read again
 *          (its V row is not touched: padding may hold NaN).
 *   m      = max over visible x_j, NaN-propagating (opp__max_nan); order-free.
 *   if no key is visible, or m == -inf: y = 0 (exact zeros), p = 0.
 *   e_j    = opp__exp(x_j - m)
 *   S      = OPP_EXACT_SUM over j of e_j                        (see below)
 *   p_j    = e_j / S                       (one division per key)
 *   y_v    = OPP_EXACT_SUM over j of p_j * v_jv, each term fused:
 *            part = fma(p_j, (double)v_jv, part)
 *   out_v  = y_v rounded once (round-to-nearest-even) to the output dtype.
 *
 * OPP_EXACT_SUM (keys in fixed chunks, so a GPU can split the key range):
 *   total = 0.0
 *   for chunk c = 0, 1, ... (keys c*OPP_EXACT_KEY_CHUNK .. +CHUNK-1) ascending:
 *       part = 0.0
 *       for j in the chunk, ascending, visible only: part = part + term_j
 *                                        (for y: part = fma(p_j, v_jv, part))
 *       total = total + part
 *   Chunks are numbered by the key index j of the row's key sequence, never by
 *   a position in memory, so packed and padded layouts agree. Invisible keys
 *   contribute nothing (adding +0.0 would be an exact no-op anyway).
 */
#ifndef OPP_NUMERICS_EXACT_ORDER_H
#define OPP_NUMERICS_EXACT_ORDER_H

#include <math.h>
#include <stdint.h>

#if defined(__CUDACC__)
#define OPP_HD __host__ __device__
#else
#define OPP_HD
#endif

/* Keys per summation chunk (see OPP_EXACT_SUM above). Fixed forever: changing
 * it changes result bits. */
#define OPP_EXACT_KEY_CHUNK 64

/* sqrt(scale) with the default scale 1/sqrt(head_size) when scale == 0. */
OPP_HD static inline double opp__exact_sqrt_scale(float scale, int32_t head_size) {
    if (scale == 0.0f) {
        return sqrt(1.0 / sqrt((double)head_size));
    }
    return sqrt((double)scale);
}

/* Dot product of two scaled rows in the fixed order: ascending d, fused. */
OPP_HD static inline double opp__exact_dot(const double *a, const double *b, int32_t n) {
    double acc = 0.0;
    for (int32_t d = 0; d < n; ++d) {
        acc = fma(a[d], b[d], acc);
    }
    return acc;
}

/* max that propagates NaN from either side (as numpy's max does). */
OPP_HD static inline double opp__max_nan(double a, double b) {
    if (a != a) {
        return a;
    }
    if (b != b) {
        return b;
    }
    return a > b ? a : b;
}

#endif /* OPP_NUMERICS_EXACT_ORDER_H */
