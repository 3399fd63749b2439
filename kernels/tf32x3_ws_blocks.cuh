/*
 * tf32x3_ws_blocks.cuh - a consumer's key blocks of one item in the
 * warp-specialised 3xTF32 kernel (kernels/tf32x3_ws.cuh), in two schedules:
 *
 * tf32x3_ws_blocks (OPP__TF32X3_WS_OVERLAP 0): per key block j, S_j = Q
 *   K_j^T, waited for; softmax; P split; P V_j into fresh accumulators,
 *   waited for; O = alpha_j O + P V_j. Its tensor work overlaps only the
 *   other consumer's softmax.
 * tf32x3_ws_blocks_overlap (1, FlashAttention-3's intra-warpgroup
 *   overlap): its own P V in flight under its softmax, per key block j
 *
 *   softmax(S_j)                     while P V_{j-1} runs on the tensor core
 *   wait P V_{j-1}; release V_{j-1}; O = alpha_{j-1} O + P V_{j-1}
 *   split P_j
 *   issue S_{j+1} = Q K_{j+1}^T, then P V_j (fresh accumulators)
 *   wait S_{j+1} (P V_j stays in flight); release K_{j+1}
 *
 *   with S_0 before the first block and P V_{n-1}'s merge after the last.
 *   Block j's merge waits until softmax(S_{j+1}) has run, with alpha_j
 *   kept from block j's softmax: the same operations on the same values as
 *   tf32x3_ws_blocks, so the same bits. V has two split stages (P V_j
 *   reads V_j while the producer splits V_{j+1}); the last block is peeled
 *   so that no product is issued under a condition. Registers in flight
 *   under softmax(S_{j+1}): S (32), P V_j's accumulators (32) and its A
 *   fragments P_j hi / lo (64), O (32).
 *
 * The m64n64 fragment layout throughout: rows 16 warp + qr (+ 8), columns
 * 8 n + 2 qc (+ 1).
 */
#ifndef OPP_KERNELS_TF32X3_WS_BLOCKS_CUH
#define OPP_KERNELS_TF32X3_WS_BLOCKS_CUH

#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#include "kernels/hopper_trace.cuh"
#include "kernels/softmax_rows.cuh"
#include "kernels/tf32x3_ops.cuh"
#include "kernels/tf32x3_ws_config.cuh"

/* A consumer thread's two rows over an item's key blocks. */
template <class C> struct tf32x3_ws_rows {
    float m[2], l[2];
    int32_t kend[2]; /* the keys each row sees */
    int32_t kfull;   /* the keys every row of the consumer's sees */
    int qc;
    float sl;
};

/* S_j (done) -> P_j's probabilities in s: softcap, the masks of the rows'
 * key ends, online softmax (alpha: the rescale of the block's earlier
 * blocks). */
template <class C>
__device__ __forceinline__ void tf32x3_ws_softmax(const flash_args &a, float (&s)[C::N8][4],
                                                  tf32x3_ws_rows<C> &r, float (&alpha)[2],
                                                  int32_t j) {
    if (a.cap_log2 != 0.0f) {
        flash_softcap<false, C::N8>(s, a.cap_log2, a.cap_scale, a.cap_x2);
    }
    if ((int64_t)(j + 1) * C::BN > r.kfull) {
        flash_mask_row<C::N8>(s, 0, r.kend[0] - j * C::BN, r.qc);
        flash_mask_row<C::N8>(s, 1, r.kend[1] - j * C::BN, r.qc);
    }
    flash_softmax_rows_max<C::N8>(s, r.m, r.l, alpha, r.sl);
}

/* P V_{j-1} done: release its V stage (vs), O = alpha_{j-1} O + P V_{j-1},
 * alpha_{j-1} := alpha_j. */
template <class C>
__device__ __forceinline__ void
tf32x3_ws_retire_pv(float (&o)[C::O8][4], float (&oj)[C::O8][4], uint32_t (&ph)[C::N8][4],
                    uint32_t (&pl)[C::N8][4], float (&alpha_prev)[2], const float (&alpha)[2],
                    uint32_t v_empty) {
    wgmma_wait<0>();
    tf32x3_fence(oj);
    tf32x3_fence(ph);
    tf32x3_fence(pl);
    hop_mbar_arrive(v_empty);
    tf32x3_merge<C>(o, alpha_prev, oj);
    alpha_prev[0] = alpha[0];
    alpha_prev[1] = alpha[1];
}

/* Issues S = Q K_j^T as two independent accumulations (SACC2), alternately,
 * so that consecutive products do not wait on each other's accumulator: sa
 * sums every k step's lo x hi, then the hi x hi of the first half of the
 * steps; sb every hi x lo, then the second half's hi x hi (the small terms
 * first in each, as tf32x3_qk_ss). One committed group; S = sa + sb after
 * its wait (tf32x3_ws_sum). */
