/*
 * tf32x3_attention.cuh - OPP_ALGO_TF32X3, the opt-in kernel for float32
 * storage on the tensor cores of compute capability 9.0 (sm_90a wgmma):
 * every matrix product in three tf32 products, fp32 accumulation.
 * Included by kernels/tf32x3_d<DB>.cu, which instantiate it for the TF32X3
 * lines of kernels/kernel_list.h.
 *
 *   q   [total_q | B*S_q rows, Hq, D]     out [.., Hq, Dv]   (element strides)
 *   k   [total_kv | B*S_kv rows, Hkv, D]  v   [.., Hkv, Dv]
 *   lse [Hq, total_q] or [B, Hq, S_q] float32 (optional)
 *
 * 3xTF32: an fp32 x is split into hi = tf32(x) (to nearest: 11
 * significant bits) and lo = x - hi (exact; the tensor core truncates it to
 * tf32), and a product a b into lo_a hi_b + hi_a lo_b + hi_a hi_b (the
 * lo x lo term, about 2^-22 of a b, is dropped), each a tf32 wgmma with
 * fp32 accumulation: first every k step's lo x hi, then every hi x lo, then
 * every hi x hi (tf32x3_issue). The tensor core's additions truncate, so
 * each key block's P V_j goes to fresh accumulators, added to O as
 * O = alpha O + P V_j by FFMA (one rounding to nearest): its additions then
 * round against one block's small terms or sum, not all of O
 * (OPP__TF32X3_O_FRESH; bench/tf32x3_model.py models it). The tf32
 * tensor-core peak is half of bf16's, so three products take six times a
 * bf16 kernel's tensor time, for an error at fp32's: on an H100, max abs
 * 0.50x and RMS 0.73x the FFMA kernel's on prefill_f32 (bench/RESULTS.md,
 * twenty-fourth session; tests/tf32x3_gpu_test.c measures it against EXACT
 * and against the FFMA kernel's on the same inputs). Non-finite inputs:
 * an infinite element (or a finite one within half a tf32 ulp of FLT_MAX,
 * whose hi rounds to inf) has lo = inf - inf = NaN, so what reads it is
 * NaN where the FFMA kernel may give +-inf; a NaN stays NaN.
 *
 * Tiles: the FFMA kernel's (kernels/ffma_attention.cuh: its header has the
 * rules): one block of one warpgroup (128 threads) owns BM = 64 query rows
 * of one (sequence b, kv head hk), rows token x head-in-group (GQA packing:
 * row r -> token r / G, head hk G + r % G); keys in blocks of BN = 64 from
 * key 0 of the sequence. Warp w owns rows 16 w .. 16 w + 15 of every
 * m64 product (the wgmma fragment layout, kernels/wgmma_tf32_ops.cuh).
 *
 * Shared memory (float; the four panels tiles 1024-byte aligned):
 *   K_HI, K_LO   [64 keys][DB] in 128-byte-swizzled panels of 32 columns
 *                (kernels/hopper_ops.cuh's layout, rows of 128 bytes): the
 *                wgmma B operand of S = Q K^T, K-major. K_j is loaded into
 *                K_HI by cp.async and split there in place.
 *   V_HI, V_LO   [DB rows d][64 keys] likewise: V transposed, since tf32
 *                wgmma reads B K-major only (for O += P V, k = the key). In
 *                each 8-key group the keys are stored in the order 0 2 4 6
 *                1 3 5 7: then the A fragment of P is the S accumulator as
 *                it stands (a thread holds keys 2t, 2t + 1 of a group as
 *                accumulator columns, which the A fragment's k index calls
 *                t and t + 4), no shuffle of P.
 *   Q_ST, V_ST   [64][DB + 4] staging rows: Q (read into registers once per
 *                item, split there) and V_j before its split-transpose.
 * Per key block j: split K_j (in place);
 * barrier; S = Q K_j^T issued (3 KS wgmmas), V_j split (transposed) while
 * it runs; barrier; K_{j+1} and V_{j+1} load; softcap, masks, online
 * softmax (kernels/softmax_rows.cuh, the flash kernel's arithmetic on the
 * same accumulator layout); P split in registers; P V_j (3 BN / 8 wgmmas)
 * into fresh accumulators, then O = alpha O + P V_j. Two blocks an SM:
 * one's splits and softmax run under the other's products.
 *
 * Arithmetic of a row: S[r][k] = the wgmma sums over d in k8 steps
 * ascending (in tf32x3_issue's order); p = 2^(s sl - m sl), alpha exactly 1
 * for an unchanged max, rows with max -inf use 0; O = fmaf(O, alpha, P V_j)
 * per block; O / l (0 for l = 0); LSE (m sl + log2 l) ln 2.
 * Batch invariance (DESIGN.md section 4): a row's arithmetic depends only
 * on its query, its sequence's keys and the key-block grid (anchored at key
 * 0, static BN): the rows beside it in the tile, the layout and the batch
 * never change its bits (each wgmma output element is its own row's sum).
 * Work: a 1-D grid strides over items (m-block, sequence, kv head), the
 * highest m-blocks first, as the FFMA kernel.
 */
