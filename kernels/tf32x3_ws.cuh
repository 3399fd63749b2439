/*
 * tf32x3_ws.cuh - OPP_ALGO_TF32X3, warp-specialised (OPP__TF32X3_WS 1,
 * kernels/kernel_list.h): the 3xTF32 kernel of kernels/tf32x3_attention.cuh
 * (its header has the arithmetic, the split and the layouts) with the
 * splits of K and V moved off the consumers' path and shared by 128 rows.
 *
 *   q   [total_q | B*S_q rows, Hq, D]     out [.., Hq, Dv]   (element strides)
 *   k   [total_kv | B*S_kv rows, Hkv, D]  v   [.., Hkv, Dv]
 *   lse [Hq, total_q] or [B, Hq, S_q] float32 (optional)
 *
 * A block: three warpgroups; an item is BM = 128 query rows of one
 * (sequence b, kv head hk), rows token x head-in-group as the FFMA kernel's.
 *   producer (warpgroup 0): cp.async of K_j and V_j (swizzled tiles)
 *     into landing stage j % 2, one block ahead
 *     (the next item's first block under the item's last); then, once the
 *     consumers released K_{j-1} (k_empty), K_j's split into K_HI / K_LO
 *     (k_full), and once they released V_{j-1} (v_empty), V_j's
 *     split-transpose into V_HI / V_LO (v_full): K_j's split runs under the
 *     consumers' P V_{j-1}, V_j's under their S = Q K_j^T.
 *   consumers c = 0, 1 (warpgroups 1, 2): rows 64 c ..
 *     64 c + 63 of the item. Q split into Q_HI(c) / Q_LO(c) once an item
 *     (from global memory); per key block S = Q K_j^T from shared memory
 *     (then k_empty), softcap, masks, online softmax, P split in registers,
 *     P V_j into fresh accumulators (then v_empty), O = alpha O + P V_j.
 *     Each issues its products when ready, so one's softmax runs under the
 *     other's products (OPP__TF32X3_WS_TURNS 1: they take turns, named
 *     barriers 2 and 3: S of 0, S of 1, P V of 0, P V of 1, ...; 5 %
 *     slower). The item's key blocks are those its last row sees: consumer
 *     0 releases the ones past its own rows' (causal) without a product.
 *   the producer's splits load all of a thread's chunks before the first
 *     split (OPP__TF32X3_WS_SPLIT_BATCH; 1, chunk by chunk, was 4 % slower:
 *     each load's latency waited out alone).
 * Registers: ptxas compiles a 384-thread block's threads to at most 168
 * registers, and the consumers fit (167, no spill). The kernel has no
 * setmaxnreg: ptxas does compile the code after a setmaxnreg.inc to the
 * raised count (a test kernel used up to R225 after .inc 232; this one
 * builds without spill at .dec 88 / .inc 208, the producer spills at .dec
 * 72), but nothing here needs the registers yet. Q's split fragments in
 * registers (64 of them) would not fit 168 beside O, P V_j, S and P's
 * split, hence Q in shared memory and S = Q K^T with both operands there.
 * Shared memory (from the 1024-aligned base; each tile a swizzled [64][DB]
 * fp32 tile): KSTAGES stages of K_HI, K_LO; V_HI, V_LO; Q_HI(0), Q_LO(0),
 * Q_HI(1), Q_LO(1); two landing stages of K and V; the mbarriers k_full[s],
 * v_full (count 128: every producer thread arrives after its
 * fence.proxy.async), k_empty[s], v_empty (count 256: every consumer
 * thread, after its product's wait). Key block count i (over the block's
 * items): landing stage i % 2; K stage i % KSTAGES, its phase
 * (i / KSTAGES) % 2; V's phase i % 2.
 * Arithmetic and batch invariance: as tf32x3_attention.cuh's, per row; the
 * tile is 128 rows from row 0 of the sequence's item rows (static), so the
 * key blocks a row visits depend only on its position in its sequence.
 * Work: a 1-D grid strides over items (m-block, sequence, kv head), the
 * highest m-blocks first; every role walks the same items.
 */
#ifndef OPP_KERNELS_TF32X3_WS_CUH
#define OPP_KERNELS_TF32X3_WS_CUH

#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#include "kernels/flash_launch.cuh"
#include "kernels/softmax_rows.cuh"
#include "kernels/tf32x3_ops.cuh"

