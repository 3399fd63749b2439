/*
 * hopper_attention.cuh - the FAST path's Hopper kernel (compute capability
 * 9.0, sm_90a): TMA loads into 128-byte-swizzled shared memory, wgmma
 * tensor cores with fp32 accumulation, a producer warpgroup (a claimer
 * warp and a loading lane) and one to three consumer warpgroups. Its
 * configurations (tiles, shared memory layout, register split, switches):
 * kernels/hopper_config.cuh; its producer: kernels/hopper_producer.cuh;
 * its matrix products: kernels/hopper_products.cuh; its epilogue:
 * kernels/hopper_epilogue.cuh; its event trace (development
 * builds): kernels/hopper_trace.cuh; its work items and claims:
 * kernels/hopper_items.cuh; its host side (tensor maps, grid, launchers):
 * kernels/hopper_launch.cuh, which kernels/hopper_d<DB>.cu instantiate for
 * the SM 90 FAST lines of kernels/kernel_list.h.
 *
 *   q   [total_q | B*S_q rows, Hq, D]     out [.., Hq, Dv]   (element strides)
 *   k   [total_kv | B*S_kv rows, Hkv, D]  v   [.., Hkv, Dv]
 *   lse [Hq, total_q] or [B, Hq, S_q] float32 (optional)
 *
 * Design (stages 1-3 of ../shared/FAST_KERNEL.md section 3: warp
 * specialisation, intra-warpgroup overlap, pingpong; a persistent grid
 * of one block per SM claiming the items, each sequence's longest first).
 * Tiles: a block owns the rows of BMT = BM / G whole query tokens of one
 * (sequence b, kv head hk): row r -> token t0 + r / G, head hk G + r % G
 * (GQA packing, as the flash kernel, but in whole tokens so that one TMA
 * box {64 columns, G heads, BMT tokens} lands the rows in order; rows
 * BMT G .. BM-1 are zeros, computed and never stored). Keys go in blocks of
 * BN from key 0 of the sequence, ascending.
 * Warps: 128 (NC + 1) threads, NC = BM / 64 consumers: 2 (BM 128), or 3
 * (BM 192, BN 96: the D 64 lines' wide configuration, which runs the
 * sequences hop_takes_wide() gives it in a launch of its own, before the
 * BM 128 launch runs the others), or 1 (BM 64 at D 64 with
 * OPP__HOPPER_D64_BM 64: two blocks an SM, two K / V stages, no pingpong;
 * the other block's products run under one block's per-item waits).
 * Warpgroup 0 is the producer: it drops to 56
 * registers; its second warp claims the items ahead into a claim queue
 * (hop_claim_ahead) and lane 0 of its first (hop_load) issues every TMA (Q
 * once per item; K_j and V_j into rings of STAGES stages - 4 at DB 64,
 * else 2 - each buffer with a "full" mbarrier the TMA
 * completes and an "empty" one every consumer arrives on). Warpgroups 1 ..
 * NC are consumers (224 registers, 152 at NC 3, 200 at NC 1): consumer c owns rows
 * 64 c .. 64 c + 63, and for key block j issues together
 *   S_j = Q K_j^T          SS-wgmma m64nBNk16, D / 16 steps, Q and K from
 *                          shared memory
 *   O += P_{j-1} V_{j-1}   RS-wgmma m64nDBk16: P (rounded to the storage
 *                          type) is the A operand straight from the S
 *                          registers, V N-major
 * then, once S_j retired (wgmma.wait_group 1), the softcap, masks and
 * online softmax of S_j (the flash kernel's arithmetic, the same helpers:
 * kernels/softmax_rows.cuh) while P V still runs - in the PTX: ptxas
 * schedules the wait for P V above the online softmax unless
 * C::SOFTMAX_FIRST (kernels/hopper_config.cuh) - then O *= alpha_j and
 * P_j. The operations on O are the plain loop's in the same order
 * (O += P_{j-1} V_{j-1}, O *= alpha_j, O += P_j V_j), so the overlap
 * changes no bit. Pingpong: the consumers issue their products in turn, a
 * ring (named barriers 2 .. NC + 1; consumer 0 first), so one's softmax
 * runs under the others' products. Epilogue: O / l and LSE, rows of the
 * sequence only, columns < Dv only (l: by default the mean of the fp32 P's
 * row sum and the rounded P's, the latter from m64n8k16 products against
 * ones with each P V step, C::LSUM; the LSE takes the fp32 sum): at DB <=
 * 128 a consumer whose 64 rows are whole tokens of the sequence (G divides
 * 64) writes them to its part of the O tile in shared memory and one
 * thread TMA-stores it (named barriers NC + 2 ..), so no register waits on
 * the stores; other rows are stored from registers.
 * Head sizes: D, Dv <= DB. TMA zero-fills columns past D (Dv) and rows past
 * the tensor, so zeros add nothing. Rows of a key block past L_kv hold the
 * next sequence's keys (packed) or padding (padded, possibly NaN): their
 * scores are assigned -inf by the masks, and in the last key block the
 * consumers overwrite those V rows with zeros in shared memory before
 * P V (0 * NaN would be NaN). Rows of the Q box past the sequence hold the
 * next sequence's queries: each row's arithmetic is its own, they are never
 * stored.
 * Batch invariance (DESIGN.md section 4): as the flash kernel's - a row's
 * bits depend on its query, its sequence's keys and the key-block grid
 * (anchored at key 0; BN static per configuration, and which configuration
 * runs a sequence of the D 64 pair depends on its L_kv alone), never on
 * the other rows of its tile, the layout or the batch. Split-KV: the split
 * rows (kernels/flash_split.cuh, the same rule) run on the flash split
 * kernel of the same bucket (OPP__FLASH_SPLIT_ENTRY), after this launch as
 * its programmatic dependent: its blocks start on the SMs this launch's
 * blocks leave.
 * Work: items (m-block, sequence, kv head) in (sequence, kv head) pairs,
 * with a.hop_sort (few items an SM, lengths that differ:
 * kernels/hopper_sort_rule.h, opp__hop_wants_sort) the sequences with the most
 * keys first (each block sorts them at its start, hop_sort_sequences),
 * else in batch order; each pair's highest m-blocks (under causal masking
 * the longest) first.
 * A grid of one block per SM (two at NC 1) claims them one at a time from a counter in
 * the guard record, which the guard zeroes on every call (graph replays
 * included); the claimer warp claims up to C::QUEUE items ahead of the
 * loads, skipping m-blocks past the sequence's tokens (hop_claim), and the
 * loader hands each to the consumers with Q
 * (its geometry in a shared slot, published by the q_full arrive). Which
 * block runs an item, and when, never changes the item's arithmetic.
 * Pipelines: stage s of key block count `it` (running over the block's
 * items) is it % STAGES, its phase (it / STAGES) % 2; producer and
 * consumers walk the same items and blocks, so their counters agree.
 */