template <class C>
__device__ __forceinline__ void tf32x3_ws_qk_ss2(float (&sa)[C::N8][4], float (&sb)[C::N8][4],
                                                 uint32_t q_hi, uint32_t q_lo, uint32_t k_hi,
                                                 uint32_t k_lo) {
    float(&fa)[32] = *reinterpret_cast<float(*)[32]>(&sa[0][0]);
    float(&fb)[32] = *reinterpret_cast<float(*)[32]>(&sb[0][0]);
    tf32x3_fence(sa);
    tf32x3_fence(sb);
    wgmma_fence();
#pragma unroll
    for (int k = 0; k < C::KS; ++k) {
        wgmma_tf32_ss_n64(fa, tf32x3_desc(q_lo, k), tf32x3_desc(k_hi, k), k > 0);
        wgmma_tf32_ss_n64(fb, tf32x3_desc(q_hi, k), tf32x3_desc(k_lo, k), k > 0);
    }
#pragma unroll
    for (int k = 0; k < C::KS / 2; ++k) {
        wgmma_tf32_ss_n64(fa, tf32x3_desc(q_hi, k), tf32x3_desc(k_hi, k), 1);
        wgmma_tf32_ss_n64(fb, tf32x3_desc(q_hi, k + C::KS / 2), tf32x3_desc(k_hi, k + C::KS / 2),
                          1);
    }
    wgmma_commit();
    tf32x3_fence(sa);
    tf32x3_fence(sb);
}

/* Issues O_j = P V_j as two independent fresh accumulations (SACC2 & 2),
 * alternately: oa the lo x hi of every k step, then the first half's hi x
 * hi; ob every hi x lo, then the second half's hi x hi. One committed
 * group; O_j = oa + ob at the merge. */
template <class C>
__device__ __forceinline__ void tf32x3_ws_pv2(float (&oa)[C::O8][4], float (&ob)[C::O8][4],
                                              uint32_t (&ph)[C::N8][4], uint32_t (&pl)[C::N8][4],
                                              uint32_t v_hi, uint32_t v_lo) {
    float(&fa)[32] = *reinterpret_cast<float(*)[32]>(&oa[0][0]);
    float(&fb)[32] = *reinterpret_cast<float(*)[32]>(&ob[0][0]);
    tf32x3_fence(ph);
    tf32x3_fence(pl);
    tf32x3_fence(oa);
    tf32x3_fence(ob);
    wgmma_fence();
#pragma unroll
    for (int k = 0; k < C::N8; ++k) {
        wgmma_tf32_rs_n64(fa, pl[k], tf32x3_desc(v_hi, k), k > 0);
        wgmma_tf32_rs_n64(fb, ph[k], tf32x3_desc(v_lo, k), k > 0);
    }
#pragma unroll
    for (int k = 0; k < C::N8 / 2; ++k) {
        wgmma_tf32_rs_n64(fa, ph[k], tf32x3_desc(v_hi, k), 1);
        wgmma_tf32_rs_n64(fb, ph[k + C::N8 / 2], tf32x3_desc(v_hi, k + C::N8 / 2), 1);
    }
    wgmma_commit();
    tf32x3_fence(oa);
    tf32x3_fence(ob);
}

/* x = x + y, element by element, rounded (the two accumulations of S or
 * of P V_j, after their wait) */
template <int N, int M>
__device__ __forceinline__ void tf32x3_ws_sum(float (&x)[N][M], const float (&y)[N][M]) {
#pragma unroll
    for (int n = 0; n < N; ++n) {
#pragma unroll
        for (int e = 0; e < M; ++e) {
            x[n][e] = __fadd_rn(x[n][e], y[n][e]);
        }
    }
}

/* Q's split A fragments from consumer c's Q_HI / Q_LO tiles (QREG): rows
 * 16 warp + qr (+ 8), columns 8 ks + qc (+ 4) (the fragment layout of
 * kernels/wgmma_tf32_ops.cuh), the bits S = Q K^T reads from the tiles
 * otherwise. */
template <class C>
__device__ __forceinline__ void tf32x3_ws_q_frags(tf32x3_ws_smem<C> sm, int c, int qc,
                                                  uint32_t (&qh)[C::KS][4],
                                                  uint32_t (&ql)[C::KS][4]) {
    const int lane = threadIdx.x & 31, warp = (threadIdx.x >> 5) & 3;
#pragma unroll
    for (int ks = 0; ks < C::KS; ++ks) {
#pragma unroll
        for (int x = 0; x < 4; ++x) {
            const int row = 16 * warp + (lane >> 2) + 8 * (x & 1), col = 8 * ks + qc + 4 * (x >> 1);
            const uint32_t off = tf32x3_swz<C>(row, col >> 2) + (uint32_t)(col & 3) * 4u;
            qh[ks][x] = __float_as_uint(tf32x3_ld32(sm.q_hi(c) + off));
            ql[ks][x] = __float_as_uint(tf32x3_ld32(sm.q_lo(c) + off));
        }
    }
}

