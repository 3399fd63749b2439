/*
 * tf32x3_ops.cuh - the pieces of the opt-in 3xTF32 kernels
 * (kernels/tf32x3_attention.cuh, one warpgroup a block; kernels/tf32x3_ws.cuh,
 * warp-specialised): the compile-time switches of their arithmetic, the
 * split of an fp32 value into tf32 hi + lo, the 128-byte-swizzled fp32
 * tile layout and its wgmma descriptors, the split of a staged K or V tile
 * into its hi and lo tiles, and the issue of one matrix product as three
 * tf32 wgmma products (S = Q K^T, O (+)= P V); a consumer's P split, O
 * merge and row stores. A configuration C supplies
 * DB, BN, KS, N8, O8, PITCH, CHUNKS and PANEL. Device code only; sm_90a.
 */
#ifndef OPP_KERNELS_TF32X3_OPS_CUH
#define OPP_KERNELS_TF32X3_OPS_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include "kernels/flash_config.cuh"
#include "kernels/hopper_ops.cuh"
#include "kernels/kernel_list.h"
#include "kernels/softmax_rows.cuh"
#include "kernels/wgmma_tf32_ops.cuh"

/* Compile-time switches for A/B builds (tools/ab_defines.sh). The
 * default, O_FRESH 1, is the build measured on an H100 in the twenty-fourth
 * session (bench/RESULTS.md); O_FRESH 0 sums as the kernel before it did,
 * whose error was 5-12x the FFMA kernel's. LO_RN 1 builds (no spill) but
 * has not run on a GPU. (V_j's split under S = Q K_j^T, the schedule below,
 * was measured as a switch too: the same bits as splitting both first, and
 * level to 1.2 % faster.)
 *   OPP__TF32X3_LO_RN    1: lo rounded to tf32 to nearest as well (a
 *                        Veltkamp split, three fp32 operations), instead of
 *                        the tensor core's truncation of it: about half the
 *                        lo term's own error, which bench/tf32x3_model.py
 *                        finds negligible; other bits.
 *   OPP__TF32X3_O_FRESH  1: P V_j into fresh accumulators, then O = alpha O
 *                        + (P V_j) in one FFMA an element (in place of the
 *                        rescale and the products' accumulation into O), and
 *                        in both products the small terms of every k step
 *                        first (tf32x3_issue): the tensor core's additions,
 *                        which truncate, then round against one block's
 *                        small terms or sum instead of all of O; other bits
 *                        than 0 (bench/tf32x3_model.py models it). */
#ifndef OPP__TF32X3_LO_RN
#define OPP__TF32X3_LO_RN 0
#endif
#ifndef OPP__TF32X3_O_FRESH
#define OPP__TF32X3_O_FRESH 1
#endif
/*   OPP__TF32X3_P_TRUNC  1: P's hi the tensor core's truncation of p (one
 *                        integer operation, where rounding takes two), lo =
 *                        p - hi (exact, truncated in turn): P's split one
 *                        operation an element shorter in the consumers'
 *                        softmax phase; other bits. On an H100 (twenty-
 *                        eighth session, call P2) prefill_f32 1.009x, its
 *                        RMS error against EXACT 1.08x (2.13e-7 against
 *                        1.98e-7; tf32x3_gpu_test's batches 1.01x): off. */
#ifndef OPP__TF32X3_P_TRUNC
#define OPP__TF32X3_P_TRUNC 0
#endif

