/*
 * flash_attention.cuh - the FAST path's portable flash kernel (sm_80 on):
 * tensor cores through mma.sync m16n8k16 with fp32 accumulation, cp.async
 * loads, online softmax in fp32. Included by kernels/flash_d<D>.cu, which
 * instantiate it for the FAST lines of kernels/kernel_list.h.
 *
 *   q   [total_q | B*S_q rows, Hq, D]     out [.., Hq, Dv]   (element strides)
 *   k   [total_kv | B*S_kv rows, Hkv, D]  v   [.., Hkv, Dv]
 *   lse [Hq, total_q] or [B, Hq, S_q] float32 (optional)
 *
 * Design.
 * Tiles: one block owns BM query rows of one (sequence b, kv head hk):
 * rows are token x query-head-in-group (row r -> token r / G, head
 * hk G + r % G), so the G query heads that share a kv head share every K/V
 * tile and short or single-token query blocks still fill the M dimension
 * (GQA packing). NW warps each own MT = BM / (16 NW) m16 tiles. Keys go in
 * blocks of BN from key 0 of the sequence, ascending.
 * Head sizes: one kernel serves D, Dv <= DB (a multiple of 8): columns past
 * D or Dv load as zeros (they add exact zeros to every dot product) and are
 * never stored.
 * Shared memory: Q [BM][DB+8], K [ST][BN][DB+8], V [ST][BN][DB+8] (16-bit;
 * the pad of 16 bytes per row makes every ldmatrix phase conflict-free).
 * With ST = 1 (one buffer each) V of block j loads while S = Q K_j^T runs,
 * K of block j+1 while the softmax and O += P V_j run (FlashAttention-2's
 * schedule), and the main tile loads V of its first block with Q and K.
 * With ST = 2 (a ring of two slots; the main launch at DB <= 128 where an
 * SM holds two such blocks, flash_launch) K and V of block j+1 load under
 * all of block j's math, one barrier a block. The main tile's O leaves
 * through Q's buffer in 16-byte coalesced stores (flash_store_tile).
 * Inside each product the ldmatrix fragments of the next (k16
 * step, n8 pair) group load while the current group's mma run, with no
 * branch between them (a product past D or Dv is predicated off, its load
 * reads the tile's zero columns), so ptxas keeps the loads ahead and no
 * mma waits on a fresh shared-memory read. In the main kernel every warp
 * runs every barrier at the same __syncthreads (none in a branch), and the
 * math of rows past the sequence too (never stored): skipping it in a
 * branch put the warps on different barriers (synccheck) and, at the same
 * barrier, cost registers and spills. The split kernel alone skips it (a
 * decode tile uses G of its 64 rows): warps with no split row run only the
 * loads, in a loop of their own whose barriers are barrier.sync without
 * .aligned (flash_block_sync), which may be met from different
 * instructions (flash_tile).
 * Softmax: p = 2^(x sl - f) with x the raw score and sl = scale log2(e)
 * (one FFMA and one MUFU.EX2 per score), or with softcap c first x = c
 * log2(e) tanh(x scale / c) and sl = 1 (before any mask); masked keys are
 * set to -inf, never added to. Per row: m = running max, f = the block's
 * frame, bm sl - ceil(bm sl - m sl) for bm the block's max, so that the
 * block's largest p is a power of two, exact in the storage type (one of
 * the largest errors of the rounded P gone; flash_row_frame), l = running
 * sum in the frame (per thread, reduced over the quad once at the end), O
 * rescaled by alpha = 2^(f_old - f) when some row of the warp needs it (1
 * when the frame did not move); a row whose max is still -inf uses 0 in its
 * exponentials, so it stays at l = 0, O = 0. P is rounded to the storage
 * type for P V. End: O / l (0 for l = 0), LSE = (f + log2 l) ln 2 (-inf for
 * l = 0). The float code of these steps is kernels/softmax_rows.cuh, shared
 * with the Hopper kernel.
 * Masks: key j of the sequence is visible to local query token t iff
 * j < L_kv and, when causal, j <= t + L_kv - L_q (tail-aligned; the offset
 * may be negative). Keys past L_kv are zero-filled in shared memory and
 * never read from global memory, so padding (even NaN) never reaches a
 * valid row; only blocks that hold a masked key for some row of the tile
 * evaluate masks.
 * Batch invariance (DESIGN.md section 4): a row's arithmetic depends only
 * on its own query, its sequence's keys, and the key-block grid, which is
 * anchored at key 0 of the sequence with the static BN. A tile may process
 * more key blocks than one of its rows sees (the causal frontier of its last
 * row); for that row such a block has max -inf, so its frame stays, its
 * rescale factor is exactly 1 and it adds exact zeros: the row's bits do
 * not depend on which other rows share its tile, on the layout, or on the
 * batch.
 * Work: a 1-D grid strides over items (m-block, sequence, kv head), the
 * highest m-blocks first (the longest under causal masking); an item past
 * its sequence's rows ends at once. The main launch is a programmatic
 * dependent of the guard launched before it (PDL, sm_90): its blocks may
 * start while the guard runs and wait (griddepcontrol.wait) before their
 * first read; they read the guard record and the sequence's cu_seqlens
 * together, and touch nothing else unless the record says SUCCESS. The
 * item decode and the rows' token / head-in-group divide by B Hkv, Hkv and
 * G with a multiply and a shift (opp__fastdiv, kernels/fastdiv.h) while
 * the dividends fit 31 bits, as every batch the guard admits short of 2^31
 * rows does; 64-bit division above.
 * Split-KV (kernels/flash_split.cuh): on rows with DB <= OPP__SPLIT_DMAX a
 * sequence with few query rows and many keys is skipped by this launch and
 * run by flash_split_kernel over items (split, sequence, kv head), whose
 * partials flash_combine_kernel adds in split order. Inside a split the
 * arithmetic is this kernel's, over the split's key blocks; with
 * OPP__SPLIT_SLICES 4 (kernels/split_config.h) over each of its four slices
 * (blocks jb + s, jb + s + 4, ...) in turn, from a fresh state, each
 * slice's (O, frame, sum) folded into the split's after its last block
 * (flash_slice_fold), as the TMA split kernel's warps run them side by
 * side (kernels/hopper_split_tile.cuh).
 */
