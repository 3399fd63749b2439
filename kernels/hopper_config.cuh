/*
 * hopper_config.cuh - the configurations of the FAST path's Hopper kernel
 * (kernels/hopper_attention.cuh): hop_cfg<DB, BN, NC>, its tile (BM = 64 NC
 * query rows, BN keys, DB columns in 64-column panels), its shared memory
 * layout from the 1024-byte-aligned base
 *   Q [BM][DB] | STAGES stages of K [BN][DB], V [BN][DB] |
 *   O tile [BM][DB] (DB <= 128, the TMA store) | 256 bytes of mbarriers and
 *   item slots | the sequence order (uint16 [OPP__HOPPER_SORT_MAX])
 * (16-bit, 128-byte-swizzled panels; kernels/kernel_list.h's
 * OPP__HOPPER_SMEM_BYTES formula must agree, asserted here), the register
 * split of setmaxnreg, the named barriers and the compile-time switches
 * (pingpong, persistent grid, early rescale, uniform descriptors, trimmed
 * last block); hop_smem, the addresses of a block's shared memory; and
 * hop_maps, the tensor maps the launcher encodes.
 * Host and device; no code.
 */
#ifndef OPP_KERNELS_HOPPER_CONFIG_CUH
#define OPP_KERNELS_HOPPER_CONFIG_CUH

#include <cuda.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/kernel_list.h"

// --- configuration

/* NC_ consumer warpgroups of 64 rows each: 2 (BM 128), or 3 at DB 64 (BM
 * 192: at D 64 the softmax weighs as much as the products, so a third
 * warpgroup's softmax runs under the other two's products), or 1 at DB 64
 * (BM 64, OPP__HOPPER_D64_BM: two blocks an SM, so one block's per-item
 * waits run under the other's products) */
