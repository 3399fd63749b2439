/*
 * exact_attention.cu - the exact GPU path: attention in double, bit-identical
 * to the CPU reference (reference/exact_row.c), and its launch functions,
 * one per EXACT line of kernels/kernel_list.h (opp__launch_exact_*).
 *
 *   q   [total_q | B*S_q rows, Hq, D]     out [.., Hq, Dv]   (any strides)
 *   k   [total_kv | B*S_kv rows, Hkv, D]  v   [.., Hkv, Dv]
 *
 * Build: nvcc_object(//kernels:exact) with -fmad=false (no contraction:
 * every fused multiply-add is an explicit fma()). Resource report:
 *   nvcc -c -gencode=arch=compute_86,code=sm_86 -gencode=arch=compute_90,code=sm_90 \
 *        -std=c++17 -O3 -fmad=false -Xptxas -v -I. kernels/exact_attention.cu
 *
 * Design note.
 * Order (numerics/exact_order.h, followed bit for bit): scores are
 * ascending-d fma chains from +0 of (q*s)(k*s) in double; softcap c*tanh(x/c);
 * m = NaN-propagating max over visible keys; e_j = opp__exp(x_j - m);
 * S = sum over 64-key chunks (part = part + e_j ascending, total += part);
 * p_j = e_j / S; y_v = sum over chunks of (part = fma(p_j, v_jv, part)),
 * total += part; one rounding. A key is visible iff causal-visible and
 * x_j != -inf; an invisible key never touches V.
 * Tiles (the EXACT rows of kernel_list.h, template opp__exact_cfg<DMAX, BM,
 * BN> of tile_config.h): a block (256 threads) owns BM = 64 or 32 rows of
 * one (sequence, kv head), rows = token x query-head-in-group, so every K/V
 * element loaded serves all G query heads. Key tiles are BN = 128 keys (two
 * chunks) or 64 keys (one chunk: the 99 KB tile of sm_86 / sm_89), always
 * aligned to the chunks (chunks are numbered by the key index in the
 * sequence). Q is converted and scaled once into shared memory; K and V
 * stream through two shared slices of 2048 doubles (register prefetch of
 * slice i+1 while slice i is computed, one barrier per slice). Each thread
 * owns a TM x KJ (rows x keys) score micro-tile - 4 x 8, 2 x 8, or 2 x 4
 * for BN 64 - and a TM x VT (rows x V columns) output micro-tile (4 x 8,
 * 2 x 8, 2 x 16 for DMAX 256). Three passes over the key tiles, recomputing
 * the scores:
 *   1 max:  each thread keeps its rows' max over its keys; one shuffle +
 *           shared reduction at the end (max is order-free).
 *   2 sum:  e_j into the shared score tile (key-major); one thread per
 *           (row, chunk) adds the chunk's 64 values in ascending key order,
 *           then the row's thread does total += part for the tile's chunks
 *           in ascending order (one per tile for BN 64, two for BN 128).
 *   3 P.V:  p_j into the score tile; each thread runs its outputs' chunk
 *           part over the chunk's 64 keys in ascending order (fma chain in
 *           registers), then total += part, chunk by chunk.
 * Each per-element sum is thus one sequential chain in exactly the
 * reference's order; parallelism is across rows, keys and V columns. The
 * tile shape does not enter any chain: a score is the same ascending-d fma
 * chain whatever the K slice depth (BK = 16 or 32 d-values), and the totals
 * receive the same chunk parts in the same order whether a tile holds one
 * chunk or two - so every tile gives the same bits.
 * Causal: tiles (and V slices) beyond the frontier of the block's last row
 * are skipped (their chunk parts would be +0, and x + +0 == x since no
 * total is -0), masks are per element. Keys past Tkv are zero in shared
 * memory and never read from global memory.
 * Loads: K/V slices are cp.async'ed raw into a per-thread staging cell and
 * converted by the same thread after the compute of the previous slice
 * (normal numbers and zeros decode with a few integer ops; subnormal, inf
 * and NaN through fp_convert.h, out of line: both exact, same bits).
 * Cost (D = Dv = 128): per (pair, head) the passes do
 * 3 D + Dv = 512 DFMA plus ~2 exp and 1 division (~110 DP ops), against a
 * counted 4 D = 512 flops, so the counted rate is ~0.41 x the DP flop rate.
 * The QK loop issues (TM + KJ) / 2 shared 16-byte loads per TM x KJ DFMA
 * (6 per 32 for the BM 64 tile, 3 per 8 for BN 64), the P.V loop
 * (TM + VT) / 2 per TM x VT; one block (8 warps, 178-244 registers, no
 * spills) per SM. On sm_86 / sm_89 the DP rate is 1/64 of FP32, so DFMA,
 * not shared-memory bandwidth, bounds the BN 64 tile there.
 * Measurements of this kernel: bench/RESULTS.md.
 */
