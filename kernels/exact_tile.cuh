/*
 * exact_tile.cuh - device building blocks of the exact attention kernel
 * (kernels/exact_attention.cu): dtype access, the per-block work item,
 * slice loads (global -> raw shared staging by cp.async -> shared memory as
 * doubles) and the two
 * register-tiled inner loops (QK^T scores, P.V). CUDA C++, compiled with
 * -fmad=false: every multiply-add below is an explicit fma().
 *
 * Thread layout (256 threads): warp w = tid / 32, lane l = tid % 32;
 *   ty = (w / 2) * 4 + l / 8   (0..15: row group)
 *   tx = (w % 2) * 8 + l % 8   (0..15: key group / V column group)
 * Thread (ty, tx) owns rows   row(i) = (i / 2) * 32 + 2 ty + i % 2, i < TM
 *                   keys      key(j) = (j / 2) * 32 + 2 tx + j % 2, j < KJ
 *                   V columns col(c) = (c / 2) * 32 + 2 tx + c % 2, c < VT
 * (tile-local; KJ = BN / 16: 8 keys of a 128-key tile, 4 of a 64-key one),
 * so each 8-lane phase of a 16-byte shared load reads one broadcast Q / P
 * pair and 8 consecutive K / V pairs (no bank conflicts).
 * Shared layouts (doubles): qs [DMAX][BM] (d-major), K slice [BK][BN]
 * (d-major, BK = 2048 / BN), V slice [BJ][DMAX] (key-major), scores
 * sc [BN][LDR] (key-major: a key's column of rows is contiguous).
 */
#ifndef OPP_KERNELS_EXACT_TILE_CUH
#define OPP_KERNELS_EXACT_TILE_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include "kernels/kernels.h"
#include "kernels/tile_config.h"
#include "numerics/exact_math.h"
#include "numerics/exact_order.h"
#include "numerics/fp_convert.h"

// --- arguments

/* Everything the exact kernel needs, by value: built from the bound problem
 * by the launchers (kernels/exact_attention.cu). Packed layout:
 * cu_seqlens_q/kv given, nonpad NULL. Padded layout: nonpad given
 * (Tq = q_seqlen, Tkv = nonpad[b]), cu_seqlens NULL. */
typedef struct opp__exact_args {
    int32_t dtype; /* OPP_DTYPE_F32, F16 or BF16 (all four tensors) */
    int32_t batch, hq, hkv, d, dv;
    int32_t max_seqlen_q; /* bound on Tq: sizes the grid */
    int32_t q_seqlen;     /* padded layout: S_q */
    const int32_t *cu_seqlens_q, *cu_seqlens_kv;
    const int64_t *nonpad;
    opp__tensor_t q, k, v, out; /* out.ptr is written (cast) */
    double sqrt_scale;          /* s of exact_order.h */
    double softcap;             /* 0: off */
    int32_t is_causal;
    float *lse;                  /* optional: element (b, i, h) at lse_base_b + h lse_head + i */
    int64_t lse_head, lse_batch; /* lse_base_b = cu_seqlens_q[b] or b * lse_batch */
} opp__exact_args_t;

// --- dtype access (exact: decoding is exact, encoding one RNE rounding)

/* Decoding builds the double's bits with integer operations for normal
 * numbers and zeros (the common case) and calls fp_convert.h's decoder for
 * subnormals, infinities and NaN. Both are exact, so the result is the same
 * double as opp__*_to_double() for every input. */
template <int DT> struct exact_elem;

/* The rare inputs (subnormal, inf, NaN), out of line: one copy instead of
 * one per unrolled element. */
static __device__ __noinline__ double exact_decode_rare_f32(uint32_t r) {
    return opp__f32_to_double(__uint_as_float(r));
}
static __device__ __noinline__ double exact_decode_rare_f16(uint16_t r) {
    return opp__f16_to_double(r);
}
static __device__ __noinline__ double exact_decode_rare_bf16(uint16_t r) {
    return opp__bf16_to_double(r);
}

