/*
 * tf32x3_ws.cuh - OPP_ALGO_TF32X3, warp-specialised (OPP__TF32X3_WS 1,
 * kernels/kernel_list.h): the 3xTF32 kernel of kernels/tf32x3_attention.cuh
 * (its header has the arithmetic, the split and the layouts) with the
 * splits of K and V moved off the consumers' path and shared by BM rows.
 *
 *   q   [total_q | B*S_q rows, Hq, D]     out [.., Hq, Dv]   (element strides)
 *   k   [total_kv | B*S_kv rows, Hkv, D]  v   [.., Hkv, Dv]
 *   lse [Hq, total_q] or [B, Hq, S_q] float32 (optional)
 *
 * A block: NC + 1 warpgroups (OPP__TF32X3_WS_NC, 2 or 3); an item is BM =
 * 64 NC query rows of one (sequence b, kv head hk), rows token x
 * head-in-group as the FFMA kernel's.
 *   producer (warpgroup 0): cp.async of K_j and V_j (swizzled tiles)
 *     into landing stage j % 2, one block ahead
 *     (the next item's first block under the item's last); then, once the
 *     consumers released K_{j-1} (k_empty), K_j's split into K_HI / K_LO
 *     (k_full), and once they released V_{j-1} (v_empty), V_j's
 *     split-transpose into V_HI / V_LO (v_full): K_j's split runs under the
 *     consumers' P V_{j-1}, V_j's under their S = Q K_j^T.
 *   consumers c = 0 .. NC - 1 (warpgroups 1 .. NC): rows 64 c ..
 *     64 c + 63 of the item. Q split into Q_HI(c) / Q_LO(c) once an item
 *     (from global memory, its eight loads a thread issued before the
 *     item's key ends are worked out and the first split: one at a time,
 *     they cost about 6400 cycles an item, the twenty-eighth session's
 *     trace); per key block S = Q K_j^T from shared memory
 *     (then k_empty), softcap, masks, online softmax, P split in registers,
 *     P V_j into fresh accumulators (then v_empty), O = alpha O + P V_j
 *     (kernels/tf32x3_ws_blocks.cuh). Each issues its products when
 *     ready, so one's softmax runs under the others' products
 *     (OPP__TF32X3_WS_TURNS 1, two consumers: they take turns, named
 *     barriers 2 and 3: S of 0, S of 1, P V of 0, P V of 1, ...; 5 %
 *     slower). The item's key blocks are those its last row sees: a
 *     consumer releases the ones past its own rows' (causal) without a
 *     product. A/B switches, slower or level on an H100 (bench/RESULTS.md,
 *     twenty-seventh session): OPP__TF32X3_WS_OVERLAP 1, its own P V_j in
 *     flight under its softmax of S_{j+1}, FlashAttention-3's schedule, 5-6
 *     % slower; OPP__TF32X3_WS_QREG 1, Q's split fragments in registers so
 *     that S reads only K from shared memory, level; OPP__TF32X3_WS_SACC2 1
 *     (3), S (and P V) in two independent accumulations, level (3 %
 *     slower). Twenty-eighth session, with the producer below: OVERLAP 1
 *     still 7 % slower than NC 3, NC 2 4 %. UDESC (NC 3): S's descriptors
 *     in uniform registers (tf32x3_ws_config.cuh).
 *   the producer's splits load all of a thread's chunks before the first
 *     split (OPP__TF32X3_WS_SPLIT_BATCH; 1, chunk by chunk, was 4 % slower:
 *     each load's latency waited out alone), address them from per-thread
 *     offsets and immediates (tf32x3_split_k / _v), and its loads of whole
 *     blocks skip the per-copy tests: 914 -> about 500 instructions a key
 *     block, 4 % faster (H100).
 *   OPP__HOPPER_TRACE 1 (a development build, kernels/hopper_trace.cuh):
 *     the producer's and each consumer's thread 0 record the TT_* events;
 *     bench/tf32x3_trace.py sums them by phase.
 * Registers: ptxas compiles a 384-thread block's threads to at most 168
 * registers, and the consumers without overlap fit (167, no spill); a
 * 512-thread block's (NC 3) to 128, and its consumers need REGS 152 (the
 * producer 56, SPLIT_BATCH 2): they fit it because their index, fragment
 * coordinates and item are read again after the key loop, not kept.
 * OPP__TF32X3_WS_REGS N: the consumers raise their count to N
 * (setmaxnreg.inc; ptxas compiles the code after it to N) and the producer
 * lowers its own to what is left of the block's launch count, (NC + 1) L
 * - NC N (L: 168 at NC 2, 128 at NC 3). The overlap (NC 2) needs it: at
 * 216 (producer 72, with SPLIT_BATCH 4: 8 spills there) it builds without
 * spill and keeps P V in flight; at 208 the consumers spill (ptxas, CUDA
 * 13.0). Q's split fragments in registers (64 of them) would not fit
 * beside O, P V_j, S and P's split, hence Q in shared memory and S = Q K^T
 * with both operands there.
 * Shared memory (from the 1024-aligned base; each tile a swizzled [64][DB]
 * fp32 tile): KSTAGES stages of K_HI, K_LO; VSTAGES (1, 2 with OVERLAP) of
 * V_HI, V_LO; Q_HI(c), Q_LO(c) for each consumer c; two landing stages
 * of K and V; the mbarriers k_full[s], v_full[s] (count 128: every
 * producer thread arrives after its fence.proxy.async), k_empty[s],
 * v_empty[s] (count 128 NC: every consumer thread, after its product's
 * wait). Key block
 * count i (over the block's items): landing stage i % 2; K stage i %
 * KSTAGES, its phase (i / KSTAGES) % 2; V stage i % VSTAGES, its phase
 * (i / VSTAGES) % 2.
 * Arithmetic and batch invariance: as tf32x3_attention.cuh's, per row; the
 * tile is BM rows from row 0 of the sequence's item rows (static), so the
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
#include "kernels/tf32x3_ws_blocks.cuh"
#include "kernels/tf32x3_ws_config.cuh"

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
        if (a.d == C::DB && a.dv == C::DB && x.seq.lkv - j * C::BN >= C::BN) {
            /* uniform: a whole block of whole rows, no zero-fill (no per-copy
             * test or address select) */
            const char *kb = (const char *)ks, *vb = (const char *)vs;
            const int64_t kst = (int64_t)KSTEP * a.k.row * 4, vst = (int64_t)KSTEP * a.v.row * 4;
