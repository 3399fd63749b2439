/*
 * hopper_producer.cuh - the producer of the FAST path's Hopper kernel
 * (kernels/hopper_attention.cuh), two warps of warpgroup 0: warp 1 claims
 * the items ahead (hop_claim_ahead: hop_claim and the item's geometry,
 * kernels/hopper_items.cuh) into a claim queue in shared memory; lane 0 of
 * warp 0 (hop_load) takes them in order, hands each to the consumers in an
 * item slot with its Q (q_full), and issues every TMA load: Q once per
 * item, then K_j and V_j of each key block into the stages of the ring
 * (hop_smem<C>::stage), each after the consumers released that stage
 * (k_empty / v_empty) and completing its "full" mbarrier. Both return
 * after the end of the work, which the consumers read from the slot (nkb
 * -2). Claiming ahead: a claim took the producer about 3 us (an atomic
 * round trip, then cu_seqlens), and when the one warp claimed after its
 * last loads of an item, the consumers waited 0.4-1.5 us an item for the
 * next Q (bench/RESULTS.md, twenty-first session, the event trace).
 */
#ifndef OPP_KERNELS_HOPPER_PRODUCER_CUH
#define OPP_KERNELS_HOPPER_PRODUCER_CUH

#include <stdint.h>

#include "kernels/flash_config.cuh"
#include "kernels/hopper_config.cuh"
#include "kernels/hopper_items.cuh"
#include "kernels/hopper_ops.cuh"
#include "kernels/hopper_trace.cuh"
#include "kernels/kernels.h"

/* Warp 1 (all 32 lanes): claims the block's items ahead of the loads
 * (hop_claim, an atomic round trip, then the item's geometry from
 * cu_seqlens: a few microseconds, which the loads of the current item
 * hide) and queues each in the next entry of the claim queue (C::QUEUE
 * entries, hop_smem::cq) once hop_load has emptied it: so the next item's Q
 * loads as soon as the current one's last S retires. The launch's last
 * grid.x items it claims only when hop_load asks for them (cq_need), not
 * ahead, so no block holds one while another has nothing left: on an
 * H200 (bench/RESULTS.md, twenty-second session, call 2) 3.8 % faster on
 * sweep_d64_causal_L1024, 1.7-1.9 % on the D 128 / 256 causal L 512
 * cases, 0.2-0.8 % on the prefill, encoder, short_many and softcap
 * workloads; decode and sweep_d64_noncausal_L4096 within 0.2 %. Claiming
 * the last 2 grid.x items so was no better. Ends after queueing
 * the end of the work. bmt: query tokens a tile (BM / G); perm: the
 * sequence order (NULL: batch order). */
template <class C>
__device__ __forceinline__ void hop_claim_ahead(const flash_args &a, opp__guard_record_t *rec,
                                                const uint16_t *perm, const hop_smem<C> &smem,
                                                int32_t bmt) {
    const int lane = threadIdx.x & 31;
    /* the claim counter (64-bit alike); the D 64 pair's wide launch has its own */
    unsigned long long *ctr =
        (unsigned long long *)(C::PAIR && C::NC == 3 ? &rec->work_next_wide : &rec->work_next);
    for (uint32_t n = 0;; ++n) {
        const uint32_t e = n % C::QUEUE;
        if (lane == 0) {
            hop_mbar_wait(smem.cq_empty(e), ((n / C::QUEUE) & 1) ^ 1);
            /* one of the launch's last grid.x items (as far as the counter
             * tells): claimed only once the loader asks for it, so that no
             * block holds a claimed item while another idles at the end.
             * The loader's n-th ask (arrive n, from 0) may come before or
             * after: it has asked n or n + 1 times here (QUEUE 1: it took
             * entry n - 1, not yet entry n), so the parity tells */
            if (C::PERSISTENT && C::QUEUE == 1 && n > 0 &&
                hop_ld_relaxed(ctr) + gridDim.x >= (unsigned long long)a.items) {
                hop_mbar_wait(smem.cq_need(), n & 1);
            }
        }
        __syncwarp();
        const int64_t w = hop_claim<C>(a, perm, bmt, ctr, n == 0);
        hop_where at = {0, 0, -1};
        if (w < a.items) {
            at = hop_where_of(a, perm, w);
        }
        hop_item t;
        const bool has = at.mb >= 0 && hop_item_at<C>(a, at, bmt, t);
        if (lane == 0) {
            const uint32_t q = smem.cq(e);
            hop_st_shared_v4(q, w >= a.items ? 2 : (has ? 1 : 0), at.b, at.hk, has ? t.nkb : 0);
            if (has) {
                hop_st_shared_v4(q + 16, t.kfull, t.lq, t.lkv, (int32_t)t.t0);
                hop_st_shared_v4(q + 32, t.ntok, t.q_row0, t.kv_row0, t.bcoord);
            }
            hop_mbar_arrive(smem.cq_full(e)); /* release: the entry is written */
        }
        if (w >= a.items) {
            return;
        }
    }
}