/* x = hi + lo, exactly: hi = x rounded to tf32 (11 significant bits) to
 * nearest, ties away from zero - cvt.rna.tf32.f32's result for finite x
 * and +-inf, in two integer operations where ptxas emulates cvt.rna in
 * four on sm_90 - and lo = x - hi (exact: |lo| <= half a tf32 ulp of x),
 * left in fp32 for the tensor core, which reads the top 19 bits of a tf32
 * operand (truncation: lo's own error is below 2^-10 |lo| <= 2^-21 |x|).
 * A NaN x makes lo NaN (whatever hi is), so NaN reaches the products.
 * OPP__TF32X3_LO_RN: lo itself rounded to 11 significant bits to nearest
 * (Veltkamp: t = 8193 lo, lo - ... = t - (t - lo), each operation rounded
 * on its own, never contracted; |lo| <= 2^-11 |x| keeps t finite), so lo's
 * own error is below 2^-11 |lo| <= 2^-22 |x|; NaN stays NaN. */
__device__ __forceinline__ void tf32x3_split(float x, uint32_t &hi, uint32_t &lo) {
    hi = (__float_as_uint(x) + 0x1000u) & 0xFFFFE000u;
    const float r = __fsub_rn(x, __uint_as_float(hi));
#if OPP__TF32X3_LO_RN
    const float t = __fmul_rn(r, 8193.0f);
    lo = __float_as_uint(__fsub_rn(t, __fsub_rn(t, r)));
#else
    lo = __float_as_uint(r);
#endif
}

/* Byte offset of 16-byte chunk c (columns 4c .. 4c+3) of row r in a
 * swizzled [64][DB] tile: panel c / 8, row r at 128 r, chunk (c % 8) ^ (r % 8). */
template <class C> __device__ __forceinline__ uint32_t tf32x3_swz(int r, int c) {
    return (uint32_t)(c >> 3) * C::PANEL + (uint32_t)r * 128u +
           ((uint32_t)((c & 7) ^ (r & 7)) << 4);
}

/* Descriptor of k8 step ks (columns 8 ks .. 8 ks + 7) of the swizzled tile
 * at shared address tile: K-major, 8-row atoms 1024 bytes apart. */
__device__ __forceinline__ uint64_t tf32x3_desc(uint32_t tile, int ks) {
    return hop_desc_at<1024>(hop_desc_lo(tile + (uint32_t)(ks >> 2) * (64u * 128u), 16),
                             (uint32_t)(ks & 3) * 32u);
}

/* Stores v[0..3] at shared address addr (hop_st_shared_v4). */
__device__ __forceinline__ void tf32x3_st4(uint32_t addr, const uint32_t (&v)[4]) {
    hop_st_shared_v4(addr, (int32_t)v[0], (int32_t)v[1], (int32_t)v[2], (int32_t)v[3]);
}

/* Stores v at shared address addr. */
__device__ __forceinline__ void tf32x3_st1(uint32_t addr, uint32_t v) {
    asm volatile("st.shared.u32 [%0], %1;\n" ::"r"(addr), "r"(v) : "memory");
}

__device__ __forceinline__ float tf32x3_ld32(uint32_t addr) {
    float v;
    asm volatile("ld.shared.f32 %0, [%1];\n" : "=f"(v) : "r"(addr) : "memory");
    return v;
}

// --- the steps of a key block

/* A swizzled [64][DB] tile of fp32 at shared address src -> its hi (at
 * hi) and lo (at lo) tiles, same layout (src may be hi: in place): 16-byte
 * chunk i = t + NT it of the NT threads calling it (t: 0 .. NT - 1), row
 * i / CHUNKS; a quarter warp splits the eight chunks of a row's panel,
 * conflict-free. A thread's chunks are one column chunk t % CHUNKS of rows
 * t / CHUNKS + (NT / CHUNKS) it, a multiple of 8 rows apart, so they share
 * the swizzle: one offset from t, then immediates (no index arithmetic per
 * chunk). BATCH: chunks loaded before the first is split (the shared
 * accesses are volatile, so without it each load's latency is waited out
 * alone; 1: load, split, store, chunk by chunk). */