#ifndef OPP_KERNELS_TF32X3_ATTENTION_CUH
#define OPP_KERNELS_TF32X3_ATTENTION_CUH

#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#include "kernels/flash_launch.cuh"
#include "kernels/hopper_ops.cuh"
#include "kernels/softmax_rows.cuh"
#include "kernels/wgmma_tf32_ops.cuh"

// --- configuration

template <int DB_> struct tf32x3_cfg {
    static constexpr int DB = DB_, BM = 64, BN = 64, THREADS = 128;
    static constexpr int KS = DB_ / 8;     /* k8 steps of S = Q K^T */
    static constexpr int N8 = BN / 8;      /* 8-column groups of S (and k8 steps of P V) */
    static constexpr int O8 = DB_ / 8;     /* 8-column groups of O */
    static constexpr int PITCH = DB_ + 4;  /* floats per staging row */
    static constexpr int CHUNKS = DB_ / 4; /* 16-byte chunks per row of D floats */
    /* byte offsets from the 1024-aligned base */
    static constexpr uint32_t TILE = 64u * DB_ * 4u; /* a swizzled [64][DB] fp32 tile */
    static constexpr uint32_t PANEL = 64u * 128u;    /* 32 columns of 64 rows */
    static constexpr uint32_t K_HI = 0, K_LO = TILE, V_HI = 2 * TILE, V_LO = 3 * TILE;
    static constexpr uint32_t Q_ST = 4 * TILE, V_ST = Q_ST + 64u * PITCH * 4u;
    static constexpr size_t SMEM_BYTES = (size_t)V_ST + 64u * PITCH * 4u + 1024u;
    static_assert(DB_ == 64, "the D 64 bucket only (kernel_list.h's TF32X3 rows)");
    static_assert(SMEM_BYTES == OPP__TF32X3_SMEM_BYTES(DB_), "kernel_list.h formula");
};

// --- small pieces

/* Compile-time switches for A/B builds (tools/ab_defines.sh). The
 * default, O_FRESH 1, is the build measured on an H100 in the twenty-fourth
 * session (bench/RESULTS.md); O_FRESH 0 sums as the kernel before it did,
 * whose error was 5-12x the FFMA kernel's. LO_RN 1 builds (no spill) but
 * has not run on a GPU. (V_j's split under S = Q K_j^T, the schedule below,
 * was measured as a switch too: the same bits as splitting both first, and
 * level to 1.2 % faster.)
 *   OPP__TF32X3_LO_RN    1: lo rounded to tf32 to nearest as well (a
 *                        Veltkamp split, three fp32 operations), instead of
 *                        the tensor core's truncation of it: about half the
 *                        lo term's own error, which bench/tf32x3_model.py
 *                        finds negligible; other bits.
 *   OPP__TF32X3_O_FRESH  1: P V_j into fresh accumulators, then O = alpha O
 *                        + (P V_j) in one FFMA an element (in place of the
 *                        rescale and the products' accumulation into O), and
 *                        in both products the small terms of every k step
 *                        first (tf32x3_issue): the tensor core's additions,
 *                        which truncate, then round against one block's
 *                        small terms or sum instead of all of O; other bits
 *                        than 0 (bench/tf32x3_model.py models it). */
#ifndef OPP__TF32X3_LO_RN
#define OPP__TF32X3_LO_RN 0
#endif
#ifndef OPP__TF32X3_O_FRESH
#define OPP__TF32X3_O_FRESH 1
#endif