#include <cuda_runtime.h>
#include <string.h>

#include "kernels/exact_tile.cuh"
#include "lib/internal/check.h"

// --- kernels

/* Shared memory of one block (see tile_config.h). */
template <class C> struct exact_smem {
    double *qs, *slab, *sc, *m, *s, *red, *part;
    void *raw; /* cp.async staging: 8 elements per thread */
    int *kend; /* per row: visible keys 0 .. kend-1; -1 for a row past Tq */
    __device__ explicit exact_smem(double *base) {
        qs = base;
        slab = qs + C::Q_ELEMS;
        sc = slab + 2 * C::SLAB;
        m = sc + C::SC_ELEMS;
        s = m + C::BM;
        red = s + C::BM;
        part = red + 2 * C::BM; /* pass 2: chunk 1's parts (BN 128 only) */
        raw = part + (C::NCH - 1) * C::BM;
        kend = (int *)((double *)raw + C::RAW_ELEMS);
    }
};

/* Loads the block's Q rows once, scaled, as doubles: qs[d][row]. */
template <int DT, class C>
__device__ void exact_load_q(const opp__exact_args_t &a, const exact_item &it,
                             const exact_smem<C> &sm) {
    typedef typename exact_elem<DT>::raw_t raw_t;
    const int row = threadIdx.x % C::BM, c = threadIdx.x / C::BM;
    const int64_t rg = it.r0 + row;
    const bool valid = rg < it.nrows;
    const raw_t *src = (const raw_t *)a.q.ptr;
    if (valid) {
        const int64_t t = rg / it.g, h = (int64_t)it.hk * it.g + rg % it.g;
        src += it.qbase + t * a.q.row + h * a.q.head;
    }
    const int dp = (a.d + 7) & ~7;
    for (int d0 = c * 8; d0 < dp; d0 += (OPP__EXACT_THREADS / C::BM) * 8) {
        raw_t r[8];
        exact_load8<DT>(r, src + d0, valid ? (a.d - d0 < 8 ? a.d - d0 : 8) : 0, it.q_vec);
#pragma unroll
        for (int i = 0; i < 8; ++i) {
            sm.qs[(size_t)(d0 + i) * C::BM + row] = exact_elem<DT>::to_double(r[i]) * a.sqrt_scale;
        }
    }
    if (threadIdx.x < C::BM) {
        const int64_t r = it.r0 + threadIdx.x;
        sm.kend[threadIdx.x] = r < it.nrows ? exact_key_end(a, it, r / it.g) : -1;
    }
}

/* Cell (row i, key j) of the thread's micro-tile in the score tile sc[key][row]. */
template <class C> __device__ inline int exact_cell(int i, int j, int ty, int tx) {
    return exact_lane_index(j, tx) * C::LDR + exact_lane_index(i, ty);
}

/* Stages the thread's scores into the score tile. */
template <class C>
__device__ inline void exact_stage(const double (&acc)[C::TM][C::KJ], double *sc, int ty, int tx) {
#pragma unroll
    for (int i = 0; i < C::TM; ++i) {
#pragma unroll
        for (int j = 0; j < C::KJ; ++j) {
            sc[exact_cell<C>(i, j, ty, tx)] = acc[i][j];
        }
    }
}