template <> struct exact_elem<OPP_DTYPE_F32> {
    typedef uint32_t raw_t; /* the float's bits */
    __device__ static double to_double(raw_t r) {
        const uint32_t a = r & 0x7FFFFFFFu, sign = r & 0x80000000u;
        if (a - 0x00800000u < 0x7F000000u) { /* normal: exponent + 896, fraction << 29 */
            return __hiloint2double((int)(((a >> 3) + (896u << 20)) | sign), (int)(r << 29));
        }
        if (a == 0) {
            return __hiloint2double((int)sign, 0);
        }
        return exact_decode_rare_f32(r);
    }
    __device__ static void store(void *base, int64_t i, double x) {
        ((float *)base)[i] = opp__double_to_f32(x);
    }
};

template <> struct exact_elem<OPP_DTYPE_F16> {
    typedef uint16_t raw_t;
    __device__ static double to_double(raw_t r) {
        const uint32_t a = r & 0x7FFFu, sign = (uint32_t)(r & 0x8000u) << 16;
        if (a - 0x0400u < 0x7800u) { /* normal: exponent + 1008, fraction << 42 */
            return __hiloint2double((int)(((a << 10) + (1008u << 20)) | sign), 0);
        }
        if (a == 0) {
            return __hiloint2double((int)sign, 0);
        }
        return exact_decode_rare_f16(r);
    }
    __device__ static void store(void *base, int64_t i, double x) {
        ((uint16_t *)base)[i] = opp__double_to_f16(x);
    }
};

template <> struct exact_elem<OPP_DTYPE_BF16> {
    typedef uint16_t raw_t;
    __device__ static double to_double(raw_t r) {
        const uint32_t a = r & 0x7FFFu, sign = (uint32_t)(r & 0x8000u) << 16;
        if (a - 0x0080u < 0x7F00u) { /* normal: exponent + 896, fraction << 45 */
            return __hiloint2double((int)(((a << 13) + (896u << 20)) | sign), 0);
        }
        if (a == 0) {
            return __hiloint2double((int)sign, 0);
        }
        return exact_decode_rare_bf16(r);
    }
    __device__ static void store(void *base, int64_t i, double x) {
        ((uint16_t *)base)[i] = opp__double_to_bf16(x);
    }
};

/* r[0..7] = src[0..count-1], zero bits (+0.0) after; 16-byte loads when vec
 * (src 16-byte aligned) and all 8 are wanted. src is not read when count 0. */
template <int DT>
__device__ inline void exact_load8(typename exact_elem<DT>::raw_t (&r)[8],
                                   const typename exact_elem<DT>::raw_t *src, int count, bool vec) {
    typedef typename exact_elem<DT>::raw_t raw_t;
    if (vec && count == 8) {
        const uint4 *p = (const uint4 *)src;
        if (sizeof(raw_t) == 2) {
            const uint4 u = __ldg(p);
            const uint32_t w[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                r[2 * i] = (raw_t)(w[i] & 0xFFFFu);
                r[2 * i + 1] = (raw_t)(w[i] >> 16);
            }
        } else {
            const uint4 u0 = __ldg(p), u1 = __ldg(p + 1);
            const uint32_t w[8] = {u0.x, u0.y, u0.z, u0.w, u1.x, u1.y, u1.z, u1.w};
#pragma unroll
            for (int i = 0; i < 8; ++i) {
                r[i] = (raw_t)w[i];
            }
        }
        return;
    }
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        r[i] = i < count ? __ldg(src + i) : (raw_t)0;
    }
}

/* 16-byte loads are possible for tensor t: every offset the kernel forms
 * (base pointer, row / head / batch strides, 8-element column chunks) is a
 * multiple of 16 bytes. */
__device__ inline bool exact_vec_ok(const opp__tensor_t &t, int64_t esize) {
    const uint64_t bits = (uint64_t)(uintptr_t)t.ptr | (uint64_t)(t.row * esize) |
                          (uint64_t)(t.head * esize) | (uint64_t)(t.batch * esize);
    return (bits & 15u) == 0;
}

