/*
 * flash_split.cuh - split-KV for the FAST flash kernel (flash-decoding):
 * short query blocks against long KV. Included by flash_attention.cuh.
 *
 *   part_o  [P, Hq, Dv] float32  unnormalised partial O of one split
 *   part_ml [P, Hq] float2       (f, l) of the same rows: the row's frame
 *                                (flash_row_frame, -inf for a row that saw
 *                                no key) and its sum in that frame
 *   P = off_b + s ts + (t - (L_q - ts)): sequence b's splits, split-major,
 *   then its split tokens t (with slice items, OPP__SPLIT_SLICE_ITEMS:
 *   [4 P + slice, ..]: each slice's partial, which the combine folds)
 *
 * Which rows split: on the FAST rows with DB <= OPP__SPLIT_DMAX, the last
 * ts = min(L_q, OPP__SPLIT_MOST(G)) query tokens of every sequence
 * with L_kv > opp__split_min_kv(G) (kernels/split_rule.h: 1024 keys by
 * default, 512 from G 4; flash_args.split_min_kv) (all of a decode or speculative-decode
 * sequence), on the split tile, or with at most OPP__SPLIT_NARROW_ROWS of
 * them on the narrow tile (kernels/flash_split_narrow.cuh, the same bits).
 * The choice depends only on L_kv and on a token's distance from
 * the end of its sequence, both the same packed and padded (queries are
 * tail-aligned there), alone or in any batch: so a row's bits never depend
 * on the layout or the batch (DESIGN.md section 4). Split s covers keys
 * [s S, (s+1) S) of the sequence, S = OPP__SPLIT_KEYS (fixed in keys, a
 * multiple of BN, so the key-block grid inside a split is the unsplit
 * one); the last split ends at L_kv. The main launch runs every other row.
 * The combine adds the splits in ascending s (flash_combine_kernel), in the
 * same run, so the result never depends on scheduling.
 * off_b = sum over sequences b' < b of ns_b' ts_b', recomputed by
 * each block from the lengths (a block reduction over b'): no scratch, no
 * extra launch, graph-safe.
 */
#ifndef OPP_KERNELS_FLASH_SPLIT_CUH
#define OPP_KERNELS_FLASH_SPLIT_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include "kernels/flash_tile.cuh"
#include "kernels/kernel_list.h"
#include "kernels/kernels.h"
#include "kernels/softmax_rows.cuh"
#include "kernels/split_rule.h"
#include "lib/internal/problem.h"

/* How many of a sequence's last query tokens run split (0: none), for lq
 * queries, lkv keys, G query heads per kv head and the threshold min_kv
 * (flash_args.split_min_kv; kernels/split_rule.h). */
__device__ __forceinline__ int32_t flash_split_tokens(int32_t lq, int32_t lkv, int32_t g,
                                                      int32_t min_kv) {
    return opp__split_tokens(lq, lkv, g, min_kv);
}

/* Number of splits of a sequence with lkv keys. */
__device__ __forceinline__ int32_t flash_split_count(int32_t lkv) {
    return opp__split_count(lkv);
}

/* The block's barrier for NT = 0 (__syncthreads), else named barrier 1 of
 * threads 0 .. NT-1 (the TMA split kernel's consumers, beside a producer
 * warp that never joins); and how many threads it joins. */
template <int NT> __device__ __forceinline__ void flash_sync_n() {
    if constexpr (NT > 0) {
        asm volatile("bar.sync 1, %0;" ::"n"(NT) : "memory");
    } else {
        __syncthreads();
    }
}
template <int NT> __device__ __forceinline__ unsigned flash_sync_threads() {
    return NT > 0 ? (unsigned)NT : blockDim.x;
}