// --- configuration

template <int DB_> struct tf32x3_ws_cfg {
    static constexpr int DB = DB_, BM = 128, BN = 64, NC = 2, THREADS = 128 * (NC + 1);
    static constexpr int KS = DB_ / 8; /* k8 steps of S = Q K^T */
    static constexpr int N8 = BN / 8;  /* 8-column groups of S (and k8 steps of P V) */
    static constexpr int O8 = DB_ / 8; /* 8-column groups of O */
    /* tf32x3_split_v's padded source rows (unused here: V lands swizzled) */
    static constexpr int PITCH = DB_ + 4;
    static constexpr int CHUNKS = DB_ / 4;           /* 16-byte chunks per row of D floats */
    static constexpr uint32_t TILE = 64u * DB_ * 4u; /* a swizzled [64][DB] fp32 tile */
    static constexpr uint32_t PANEL = 64u * 128u;    /* 32 columns of 64 rows */
    /* byte offsets from the 1024-aligned base */
    /* split K stages (1 or 2): with 2, K_{j+1}'s split need not wait for
     * both consumers' S = Q K_j^T */
    static constexpr uint32_t KSTAGES = OPP__TF32X3_WS_KSTAGES;
    /* K stage s: K_HI at K_OFF + 2 s TILE, K_LO + TILE */
    static constexpr uint32_t K_OFF = 0, V_HI = 2 * KSTAGES * TILE, V_LO = V_HI + TILE;
    static constexpr uint32_t Q_OFF = V_LO + TILE; /* consumer c: Q_HI at + 2 c TILE, Q_LO + TILE */
    static constexpr uint32_t LAND_V = TILE, LAND = 2 * TILE; /* landing K, V: swizzled tiles */
    static constexpr uint32_t LAND_OFF = Q_OFF + 4 * TILE, BAR_OFF = LAND_OFF + 2 * LAND;
    static constexpr size_t SMEM_BYTES = (size_t)BAR_OFF + 64u + 1024u;
    static constexpr int PRODUCER_BAR = 1, TURN_BAR = 2, Q_BAR = 4; /* named: 1; 2 + c; 4 + c */
#ifndef OPP__TF32X3_WS_GRID
#define OPP__TF32X3_WS_GRID 0
#endif
    /* OPP__TF32X3_WS_GRID 1: one block a multiprocessor striding over the
     * items (the producer loads an item's first key block under the last
     * one's); 0: a block an item */
    static constexpr bool PER_SM = OPP__TF32X3_WS_GRID != 0;
    static_assert(DB_ == 64, "the D 64 bucket only (kernel_list.h's TF32X3 rows)");
    static_assert(SMEM_BYTES == OPP__TF32X3_WS_SMEM_BYTES(DB_), "kernel_list.h formula");
    static_assert(OPP__TF32X3_O_FRESH, "P V into fresh accumulators");
    static_assert(KSTAGES == 1 || KSTAGES == 2, "one or two K stages");
    /* the Q split's unrolling: what ptxas allocates without a spill */
    static constexpr int Q_UNROLL = KSTAGES == 1 ? 8 : 4;
#ifndef OPP__TF32X3_WS_SPLIT_BATCH
#define OPP__TF32X3_WS_SPLIT_BATCH 8
#endif
    /* the producer's splits: chunks loaded before the first is split (8:
     * all of a thread's; 1 waits out each load alone) */
    static constexpr int SPLIT_BATCH = OPP__TF32X3_WS_SPLIT_BATCH;
#ifndef OPP__TF32X3_WS_TURNS
#define OPP__TF32X3_WS_TURNS 0
#endif
    /* 1: the consumers take turns to issue (S0, S1, P V0, P V1); 0
     * (default): each issues when ready (prefill_f32 on an H100: 5 %
     * faster than with turns) */
    static constexpr bool TURNS = OPP__TF32X3_WS_TURNS != 0;
};

