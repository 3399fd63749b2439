/*
 * flash_tile.cuh - device building blocks of the FAST flash kernel
 * (kernels/flash_attention.cuh): the tensor-core instructions (mma.sync
 * m16n8k16 with fp32 accumulation, ldmatrix), cp.async with zero fill, the
 * 16-bit storage types, the exp2 / tanh the softmax uses, the pipelined
 * Q K^T of one key block (flash_qk) and the main tile's output through
 * shared memory (flash_store_tile). CUDA C++ with inline PTX; every
 * instruction here exists from sm_80 on.
 *
 * Fragment layouts (PTX ISA, mma.m16n8k16, g = lane / 4, t = lane % 4):
 *   A (16 x 16, row-major)  a0: (g, 2t..2t+1)  a1: (g+8, 2t..)  a2: (g, 2t+8..)  a3: (g+8, 2t+8..)
 *   B (16 x 8, "col")       b0: (k 2t..2t+1, n g)   b1: (k 2t+8.., n g)
 *   C (16 x 8, fp32)        c0, c1: (g, 2t..2t+1)   c2, c3: (g+8, 2t..2t+1)
 * so the C fragments of two adjacent n8 tiles are exactly the A fragment of
 * one k16 step: the softmax's P feeds P.V without a trip through memory.
 */
#ifndef OPP_KERNELS_FLASH_TILE_CUH
#define OPP_KERNELS_FLASH_TILE_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include "kernels/fastdiv.h"
#include "lib/oppacked.h"

// --- storage types

/* 16-bit storage: the mma instruction's type name and the float -> packed
 * pair conversion (round to nearest even). */
template <int DT> struct flash_type;

template <> struct flash_type<OPP_DTYPE_F16> {
    __device__ static __forceinline__ uint32_t pack(float lo, float hi) {
        const __half2 h = __floats2half2_rn(lo, hi);
        return *(const uint32_t *)&h;
    }
};

template <> struct flash_type<OPP_DTYPE_BF16> {
    __device__ static __forceinline__ uint32_t pack(float lo, float hi) {
        const __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
        return *(const uint32_t *)&h;
    }
};

// --- tensor cores

/* c += a * b on one m16n8k16 tile (fp32 accumulators). */
template <int DT>
__device__ __forceinline__ void flash_mma(float (&c)[4], const uint32_t (&a)[4], uint32_t b0,
                                          uint32_t b1) {
    if (DT == OPP_DTYPE_F16) {
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                     "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    } else {
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                     "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    }
}

/* Four 8x8 16-bit matrices from shared memory; lane l gives the address of
 * row l % 8 of matrix l / 8. */
__device__ __forceinline__ void flash_ldmatrix_x4(uint32_t (&r)[4], uint32_t addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}

/* The same, each matrix transposed. */
__device__ __forceinline__ void flash_ldmatrix_x4_trans(uint32_t (&r)[4], uint32_t addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}

// --- asynchronous copies

/* 16 bytes global -> shared; when !valid nothing is read and the 16 bytes
 * become zeros (src must still be a valid address: pass the tensor base). */
__device__ __forceinline__ void flash_cp_async16(uint32_t dst, const void *src, bool valid) {
    const int bytes = valid ? 16 : 0;
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(bytes)
                 : "memory");
}

__device__ __forceinline__ void flash_cp_async_commit() {
    asm volatile("cp.async.commit_group;\n" ::: "memory");
}

/* Waits until at most N committed groups are still in flight. */
template <int N> __device__ __forceinline__ void flash_cp_async_wait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

__device__ __forceinline__ uint32_t flash_smem_addr(const void *p) {
    return (uint32_t)__cvta_generic_to_shared(p);
}

/* ROWS query rows -> shared sq (pitch C::PITCH), by every thread of the
 * block; (ld_r, ld_c): this thread's first load row (of C::RSTEP per round)
 * and 16-byte chunk. Tile row r is row r0 + r of the sequence's G-packed
 * rows: token t0 + (rem0 + r) / g, head-in-group (rem0 + r) % g (t0 = r0 /
 * g, rem0 = r0 % g); rows at nrows and past, and columns past d, are
 * zeros. qg: the sequence's Q at its kv head's first query head; q_row /
 * q_head: Q's strides. */