template <class C, int NT, int BATCH = 1>
__device__ __forceinline__ void tf32x3_split_k(uint32_t src, uint32_t hi, uint32_t lo, int t) {
    constexpr int IT = C::BN * C::CHUNKS / NT, RSTEP = NT / C::CHUNKS;
    static_assert(C::BN * C::CHUNKS % NT == 0 && IT % BATCH == 0, "whole chunks per thread");
    static_assert(NT % C::CHUNKS == 0 && RSTEP % 8 == 0, "rows 8 apart: one swizzle a thread");
    const uint32_t ut = (uint32_t)t, r = ut / C::CHUNKS, c = ut % C::CHUNKS;
    const uint32_t off0 = (c >> 3) * C::PANEL + r * 128u + (((c & 7u) ^ (r & 7u)) << 4);
    const uint32_t s0 = src + off0, h0 = hi + off0, l0 = lo + off0;
#pragma unroll
    for (int b = 0; b < IT; b += BATCH) {
        int4 x[BATCH];
#pragma unroll
        for (int u = 0; u < BATCH; ++u) {
            x[u] = hop_ld_shared_v4(s0 + (uint32_t)((b + u) * RSTEP * 128));
        }
#pragma unroll
        for (int u = 0; u < BATCH; ++u) {
            const uint32_t step = (uint32_t)((b + u) * RSTEP * 128);
            uint32_t h[4], l[4];
            tf32x3_split(__int_as_float(x[u].x), h[0], l[0]);
            tf32x3_split(__int_as_float(x[u].y), h[1], l[1]);
            tf32x3_split(__int_as_float(x[u].z), h[2], l[2]);
            tf32x3_split(__int_as_float(x[u].w), h[3], l[3]);
            tf32x3_st4(h0 + step, h);
            tf32x3_st4(l0 + step, l);
        }
    }
}

/* V_j, staged [key][d] at shared address src (rows of C::PITCH floats; or
 * SRC_SWZ: a swizzled [64][DB] tile, as K's) ->
 * hi / lo [d][key'] at hi / lo: chunk i = t + NT it is row d = i % DB,
 * chunk c = i / DB of the transposed tile, whose positions 4 (c % 2) + u
 * (u = 0..3) of 8-key group c / 2 hold key 8 (c / 2) + 2 u + c % 2 (the
 * order 0 2 4 6 1 3 5 7). A warp reads 32 consecutive d of one key and
 * writes chunks of 32 rows, conflict-free. A thread's d = t % DB is fixed
 * and its chunks c = t / DB + (NT / DB) it step by an even count, so its
 * keys' swizzle (key % 8 = c % 2 + 2 u) does not change with it: four
 * source offsets (one a u) from t, then immediates; a chunk's destination
 * swizzle is one XOR with an immediate. BATCH: as tf32x3_split_k's, in
 * chunks of the transposed tile. */