/* Per-element epilogue over the thread's staged scores, in rolled loops
 * (unrolled 4 for latency: few copies of exp / tanh keep the kernel in the
 * instruction cache). softcap (c > 0) first, in place: x = c tanh(x / c).
 * PASS 1: nothing else. PASS 2: e_j (0 if not visible). PASS 3: p_j, or
 * the marker -1 for an invisible key whose V row exists (returned as 1), or
 * 0 for keys past Tkv. */
template <class C, int PASS>
__device__ inline int exact_epilogue(const opp__exact_args_t &a, const exact_item &it,
                                     const exact_smem<C> &sm, int kt, int ty, int tx) {
    if (a.softcap > 0.0) {
#pragma unroll 4
        for (int e = 0; e < C::TM * C::KJ; ++e) {
            double *cell = sm.sc + exact_cell<C>(e / C::KJ, e % C::KJ, ty, tx);
            *cell = a.softcap * opp__tanh(*cell / a.softcap);
        }
    }
    int masked = 0;
#pragma unroll 4
    for (int e = 0; e < (PASS == 1 ? 0 : C::TM * C::KJ); ++e) {
        const int i = e / C::KJ, j = e % C::KJ;
        const int row = exact_lane_index(i, ty);
        const int key = exact_lane_index(j, tx);
        double *cell = sm.sc + key * C::LDR + row;
        const double x = *cell;
        const int kg = kt * C::BN + key, kend = sm.kend[row];
        const bool visible = kg < kend && x != -INFINITY;
        if (PASS == 2) {
            *cell = visible ? opp__exp(x - sm.m[row]) : 0.0;
        } else if (visible) {
            *cell = opp__exp(x - sm.m[row]) / sm.s[row];
        } else {
            const bool has_v = kend >= 0 && kg < it.lkv;
            *cell = has_v ? -1.0 : 0.0;
            masked |= has_v;
        }
    }
    return masked;
}

/* The three passes over the key tiles of one work item (see the design
 * note); tot receives the P.V totals of the thread's rows x columns. */