template <class C, int ROWS>
__device__ __forceinline__ void flash_load_q(uint16_t *sq, const uint16_t *qg, int64_t q_row,
                                             int64_t q_head, int d, int64_t r0, int64_t nrows,
                                             int64_t t0, int32_t rem0, int32_t g,
                                             const opp__fastdiv_t &gd, int ld_r, int ld_c) {
#pragma unroll
    for (int r = ld_r; r < ROWS; r += C::RSTEP) {
        if (ld_c >= C::CHUNKS) {
            break; /* an idle lane of the rounded-up chunk count: writes nothing */
        }
        const int32_t tt = opp__fastdiv(rem0 + r, &gd), hg = (rem0 + r) - tt * g;
        const bool ok = r0 + r < nrows && ld_c * 8 < d;
        const uint16_t *src = ok ? qg + (t0 + tt) * q_row + hg * q_head + ld_c * 8 : qg;
        flash_cp_async16(flash_smem_addr(sq + r * C::PITCH + ld_c * 8), src, ok);
    }
}

/* K or V key block j (C::BN rows of `width` columns, row_stride apart from
 * src0, the sequence's first key at its kv head) -> shared dst (pitch
 * C::PITCH), by every thread of the block; keys at lkv and past, and
 * columns past the width, are zeros. (ld_r, ld_c) as for flash_load_q. */
template <class C>
__device__ __forceinline__ void flash_load_kv(uint16_t *dst, const uint16_t *src0,
                                              int64_t row_stride, int width, int32_t j, int32_t lkv,
                                              int ld_r, int ld_c) {
    if (ld_c >= C::CHUNKS) {
        return; /* an idle lane of the rounded-up chunk count: writes nothing */
    }
    const bool col_ok = ld_c * 8 < width;
    const int32_t left = lkv - j * C::BN; /* keys of the sequence from this block on (>= 1) */
    const uint16_t *src = src0 + ((int64_t)j * C::BN + ld_r) * row_stride + ld_c * 8;
    const int64_t step = (int64_t)C::RSTEP * row_stride;
#pragma unroll
    for (int r = 0; r < C::BN; r += C::RSTEP) {
        const bool ok = col_ok && ld_r + r < left; /* no int32 overflow near 2^31 keys */
        flash_cp_async16(flash_smem_addr(dst + (ld_r + r) * C::PITCH + ld_c * 8), ok ? src : src0,
                         ok);
        src += step;
    }
}

// --- special functions

/* 2^x (MUFU.EX2; 2^-inf = 0). */
__device__ __forceinline__ float flash_exp2(float x) {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
    return y;
}

