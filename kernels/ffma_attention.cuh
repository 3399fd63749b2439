/*
 * ffma_attention.cuh - the FAST path for float32 storage: a flash kernel on
 * the CUDA cores (FFMA, fp32 accumulation), sm_80 on. FlashAttention-2,
 * FlashAttention-3 and cuDNN have no fp32 kernel; this one keeps fp32
 * inputs in fp32 all the way (no TF32 rounding). Included by
 * kernels/ffma_d<DB>.cu, which instantiate it for the F32 FAST lines of
 * kernels/kernel_list.h.
 *
 *   q   [total_q | B*S_q rows, Hq, D]     out [.., Hq, Dv]   (element strides)
 *   k   [total_kv | B*S_kv rows, Hkv, D]  v   [.., Hkv, Dv]
 *   lse [Hq, total_q] or [B, Hq, S_q] float32 (optional)
 *
 * Design: the flash kernel's (kernels/flash_attention.cuh: its header has
 * the rules) with the tensor-core fragments replaced by register tiles.
 * Tiles: one block owns BM = 64 query rows of one (sequence b, kv head hk)
 * (at DB 64 OPP__FFMA_BM_D64 rows, kernel_list.h: 64 or 32; 128 with
 * OPP__FFMA_LANES_D64 8), rows token x head-in-group (GQA packing: row r ->
 * token r / G, head hk G + r % G); keys in blocks of BN = 64 from key 0 of
 * the sequence.
 * Threads: LN = 16 per row group (at DB 64 OPP__FFMA_LANES_D64: 16 or 8),
 * TM rows each (TM 8 at DB 64 - 4 with BM 32 -, 128 threads; TM 4 above,
 * 256); thread (ty = tid / LN, tx = tid % LN) owns rows ty + RS i (RS =
 * THREADS / LN, i < TM) and, of S, keys tx + LN e (e < BN / LN); of O,
 * columns 4 tx + 4 LN c .. + 3 (c < DB / (4 LN)). Eight rows a thread
 * halve the shared loads and the per-item work per FFMA (a Q load feeds
 * 16 FFMA, a K load 32; with LN 8, 32 and 32). The LN threads of a row
 * are adjacent lanes: the row max reduces over lanes xor 1 .. LN / 2, and
 * l as below; TM and LN change which thread holds a row, never the row's
 * arithmetic.
 * Shared memory (float): Q [BM][DB+4], K [BN][DB+4], V [BN][DB+4], P
 * [BM][BN+4]; the 4-float pad keeps every 16-byte load phase (8 lanes)
 * conflict-free. Loads by cp.async, 16 bytes, zero-filled past the
 * sequence's keys / rows and past D (Dv): V of block j loads under
 * S = Q K_j^T, K of block j+1 under the softmax and O += P V_j.
 * Arithmetic: S[r][k] = sum over d ascending of fmaf(q, k, s) (one chain
 * per score); softcap, masks and the online softmax as the flash kernel's
 * (p = 2^(s sl - m sl), alpha exactly 1 for an unchanged max, rows with max
 * -inf use 0); P is stored in fp32 (no rounding to a storage type) and
 * O[r][c] += P[r][k] V[k][c] for k ascending within the block; l is the
 * running sum of each half-warp lane's keys' p (LN 16: lane tx's keys tx +
 * 16 e; LN 8: a thread keeps the sums of lanes tx and tx + 8, its even and
 * odd e), added at the end over lanes xor 1, 2, 4, 8 in turn.
 * End: O / l (0 for l = 0), LSE (m sl + log2 l) ln 2.
 * Batch invariance (DESIGN.md section 4): a row's arithmetic depends only
 * on its query, its sequence's keys and the key-block grid (anchored at key
 * 0, static BN): which rows share its tile, the layout and the batch never
 * change its bits. No split-KV (lib/attention_plan.c plans none for f32).
 * Work: a 1-D grid strides over items (m-block, sequence, kv head), the
 * highest m-blocks first, as the flash kernel.
 */
#ifndef OPP_KERNELS_FFMA_ATTENTION_CUH
#define OPP_KERNELS_FFMA_ATTENTION_CUH

#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#include "kernels/flash_launch.cuh"

// --- configuration