/* x = hi + lo, exactly: hi = x rounded to tf32 (11 significant bits) to
 * nearest, ties away from zero - cvt.rna.tf32.f32's result for finite x
 * and +-inf, in two integer operations where ptxas emulates cvt.rna in
 * four on sm_90 - and lo = x - hi (exact: |lo| <= half a tf32 ulp of x),
 * left in fp32 for the tensor core, which reads the top 19 bits of a tf32
 * operand (truncation: lo's own error is below 2^-10 |lo| <= 2^-21 |x|).
 * A NaN x makes lo NaN (whatever hi is), so NaN reaches the products.
 * OPP__TF32X3_LO_RN: lo itself rounded to 11 significant bits to nearest
 * (Veltkamp: t = 8193 lo, lo - ... = t - (t - lo), each operation rounded
 * on its own, never contracted; |lo| <= 2^-11 |x| keeps t finite), so lo's
 * own error is below 2^-11 |lo| <= 2^-22 |x|; NaN stays NaN. */
__device__ __forceinline__ void tf32x3_split(float x, uint32_t &hi, uint32_t &lo) {
    hi = (__float_as_uint(x) + 0x1000u) & 0xFFFFE000u;
    const float r = __fsub_rn(x, __uint_as_float(hi));
#if OPP__TF32X3_LO_RN
    const float t = __fmul_rn(r, 8193.0f);
    lo = __float_as_uint(__fsub_rn(t, __fsub_rn(t, r)));
#else
    lo = __float_as_uint(r);
#endif
}

/* Byte offset of 16-byte chunk c (columns 4c .. 4c+3) of row r in a
 * swizzled [64][DB] tile: panel c / 8, row r at 128 r, chunk (c % 8) ^ (r % 8). */
template <class C> __device__ __forceinline__ uint32_t tf32x3_swz(int r, int c) {
    return (uint32_t)(c >> 3) * C::PANEL + (uint32_t)r * 128u +
           ((uint32_t)((c & 7) ^ (r & 7)) << 4);
}

/* Descriptor of k8 step ks (columns 8 ks .. 8 ks + 7) of the swizzled tile
 * at shared address tile: K-major, 8-row atoms 1024 bytes apart. */
__device__ __forceinline__ uint64_t tf32x3_desc(uint32_t tile, int ks) {
    return hop_desc_at<1024>(hop_desc_lo(tile + (uint32_t)(ks >> 2) * (64u * 128u), 16),
                             (uint32_t)(ks & 3) * 32u);
}

/* Stores v[0..3] at shared address addr (hop_st_shared_v4). */
__device__ __forceinline__ void tf32x3_st4(uint32_t addr, const uint32_t (&v)[4]) {
    hop_st_shared_v4(addr, (int32_t)v[0], (int32_t)v[1], (int32_t)v[2], (int32_t)v[3]);
}

__device__ __forceinline__ float tf32x3_ld32(uint32_t addr) {
    float v;
    asm volatile("ld.shared.f32 %0, [%1];\n" : "=f"(v) : "r"(addr) : "memory");
    return v;
}

// --- the steps of a key block

/* K_j in place in K_HI -> K_HI (hi) + K_LO (lo): 16-byte chunk i = tid +
 * 128 it, row i / CHUNKS; a quarter warp splits the eight chunks of a row's
 * panel, conflict-free. Every thread of the block calls it. */
template <class C> __device__ __forceinline__ void tf32x3_split_k(uint32_t base, int tid) {
#pragma unroll
    for (int it = 0; it < C::BN * C::CHUNKS / C::THREADS; ++it) {
        const int i = tid + C::THREADS * it, r = i / C::CHUNKS, c = i % C::CHUNKS;
        const uint32_t off = tf32x3_swz<C>(r, c);
        const int4 x = hop_ld_shared_v4(base + C::K_HI + off);
        uint32_t h[4], lo[4];
        tf32x3_split(__int_as_float(x.x), h[0], lo[0]);
        tf32x3_split(__int_as_float(x.y), h[1], lo[1]);
        tf32x3_split(__int_as_float(x.z), h[2], lo[2]);
        tf32x3_split(__int_as_float(x.w), h[3], lo[3]);
        tf32x3_st4(base + C::K_HI + off, h);
        tf32x3_st4(base + C::K_LO + off, lo);
    }
}