/* Lengths of sequence b: packed (cu arrays) or padded (lq = S_q, nonpad). */
struct flash_seq_src {
    const int32_t *cu_q, *cu_kv; /* packed, else NULL */
    const int64_t *nonpad;       /* padded, else NULL */
    int32_t q_seqlen, g;
    int32_t min_kv; /* flash_args.split_min_kv */
    __device__ __forceinline__ void lengths(int32_t b, int32_t *lq, int32_t *lkv) const {
        if (cu_q != NULL) { /* unsigned differences: defined for any values (the
                               combine reads them before the guard's verdict) */
            *lq = (int32_t)((uint32_t)cu_q[b + 1] - (uint32_t)cu_q[b]);
            *lkv = (int32_t)((uint32_t)cu_kv[b + 1] - (uint32_t)cu_kv[b]);
        } else {
            *lq = q_seqlen;
            *lkv = (int32_t)nonpad[b];
        }
    }
    /* rows of sequence b's partials before it; every thread of the block
     * calls it (it syncs) and gets the same value; red: 32 int64 of shared.
     * NT > 0: threads 0 .. NT-1 alone call it (NT a multiple of 32), and
     * sync on named barrier 1 (flash_sync_n) */
    template <int NT = 0> __device__ int64_t split_offset(int32_t b, long long *red) const {
        long long acc = 0;
        for (int32_t i = threadIdx.x; i < b; i += flash_sync_threads<NT>()) {
            int32_t lq, lkv;
            lengths(i, &lq, &lkv);
            const int32_t ts = flash_split_tokens(lq, lkv, g, min_kv);
            if (ts > 0) {
                acc += (long long)flash_split_count(lkv) * ts;
            }
        }
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) {
            acc += __shfl_xor_sync(0xFFFFFFFFu, acc, o);
        }
        const int warp = threadIdx.x >> 5, nw = flash_sync_threads<NT>() >> 5;
        flash_sync_n<NT>(); /* red is free (a previous call may still read it) */
        if ((threadIdx.x & 31) == 0) {
            red[warp] = acc;
        }
        flash_sync_n<NT>();
        long long sum = 0;
        for (int w = 0; w < nw; ++w) {
            sum += red[w];
        }
        return (int64_t)sum;
    }
};

/* Everything the combine needs (built by flash_launch). */
struct flash_combine_args {
    flash_seq_src src;
    int32_t batch, hkv, g, dv;
    const float *part_o;
    const float2 *part_ml;
    opp__tensor_t out;
    float *lse;
    int64_t lse_head, lse_batch;
};

/* Where one combine item's partials are: sequence b's lengths, split
 * tokens ts (0: the main launch wrote it), splits ns and first partial row
 * off. From the lengths alone (cu_seqlens or nonpad, read in bounds), so
 * the combine computes its first item's before the split launch has ended;
 * nothing is addressed with it until the guard's code is read. Every
 * thread of the block calls it (split_offset syncs); red: 32 int64 of
 * shared memory. */
struct flash_combine_geo {
    int32_t lq, ts, ns;
    int64_t off;
};

__device__ __forceinline__ flash_combine_geo flash_combine_geo_of(const flash_combine_args &a,
                                                                  int32_t b, long long *red) {
    flash_combine_geo q;
    int32_t lkv;
    a.src.lengths(b, &q.lq, &lkv);
    q.ts = flash_split_tokens(q.lq, lkv, a.g, a.src.min_kv);
    q.ns = flash_split_count(lkv);
    q.off = q.ts > 0 ? a.src.split_offset(b, red) : 0; /* uniform */
    return q;
}

/* Split partial row prow's (frame, sum) and O's column pair c, c + 1. SL
 * (slice items, OPP__SPLIT_SLICE_ITEMS): folded from its OPP__SPLIT_SLICES
 * slice partials (rows SLICES prow + k), in slice order, through
 * flash_slice_fold itself from flash_slice_start's state (each row of its
 * pair the same one): the partial a block that folds the slices writes,
 * bit for bit. */