#pragma unroll
            for (int it = 0; it < C::BN / KSTEP; ++it) {
                flash_cp_async16(sm.land_k(ls) + tf32x3_swz<C>(kr + it * KSTEP, kc), kb + it * kst,
                                 true);
                flash_cp_async16(sm.land_v(ls) + tf32x3_swz<C>(kr + it * KSTEP, kc), vb + it * vst,
                                 true);
            }
            return;
        }
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
    hop_tracer tr; /* a development build's events (thread 0) */
    auto ev = [&](int e, int64_t arg) {
        if (OPP__HOPPER_TRACE && t == 0) {
            tr.ev(e, arg);
        }
    };
    tr.init(0);
    if (OPP__HOPPER_TRACE) {
        ev(HT_START, tf32x3_ws_smid());
    }
    int64_t w;
    tf32x3_ws_item cur;
    if (!next(blockIdx.x, w, cur)) {
        if (OPP__HOPPER_TRACE && t == 0) {
            tr.end();
        }
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
            const uint32_t s = i & 1u;
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
            ev(TT_P_LANDED, j);
            const uint32_t ks = i % C::KSTAGES, kph = (i / C::KSTAGES) & 1u;
            /* the thread index opaque each block: ptxas would otherwise keep
             * the splits' loop-invariant shared offsets in registers (they
             * spilled) */
            int tt = t;
            asm volatile("" : "+r"(tt));
            hop_mbar_wait(sm.k_empty(ks), kph ^ 1u);
            ev(TT_P_KFREE, j);
            tf32x3_split_k<C, 128, C::SPLIT_BATCH>(sm.land_k(s), sm.k_hi(ks), sm.k_lo(ks), tt);
            hop_fence_proxy_async(); /* the split's generic writes before the wgmma reads */
            hop_mbar_arrive(sm.k_full(ks));
            ev(TT_P_KDONE, j);
            const uint32_t vs = i % C::VSTAGES, vph = (i / C::VSTAGES) & 1u;
            hop_mbar_wait(sm.v_empty(vs), vph ^ 1u);
            ev(TT_P_VFREE, j);
            if constexpr (C::VSCATTER) {
                tf32x3_split_v_scatter<C, 128, C::VSPLIT_BATCH>(sm.land_v(s), sm.v_hi(vs),
                                                                sm.v_lo(vs), tt);
            } else {
                tf32x3_split_v<C, 128, true, C::VSPLIT_BATCH>(sm.land_v(s), sm.v_hi(vs),
                                                              sm.v_lo(vs), tt);
            }
            hop_fence_proxy_async();
            hop_mbar_arrive(sm.v_full(vs));
            ev(TT_P_VDONE, j);
            hop_bar_sync(C::PRODUCER_BAR, 128); /* landing stage s read: free for block i + 2 */
        }
        if (!more) {
            break;
        }
        w = wn;
        cur = nxt;
    }
    flash_cp_async_wait<0>();
    if (OPP__HOPPER_TRACE && t == 0) {
        tr.end();
    }
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
    hop_tracer tr;  /* a development build's events (thread 0) */
    tr.init(1 + c);
    if (OPP__HOPPER_TRACE && ct == 0) {
        tr.ev(HT_START, tf32x3_ws_smid());
    }
    for (int64_t w = blockIdx.x; w < a.items; w += gridDim.x) {
        const tf32x3_ws_item x = tf32x3_ws_item_of<C>(a, w);
        if (!x.valid) {
            continue; /* uniform: past the sequence's rows */
        }
        const int32_t lq = x.seq.lq, lkv = x.seq.lkv;
        const int64_t c0 = x.r0 + 64 * c; /* this consumer's first row */
        const int64_t t0 = c0 <= 0x7FFFFFFF ? (int64_t)opp__fastdiv((int32_t)c0, &a.fd_g) : c0 / g;
        const int32_t rem0 = (int32_t)(c0 - t0 * g);
        /* Q rows c0 .. c0 + 63, 16-byte chunk i = ct + 128 it of row i /
         * CHUNKS (rows past the sequence, columns past D: zeros): every load
         * issued first, under the item's key ends below (one at a time, the
         * loads cost about 6400 cycles an item on an H100, the trace), then
         * split into Q_HI(c) / Q_LO(c). The consumer's previous products
         * have retired. */
        const float *qg = (const float *)a.q.ptr + x.seq.qb + (int64_t)x.hk * g * a.q.head;
        int cq = ct; /* opaque each item: the split's offsets are not kept across items */
        asm volatile("" : "+r"(cq));
        constexpr int QIT = 64 * C::CHUNKS / 128;
        float4 v[QIT];
#pragma unroll
        for (int u = 0; u < QIT; ++u) {
            const int ci = cq + 128 * u, rr = ci / C::CHUNKS, ch = ci % C::CHUNKS;
            const int32_t tt = opp__fastdiv(rem0 + rr, &a.fd_g), hg = (rem0 + rr) - tt * g;
            v[u] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            if (c0 + rr < x.nrows && ch * 4 < a.d) {
                v[u] = __ldg(
                    (const float4 *)(qg + (t0 + tt) * a.q.row + (int64_t)hg * a.q.head + ch * 4));
            }
        }
        /* the keys every row of this consumer's sees; the key blocks any
         * of them sees (the item's nkb counts the last consumer's last row:
         * the others skip the blocks past their own, causal, and a consumer
         * past the sequence's rows all) */
        tf32x3_ws_rows<C> r;
        r.kfull = c0 < x.nrows ? flash_key_end(causal, t0, lq, lkv) : 0;
        r.qc = qc;
        r.sl = sl;
        int32_t nkb_c = 0;
        if (c0 < x.nrows) {
            const int64_t last = (c0 + 64 < x.nrows ? c0 + 64 : x.nrows) - 1;
            nkb_c = (flash_key_end(causal, last / g, lq, lkv) + C::BN - 1) / C::BN;
        }
        if (ct == 0) {
            tr.ev(TT_C_ITEM, nkb_c);
        }
#pragma unroll
        for (int h = 0; h < 2; ++h) { /* this thread's rows' key ends */
            r.kend[h] = flash_key_end(causal, t0 + (rem0 + 16 * warp + qr + 8 * h) / g, lq, lkv);
        }
#pragma unroll
        for (int u = 0; u < QIT; ++u) {
            const int ci = cq + 128 * u, rr = ci / C::CHUNKS, ch = ci % C::CHUNKS;
            uint32_t h[4], lo[4];
            tf32x3_split(v[u].x, h[0], lo[0]);
            tf32x3_split(v[u].y, h[1], lo[1]);
            tf32x3_split(v[u].z, h[2], lo[2]);
            tf32x3_split(v[u].w, h[3], lo[3]);
            const uint32_t off = tf32x3_swz<C>(rr, ch);
            tf32x3_st4(sm.q_hi(c) + off, h);
            tf32x3_st4(sm.q_lo(c) + off, lo);
        }
        hop_fence_proxy_async(); /* before the wgmma reads */
        hop_bar_sync(C::Q_BAR + c, 128);
        if (ct == 0) {
            tr.ev(TT_C_QDONE, nkb_c);
        }

        r.m[0] = r.m[1] = -INFINITY;
        r.l[0] = r.l[1] = 0.0f;
        float o[C::O8][4];
        tf32x3_zero(o);
        if constexpr (C::OVERLAP) {
            if (nkb_c > 0) {
                tf32x3_ws_blocks_overlap<C>(a, sm, c, i, nkb_c, r, o);
            }
        } else {
            tf32x3_ws_blocks<C>(a, sm, c, i, nkb_c, r, o, tr);
        }
        /* the item's blocks no row of this consumer's sees, from nkb_c to
         * nkb: release each (after its full barrier, so that the arrivals
         * count toward its phase) and pass the turns */
        auto release_rest = [&](int32_t nkb) {
            for (int32_t j = nkb_c; j < nkb; ++j, ++i) {
                const uint32_t ks = i % C::KSTAGES, kpar = (i / C::KSTAGES) & 1u;
                const uint32_t vs = i % C::VSTAGES, vpar = (i / C::VSTAGES) & 1u;
                hop_mbar_wait(sm.k_full(ks), kpar);
                tf32x3_ws_turn<C>(my_turn, their_turn);
                hop_mbar_arrive(sm.k_empty(ks));
                hop_mbar_wait(sm.v_full(vs), vpar);
                tf32x3_ws_turn<C>(my_turn, their_turn);
                hop_mbar_arrive(sm.v_empty(vs));
            }
        };
        /* O / l and LSE, rows of the sequence only, columns < Dv only. The
         * item's fields are read again here, not kept in registers across
         * the loop (kept, they spilled); LEAN: also the thread's indices
         * (%tid.x) and sl, and the item through an opaque index, so that
         * none of x's loads is kept either */
        if constexpr (C::LEAN) {
            int64_t wy = w;
            asm volatile("" : "+l"(wy));
            const tf32x3_ws_item y = tf32x3_ws_item_of<C>(a, wy);
            release_rest(y.nkb);
            const uint32_t tidx = tf32x3_ws_tid();
            if ((tidx & 127) == 0) {
                tr.ev(TT_C_REST, 0);
            }
            const int ce = (int)(tidx >> 7) - 1, le = (int)(tidx & 31), we = (int)((tidx >> 5) & 3);
            const int64_t e0 = y.r0 + 64 * ce, et0 = e0 / g;
            tf32x3_store_rows<C>(a, y.seq, y.hk, e0, et0, (int32_t)(e0 - et0 * g), y.nrows, o, r.m,
                                 r.l, a.cap_log2 != 0.0f ? 1.0f : a.scale_log2, we, le >> 2,
                                 le & 3);
            if ((tidx & 127) == 0) {
                tr.ev(TT_C_EPI, 0);
            }
        } else {
            release_rest(x.nkb);
            const tf32x3_ws_item y = tf32x3_ws_item_of<C>(a, w);
            const int64_t e0 = y.r0 + 64 * c, et0 = e0 / g;
            tf32x3_store_rows<C>(a, y.seq, y.hk, e0, et0, (int32_t)(e0 - et0 * g), y.nrows, o, r.m,
                                 r.l, sl, warp, qr, qc);
        }
    }
    if (OPP__HOPPER_TRACE && tf32x3_ws_tid() % 128 == 0) {
        tr.end();
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
        for (uint32_t v = 0; v < C::VSTAGES; ++v) {
            hop_mbar_init(sm.v_full(v), 128);
            hop_mbar_init(sm.v_empty(v), 128 * C::NC);
        }
        hop_mbar_init_fence();
    }
    __syncthreads();
    const int wg = tid / 128;
    if (wg == 0) {
        if (C::CONSUMER_REGS != 0) {
            hop_regs_dec<C::PRODUCER_REGS>();
        }
        tf32x3_ws_produce<C>(a, sm, tid);
        return;
    }
    if (C::CONSUMER_REGS != 0) {
        hop_regs_inc<C::CONSUMER_REGS>();
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