#ifndef OPP_KERNELS_FLASH_ATTENTION_CUH
#define OPP_KERNELS_FLASH_ATTENTION_CUH

#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kernels/device_cache.h"
#include "kernels/flash_config.cuh"
#include "kernels/flash_split.cuh"
#include "kernels/flash_tile.cuh"
#include "kernels/hopper_ops.cuh"
#include "kernels/kernels.h"
#include "kernels/softmax_rows.cuh"
#include "lib/internal/check.h"

// --- kernels

/* __syncthreads, or in the split kernel a barrier.sync without .aligned:
 * there the warps with no split row meet the barriers from a loop of their
 * own (flash_tile), and .aligned (bar.sync, __syncthreads) requires every
 * thread of the block to execute the same barrier instruction. */
template <bool SPLIT> __device__ __forceinline__ void flash_block_sync() {
    if constexpr (SPLIT) {
        asm volatile("barrier.sync 0;" ::: "memory");
    } else {
        __syncthreads();
    }
}

/* One item: rows r0 .. r0+BM-1 of sequence b, kv head hk; with SPLIT, the
 * keys of split s of sequence b (all its rows: one m-block), partials out.
 * red: 32 int64 of shared memory (SPLIT only). guard_ok: the guard record
 * says SUCCESS; read by the caller before this item's sequence lookup and
 * tested after it (the lookup reads only cu_seqlens / nonpad entry b,
 * inside its array whatever the guard found), so the two loads overlap;
 * nothing the lookup returns is used when it is false. */