template <bool SL>
__device__ __forceinline__ void flash_combine_part(const flash_combine_args &a, int64_t prow,
                                                   int32_t c, float2 *ml, float2 *po) {
    if constexpr (!SL) {
        *ml = a.part_ml[prow];
        *po = *(const float2 *)(a.part_o + prow * a.dv + c);
    } else {
        constexpr int NS = OPP__SPLIT_SLICES;
        float2 sml[NS], spo[NS];
#pragma unroll
        for (int k = 0; k < NS; ++k) {
            sml[k] = a.part_ml[prow * NS + k];
            spo[k] = *(const float2 *)(a.part_o + (prow * NS + k) * a.dv + c);
        }
        float o[1][4], F[2], L[2];
        flash_slice_start(o, F, L);
#pragma unroll
        for (int k = 0; k < NS; ++k) {
            const float os[1][4] = {{spo[k].x, spo[k].y, spo[k].x, spo[k].y}};
            const float fs[2] = {sml[k].x, sml[k].x}, ls[2] = {sml[k].y, sml[k].y};
            flash_slice_fold(o, F, L, os, fs, ls);
        }
        *ml = make_float2(F[0], L[0]);
        *po = make_float2(o[0][0], o[0][1]);
    }
}

/* One combine item, sequence b and kv head hk (its partials at q), by the
 * gridDim.y blocks of its column blockIdx.y (each takes every gridDim.y-th
 * 128-element chunk of the item's column pairs): for each of its G ts split
 * rows and Dv columns, O = sum_s w_s O_s / sum_s w_s l_s
 * with w_s = 2^(mu_s - M), M = max_s mu_s, in ascending s; LSE =
 * (M + log2 L) ln 2; a row that saw no key (M = -inf) gets O = 0 and
 * LSE = -inf. Up to 8 splits, a thread's loads all issue at once and are
 * kept in registers; past 8 the splits are read twice (the max, then the
 * sums), unrolled by 8. The same operations in the same order either way.
 * SL: each split's partial folded from its slices (flash_combine_part),
 * always on the second way. */
template <int DT, bool SL>
__device__ void flash_combine_item(const flash_combine_args &a, const flash_combine_geo &q,
                                   int32_t b, int32_t hk) {
    if (q.ts == 0) {
        return; /* uniform: the main launch wrote this sequence */
    }
    const int32_t lq = q.lq, ts = q.ts, ns = q.ns;
    const int64_t nrows = (int64_t)ts * a.g; /* the rows of tokens lq - ts .. lq - 1 */
    const int64_t off = q.off;
    const int32_t hq = a.hkv * a.g;
    int64_t ob, lse_base;
    if (a.src.cu_q != NULL) {
        ob = (int64_t)a.src.cu_q[b] * a.out.row;
        lse_base = a.src.cu_q[b];
    } else {
        ob = (int64_t)b * a.out.batch;
        lse_base = (int64_t)b * a.lse_batch;
    }
    uint16_t *og = (uint16_t *)a.out.ptr + ob;
    const int32_t half = a.dv / 2; /* columns go in pairs (Dv is a multiple of 8) */
    const int64_t step = (int64_t)gridDim.y * blockDim.x;
    for (int64_t e = (int64_t)blockIdx.y * blockDim.x + threadIdx.x; e < nrows * half; e += step) {
        const int32_t r = (int32_t)(e / half), c = 2 * (int32_t)(e % half);
        const int32_t ti = r / a.g, h = hk * a.g + (r - ti * a.g); /* split token ti */
        const int64_t t = (int64_t)lq - ts + ti;                   /* its token */
        const int64_t prow0 = (off + ti) * hq + h,
                      pstep = (int64_t)ts * hq; /* split s: + s pstep */
        float mx = -INFINITY, l = 0.0f, o0 = 0.0f, o1 = 0.0f;
        if (!SL && ns <= 8) { /* (SL: the slices' loads would not fit the registers) */
            float2 ml[8], po[8];
#pragma unroll
            for (int32_t s = 0; s < 8; ++s) {
                if (s < ns) {
                    flash_combine_part<SL>(a, prow0 + s * pstep, c, &ml[s], &po[s]);
                }
            }
#pragma unroll
            for (int32_t s = 0; s < 8; ++s) {
                if (s < ns) {
                    mx = fmaxf(mx, ml[s].x);
                }
            }
            if (mx != -INFINITY) {
#pragma unroll
                for (int32_t s = 0; s < 8; ++s) {
                    if (s < ns) {
                        const float w =
                            flash_exp2(ml[s].x - mx); /* 0: a split the row does not see */
                        l = fmaf(w, ml[s].y, l);
                        o0 = fmaf(w, po[s].x, o0);
                        o1 = fmaf(w, po[s].y, o1);
                    }
                }
            }
        } else {
            /* unrolled by 8: the loads of 8 splits issue together (one after
             * another, ns splits cost ns L2 round trips: the time of
             * long-KV, small-batch decode) */
#pragma unroll 8
            for (int32_t s = 0; s < ns; ++s) {
                if constexpr (SL) {
                    float2 ml, po;
                    flash_combine_part<SL>(a, prow0 + s * pstep, c, &ml, &po);
                    mx = fmaxf(mx, ml.x);
                } else {
                    mx = fmaxf(mx, a.part_ml[prow0 + s * pstep].x);
                }
            }
            if (mx != -INFINITY) {
#pragma unroll 8
                for (int32_t s = 0; s < ns; ++s) {
                    const int64_t prow = prow0 + s * pstep;
                    float2 ml, po;
                    if constexpr (SL) {
                        flash_combine_part<SL>(a, prow, c, &ml, &po);
                    } else {
                        ml = a.part_ml[prow];
                    }
                    const float w = flash_exp2(ml.x - mx);
                    if constexpr (!SL) { /* (read here: the machine code of before SL) */
                        po = *(const float2 *)(a.part_o + prow * a.dv + c);
                    }
                    l = fmaf(w, ml.y, l);
                    o0 = fmaf(w, po.x, o0);
                    o1 = fmaf(w, po.y, o1);
                }
            }
        }
        const float inv = l > 0.0f ? 1.0f / l : 0.0f;
        *(uint32_t *)(og + t * a.out.row + (int64_t)h * a.out.head + c) =
            flash_type<DT>::pack(o0 * inv, o1 * inv);
        if (a.lse != NULL && c == 0) {
            a.lse[lse_base + h * a.lse_head + t] =
                l > 0.0f ? (mx + __log2f(l)) * 0.69314718055994531f : -INFINITY;
        }
    }
}