/* V_j (V_ST [key][d]) -> V_HI + V_LO [d][key']: chunk i = tid + 128 it is
 * row d = i % DB, chunk c = i / DB of the transposed tile, whose positions
 * 4 (c % 2) + u (u = 0..3) of 8-key group c / 2 hold key 8 (c / 2) + 2 u +
 * c % 2 (the order 0 2 4 6 1 3 5 7). A warp reads 32 consecutive d of one
 * key and writes chunks of 32 rows, conflict-free. */
template <class C> __device__ __forceinline__ void tf32x3_split_v(uint32_t base, int tid) {
#pragma unroll
    for (int it = 0; it < C::DB * (C::BN / 4) / C::THREADS; ++it) {
        const int i = tid + C::THREADS * it, d = i % C::DB, c = i / C::DB;
        const int k0 = 8 * (c >> 1) + (c & 1);
        uint32_t h[4], lo[4];
#pragma unroll
        for (int u = 0; u < 4; ++u) {
            tf32x3_split(tf32x3_ld32(base + C::V_ST + (uint32_t)((k0 + 2 * u) * C::PITCH + d) * 4u),
                         h[u], lo[u]);
        }
        const uint32_t off = tf32x3_swz<C>(d, c);
        tf32x3_st4(base + C::V_HI + off, h);
        tf32x3_st4(base + C::V_LO + off, lo);
    }
}

/* Keeps the compiler from moving accesses of the registers of r across
 * this point (hop_fence_reg on each): placed around the products and their
 * waits, so that no read of an accumulator moves above its wait and no
 * write of an operand below the product's issue (the PTX's order is then
 * the program's, not an accident of NVVM's scheduling). */
template <class T, int N, int M> __device__ __forceinline__ void tf32x3_fence(T (&r)[N][M]) {
#pragma unroll
    for (int i = 0; i < N; ++i) {
#pragma unroll
        for (int e = 0; e < M; ++e) {
            hop_fence_reg(r[i][e]);
        }
    }
}

/* Issues d (+)= A B for the STEPS k8 steps of A's fragments (ah, al: hi,
 * lo) against B's K-major tiles at b_hi / b_lo (step k: tf32x3_desc(., k)),
 * three products a step: lo x hi, hi x lo, hi x hi. fresh: the first
 * product overwrites d. Order: per step the three (OPP__TF32X3_O_FRESH 0),
 * or every step's lo x hi, then every hi x lo, then every hi x hi (1: the
 * small terms summed while d is still small, so that the truncating
 * additions round against them and not against the full sum). */
template <int STEPS>
__device__ __forceinline__ void tf32x3_issue(float (&d)[32], uint32_t (&ah)[STEPS][4],
                                             uint32_t (&al)[STEPS][4], uint32_t b_hi, uint32_t b_lo,
                                             bool fresh) {
    if (OPP__TF32X3_O_FRESH) {
#pragma unroll
        for (int k = 0; k < STEPS; ++k) {
            wgmma_tf32_rs_n64(d, al[k], tf32x3_desc(b_hi, k), !fresh || k > 0);
        }
#pragma unroll
        for (int k = 0; k < STEPS; ++k) {
            wgmma_tf32_rs_n64(d, ah[k], tf32x3_desc(b_lo, k), 1);
        }
#pragma unroll
        for (int k = 0; k < STEPS; ++k) {
            wgmma_tf32_rs_n64(d, ah[k], tf32x3_desc(b_hi, k), 1);
        }
    } else {
#pragma unroll
        for (int k = 0; k < STEPS; ++k) {
            const uint64_t dh = tf32x3_desc(b_hi, k), dl = tf32x3_desc(b_lo, k);
            wgmma_tf32_rs_n64(d, al[k], dh, !fresh || k > 0);
            wgmma_tf32_rs_n64(d, ah[k], dl, 1);
            wgmma_tf32_rs_n64(d, ah[k], dh, 1);
        }
    }
}

/* Issues S = Q K_j^T (one committed group). s: [N8][4] accumulators
 * (overwritten); qh, ql: Q's fragments. */