template <int DT, class C, bool SPLIT>
__device__ __forceinline__ void flash_tile(const flash_args &a, uint16_t *sq, uint16_t *sk,
                                           uint16_t *sv, int64_t w, long long *red, bool guard_ok) {
    const int64_t per = (int64_t)a.batch * a.hkv;
    /* w = q1 per + b Hkv + hk: by opp__fastdiv while the items fit 31 bits */
    int64_t q1;
    int32_t b, hk;
    if (a.items <= 0x7FFFFFFF) { /* uniform */
        const int32_t q = opp__fastdiv((int32_t)w, &a.fd_per),
                      rem = (int32_t)(w - (int64_t)q * per);
        q1 = q;
        b = opp__fastdiv(rem, &a.fd_hkv);
        hk = rem - b * a.hkv;
    } else {
        q1 = w / per;
        b = (int32_t)((w % per) / a.hkv);
        hk = (int32_t)(w % a.hkv);
    }
    const int64_t mb = SPLIT ? 0 : a.n_mb - 1 - q1;
    const int32_t split = SPLIT ? (int32_t)q1 : 0;
    const int32_t g = a.g;
    const flash_seq seq = flash_seq_of(a, b);
    if (!guard_ok) {
        return; /* the guard found bad cu_seqlens / nonpad: touch nothing */
    }
    const int32_t lq = seq.lq, lkv = seq.lkv;
    const int64_t qb = seq.qb, kb0 = seq.kb0, vb0 = seq.vb0, ob = seq.ob, lse_base = seq.lse_base;
    /* rows r0 .. nrows-1 of this item: the main launch stops before the
     * split rows, the split launch takes exactly those (ts tokens) */
    const int32_t ts = flash_split_tokens(lq, lkv, g, a.split_min_kv); /* 0: split off */
    const int64_t nrows = (int64_t)(SPLIT ? lq : lq - ts) * g;
    const int64_t r0 = SPLIT ? (int64_t)(lq - ts) * g : mb * C::BM;
    if (r0 >= nrows || (SPLIT && (int64_t)split * OPP__SPLIT_KEYS >= lkv)) {
        return; /* uniform: nothing here (past the rows, no split rows, past the keys) */
    }
    const bool causal = a.is_causal != 0;
    const int64_t last = (r0 + C::BM < nrows ? r0 + C::BM : nrows) - 1;
    /* the tile's first and last tokens (opp__fastdiv while the rows fit 31 bits) */
    const bool rows31 = nrows <= 0x7FFFFFFF; /* uniform */
    const int64_t t0 = rows31 ? (int64_t)opp__fastdiv((int32_t)r0, &a.fd_g) : r0 / g;
    const int64_t tlast = rows31 ? (int64_t)opp__fastdiv((int32_t)last, &a.fd_g) : last / g;
    const int32_t kend_tile = flash_key_end(causal, tlast, lq, lkv);
    const int32_t kfull = flash_key_end(causal, t0, lq, lkv); /* visible to every row */
    const int32_t nkb = (int32_t)(((int64_t)kend_tile + C::BN - 1) / C::BN);
    /* key blocks jb .. je-1: all of them, or those of split `split` */
    static_assert(OPP__SPLIT_KEYS % C::BN == 0, "splits hold whole key blocks");
    const int32_t jb = split * (OPP__SPLIT_KEYS / C::BN);
    int32_t je = SPLIT && jb + OPP__SPLIT_KEYS / C::BN < nkb ? jb + OPP__SPLIT_KEYS / C::BN : nkb;
    /* the partial row of split token 0 (token lq - ts) */
    const int64_t part0 =
        SPLIT
            ? flash_seq_src{a.cu_q, a.cu_kv, a.nonpad, a.q_seqlen, g, a.split_min_kv}.split_offset(
                  b, red) +
                  (int64_t)split * ts
            : 0;

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int qr = lane >> 2, qc = lane & 3; /* fragment row / column pair */
    const uint16_t *qg = (const uint16_t *)a.q.ptr + qb + (int64_t)hk * g * a.q.head;
    const uint16_t *kg = (const uint16_t *)a.k.ptr + kb0 + (int64_t)hk * a.k.head;
    const uint16_t *vg = (const uint16_t *)a.v.ptr + vb0 + (int64_t)hk * a.v.head;

    /* loads: this thread's row (of RSTEP per round) and 16-byte chunk */
    const int ld_r = tid / C::CP, ld_c = tid % C::CP;
    /* Q tile -> shared (rows past the sequence and columns past D are zeros);
     * tile row r is token t0 + (rem0 + r) / G, head-in-group (rem0 + r) % G */
    const int32_t rem0 = (int32_t)(r0 - t0 * g);
    /* RING (C::ST == 2, the main launch only): K and V of block j in slot
     * (j - jb) & 1, both loaded a block ahead */
    constexpr bool RING = C::ST == 2;
    static_assert(!(RING && SPLIT), "the split tile keeps one K and one V buffer");
    flash_load_q<C, C::BM>(sq, qg, a.q.row, a.q.head, a.d, r0, nrows, t0, rem0, g, a.fd_g, ld_r,
                           ld_c);
    if (jb < je) {
        flash_load_kv<C>(sk, kg, a.k.row, a.d, jb, lkv, ld_r, ld_c);
        if constexpr (!SPLIT) { /* V of the first block too: both buffers are free */
            flash_load_kv<C>(sv, vg, a.v.row, a.dv, jb, lkv, ld_r, ld_c);
        }
    }
    flash_cp_async_commit();

    /* this thread's rows: (i, h) -> tile row rt + i*16 + 8h */
    const int32_t rt = warp * 16 * C::MT + qr;
    float m[C::MT][2], f[C::MT][2], l[C::MT][2]; /* running max, frame, sum */
    float o[C::MT][C::DB / 8][4];
#pragma unroll
    for (int i = 0; i < C::MT; ++i) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            m[i][h] = -INFINITY;
            f[i][h] = 0.0f;
            l[i][h] = 0.0f;
        }