#ifndef OPP_KERNELS_HOPPER_ATTENTION_CUH
#define OPP_KERNELS_HOPPER_ATTENTION_CUH

#include <cuda.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#include "kernels/flash_attention.cuh"
#include "kernels/hopper_config.cuh"
#include "kernels/hopper_epilogue.cuh"
#include "kernels/hopper_items.cuh"
#include "kernels/hopper_producer.cuh"
#include "kernels/hopper_products.cuh"
#include "kernels/hopper_trace.cuh"
#include "kernels/hopper_ops.cuh"
#include "kernels/wgmma_ops.cuh"

// --- the kernel

/* WAIT (the guard's programmatic dependent): griddepcontrol.wait for the
 * guard's end and record; then griddepcontrol.launch_dependents: the split
 * launch after this one may start, and reads the record without a wait of
 * its own, so the trigger never precedes the wait. */
template <bool WAIT> __device__ __forceinline__ void hop_pass_guard() {
    if constexpr (WAIT) {
        asm volatile("griddepcontrol.wait;" ::: "memory");
    }
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
}

/* grid.x blocks claim the items (hop_claim); rec: the guard record, whose
 * work_next (work_next_wide: the D 64 pair's wide launch) is the claim
 * counter, read before any tensor. PROBE: the instance for split decode
 * batches (kernels/hopper_sort_rule.h, opp__hop_wants_probe), whose blocks
 * first look for a sequence with tokens of this launch (hop_any_tokens)
 * and leave when none has any, instead of claiming every (sequence, kv
 * head) pair; its own instance, so that the other's machine code is the
 * one measured without it (the probe's code changed ptxas's schedule of
 * the consumers: prefill_gqa_causal_bf16 2.5 % slower, bench/RESULTS.md,
 * thirty-eighth session). GPDL: the instance launched as the guard's
 * programmatic dependent (C::GUARD_PDL, hopper_enqueue): its blocks set up
 * shared memory, barriers and the sequence order (reading only the
 * caller's lengths) while the guard runs, then wait for the guard's end
 * and record (griddepcontrol.wait) before they read the record; the probe
 * instance looks for tokens (the caller's lengths) first, then waits. The
 * launch after this one (the split launch, a programmatic dependent) may
 * start once every block has passed that point (hop_pass_guard), on the
 * SMs this launch's blocks leave. Without GPDL or PROBE the machine code
 * is the one measured before the switch. */