template <class C, int NT, bool SRC_SWZ = false, int BATCH = 1>
__device__ __forceinline__ void tf32x3_split_v(uint32_t src, uint32_t hi, uint32_t lo, int t) {
    constexpr int IT = C::DB * (C::BN / 4) / NT, CSTEP = NT / C::DB;
    static_assert(C::DB * (C::BN / 4) % NT == 0 && IT % BATCH == 0, "whole chunks per thread");
    static_assert(NT % C::DB == 0 && CSTEP % 2 == 0, "a fixed d and key parity a thread");
    const uint32_t ut = (uint32_t)t, d = ut % C::DB, c0 = ut / C::DB;
    __builtin_assume(ut < (uint32_t)NT); /* c0 < CSTEP: the destination chunks' swizzle is static */
    const uint32_t e = c0 & 1u, g0 = c0 >> 1; /* key parity, first 8-key group */
    /* source: key 8 (g0 + CSTEP / 2 it) + e + 2 u, column d */
    uint32_t sa[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) {
        const uint32_t k = 8u * g0 + e + 2u * (uint32_t)u; /* k % 8 = e + 2 u */
        sa[u] = src + (SRC_SWZ ? ((d >> 5) * C::PANEL + k * 128u +
                                  ((((d >> 2) & 7u) ^ (e + 2u * (uint32_t)u)) << 4) + (d & 3u) * 4u)
                               : (k * C::PITCH + d) * 4u);
    }
    constexpr uint32_t KEY_STEP =
        SRC_SWZ ? 8u * (CSTEP / 2) * 128u : 8u * (CSTEP / 2) * C::PITCH * 4u;
    /* destination: row d, chunk c0 + CSTEP it: panel (c >> 3), swizzle
     * ((c & 7) ^ (d & 7)); c & 7 = e | ((c0 & ~1 + CSTEP it) & 6) */
    const uint32_t drow = d * 128u, dx = (d & 7u) ^ e;
#pragma unroll
    for (int b = 0; b < IT; b += BATCH) {
        float x[BATCH][4];
#pragma unroll
        for (int v = 0; v < BATCH; ++v) {
#pragma unroll
            for (int u = 0; u < 4; ++u) {
                x[v][u] = tf32x3_ld32(sa[u] + (uint32_t)(b + v) * KEY_STEP);
            }
        }
#pragma unroll
        for (int v = 0; v < BATCH; ++v) {
            const uint32_t ce = (c0 & ~1u) + (uint32_t)(CSTEP * (b + v)); /* c without its parity */
            const uint32_t off = (ce >> 3) * C::PANEL + drow + ((dx ^ (ce & 6u)) << 4);
            uint32_t h[4], l[4];
#pragma unroll
            for (int u = 0; u < 4; ++u) {
                tf32x3_split(x[v][u], h[u], l[u]);
            }
            tf32x3_st4(hi + off, h);
            tf32x3_st4(lo + off, l);
        }
    }
}

/* tf32x3_split_v's result (the same tiles, the same bits) from a swizzled
 * [64][DB] source tile, by scatter: thread t takes key t % BN and
 * 16-byte source chunks (4 d) t / BN + (NT / BN) it, one vector load each,
 * and stores each element's hi and lo alone. Two loads a chunk of four
 * fewer than tf32x3_split_v's four (the loads wait, the stores do not),
 * twice its stores; a warp's 32 keys store to 32 banks (a key's position
 * and chunk in its transposed row make bank 4 ((c & 7) ^ (d & 7)) + pos,
 * one per key), its loads take 8 keys a phase, conflict-free. BATCH:
 * chunks loaded before the first is split. */
template <class C, int NT, int BATCH = 1>
__device__ __forceinline__ void tf32x3_split_v_scatter(uint32_t src, uint32_t hi, uint32_t lo,
                                                       int t) {
    constexpr int QSTEP = NT / C::BN, IT = (C::DB / 4) / QSTEP;
    static_assert(NT % C::BN == 0 && (C::DB / 4) % QSTEP == 0 && IT % BATCH == 0,
                  "whole chunks per thread");
    static_assert(QSTEP == 2, "two threads a key: chunk parity fixed a thread");
    const uint32_t ut = (uint32_t)t;
    __builtin_assume(ut < (uint32_t)NT);
    const uint32_t key = ut % C::BN, e = ut / C::BN; /* e: the chunks' parity (0, 1) */
    /* source chunk q = e + 2 it: (q >> 3) PANEL + key 128 + (((q & 7) ^ (key & 7)) << 4) */
    const uint32_t s0 = src + key * 128u, sx = (e ^ (key & 7u)) << 4;
    /* destination of element (d = 4 q + i, key): chunk c = 2 (key / 8) + key % 2,
     * position (key % 8) / 2; d % 8 = 4 e + i whatever it */
    const uint32_t c = 2u * (key >> 3) + (key & 1u), pos = (key & 7u) >> 1;
    uint32_t da[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const uint32_t d = 4u * e + (uint32_t)i; /* d of it 0 (d % 8 the same after) */
        da[i] = (c >> 3) * C::PANEL + d * 128u + (((c & 7u) ^ d) << 4) + pos * 4u;
    }
#pragma unroll
    for (int b = 0; b < IT; b += BATCH) {
        int4 x[BATCH];
#pragma unroll
        for (int u = 0; u < BATCH; ++u) {
            const uint32_t q2 = 2u * (uint32_t)(b + u); /* q - e */
            x[u] = hop_ld_shared_v4(s0 + ((q2 >> 3) * C::PANEL) + (sx ^ ((q2 & 6u) << 4)));
        }
#pragma unroll
        for (int u = 0; u < BATCH; ++u) {
            const uint32_t step = (uint32_t)(b + u) * 8u * 128u; /* d += 8 an it */
            const float v[4] = {__int_as_float(x[u].x), __int_as_float(x[u].y),
                                __int_as_float(x[u].z), __int_as_float(x[u].w)};
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                uint32_t h, l;
                tf32x3_split(v[i], h, l);
                tf32x3_st1(hi + da[i] + step, h);
                tf32x3_st1(lo + da[i] + step, l);
            }
        }
    }
}