template <class C> struct tf32x3_ws_smem {
    uint32_t base;
    __device__ __forceinline__ uint32_t at(uint32_t off) const {
        return base + off;
    }
    __device__ __forceinline__ uint32_t q_hi(int c) const {
        return base + C::Q_OFF + 2u * (uint32_t)c * C::TILE;
    }
    __device__ __forceinline__ uint32_t q_lo(int c) const {
        return q_hi(c) + C::TILE;
    }
    __device__ __forceinline__ uint32_t land_k(uint32_t s) const {
        return base + C::LAND_OFF + s * C::LAND;
    }
    __device__ __forceinline__ uint32_t land_v(uint32_t s) const {
        return base + C::LAND_OFF + s * C::LAND + C::LAND_V;
    }
    __device__ __forceinline__ uint32_t k_hi(uint32_t s) const {
        return base + C::K_OFF + 2u * s * C::TILE;
    }
    __device__ __forceinline__ uint32_t k_lo(uint32_t s) const {
        return k_hi(s) + C::TILE;
    }
    __device__ __forceinline__ uint32_t k_full(uint32_t s) const {
        return base + C::BAR_OFF + 8 * s;
    }
    __device__ __forceinline__ uint32_t k_empty(uint32_t s) const {
        return base + C::BAR_OFF + 16 + 8 * s;
    }
    __device__ __forceinline__ uint32_t v_full() const {
        return base + C::BAR_OFF + 32;
    }
    __device__ __forceinline__ uint32_t v_empty() const {
        return base + C::BAR_OFF + 40;
    }
};

/* Item w: sequence b, kv head hk, rows r0 .. min(r0 + BM, nrows) - 1 and
 * the key blocks they visit (nkb). valid: r0 < nrows. */
struct tf32x3_ws_item {
    flash_seq seq;
    int32_t hk, nkb;
    int64_t r0, nrows;
    bool valid;
};

template <class C>
__device__ __forceinline__ tf32x3_ws_item tf32x3_ws_item_of(const flash_args &a, int64_t w) {
    tf32x3_ws_item t;
    const int64_t per = (int64_t)a.batch * a.hkv;
    const int64_t mb = a.n_mb - 1 - w / per;
    const int32_t b = (int32_t)((w % per) / a.hkv);
    t.hk = (int32_t)(w % a.hkv);
    t.seq = flash_seq_of(a, b);
    t.nrows = (int64_t)t.seq.lq * a.g;
    t.r0 = mb * C::BM;
    t.valid = t.r0 < t.nrows;
    t.nkb = 0;
    if (t.valid) {
        const int64_t last = (t.r0 + C::BM < t.nrows ? t.r0 + C::BM : t.nrows) - 1;
        const int32_t kend = flash_key_end(a.is_causal != 0, last / a.g, t.seq.lq, t.seq.lkv);
        t.nkb = (int32_t)(((int64_t)kend + C::BN - 1) / C::BN);
    }
    return t;
}

// --- producer

/* Warpgroup 0 (t = 0 .. 127): every key block of the block's items, in
 * order: loads one ahead, splits into the ring. */
