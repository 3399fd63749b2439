/*
 * flash_launch.cuh - the host side of the portable flash kernel
 * (kernels/flash_attention.cuh): the launch function of each FAST line of
 * kernels/kernel_list.h (OPP__FLASH_LAUNCHER), which picks the tile the
 * device holds (the DB 256 pair tile, the DB <= 128 K / V ring, or the
 * line's own) and enqueues the main launch, then the split-KV launch and
 * its combine; the split entry the Hopper rows call; flash_args_init,
 * flash_smem_once and flash_sm_count, shared with the FFMA, 3xTF32 and Hopper
 * launchers; flash_launch_f32, the FFMA and 3xTF32 kernels' launch. Every launch
 * is on the caller's stream with its error checked; none allocates or
 * synchronizes. Included by kernels/flash_d<D>.cu, kernels/ffma_attention.cuh,
 * kernels/tf32x3_attention.cuh and kernels/hopper_launch.cuh.
 */
#ifndef OPP_KERNELS_FLASH_LAUNCH_CUH
#define OPP_KERNELS_FLASH_LAUNCH_CUH

#include <cuda_runtime.h>
#include <stdint.h>
#include <string.h>

#include "kernels/device_cache.h"
#include "kernels/flash_attention.cuh"
#include "kernels/hopper_trace.cuh"
#include "kernels/kernels.h"
#include "lib/internal/check.h"

/* Sets a kernel's dynamic shared memory limit once per device (a
 * per-context setting); flags: a device cache (kernels/device_cache.h) per
 * kernel, 1 once set. */
static inline opp_status_t flash_smem_once(const void *kernel, size_t bytes, int *flags) {
    int dev = 0;
    OPP_CUDA_TRY(cudaGetDevice(&dev));
    if (!opp__device_cache_get(flags, dev)) {
        OPP_CUDA_TRY(
            cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes));
        opp__device_cache_set(flags, dev, 1);
    }
    return OPP_STATUS_SUCCESS;
}

/* The current device's multiprocessor count, looked up once per device. */
static inline opp_status_t flash_sm_count(int *sms) {
    static int counts[OPP__DEVICE_CACHE_SLOTS];
    int dev = 0;
    OPP_CUDA_TRY(cudaGetDevice(&dev));
    int n = opp__device_cache_get(counts, dev);
    if (n <= 0) {
        OPP_CUDA_TRY(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev));
        OPP_RETURN_IF(n <= 0, OPP_STATUS_CUDA_ERROR, "device %d reports %d multiprocessors", dev,
                      n);
        opp__device_cache_set(counts, dev, n);
    }
    *sms = n;
    return OPP_STATUS_SUCCESS;
}

// --- launchers

/* kernel<<<grid, threads, smem, stream>>>(args...) as a programmatic
 * dependent of the launch before it on the stream (PDL, sm_90: it may
 * start before that one ends; its griddepcontrol.wait orders what it
 * reads). */
template <typename... P, typename... A>
static opp_status_t flash_launch_dependent(void (*kernel)(P...), dim3 grid, unsigned threads,
                                           size_t smem, struct CUstream_st *stream, A &&...args) {
    cudaLaunchAttribute attr[1] = {};
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = grid;
    cfg.blockDim = dim3(threads);
    cfg.dynamicSmemBytes = smem;
    cfg.stream = (cudaStream_t)stream;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    OPP_CUDA_TRY(cudaLaunchKernelEx(&cfg, kernel, args...));
    return OPP_STATUS_SUCCESS;
}

/* The split launch (every split of every sequence that splits) and the
 * combine, after the main launch on the same stream. after_hopper: the
 * Hopper kernel was launched just before (on an SM 90 device); the split
 * launch is then its programmatic dependent (PDL: it starts on the SMs the
 * Hopper kernel's blocks leave; they write disjoint memory), which the
 * split kernel's griddepcontrol.wait keeps from ending first. */
/* The split kernel on sgrid blocks (NARROW: the narrow-tile-only
 * instance, with the narrow tile's shared memory), as a programmatic
 * dependent of the launch before it when after_hopper. */
