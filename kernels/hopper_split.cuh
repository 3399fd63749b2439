/*
 * hopper_split.cuh - the TMA split kernel (OPP__SPLIT_TMA, kernels/
 * split_config.h): on SM 90, the split launch of a batch whose items all
 * take the narrow tile (at most 16 split rows: decode and short
 * speculative sequences) with the narrow tile's arithmetic unchanged
 * (kernels/flash_split_narrow.cuh, TMA = true: the same products, the same
 * partials bit for bit), its K and V by TMA. Included by
 * kernels/hopper_launch.cuh (sm_90a objects only).
 *
 *   k, v      [total_kv | B*S_kv rows, Hkv, D] 16-bit, tensor maps {64
 *             columns, 1 head, 64 keys, 1} (128-byte swizzle, zeros past
 *             the tensor)
 *   part_o, part_ml: the split partials (kernels/flash_split.cuh)
 *
 * Why: the split kernel's blocks load their K and V by cp.async between
 * the tile's barriers, a block an item, one K and one V buffer; on decode
 * it ran ~10 % above the read time of its own access pattern (bench/
 * RESULTS.md, thirteenth session). Here a grid of as many blocks as the
 * SMs hold claims the split launch's items dynamically (in order, from a
 * counter in the guard record: blocks that start late, behind the Hopper
 * kernel's, or draw short items take more; OPP__SPLIT_TMA_ORDER: the
 * sequences' last splits last, longest first, ranked by warp 5); in each
 * block warp 4 (lane 0)
 * claims, hands each item with split blocks to warps 0-3 through a ring of
 * slots, and loads its key blocks' K and V into a ring of
 * OPP__SPLIT_TMA_STAGES stages ahead of them, across item ends, while
 * warps 0-3 run the narrow tile on them (full / empty mbarriers; a block's
 * key-block count n shared by both sides). Q stays a cp.async load of the
 * consumers. Shared memory: hop_split_layout (at D 128 with 3 stages
 * 108 KB, two blocks an SM). With OPP__SPLIT_SLICES 4 the consumers run
 * the sliced tile instead (kernels/hopper_split_tile.cuh: a slice of the
 * split per warp, no block barrier between them), on a ring of
 * OPP__SPLIT_TMA_STAGES_SL128 / _SL64 stages (4: at D 128 about 170 KB,
 * one block an SM); with OPP__SPLIT_SLICES_NARROW 1 as well, the narrow
 * tile runs the slices one after another instead, the producer loading
 * the key blocks in their order (opp__split_next_block), on the narrow
 * tile's ring and two blocks an SM.
 * On by default (H100, bench/RESULTS.md, thirty-second session: the split
 * kernel's bits; 100 % of the copy bandwidth on 256 sequences of 4096 keys,
 * 3 % faster there, 2 % slower on 8 such sequences, level on
 * decode_gqa_bf16; compute-sanitizer clean). Measured and dropped
 * (thirty-third session, commit 748eb39): the combine done by the block
 * that finishes a pair's last split (split counters in the workspace, a
 * fence an item), 3.5-7.6 % slower than the combine's own launch.
 */
#ifndef OPP_KERNELS_HOPPER_SPLIT_CUH
#define OPP_KERNELS_HOPPER_SPLIT_CUH

#include <cuda.h>
#include <stdint.h>

#include "kernels/flash_launch.cuh"
#include "kernels/hopper_maps.cuh"
#include "kernels/hopper_ops.cuh"
#include "kernels/hopper_split_tile.cuh"

/* The TMA split kernel's shared memory for the narrow tile's config S:
 * the ring's STAGES stages | full[STAGES], empty[STAGES] | the item
 * handoff's ifull[SLOTS], iempty[SLOTS] and SLOTS int64 items | the narrow
 * tile's buffers. */