template <int DB_> struct ffma_cfg {
    static constexpr int DB = DB_, BM = OPP__FFMA_BM(DB_), BN = 64;
    /* threads of a tile row: 16 (a half warp), or at DB 64 with
     * OPP__FFMA_LANES_D64 8, 8 (a quarter warp, each thread twice the keys
     * and O columns) */
    static constexpr int LN = OPP__FFMA_LANES(DB_);
    static constexpr int LN_SHIFT = LN == 8 ? 3 : 4; /* log2 LN */
    static constexpr int THREADS = OPP__FFMA_THREADS(DB_);
    static constexpr int RS = THREADS / LN; /* row stride: thread rows ty + RS i */
    /* rows of the tile per thread: 8 at DB 64 (128 threads; BM 64: three
     * blocks an SM on sm_90, 157 registers, 69.6 KB of shared memory each;
     * LN 8: BM 128, two blocks, 102 KB), 4 with BM 32 (the switch
     * OPP__FFMA_BM_D64: four blocks, 52.2 KB) and above DB 64 (256 threads;
     * the tile's shared memory allows one block an SM) */
    static constexpr int TM = BM / RS;
    static constexpr int KE = BN / LN;        /* keys of S per thread: tx + LN e */
    static constexpr int VL = 16 / LN;        /* half-warp lanes a thread stands for (l's sums) */
    static constexpr int PITCH = DB_ + 4;     /* floats per Q / K / V row in shared memory */
    static constexpr int PPITCH = BN + 4;     /* floats per P row */
    static constexpr int NC = DB_ / (4 * LN); /* O column groups of 4 per thread */
    static constexpr int CHUNKS = DB_ / 4;    /* 16-byte chunks per row */
    static constexpr size_t Q_ELEMS = (size_t)BM * PITCH, KV_ELEMS = (size_t)BN * PITCH;
    static constexpr size_t SMEM_BYTES = (Q_ELEMS + 2 * KV_ELEMS + (size_t)BM * PPITCH) * 4;
    static constexpr int MIN_BLOCKS = DB_ <= 64 ? (BM == 128 ? 2 : BM == 32 ? 4 : 3) : 1;
    static_assert(LN == 16 || (DB_ <= 64 && LN == 8), "8 lanes a row at DB 64 only");
    static_assert(TM * RS == BM && KE * LN == BN && VL * LN == 16, "whole tiles");
    static_assert(BM == 64 || (DB_ <= 64 && (BM == 32 || (BM == 128 && LN == 8))),
                  "BM 32, or 128 with 8 lanes a row, at DB 64 only");
    static_assert(DB_ % 64 == 0, "whole 64-column groups of O");
    static_assert(SMEM_BYTES == OPP__FFMA_SMEM_BYTES(DB_), "kernel_list.h formula");
    static_assert(THREADS == OPP__FFMA_THREADS(DB_), "kernel_list.h thread count");
};

// --- one item