template <int DT, class S, bool NARROW>
static opp_status_t flash_split_enqueue(const flash_args &sa, const opp__guard_record_t *rec,
                                        struct CUstream_st *stream, bool after_hopper) {
    static int split_smem_set[OPP__DEVICE_CACHE_SLOTS];
    constexpr size_t smem = NARROW ? flash_narrow_layout<S>::BYTES : flash_split_smem_bytes<S>();
    OPP_TRY(flash_smem_once((const void *)flash_split_kernel<DT, S, NARROW>, smem, split_smem_set));
    const unsigned sgrid = sa.items < 0x7FFFFFFF ? (unsigned)sa.items : 0x7FFFFFFFu;
    if (after_hopper) {
        OPP_TRY(flash_launch_dependent(flash_split_kernel<DT, S, NARROW>, sgrid, S::THREADS, smem,
                                       stream, sa, rec));
    } else {
        flash_split_kernel<DT, S, NARROW>
            <<<sgrid, S::THREADS, smem, (cudaStream_t)stream>>>(sa, rec);
    }
    return OPP_STATUS_SUCCESS;
}

/* The combine of a split launch, in split order, after it on `stream`:
 * ts_max bounds every sequence's split tokens (flash_launch_split);
 * slices: the split launch wrote slice partials (OPP__SPLIT_SLICE_ITEMS,
 * the TMA split kernel), which the combine folds first. */
template <int DT>
static opp_status_t flash_launch_combine(const flash_args &a, int64_t ts_max,
                                         const opp__guard_record_t *rec, struct CUstream_st *stream,
                                         bool slices = false) {
    flash_combine_args ca;
    memset(&ca, 0, sizeof(ca));
    ca.src = flash_seq_src{a.cu_q, a.cu_kv, a.nonpad, a.q_seqlen, a.g, a.split_min_kv};
    ca.batch = a.batch;
    ca.hkv = a.hkv;
    ca.g = a.g;
    ca.dv = a.dv;
    ca.part_o = a.part_o;
    ca.part_ml = a.part_ml;
    ca.out = a.out;
    ca.lse = a.lse;
    ca.lse_head = a.lse_head;
    ca.lse_batch = a.lse_batch;
    /* grid.y: 128-element chunks of an item's ts G rows x Dv / 2 column
     * pairs (at most 64 x 128 / 128), so that a small batch with many
     * splits still has a thread per element */
    const int64_t cblocks = (int64_t)a.batch * a.hkv;
    int64_t chunks = (ts_max * a.g * (a.dv / 2) + 127) / 128;
    if (chunks > OPP__SPLIT_COMBINE_Y) { /* each thread then takes several elements */
        chunks = OPP__SPLIT_COMBINE_Y;
    }
    const dim3 cgrid(cblocks < 0x7FFFFFFF ? (unsigned)cblocks : 0x7FFFFFFFu,
                     chunks > 1 ? (unsigned)chunks : 1u);
    void (*kernel)(const flash_combine_args, const opp__guard_record_t *) =
        flash_combine_kernel<DT>;
    if constexpr (OPP__SPLIT_SLICE_ITEMS > 0) {
        if (slices) {
            kernel = flash_combine_kernel<DT, true>;
        }
    }
    (void)slices;
    if constexpr (OPP__SPLIT_COMBINE_PDL) { /* kernels/split_config.h */
        OPP_TRY(flash_launch_dependent(kernel, cgrid, 128, 0, stream, ca, rec));
    } else {
        kernel<<<cgrid, 128, 0, (cudaStream_t)stream>>>(ca, rec);
    }
    OPP_CUDA_TRY(cudaGetLastError());
    return OPP_STATUS_SUCCESS;
}

/* The split launch's tile for head-size bucket DB: BN 64 whatever the main
 * tile's (the narrow tile is a warp per 16 keys); a split row never runs on
 * the main tile, so its key-block grid is its own. */
template <int DB> using flash_split_cfg = flash_cfg<DB, OPP__SPLIT_ROWS, 64, 4>;