template <class C>
__device__ __forceinline__ void tf32x3_ws_produce(const flash_args &a, tf32x3_ws_smem<C> sm,
                                                  int t) {
    constexpr int KSTEP = 128 / C::CHUNKS; /* rows a pass of the 128 threads copies */
    static_assert(128 % C::CHUNKS == 0 && C::BN % KSTEP == 0, "whole rows per pass");
    const int kc = t % C::CHUNKS, kr = t / C::CHUNKS;
    /* K_j, V_j of item x -> landing stage ls (keys past L_kv, columns past
     * the width: zeros) */
    auto load = [&](const tf32x3_ws_item &x, int32_t j, uint32_t ls) {
        const float *kg = (const float *)a.k.ptr + x.seq.kb0 + (int64_t)x.hk * a.k.head;
        const float *vg = (const float *)a.v.ptr + x.seq.vb0 + (int64_t)x.hk * a.v.head;
        const int32_t left = x.seq.lkv - j * C::BN - kr;
        const bool kcol = kc * 4 < a.d, vcol = kc * 4 < a.dv;
        const float *ks = kg + ((int64_t)j * C::BN + kr) * a.k.row + kc * 4;
        const float *vs = vg + ((int64_t)j * C::BN + kr) * a.v.row + kc * 4;
#pragma unroll
        for (int it = 0; it < C::BN / KSTEP; ++it) {
            const bool kok = kcol && it * KSTEP < left, vok = vcol && it * KSTEP < left;
            flash_cp_async16(sm.land_k(ls) + tf32x3_swz<C>(kr + it * KSTEP, kc),
                             kok ? ks + (int64_t)it * KSTEP * a.k.row : kg, kok);
            flash_cp_async16(sm.land_v(ls) + tf32x3_swz<C>(kr + it * KSTEP, kc),
                             vok ? vs + (int64_t)it * KSTEP * a.v.row : vg, vok);
        }
    };
    /* the next item of this block with a key block to load, from w on */
    auto next = [&](int64_t w, int64_t &wn, tf32x3_ws_item &x) {
        for (; w < a.items; w += gridDim.x) {
            x = tf32x3_ws_item_of<C>(a, w);
            if (x.nkb > 0) {
                wn = w;
                return true;
            }
        }
        return false;
    };
    int64_t w;
    tf32x3_ws_item cur;
    if (!next(blockIdx.x, w, cur)) {
        return;
    }
    load(cur, 0, 0);
    flash_cp_async_commit();
    uint32_t i = 0; /* key blocks so far */
    for (;;) {
        int64_t wn = 0;
        tf32x3_ws_item nxt;
        bool more = false;
        for (int32_t j = 0; j < cur.nkb; ++j, ++i) {
            const uint32_t s = i & 1u, ph = i & 1u;
            if (j + 1 < cur.nkb) {
                load(cur, j + 1, s ^ 1u);
            } else {
                more = next(w + gridDim.x, wn, nxt);
                if (more) {
                    load(nxt, 0, s ^ 1u);
                }
            }
            flash_cp_async_commit();
            flash_cp_async_wait<1>();
            hop_bar_sync(C::PRODUCER_BAR, 128); /* every copy of block i landed */
            const uint32_t ks = i % C::KSTAGES, kph = (i / C::KSTAGES) & 1u;
            /* the thread index opaque each block: ptxas would otherwise keep
             * the splits' loop-invariant shared offsets in registers (they
             * spilled) */
            int tt = t;
            asm volatile("" : "+r"(tt));
            hop_mbar_wait(sm.k_empty(ks), kph ^ 1u);
            tf32x3_split_k<C, 128, C::SPLIT_BATCH>(sm.land_k(s), sm.k_hi(ks), sm.k_lo(ks), tt);
            hop_fence_proxy_async(); /* the split's generic writes before the wgmma reads */
            hop_mbar_arrive(sm.k_full(ks));
            hop_mbar_wait(sm.v_empty(), ph ^ 1u);
            tf32x3_split_v<C, 128, true, C::SPLIT_BATCH>(sm.land_v(s), sm.at(C::V_HI),
                                                         sm.at(C::V_LO), tt);
            hop_fence_proxy_async();
            hop_mbar_arrive(sm.v_full());
            hop_bar_sync(C::PRODUCER_BAR, 128); /* landing stage s read: free for block i + 2 */
        }
        if (!more) {
            break;
        }
        w = wn;
        cur = nxt;
    }
    flash_cp_async_wait<0>();
}

// --- consumers

/* A turn without a product (TURNS): wait for it, hand it on. */
template <class C> __device__ __forceinline__ void tf32x3_ws_turn(uint32_t mine, uint32_t theirs) {
    if (C::TURNS) {
        hop_bar_sync(mine, 256);
        hop_bar_arrive(theirs, 256);
    }
}

/* Consumer c (ct = 0 .. 127 within its warpgroup): rows 64 c .. 64 c + 63
 * of each of the block's items. */