// --- the thread layout

/* Index of a thread's k-th row (key, V column) within its tile: the pairs
 * 2 t, 2 t + 1 of each 32-wide stripe, i.e. (k / 2) * 32 + 2 t + k % 2 with
 * t = ty for rows and t = tx for keys and V columns (file comment). */
__device__ __forceinline__ int exact_lane_index(int k, int t) {
    return (k / 2) * 32 + 2 * t + k % 2;
}

/* The even index of that pair: where its 16-byte (double2) load starts. */
__device__ __forceinline__ int exact_lane_pair(int k, int t) {
    return (k / 2) * 32 + 2 * t;
}

// --- the work item of one block

/* Row tile (rows r0 .. r0+BM-1 of nrows = Tq * G) of sequence b, kv head hk. */
struct exact_item {
    int64_t qbase, kbase, vbase, obase; /* element offsets of sequence b */
    int64_t lse_base;                   /* LSE offset of sequence b */
    int64_t r0, nrows;
    int32_t lq, lkv, hk, g;
    int32_t kend_tile; /* keys 0 .. kend_tile-1 are visible to some row */
    int32_t nkt;       /* key tiles: ceil(kend_tile / BN) */
    bool q_vec, k_vec, v_vec;
};

/* Keys visible to local query token t: 0 .. key_end-1 (exact_order.h /
 * DESIGN.md 2.2: tail-aligned causal j <= t + Tkv - Tq, clamped). */
__device__ inline int32_t exact_key_end(const opp__exact_args_t &a, const exact_item &it,
                                        int64_t t) {
    if (!a.is_causal) {
        return it.lkv;
    }
    const int64_t e = t + (int64_t)it.lkv - it.lq + 1;
    return (int32_t)(e < 0 ? 0 : (e > it.lkv ? it.lkv : e));
}

/* Lengths and base offsets of sequence b (packed: cu_seqlens; padded:
 * Tq = S_q, Tkv = nonpad[b]). Only called after the guard accepted them. */
__device__ inline void exact_sequence(const opp__exact_args_t &a, int32_t b, exact_item *it) {
    if (a.cu_seqlens_q != NULL) {
        const int64_t q0 = a.cu_seqlens_q[b], kv0 = a.cu_seqlens_kv[b];
        it->lq = (int32_t)(a.cu_seqlens_q[b + 1] - q0);
        it->lkv = (int32_t)(a.cu_seqlens_kv[b + 1] - kv0);
        it->qbase = q0 * a.q.row;
        it->kbase = kv0 * a.k.row;
        it->vbase = kv0 * a.v.row;
        it->obase = q0 * a.out.row;
        it->lse_base = q0;
    } else {
        it->lq = a.q_seqlen;
        it->lkv = (int32_t)a.nonpad[b];
        it->qbase = (int64_t)b * a.q.batch;
        it->kbase = (int64_t)b * a.k.batch;
        it->vbase = (int64_t)b * a.v.batch;
        it->obase = (int64_t)b * a.out.batch;
        it->lse_base = (int64_t)b * a.lse_batch;
    }
}

// --- slices: global -> raw shared staging (fetch, cp.async) -> shared doubles (commit)

/* Each thread moves 8 elements of every slice: it copies them (raw) into
 * its own 8-element cell of the staging buffer `raw` and later converts the
 * same cell, so no barrier is needed between the two. The 16-byte copies
 * are cp.async (nothing waits for them until the commit); other cases
 * (unaligned layouts, the ragged end of a row) load synchronously. */
__device__ inline void exact_cp_async16(void *dst, const void *src) {
    const unsigned d = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(d), "l"(src) : "memory");
}