template <class S> struct hop_split_layout {
    typedef flash_narrow_ring<S> R;
    static constexpr uint32_t STAGES = R::STAGES;
    /* items in flight between the producer and the consumers: one more than
     * the stages, so that one-block items never hold the producer back */
    static constexpr uint32_t SLOTS = STAGES + 1;
    static constexpr uint32_t BARS = STAGES * R::STAGE;
    static constexpr uint32_t IBARS = BARS + 16u * STAGES;
    static constexpr uint32_t ITEMS = IBARS + 16u * SLOTS;
    static constexpr uint32_t NARROW = (ITEMS + 8u * SLOTS + 15u) & ~15u;
    /* the tile's buffers: the narrow tile's, or with OPP__SPLIT_SLICES 4
     * the sliced tile's (kernels/hopper_split_tile.cuh) */
    static constexpr size_t TILE_BYTES = OPP__SPLIT_SLICE_TILE
                                             ? (size_t)hop_slice_layout<S>::BYTES
                                             : (size_t)flash_narrow_layout<S, true>::BYTES;
    static constexpr size_t BYTES = 1024 + NARROW + TILE_BYTES;
    /* blocks an SM (the launch bound): one for sliced splits at DB 128
     * (their stages fill the SM's shared memory), else two */
    static constexpr int MIN_BLOCKS = OPP__SPLIT_SLICE_TILE && S::DB > 64 ? 1 : 2;
    /* slot s of the handoff: its barriers, and the item (generic) */
    static __device__ __forceinline__ uint32_t ifull(uint32_t base, uint32_t s) {
        return base + IBARS + 8u * s;
    }
    static __device__ __forceinline__ uint32_t iempty(uint32_t base, uint32_t s) {
        return base + IBARS + 8u * (SLOTS + s);
    }
    static __device__ __forceinline__ volatile int64_t *item(uint8_t *gbase, uint32_t s) {
        return (volatile int64_t *)(gbase + ITEMS + 8u * s);
    }
    static_assert(STAGES >= 2 && STAGES <= 8, "OPP__SPLIT_TMA_STAGES: 2 .. 8");
    static_assert(S::BN == 64 && S::DB % 64 == 0 && S::DB <= 128, "64-key blocks, whole panels");
};

/* The number of key blocks of sequence b's last split (0: the sequence
 * does not split): the claim order's bucket (OPP__SPLIT_TMA_ORDER). */
template <class S>
__device__ __forceinline__ int32_t hop_split_last_blocks(const flash_args &a, int32_t b) {
    const flash_seq seq = flash_seq_of(a, b);
    int32_t jb = 0, je = 0;
    return opp__split_blocks(seq.lq, seq.lkv, a.g, a.split_min_kv, a.is_causal != 0,
                             flash_split_count(seq.lkv) - 1, S::BN, &jb, &je)
               ? je - jb
               : 0;
}

/* One warp ranks the batch's sequences by their last split's key blocks,
 * most first, ties in batch order, those that do not split last: perm[r]
 * the sequence of rank r (a stable counting sort; every block computes the
 * same permutation). cnt: OPP__SPLIT_KEYS / BN + 1 words of shared memory;
 * perm: a.batch <= OPP__SPLIT_ORDER_MAX entries. */
template <class S>
__device__ void hop_split_rank(const flash_args &a, uint32_t *cnt, uint16_t *perm) {
    constexpr int NK = OPP__SPLIT_KEYS / S::BN + 1;
    const int lane = threadIdx.x & 31;
    const unsigned below = (1u << lane) - 1u;
    for (int k = lane; k < NK; k += 32) {
        cnt[k] = 0;
    }
    __syncwarp();
    for (int32_t b0 = 0; b0 < a.batch; b0 += 32) { /* the buckets' sizes */
        const int32_t b = b0 + lane;
        const int32_t k = b < a.batch ? hop_split_last_blocks<S>(a, b) : -1;
        const unsigned same = __match_any_sync(0xFFFFFFFFu, k);
        if (k >= 0 && (same & below) == 0) {
            cnt[k] += (uint32_t)__popc(same);
        }
        __syncwarp();
    }
    if (lane == 0) { /* each bucket's first rank: the most blocks first, 0 last */
        uint32_t at = 0;
        for (int k = NK - 1; k >= 0; --k) {
            const uint32_t c = cnt[k];
            cnt[k] = at;
            at += c;
        }
    }
    __syncwarp();
    for (int32_t b0 = 0; b0 < a.batch; b0 += 32) { /* the ranks, in batch order a bucket */
        const int32_t b = b0 + lane;
        const int32_t k = b < a.batch ? hop_split_last_blocks<S>(a, b) : -1;
        const unsigned same = __match_any_sync(0xFFFFFFFFu, k);
        if (k >= 0) {
            perm[cnt[k] + (uint32_t)__popc(same & below)] = (uint16_t)b;
        }
        __syncwarp();
        if (k >= 0 && (same & below) == 0) {
            cnt[k] += (uint32_t)__popc(same);
        }
        __syncwarp();
    }
}