/* Rows r0 .. r0+BM-1 of sequence b, kv head hk (item w). */
template <class C>
__device__ __forceinline__ void ffma_tile(const flash_args &a, float *sq, float *sk, float *sv,
                                          float *sp, int64_t w) {
    const int64_t per = (int64_t)a.batch * a.hkv;
    const int64_t mb = a.n_mb - 1 - w / per;
    const int32_t b = (int32_t)((w % per) / a.hkv), hk = (int32_t)(w % a.hkv);
    const int32_t g = a.g;
    const flash_seq seq = flash_seq_of(a, b);
    const int32_t lq = seq.lq, lkv = seq.lkv;
    const int64_t qb = seq.qb, kb0 = seq.kb0, vb0 = seq.vb0, ob = seq.ob, lse_base = seq.lse_base;
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

    const int tid = threadIdx.x, tx = tid & (C::LN - 1), ty = tid >> C::LN_SHIFT;
    const float *qg = (const float *)a.q.ptr + qb + (int64_t)hk * g * a.q.head;
    const float *kg = (const float *)a.k.ptr + kb0 + (int64_t)hk * a.k.head;
    const float *vg = (const float *)a.v.ptr + vb0 + (int64_t)hk * a.v.head;
    const int64_t t0 = r0 / g;
    const int32_t rem0 = (int32_t)(r0 - t0 * g);

    /* Q tile -> shared: rows past the sequence and columns past D are zeros */
    for (int i = tid; i < C::BM * C::CHUNKS; i += C::THREADS) {
        const int r = i / C::CHUNKS, ch = i % C::CHUNKS;
        const int32_t tt = (rem0 + r) / g, hg = (rem0 + r) - tt * g;
        const bool ok = r0 + r < nrows && ch * 4 < a.d;
        const float *src = ok ? qg + (t0 + tt) * a.q.row + hg * a.q.head + ch * 4 : qg;
        flash_cp_async16(flash_smem_addr(sq + r * C::PITCH + ch * 4), src, ok);
    }
    /* K or V block j -> shared (keys past L_kv and columns past the width:
     * zeros). A thread copies one 16-byte column chunk (kc) of rows kr + KSTEP it:
     * its addresses advance by a fixed step, no index arithmetic per copy. */
    constexpr int KSTEP = C::THREADS / C::CHUNKS;
    static_assert(C::THREADS % C::CHUNKS == 0 && C::BN % KSTEP == 0, "whole rows per step");
    const int kc = tid % C::CHUNKS, kr = tid / C::CHUNKS;
    auto load_kv = [&](float *dst, const float *src0, int64_t row_stride, int width, int32_t j) {
        const int32_t left = lkv - j * C::BN - kr; /* keys of the sequence from this row on */
        const bool col_ok = kc * 4 < width;
        const float *src = src0 + ((int64_t)j * C::BN + kr) * row_stride + kc * 4;
        const int64_t step = (int64_t)KSTEP * row_stride;
        const uint32_t d0 = flash_smem_addr(dst + kr * C::PITCH + kc * 4);
#pragma unroll
        for (int it = 0; it < C::BN / KSTEP; ++it) {
            const bool ok = col_ok && it * KSTEP < left;
            flash_cp_async16(d0 + it * KSTEP * C::PITCH * 4, ok ? src + it * step : src0, ok);
        }
    };
    if (nkb > 0) {
        load_kv(sk, kg, a.k.row, a.d, 0);
    }
    flash_cp_async_commit();

    /* l[i][v]: the running sum of half-warp lane tx + LN v of the LN = 16
     * tiling (its keys tx + LN v + 16 e'), so that l's order, and bits, do
     * not depend on LN */
    float m[C::TM], l[C::TM][C::VL];
    float4 o[C::TM][C::NC];
#pragma unroll
    for (int i = 0; i < C::TM; ++i) {
        m[i] = -INFINITY;
#pragma unroll
        for (int v = 0; v < C::VL; ++v) {
            l[i][v] = 0.0f;
        }
#pragma unroll
        for (int c = 0; c < C::NC; ++c) {
            o[i][c] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        }
    }
    const float sl = a.cap_log2 != 0.0f ? 1.0f : a.scale_log2;
    for (int32_t j = 0; j < nkb; ++j) {
        flash_cp_async_wait<0>();
        __syncthreads(); /* K_j (and Q) landed; every thread is done with V_{j-1}, P */
        load_kv(sv, vg, a.v.row, a.dv, j);
        flash_cp_async_commit();
        /* S = Q K_j^T: rows ty + RS i, keys tx + LN e */
        float s[C::TM][C::KE];
#pragma unroll
        for (int i = 0; i < C::TM; ++i) {
#pragma unroll
            for (int e = 0; e < C::KE; ++e) {
                s[i][e] = 0.0f;
            }
        }
#pragma unroll 4
        for (int d = 0; d < C::DB; d += 4) {
            if (d >= a.d) {
                break; /* uniform: the rest of the bucket is zeros */
            }
            float4 qv[C::TM], kv[C::KE];
#pragma unroll
            for (int i = 0; i < C::TM; ++i) {
                qv[i] = *(const float4 *)(sq + (ty + C::RS * i) * C::PITCH + d);
            }
#pragma unroll
            for (int e = 0; e < C::KE; ++e) {
                kv[e] = *(const float4 *)(sk + (tx + C::LN * e) * C::PITCH + d);
            }
#pragma unroll
            for (int i = 0; i < C::TM; ++i) {
#pragma unroll
                for (int e = 0; e < C::KE; ++e) {
                    float acc = s[i][e];
                    acc = fmaf(qv[i].x, kv[e].x, acc);
                    acc = fmaf(qv[i].y, kv[e].y, acc);
                    acc = fmaf(qv[i].z, kv[e].z, acc);
                    acc = fmaf(qv[i].w, kv[e].w, acc);
                    s[i][e] = acc;
                }
            }
        }
        /* softcap first (before any mask), in the log2 domain: then sl = 1 */
        if (a.cap_log2 != 0.0f) {
#pragma unroll
            for (int i = 0; i < C::TM; ++i) {
#pragma unroll
                for (int e = 0; e < C::KE; ++e) {
                    s[i][e] = a.cap_log2 * flash_tanh(s[i][e] * a.cap_scale);
                }
            }
        }
        /* masks: only in blocks holding a key some row of the tile must not see */
        if ((int64_t)(j + 1) * C::BN > kfull) {
#pragma unroll
            for (int i = 0; i < C::TM; ++i) {
                const int32_t kend =
                    flash_key_end(causal, t0 + (rem0 + ty + C::RS * i) / g, lq, lkv) - j * C::BN;
#pragma unroll
                for (int e = 0; e < C::KE; ++e) {
                    if (tx + C::LN * e >= kend) {
                        s[i][e] = -INFINITY;
                    }
                }
            }
        }
        /* online softmax (flash_softmax_rows' arithmetic over a row's LN
         * threads; the max is exact, so its order is free) */
        float alpha[C::TM];
        bool rescale = false;
#pragma unroll
        for (int i = 0; i < C::TM; ++i) {
            float mx = m[i];
#pragma unroll
            for (int e = 0; e < C::KE; e += 4) {
                mx = fmaxf(fmaxf(mx, fmaxf(s[i][e], s[i][e + 1])), fmaxf(s[i][e + 2], s[i][e + 3]));
            }
#pragma unroll
            for (int x = 1; x < C::LN; x <<= 1) {
                mx = fmaxf(mx, __shfl_xor_sync(0xFFFFFFFFu, mx, x));
            }
            const float mu = mx == -INFINITY ? 0.0f : __fmul_rn(mx, sl);
            alpha[i] = mx == m[i] ? 1.0f : flash_exp2(__fmul_rn(m[i], sl) - mu);
            rescale |= alpha[i] != 1.0f;
            m[i] = mx;
            float sum[C::VL];
#pragma unroll
            for (int v = 0; v < C::VL; ++v) {
                sum[v] = 0.0f;
            }
#pragma unroll
            for (int e = 0; e < C::KE; ++e) { /* key tx + LN e: lane tx + LN (e % VL)'s */
                const float p = flash_exp2(fmaf(s[i][e], sl, -mu));
                sp[(ty + C::RS * i) * C::PPITCH + tx + C::LN * e] = p;
                sum[e % C::VL] += p;
            }
#pragma unroll
            for (int v = 0; v < C::VL; ++v) {
                l[i][v] = l[i][v] * alpha[i] + sum[v];
            }
        }
        flash_cp_async_wait<0>();
        __syncthreads(); /* V_j and every P landed; every thread is done with K_j */
        if (j + 1 < nkb) {
            load_kv(sk, kg, a.k.row, a.d, j + 1);
        }
        flash_cp_async_commit();
        if (__any_sync(0xFFFFFFFFu, rescale)) {
#pragma unroll
            for (int i = 0; i < C::TM; ++i) {
#pragma unroll
                for (int c = 0; c < C::NC; ++c) {
                    o[i][c].x *= alpha[i];
                    o[i][c].y *= alpha[i];
                    o[i][c].z *= alpha[i];
                    o[i][c].w *= alpha[i];
                }
            }
        }
        /* O += P V_j: keys ascending */
#pragma unroll 2
        for (int k = 0; k < C::BN; k += 4) {
            float4 pv[C::TM];
#pragma unroll
            for (int i = 0; i < C::TM; ++i) {
                pv[i] = *(const float4 *)(sp + (ty + C::RS * i) * C::PPITCH + k);
            }
#pragma unroll
            for (int kk = 0; kk < 4; ++kk) {
#pragma unroll
                for (int c = 0; c < C::NC; ++c) {
                    const float4 vv =
                        *(const float4 *)(sv + (k + kk) * C::PITCH + 4 * tx + 4 * C::LN * c);
#pragma unroll
                    for (int i = 0; i < C::TM; ++i) {
                        const float p = kk == 0   ? pv[i].x
                                        : kk == 1 ? pv[i].y
                                        : kk == 2 ? pv[i].z
                                                  : pv[i].w;
                        o[i][c].x = fmaf(p, vv.x, o[i][c].x);
                        o[i][c].y = fmaf(p, vv.y, o[i][c].y);
                        o[i][c].z = fmaf(p, vv.z, o[i][c].z);
                        o[i][c].w = fmaf(p, vv.w, o[i][c].w);
                    }
                }
            }
        }
    }
    flash_cp_async_wait<0>(); /* no copy in flight when shared memory is reused */

    /* O / l and LSE, rows of the sequence only, columns < Dv only */
    float *og = (float *)a.out.ptr + ob + (int64_t)hk * g * a.out.head;
#pragma unroll
    for (int i = 0; i < C::TM; ++i) {
        /* the half warp's sum, lanes xor 1, 2, 4, 8 in turn: the steps
         * within a row's LN threads, then (LN 8) the xor-8 step as the
         * thread's two lanes' sums added (commutative: every lane's bits) */
        float lv[C::VL];
#pragma unroll
        for (int v = 0; v < C::VL; ++v) {
            lv[v] = l[i][v];
#pragma unroll
            for (int x = 1; x < C::LN; x <<= 1) {
                lv[v] += __shfl_xor_sync(0xFFFFFFFFu, lv[v], x);
            }
        }
        float sum = lv[0];
#pragma unroll
        for (int v = 1; v < C::VL; ++v) {
            sum += lv[v];
        }
        const int32_t r = ty + C::RS * i;
        if (r0 + r >= nrows) {
            continue;
        }
        const int32_t tt = (rem0 + r) / g, hg = (rem0 + r) - tt * g;
        const int64_t t = t0 + tt;
        const float inv = flash_row_inv(sum);
        float *orow = og + t * a.out.row + hg * a.out.head;
#pragma unroll
        for (int c = 0; c < C::NC; ++c) {
            const int col = 4 * tx + 4 * C::LN * c;
            if (col < a.dv) { /* dv is a multiple of 4 (the row's ALIGN) */
                *(float4 *)(orow + col) =
                    make_float4(o[i][c].x * inv, o[i][c].y * inv, o[i][c].z * inv, o[i][c].w * inv);
            }
        }
        if (a.lse != NULL && tx == 0) {
            a.lse[lse_base + (hk * g + hg) * a.lse_head + t] = flash_row_lse(m[i], sum, sl);
        }
    }
    __syncthreads(); /* shared memory is reused by the block's next item */
}