/* Slice s of key tile kt: s < ns is K slice s (d-values BK s .. BK s + BK-1
 * of the BN keys; thread tid: key tid % BN, d-values 8 (tid / BN) .. + 7),
 * s >= ns is V slice s - ns (keys (s-ns) BJ .. + BJ-1). */
template <int DT, class C>
__device__ inline void exact_fetch(const opp__exact_args_t &a, const exact_item &it, int kt, int s,
                                   int ns, typename exact_elem<DT>::raw_t *raw) {
    typedef typename exact_elem<DT>::raw_t raw_t;
    const int tid = threadIdx.x;
    int64_t key, col;
    int width;
    const opp__tensor_t *t;
    int64_t base;
    bool vec;
    if (s < ns) {
        key = (int64_t)kt * C::BN + (tid & (C::BN - 1));
        col = (int64_t)s * C::BK + (tid >> C::BN_LOG2) * 8;
        width = a.d, t = &a.k, base = it.kbase, vec = it.k_vec;
    } else {
        const int chunks = C::DMAX / 8;
        key = (int64_t)kt * C::BN + (int64_t)(s - ns) * C::BJ + tid / chunks;
        col = (int64_t)(tid % chunks) * 8;
        width = a.dv, t = &a.v, base = it.vbase, vec = it.v_vec;
    }
    int count = 0;
    if (key < it.lkv && col < width) {
        count = width - col < 8 ? (int)(width - col) : 8;
    }
    raw_t *dst = raw + tid * 8;
    const raw_t *src = (const raw_t *)t->ptr;
    if (count > 0) {
        src += base + key * t->row + (int64_t)it.hk * t->head + col;
    }
    if (vec && count == 8) {
#pragma unroll
        for (int h = 0; h < (int)sizeof(raw_t) / 2; ++h) { /* 16 bytes = 8 or 4 elements */
            exact_cp_async16(dst + h * 4, src + h * 4);
        }
    } else {
        raw_t r[8];
        exact_load8<DT>(r, src, count, false);
#pragma unroll
        for (int i = 0; i < 8; ++i) {
            dst[i] = r[i];
        }
    }
    asm volatile("cp.async.commit_group;\n" ::: "memory");
}

/* Waits for the thread's copies and converts its cell of `raw` into the
 * slice buffer buf (K scaled by s). */
template <int DT, class C>
__device__ inline void exact_commit(const opp__exact_args_t &a, int s, int ns,
                                    const typename exact_elem<DT>::raw_t *raw, double *buf) {
    typedef typename exact_elem<DT>::raw_t raw_t;
    const int tid = threadIdx.x;
    asm volatile("cp.async.wait_group 0;\n" ::: "memory");
    raw_t r[8];
    if (sizeof(raw_t) == 2) {
        const uint4 u = *(const uint4 *)(raw + tid * 8);
        const uint32_t w[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            r[2 * i] = (raw_t)(w[i] & 0xFFFFu);
            r[2 * i + 1] = (raw_t)(w[i] >> 16);
        }
    } else {
        const uint4 u0 = *(const uint4 *)(raw + tid * 8),
                    u1 = *((const uint4 *)(raw + tid * 8) + 1);
        const uint32_t w[8] = {u0.x, u0.y, u0.z, u0.w, u1.x, u1.y, u1.z, u1.w};
#pragma unroll
        for (int i = 0; i < 8; ++i) {
            r[i] = (raw_t)w[i];
        }
    }
    if (s < ns) {
        double *dst = buf + (tid >> C::BN_LOG2) * 8 * C::BN + (tid & (C::BN - 1));
#pragma unroll
        for (int i = 0; i < 8; ++i) {
            dst[i * C::BN] = exact_elem<DT>::to_double(r[i]) * a.sqrt_scale;
        }
    } else {
        const int chunks = C::DMAX / 8;
        double *dst = buf + (tid / chunks) * C::DMAX + (tid % chunks) * 8;
#pragma unroll
        for (int i = 0; i < 8; i += 2) {
            *(double2 *)(dst + i) =
                make_double2(exact_elem<DT>::to_double(r[i]), exact_elem<DT>::to_double(r[i + 1]));
        }
    }
}