#pragma unroll
        for (int n = 0; n < C::DB / 8; ++n) {
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                o[i][n][e] = 0.0f;
            }
        }
    }
    /* (split kernel, OPP__SPLIT_SLICES > 1) the fold of the split's slices
     * so far (flash_slice_fold): O, frame, sum */
    constexpr bool SLICED = SPLIT && OPP__SPLIT_SLICES > 1;
    float ao[C::MT][C::DB / 8][4], af[C::MT][2], al[C::MT][2];
    if constexpr (SLICED) {
#pragma unroll
        for (int i = 0; i < C::MT; ++i) {
            flash_slice_start(ao[i], af[i], al[i]);
        }
    }
    /* the block after j: the split's slice order (kernels/split_rule.h), else j + 1 */
    auto next_block = [&](int32_t j) { return SPLIT ? opp__split_next_block(j, jb, je) : j + 1; };
    const uint32_t q_lane =
        flash_smem_addr(sq + (warp * 16 * C::MT + (lane & 15)) * C::PITCH + (lane >> 4) * 8);
    const uint32_t k_lane =
        flash_smem_addr(sk + ((lane & 7) + (lane >> 4) * 8) * C::PITCH + ((lane >> 3) & 1) * 8);
    const uint32_t v_lane =
        flash_smem_addr(sv + ((lane & 7) + ((lane >> 3) & 1) * 8) * C::PITCH + (lane >> 4) * 8);

    /* p = 2^(s sl - max sl); with softcap, s is c log2(e) tanh(..) and sl = 1;
     * m is kept raw (unscaled) */
    const float sl = a.cap_log2 != 0.0f ? 1.0f : a.scale_log2;
    /* (split kernel) a warp whose rows all lie past the split rows (a
     * decode tile of G rows) only loads its share of K and V and meets the
     * barriers, as many as the loop below, from barrier instructions of
     * its own (flash_block_sync: not .aligned): its rows are never stored,
     * and every row's arithmetic is its own, so no stored bit changes */
    /* the two barrier steps of key block j, the only ones of the loop, so
     * the idle warps' loop and the full one meet the same barriers */
    auto load_v_step = [&](int32_t j) {
        flash_cp_async_wait<0>();
        flash_block_sync<SPLIT>(); /* K_j (and Q) landed; every warp is done with V_{j-1} */
        flash_load_kv<C>(sv, vg, a.v.row, a.dv, j, lkv, ld_r, ld_c);
        flash_cp_async_commit();
    };
    auto load_k_step = [&](int32_t j) {
        flash_cp_async_wait<0>();
        flash_block_sync<SPLIT>(); /* V_j landed; every warp is done with K_j */
        if (next_block(j) < je) {
            flash_load_kv<C>(sk, kg, a.k.row, a.d, next_block(j), lkv, ld_r, ld_c);
        }
        flash_cp_async_commit();
    };
    if (SPLIT && r0 + warp * 16 * C::MT >= nrows) {
        for (int32_t j = jb; j < je; j = next_block(j)) {
            load_v_step(j);
            load_k_step(j);
        }
        je = jb; /* the loop below runs no block */
    }
    for (int32_t j = jb; j < je; j = next_block(j)) {
        /* this block's slot (byte offset; 0 without the ring) */
        const uint32_t slot = RING ? (uint32_t)((j - jb) & 1) * (uint32_t)(C::KV_ELEMS * 2) : 0u;
        if constexpr (RING) {
            flash_cp_async_wait<0>();
            __syncthreads(); /* K_j, V_j (and Q) landed; every warp is done with block j-1's slot */
            if (j + 1 < je) {
                const int64_t next = (int64_t)((j + 1 - jb) & 1) * C::KV_ELEMS;
                flash_load_kv<C>(sk + next, kg, a.k.row, a.d, j + 1, lkv, ld_r, ld_c);
                flash_load_kv<C>(sv + next, vg, a.v.row, a.dv, j + 1, lkv, ld_r, ld_c);
            }
            flash_cp_async_commit();
        } else if (!SPLIT && j == jb) {
            flash_cp_async_wait<0>();
            __syncthreads(); /* Q, K_jb and V_jb landed (the prologue's loads) */
        } else {
            load_v_step(j);
        }
        float s[C::MT][C::BN / 8][4];
        /* S = Q K_j^T */
#pragma unroll
        for (int i = 0; i < C::MT; ++i) {
#pragma unroll
            for (int n = 0; n < C::BN / 8; ++n) {
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    s[i][n][e] = 0.0f;
                }
            }
        }
        flash_qk<DT, C::DB, C::MT, C::BN / 16, C::PITCH, !SPLIT>(s, q_lane, k_lane + slot, a.d);

        /* softcap first (before any mask), in the log2 domain: then sl = 1 */
        if (a.cap_log2 != 0.0f) {
#pragma unroll
            for (int i = 0; i < C::MT; ++i) {
                flash_softcap<false>(s[i], a.cap_log2, a.cap_scale, a.cap_x2);
            }
        }
        /* masks: only in blocks holding a key some row of the tile must not see */
        if ((int64_t)(j + 1) * C::BN > kfull) {
#pragma unroll
            for (int i = 0; i < C::MT; ++i) {
#pragma unroll
                for (int h = 0; h < 2; ++h) {
                    /* this row's first invisible key, relative to the block */
                    const int32_t kend =
                        flash_key_end(causal, t0 + (rem0 + rt + i * 16 + 8 * h) / g, lq, lkv) -
                        j * C::BN;
                    flash_mask_row(s[i], h, kend, qc);
                }
            }
        }
        if constexpr (!RING) {
            load_k_step(j);
        }
        /* V_j landed: its first fragments load under the softmax */
        constexpr int NB = C::BN / 16, ND = C::DB / 16;
        const uint32_t vl = v_lane + slot;
        uint32_t vf[2][4];
        flash_ldmatrix_x4_trans(vf[0], vl);

        /* online softmax; P into s. alpha is exactly 1 when a row's max did
         * not change, so a block a row does not see changes none of its bits,
         * and O is rescaled only when some row of the warp needs it. */
        float alpha[C::MT][2];