/* The split launch's arguments from the main launch's a: an item a split
 * of a sequence and kv head, ceil(max_seqlen_kv / S) B Hkv of them. *ts_max:
 * a bound on every sequence's split tokens ts = min(L_q, OPP__SPLIT_MOST(G))
 * (L_q <= max_seqlen_q, or the guard stops the run). */
static inline flash_args flash_split_args(const flash_args &a, const opp__problem_t *p,
                                          int64_t *ts_max) {
    flash_args sa = a;
    sa.n_mb = 1;
    sa.items = opp__split_items(p->max_seqlen_kv, a.batch, a.hkv);
    const int64_t most = OPP__SPLIT_MOST(a.g);
    *ts_max = p->max_seqlen_q < most ? p->max_seqlen_q : most;
    return sa;
}

/* Whether every row of the problem runs split-KV, so that the main launch
 * has none and is left out: OPP__SPLIT_ALL_KV (every sequence's last
 * min(L_q, OPP__SPLIT_MOST(G)) tokens split) and no sequence has more
 * tokens than that (L_q <= max_seqlen_q, or the guard stops the run). */
static inline bool flash_all_split(const flash_args &a, const opp__problem_t *p) {
    return OPP__SPLIT_ALL_KV && a.split_on && p->max_seqlen_q <= OPP__SPLIT_MOST(a.g);
}

template <int DT, class C>
static opp_status_t flash_launch_split(const flash_args &a, const opp__problem_t *p,
                                       const opp__guard_record_t *rec, struct CUstream_st *stream,
                                       bool after_hopper) {
    typedef flash_split_cfg<C::DB> S;
    int64_t ts_max = 0;
    const flash_args sa = flash_split_args(a, p, &ts_max);
    /* at most 16 split rows in every item: the narrow-only instance serves
     * the launch (the tile is the item's own choice either way: the same
     * bits) */
    if (ts_max * a.g <= OPP__SPLIT_NARROW_ROWS) {
        OPP_TRY((flash_split_enqueue<DT, S, true>(sa, rec, stream, after_hopper)));
    } else {
        OPP_TRY((flash_split_enqueue<DT, S, false>(sa, rec, stream, after_hopper)));
    }
    OPP_CUDA_TRY(cudaGetLastError());
    return flash_launch_combine<DT>(a, ts_max, rec, stream);
}

/* Whether the launch's rows split: split_on, and the threshold the kernels
 * compare L_kv with (flash_args.split_min_kv: INT32_MAX when off, so that
 * flash_split_tokens is 0 without a test of split_on). */
static inline void flash_set_split(flash_args *a, bool on) {
    a->split_on = on ? 1 : 0;
    a->split_min_kv = on ? opp__split_min_kv(a->g) : INT32_MAX;
}

/* The arguments every FAST launch shares, from the problem and its plan,
 * for head-size bucket db; n_mb and items are the caller's (they depend on
 * its tile). */
static inline flash_args flash_args_init(const opp__problem_t *p, const opp__plan_t *plan, int db) {
    flash_args a;
    memset(&a, 0, sizeof(a));
    if (p->layout == OPP__LAYOUT_PACKED) {
        a.cu_q = p->cu_seqlens_q;
        a.cu_kv = p->cu_seqlens_kv;
    } else {
        a.nonpad = p->nonpad;
    }
    a.batch = p->batch;
    a.hkv = p->a.hkv;
    a.g = p->a.g;
    a.d = p->a.d;
    a.dv = p->a.dv;
    a.q_seqlen = p->q_seqlen;
    a.q = p->q;
    a.k = p->k;
    a.v = p->v;
    a.out = p->out;
    a.lse = p->lse;
    a.lse_head = p->lse_head;
    a.lse_batch = p->lse_batch;
    const float log2e = 1.4426950408889634f;
    a.scale_log2 = p->a.softmax_scale * log2e;
    if (p->a.softcap > 0.0f) {
        a.cap_scale = p->a.softmax_scale / p->a.softcap;
        a.cap_x2 = 2.0f * log2e * a.cap_scale;
        a.cap_log2 = p->a.softcap * log2e;
    }
    a.is_causal = p->a.is_causal;
    flash_set_split(&a, db <= OPP__SPLIT_DMAX && plan->split_rows > 0 && p->a.g <= OPP__SPLIT_ROWS);
    a.hq = p->a.hq;
    a.fd_g = opp__fastdiv_make(a.g);
    a.fd_hkv = opp__fastdiv_make(a.hkv);
    a.fd_per = opp__fastdiv_make((int64_t)a.batch * a.hkv); /* {0, 0} past 2^31 - 1: unused */
    a.part_o = plan->split_o;
    a.part_ml = (float2 *)plan->split_ml;
    return a;
}