/* The producer (one thread): claims the launch's items in order from the
 * guard record's work_next_split (an atomic; the guard zeroes it each
 * call), skips those with no split block (opp__split_blocks), hands each
 * other item to the consumers through the slot ring (ifull / iempty),
 * then -1 when none is left; and loads each handed item's key blocks, in
 * the consumers' order, into stage n % STAGES once they have released
 * it. Claim c is item c (split-major); with OPP__SPLIT_TMA_ORDER, claims
 * c < (NS - 1) B Hkv (NS: the most splits) are the items of the splits
 * before each sequence's last, split-major, and claim (NS - 1) B Hkv + r
 * Hkv + hk the last split of sequence perm[r] (hop_split_rank; NULL: r)
 * and kv head hk (opp__split_claim_slot / _split, kernels/split_rule.h;
 * //tests:split_rule_test), perm read after the rank warp's arrival on
 * rank_bar (a shared mbarrier address). */
template <class S>
__device__ void hop_split_produce(const CUtensorMap *mk, const CUtensorMap *mv, const flash_args &a,
                                  opp__guard_record_t *rec, flash_narrow_ring<S> ring,
                                  uint8_t *gbase, const uint16_t *perm, uint32_t rank_bar,
                                  bool slice_items) {
    typedef hop_split_layout<S> L;
    constexpr int32_t NSL = OPP__SPLIT_SLICES;
    const uint32_t base = ring.ring; /* ring.n: the key blocks loaded */
    const int64_t per = (int64_t)a.batch * a.hkv;
    const bool causal = a.is_causal != 0;
    /* slice items (OPP__SPLIT_SLICE_ITEMS): claim c is slice c % NSL of the
     * item claim c / NSL would be without them */
    const bool si = OPP__SPLIT_SLICE_ITEMS > 0 && slice_items;
    const int64_t claims = si ? a.items * NSL : a.items;
    unsigned long long *ctr = (unsigned long long *)&rec->work_next_split;
    for (uint32_t it = 0;; ++it) {
        int64_t w;
        int32_t b = 0, hk = 0, jb = 0, je = 0, slice = 0;
        for (;;) { /* the next item with split blocks, or -1 */
            w = (int64_t)atomicAdd(ctr, 1ull);
            if (w >= claims) {
                w = -1;
                break;
            }
            if (si) {
                slice = (int32_t)(w % NSL);
                w /= NSL;
            }
            int32_t split;
            /* r: a last-split claim's rank (kernels/split_rule.h), which only
             * the claim order (OPP__SPLIT_TMA_ORDER) gives its last splits */
            const int32_t r = opp__split_claim_slot(w, a.items, per, a.hkv, &split, &b, &hk);
            if constexpr (OPP__SPLIT_TMA_ORDER) {
                if (r >= 0) {
                    if (perm != nullptr) {
                        hop_mbar_wait(rank_bar, 0); /* ranked (passes at once after the first) */
                        b = (int32_t)perm[r];
                    } else {
                        b = r;
                    }
                }
            }
            const flash_seq seq = flash_seq_of(a, b);
            if constexpr (OPP__SPLIT_TMA_ORDER) {
                if (!opp__split_claim_split(&split, r >= 0, seq.lkv)) {
                    continue; /* the sequence's last split: claimed at the end */
                }
                w = (int64_t)split * per + (int64_t)b * a.hkv + hk; /* the item */
            }
            if (opp__split_blocks(seq.lq, seq.lkv, a.g, a.split_min_kv, causal, split, S::BN, &jb,
                                  &je)) {
                break;
            }
        }
        const uint32_t slot = it % L::SLOTS, sph = (it / L::SLOTS) & 1u;
        hop_mbar_wait(L::iempty(base, slot), sph ^ 1u); /* a fresh barrier passes */
        /* (a slice item: the item times NSL plus its slice; handed even
         * when the slice has no block, for its partial) */
        *L::item(gbase, slot) = si && w >= 0 ? w * NSL + slice : w;
        hop_mbar_arrive(L::ifull(base, slot)); /* release: the consumers read w after it */
        if (w < 0) {
            return;
        }
        /* the sequence's first key row and batch coordinate */
        const int32_t row0 = a.cu_kv != NULL ? a.cu_kv[b] : 0, bc = a.cu_kv != NULL ? 0 : b;
        /* in the consumers' order: ascending, or with OPP__SPLIT_SLICES 4 on
         * the narrow tile slice by slice (opp__split_next_block); a slice
         * item's slice alone */
        for (int32_t j = si ? opp__split_slice_first(jb, slice) : jb; j < je;
             j = si                      ? j + NSL
                 : OPP__SPLIT_SLICE_TILE ? j + 1
                                         : opp__split_next_block(j, jb, je),
                     ++ring.n) {
            const uint32_t st = ring.stage(), full = ring.full(st);
            hop_mbar_wait(ring.empty(st), ring.phase() ^ 1u); /* a fresh barrier passes */
            hop_mbar_expect_tx(full, ring.STAGE);
#pragma unroll
            for (int p = 0; p < S::DB / 64; ++p) {
                hop_tma_load_4d(ring.k(st) + p * ring.PANEL, mk, full, 64 * p, hk, row0 + j * S::BN,
                                bc);
                hop_tma_load_4d(ring.v(st) + p * ring.PANEL, mv, full, 64 * p, hk, row0 + j * S::BN,
                                bc);
            }
        }
    }
}