/* Keeps the compiler from moving accesses of the registers of r across
 * this point (hop_fence_reg on each): placed around the products and their
 * waits, so that no read of an accumulator moves above its wait and no
 * write of an operand below the product's issue (the PTX's order is then
 * the program's, not an accident of NVVM's scheduling). */
template <class T, int N, int M> __device__ __forceinline__ void tf32x3_fence(T (&r)[N][M]) {
#pragma unroll
    for (int i = 0; i < N; ++i) {
#pragma unroll
        for (int e = 0; e < M; ++e) {
            hop_fence_reg(r[i][e]);
        }
    }
}

/* r = 0, every element (O's accumulators at an item's start). */
template <int N, int M> __device__ __forceinline__ void tf32x3_zero(float (&r)[N][M]) {
#pragma unroll
    for (int i = 0; i < N; ++i) {
#pragma unroll
        for (int e = 0; e < M; ++e) {
            r[i][e] = 0.0f;
        }
    }
}

/* Issues d (+)= A B for the STEPS k8 steps of A's fragments (ah, al: hi,
 * lo) against B's K-major tiles at b_hi / b_lo (step k: tf32x3_desc(., k)),
 * three products a step: lo x hi, hi x lo, hi x hi. fresh: the first
 * product overwrites d. Order: per step the three (OPP__TF32X3_O_FRESH 0),
 * or every step's lo x hi, then every hi x lo, then every hi x hi (1: the
 * small terms summed while d is still small, so that the truncating
 * additions round against them and not against the full sum). */
template <int STEPS>
__device__ __forceinline__ void tf32x3_issue(float (&d)[32], uint32_t (&ah)[STEPS][4],
                                             uint32_t (&al)[STEPS][4], uint32_t b_hi, uint32_t b_lo,
                                             bool fresh) {
    if (OPP__TF32X3_O_FRESH) {
#pragma unroll
        for (int k = 0; k < STEPS; ++k) {
            wgmma_tf32_rs_n64(d, al[k], tf32x3_desc(b_hi, k), !fresh || k > 0);
        }
#pragma unroll
        for (int k = 0; k < STEPS; ++k) {
            wgmma_tf32_rs_n64(d, ah[k], tf32x3_desc(b_lo, k), 1);
        }
#pragma unroll
        for (int k = 0; k < STEPS; ++k) {
            wgmma_tf32_rs_n64(d, ah[k], tf32x3_desc(b_hi, k), 1);
        }
    } else {
#pragma unroll
        for (int k = 0; k < STEPS; ++k) {
            const uint64_t dh = tf32x3_desc(b_hi, k), dl = tf32x3_desc(b_lo, k);
            wgmma_tf32_rs_n64(d, al[k], dh, !fresh || k > 0);
            wgmma_tf32_rs_n64(d, ah[k], dl, 1);
            wgmma_tf32_rs_n64(d, ah[k], dh, 1);
        }
    }
}