/* The launch of an f32 kernel (the FFMA and 3xTF32 kernels: no split-KV,
 * lib/attention_plan.c plans none for f32) of tile configuration C
 * (C::DB, BM, THREADS, SMEM_BYTES): a 1-D grid of min(items, 2^31 - 1)
 * blocks of C::THREADS (per_sm: at most one a multiprocessor, which then
 * stride over the items), items = ceil(max_seqlen_q * G / C::BM) * B * Hkv,
 * C::SMEM_BYTES of dynamic shared memory (the attribute set once per device,
 * smem_set: the kernel's device cache), on `stream`. */
template <class C>
static opp_status_t flash_launch_f32(const opp__problem_t *p, const opp__plan_t *plan,
                                     struct CUstream_st *stream,
                                     void (*kernel)(const flash_args, const opp__guard_record_t *),
                                     int *smem_set, bool per_sm = false) {
    flash_args a = flash_args_init(p, plan, C::DB);
    flash_set_split(&a, false); /* f32: no split-KV (lib/attention_plan.c) */
    a.n_mb = ((int64_t)p->max_seqlen_q * a.g + C::BM - 1) / C::BM;
    a.items = a.n_mb * a.batch * a.hkv;
    const opp__guard_record_t *rec = (const opp__guard_record_t *)plan->guard_record;
    if (a.items > 0) {
        OPP_TRY(flash_smem_once((const void *)kernel, C::SMEM_BYTES, smem_set));
        int64_t cap = 0x7FFFFFFF;
        if (per_sm) {
            int sms = 0;
            OPP_TRY(flash_sm_count(&sms));
            cap = sms;
        }
        const unsigned grid = (unsigned)(a.items < cap ? a.items : cap);
        kernel<<<grid, C::THREADS, C::SMEM_BYTES, (cudaStream_t)stream>>>(a, rec);
        OPP_CUDA_TRY(cudaGetLastError());
#if OPP__HOPPER_TRACE
        /* a development build's trace (the 3xTF32 kernel's events,
         * kernels/tf32x3_ws.cuh): written at exit to $OPP_HOP_TRACE.f32 */
        static bool trace_set;
        if (!trace_set) {
            trace_set = true;
            atexit([] { hop_trace_write("f32"); });
        }
#endif
    }
    return OPP_STATUS_SUCCESS;
}

/* The launch function opp__launch_<name> of an f32 kernel line of
 * kernels/kernel_list.h (the FFMA and TF32X3 rows): tile configuration
 * CFG<DMAX>, checked against the line's BM, BN, THREADS and SMEM, and
 * kernel KERNEL<CFG<DMAX>> through flash_launch_f32 (PER_SM: its per_sm). */