/* Lane 0 of warp 0 (tid 0): takes the items from the claim queue in order,
 * hands each to the consumers in an item slot with its Q (q_full), and
 * issues every TMA load: Q once per item, then K_j and V_j of each key
 * block into the stages of the ring. */
template <class C>
__device__ __forceinline__ void hop_load(const hop_maps &maps, const flash_args &a,
                                         const hop_smem<C> &smem, int32_t bmt) {
    hop_tma_prefetch(&maps.q);
    hop_tma_prefetch(&maps.k);
    hop_tma_prefetch(&maps.v);
    const uint32_t q_box = (uint32_t)C::PANELS * 128u * (uint32_t)(bmt * a.g);
    uint32_t it = 0;
    hop_tracer tr;
    tr.init(0);
    tr.ev(HT_START, 0);
    for (uint32_t qn = 0;; ++qn) {
        const uint32_t e = qn % C::QUEUE;
        tr.ev(HT_CLAIM, 0);
        hop_mbar_arrive(smem.cq_need()); /* ask for item qn (hop_claim_ahead) */
        /* its phase completed with that arrive (count 1): waited for at
         * once, since an mbarrier's arriving thread must wait for the phase
         * before it arrives again (compute-sanitizer synccheck: "Missing
         * wait"), and the claimer waits only for the last items' asks */
        hop_mbar_wait(smem.cq_need(), qn & 1);
        hop_mbar_wait(smem.cq_full(e), (qn / C::QUEUE) & 1);
        const uint32_t q = smem.cq(e);
        const int4 x = hop_ld_shared_v4(q), y = hop_ld_shared_v4(q + 16),
                   z = hop_ld_shared_v4(q + 32);
        hop_mbar_arrive(smem.cq_empty(e)); /* read: the claimer may refill it */
        const bool end = x.x == 2, has = x.x == 1;
        const int32_t b = x.y, hk = x.z, nkb = x.w, kfull = y.x, lq = y.y, lkv = y.z, t0 = y.w;
        const int32_t ntok = z.x, q_row0 = z.y, kv_row0 = z.z, bcoord = z.w;
        const bool loads = has && nkb > 0;
        tr.ev(HT_CLAIMED, end ? 254 : (has ? nkb : 253));
        /* hand the item over: its geometry in slot qn % 2, then Q (or,
         * with nothing to load, a plain arrive) completes q_full */
        hop_mbar_wait(smem.q_empty(), (qn & 1) ^ 1);
        tr.ev(HT_QEMPTY, 0);
        const uint32_t sa = smem.slot() + 32 * (qn & 1);
        /* r0: the sequence's first row (packed), or b (padded) */
        const int32_t r0 = a.cu_q != NULL ? q_row0 : b;
        hop_st_shared_v4(sa, has ? r0 : 0, hk, end ? -2 : (has ? nkb : -1), has ? kfull : 0);
        if (has) {
            hop_st_shared_v4(sa + 16, lq, lkv, t0, ntok);
        }
        if (loads) {
            hop_mbar_expect_tx(smem.q_full(), q_box);
            for (int p = 0; p < C::PANELS; ++p) {
                hop_tma_load_4d(smem.sq() + p * C::Q_PANEL, &maps.q, smem.q_full(), p * 64,
                                hk * a.g, q_row0 + t0, bcoord);
            }
            tr.ev(HT_QISSUED, 0);
        } else {
            hop_mbar_arrive(smem.q_full());
        }
        if (end) {
            tr.end();
            return; /* the consumers read the end from the slot */
        }
        if (loads) {
            for (int32_t j = 0; j < nkb; ++j, ++it) {
                const uint32_t s = hop_smem<C>::stage(it), ph = hop_smem<C>::phase(it);
                const int32_t row = kv_row0 + j * C::BN;
                hop_mbar_wait(smem.k_empty(s), ph ^ 1);
                tr.ev(HT_KWAIT, j);
                hop_mbar_expect_tx(smem.k_full(s), C::KV_BYTES);
                for (int p = 0; p < C::PANELS; ++p) {
                    hop_tma_load_4d(smem.sk(s) + p * C::KV_PANEL, &maps.k, smem.k_full(s), p * 64,
                                    hk, row, bcoord);
                }
                hop_mbar_wait(smem.v_empty(s), ph ^ 1);
                tr.ev(HT_VWAIT, j);
                hop_mbar_expect_tx(smem.v_full(s), C::KV_BYTES);
                for (int p = 0; p < C::PANELS; ++p) {
                    hop_tma_load_4d(smem.sv(s) + p * C::KV_PANEL, &maps.v, smem.v_full(s), p * 64,
                                    hk, row, bcoord);
                }
            }
        }
    }
}

#endif /* OPP_KERNELS_HOPPER_PRODUCER_CUH */
