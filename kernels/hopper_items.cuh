/*
 * hopper_items.cuh - the work items of the Hopper kernel
 * (kernels/hopper_attention.cuh) and how its persistent blocks claim them.
 *
 *   item w in 0 .. items-1, items = n_mb * B * Hkv, n_mb = ceil(max_seqlen_q / BMT)
 *   w -> (sequence b, kv head hk, m-block mb): the (b, hk) pairs in turn,
 *        the sequences with the most keys first (hop_sort_sequences: a
 *        permutation every block computes from cu_seqlens or nonpad, up
 *        to OPP__HOPPER_SORT_MAX sequences, when the launch asks for it,
 *        a.hop_sort; else in batch order), each
 *        pair's m-blocks highest first (hop_where_of)
 *   (b, hk, mb) -> tokens t0 .. t0 + BMT - 1 of sequence b, its key blocks
 *        and keys every row sees (hop_item_at), from cu_seqlens or nonpad
 *        on the device
 * hop_claim: the next item of a block, from the counter in the guard
 * record (zeroed by the guard on every call); items past a sequence's
 * tokens are skipped for every block at once (atomicMax). Which block runs
 * an item, and when, never changes the item's arithmetic.
 * The D 64 pair: hop_takes_wide() gives each sequence to one of two
 * launches (flash_args::hop_class), from its own L_kv alone; the other
 * launch sees it as a sequence of no tokens.
 */
#ifndef OPP_KERNELS_HOPPER_ITEMS_CUH
#define OPP_KERNELS_HOPPER_ITEMS_CUH

#include <stdint.h>

#include "kernels/flash_attention.cuh"
/* Whether the Hopper D 64 pair runs a sequence with lkv keys on its wide
 * configuration (BM 192, BN 96: three consumer warpgroups) rather than on
 * BM 128: from OPP__HOPPER_WIDE_D64_MIN_KEYS keys on. On the H200 sweep
 * (bench/RESULTS.md, ninth session) BM 192 ran self-attention 4-10 %
 * faster from 4096 tokens on, as fast at 2048, and up to a third slower
 * below 1024 (a 128-token sequence pads to 192 rows); with this pair and
 * its threshold at 2048, the L 2048 cases ran 8 % slower than BM 128 alone
 * and those from 4096 on 1-7 % faster (tenth session), so 4096. L_kv, not
 * L_q: the padded layout gives every sequence L_q = S_q, so a rule on L_q would
 * run a sequence on one configuration packed and on the other padded; L_kv
 * is the same in both, so a sequence's bits never depend on the layout or
 * the rest of the batch. */
__host__ __device__ __forceinline__ bool hop_takes_wide(int64_t lkv) {
    return lkv >= OPP__HOPPER_WIDE_D64_MIN_KEYS;
}

/* Tokens of a sequence this launch runs: ntok, or 0 when the other launch
 * of the D 64 pair runs it (C::PAIR: a configuration of the pair). */
template <class C>
__device__ __forceinline__ int32_t hop_class_tokens(const flash_args &a, int32_t ntok,
                                                    int32_t lkv) {
    if constexpr (!C::PAIR) {
        return ntok;
    } else {
        return a.hop_class == 0 || hop_takes_wide(lkv) == (a.hop_class == 2) ? ntok : 0;
    }
}

/* The geometry of one item (m-block, sequence, kv head), computed alike by
 * the producer and the consumers. */
struct hop_item {
    int32_t b, hk, lq, lkv;
    int32_t ntok;    /* tokens of this launch: lq minus the split tokens */
    int64_t t0;      /* first token of the tile */
    int32_t nkb;     /* key blocks the tile runs */
    int32_t kfull;   /* keys every row of the tile sees */
    int32_t q_row0;  /* TMA row coordinate of the sequence's token 0 */
    int32_t kv_row0; /* ... of its key 0 */
    int32_t bcoord;  /* TMA batch coordinate (padded: b; packed: 0) */
};