template <int DT, class C, int PASS>
__device__ void exact_pass(const opp__exact_args_t &a, const exact_item &it,
                           const exact_smem<C> &sm, double (&tot)[C::TM][C::VT]) {
    typedef typename exact_elem<DT>::raw_t raw_t;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int ty = (warp >> 1) * 4 + (lane >> 3), tx = (warp & 1) * 8 + (lane & 7);
    const int ns = (a.d + C::BK - 1) / C::BK;
    double mloc[C::TM], ssum = 0.0;
    int kend[C::TM];
#pragma unroll
    for (int i = 0; i < C::TM; ++i) {
        mloc[i] = -INFINITY;
        kend[i] = sm.kend[exact_lane_index(i, ty)];
    }
    /* slice pipeline: slab[buf] holds the slice being computed; the next one
     * is in flight into the staging cells */
    raw_t *r = (raw_t *)sm.raw;
    int buf = 0, nkt_s = 0, nkt_kt = 0;
    auto steps = [&](int kt) {
        if (PASS != 3) {
            return ns;
        }
        const int left = it.kend_tile - kt * C::BN;
        return ns + ((left < C::BN ? left : C::BN) + C::BJ - 1) / C::BJ;
    };
    /* Loads slice (nkt_kt, nkt_s) into r if it exists; returns whether. */
    auto fetch_next = [&](int kt, int s) {
        nkt_kt = kt, nkt_s = s + 1;
        if (nkt_s == steps(kt)) {
            nkt_kt = kt + 1, nkt_s = 0;
        }
        if (nkt_kt >= it.nkt) {
            return false;
        }
        exact_fetch<DT, C>(a, it, nkt_kt, nkt_s, ns, r);
        return true;
    };
    exact_fetch<DT, C>(a, it, 0, 0, ns, r);
    exact_commit<DT, C>(a, 0, ns, r, sm.slab);
    __syncthreads();
    for (int kt = 0; kt < it.nkt; ++kt) {
        double acc[C::TM][C::KJ];
#pragma unroll
        for (int i = 0; i < C::TM; ++i) {
#pragma unroll
            for (int j = 0; j < C::KJ; ++j) {
                acc[i][j] = 0.0;
            }
        }
        for (int s = 0; s < ns; ++s) {
            const bool more = fetch_next(kt, s);
            const int kk_left = ((a.d - s * C::BK) + 7) & ~7;
            exact_qk_slice<C>(sm.qs, sm.slab + buf * C::SLAB, s * C::BK,
                              kk_left < C::BK ? kk_left : C::BK, ty, tx, acc);
            if (more) {
                exact_commit<DT, C>(a, nkt_s, ns, r, sm.slab + (buf ^ 1) * C::SLAB);
            }
            __syncthreads();
            buf ^= 1;
        }
        if (PASS == 1) {
            if (a.softcap > 0.0) { /* softcap through the tile: one tanh copy */
                exact_stage<C>(acc, sm.sc, ty, tx);
                exact_epilogue<C, 1>(a, it, sm, kt, ty, tx);
#pragma unroll
                for (int i = 0; i < C::TM; ++i) {
#pragma unroll
                    for (int j = 0; j < C::KJ; ++j) {
                        acc[i][j] = sm.sc[exact_cell<C>(i, j, ty, tx)];
                    }
                }
            }
#pragma unroll
            for (int i = 0; i < C::TM; ++i) {
#pragma unroll
                for (int j = 0; j < C::KJ; ++j) {
                    const int kg = kt * C::BN + exact_lane_index(j, tx);
                    mloc[i] = kg < kend[i] ? opp__max_nan(mloc[i], acc[i][j]) : mloc[i];
                }
            }
            continue;
        }
        exact_stage<C>(acc, sm.sc, ty, tx);
        const int masked = exact_epilogue<C, PASS>(a, it, sm, kt, ty, tx);
        if (PASS == 2) { /* chunk parts: row r, chunk c by thread c * BM + r, ascending keys */
            __syncthreads();
            const int r = threadIdx.x % C::BM, c = threadIdx.x / C::BM;
            double part = 0.0;
            if (c < C::NCH) {
                const double *col = sm.sc + c * OPP__EXACT_CHUNK * C::LDR + r;
                for (int j = 0; j < OPP__EXACT_CHUNK; ++j) {
                    part = part + col[j * C::LDR];
                }
                if (c == 1) {
                    sm.part[r] = part;
                }
            }
            if (C::NCH == 2) {
                __syncthreads();
            }
            if (c == 0) { /* total += part: chunk 0, then (BN 128) chunk 1 */
                ssum = ssum + part;
                if (C::NCH == 2) {
                    ssum = ssum + sm.part[r];
                }
            }
            continue; /* the next tile's slice barriers order sc / part reuse */
        }
        const bool any_masked = __syncthreads_or(masked) != 0;
        double part[C::TM][C::VT];
#pragma unroll
        for (int i = 0; i < C::TM; ++i) {
#pragma unroll
            for (int c = 0; c < C::VT; ++c) {
                part[i][c] = 0.0;
            }
        }
        const int last = steps(kt) - 1;
        for (int s = ns; s <= last; ++s) {
            const bool more = fetch_next(kt, s);
            const double *vs = sm.slab + buf * C::SLAB;
            const int j0 = (s - ns) * C::BJ;
            if (any_masked) {
                exact_pv_slice<C, true>(sm.sc, vs, j0, ty, tx, part);
            } else {
                exact_pv_slice<C, false>(sm.sc, vs, j0, ty, tx, part);
            }
            if (more) {
                exact_commit<DT, C>(a, nkt_s, ns, r, sm.slab + (buf ^ 1) * C::SLAB);
            }
            __syncthreads();
            buf ^= 1;
            if ((j0 + C::BJ) % OPP__EXACT_CHUNK == 0 || s == last) { /* end of a chunk */
#pragma unroll
                for (int i = 0; i < C::TM; ++i) {
#pragma unroll
                    for (int c = 0; c < C::VT; ++c) {
                        tot[i][c] = tot[i][c] + part[i][c];
                        part[i][c] = 0.0;
                    }
                }
            }
        }
    }
    if (PASS == 1) { /* rows are shared by 8 lanes (lane % 8) x 2 warps (warp % 2) */
#pragma unroll
        for (int i = 0; i < C::TM; ++i) {
            double v = mloc[i];
#pragma unroll
            for (int o = 1; o < 8; o <<= 1) {
                v = opp__max_nan(v, __shfl_xor_sync(0xFFFFFFFFu, v, o));
            }
            if ((lane & 7) == 0) {
                sm.red[(warp & 1) * C::BM + exact_lane_index(i, ty)] = v;
            }
        }
        __syncthreads();
        if (threadIdx.x < C::BM) {
            sm.m[threadIdx.x] = opp__max_nan(sm.red[threadIdx.x], sm.red[C::BM + threadIdx.x]);
        }
    } else if (PASS == 2 && threadIdx.x < C::BM) {
        sm.s[threadIdx.x] = ssum;
    }
    __syncthreads();
}