/* Issues S = Q K_j^T (one committed group) with Q's split tiles in shared
 * memory (q_hi, q_lo: swizzled [64][DB], K-major like K's), in
 * tf32x3_issue's order: every k step's lo x hi, then hi x lo, then hi x hi
 * (O_FRESH 1; 0: per step). s: [N8][4] accumulators (overwritten). */
template <class C>
__device__ __forceinline__ void tf32x3_qk_ss(float (&s)[C::N8][4], uint32_t q_hi, uint32_t q_lo,
                                             uint32_t k_hi, uint32_t k_lo) {
    float(&sf)[32] = *reinterpret_cast<float(*)[32]>(&s[0][0]);
    tf32x3_fence(s);
    wgmma_fence();
    if (OPP__TF32X3_O_FRESH) {
#pragma unroll
        for (int k = 0; k < C::KS; ++k) {
            wgmma_tf32_ss_n64(sf, tf32x3_desc(q_lo, k), tf32x3_desc(k_hi, k), k > 0);
        }
#pragma unroll
        for (int k = 0; k < C::KS; ++k) {
            wgmma_tf32_ss_n64(sf, tf32x3_desc(q_hi, k), tf32x3_desc(k_lo, k), 1);
        }
#pragma unroll
        for (int k = 0; k < C::KS; ++k) {
            wgmma_tf32_ss_n64(sf, tf32x3_desc(q_hi, k), tf32x3_desc(k_hi, k), 1);
        }
    } else {
#pragma unroll
        for (int k = 0; k < C::KS; ++k) {
            wgmma_tf32_ss_n64(sf, tf32x3_desc(q_lo, k), tf32x3_desc(k_hi, k), k > 0);
            wgmma_tf32_ss_n64(sf, tf32x3_desc(q_hi, k), tf32x3_desc(k_lo, k), 1);
            wgmma_tf32_ss_n64(sf, tf32x3_desc(q_hi, k), tf32x3_desc(k_hi, k), 1);
        }
    }
    wgmma_commit();
    tf32x3_fence(s);
}

/* Issues S = Q K_j^T (one committed group). s: [N8][4] accumulators
 * (overwritten); qh, ql: Q's fragments; k_hi, k_lo: K_j's split tiles. */
template <class C>
__device__ __forceinline__ void tf32x3_qk(float (&s)[C::N8][4], uint32_t (&qh)[C::KS][4],
                                          uint32_t (&ql)[C::KS][4], uint32_t k_hi, uint32_t k_lo) {
    float(&sf)[32] = *reinterpret_cast<float(*)[32]>(&s[0][0]);
    tf32x3_fence(qh);
    tf32x3_fence(ql);
    tf32x3_fence(s);
    wgmma_fence();
    tf32x3_issue<C::KS>(sf, qh, ql, k_hi, k_lo, true);
    wgmma_commit();
    tf32x3_fence(s);
}

/* Issues O += P V_j (one committed group; k: the 8-key groups). o: [O8][4]
 * accumulators (fresh: overwritten, O = P V_j); ph, pl: P's fragments;
 * v_hi, v_lo: V_j's split transposed tiles. */
template <class C>
__device__ __forceinline__ void tf32x3_pv(float (&o)[C::O8][4], uint32_t (&ph)[C::N8][4],
                                          uint32_t (&pl)[C::N8][4], uint32_t v_hi, uint32_t v_lo,
                                          bool fresh = false) {
    float(&of)[32] = *reinterpret_cast<float(*)[32]>(&o[0][0]);
    tf32x3_fence(ph);
    tf32x3_fence(pl);
    tf32x3_fence(o);
    wgmma_fence();
    tf32x3_issue<C::N8>(of, ph, pl, v_hi, v_lo, fresh);
    wgmma_commit();
    tf32x3_fence(o);
}