/* grid: blocks of 128 threads, grid.x striding over the batch * hkv items
 * (sequence, kv head), grid.y splitting each item's elements (rows x column
 * pairs) into 128-element chunks; rec: the guard record, read (with
 * OPP__SPLIT_COMBINE_PDL, after the split launch's end) before any
 * partial. The first item's geometry (lengths and partial offset, a block
 * reduction) is computed before that wait, under the split launch's end.
 * SL: the partials are slice partials (flash_combine_part). */
#if OPP__SPLIT_COMBINE_MINB > 0
#define OPP__COMBINE_BOUNDS __launch_bounds__(128, OPP__SPLIT_COMBINE_MINB)
#else
#define OPP__COMBINE_BOUNDS __launch_bounds__(128)
#endif
template <int DT, bool SL = false>
static __global__ void OPP__COMBINE_BOUNDS flash_combine_kernel(const flash_combine_args a,
                                                                const opp__guard_record_t *rec) {
    __shared__ long long red[32];
    const int64_t items = (int64_t)a.batch * a.hkv;
    int64_t w = blockIdx.x;
    flash_combine_geo q = {};
    if (w < items) { /* uniform */
        q = flash_combine_geo_of(a, (int32_t)(w / a.hkv), red);
    }
#if OPP__SPLIT_COMBINE_PDL && __CUDA_ARCH__ >= 900
    /* the split launch's programmatic dependent: its grid has ended and its
     * partials are visible past this point */
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
    if (rec->code != OPP_STATUS_SUCCESS) {
        return; /* the guard found bad lengths: touch nothing */
    }
    for (; w < items; w += gridDim.x) {
        if (w != blockIdx.x) { /* split_offset syncs before it writes red */
            q = flash_combine_geo_of(a, (int32_t)(w / a.hkv), red);
        }
        flash_combine_item<DT, SL>(a, q, (int32_t)(w / a.hkv), (int32_t)(w % a.hkv));
    }
}

#endif /* OPP_KERNELS_FLASH_SPLIT_CUH */