template <class C>
__device__ __forceinline__ void tf32x3_ws_consume(const flash_args &a, tf32x3_ws_smem<C> sm, int c,
                                                  int ct) {
    const int lane = ct & 31, warp = ct >> 5;
    const int qr = lane >> 2, qc = lane & 3; /* fragment row / column in the warp's m16 */
    const int32_t g = a.g;
    const bool causal = a.is_causal != 0;
    const float sl = a.cap_log2 != 0.0f ? 1.0f : a.scale_log2;
    const uint32_t my_turn = C::TURN_BAR + c, their_turn = C::TURN_BAR + (c ^ 1);
    if (C::TURNS && c == 1) {
        hop_bar_arrive(C::TURN_BAR, 256); /* consumer 0 issues first */
    }
    uint32_t i = 0; /* key blocks so far (the producer's count) */
    for (int64_t w = blockIdx.x; w < a.items; w += gridDim.x) {
        const tf32x3_ws_item x = tf32x3_ws_item_of<C>(a, w);
        if (!x.valid) {
            continue; /* uniform: past the sequence's rows */
        }
        const int32_t lq = x.seq.lq, lkv = x.seq.lkv;
        const int64_t c0 = x.r0 + 64 * c; /* this consumer's first row */
        const int64_t t0 = c0 / g;
        const int32_t rem0 = (int32_t)(c0 - t0 * g);
        /* the keys every row of this consumer's sees; the key blocks any
         * of them sees (the item's nkb counts consumer 1's last row: consumer
         * 0 skips the blocks past its own, causal, and a consumer past the
         * sequence's rows all) */
        const int32_t kfull = c0 < x.nrows ? flash_key_end(causal, t0, lq, lkv) : 0;
        int32_t nkb_c = 0;
        if (c0 < x.nrows) {
            const int64_t last = (c0 + 64 < x.nrows ? c0 + 64 : x.nrows) - 1;
            nkb_c = (flash_key_end(causal, last / g, lq, lkv) + C::BN - 1) / C::BN;
        }
        int32_t kend[2]; /* this thread's rows' key ends */
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            kend[h] = flash_key_end(causal, t0 + (rem0 + 16 * warp + qr + 8 * h) / g, lq, lkv);
        }

        /* Q rows c0 .. c0 + 63 -> Q_HI(c) / Q_LO(c), split: 16-byte chunk
         * i = ct + 128 it, row i / CHUNKS; rows past the sequence, columns
         * past D: zeros. The consumer's previous products have retired. */
        const float *qg = (const float *)a.q.ptr + x.seq.qb + (int64_t)x.hk * g * a.q.head;
        int cq = ct; /* opaque each item: the split's offsets are not kept across items */
        asm volatile("" : "+r"(cq));
#pragma unroll(C::Q_UNROLL)
        for (int it = 0; it < 64 * C::CHUNKS / 128; ++it) {
            const int ci = cq + 128 * it, r = ci / C::CHUNKS, ch = ci % C::CHUNKS;
            const int32_t tt = (rem0 + r) / g, hg = (rem0 + r) - tt * g;
            float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            if (c0 + r < x.nrows && ch * 4 < a.d) {
                v = __ldg(
                    (const float4 *)(qg + (t0 + tt) * a.q.row + (int64_t)hg * a.q.head + ch * 4));
            }
            uint32_t h[4], lo[4];
            tf32x3_split(v.x, h[0], lo[0]);
            tf32x3_split(v.y, h[1], lo[1]);
            tf32x3_split(v.z, h[2], lo[2]);
            tf32x3_split(v.w, h[3], lo[3]);
            const uint32_t off = tf32x3_swz<C>(r, ch);
            tf32x3_st4(sm.q_hi(c) + off, h);
            tf32x3_st4(sm.q_lo(c) + off, lo);
        }
        hop_fence_proxy_async(); /* before the wgmma reads */
        hop_bar_sync(C::Q_BAR + c, 128);

        float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f};
        float o[C::O8][4];
        tf32x3_zero(o);
        float s[C::N8][4], oj[C::O8][4], alpha[2];
        uint32_t ph[C::N8][4], pl[C::N8][4];
        int32_t j = 0;
        for (; j < nkb_c; ++j, ++i) {
            const uint32_t par = i & 1u;
            /* the tiles' addresses opaque each block: ptxas would otherwise
             * keep the 72 loop-invariant wgmma descriptors in registers */
            tf32x3_ws_smem<C> sb = sm;
            asm volatile("" : "+r"(sb.base));
            const uint32_t ks = i % C::KSTAGES, kpar = (i / C::KSTAGES) & 1u;
            hop_mbar_wait(sb.k_full(ks), kpar);
            if (C::TURNS) {
                hop_bar_sync(my_turn, 256);
            }
            tf32x3_qk_ss<C>(s, sb.q_hi(c), sb.q_lo(c), sb.k_hi(ks), sb.k_lo(ks));
            if (C::TURNS) {
                hop_bar_arrive(their_turn, 256);
            }
            wgmma_wait<0>();
            tf32x3_fence(s);
            hop_mbar_arrive(sb.k_empty(ks));
            if (a.cap_log2 != 0.0f) {
                flash_softcap<false, C::N8>(s, a.cap_log2, a.cap_scale, a.cap_x2);
            }
            if ((int64_t)(j + 1) * C::BN > kfull) {
                flash_mask_row<C::N8>(s, 0, kend[0] - j * C::BN, qc);
                flash_mask_row<C::N8>(s, 1, kend[1] - j * C::BN, qc);
            }
            flash_softmax_rows<C::N8>(s, m, l, alpha, sl);
            tf32x3_split_p<C>(s, ph, pl);
            hop_mbar_wait(sb.v_full(), par);
            if (C::TURNS) {
                hop_bar_sync(my_turn, 256);
            }
            tf32x3_pv<C>(oj, ph, pl, sb.at(C::V_HI), sb.at(C::V_LO), true);
            if (C::TURNS) {
                hop_bar_arrive(their_turn, 256);
            }
            wgmma_wait<0>();
            tf32x3_fence(oj);
            tf32x3_fence(ph);
            tf32x3_fence(pl);
            hop_mbar_arrive(sb.v_empty());
            tf32x3_merge<C>(o, alpha, oj);
        }
        /* the item's blocks no row of this consumer's sees: release each
         * (after its full barrier, so that the arrivals count toward its
         * phase) and pass the turns */
        for (; j < x.nkb; ++j, ++i) {
            const uint32_t ks = i % C::KSTAGES, kpar = (i / C::KSTAGES) & 1u;
            hop_mbar_wait(sm.k_full(ks), kpar);
            tf32x3_ws_turn<C>(my_turn, their_turn);
            hop_mbar_arrive(sm.k_empty(ks));
            hop_mbar_wait(sm.v_full(), i & 1u);
            tf32x3_ws_turn<C>(my_turn, their_turn);
            hop_mbar_arrive(sm.v_empty());
        }

        /* O / l and LSE, rows of the sequence only, columns < Dv only. The
         * item's fields are read again here (the loop's asm statements
         * clobber memory, so they are not kept in registers across it:
         * kept, they spilled) */
        const tf32x3_ws_item y = tf32x3_ws_item_of<C>(a, w);
        const int64_t e0 = y.r0 + 64 * c, et0 = e0 / g;
        tf32x3_store_rows<C>(a, y.seq, y.hk, e0, et0, (int32_t)(e0 - et0 * g), y.nrows, o, m, l, sl,
                             warp, qr, qc);
    }
}