/* The sequence order of the items (hop_where_of): perm[rank] = b, the
 * sequences by their keys of this launch (hop_tokens: no tokens counts as
 * -1) descending, equal keys by b. Every thread of the block calls it;
 * keys: OPP__HOPPER_SORT_MAX int32 of scratch shared memory, perm: the
 * same number of uint16 that the block keeps. false (perm unwritten):
 * more than OPP__HOPPER_SORT_MAX sequences, the items go in batch order.
 * The longest sequences' pairs first, so the last items of a launch are
 * the short ones: bench/sched_model.py's list-scheduling model puts the
 * makespan of the fixed workloads 1.2-8.3 % above the mean load of an SM
 * in batch order and 0.4-3.2 % in this one (softcap_hd256_bf16 the most;
 * bench/RESULTS.md, nineteenth session); measured, softcap_hd256_bf16
 * 3.5-4.2 % faster and launches of 30-55 items an SM 0.5-1.5 % slower
 * (the sort at the start; twentieth session), hence opp__hop_wants_sort
 * (kernels/hopper_sort_rule.h). The pairs stay whole runs of
 * items, so the blocks running at once still share one pair's keys and
 * values in L2. Which order runs the items never changes an item's
 * arithmetic. Ends with __syncthreads. */
template <class C>
__device__ bool hop_sort_sequences(const flash_args &a, int32_t *keys, uint16_t *perm);

/* Where item w is: sequence b, kv head hk, m-block mb. Index order: the
 * (sequence, kv head) pairs in turn, sequence rank by rank (perm; NULL:
 * batch order), each pair's m-blocks highest first (under causal masking
 * the longest first), so the blocks running at once mostly share one
 * pair's keys and values in L2. */
struct hop_where {
    int32_t b, hk, mb;
};

__device__ __forceinline__ hop_where hop_where_of(const flash_args &a, const uint16_t *perm,
                                                  int64_t w) {
    const int64_t pair = w / a.n_mb;
    hop_where at;
    at.mb = (int32_t)(a.n_mb - 1 - (w - pair * a.n_mb));
    const int32_t rank = (int32_t)(pair / a.hkv);
    at.b = perm != NULL ? (int32_t)perm[rank] : rank;
    at.hk = (int32_t)(pair - (int64_t)rank * a.hkv);
    return at;
}

/* The geometry of the item at `at`; false when the m-block is past the
 * sequence's tokens (of this launch). */
template <class C>
__device__ __forceinline__ bool hop_item_at(const flash_args &a, const hop_where &at, int32_t bmt,
                                            hop_item &it) {
    const int64_t mb = at.mb;
    it.b = at.b;
    it.hk = at.hk;
    if (a.cu_q != NULL) {
        const int32_t q0 = a.cu_q[it.b], k0 = a.cu_kv[it.b];
        it.lq = a.cu_q[it.b + 1] - q0;
        it.lkv = a.cu_kv[it.b + 1] - k0;
        it.q_row0 = q0;
        it.kv_row0 = k0;
        it.bcoord = 0;
    } else {
        it.lq = a.q_seqlen;
        it.lkv = (int32_t)a.nonpad[it.b];
        it.q_row0 = 0;
        it.kv_row0 = 0;
        it.bcoord = it.b;
    }
    const int32_t ts = flash_split_tokens(it.lq, it.lkv, a.g, a.split_min_kv); /* 0: split off */
    it.ntok = hop_class_tokens<C>(a, it.lq - ts, it.lkv);
    it.t0 = mb * bmt;
    if (it.t0 >= it.ntok) {
        return false; /* past the sequence's tokens (of this launch) */
    }
    const bool causal = a.is_causal != 0;
    const int64_t last = (it.t0 + bmt < it.ntok ? it.t0 + bmt : it.ntok) - 1;
    const int32_t kend_tile = flash_key_end(causal, last, it.lq, it.lkv);
    it.kfull = flash_key_end(causal, it.t0, it.lq, it.lkv);
    it.nkb = (int32_t)(((int64_t)kend_tile + C::BN - 1) / C::BN);
    return true;
}

/* Tokens of sequence b this launch runs (L_q minus its split tokens).
 * Unsigned differences: defined for any values (the probe and the sort
 * read the lengths before the guard's verdict). */
template <class C> __device__ __forceinline__ int32_t hop_tokens(const flash_args &a, int64_t b) {
    int32_t lq, lkv;
    if (a.cu_q != NULL) {
        lq = (int32_t)((uint32_t)a.cu_q[b + 1] - (uint32_t)a.cu_q[b]);
        lkv = (int32_t)((uint32_t)a.cu_kv[b + 1] - (uint32_t)a.cu_kv[b]);
    } else {
        lq = a.q_seqlen;
        lkv = (int32_t)a.nonpad[b];
    }
    return hop_class_tokens<C>(a, lq - flash_split_tokens(lq, lkv, a.g, a.split_min_kv),
                               lkv); /* 0: split off */
}