template <int DB_, int BN_, int NC_ = 2> struct hop_cfg {
    static constexpr int DB = DB_, NC = NC_, BM = 64 * NC_, BN = BN_, THREADS = 128 * (NC_ + 1);
    static constexpr int CTHREADS = 128 * NC_;                  /* consumer threads */
    static constexpr int PANELS = DB_ / 64;                     /* 64-column panels */
    static constexpr uint32_t Q_BYTES = (uint32_t)BM * DB_ * 2; /* PANELS x BM x 128 B */
    static constexpr uint32_t KV_BYTES = (uint32_t)BN_ * DB_ * 2;
    static constexpr uint32_t Q_PANEL = (uint32_t)BM * 128, KV_PANEL = (uint32_t)BN_ * 128;
    /* one consumer's 64 rows of one 64-column panel of the O tile */
    static constexpr uint32_t O_PANEL = 64u * 128u;
    /* K and V rings of STAGES stages (a power of two: the counters wrap) */
    static constexpr uint32_t STAGES = OPP__HOPPER_STAGES(DB_, BM),
                              STAGE_SHIFT = STAGES == 4 ? 2 : 1;
    /* resident blocks an SM: the launch bound, the register split and the
     * persistent grid (two blocks of one consumer each, else one) */
    static constexpr int BLOCKS_PER_SM = NC_ == 1 ? 2 : 1;
    /* DB <= 128: the O tile [BM][DB] in shared memory, which TMA stores
     * (whole tiles; what fits beside Q and the rings: not at DB 256) */
    static constexpr bool TMA_O = DB_ <= 128;
    static constexpr uint32_t O_OFF = Q_BYTES + 2 * STAGES * KV_BYTES; /* from the aligned base */
    static constexpr uint32_t O_BYTES = TMA_O ? Q_BYTES : 0;
    static constexpr uint32_t BAR_OFF = O_OFF + O_BYTES;
    /* the sequence order (hop_sort_sequences), after the mbarriers and slots */
    static constexpr uint32_t PERM_OFF = BAR_OFF + 256;
    /* the claim queue (hop_claim_ahead -> hop_load): QUEUE entries of 48
     * bytes, their full / empty mbarriers and the loader's ask (cq_need),
     * after the sequence order.
     * One entry: the claimer claims the next item while the loader loads
     * the current one. On an H100 (bench/RESULTS.md, twenty-first session)
     * one entry ran softcap_hd256_bf16 3.4 % and the D 256 and D 64 sweep
     * cases 1.7-3.6 % faster than two, the other cases within 1.5 %
     * (decode 0.3 % slower): a block holds fewer claimed items at the end
     * of a launch */
    static constexpr uint32_t QUEUE = 1;
    static constexpr uint32_t CQ_OFF = PERM_OFF + 2 * OPP__HOPPER_SORT_MAX;
    static constexpr size_t SMEM_BYTES = 1024 + (size_t)CQ_OFF + 256;
    /* the register file split by setmaxnreg: the producer warpgroup's
     * claims and loads need few, the consumers' accumulators many */
    static constexpr int PRODUCER_REGS = 56;
    /* wgmma descriptors in uniform registers (issue_qk / issue_pv): from DB
     * 128 on; at DB 64 (four stages, up to three consumers: up to 12 copies
     * of the Q K^T issue) the H200 ran encoder_mha_f16 2.6 % and
     * sweep_d64_causal_L1024 2.2 % slower with them (bench/RESULTS.md,
     * eighteenth session), so DB 64 builds them at each issue */
    static constexpr bool UNIFORM_DESC = DB_ >= 128;
    static constexpr int CONSUMER_REGS = NC_ == 1 ? 200 : NC_ == 2 ? 224 : 152;
    /* named barriers: 1 (the consumers, the last block's V rows), 2 .. 2 +
     * NC - 1 (pingpong: consumer c's turn), then one per consumer (its
     * half of the O tile) */
    static constexpr int EPI_BAR = 2 + NC_;
    /* the D 64 lines run two configurations, NC 2 and 3, each on the
     * sequences hop_takes_wide() gives it (kernels/hopper_launch.cuh) */
    static constexpr bool PAIR = DB_ == 64;
#ifndef OPP__HOPPER_PINGPONG
#define OPP__HOPPER_PINGPONG 1
#endif
    /* the consumers take turns to issue their matrix products (named
     * barriers 2 and 3), so one's softmax runs under the other's products */
    static constexpr bool PINGPONG = OPP__HOPPER_PINGPONG != 0 && NC_ > 1;
#ifndef OPP__HOPPER_PERSISTENT
#define OPP__HOPPER_PERSISTENT 1
#endif
    /* a grid of one block per SM claiming items (else one block per item) */
    static constexpr bool PERSISTENT = OPP__HOPPER_PERSISTENT != 0;
    /* DB 256: O *= alpha_j is applied at the next block, between issuing
     * Q K_{j+1}^T and P_j V_j (under the first), not between the wait for
     * P_{j-1} V_{j-1} and the next issue; the same operations on O in the
     * same order either way */
    static constexpr bool RESCALE_EARLY = DB_ > 128;
#ifndef OPP__HOPPER_LSUM
#define OPP__HOPPER_LSUM 2
#endif
    /* The divisor of O (the row sum l): 0, the sum of the fp32 P
     * (FlashAttention's); 1, the sum of P rounded to the storage type, the
     * weights P V multiplied, so that O / l is their exact weighted mean
     * (better on flat rows, worse on peaked ones); 2 (default), the mean of
     * the two. The rounded sums come from the tensor cores: with each P V
     * step, m64n8k16 of the same P fragments against a tile of ones
     * (hop_issue_pv), 4 accumulators a thread. The LSE always takes the
     * fp32 sum. With 2, the RMS error against the double result is below
     * FlashAttention-2's on all five 16-bit workloads that FA2 runs (H100,
     * the same inputs; with 0 it was 0.2-0.5 % above on four): prefill
     * -0.54 %, encoder -0.38 %, short_many -0.46 %, long -0.19 % (against
     * EXACT's rounded output -1.7, -3.4, -2.2, -0.9 %), for 1.8-5.4 % more
     * time (bench/RESULTS.md, twenty-ninth session). */
    static constexpr int LSUM = OPP__HOPPER_LSUM;
#ifndef OPP__HOPPER_LSUM_AHEAD
#define OPP__HOPPER_LSUM_AHEAD 0
#endif
    /* 1: a step's rounded sums of P_{j-1} (LSUM) in a wgmma group of their
     * own, issued before Q K_j^T and retired with it, so that the step's
     * wait for P_{j-1} V_{j-1} no longer covers them (the last block keeps
     * them with its P V); the same operations on lr in the same order.
     * Twenty-ninth session, call F: the rounded sums cost prefill 4 % and
     * long 5 %, with the tensor pipe as busy; placing them after the P V
     * steps in its group cost more. Not at DB 256 (RESCALE_EARLY rescales
     * lr under Q K^T). Measured slower (H100, thirty-second session:
     * prefill 2.6 %, short_many 2.9 %, sweep_d64_noncausal_L4096 2.5 %;
     * bench/RESULTS.md), so off by default */
    static constexpr bool LSUM_AHEAD = OPP__HOPPER_LSUM_AHEAD != 0 && LSUM != 0 && !RESCALE_EARLY;
    static constexpr bool LSUM_WITH_PV = LSUM != 0 && !LSUM_AHEAD;
#ifndef OPP__HOPPER_FRAME
#define OPP__HOPPER_FRAME 0
#endif
    /* 1: P in each key block's frame, as the portable kernels
     * (flash_row_frame: the block's largest weight exact in the storage
     * type, O rescaled every block); 0 (default): P against the running max,
     * FlashAttention's. With LSUM 2, 1 puts the RMS error against the
     * double result 0.6-5.1 % below FA2's (against EXACT's rounded output
     * 2.2-36 %: encoder -24 %, long -36 %), for 4-9 % more time than
     * neither (H100; bench/RESULTS.md, twenty-ninth session) */
    static constexpr bool FRAME = OPP__HOPPER_FRAME != 0;
    static_assert(LSUM >= 0 && LSUM <= 2, "OPP__HOPPER_LSUM: 0, 1 or 2");
    /* BN 128, DB >= 128 (DB 64 with OPP__HOPPER_TRIM_D64 1, below): an
     * item whose last key block holds at most 64 keys some row sees runs
     * that block's Q K^T as m64n64 and its P V over keys 0 .. 63 only (the
     * other scores are masked, so their P is exactly 0): under causal
     * masking about half of the items of a sequence. Which items
     * (kernel_list.h, OPP__HOPPER_TRIM_WHERE): 1 those of one key block
     * (the block-0 step), 2 those of more (the loop's last step), 3 both, 0
     * none; each variant is a copy of its step's code (D 128: 4760 SASS
     * instructions a kernel untrimmed, 5752 with 1, 5920 with 2, 6616 with
     * 3) */
#ifndef OPP__HOPPER_TRIM_D64
#define OPP__HOPPER_TRIM_D64 1
#endif
    /* 1 (default): the trim at DB 64 (BN 128, the two-consumer
     * configuration) too; 0: at DB >= 128 only. Off when it was written:
     * ptxas serialised the wgmma pipeline (C7511). With nvcc 13.0 and the
     * kernel of the thirtieth session it builds clean at
     * OPP__HOPPER_TRIM_WHERE 3 and 2 (C7511 at 1 only). It trims 47 % of
     * encoder_mha_f16's items, 4.7 % of its key-block work (counted from the
     * lengths). Measured (H100, thirty-second session, bench/RESULTS.md; the
     * same bits): encoder_mha_f16 3.9-4.4 % faster, sweep_d64 L 1024 / causal
     * L 2048 1.5-1.8 % faster, L 512 2.2-3.0 % slower (which it trims
     * little or nothing of: the larger kernel), the rest level */
    static constexpr bool TRIM =
        BN_ == 128 && (DB_ >= 128 || OPP__HOPPER_TRIM_D64 != 0) && OPP__HOPPER_TRIM_WHERE != 0;
    static constexpr bool TRIM_FIRST = TRIM && (OPP__HOPPER_TRIM_WHERE & 1);
    static constexpr bool TRIM_STEP = TRIM && (OPP__HOPPER_TRIM_WHERE & 2);
#ifndef OPP__HOPPER_SOFTMAX_FIRST
#define OPP__HOPPER_SOFTMAX_FIRST 0
#endif
    /* a key-block step's wait for P_{j-1} V_{j-1} kept after the online
     * softmax of S_j: in the PTX it follows the softmax, but ptxas
     * schedules that wait above the row maxima, exponentials and sums
     * (the SASS of every configuration at 0: the step's MUFU.EX2 of the
     * softmax all follow its WARPGROUP.DEPBAR.LE gsb0 0x0; only the
     * softcap's precede it), so the softmax runs after P V instead of under
     * it. 1: a branch on the rows' sums that is never taken (l >= 0 or NaN)
     * sits between them, and ptxas keeps the order (every EX2 before the
     * wait; ptxas-clean at D 64 / 128 / 256). The same bits; on an H100
     * 0.2-1.3 % faster on prefill, softcap, encoder and short_many, 0.3-1.7 %
     * slower on the D 64 / 128 / 256 sweep cases (bench/RESULTS.md,
     * twenty-third session), hence 0 */
    static constexpr bool SOFTMAX_FIRST = OPP__HOPPER_SOFTMAX_FIRST != 0;
    /* the probe launch, or a launch with no split launch after it, is the
     * guard's programmatic dependent (OPP__HOPPER_GUARD_PDL,
     * kernels/kernel_list.h; hopper_enqueue); not at DB 64, where
     * even a griddepcontrol.wait before the record's read made ptxas
     * serialise the wgmma pipeline (C7511, hop_cfg<64, 128, 2>) */
    static constexpr bool GUARD_PDL = OPP__HOPPER_GUARD_PDL != 0 && DB_ > 64;
    static_assert(DB_ % 64 == 0 && BN_ % 16 == 0 && BN_ <= 256, "whole panels and k16 steps");
    static_assert(STAGES == 2 || STAGES == 4, "a power of two, <= 4 (the mbarrier area)");
    static_assert(SMEM_BYTES == OPP__HOPPER_SMEM_BYTES(DB_, BM, BN_), "kernel_list.h formula");
    static_assert(128 * PRODUCER_REGS + CTHREADS * CONSUMER_REGS <= 65536 / BLOCKS_PER_SM,
                  "register file");
    static_assert(NC_ == 2 || NC_ == 3 || (NC_ == 1 && DB_ == 64),
                  "one (DB 64), two or three consumers");
    static_assert(BLOCKS_PER_SM * (SMEM_BYTES + 1024) <= 233472, "shared memory of an SM");
    static_assert(OPP__HOPPER_SORT_MAX >= 0 && OPP__HOPPER_SORT_MAX <= 65536 &&
                      4u * OPP__HOPPER_SORT_MAX <= KV_BYTES,
                  "uint16 sequence indices; the sort's keys fit in a K stage");
    static_assert(EPI_BAR + NC_ <= 16, "named barriers");
    static_assert(CQ_OFF % 16 == 0 && 64 * QUEUE + 8 <= 128, "the claim queue");
};