// --- per-row pieces of a consumer (the m64n64 accumulator layout: row
// 16 w + lane / 4 (+ 8 for h = 1), columns 8 n + 2 (lane % 4) (+ 1))

/* P's A fragments from the probabilities in s, split: group n's keys 2 qc,
 * 2 qc + 1 are its columns qc, qc + 4 (V_HI / V_LO hold the keys in that
 * order: tf32x3_split_v). */
template <class C>
__device__ __forceinline__ void tf32x3_split_p(const float (&s)[C::N8][4], uint32_t (&ph)[C::N8][4],
                                               uint32_t (&pl)[C::N8][4]) {
    auto split = [](float x, uint32_t &hi, uint32_t &lo) {
        if (OPP__TF32X3_P_TRUNC) {
            hi = __float_as_uint(x) & 0xFFFFE000u;
            lo = __float_as_uint(__fsub_rn(x, __uint_as_float(hi)));
        } else {
            tf32x3_split(x, hi, lo);
        }
    };
#pragma unroll
    for (int n = 0; n < C::N8; ++n) {
        split(s[n][0], ph[n][0], pl[n][0]);
        split(s[n][2], ph[n][1], pl[n][1]);
        split(s[n][1], ph[n][2], pl[n][2]);
        split(s[n][3], ph[n][3], pl[n][3]);
    }
}

/* O = alpha O + P V_j (oj, fresh accumulators), row h of the pair by
 * alpha[h] (exactly 1 for an unchanged max: then O + oj): one rounding an
 * element (OPP__TF32X3_O_FRESH). */
template <class C>
__device__ __forceinline__ void tf32x3_merge(float (&o)[C::O8][4], const float (&alpha)[2],
                                             const float (&oj)[C::O8][4]) {
#pragma unroll
    for (int n = 0; n < C::O8; ++n) {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            o[n][e] = fmaf(o[n][e], alpha[e / 2], oj[n][e]);
        }
    }
}

/* O / l and LSE of this thread's two rows of the 64-row tile whose first row
 * is item row r0 (t0 = r0 / G, rem0 = r0 - t0 G) of sequence seq, kv head
 * hk: rows below nrows only, columns < Dv only (warp w, fragment row qr,
 * column qc). */
template <class C>
__device__ __forceinline__ void
tf32x3_store_rows(const flash_args &a, const flash_seq &seq, int32_t hk, int64_t r0, int64_t t0,
                  int32_t rem0, int64_t nrows, const float (&o)[C::O8][4], const float (&m)[2],
                  const float (&l)[2], float sl, int warp, int qr, int qc) {
    const int32_t g = a.g;
    float *og = (float *)a.out.ptr + seq.ob + (int64_t)hk * g * a.out.head;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        const float sum = flash_quad_sum(l[h]);
        const int32_t r = 16 * warp + qr + 8 * h;
        if (r0 + r >= nrows) {
            continue;
        }
        const int32_t tt = (rem0 + r) / g, hg = (rem0 + r) - tt * g;
        const int64_t t = t0 + tt;
        const float inv = flash_row_inv(sum);
        float *orow = og + t * a.out.row + hg * a.out.head;
#pragma unroll
        for (int n = 0; n < C::O8; ++n) {
            const int col = 8 * n + 2 * qc;
            if (col < a.dv) { /* dv is a multiple of 4: both columns or neither */
                *(float2 *)(orow + col) = make_float2(o[n][2 * h] * inv, o[n][2 * h + 1] * inv);
            }
        }
        if (a.lse != NULL && qc == 0) {
            a.lse[seq.lse_base + (hk * g + hg) * a.lse_head + t] = flash_row_lse(m[h], sum, sl);
        }
    }
}

#endif /* OPP_KERNELS_TF32X3_OPS_CUH */