#define OPP__F32_LAUNCHER(CFG, KERNEL, name, DMAX, BM_, BN_, THREADS_, SMEM_, PER_SM)             \
    extern "C" opp_status_t opp__launch_##name(                                                   \
        const opp__problem_t *p, const opp__kernel_row_t *row, const opp__plan_t *plan,           \
        struct CUstream_st *stream) {                                                             \
        typedef CFG<DMAX> cfg_t;                                                                  \
        static_assert(cfg_t::SMEM_BYTES == (SMEM_) && (BM_) == cfg_t::BM && (BN_) == cfg_t::BN && \
                          (THREADS_) == cfg_t::THREADS,                                           \
                      #name ": kernel_list.h row and tile configuration differ");                 \
        (void)row;                                                                                \
        static int smem_set[OPP__DEVICE_CACHE_SLOTS];                                             \
        return flash_launch_f32<cfg_t>(p, plan, stream, KERNEL<cfg_t>, smem_set, (PER_SM));       \
    }

/* The main launch of configuration M on a 1-D grid of min(items, 2^31 - 1)
 * blocks of M::THREADS, items = ceil(max_seqlen_q * G / M::BM) * B * Hkv
 * (set in a.n_mb and a.items), M::SMEM_BYTES of dynamic shared memory (the
 * attribute is set once per device). */
template <int DT, class M>
static opp_status_t flash_enqueue_main(flash_args &a, const opp__problem_t *p,
                                       const opp__guard_record_t *rec, struct CUstream_st *stream) {
    a.n_mb = ((int64_t)p->max_seqlen_q * a.g + M::BM - 1) / M::BM;
    a.items = a.n_mb * a.batch * a.hkv;
    if (a.items > 0) {
        static int smem_set[OPP__DEVICE_CACHE_SLOTS];
        OPP_TRY(
            flash_smem_once((const void *)flash_attention_kernel<DT, M>, M::SMEM_BYTES, smem_set));
        const unsigned grid = a.items < 0x7FFFFFFF ? (unsigned)a.items : 0x7FFFFFFFu;
        /* a programmatic dependent of the guard, launched just before */
        OPP_TRY(flash_launch_dependent(flash_attention_kernel<DT, M>, grid, M::THREADS,
                                       M::SMEM_BYTES, stream, a, rec));
        OPP_CUDA_TRY(cudaGetLastError());
    }
    return OPP_STATUS_SUCCESS;
}

/* *fit: whether the current device's SM holds two blocks of `bytes` of
 * dynamic shared memory (1 KB reserved a block), looked up once per device;
 * cache: a device cache (2: yes, 1: no). */
static inline opp_status_t flash_two_fit(size_t bytes, int *cache, bool *fit) {
    int dev = 0;
    OPP_CUDA_TRY(cudaGetDevice(&dev));
    int v = opp__device_cache_get(cache, dev);
    if (v == 0) {
        int per_sm = 0;
        OPP_CUDA_TRY(
            cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev));
        v = (size_t)per_sm >= 2 * (bytes + 1024) ? 2 : 1;
        opp__device_cache_set(cache, dev, v);
    }
    *fit = v == 2;
    return OPP_STATUS_SUCCESS;
}

/* The main launch of X (flash_enqueue_main) when an SM of the current
 * device holds two of its blocks (flash_two_fit, one cache per X); *done:
 * whether it ran. */
template <int DT, class X>
static opp_status_t flash_enqueue_if_two(flash_args &a, const opp__problem_t *p,
                                         const opp__guard_record_t *rec, struct CUstream_st *stream,
                                         bool *done) {
    static int fit_cache[OPP__DEVICE_CACHE_SLOTS];
    OPP_TRY(flash_two_fit(X::SMEM_BYTES, fit_cache, done));
    if (*done) {
        OPP_TRY((flash_enqueue_main<DT, X>(a, p, rec, stream)));
    }
    return OPP_STATUS_SUCCESS;
}

/* The line's launch: the main launch of C (flash_enqueue_main) or, for the
 * DB 256 BM 128 line where an SM holds two of them, of the pair tile (BM
 * 64, four warps, C's BN: the same key-block grid, so the same bits; two
 * blocks of four warps instead of one of eight, as FlashAttention-2 picks
 * for D 256 on 227 KB GPUs, H100 / H200; an A100 holds one of either and
 * runs C), or, from DB 128 down where an SM holds two of them, of C with
 * K and V in rings of two slots (ST 2: the same tile, the same bits; H100 /
 * H200; an A100 runs C). When the plan has split partials (and DB <= OPP__SPLIT_DMAX),
 * then the split kernel over ceil(max_seqlen_kv / S) * B * Hkv items with
 * the BM = OPP__SPLIT_ROWS, 4-warp tile, and the combine on B * Hkv x
 * ceil(ts G Dv / 256) blocks of 128 threads (ts = min(max_seqlen_q, 64 /
 * G)); all three on `stream`, in that order. */