/* Whether some sequence has tokens of this launch (hop_tokens > 0), or
 * the batch has more sequences than the block has threads (a thread a
 * sequence, no loop: with a loop ptxas serialised the D 128 consumers'
 * wgmma pipeline, C7511), for every thread of the block (it syncs: all
 * call it). The probe instance of the kernel calls it first, before the
 * guard's verdict: from lengths the guard may yet reject it reads only
 * cu_seqlens[0 .. batch] / nonpad[0 .. batch - 1], and its answer is acted
 * on only past the guard's code (hopper_attention_kernel). */
template <class C> __device__ bool hop_any_tokens(const flash_args &a) {
    const int64_t b = threadIdx.x;
    const int any = a.batch > (int64_t)blockDim.x || (b < a.batch && hop_tokens<C>(a, b) > 0);
    return __syncthreads_or(any) != 0;
}

/* The next item of this block, the same on all 32 lanes of the producer's
 * first warp, which all call it; a.items when none is left.
 * PERSISTENT: claimed from the guard record's counter *ctr (zero at the
 * start of the call) in hop_where_of's order, so a block that finishes
 * early takes the next item. A pair's m-blocks past its sequence's tokens
 * lead its run of items: a block that claims one raises the counter to the
 * pair's first m-block with tokens (atomicMax; every item it passes is
 * empty, so no block claims those) and claims again.
 * Else (one block per item): blockIdx.x, once. */
template <class C>
__device__ int64_t hop_claim(const flash_args &a, const uint16_t *perm, int32_t bmt,
                             unsigned long long *ctr, bool first) {
    if (!C::PERSISTENT) {
        return first ? (int64_t)blockIdx.x : a.items;
    }
    const int lane = threadIdx.x & 31;
    for (;;) {
        unsigned long long got = 0;
        if (lane == 0) {
            got = atomicAdd(ctr, 1ull);
        }
        const int64_t w = (int64_t)__shfl_sync(0xFFFFFFFFu, got, 0);
        if (w >= a.items) {
            return a.items;
        }
        const int64_t pair = w / a.n_mb;
        const int64_t mb = a.n_mb - 1 - (w - pair * a.n_mb);
        const int64_t rank = pair / a.hkv;
        const int64_t nmb =
            ((int64_t)hop_tokens<C>(a, perm != NULL ? (int64_t)perm[rank] : rank) + bmt - 1) / bmt;
        if (mb < nmb) {
            return w;
        }
        if (lane == 0) {
            atomicMax(ctr, (unsigned long long)(pair * a.n_mb + a.n_mb - nmb));
        }
    }
}

template <class C>
__device__ bool hop_sort_sequences(const flash_args &a, int32_t *keys, uint16_t *perm) {
    const int32_t nb = a.batch;
    if (nb > OPP__HOPPER_SORT_MAX) {
        return false;
    }
    for (int32_t b = threadIdx.x; b < nb; b += blockDim.x) {
        /* unsigned difference: defined for any cu_seqlens (the GPDL instance
         * sorts before the guard's verdict) */
        const int32_t lkv = a.cu_q != NULL
                                ? (int32_t)((uint32_t)a.cu_kv[b + 1] - (uint32_t)a.cu_kv[b])
                                : (int32_t)a.nonpad[b];
        keys[b] = hop_tokens<C>(a, b) > 0 ? lkv : -1;
    }
    __syncthreads();
    /* rank of b: the sequences before it (more keys, or as many and a lower
     * index); distinct, so perm is a permutation */
    for (int32_t b = threadIdx.x; b < nb; b += blockDim.x) {
        const int32_t kb = keys[b];
        int32_t rank = 0;
        for (int32_t o = 0; o < nb; ++o) {
            const int32_t ko = keys[o];
            rank += ko > kb || (ko == kb && o < b);
        }
        perm[rank] = (uint16_t)b;
    }
    __syncthreads();
    return true;
}

#endif /* OPP_KERNELS_HOPPER_ITEMS_CUH */
