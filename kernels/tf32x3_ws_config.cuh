/*
 * tf32x3_ws_config.cuh - the warp-specialised 3xTF32 kernel's
 * (kernels/tf32x3_ws.cuh) compile-time configuration and switches, its
 * shared-memory map (tf32x3_ws_smem: the tiles' and mbarriers' addresses)
 * and its work item (tf32x3_ws_item: BM query rows of one sequence and kv
 * head, and the key blocks they visit). The layout is described in
 * kernels/tf32x3_ws.cuh's header.
 */
#ifndef OPP_KERNELS_TF32X3_WS_CONFIG_CUH
#define OPP_KERNELS_TF32X3_WS_CONFIG_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include "kernels/flash_launch.cuh"
#include "kernels/kernel_list.h"

// --- configuration

template <int DB_> struct tf32x3_ws_cfg {
    static constexpr int DB = DB_, BN = 64, NC = OPP__TF32X3_WS_NC;
    static constexpr int BM = 64 * NC, THREADS = 128 * (NC + 1);
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
    /* OPP__TF32X3_WS_OVERLAP 1: each consumer's P V_j in flight under its
     * softmax of S_{j+1} (kernels/tf32x3_ws_blocks.cuh), which takes two
     * split V stages */
    static constexpr bool OVERLAP = OPP__TF32X3_WS_OVERLAP != 0;
    static constexpr uint32_t VSTAGES = OPP__TF32X3_WS_VSTAGES;
    /* K stage s: K_HI at K_OFF + 2 s TILE, K_LO + TILE; V stage s: V_HI at
     * V_OFF + 2 s TILE, V_LO + TILE */
    static constexpr uint32_t K_OFF = 0, V_OFF = 2 * KSTAGES * TILE;
    /* consumer c: Q_HI at Q_OFF + 2 c TILE, Q_LO + TILE */
    static constexpr uint32_t Q_OFF = V_OFF + 2 * VSTAGES * TILE;
    static constexpr uint32_t LAND_V = TILE, LAND = 2 * TILE; /* landing K, V: swizzled tiles */
    static constexpr uint32_t LAND_OFF = Q_OFF + 2 * NC * TILE, BAR_OFF = LAND_OFF + 2 * LAND;
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
    static_assert(SMEM_BYTES <= 227u * 1024u, "sm_90's shared memory a block");
    static_assert(OPP__TF32X3_O_FRESH, "P V into fresh accumulators");
    static_assert(KSTAGES == 1 || KSTAGES == 2, "one or two K stages");
    static_assert(VSTAGES == (OVERLAP ? 2u : 1u), "kernel_list.h: two V stages with OVERLAP");
    static_assert(!OVERLAP || KSTAGES == 1, "OVERLAP: one K stage (shared memory)");
#ifndef OPP__TF32X3_WS_SPLIT_BATCH
#define OPP__TF32X3_WS_SPLIT_BATCH (OPP__TF32X3_WS_NC == 3 ? 2 : 8)
#endif
    /* the producer's splits: chunks loaded before the first is split (8:
     * all of a thread's; 1 waits out each load alone; 2 by default at NC
     * 3, whose producer has 56 registers) */
    static constexpr int SPLIT_BATCH = OPP__TF32X3_WS_SPLIT_BATCH;
#ifndef OPP__TF32X3_WS_VSPLIT_BATCH
#define OPP__TF32X3_WS_VSPLIT_BATCH (OPP__TF32X3_WS_NC == 3 ? 4 : OPP__TF32X3_WS_SPLIT_BATCH)
#endif
    /* V's split-transpose alone: 4 at NC 3 (8 spills in 56 registers) */
    static constexpr int VSPLIT_BATCH = OPP__TF32X3_WS_VSPLIT_BATCH;
#ifndef OPP__TF32X3_WS_VSCATTER
#define OPP__TF32X3_WS_VSCATTER 1
#endif
    /* 1 (default): V's split-transpose by tf32x3_split_v_scatter (a vector
     * load a chunk of four d, a store an element); 0: tf32x3_split_v (four
     * scalar loads a chunk of four keys, vector stores). The same tiles;
     * on an H100 (call Y) prefill_f32 1.5 % faster at NC 3 with 4 a batch
     * (80.0 TFLOP/s against 78.9; 0: 79.1 at batch 4, 78.9 at 2) */
    static constexpr bool VSCATTER = OPP__TF32X3_WS_VSCATTER != 0;
#ifndef OPP__TF32X3_WS_TURNS
#define OPP__TF32X3_WS_TURNS 0
#endif
    /* 1: the consumers take turns to issue (S0, S1, P V0, P V1); 0
     * (default): each issues when ready (prefill_f32 on an H100: 5 %
     * faster than with turns) */
    static constexpr bool TURNS = OPP__TF32X3_WS_TURNS != 0;
    static_assert(!(TURNS && OVERLAP), "turns without overlap only");
    static_assert(NC == 2 || (NC == 3 && !TURNS), "two or three consumers (turns: two)");
    /* the consumers keep less across the key loop (their index, fragment
     * coordinates and item read again after it): three consumers need it
     * to fit 152 registers; two are 3 % slower with it (H100) */
    static constexpr bool LEAN = NC > 2;
#ifndef OPP__TF32X3_WS_UDESC
#define OPP__TF32X3_WS_UDESC (OPP__TF32X3_WS_NC == 3)
#endif
    /* 1: the serial loop's wgmma descriptors uniform: the consumer index a
     * compile-time one for S (hop_uniform_switch: NC copies of its issue)
     * and the tiles' base not made opaque each block, so that ptxas builds
     * the descriptors in uniform registers (no per-operand R2UR) */
    static constexpr bool UDESC = OPP__TF32X3_WS_UDESC != 0;
#ifndef OPP__TF32X3_WS_QREG
#define OPP__TF32X3_WS_QREG 0
#endif
    /* 1: S = Q K^T with Q's split fragments in registers (loaded from its
     * tiles once an item), B alone read from shared memory; without
     * overlap only */
    static constexpr bool QREG = OPP__TF32X3_WS_QREG != 0;
    static_assert(!(QREG && OVERLAP), "QREG without overlap");
#ifndef OPP__TF32X3_WS_SACC2
#define OPP__TF32X3_WS_SACC2 0
#endif
    /* bit 1: S = Q K^T in two independent accumulations issued alternately
     * (tf32x3_ws_qk_ss2), summed after the wait; bit 2: P V_j the same
     * (tf32x3_ws_pv2): other bits; without overlap or QREG only */
    static constexpr int SACC2 = OPP__TF32X3_WS_SACC2;
    static_assert(!(SACC2 && (OVERLAP || QREG)), "SACC2 alone");
#ifndef OPP__TF32X3_WS_REGS
#define OPP__TF32X3_WS_REGS (OPP__TF32X3_WS_NC == 3 ? 152 : 0)
#endif
    /* the registers a consumer thread raises its count to (setmaxnreg; the
     * producer lowers its own to what is left, PRODUCER_REGS); 0: no
     * setmaxnreg (the default at NC 2; 152 at NC 3). The pool is what the
     * block was launched with, LAUNCH_REGS a thread (ptxas's count: 65536 /
     * THREADS rounded down to 8, 168 at NC 2, 128 at NC 3): setmaxnreg.inc
     * waits until the pool holds the registers it asks for, so more than
     * the producer's dec freed never comes (a hang: 2 x 216 + 80 = 512 > 3
     * x 168 did) */
    static constexpr int CONSUMER_REGS = OPP__TF32X3_WS_REGS;
    static constexpr int LAUNCH_REGS = 65536 / THREADS / 8 * 8;
    static constexpr int PRODUCER_REGS = (NC + 1) * LAUNCH_REGS - NC * CONSUMER_REGS;
    static_assert(CONSUMER_REGS == 0 ||
                      (CONSUMER_REGS % 8 == 0 && CONSUMER_REGS <= 256 && PRODUCER_REGS >= 24),
                  "setmaxnreg counts: multiples of 8, 24 .. 256");
};