template <int DT, class C>
static opp_status_t flash_launch(const opp__problem_t *p, const opp__plan_t *plan,
                                 struct CUstream_st *stream) {
    flash_args a = flash_args_init(p, plan, C::DB);
    const opp__guard_record_t *rec = (const opp__guard_record_t *)plan->guard_record;
    /* no row for the main launch when every row splits: the split launch alone */
    if (!flash_all_split(a, p)) {
        bool other = false; /* the main launch ran on the pair tile or the ring */
        if constexpr (C::DB == 256 && C::BM == 128) {
            OPP_TRY((flash_enqueue_if_two<DT, flash_cfg<C::DB, 64, C::BN, 4>>(a, p, rec, stream,
                                                                              &other)));
        }
        if constexpr (C::DB <= 128) {
            OPP_TRY((flash_enqueue_if_two<DT, flash_cfg<C::DB, C::BM, C::BN, C::NW, 2>>(
                a, p, rec, stream, &other)));
        }
        if (!other) {
            OPP_TRY((flash_enqueue_main<DT, C>(a, p, rec, stream)));
        }
    }
    if constexpr (C::DB <= OPP__SPLIT_DMAX) {
        if (a.split_on) {
            return flash_launch_split<DT, C>(a, p, rec, stream, false);
        }
    }
    return OPP_STATUS_SUCCESS;
}

/* One launch function per FAST line of kernels/kernel_list.h. */
#define OPP__FLASH_LAUNCHER(name, ALGO, DTYPE, DMAX, ALIGN, SM, BM, BN, THREADS, SMEM)  \
    extern "C" opp_status_t opp__launch_##name(                                         \
        const opp__problem_t *p, const opp__kernel_row_t *row, const opp__plan_t *plan, \
        struct CUstream_st *stream) {                                                   \
        typedef flash_cfg<DMAX, BM, BN, (THREADS) / 32> cfg_t;                          \
        static_assert(cfg_t::SMEM_BYTES == (SMEM), "flash smem");                       \
        (void)row;                                                                      \
        return flash_launch<OPP_DTYPE_##DTYPE, cfg_t>(p, plan, stream);                 \
    }

/* The split-KV launch and its combine for bucket DB <= OPP__SPLIT_DMAX, as a
 * function other kernels' launchers call (the Hopper kernel's rows run
 * their split rows here): defined in kernels/flash_d<DB>.cu. */
#define OPP__FLASH_SPLIT_ENTRY_NAME(DTYPE, DB) opp__flash_split_##DTYPE##_d##DB
#define OPP__FLASH_SPLIT_ENTRY_DECL(DTYPE, DB)                                        \
    opp_status_t OPP__FLASH_SPLIT_ENTRY_NAME(DTYPE, DB)(                              \
        const flash_args &a, const opp__problem_t *p, const opp__guard_record_t *rec, \
        struct CUstream_st *stream, bool after_hopper)
#define OPP__FLASH_SPLIT_ENTRY(DTYPE, DB)                                                          \
    OPP__FLASH_SPLIT_ENTRY_DECL(DTYPE, DB) {                                                       \
        return flash_launch_split<OPP_DTYPE_##DTYPE, flash_cfg<DB, 128, 64, 4>>(a, p, rec, stream, \
                                                                                after_hopper);     \
    }
OPP__FLASH_SPLIT_ENTRY_DECL(F16, 64);
OPP__FLASH_SPLIT_ENTRY_DECL(BF16, 64);
OPP__FLASH_SPLIT_ENTRY_DECL(F16, 128);
OPP__FLASH_SPLIT_ENTRY_DECL(BF16, 128);

#endif /* OPP_KERNELS_FLASH_LAUNCH_CUH */