// --- the kernel

/* grid.x blocks stride over a.items; rec: the guard record, read first. */
template <class C>
static __global__ void __launch_bounds__(C::THREADS, 1)
    tf32x3_ws_kernel(const flash_args a, const opp__guard_record_t *rec) {
    if (rec->code != OPP_STATUS_SUCCESS) {
        return; /* the guard found bad cu_seqlens / nonpad: touch nothing */
    }
    extern __shared__ __align__(16) unsigned char tf32x3_ws_smem_raw[];
    const tf32x3_ws_smem<C> sm = {(flash_smem_addr(tf32x3_ws_smem_raw) + 1023u) & ~1023u};
    const int tid = threadIdx.x;
    if (tid == 0) {
        for (uint32_t k = 0; k < C::KSTAGES; ++k) {
            hop_mbar_init(sm.k_full(k), 128);
            hop_mbar_init(sm.k_empty(k), 128 * C::NC);
        }
        hop_mbar_init(sm.v_full(), 128);
        hop_mbar_init(sm.v_empty(), 128 * C::NC);
        hop_mbar_init_fence();
    }
    __syncthreads();
    const int wg = tid / 128;
    if (wg == 0) {
        tf32x3_ws_produce<C>(a, sm, tid);
        return;
    }
    tf32x3_ws_consume<C>(a, sm, wg - 1, tid & 127); /* ct: 0 .. 127 in its warpgroup */
}

// --- launcher

/* One launch function per TF32X3 line of kernels/kernel_list.h under
 * OPP__TF32X3_WS (OPP__F32_LAUNCHER, kernels/flash_launch.cuh: a 1-D grid,
 * one block a multiprocessor under OPP__TF32X3_WS_GRID, C::SMEM_BYTES of
 * dynamic shared memory, on the caller's stream). */
#define OPP__TF32X3_WS_LAUNCHER(name, ALGO, DTYPE, DMAX, ALIGN, SM, BM_, BN_, THREADS_, SMEM_) \
    OPP__F32_LAUNCHER(tf32x3_ws_cfg, tf32x3_ws_kernel, name, DMAX, BM_, BN_, THREADS_, SMEM_,  \
                      tf32x3_ws_cfg<DMAX>::PER_SM)

#endif /* OPP_KERNELS_TF32X3_WS_CUH */