template <class C> struct tf32x3_ws_smem {
    uint32_t base;
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
    __device__ __forceinline__ uint32_t v_hi(uint32_t s) const {
        return base + C::V_OFF + 2u * s * C::TILE;
    }
    __device__ __forceinline__ uint32_t v_lo(uint32_t s) const {
        return v_hi(s) + C::TILE;
    }
    __device__ __forceinline__ uint32_t v_full(uint32_t s) const {
        return base + C::BAR_OFF + 32 + 8 * s;
    }
    __device__ __forceinline__ uint32_t v_empty(uint32_t s) const {
        return base + C::BAR_OFF + 48 + 8 * s;
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

/* %tid.x, read again (opaque to the compiler), so that what derives from
 * it need not be kept in a register across a loop (LEAN) */
__device__ __forceinline__ uint32_t tf32x3_ws_tid() {
    uint32_t t;
    asm volatile("mov.u32 %0, %%tid.x;" : "=r"(t));
    return t;
}

/* %smid (the trace's start event: which SM ran the block) */
__device__ __forceinline__ uint32_t tf32x3_ws_smid() {
    uint32_t s;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
    return s;
}

template <class C>
__device__ __forceinline__ tf32x3_ws_item tf32x3_ws_item_of(const flash_args &a, int64_t w) {
    tf32x3_ws_item t;
    const int64_t per = (int64_t)a.batch * a.hkv;
    /* w = q per + b Hkv + hk: by opp__fastdiv while the items fit 31 bits */
    int64_t q;
    int32_t b;
    if (a.items <= 0x7FFFFFFF) { /* uniform */
        const int32_t q31 = opp__fastdiv((int32_t)w, &a.fd_per);
        const int32_t rem = (int32_t)(w - (int64_t)q31 * per);
        q = q31;
        b = opp__fastdiv(rem, &a.fd_hkv);
        t.hk = rem - b * a.hkv;
    } else {
        q = w / per;
        b = (int32_t)((w % per) / a.hkv);
        t.hk = (int32_t)(w % a.hkv);
    }
    const int64_t mb = a.n_mb - 1 - q;
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

#endif /* OPP_KERNELS_TF32X3_WS_CONFIG_CUH */
