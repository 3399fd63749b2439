/*
 * flash_config.cuh - what the FAST path's kernels share about a launch and
 * a sequence: flash_cfg<DB, BM, BN, NW, ST>, the portable flash kernel's
 * tile (kernels/flash_attention.cuh; kernels/kernel_list.h's
 * OPP__FLASH_SMEM_BYTES formula must agree, asserted here); flash_args,
 * everything a launch of the flash, split, FFMA or Hopper kernel takes by
 * value (built by flash_launch / the launchers); and the sequence
 * geometry every kernel computes alike: flash_key_end (the keys a query
 * token sees) and flash_seq_of (a sequence's lengths and row offsets, from
 * cu_seqlens or nonpad).
 */
#ifndef OPP_KERNELS_FLASH_CONFIG_CUH
#define OPP_KERNELS_FLASH_CONFIG_CUH

#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/fastdiv.h"
#include "kernels/kernel_list.h"
#include "kernels/kernels.h"
#include "kernels/split_rule.h"

// --- configuration

/* DB: head-size bucket; BM x BN tile; NW warps (see kernel_list.h); ST:
 * K / V buffers each (1: FlashAttention-2's schedule; 2: a ring, block
 * j + 1 loading under all of block j's math, flash_tile). */
template <int DB_, int BM_, int BN_, int NW_, int ST_ = 1> struct flash_cfg {
    static constexpr int DB = DB_, BM = BM_, BN = BN_, NW = NW_, ST = ST_;
    static constexpr int THREADS = 32 * NW_;
    static constexpr int MT = BM_ / (16 * NW_); /* m16 tiles per warp */
    static constexpr int PITCH = DB_ + 8;       /* elements per shared row */
    static constexpr int CHUNKS = DB_ / 8;      /* 16-byte chunks per row */
    /* loads: thread -> (row tid / CP, chunk tid % CP), CP = CHUNKS rounded up
     * to a power of two (chunks >= CHUNKS idle), rows advance by RSTEP */
    static constexpr int CP = CHUNKS <= 4 ? 4 : (CHUNKS <= 8 ? 8 : (CHUNKS <= 16 ? 16 : 32));
    static constexpr int RSTEP = THREADS / CP;
    static constexpr size_t Q_ELEMS = (size_t)BM_ * PITCH;
    static constexpr size_t KV_ELEMS = (size_t)BN_ * PITCH;
    static constexpr size_t SMEM_BYTES = (Q_ELEMS + 2 * ST_ * KV_ELEMS) * 2;
    static_assert(DB_ % 16 == 0 && BN_ % 16 == 0, "k16 steps");
    static_assert(MT >= 1 && MT * 16 * NW_ == BM_, "whole m16 tiles per warp");
    static_assert(ST_ == 1 || ST_ == 2, "one buffer or a ring of two");
    static_assert(ST_ != 1 || SMEM_BYTES == OPP__FLASH_SMEM_BYTES(DB_, BM_, BN_),
                  "kernel_list.h formula");
    static_assert(RSTEP >= 1 && BN_ % RSTEP == 0 && BM_ % RSTEP == 0, "whole load rounds");
};

/* Everything the kernel needs, by value (built by flash_launch). */
struct flash_args {
    const int32_t *cu_q, *cu_kv; /* packed layout, else NULL */
    const int64_t *nonpad;       /* padded layout, else NULL */
    int32_t batch, hkv, g, d, dv, q_seqlen;
    int64_t n_mb;  /* m-blocks per (sequence, kv head) */
    int64_t items; /* n_mb * batch * hkv */
    opp__tensor_t q, k, v, out;
    float *lse;
    int64_t lse_head, lse_batch;
    int32_t split_on; /* this row splits (DB <= OPP__SPLIT_DMAX and a workspace) */
    int32_t hq;       /* split launch: Hq, the partials' head count */
    float *part_o;    /* split launch: [P, Hq, Dv] */
    float2 *part_ml;  /* split launch: [P, Hq] */
    float scale_log2; /* scale * log2(e) (no softcap) */
    float cap_scale;  /* scale / softcap (softcap on; flash_tanh's argument) */
    float cap_log2;   /* softcap * log2(e); 0: softcap off */
    int32_t is_causal;
    /* the Hopper D 64 pair's launch (kernels/hopper_items.cuh): 0 every
     * sequence; 1 those hop_takes_wide() leaves to BM 128; 2 those it
     * gives to the wide configuration */
    int32_t hop_class;
    /* x / G, x / (B Hkv) and x / Hkv for 0 <= x < 2^31 (opp__fastdiv, kernels/fastdiv.h; the
     * second only when B Hkv < 2^31) */
    opp__fastdiv_t fd_g, fd_per, fd_hkv;
    /* 2 log2(e) scale / softcap (softcap on; flash_softcap<true>, the Hopper
     * kernel); last, so that the portable kernels' parameter offsets and
     * code are those of the tree before it */
    float cap_x2;
    /* the Hopper kernel: 1 runs the (sequence, kv head) pairs longest
     * sequence first (hop_sort_sequences), 0 in batch order
     * (kernels/hopper_sort_rule.h, opp__hop_wants_sort) */
    int32_t hop_sort;
    /* split_on: the split rule's key threshold, opp__split_min_kv(G)
     * (kernels/split_rule.h), a sequence of more keys splits its last
     * tokens; else INT32_MAX, so that none does (flash_set_split) */
    int32_t split_min_kv;
};

// --- a sequence

/* Keys visible to local query token t: 0 .. key_end - 1 (clamped to 0..lkv;
 * kernels/split_rule.h). */
__device__ __forceinline__ int32_t flash_key_end(bool causal, int64_t t, int32_t lq, int32_t lkv) {
    return opp__key_end(causal, t, lq, lkv);
}

/* Sequence b of the batch: its lengths, and where its rows start (element
 * offsets into q, k, v and out; the LSE's token offset): packed, from
 * cu_seqlens; padded, batch b with nonpad[b] keys. */
struct flash_seq {
    int32_t lq, lkv;
    int64_t qb, kb0, vb0, ob, lse_base;
};

__device__ __forceinline__ flash_seq flash_seq_of(const flash_args &a, int32_t b) {
    flash_seq s;
    if (a.cu_q != NULL) {
        const int64_t q0 = a.cu_q[b], k0 = a.cu_kv[b];
        s.lq = (int32_t)(a.cu_q[b + 1] - q0);
        s.lkv = (int32_t)(a.cu_kv[b + 1] - k0);
        s.qb = q0 * a.q.row, s.kb0 = k0 * a.k.row, s.vb0 = k0 * a.v.row, s.ob = q0 * a.out.row;
        s.lse_base = q0;
    } else {
        s.lq = a.q_seqlen;
        s.lkv = (int32_t)a.nonpad[b];
        s.qb = b * a.q.batch, s.kb0 = b * a.k.batch, s.vb0 = b * a.v.batch;
        s.ob = b * a.out.batch;
        s.lse_base = b * a.lse_batch;
    }
    return s;
}

#endif /* OPP_KERNELS_FLASH_CONFIG_CUH */