/* The TMA split kernel's threads: warps 0-3 the consumers, warp 4 the
 * producer, and with OPP__SPLIT_TMA_ORDER warp 5, which ranks the
 * sequences while the producer hands out the first items. */
#define HOP_SPLIT_THREADS (OPP__SPLIT_TMA_ORDER ? 192 : 160)

/* grid.x blocks of HOP_SPLIT_THREADS threads (at most the SMs' room),
 * claiming the split launch's items (split, sequence, kv head)
 * dynamically; rec: the guard record (its code read first; its
 * work_next_split the claim counter); rank: bit 0, with
 * OPP__SPLIT_TMA_ORDER, whether the last splits are ranked (else claimed
 * in batch order); bit 1 (OPP__SPLIT_GUARD_PDL only): the launch is the
 * guard's programmatic dependent, so its blocks wait for the guard's end
 * and record (griddepcontrol.wait) before they read it; bit 2
 * (OPP__SPLIT_SLICE_ITEMS only): slice items, a.items OPP__SPLIT_SLICES
 * claims, each a slice of an item, its partial the slice's. */
template <int DT, class S>
static __global__ void __launch_bounds__(HOP_SPLIT_THREADS, hop_split_layout<S>::MIN_BLOCKS)
    hop_split_kernel(const __grid_constant__ CUtensorMap mk, const __grid_constant__ CUtensorMap mv,
                     const flash_args a, opp__guard_record_t *rec, int32_t rank) {
    typedef hop_split_layout<S> L;
    if constexpr (OPP__SPLIT_COMBINE_PDL) {
        /* the combine may launch now; it waits for this grid's end */
        asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
    }
    extern __shared__ __align__(16) uint8_t hop_split_raw[];
    __shared__ long long red[32];
    const uint32_t raw = flash_smem_addr(hop_split_raw), base = (raw + 1023u) & ~1023u;
    uint8_t *gbase = hop_split_raw + (base - raw);
    /* the ring; each side counts the key blocks it has taken in its copy */
    flash_narrow_ring<S> ring = {base, base + L::BARS, gbase, 0};
    __shared__ __align__(8) uint64_t rank_mbar; /* warp 5's arrivals: perm is ready */
    const uint32_t rank_bar = flash_smem_addr(&rank_mbar);
    if (threadIdx.x == 0) {
        hop_mbar_init(rank_bar, 32); /* every lane of warp 5 */
        for (uint32_t s = 0; s < L::STAGES; ++s) {
            hop_mbar_init(ring.full(s), 1); /* the producer's expect_tx */
            /* the consumer warps, or (sliced) every lane of the one that
             * took the stage (each releases its own reads and writes) */
            hop_mbar_init(ring.empty(s), OPP__SPLIT_SLICE_TILE ? 32 : 4);
        }
        for (uint32_t s = 0; s < L::SLOTS; ++s) {
            hop_mbar_init(L::ifull(base, s), 1);  /* the producer */
            hop_mbar_init(L::iempty(base, s), 4); /* the consumer warps */
        }
        hop_mbar_init_fence();
    }
    __syncthreads();
    if constexpr (OPP__SPLIT_GUARD_PDL) {
        if (rank & 2) { /* the guard's dependent: its record (code, claim counter) from here on */
            asm volatile("griddepcontrol.wait;" ::: "memory");
        }
    }
    if (rec->code == OPP_STATUS_SUCCESS) { /* bad cu_seqlens / nonpad: touch nothing */
        __shared__ uint16_t rank_perm[OPP__SPLIT_TMA_ORDER ? OPP__SPLIT_ORDER_MAX : 1];
        /* rank: uniform (the launcher's a.batch <= OPP__SPLIT_ORDER_MAX) */
        const bool ranked =
            OPP__SPLIT_TMA_ORDER &&
            (OPP__SPLIT_GUARD_PDL || OPP__SPLIT_SLICE_ITEMS > 0 ? rank & 1 : rank) != 0;
        if (threadIdx.x >= 160) { /* warp 5 ranks the sequences */
            if (ranked) {
                __shared__ uint32_t rank_cnt[OPP__SPLIT_KEYS / S::BN + 1];
                hop_split_rank<S>(a, rank_cnt, rank_perm);
                /* each lane releases its own perm entries: the producer's
                 * wait acquires every writer's arrival. (With one lane
                 * arriving after a __syncwarp, compute-sanitizer's racecheck
                 * reported the producer's perm read against the other
                 * lanes' writes, san_rs_decode_ragged_bf16, thirty-eighth
                 * session.) */
                hop_mbar_arrive(rank_bar);
            }
        } else if (threadIdx.x >= 128) {
            if (threadIdx.x == 128) {
                hop_split_produce<S>(&mk, &mv, a, rec, ring, gbase, ranked ? rank_perm : nullptr,
                                     rank_bar, (rank & 4) != 0);
            }
        } else {
            for (uint32_t it = 0;; ++it) {
                const uint32_t slot = it % L::SLOTS;
                hop_mbar_wait(L::ifull(base, slot), (it / L::SLOTS) & 1u);
                const int64_t w = *L::item(gbase, slot);
                __syncwarp(); /* every lane has read the slot */
                if ((threadIdx.x & 31) == 0) {
                    hop_mbar_arrive(L::iempty(base, slot));
                }
                if (w < 0) {
                    break;
                }
                if constexpr (OPP__SPLIT_SLICE_TILE) {
                    hop_split_tile<DT, S>(a, gbase + L::NARROW, w, red, &ring);
                } else if constexpr (OPP__SPLIT_SLICE_ITEMS > 0) {
                    /* (rank & 4: slice items, the slice in w's low digit) */
                    const int32_t nsl = (rank & 4) ? OPP__SPLIT_SLICES : 1;
                    flash_split_narrow<DT, S, true>(a, (uint16_t *)(gbase + L::NARROW), w / nsl,
                                                    red, &ring, nsl > 1 ? (int32_t)(w % nsl) : -1);
                } else {
                    flash_split_narrow<DT, S, true>(a, (uint16_t *)(gbase + L::NARROW), w, red,
                                                    &ring);
                }
            }
        }
    }
    /* after the Hopper kernel this launch is its programmatic dependent
     * (as flash_split_kernel): it does not end before that kernel */
    asm volatile("griddepcontrol.wait;" ::: "memory");
}