// --- inner loops

/* One d step of the scores: acc[i][j] = fma(qs_d(row i), ks_d(key j), acc). */
template <class C>
__device__ inline void exact_qk_step(const double *qd, const double *kd, int ty, int tx,
                                     double (&acc)[C::TM][C::KJ]) {
    double qv[C::TM], kv[C::KJ];
#pragma unroll
    for (int i = 0; i < C::TM; i += 2) {
        const double2 p = *(const double2 *)(qd + exact_lane_pair(i, ty));
        qv[i] = p.x;
        qv[i + 1] = p.y;
    }
#pragma unroll
    for (int j = 0; j < C::KJ; j += 2) {
        const double2 p = *(const double2 *)(kd + exact_lane_pair(j, tx));
        kv[j] = p.x;
        kv[j + 1] = p.y;
    }
#pragma unroll
    for (int i = 0; i < C::TM; ++i) {
#pragma unroll
        for (int j = 0; j < C::KJ; ++j) {
            acc[i][j] = fma(qv[i], kv[j], acc[i][j]);
        }
    }
}

/* d-values d0 .. d0 + kk_end - 1 (kk_end <= BK, a multiple of 8) of the
 * scores from the resident Q and the K slice ks, in ascending d. */
template <class C>
__device__ inline void exact_qk_slice(const double *qs, const double *ks, int d0, int kk_end,
                                      int ty, int tx, double (&acc)[C::TM][C::KJ]) {
    if (kk_end == C::BK) {
#pragma unroll
        for (int kk = 0; kk < C::BK; ++kk) {
            exact_qk_step<C>(qs + (size_t)(d0 + kk) * C::BM, ks + kk * C::BN, ty, tx, acc);
        }
        return;
    }
    for (int kk0 = 0; kk0 < kk_end; kk0 += 8) {
#pragma unroll
        for (int u = 0; u < 8; ++u) {
            const int kk = kk0 + u;
            exact_qk_step<C>(qs + (size_t)(d0 + kk) * C::BM, ks + kk * C::BN, ty, tx, acc);
        }
    }
}

/* Keys j0 .. j0 + BJ - 1 (tile-local, ascending, inside one chunk) of the
 * chunk's P.V part (sc holds p, key-major):
 * part[i][c] = fma(p(row i, j), v(j, col c), part). With MASKED, a key
 * whose p is the marker -1 (not visible) is skipped: its V row never enters
 * (it may hold inf or NaN), exactly as exact_order.h skips it. */
template <class C, bool MASKED>
__device__ inline void exact_pv_slice(const double *sc, const double *vs, int j0, int ty, int tx,
                                      double (&part)[C::TM][C::VT]) {
#pragma unroll
    for (int jj = 0; jj < C::BJ; ++jj) {
        double pv[C::TM], vv[C::VT];
#pragma unroll
        for (int i = 0; i < C::TM; i += 2) {
            const double2 p = *(const double2 *)(sc + (j0 + jj) * C::LDR + exact_lane_pair(i, ty));
            pv[i] = p.x;
            pv[i + 1] = p.y;
        }
#pragma unroll
        for (int c = 0; c < C::VT; c += 2) {
            const double2 p = *(const double2 *)(vs + jj * C::DMAX + exact_lane_pair(c, tx));
            vv[c] = p.x;
            vv[c + 1] = p.y;
        }
#pragma unroll
        for (int i = 0; i < C::TM; ++i) {
#pragma unroll
            for (int c = 0; c < C::VT; ++c) {
                if (MASKED) {
                    part[i][c] = pv[i] != -1.0 ? fma(pv[i], vv[c], part[i][c]) : part[i][c];
                } else {
                    part[i][c] = fma(pv[i], vv[c], part[i][c]);
                }
            }
        }
    }
}

#endif /* OPP_KERNELS_EXACT_TILE_CUH */