#pragma unroll
        for (int i = 0; i < C::MT; ++i) {
            flash_softmax_rows(s[i], m[i], f[i], l[i], alpha[i], sl);
        }
        bool rescale = false;
#pragma unroll
        for (int i = 0; i < C::MT; ++i) {
            rescale |= alpha[i][0] != 1.0f || alpha[i][1] != 1.0f;
        }
        if (__any_sync(0xFFFFFFFFu, rescale)) {
#pragma unroll
            for (int i = 0; i < C::MT; ++i) {
                flash_rescale_rows(o[i], alpha[i]);
            }
        }

        /* P in the storage type, as the A fragments of P V (s dies here) */
        uint32_t pa[C::MT][C::BN / 16][4];
#pragma unroll
        for (int i = 0; i < C::MT; ++i) {
#pragma unroll
            for (int kk = 0; kk < C::BN / 16; ++kk) {
                pa[i][kk][0] = flash_type<DT>::pack(s[i][2 * kk][0], s[i][2 * kk][1]);
                pa[i][kk][1] = flash_type<DT>::pack(s[i][2 * kk][2], s[i][2 * kk][3]);
                pa[i][kk][2] = flash_type<DT>::pack(s[i][2 * kk + 1][0], s[i][2 * kk + 1][1]);
                pa[i][kk][3] = flash_type<DT>::pack(s[i][2 * kk + 1][2], s[i][2 * kk + 1][3]);
            }
        }

        /* O += P V_j: the (k16 step, column pair) groups in order, V's
         * fragments one group ahead as above; pairs past Dv are skipped */
        constexpr int VT = NB * ND;