/* grid.x blocks walk the work items w = (row tile, sequence, kv head), the
 * last row tiles first (the longest work under causal masking).
 * a: see kernels.h; rec: the guard record, read first. */
template <int DT, class C>
static __global__ void __launch_bounds__(OPP__EXACT_THREADS, 1)
    exact_attention_kernel(const opp__exact_args_t a, const opp__guard_record_t *rec) {
    if (rec->code != OPP_STATUS_SUCCESS) {
        return; /* the guard found bad cu_seqlens / nonpad: touch nothing */
    }
    extern __shared__ __align__(16) double exact_smem_base[];
    const exact_smem<C> sm(exact_smem_base);
    const int64_t esize = DT == OPP_DTYPE_F32 ? 4 : 2;
    const int g = a.hq / a.hkv;
    const int64_t n_rt = ((int64_t)a.max_seqlen_q * g + C::BM - 1) / C::BM;
    const int64_t per_rt = (int64_t)a.batch * a.hkv;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int ty = (warp >> 1) * 4 + (lane >> 3), tx = (warp & 1) * 8 + (lane & 7);
    for (int64_t w = blockIdx.x; w < n_rt * per_rt; w += gridDim.x) {
        exact_item it;
        const int32_t b = (int32_t)((w % per_rt) / a.hkv);
        it.hk = (int32_t)(w % a.hkv);
        it.g = g;
        exact_sequence(a, b, &it);
        it.r0 = (n_rt - 1 - w / per_rt) * C::BM;
        it.nrows = (int64_t)it.lq * g;
        if (it.r0 >= it.nrows) {
            continue; /* uniform: the tile lies past this sequence */
        }
        const int64_t last = (it.r0 + C::BM < it.nrows ? it.r0 + C::BM : it.nrows) - 1;
        it.kend_tile = exact_key_end(a, it, last / g);
        it.nkt = (int32_t)(((int64_t)it.kend_tile + C::BN - 1) / C::BN);
        it.q_vec = exact_vec_ok(a.q, esize);
        it.k_vec = exact_vec_ok(a.k, esize);
        it.v_vec = exact_vec_ok(a.v, esize);
        double tot[C::TM][C::VT];
#pragma unroll
        for (int i = 0; i < C::TM; ++i) {
#pragma unroll
            for (int c = 0; c < C::VT; ++c) {
                tot[i][c] = 0.0;
            }
        }
        if (it.nkt > 0) {
            exact_load_q<DT, C>(a, it, sm);
            __syncthreads();
            exact_pass<DT, C, 1>(a, it, sm, tot);
            exact_pass<DT, C, 2>(a, it, sm, tot);
            exact_pass<DT, C, 3>(a, it, sm, tot);
        }
        if (a.lse != NULL && threadIdx.x < C::BM && it.r0 + threadIdx.x < it.nrows) {
            /* natural log-sum-exp of the visible scores; -inf when none */
            const int64_t rg = it.r0 + threadIdx.x;
            const int64_t h = (int64_t)it.hk * g + rg % g;
            const double m = it.nkt > 0 ? sm.m[threadIdx.x] : -INFINITY;
            const double lse = m == -INFINITY ? -INFINITY : m + log(sm.s[threadIdx.x]);
            a.lse[it.lse_base + h * a.lse_head + rg / g] = (float)lse;
        }
#pragma unroll
        for (int i = 0; i < C::TM; ++i) { /* one rounding; no visible key: +0 */
            const int64_t rg = it.r0 + exact_lane_index(i, ty);
            if (rg < it.nrows) {
                const int64_t h = (int64_t)it.hk * g + rg % g;
                const int64_t o = it.obase + (rg / g) * a.out.row + h * a.out.head;
#pragma unroll
                for (int c = 0; c < C::VT; ++c) {
                    const int col = exact_lane_index(c, tx);
                    if (col < a.dv) {
                        exact_elem<DT>::store((void *)a.out.ptr, o + col, tot[i][c]);
                    }
                }
            }
        }
        __syncthreads(); /* shared memory is reused by the next item */
    }
}