/* Consumer c's nkb_c key blocks of one item without overlap (each product
 * waited for when issued), from the block count i (the producer's): O
 * (zero on entry) and the rows' m, l on return; i advanced past them. */
template <class C>
__device__ __forceinline__ void tf32x3_ws_blocks(const flash_args &a, tf32x3_ws_smem<C> sm, int c,
                                                 uint32_t &i, int32_t nkb_c, tf32x3_ws_rows<C> &r,
                                                 float (&o)[C::O8][4], hop_tracer &tr) {
    /* a development build's events (the consumer's thread 0) */
    auto ev = [&](int e, int32_t j) {
        if (OPP__HOPPER_TRACE && tf32x3_ws_tid() % 128 == 0) {
            tr.ev(e, j);
        }
    };
    const uint32_t my_turn = C::TURN_BAR + c, their_turn = C::TURN_BAR + (c ^ 1);
    float s[C::N8][4], oj[C::O8][4], alpha[2];
    uint32_t ph[C::N8][4], pl[C::N8][4];
    uint32_t qh[C::QREG ? C::KS : 1][4], ql[C::QREG ? C::KS : 1][4];
    float s2[C::SACC2 & 1 ? C::N8 : 1][4];  /* S's second accumulation (SACC2 & 1) */
    float oj2[C::SACC2 & 2 ? C::O8 : 1][4]; /* P V's (SACC2 & 2) */
    if constexpr (C::QREG) {
        tf32x3_ws_q_frags<C>(sm, c, r.qc, qh, ql);
    }
    for (int32_t j = 0; j < nkb_c; ++j, ++i) {
        const uint32_t par = i & 1u;
        /* the tiles' addresses opaque each block: ptxas would otherwise
         * keep the 72 loop-invariant wgmma descriptors in registers (UDESC:
         * not made opaque, the descriptors are built in uniform registers) */
        tf32x3_ws_smem<C> sb = sm;
        if constexpr (!C::UDESC) {
            asm volatile("" : "+r"(sb.base));
        }
        if constexpr (C::LEAN) {
            /* the consumer index read again each block (%tid.x: 1 + c the
             * warpgroup), not kept in a register across the loop */
            c = (int)(tf32x3_ws_tid() >> 7) - 1;
        }
        const uint32_t ks = i % C::KSTAGES, kpar = (i / C::KSTAGES) & 1u;
        hop_mbar_wait(sb.k_full(ks), kpar);
        ev(TT_C_KFULL, j);
        if (C::TURNS) {
            hop_bar_sync(my_turn, 256);
        }
        if constexpr (C::QREG) {
            tf32x3_qk<C>(s, qh, ql, sb.k_hi(ks), sb.k_lo(ks));
        } else if constexpr (C::SACC2 & 1) {
            tf32x3_ws_qk_ss2<C>(s, s2, sb.q_hi(c), sb.q_lo(c), sb.k_hi(ks), sb.k_lo(ks));
        } else {
            if constexpr (C::UDESC) {
                hop_uniform_switch<C::NC>((uint32_t)c, [&](auto ci) {
                    constexpr int CI = (int)decltype(ci)::value;
                    tf32x3_qk_ss<C>(s, sb.q_hi(CI), sb.q_lo(CI), sb.k_hi(ks), sb.k_lo(ks));
                });
            } else {
                tf32x3_qk_ss<C>(s, sb.q_hi(c), sb.q_lo(c), sb.k_hi(ks), sb.k_lo(ks));
            }
        }
        if (C::TURNS) {
            hop_bar_arrive(their_turn, 256);
        }
        wgmma_wait<0>();
        tf32x3_fence(s);
        if constexpr (C::SACC2 & 1) {
            tf32x3_fence(s2);
        }
        hop_mbar_arrive(sb.k_empty(ks));
        ev(TT_C_SDONE, j);
        if constexpr (C::SACC2 & 1) {
            tf32x3_ws_sum(s, s2);
        }
        tf32x3_ws_softmax<C>(a, s, r, alpha, j);
        tf32x3_split_p<C>(s, ph, pl);
        ev(TT_C_PDONE, j);
        hop_mbar_wait(sb.v_full(0), par);
        ev(TT_C_VFULL, j);
        if (C::TURNS) {
            hop_bar_sync(my_turn, 256);
        }
        if constexpr (C::SACC2 & 2) {
            tf32x3_ws_pv2<C>(oj, oj2, ph, pl, sb.v_hi(0), sb.v_lo(0));
        } else {
            tf32x3_pv<C>(oj, ph, pl, sb.v_hi(0), sb.v_lo(0), true);
        }
        if (C::TURNS) {
            hop_bar_arrive(their_turn, 256);
        }
        wgmma_wait<0>();
        tf32x3_fence(oj);
        if constexpr (C::SACC2 & 2) {
            tf32x3_fence(oj2);
        }
        tf32x3_fence(ph);
        tf32x3_fence(pl);
        hop_mbar_arrive(sb.v_empty(0));
        ev(TT_C_PVDONE, j);
        if constexpr (C::SACC2 & 2) {
            tf32x3_ws_sum(oj, oj2);
        }
        tf32x3_merge<C>(o, alpha, oj);
    }
}