template <class C>
__device__ __forceinline__ void tf32x3_qk(float (&s)[C::N8][4], uint32_t (&qh)[C::KS][4],
                                          uint32_t (&ql)[C::KS][4], uint32_t base) {
    float(&sf)[32] = *reinterpret_cast<float(*)[32]>(&s[0][0]);
    tf32x3_fence(qh);
    tf32x3_fence(ql);
    tf32x3_fence(s);
    wgmma_fence();
    tf32x3_issue<C::KS>(sf, qh, ql, base + C::K_HI, base + C::K_LO, true);
    wgmma_commit();
    tf32x3_fence(s);
}

/* Issues O += P V_j (one committed group; k: the 8-key groups). o: [O8][4]
 * accumulators (fresh: overwritten, O = P V_j); ph, pl: P's fragments. */
template <class C>
__device__ __forceinline__ void tf32x3_pv(float (&o)[C::O8][4], uint32_t (&ph)[C::N8][4],
                                          uint32_t (&pl)[C::N8][4], uint32_t base,
                                          bool fresh = false) {
    float(&of)[32] = *reinterpret_cast<float(*)[32]>(&o[0][0]);
    tf32x3_fence(ph);
    tf32x3_fence(pl);
    tf32x3_fence(o);
    wgmma_fence();
    tf32x3_issue<C::N8>(of, ph, pl, base + C::V_HI, base + C::V_LO, fresh);
    wgmma_commit();
    tf32x3_fence(o);
}

// --- one item

/* Rows r0 .. r0+63 of sequence b, kv head hk (item w); base: the
 * 1024-aligned shared address of the tiles. Every thread of the block
 * calls it. */
template <class C>
__device__ __forceinline__ void tf32x3_tile(const flash_args &a, uint32_t base, int64_t w) {
    const int64_t per = (int64_t)a.batch * a.hkv;
    const int64_t mb = a.n_mb - 1 - w / per;
    const int32_t b = (int32_t)((w % per) / a.hkv), hk = (int32_t)(w % a.hkv);
    const int32_t g = a.g;
    const flash_seq seq = flash_seq_of(a, b);
    const int32_t lq = seq.lq, lkv = seq.lkv;
    const int64_t nrows = (int64_t)lq * g;
    const int64_t r0 = mb * C::BM;
    if (r0 >= nrows) {
        return; /* uniform: past the sequence's rows */
    }
    const bool causal = a.is_causal != 0;
    const int64_t last = (r0 + C::BM < nrows ? r0 + C::BM : nrows) - 1;
    const int32_t kend_tile = flash_key_end(causal, last / g, lq, lkv);
    const int32_t kfull = flash_key_end(causal, r0 / g, lq, lkv); /* visible to every row */
    const int32_t nkb = (int32_t)(((int64_t)kend_tile + C::BN - 1) / C::BN);

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int qr = lane >> 2, qc = lane & 3; /* fragment row / column in the warp's m16 */
    const float *qg = (const float *)a.q.ptr + seq.qb + (int64_t)hk * g * a.q.head;
    const float *kg = (const float *)a.k.ptr + seq.kb0 + (int64_t)hk * a.k.head;
    const float *vg = (const float *)a.v.ptr + seq.vb0 + (int64_t)hk * a.v.head;
    const int64_t t0 = r0 / g;
    const int32_t rem0 = (int32_t)(r0 - t0 * g);

    /* Q tile -> Q_ST: rows past the sequence and columns past D are zeros */
    for (int i = tid; i < C::BM * C::CHUNKS; i += C::THREADS) {
        const int r = i / C::CHUNKS, ch = i % C::CHUNKS;
        const int32_t tt = (rem0 + r) / g, hg = (rem0 + r) - tt * g;
        const bool ok = r0 + r < nrows && ch * 4 < a.d;
        const float *src = ok ? qg + (t0 + tt) * a.q.row + hg * a.q.head + ch * 4 : qg;
        flash_cp_async16(base + C::Q_ST + (uint32_t)(r * C::PITCH + ch * 4) * 4u, src, ok);
    }
    /* K_j -> K_HI (swizzled) and V_j -> V_ST: a thread copies chunk kc of
     * rows kr + 128 / CHUNKS it (keys past L_kv, columns past the width: zeros) */
    constexpr int KSTEP = C::THREADS / C::CHUNKS;
    static_assert(C::THREADS % C::CHUNKS == 0 && C::BN % KSTEP == 0, "whole rows per step");
    const int kc = tid % C::CHUNKS, kr = tid / C::CHUNKS;
    auto load_k = [&](int32_t j) {
        const int32_t left = lkv - j * C::BN - kr;
        const bool col_ok = kc * 4 < a.d;
        const float *src = kg + ((int64_t)j * C::BN + kr) * a.k.row + kc * 4;
#pragma unroll
        for (int it = 0; it < C::BN / KSTEP; ++it) {
            const bool ok = col_ok && it * KSTEP < left;
            flash_cp_async16(base + C::K_HI + tf32x3_swz<C>(kr + it * KSTEP, kc),
                             ok ? src + (int64_t)it * KSTEP * a.k.row : kg, ok);
        }
    };
    auto load_v = [&](int32_t j) {
        const int32_t left = lkv - j * C::BN - kr;
        const bool col_ok = kc * 4 < a.dv;
        const float *src = vg + ((int64_t)j * C::BN + kr) * a.v.row + kc * 4;
#pragma unroll
        for (int it = 0; it < C::BN / KSTEP; ++it) {
            const bool ok = col_ok && it * KSTEP < left;
            flash_cp_async16(base + C::V_ST +
                                 (uint32_t)((kr + it * KSTEP) * C::PITCH + kc * 4) * 4u,
                             ok ? src + (int64_t)it * KSTEP * a.v.row : vg, ok);
        }
    };
    if (nkb > 0) {
        load_k(0);
        load_v(0);
    }
    flash_cp_async_commit();

    float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f};
    float o[C::O8][4];
