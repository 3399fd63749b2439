/*
 * hopper_producer.cuh - the producer of the FAST path's Hopper kernel
 * (kernels/hopper_attention.cuh): the first warp of warpgroup 0 claims the
 * items (hop_claim, kernels/hopper_items.cuh), hands each to the consumers
 * in an item slot with its Q (q_full), and its lane 0 issues every TMA
 * load: Q once per item, then K_j and V_j of each key block into the
 * stages of the ring (hop_smem<C>::stage), each after the consumers
 * released that stage (k_empty / v_empty) and completing its "full"
 * mbarrier. It returns after handing over the end of the work (nkb -2),
 * which the consumers read from the slot.
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

/* Lanes 0 .. 31 of warp 0 (tid), all of them: the claims are the warp's,
 * the slots and loads lane 0's. bmt: query tokens a tile (BM / G); perm:
 * the sequence order (NULL: batch order). */
template <class C>
__device__ __forceinline__ void hop_produce(const hop_maps &maps, const flash_args &a,
                                            opp__guard_record_t *rec, const uint16_t *perm,
                                            const hop_smem<C> &smem, int32_t bmt, int tid) {
    if (tid == 0) {
        hop_tma_prefetch(&maps.q);
        hop_tma_prefetch(&maps.k);
        hop_tma_prefetch(&maps.v);
    }
    const uint32_t q_box = (uint32_t)C::PANELS * 128u * (uint32_t)(bmt * a.g);
    uint32_t it = 0, qn = 0;
    hop_tracer tr;
    if (tid == 0) {
        tr.init(0);
        tr.ev(HT_START, 0);
        tr.ev(HT_CLAIM, 0);
    }
    /* the claim counter (64-bit alike); the D 64 pair's wide launch has its own */
    unsigned long long *ctr =
        (unsigned long long *)(C::PAIR && C::NC == 3 ? &rec->work_next_wide : &rec->work_next);
    int64_t w = hop_claim<C>(a, perm, bmt, ctr, true);
    for (;;) {
        hop_where at = {0, 0, -1};
        if (w < a.items) {
            at = hop_where_of(a, perm, w);
        }
        hop_item t;
        const bool has = at.mb >= 0 && hop_item_at<C>(a, at, bmt, t);
        const bool loads = has && t.nkb > 0;
        if (tid == 0) {
            tr.ev(HT_CLAIMED, w >= a.items ? 254 : (has ? t.nkb : 253));
            /* hand the item over: its index in slot qn % 2, then Q (or,
             * with nothing to load, a plain arrive) completes q_full */
            hop_mbar_wait(smem.q_empty(), (qn & 1) ^ 1);
            tr.ev(HT_QEMPTY, 0);
            const uint32_t sa = smem.slot() + 32 * (qn & 1);
            /* r0: the sequence's first row (packed), or b (padded) */
            const int32_t r0 = a.cu_q != NULL ? t.q_row0 : at.b;
            hop_st_shared_v4(sa, has ? r0 : 0, at.hk, w >= a.items ? -2 : (has ? t.nkb : -1),
                             has ? t.kfull : 0);
            if (has) {
                hop_st_shared_v4(sa + 16, t.lq, t.lkv, (int32_t)t.t0, t.ntok);
            }
            if (loads) {
                hop_mbar_expect_tx(smem.q_full(), q_box);
                for (int p = 0; p < C::PANELS; ++p) {
                    hop_tma_load_4d(smem.sq() + p * C::Q_PANEL, &maps.q, smem.q_full(), p * 64,
                                    t.hk * a.g, t.q_row0 + (int32_t)t.t0, t.bcoord);
                }
                tr.ev(HT_QISSUED, 0);
            } else {
                hop_mbar_arrive(smem.q_full());
            }
        }
        ++qn;
        if (w >= a.items) {
            if (tid == 0) {
                tr.end();
            }
            return; /* the consumers read the end from the slot */
        }
        if (loads && tid == 0) {
            for (int32_t j = 0; j < t.nkb; ++j, ++it) {
                const uint32_t s = hop_smem<C>::stage(it), ph = hop_smem<C>::phase(it);
                const int32_t row = t.kv_row0 + j * C::BN;
                hop_mbar_wait(smem.k_empty(s), ph ^ 1);
                tr.ev(HT_KWAIT, j);
                hop_mbar_expect_tx(smem.k_full(s), C::KV_BYTES);
                for (int p = 0; p < C::PANELS; ++p) {
                    hop_tma_load_4d(smem.sk(s) + p * C::KV_PANEL, &maps.k, smem.k_full(s), p * 64,
                                    t.hk, row, t.bcoord);
                }
                hop_mbar_wait(smem.v_empty(s), ph ^ 1);
                tr.ev(HT_VWAIT, j);
                hop_mbar_expect_tx(smem.v_full(s), C::KV_BYTES);
                for (int p = 0; p < C::PANELS; ++p) {
                    hop_tma_load_4d(smem.sv(s) + p * C::KV_PANEL, &maps.v, smem.v_full(s), p * 64,
                                    t.hk, row, t.bcoord);
                }
            }
        }
        /* the next claim: under the consumers' last key blocks */
        if (tid == 0) {
            tr.ev(HT_CLAIM, 0);
        }
        w = hop_claim<C>(a, perm, bmt, ctr, false);
    }
}

#endif /* OPP_KERNELS_HOPPER_PRODUCER_CUH */