/* The split launch and its combine by the TMA split kernel, when
 * OPP__SPLIT_TMA is on and it applies (every item on the narrow tile, DB
 * <= OPP__SPLIT_DMAX, K and V addressable by TMA): *done true; else
 * nothing enqueued, *done false (the caller runs the split kernel).
 * after_hopper: as flash_launch_split's. With OPP__SPLIT_GUARD_PDL, when
 * every row splits (flash_all_split: the caller launched nothing, so the
 * guard's launch is the one before), the split launch is the guard's
 * programmatic dependent. */
template <int DT, int DB>
static opp_status_t hop_split_tma(const flash_args &a, const opp__problem_t *p,
                                  opp__guard_record_t *rec, struct CUstream_st *stream,
                                  bool after_hopper, bool *done) {
    *done = false;
    if constexpr (OPP__SPLIT_TMA == 0 || DB > OPP__SPLIT_DMAX) {
        (void)a, (void)p, (void)rec, (void)stream, (void)after_hopper;
        return OPP_STATUS_SUCCESS;
    } else {
        typedef flash_split_cfg<DB> S;
        typedef hop_split_layout<S> L;
        int64_t ts_max = 0;
        const flash_args sa = flash_split_args(a, p, &ts_max);
        const bool packed = p->layout == OPP__LAYOUT_PACKED;
        const int64_t nb = packed ? 1 : p->batch;
        if (ts_max * a.g > OPP__SPLIT_NARROW_ROWS || !hop_tma_ok(&p->k, nb) ||
            !hop_tma_ok(&p->v, nb)) {
            return OPP_STATUS_SUCCESS;
        }
        hop_encode_fn enc = NULL;
        OPP_TRY(hop_encoder(&enc));
        CUtensorMap mk, mv;
        const int64_t kv_rows = packed ? p->total_kv : p->kv_seqlen;
        OPP_TRY(hop_map(enc, &mk, "k", &p->k, DT, p->a.d, p->a.hkv, kv_rows, nb, 1, 64));
        OPP_TRY(hop_map(enc, &mv, "v", &p->v, DT, p->a.dv, p->a.hkv, kv_rows, nb, 1, 64));
        static int smem_set[OPP__DEVICE_CACHE_SLOTS];
        OPP_TRY(flash_smem_once((const void *)hop_split_kernel<DT, S>, L::BYTES, smem_set));
        /* blocks an SM (the occupancy, looked up once per device) */
        static int per_sm_cache[OPP__DEVICE_CACHE_SLOTS];
        int sms = 0, dev = 0;
        OPP_TRY(flash_sm_count(&sms));
        OPP_CUDA_TRY(cudaGetDevice(&dev));
        int per_sm = opp__device_cache_get(per_sm_cache, dev);
        if (per_sm <= 0) {
            OPP_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                &per_sm, hop_split_kernel<DT, S>, HOP_SPLIT_THREADS, L::BYTES));
            OPP_RETURN_IF(
                per_sm <= 0, OPP_STATUS_CUDA_ERROR,
                "the TMA split kernel (%zu bytes of shared memory) fits no SM of device %d",
                (size_t)L::BYTES, dev);
            opp__device_cache_set(per_sm_cache, dev, per_sm);
        }
        const int64_t cap = (int64_t)sms * per_sm;
        /* a small launch's slices as items of their own (the workspace holds
         * their partials: lib/attention_plan.c, the same rule) */
        const bool slices = OPP__SPLIT_SLICE_ITEMS > 0 && opp__split_slice_items(sa.items);
        const int64_t claims = slices ? sa.items * OPP__SPLIT_SLICES : sa.items;
        const unsigned grid = (unsigned)(claims < cap ? claims : cap);
        /* rank the last splits where their lengths may differ (packed: not
         * every sequence at max_seqlen_kv; padded: nonpad is on the device)
         * and the permutation fits the block */
        const int32_t rank = a.batch > 1 && a.batch <= OPP__SPLIT_ORDER_MAX &&
                             !(packed && p->total_kv == (int64_t)a.batch * p->max_seqlen_kv);
        const bool after_guard = OPP__SPLIT_GUARD_PDL && flash_all_split(a, p);
        const int32_t flags = rank | (slices ? 4 : 0);
        if (after_hopper || after_guard) {
            OPP_TRY(flash_launch_dependent(hop_split_kernel<DT, S>, grid, HOP_SPLIT_THREADS,
                                           L::BYTES, stream, mk, mv, sa, rec,
                                           flags | (after_guard ? 2 : 0)));
        } else {
            hop_split_kernel<DT, S><<<grid, HOP_SPLIT_THREADS, L::BYTES, (cudaStream_t)stream>>>(
                mk, mv, sa, rec, flags);
        }
        OPP_CUDA_TRY(cudaGetLastError());
        *done = true;
        return flash_launch_combine<DT>(a, ts_max, rec, stream, slices);
    }
}

#endif /* OPP_KERNELS_HOPPER_SPLIT_CUH */