// --- launchers

/* The kernel's arguments from a bound problem (lib/internal/problem.h). */
static opp__exact_args_t exact_args(const opp__problem_t *p) {
    opp__exact_args_t a;
    memset(&a, 0, sizeof(a));
    a.dtype = (int32_t)p->a.dtype;
    a.batch = p->batch;
    a.hq = p->a.hq;
    a.hkv = p->a.hkv;
    a.d = p->a.d;
    a.dv = p->a.dv;
    a.max_seqlen_q = p->max_seqlen_q;
    a.q_seqlen = p->q_seqlen;
    if (p->layout == OPP__LAYOUT_PACKED) {
        a.cu_seqlens_q = p->cu_seqlens_q;
        a.cu_seqlens_kv = p->cu_seqlens_kv;
    } else {
        a.nonpad = p->nonpad;
    }
    a.q = p->q;
    a.k = p->k;
    a.v = p->v;
    a.out = p->out;
    a.sqrt_scale = p->a.sqrt_scale;
    a.softcap = (double)p->a.softcap;
    a.is_causal = p->a.is_causal;
    a.lse = p->lse;
    a.lse_head = p->lse_head;
    a.lse_batch = p->lse_batch;
    return a;
}

/* The kernel on a 1-D grid of (row tiles x B x Hkv) blocks, row tiles =
 * ceil(max_seqlen_q * G / BM); 256 threads; C::SMEM_BYTES of dynamic shared
 * memory. Shapes: see the file comment. */
template <int DT, class C>
static opp_status_t exact_launch(const opp__problem_t *p, const opp__plan_t *plan,
                                 struct CUstream_st *stream) {
    const opp__exact_args_t a = exact_args(p);
    const int64_t rows = (int64_t)a.max_seqlen_q * (a.hq / a.hkv);
    const int64_t items = (rows + C::BM - 1) / C::BM * a.batch * a.hkv;
    if (items == 0) {
        return OPP_STATUS_SUCCESS;
    }
    const unsigned grid = items < 0x7FFFFFFF ? (unsigned)items : 0x7FFFFFFFu;
    OPP_CUDA_TRY(cudaFuncSetAttribute((const void *)exact_attention_kernel<DT, C>,
                                      cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      (int)C::SMEM_BYTES));
    exact_attention_kernel<DT, C>
        <<<grid, OPP__EXACT_THREADS, C::SMEM_BYTES, (cudaStream_t)stream>>>(
            a, (const opp__guard_record_t *)plan->guard_record);
    OPP_CUDA_TRY(cudaGetLastError());
    return OPP_STATUS_SUCCESS;
}

/* One launch function per EXACT line of kernels/kernel_list.h. */
#define EXACT_LAUNCHER(name, ALGO, DTYPE, DMAX, ALIGN, SM, BM, BN, THREADS, SMEM)              \
    extern "C" opp_status_t opp__launch_##name(                                                \
        const opp__problem_t *p, const opp__kernel_row_t *row, const opp__plan_t *plan,        \
        struct CUstream_st *stream) {                                                          \
        static_assert(THREADS == OPP__EXACT_THREADS, "exact tile");                            \
        static_assert(opp__exact_cfg<DMAX, BM, BN>::SMEM_BYTES == (SMEM), "exact smem");       \
        (void)row;                                                                             \
        return exact_launch<OPP_DTYPE_##DTYPE, opp__exact_cfg<DMAX, BM, BN>>(p, plan, stream); \
    }
OPP__EXACT_KERNELS(EXACT_LAUNCHER)
#undef EXACT_LAUNCHER