/* Consumer c's nkb_c (>= 1) key blocks of one item, from the block count i
 * (the producer's): O (zero on entry) and the rows' m, l on return; i
 * advanced past them. Q's split tiles are ready (Q_BAR). */
template <class C>
__device__ __forceinline__ void
tf32x3_ws_blocks_overlap(const flash_args &a, tf32x3_ws_smem<C> sm, int c, uint32_t &i,
                         int32_t nkb_c, tf32x3_ws_rows<C> &r, float (&o)[C::O8][4]) {
    static_assert(C::VSTAGES == 2, "two V stages");
    constexpr uint32_t KS = C::KSTAGES;
    float s[C::N8][4], oj[C::O8][4], alpha[2], alpha_prev[2];
    uint32_t ph[C::N8][4], pl[C::N8][4];
    tf32x3_zero(oj); /* P V's registers are operands of its asm before it writes them */
    /* block 0: S_0, waited for; softmax; P_0 split */
    hop_mbar_wait(sm.k_full(i % KS), (i / KS) & 1u);
    tf32x3_qk_ss<C>(s, sm.q_hi(c), sm.q_lo(c), sm.k_hi(i % KS), sm.k_lo(i % KS));
    wgmma_wait<0>();
    tf32x3_fence(s);
    hop_mbar_arrive(sm.k_empty(i % KS));
    tf32x3_ws_softmax<C>(a, s, r, alpha_prev, 0);
    tf32x3_split_p<C>(s, ph, pl);
    /* block j: S_j and P V_{j-1} (block count i) issued; softmax(S_j) under
     * P V_{j-1}; its merge; P_j split */
    for (int32_t j = 1; j < nkb_c; ++j, ++i) {
        /* the tiles' addresses opaque each block (else ptxas keeps the
         * loop-invariant wgmma descriptors in registers) */
        tf32x3_ws_smem<C> sb = sm;
        asm volatile("" : "+r"(sb.base));
        const uint32_t ks = (i + 1) % KS;
        hop_mbar_wait(sb.k_full(ks), ((i + 1) / KS) & 1u);
        tf32x3_qk_ss<C>(s, sb.q_hi(c), sb.q_lo(c), sb.k_hi(ks), sb.k_lo(ks));
        hop_mbar_wait(sb.v_full(i & 1u), (i >> 1) & 1u);
        tf32x3_pv<C>(oj, ph, pl, sb.v_hi(i & 1u), sb.v_lo(i & 1u), true);
        wgmma_wait<1>(); /* S_j; P V_{j-1} in flight */
        tf32x3_fence(s);
        hop_mbar_arrive(sb.k_empty(ks));
        tf32x3_ws_softmax<C>(a, s, r, alpha, j);
        /* never taken (sums of exponentials: >= 0 or NaN): without a branch
         * on them between, ptxas schedules the wait for P V_{j-1} above the
         * softmax (as kernels/hopper_config.cuh's SOFTMAX_FIRST says), which
         * then no longer runs under it (ncu, call N: 6.5 % of the samples
         * there). Its body is a fence, not __trap(): with a trap, ptxas
         * compiled the consumers to 168 registers despite setmaxnreg, and
         * they spilled. */
        if (r.l[0] + r.l[1] < -1.0f) {
            asm volatile("membar.cta;");
        }
        tf32x3_ws_retire_pv<C>(o, oj, ph, pl, alpha_prev, alpha, sb.v_empty(i & 1u));
        tf32x3_split_p<C>(s, ph, pl);
    }
    /* P V of the last block */
    hop_mbar_wait(sm.v_full(i & 1u), (i >> 1) & 1u);
    tf32x3_pv<C>(oj, ph, pl, sm.v_hi(i & 1u), sm.v_lo(i & 1u), true);
    tf32x3_ws_retire_pv<C>(o, oj, ph, pl, alpha_prev, alpha_prev, sm.v_empty(i & 1u));
    ++i;
}

#endif /* OPP_KERNELS_TF32X3_WS_BLOCKS_CUH */