/* grid.x blocks stride over a.items; rec: the guard record, read first. */
template <class C>
static __global__ void __launch_bounds__(C::THREADS, C::MIN_BLOCKS)
    ffma_attention_kernel(const flash_args a, const opp__guard_record_t *rec) {
    if (rec->code != OPP_STATUS_SUCCESS) {
        return; /* the guard found bad cu_seqlens / nonpad: touch nothing */
    }
    extern __shared__ __align__(16) float ffma_smem[];
    float *sq = ffma_smem, *sk = sq + C::Q_ELEMS, *sv = sk + C::KV_ELEMS, *sp = sv + C::KV_ELEMS;
    for (int64_t w = blockIdx.x; w < a.items; w += gridDim.x) {
        ffma_tile<C>(a, sq, sk, sv, sp, w);
    }
}

// --- launcher

/* One launch function per F32 FAST line of kernels/kernel_list.h
 * (OPP__F32_LAUNCHER, kernels/flash_launch.cuh: a 1-D grid over the items,
 * C::SMEM_BYTES of dynamic shared memory, on the caller's stream). */
#define OPP__FFMA_LAUNCHER(name, ALGO, DTYPE, DMAX, ALIGN, SM, BM_, BN_, THREADS_, SMEM_) \
    OPP__F32_LAUNCHER(ffma_cfg, ffma_attention_kernel, name, DMAX, BM_, BN_, THREADS_, SMEM_, false)

#endif /* OPP_KERNELS_FFMA_ATTENTION_CUH */