#pragma unroll
        for (int t = 0; t < VT; ++t) {
            const int kk = t / ND, n2 = t % ND;
            if (t + 1 < VT) {
                flash_ldmatrix_x4_trans(
                    vf[(t + 1) & 1], vl + ((t + 1) / ND * 16 * C::PITCH + (t + 1) % ND * 16) * 2);
            }
            if (n2 * 16 < a.dv) { /* uniform */
#pragma unroll
                for (int i = 0; i < C::MT; ++i) {
                    flash_mma<DT>(o[i][2 * n2], pa[i][kk], vf[t & 1][0], vf[t & 1][1]);
                    flash_mma<DT>(o[i][2 * n2 + 1], pa[i][kk], vf[t & 1][2], vf[t & 1][3]);
                }
            }
        }
        if constexpr (SLICED) {
            if (opp__split_slice_ends(j, je)) { /* j ends its slice: fold, reset */
#pragma unroll
                for (int i = 0; i < C::MT; ++i) {
                    flash_slice_end(ao[i], af[i], al[i], o[i], m[i], f[i], l[i]);
                }
            }
        }
    }
    flash_cp_async_wait<0>();

    /* epilogue: O / l and LSE (through shared memory, flash_store_tile),
     * or (SPLIT) the unnormalised O and (f, l) of the partial rows; only
     * rows of the sequence, only columns < Dv */
    uint16_t *og = (uint16_t *)a.out.ptr + ob + (int64_t)hk * g * a.out.head;
    if constexpr (!SPLIT) {
        float inv[C::MT][2];
#pragma unroll
        for (int i = 0; i < C::MT; ++i) {
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const float sum = flash_quad_sum(l[i][h]);
                inv[i][h] = flash_row_inv(sum);
                const int32_t r = rt + i * 16 + 8 * h;
                if (a.lse != NULL && qc == 0 && r0 + r < nrows) {
                    const int32_t tt = (rem0 + r) / g, hg = (rem0 + r) - tt * g;
                    a.lse[lse_base + (hk * g + hg) * a.lse_head + t0 + tt] =
                        flash_frame_lse(f[i][h], sum);
                }
            }
        }
        __syncthreads(); /* every warp is past its last Q K^T: Q's buffer takes O */
        flash_store_tile<DT, C>(sq, og, o, inv, rt, qc, r0, nrows, t0, rem0, g, a.fd_g, a.out.row,
                                a.out.head, a.dv, ld_r, ld_c);
    } else {
#pragma unroll
        for (int i = 0; i < C::MT; ++i) {
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                /* the split's (frame, sum): its one online softmax's, or the fold's */
                const float sum = SLICED ? al[i][h] : flash_quad_sum(l[i][h]);
                const int32_t r = rt + i * 16 + 8 * h;
                if (r0 + r >= nrows) {
                    continue;
                }
                const int32_t tt = (rem0 + r) / g, hg = (rem0 + r) - tt * g;
                const int64_t t = t0 + tt;
                const int64_t prow = (part0 + t - (lq - ts)) * a.hq + hk * g + hg;
                float *prow_o = a.part_o + prow * a.dv;
#pragma unroll
                for (int n = 0; n < C::DB / 8; ++n) {
                    const int col = n * 8 + 2 * qc;
                    if (col < a.dv) {
                        const float(&on)[4] = SLICED ? ao[i][n] : o[i][n];
                        *(float2 *)(prow_o + col) = make_float2(on[2 * h], on[2 * h + 1]);
                    }
                }
                if (qc == 0) {
                    a.part_ml[prow] = make_float2(SLICED                 ? af[i][h]
                                                  : m[i][h] == -INFINITY ? -INFINITY
                                                                         : f[i][h],
                                                  sum);
                }
            }
        }
    }
    __syncthreads(); /* shared memory is reused by the block's next item */
}