/* The shared memory of one block, from its 1024-byte-aligned base (shared
 * state space addresses): Q, the stages of K and V, the mbarriers
 *   q_full, q_empty, k_full[S], v_full[S], k_empty[S], v_empty[S]
 * and the two item slots of 8 int32 (qn % 2) that hand an item over with
 * q_full: r0 (packed: cu_seqlens_q[b]; padded: b), hk, nkb (-1: no tokens,
 * -2: no item left), kfull, lq, lkv, t0, ntok. The consumers read the
 * fields when they need them, not keeping them in registers; a slot holds
 * until the item after next is handed over, which waits for q_empty of the
 * next item: every consumer thread arrives on it (count CTHREADS) after its
 * last read of this slot. Stage of key block count i: i % STAGES, its
 * phase (i / STAGES) % 2. */
template <class C> struct hop_smem {
    uint32_t base;
    __device__ __forceinline__ uint32_t sq() const {
        return base;
    }
    __device__ __forceinline__ uint32_t sk(uint32_t s) const {
        return base + C::Q_BYTES + s * 2 * C::KV_BYTES;
    }
    __device__ __forceinline__ uint32_t sv(uint32_t s) const {
        return base + C::Q_BYTES + s * 2 * C::KV_BYTES + C::KV_BYTES;
    }
    __device__ __forceinline__ uint32_t bar() const {
        return base + C::BAR_OFF;
    }
    __device__ __forceinline__ uint32_t q_full() const {
        return bar();
    }
    __device__ __forceinline__ uint32_t q_empty() const {
        return bar() + 8;
    }
    __device__ __forceinline__ uint32_t k_full(uint32_t s) const {
        return bar() + 16 + 8 * s;
    }
    __device__ __forceinline__ uint32_t v_full(uint32_t s) const {
        return bar() + 16 + 8 * C::STAGES + 8 * s;
    }
    __device__ __forceinline__ uint32_t k_empty(uint32_t s) const {
        return bar() + 16 + 16 * C::STAGES + 8 * s;
    }
    __device__ __forceinline__ uint32_t v_empty(uint32_t s) const {
        return bar() + 16 + 24 * C::STAGES + 8 * s;
    }
    /* after 16 + 32 STAGES bytes of mbarriers */
    __device__ __forceinline__ uint32_t slot() const {
        return bar() + 192;
    }
    /* claim queue entry e (of C::QUEUE): its mbarriers and 48 bytes
     * {state, b, hk, nkb}, {kfull, lq, lkv, t0}, {ntok, q_row0, kv_row0,
     * bcoord}; state 0: no tokens, 1: an item, 2: no item left */
    __device__ __forceinline__ uint32_t cq_full(uint32_t e) const {
        return base + C::CQ_OFF + 8 * e;
    }
    __device__ __forceinline__ uint32_t cq_empty(uint32_t e) const {
        return base + C::CQ_OFF + 8 * C::QUEUE + 8 * e;
    }
    __device__ __forceinline__ uint32_t cq(uint32_t e) const {
        return base + C::CQ_OFF + 16 * C::QUEUE + 48 * e;
    }
    /* the loader asks for its next item (one arrive an item, hop_load):
     * the claimer waits for it before it claims one of the last items */
    __device__ __forceinline__ uint32_t cq_need() const {
        return base + C::CQ_OFF + 64 * C::QUEUE;
    }
    /* 128 bytes of ones in the storage type (the claim queue's area's
     * second half): the B operand of the rounded row sums (hop_issue_pv) */
    __device__ __forceinline__ uint32_t ones() const {
        return base + C::CQ_OFF + 128;
    }
    static __device__ __forceinline__ uint32_t stage(uint32_t i) {
        return i & (C::STAGES - 1);
    }
    static __device__ __forceinline__ uint32_t phase(uint32_t i) {
        return (i >> C::STAGE_SHIFT) & 1;
    }
};

/* The tensor maps, by value in the kernel's parameters; o_ok: out's map
 * is encoded (16-byte aligned pointer and strides), else out is stored
 * from registers only. */
struct hop_maps {
    CUtensorMap q, k, v, o;
    int32_t o_ok;
};

#endif /* OPP_KERNELS_HOPPER_CONFIG_CUH */