/* 1 / x (MUFU.RCP, rcp.approx: 1 / +-inf = +-0). */
__device__ __forceinline__ float flash_rcp(float x) {
    float y;
    asm("rcp.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
    return y;
}

/* tanh(x) = sign(x) (1 - 2 / (e^{2|x|} + 1)): one ex2 and one reciprocal,
 * a few ulp of float (MUFU.TANH's 2^-11 would cost softcap ~0.1% of a
 * score). Saturates to +-1 for large |x|. */
__device__ __forceinline__ float flash_tanh(float x) {
    const float e = flash_exp2(fabsf(x) * 2.8853900817779268f); /* 2 log2(e) */
    const float t = 1.0f - __fdividef(2.0f, e + 1.0f);
    return copysignf(t, x);
}

// --- the products and the output tile

/* S += Q K^T over one key block, for the MT m16 tiles of Q at q_lane (tile
 * i at row 16 i) and the NB 16-key pairs of K at k_lane (pair n at row
 * 16 n), DB / 16 k16 steps; s: [MT][2 NB][4]; q_lane / k_lane: this lane's
 * ldmatrix addresses (pitch PITCH elements). The (k16 step, key pair)
 * groups go in order; each group's fragments load one group ahead, under
 * the previous group's products (no branch between a load and its use, so
 * ptxas keeps it there); steps past d multiply nothing (their products are
 * skipped, their loads read the zero columns of the tile). Shared by the
 * flash tile and the narrow split tile (MT 1, NB 1), so a row's products
 * are the same instructions on both. flash_qk_at takes K's ldmatrix
 * address of (key pair n2, k16 step ks) from kaddr(n2, ks) instead (the TMA
 * split kernel's swizzled tiles, kernels/flash_split_narrow.cuh). */
template <int DT, int DB, int MT, int NB, int PITCH, bool QPRE = true, class KA>
__device__ __forceinline__ void flash_qk_at(float (&s)[MT][2 * NB][4], uint32_t q_lane,
                                            const int &d, KA &&kaddr) {
    constexpr int KT = DB / 16 * NB;
    /* !QPRE: Q's fragments single-buffered, loaded at each step's first
     * group (the split kernel's tile, capped at 128 / 168 registers) */
    uint32_t qa[QPRE ? 2 : 1][MT][4], kf[2][4];
#pragma unroll
    for (int i = 0; i < MT; ++i) {
        flash_ldmatrix_x4(qa[0][i], q_lane + i * 16 * PITCH * 2);
    }
    flash_ldmatrix_x4(kf[0], kaddr(0, 0));
#pragma unroll
    for (int t = 0; t < KT; ++t) {
        const int ks = t / NB, n2 = t % NB;
        const int qb = QPRE ? ks & 1 : 0;
        if (!QPRE && n2 == 0 && ks > 0) {
#pragma unroll
            for (int i = 0; i < MT; ++i) {
                flash_ldmatrix_x4(qa[0][i], q_lane + (i * 16 * PITCH + ks * 16) * 2);
            }
        }
        if (t + 1 < KT) {
            const int ks1 = (t + 1) / NB, n21 = (t + 1) % NB;
            if (QPRE && n21 == 0) {
#pragma unroll
                for (int i = 0; i < MT; ++i) {
                    flash_ldmatrix_x4(qa[ks1 & 1][i], q_lane + (i * 16 * PITCH + ks1 * 16) * 2);
                }
            }
            flash_ldmatrix_x4(kf[(t + 1) & 1], kaddr(n21, ks1));
        }
        if (ks * 16 < d) { /* uniform */
#pragma unroll
            for (int i = 0; i < MT; ++i) {
                flash_mma<DT>(s[i][2 * n2], qa[qb][i], kf[t & 1][0], kf[t & 1][1]);
                flash_mma<DT>(s[i][2 * n2 + 1], qa[qb][i], kf[t & 1][2], kf[t & 1][3]);
            }
        }
    }
}

template <int DT, int DB, int MT, int NB, int PITCH, bool QPRE = true>
__device__ __forceinline__ void flash_qk(float (&s)[MT][2 * NB][4], uint32_t q_lane,
                                         uint32_t k_lane, const int &d) {
    flash_qk_at<DT, DB, MT, NB, PITCH, QPRE>(
        s, q_lane, d, [&](int n2, int ks) { return k_lane + (n2 * 16 * PITCH + ks * 16) * 2; });
}

/* The main tile's output: this thread's O / l (inv: per row) in the
 * storage type into so ([BM][PITCH], Q's buffer: the caller's barrier has
 * every warp past its last Q K^T), then the block copies the rows below
 * nrows to og in 16-byte chunks, columns < Dv, FlashAttention-2's
 * coalesced store: tile row r is token t0 + (rem0 + r) / G,
 * head-in-group (rem0 + r) % G of og (the sequence's out at the kv head's
 * first query head; o_row / o_head: out's strides, multiples of 8 with
 * out 16-byte aligned, so every chunk is a 16-byte store); (ld_r, ld_c)
 * as for flash_load_q. The values are flash_store_row's, pack(o inv). */
template <int DT, class C>
__device__ __forceinline__ void
flash_store_tile(uint16_t *so, uint16_t *og, const float (&o)[C::MT][C::DB / 8][4],
                 const float (&inv)[C::MT][2], int32_t rt, int qc, int64_t r0, int64_t nrows,
                 int64_t t0, int32_t rem0, int32_t g, const opp__fastdiv_t &gd, int64_t o_row,
                 int64_t o_head, int dv, int ld_r, int ld_c) {
#pragma unroll
    for (int i = 0; i < C::MT; ++i) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            uint16_t *srow = so + (rt + i * 16 + 8 * h) * C::PITCH + 2 * qc;
#pragma unroll
            for (int n = 0; n < C::DB / 8; ++n) {
                *(uint32_t *)(srow + n * 8) = flash_type<DT>::pack(o[i][n][2 * h] * inv[i][h],
                                                                   o[i][n][2 * h + 1] * inv[i][h]);
            }
        }
    }
    __syncthreads(); /* the tile is in shared memory */
    if (ld_c >= C::CHUNKS || ld_c * 8 >= dv) {
        return; /* an idle lane, or a chunk past Dv */
    }
    /* row ld_r's token and head-in-group, stepped by RSTEP rows */
    int32_t tt = opp__fastdiv(rem0 + ld_r, &gd), hg = (rem0 + ld_r) - tt * g;
    const int32_t sdiv = opp__fastdiv(C::RSTEP, &gd), smod = C::RSTEP - sdiv * g;
#pragma unroll
    for (int r = ld_r; r < C::BM; r += C::RSTEP) {
        if (r0 + r < nrows) {
            *(uint4 *)(og + (t0 + tt) * o_row + hg * o_head + ld_c * 8) =
                *(const uint4 *)(so + r * C::PITCH + ld_c * 8);
        }
        tt += sdiv;
        hg += smod;
        if (hg >= g) {
            hg -= g;
            ++tt;
        }
    }
}

#endif /* OPP_KERNELS_FLASH_TILE_CUH */