/* grid.x blocks stride over a.items; rec: the guard record, read first. */
template <int DT, class C>
static __global__ void __launch_bounds__(C::THREADS)
    flash_attention_kernel(const flash_args a, const opp__guard_record_t *rec) {
#if __CUDA_ARCH__ >= 900
    /* launched as the guard's programmatic dependent: its grid has ended
     * and its writes are visible past this point */
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
    /* the guard's verdict, tested in flash_tile after the sequence lookup
     * (the two loads in flight together) */
    const bool guard_ok = rec->code == OPP_STATUS_SUCCESS;
    extern __shared__ __align__(16) uint16_t flash_smem[];
    uint16_t *sq = flash_smem, *sk = sq + C::Q_ELEMS, *sv = sk + C::ST * C::KV_ELEMS;
    for (int64_t w = blockIdx.x; w < a.items; w += gridDim.x) {
        flash_tile<DT, C, false>(a, sq, sk, sv, w, NULL, guard_ok);
    }
}

#include "kernels/flash_split_narrow.cuh" /* (needs flash_args, flash_seq_of above) */

/* The split launch's dynamic shared memory: the split tile's or the narrow
 * tile's, whichever is larger (C: the split configuration). */
template <class C> constexpr size_t flash_split_smem_bytes() {
    return C::SMEM_BYTES > flash_narrow_layout<C>::BYTES ? C::SMEM_BYTES
                                                         : flash_narrow_layout<C>::BYTES;
}

/* Blocks an SM of the split launch (its __launch_bounds__): three from DB 96
 * (168 registers, no spill; four blocks' 128 registers spill 80 bytes at
 * DB 96, 156 at DB 128), four below (no spill). The H200 A/B of the
 * thirteenth session (bench/RESULTS.md) against four at every DB:
 * decode_gqa_bf16 6 % faster, sweep_d128_causal_L2048 7 %, D 64 unchanged;
 * three at D 64 as well lost 5 % on sweep_d64_causal_L2048. */
template <class C> constexpr int flash_split_min_blocks() {
    /* sliced splits (OPP__SPLIT_SLICES 4): the split tile also holds the
     * slices' fold (O, frame, sum), so a block more registers: two from DB
     * 96, three below */
    return OPP__SPLIT_SLICES > 1 ? (C::DB >= 96 ? 2 : 3) : C::DB >= 96 ? 3 : 4;
}

/* The split launch: grid.x blocks stride over a.items = ns_max * B * Hkv
 * items (split, sequence, kv head); C has BM = OPP__SPLIT_ROWS. An item
 * with at most 16 split rows runs on the narrow tile (all four warps on
 * one m16 tile, kernels/flash_split_narrow.cuh), the others on the split
 * tile; a row's bits are the same on both. Blocks an SM:
 * flash_split_min_blocks. NARROW: every item has at most 16 split rows
 * (the launcher's test on max_seqlen_q, which the guard enforces), so the
 * kernel holds the narrow tile alone: fewer registers, four blocks an SM. */
template <int DT, class C, bool NARROW>
static __global__ void __launch_bounds__(C::THREADS, NARROW ? 4 : flash_split_min_blocks<C>())
    flash_split_kernel(const flash_args a, const opp__guard_record_t *rec) {
    extern __shared__ __align__(16) uint16_t flash_smem[];
    __shared__ long long red[32];
    uint16_t *sq = flash_smem, *sk = sq + C::Q_ELEMS, *sv = sk + C::KV_ELEMS;
    /* (bad cu_seqlens / nonpad, found by the guard: touch nothing) */
    const int64_t per = (int64_t)a.batch * a.hkv;
    for (int64_t w = blockIdx.x; w < a.items && rec->code == OPP_STATUS_SUCCESS; w += gridDim.x) {
        const flash_seq seq = flash_seq_of(a, (int32_t)((w % per) / a.hkv));
        const int32_t ts = flash_split_tokens(seq.lq, seq.lkv, a.g, a.split_min_kv);
        if (NARROW || (int64_t)ts * a.g <= OPP__SPLIT_NARROW_ROWS) { /* uniform */
            flash_split_narrow<DT, C>(a, flash_smem, w, red);
        } else {
            flash_tile<DT, C, true>(a, sq, sk, sv, w, red, true);
        }
    }
#if __CUDA_ARCH__ >= 900
    /* after the Hopper kernel, this launch is its programmatic dependent
     * (flash_launch_split): it may start before that kernel ends, and does
     * not end before it, so what follows on the stream sees both (a no-op
     * after any other launch) */
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

#endif /* OPP_KERNELS_FLASH_ATTENTION_CUH */