template <int DT, class C, bool PROBE = false, bool GPDL = false>
static __global__ void __launch_bounds__(C::THREADS, C::BLOCKS_PER_SM)
    hopper_attention_kernel(const __grid_constant__ hop_maps maps, const flash_args a,
                            opp__guard_record_t *rec) {
    static_assert(!(PROBE && GPDL) && (!GPDL || C::GUARD_PDL), "one of the instances");
    if constexpr (PROBE) {
        /* the lengths as the caller gave them, read in bounds before the
         * guard's verdict (with C::GUARD_PDL, while the guard runs) and
         * acted on only past it: a block with no tokens leaves without a
         * read after the wait, so the split launch's blocks get its SM sooner */
        if (!hop_any_tokens<C>(a)) { /* uniform: a decode batch, split whole */
            hop_pass_guard<C::GUARD_PDL>();
            return;
        }
        hop_pass_guard<C::GUARD_PDL>();
        if (rec->code != OPP_STATUS_SUCCESS) {
            return; /* the guard found bad cu_seqlens / nonpad: touch nothing */
        }
    } else if constexpr (!GPDL) {
        hop_pass_guard<false>();
        if (rec->code != OPP_STATUS_SUCCESS) {
            return; /* the guard found bad cu_seqlens / nonpad: touch nothing */
        }
    }
    extern __shared__ __align__(16) uint8_t hop_smem_raw[];
    /* tiles on 1024-byte boundaries (the swizzle atom) */
    const uint32_t raw = flash_smem_addr(hop_smem_raw);
    const uint32_t base = (raw + 1023u) & ~1023u;
    uint8_t *gbase = hop_smem_raw + (base - raw);
    const hop_smem<C> smem = {base};
    const uint32_t sq = smem.sq();
    const uint32_t q_full = smem.q_full(), q_empty = smem.q_empty();
    const uint32_t slot = smem.slot();
    const int32_t g = a.g;
    const int32_t bmt = C::BM / g; /* tokens per tile (G <= BM: lib/dispatch.c) */

    const int tid = threadIdx.x;
    /* Q rows past BMT G are never loaded: zeros, once */
    for (uint32_t i = tid * 16; i < C::Q_BYTES; i += C::THREADS * 16) {
        *(uint4 *)(gbase + i) = make_uint4(0, 0, 0, 0);
    }
    if (C::LSUM != 0 && tid < 8) { /* the rounded row sums' ones (hop_issue_pv) */
        const uint32_t one2 = DT == OPP_DTYPE_F16 ? 0x3C003C00u : 0x3F803F80u;
        *(uint4 *)(gbase + (smem.ones() - base) + 16 * tid) = make_uint4(one2, one2, one2, one2);
    }
    if (tid == 0) {
        hop_mbar_init(q_full, 1);
        hop_mbar_init(q_empty, C::CTHREADS); /* every consumer thread: it read the slot */
        for (uint32_t s = 0; s < C::STAGES; ++s) {
            hop_mbar_init(smem.k_full(s), 1);
            hop_mbar_init(smem.v_full(s), 1);
            hop_mbar_init(smem.k_empty(s), C::NC);
            hop_mbar_init(smem.v_empty(s), C::NC);
        }
        for (uint32_t e = 0; e < C::QUEUE; ++e) {
            hop_mbar_init(smem.cq_full(e), 1);
            hop_mbar_init(smem.cq_empty(e), 1);
        }
        hop_mbar_init(smem.cq_need(), 1);
        hop_mbar_init_fence();
    }
    /* the items' sequence order: the sort's keys in the first K stage,
     * before any load lands there */
    const uint16_t *perm =
        a.hop_sort != 0 && hop_sort_sequences<C>(a, (int32_t *)(gbase + C::Q_BYTES),
                                                 (uint16_t *)(gbase + C::PERM_OFF))
            ? (const uint16_t *)(gbase + C::PERM_OFF)
            : NULL;
    hop_fence_proxy_async();
    __syncthreads();
    if constexpr (GPDL) {
        hop_pass_guard<true>();
        if (rec->code != OPP_STATUS_SUCCESS) {
            return; /* uniform: bad cu_seqlens / nonpad, touch nothing */
        }
    }

    const int wg = tid / 128;
    if (wg == 0) {
        // ---- producer: warp 1 claims the items ahead, lane 0 of warp 0 issues every load
        hop_regs_dec<C::PRODUCER_REGS>();
        if (tid == 0) {
            hop_load<C>(maps, a, smem, bmt);
        } else if (tid >= 32 && tid < 64) {
            hop_claim_ahead<C>(a, rec, perm, smem, bmt);
        }
        return;
    }

    // ---- consumers
    hop_regs_inc<C::CONSUMER_REGS>();
    const int c = wg - 1;       /* consumer: rows 64 c .. 64 c + 63 */
    const int ctid = tid - 128; /* 0 .. CTHREADS - 1 */
    const int lane = tid & 31, wq = (tid >> 5) & 3;
    const int qr = lane >> 2, qc = lane & 3;
    const int32_t rbase = c * 64 + wq * 16 + qr; /* this thread's rows: rbase, rbase + 8 */
    const bool causal = a.is_causal != 0;
    const float sl = a.cap_log2 != 0.0f ? 1.0f : a.scale_log2;
    /* pingpong: consumer c waits for its turn on barrier 2 + c, then hands
     * the turn to the next, c + 1 mod NC (each barrier: 128 threads sync,
     * 128 arrive); the last opens consumer 0's first turn */
    const int turn = 2 + c, next_turn = 2 + (c + 1) % C::NC;
    if (C::PINGPONG && c == C::NC - 1) {
        hop_bar_arrive(2, 256);
    }
    uint32_t it = 0, qn = 0;
    hop_tracer tr;
    const bool tlead = (ctid & 127) == 0;
    if (tlead) {
        tr.init(1 + c);
        tr.ev(HT_START, 0);
    }
    for (;;) {
        hop_mbar_wait(q_full, qn & 1);
        const uint32_t sa = slot + 32 * (qn & 1);
        ++qn;
        const int32_t nkb = hop_ld_shared_v4(sa).z;
        if (tlead) {
            tr.ev(HT_QFULL, nkb < 0 ? 255 + nkb : nkb);
        }
        if (nkb == -2) {
            break;
        }
        if (nkb <= 0) {
            hop_mbar_arrive(q_empty); /* no Q was loaded; this thread read the slot */
            if (nkb < 0) {
                continue;
            }
        }
        float m[2] = {-INFINITY, -INFINITY}, f[2] = {0.0f, 0.0f}, l[2] = {0.0f, 0.0f};
        float lr[4] = {0.0f, 0.0f, 0.0f, 0.0f}; /* C::LSUM: the rounded P's row sums */
        float o[C::DB / 2];
#pragma unroll
        for (int i = 0; i < C::DB / 2; ++i) {
            o[i] = 0.0f;
        }
        float sc[C::BN / 2];        /* S, then P (fp32) */
        uint32_t pa[C::BN / 16][4]; /* P in the storage type: the A fragments of P V */

        /* the last key block's keys that some row of the tile sees: at most
         * BN / 2 (C::TRIM) runs that block's products on its first half */
        bool half_last = false;
        if constexpr (C::TRIM) {
            if (nkb > 0) {
                const int4 geo = hop_ld_shared_v4(sa + 16); /* lq, lkv, t0, ntok */
                const int64_t last = (geo.z + bmt < geo.w ? geo.z + bmt : geo.w) - 1;
                half_last =
                    (nkb == 1 ? C::TRIM_FIRST : C::TRIM_STEP) &&
                    flash_key_end(causal, last, geo.x, geo.y) - (nkb - 1) * C::BN <= C::BN / 2;
            }
        }
        /* S = Q K^T and O += P V of the block in stage s, issued, not
         * waited for (kernels/hopper_products.cuh; halfc: the trimmed
         * block's first 64 keys) */
        auto issue_qk = [&](uint32_t s, auto halfc) {
            hop_issue_qk<DT, C, decltype(halfc)::value>(sc, smem, c, s);
        };
        auto issue_pv = [&](uint32_t s, auto halfc, auto lsumc) {
            hop_issue_pv<DT, C, decltype(halfc)::value, decltype(lsumc)::value>(o, lr, pa, smem, s);
        };
        /* after a wait: the registers of the retired products, fenced so the
         * compiler neither reads them earlier nor reuses them before */
        auto fence_s = [&]() {
#pragma unroll
            for (int i = 0; i < C::BN / 2; ++i) {
                hop_fence_reg(sc[i]);
            }
        };
        auto fence_ov = [&]() {
#pragma unroll
            for (int i = 0; i < C::DB / 2; ++i) {
                hop_fence_reg(o[i]);
            }
            if constexpr (C::LSUM != 0) {
#pragma unroll
                for (int i = 0; i < 4; ++i) {
                    hop_fence_reg(lr[i]);
                }
            }
#pragma unroll
            for (int kk = 0; kk < C::BN / 16; ++kk) {
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    hop_fence_reg(pa[kk][e]);
                }
            }
        };
        /* softcap, masks and the online softmax of key block j on sc, viewed
         * as the [BN/8][4] fragment of kernels/softmax_rows.cuh (the flash
         * kernel's helpers): P into sc, the rescale factors out */
        auto softmax = [&](int32_t j, float(&alpha)[2], auto halfc) {
            constexpr int N8 = decltype(halfc)::value ? C::BN / 16 : C::BN / 8;
            float(&s)[N8][4] = reinterpret_cast<float(&)[N8][4]>(sc);
            if (a.cap_log2 != 0.0f) { /* softcap first (before any mask); then sl = 1 */
                flash_softcap<true>(s, a.cap_log2, a.cap_scale, a.cap_x2);
            }
            if ((int64_t)(j + 1) * C::BN >
                hop_ld_shared_v4(sa).w) {                   /* a key some row must not see */
                const int4 geo = hop_ld_shared_v4(sa + 16); /* lq, lkv, t0 */
#pragma unroll
                for (int h = 0; h < 2; ++h) {
                    const int32_t kend =
                        flash_key_end(causal, (int64_t)geo.z + (rbase + 8 * h) / g, geo.x, geo.y) -
                        j * C::BN;
                    flash_mask_row(s, h, kend, qc);
                }
            }
            flash_softmax_block<C::FRAME>(s, m, f, l, alpha, sl);
        };
        /* O *= alpha (skipped when every row of the warp keeps its max) */
        auto rescale_o = [&](const float(&alpha)[2]) {
            if (__any_sync(0xFFFFFFFFu, alpha[0] != 1.0f || alpha[1] != 1.0f)) {
                flash_rescale_rows(reinterpret_cast<float(&)[C::DB / 8][4]>(o), alpha);
                if constexpr (C::LSUM != 0) {
                    flash_rescale_rows(reinterpret_cast<float(&)[1][4]>(lr), alpha);
                }
            }
        };
        auto pack_p = [&](auto halfc) {
#pragma unroll
            for (int kk = 0; kk < (decltype(halfc)::value ? C::BN / 32 : C::BN / 16); ++kk) {
                pa[kk][0] = flash_type<DT>::pack(sc[8 * kk + 0], sc[8 * kk + 1]);
                pa[kk][1] = flash_type<DT>::pack(sc[8 * kk + 2], sc[8 * kk + 3]);
                pa[kk][2] = flash_type<DT>::pack(sc[8 * kk + 4], sc[8 * kk + 5]);
                pa[kk][3] = flash_type<DT>::pack(sc[8 * kk + 6], sc[8 * kk + 7]);
            }
        };

        if (nkb > 0) {
            using full_t = std::false_type;
            using half_t = std::integral_constant<bool, C::TRIM>;
            /* block 0: S, softmax, P (halfc: block 0 is the last, trimmed) */
            auto first = [&](auto halfc) {
                const uint32_t s = smem.stage(it), ph = smem.phase(it);
                hop_mbar_wait(smem.k_full(s), ph);
                if (tlead) {
                    tr.ev(HT_K0, 0);
                }
                if (C::PINGPONG) {
                    hop_bar_sync(turn, 256);
                }
                issue_qk(s, halfc);
                if (C::PINGPONG) {
                    hop_bar_arrive(next_turn, 256);
                }
                wgmma_wait<0>();
                fence_s();
                if (tlead) {
                    tr.ev(HT_S0, 0);
                }
                if ((ctid & 127) == 0) {
                    hop_mbar_arrive(smem.k_empty(s));
                }
                if (nkb == 1) {
                    hop_mbar_arrive(q_empty); /* Q is read no more */
                }
                float alpha[2];
                softmax(0, alpha, halfc); /* O is 0: no rescale */
                pack_p(halfc);
                if (tlead) {
                    tr.ev(HT_P0, 0);
                }
            };
            if (C::TRIM_FIRST && nkb == 1 && half_last) {
                first(std::integral_constant<bool, C::TRIM_FIRST>());
            } else {
                first(full_t());
            }
            float pend[2] = {1.0f, 1.0f}; /* RESCALE_EARLY: alpha not yet applied to O */
            /* block j: S_j = Q K_j^T and O += P_{j-1} V_{j-1} in flight together,
             * the softmax of S_j under the second; then O *= alpha_j, P_j
             * (halfc: block j is the last, trimmed; each variant retires its
             * products before the two join) */
            auto step = [&](int32_t j, auto halfc) {
                const uint32_t cur = it + j, prev = cur - 1;
                const uint32_t s = smem.stage(cur), ph = smem.phase(cur);
                const uint32_t sp = smem.stage(prev), php = smem.phase(prev);
                hop_mbar_wait(smem.k_full(s), ph);
                if (tlead) {
                    tr.ev(HT_KJ, j);
                }
                if (C::PINGPONG) {
                    hop_bar_sync(turn, 256);
                }
                if constexpr (C::LSUM_AHEAD) { /* P_{j-1}'s rounded sums, retired with S_j */
                    hop_issue_lsum<DT, C>(lr, pa, smem);
                }
                issue_qk(s, halfc);
                if constexpr (C::RESCALE_EARLY) {
                    rescale_o(pend); /* alpha_{j-1}, under Q K_j^T */
                }
                hop_mbar_wait(smem.v_full(sp), php);
                issue_pv(sp, full_t(), std::integral_constant<bool, C::LSUM_WITH_PV>());
                if (C::PINGPONG) {
                    hop_bar_arrive(next_turn, 256);
                }
                wgmma_wait<1>();
                fence_s();
                if (tlead) {
                    tr.ev(HT_SJ, j);
                }
                if ((ctid & 127) == 0) {
                    hop_mbar_arrive(smem.k_empty(s));
                }
                if (j == nkb - 1) {
                    /* the item's last S retired: Q is free, so the next
                     * item's Q loads under this P V, softmax and epilogue */
                    hop_mbar_arrive(q_empty);
                }
                float alpha[2];
                softmax(j, alpha, halfc);
                if constexpr (C::SOFTMAX_FIRST) {
                    /* never taken (sums of exponentials: >= 0 or NaN); ptxas
                     * cannot move the wait below above a branch on them */
                    if (l[0] + l[1] < -1.0f) {
                        __trap();
                    }
                }
                wgmma_wait<0>();
                fence_ov();
                if (tlead) {
                    tr.ev(HT_PVJ, j);
                }
                if ((ctid & 127) == 0) {
                    hop_mbar_arrive(smem.v_empty(sp));
                }
                if constexpr (C::RESCALE_EARLY) {
                    pend[0] = alpha[0];
                    pend[1] = alpha[1];
                } else {
                    rescale_o(alpha);
                }
                pack_p(halfc);
                if (tlead) {
                    tr.ev(HT_STEP, j);
                }
            };
            for (int32_t j = 1; j < nkb; ++j) {
                if (C::TRIM_STEP && j == nkb - 1 && half_last) {
                    step(j, std::integral_constant<bool, C::TRIM_STEP>());
                } else {
                    step(j, full_t());
                }
            }
            /* the last block's P V; its V rows past L_kv become zeros first */
            {
                const uint32_t last = it + nkb - 1;
                const uint32_t s = smem.stage(last), ph = smem.phase(last);
                hop_mbar_wait(smem.v_full(s), ph);
                if (tlead) {
                    tr.ev(HT_VLAST, 0);
                }
                if constexpr (C::RESCALE_EARLY) {
                    rescale_o(pend);
                }
                /* keys of the sequence in the last block */
                const int32_t left = hop_ld_shared_v4(sa + 16).y - (nkb - 1) * C::BN;
                const int32_t vrows = half_last ? C::BN / 2 : C::BN; /* rows P V reads */
                if (left < vrows) {
                    /* rows left .. vrows-1: another sequence's values or
                     * padding; whole 128-byte rows, so the swizzle does not
                     * matter */
                    const uint32_t chunks = (uint32_t)(vrows - left) * 8u;
                    for (uint32_t i = ctid; i < chunks * C::PANELS; i += C::CTHREADS) {
                        const uint32_t p = i / chunks, r = i % chunks;
                        const uint32_t off =
                            smem.sv(s) - base + p * C::KV_PANEL + left * 128u + r * 16u;
                        *(uint4 *)(gbase + off) = make_uint4(0, 0, 0, 0);
                    }
                    hop_fence_proxy_async();
                    hop_bar_sync(1, C::CTHREADS);
                }
                using lsum_t = std::integral_constant<bool, C::LSUM != 0>;
                if (C::TRIM && half_last) {
                    issue_pv(s, half_t(), lsum_t());
                } else {
                    issue_pv(s, full_t(), lsum_t());
                }
                wgmma_wait<0>();
                fence_ov();
                if (tlead) {
                    tr.ev(HT_PVLAST, 0);
                }
                if ((ctid & 127) == 0) {
                    hop_mbar_arrive(smem.v_empty(s));
                }
            }
            it += nkb;
        }

        /* epilogue: O / l and LSE (kernels/hopper_epilogue.cuh) */
        hop_epilogue<DT, C>(maps, a, base, sa, o, f, l, lr, c, ctid, wq, qr, qc, rbase, g, bmt, tr,
                            tlead);
        if (tlead) {
            tr.ev(HT_EPI, 0);
        }
    }
    if (tlead) {
        tr.end();
    }
    if (C::TMA_O && (ctid & 127) == 0) {
        hop_bulk_wait<false>(); /* the stores are done before the block's memory goes */
    }
}

#endif /* OPP_KERNELS_HOPPER_ATTENTION_CUH */
