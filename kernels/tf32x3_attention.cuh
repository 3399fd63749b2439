/*
 * tf32x3_attention.cuh - OPP_ALGO_TF32X3, the opt-in kernel for float32
 * storage on the tensor cores of compute capability 9.0 (sm_90a wgmma):
 * every matrix product in three tf32 products, fp32 accumulation. This is
 * the one-warpgroup form (BM 64, 128 threads), an A/B build under
 * OPP__TF32X3_WS 0 (kernels/kernel_list.h); the library's kernel is the
 * warp-specialised one (kernels/tf32x3_ws.cuh), whose arithmetic, split and
 * layouts are described here. Included by kernels/tf32x3_d<DB>.cu, which
 * instantiate it for the TF32X3 lines of kernels/kernel_list.h.
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
#include "kernels/softmax_rows.cuh"
#include "kernels/tf32x3_ops.cuh"

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
    tf32x3_zero(o);
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
            tf32x3_merge<C>(o, alpha, oj);
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
        flash_softmax_rows_max<C::N8>(s, m, l, alpha, sl);
#if !OPP__TF32X3_O_FRESH
        if (__any_sync(0xFFFFFFFFu, alpha[0] != 1.0f || alpha[1] != 1.0f)) {
            flash_rescale_rows<C::O8>(o, alpha);
        }
#endif
        tf32x3_split_p<C>(s, ph, pl);
    };
    for (int32_t j = 0; j < nkb; ++j) {
        tf32x3_split_k<C, C::THREADS>(base + C::K_HI, base + C::K_HI, base + C::K_LO, tid);
        hop_fence_proxy_async(); /* the split's generic writes before the wgmma reads */
        __syncthreads();         /* every K split written */
        tf32x3_qk<C>(s, qh, ql, base + C::K_HI, base + C::K_LO);
        /* V_HI / V_LO free: P V_{j-1} waited and synced */
        tf32x3_split_v<C, C::THREADS>(base + C::V_ST, base + C::V_HI, base + C::V_LO, tid);
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
        tf32x3_pv<C>(OPP__TF32X3_O_FRESH ? oj : o, ph, pl, base + C::V_HI, base + C::V_LO,
                     OPP__TF32X3_O_FRESH != 0);
        wgmma_wait<0>();
        pv_done();
        tf32x3_fence(ph);
        tf32x3_fence(pl);
        flash_cp_async_wait<0>();
        __syncthreads(); /* K_{j+1}, V_{j+1} landed; every warp's P V done */
    }

    /* O / l and LSE, rows of the sequence only, columns < Dv only */
    tf32x3_store_rows<C>(a, seq, hk, r0, t0, rem0, nrows, o, m, l, sl, warp, qr, qc);
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
#define OPP__TF32X3_LAUNCHER(name, ALGO, DTYPE, DMAX, ALIGN, SM, BM_, BN_, THREADS_, SMEM_)       \
    OPP__F32_LAUNCHER(tf32x3_cfg, tf32x3_attention_kernel, name, DMAX, BM_, BN_, THREADS_, SMEM_, \
                      false)

#endif /* OPP_KERNELS_TF32X3_ATTENTION_CUH */