#pragma unroll
    for (int n = 0; n < C::O8; ++n) {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            o[n][e] = 0.0f;
        }
    }
    const float sl = a.cap_log2 != 0.0f ? 1.0f : a.scale_log2;
    flash_cp_async_wait<0>();
    __syncthreads(); /* Q, K_0, V_0 landed */

    /* Q's A fragments, split: rows 16 warp + qr (+ 8), columns 8 ks + qc (+ 4) */
    uint32_t qh[C::KS][4], ql[C::KS][4];
#pragma unroll
    for (int ks = 0; ks < C::KS; ++ks) {
#pragma unroll
        for (int x = 0; x < 4; ++x) {
            const int r = 16 * warp + qr + 8 * (x & 1), c = 8 * ks + qc + 4 * (x >> 1);
            tf32x3_split(tf32x3_ld32(base + C::Q_ST + (uint32_t)(r * C::PITCH + c) * 4u), qh[ks][x],
                         ql[ks][x]);
        }
    }

    /* the step's softmax on S_j (raw scores in s): softcap, masks, m, l,
     * alpha, O rescaled; then P's A fragments, split: group n's keys 2 qc,
     * 2 qc + 1 are its columns qc, qc + 4 (V_HI / V_LO hold the keys in
     * that order) */
    float s[C::N8][4];
    float alpha[2];
    uint32_t ph[C::N8][4], pl[C::N8][4];
    /* after P V_j's wait: its accumulators fenced; O_FRESH: P V_j went to
     * oj, and O = alpha O + oj, one rounding an element, row h of the pair
     * by alpha[h] (exactly 1 for an unchanged max: then O + oj) */
    float oj[C::O8][4];
    auto pv_done = [&]() {
        if (OPP__TF32X3_O_FRESH) {
            tf32x3_fence(oj);
#pragma unroll
            for (int n = 0; n < C::O8; ++n) {
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    o[n][e] = fmaf(o[n][e], alpha[e / 2], oj[n][e]);
                }
            }
        } else {
            tf32x3_fence(o);
        }
    };
    auto softmax = [&](int32_t j) {
        /* softcap first (before any mask), in the log2 domain: then sl = 1 */
        if (a.cap_log2 != 0.0f) {
            flash_softcap<false, C::N8>(s, a.cap_log2, a.cap_scale, a.cap_x2);
        }
        /* masks: only in blocks holding a key some row of the tile must not see */
        if ((int64_t)(j + 1) * C::BN > kfull) {
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int32_t kend =
                    flash_key_end(causal, t0 + (rem0 + 16 * warp + qr + 8 * h) / g, lq, lkv) -
                    j * C::BN;
                flash_mask_row<C::N8>(s, h, kend, qc);
            }
        }
        flash_softmax_rows<C::N8>(s, m, l, alpha, sl);
#if !OPP__TF32X3_O_FRESH
        if (__any_sync(0xFFFFFFFFu, alpha[0] != 1.0f || alpha[1] != 1.0f)) {
            flash_rescale_rows<C::O8>(o, alpha);
        }
#endif
#pragma unroll
        for (int n = 0; n < C::N8; ++n) {
            tf32x3_split(s[n][0], ph[n][0], pl[n][0]);
            tf32x3_split(s[n][2], ph[n][1], pl[n][1]);
            tf32x3_split(s[n][1], ph[n][2], pl[n][2]);
            tf32x3_split(s[n][3], ph[n][3], pl[n][3]);
        }
    };
    for (int32_t j = 0; j < nkb; ++j) {
        tf32x3_split_k<C>(base, tid);
        hop_fence_proxy_async(); /* the split's generic writes before the wgmma reads */
        __syncthreads();         /* every K split written */
        tf32x3_qk<C>(s, qh, ql, base);
        tf32x3_split_v<C>(base, tid); /* V_HI / V_LO free: P V_{j-1} waited and synced */
        hop_fence_proxy_async();
        wgmma_wait<0>();
        tf32x3_fence(s);
        __syncthreads(); /* every warp's S done (K free), every V split written (V_ST free) */
        if (j + 1 < nkb) {
            load_k(j + 1);
            load_v(j + 1);
        }
        flash_cp_async_commit();
        softmax(j);
        tf32x3_pv<C>(OPP__TF32X3_O_FRESH ? oj : o, ph, pl, base, OPP__TF32X3_O_FRESH != 0);
        wgmma_wait<0>();
        pv_done();
        tf32x3_fence(ph);
        tf32x3_fence(pl);
        flash_cp_async_wait<0>();
        __syncthreads(); /* K_{j+1}, V_{j+1} landed; every warp's P V done */
    }

    /* O / l and LSE, rows of the sequence only, columns < Dv only */
    float *og = (float *)a.out.ptr + seq.ob + (int64_t)hk * g * a.out.head;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        const float sum = flash_quad_sum(l[h]);
        const int32_t r = 16 * warp + qr + 8 * h;
        if (r0 + r >= nrows) {
            continue;
        }
        const int32_t tt = (rem0 + r) / g, hg = (rem0 + r) - tt * g;
        const int64_t t = t0 + tt;
        const float inv = flash_row_inv(sum);
        float *orow = og + t * a.out.row + hg * a.out.head;
#pragma unroll
        for (int n = 0; n < C::O8; ++n) {
            const int col = 8 * n + 2 * qc;
            if (col < a.dv) { /* dv is a multiple of 4: both columns or neither */
                *(float2 *)(orow + col) = make_float2(o[n][2 * h] * inv, o[n][2 * h + 1] * inv);
            }
        }
        if (a.lse != NULL && qc == 0) {
            a.lse[seq.lse_base + (hk * g + hg) * a.lse_head + t] = flash_row_lse(m[h], sum, sl);
        }
    }
    __syncthreads(); /* shared memory is reused by the block's next item */
}

/* grid.x blocks stride over a.items; rec: the guard record, read first. */
template <class C>
static __global__ void __launch_bounds__(C::THREADS, 1)
    tf32x3_attention_kernel(const flash_args a, const opp__guard_record_t *rec) {
    if (rec->code != OPP_STATUS_SUCCESS) {
        return; /* the guard found bad cu_seqlens / nonpad: touch nothing */
    }
    extern __shared__ __align__(16) unsigned char tf32x3_smem[];
    const uint32_t base = (flash_smem_addr(tf32x3_smem) + 1023u) & ~1023u;
    for (int64_t w = blockIdx.x; w < a.items; w += gridDim.x) {
        tf32x3_tile<C>(a, base, w);
    }
}

// --- launcher

/* One launch function per TF32X3 line of kernels/kernel_list.h
 * (OPP__F32_LAUNCHER, kernels/flash_launch.cuh: a 1-D grid over the items,
 * C::SMEM_BYTES of dynamic shared memory, on the caller's stream). */
#define OPP__TF32X3_LAUNCHER(name, ALGO, DTYPE, DMAX, ALIGN, SM, BM_, BN_, THREADS_, SMEM_) \
    OPP__F32_LAUNCHER(tf32x3_cfg, tf32x3_attention_kernel, name, DMAX, BM_, BN_, THREADS_, SMEM_)

#endif /* OPP_KERNELS_TF32X3_ATTENTION_CUH */
