/*
 * hopper_launch.cuh - the host side of the Hopper kernel
 * (kernels/hopper_attention.cuh): the TMA tensor maps, encoded per call
 * through the driver's cuTensorMapEncodeTiled (looked up once, no libcuda
 * link, no stream work: graph-capturable), the grid, and the launch
 * function of each SM 90 line of kernels/kernel_list.h
 * (OPP__HOPPER_LAUNCHER, instantiated by kernels/hopper_d<DB>.cu).
 */
#ifndef OPP_KERNELS_HOPPER_LAUNCH_CUH
#define OPP_KERNELS_HOPPER_LAUNCH_CUH

#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/device_cache.h"
#include "kernels/flash_launch.cuh"
#include "kernels/hopper_attention.cuh"
#include "kernels/hopper_sort_rule.h"

// --- the trace (kernels/hopper_trace.cuh; development builds only)

#if OPP__HOPPER_TRACE
/* at exit: the last launch's events to $OPP_HOP_TRACE.d<DB> */
template <int DB> static void hop_trace_dump(void) {
    char tag[16];
    snprintf(tag, sizeof tag, "d%d", DB);
    hop_trace_write(tag);
}
#endif

// --- launcher

typedef CUresult (*hop_encode_fn)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *,
                                  const cuuint64_t *, const cuuint64_t *, const cuuint32_t *,
                                  const cuuint32_t *, CUtensorMapInterleave, CUtensorMapSwizzle,
                                  CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

/* cuTensorMapEncodeTiled from the driver (through the runtime: no libcuda
 * link), looked up once. */
static inline opp_status_t hop_encoder(hop_encode_fn *fn) {
    static hop_encode_fn cached;
    hop_encode_fn f = __atomic_load_n(&cached, __ATOMIC_ACQUIRE);
    if (f == NULL) {
        cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
        void *p = NULL;
        OPP_CUDA_TRY(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000,
                                                      cudaEnableDefault, &q));
        OPP_RETURN_IF(q != cudaDriverEntryPointSuccess || p == NULL, OPP_STATUS_CUDA_ERROR,
                      "the CUDA driver has no cuTensorMapEncodeTiled (query result %d)", (int)q);
        f = (hop_encode_fn)p;
        __atomic_store_n(&cached, f, __ATOMIC_RELEASE);
    }
    *fn = f;
    return OPP_STATUS_SUCCESS;
}

/* The map of tensor t viewed as [nb][rows][heads][cols] (16-bit elements,
 * element strides t.batch / t.row / t.head), box {64 columns, box_heads,
 * box_rows, 1}, 128-byte swizzle, zeros out of bounds. A tensor with no
 * element (rows == 0 or no pointer) is never loaded: its map stays zero. */
static inline opp_status_t hop_map(hop_encode_fn enc, CUtensorMap *m, const char *name,
                                   const opp__tensor_t *t, int dt, int64_t cols, int64_t heads,
                                   int64_t rows, int64_t nb, uint32_t box_heads,
                                   uint32_t box_rows) {
    memset(m, 0, sizeof(*m));
    if (t->ptr == NULL || rows <= 0 || heads <= 0 || cols <= 0 || nb <= 0) {
        return OPP_STATUS_SUCCESS;
    }
    const cuuint64_t dims[4] = {(cuuint64_t)cols, (cuuint64_t)heads, (cuuint64_t)rows,
                                (cuuint64_t)nb};
    const int64_t bstride = nb > 1 ? t->batch : t->row;
    const cuuint64_t strides[3] = {(cuuint64_t)t->head * 2, (cuuint64_t)t->row * 2,
                                   (cuuint64_t)bstride * 2};
    const cuuint32_t box[4] = {64, box_heads, box_rows, 1};
    const cuuint32_t estr[4] = {1, 1, 1, 1};
    const CUresult r = enc(m,
                           dt == OPP_DTYPE_BF16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                                                : CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
                           4, (void *)t->ptr, dims, strides, box, estr,
                           CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                           CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    OPP_RETURN_IF(r != CUDA_SUCCESS, OPP_STATUS_CUDA_ERROR,
                  "cuTensorMapEncodeTiled failed (%d) for %s: [%lld][%lld][%lld][%lld], strides "
                  "(elements) batch %lld, row %lld, head %lld",
                  (int)r, name, (long long)nb, (long long)rows, (long long)heads, (long long)cols,
                  (long long)t->batch, (long long)t->row, (long long)t->head);
    return OPP_STATUS_SUCCESS;
}

/* Whether TMA can address tensor t (16-bit elements): a 16-byte aligned
 * pointer, strides of 16-byte multiples below 2^40 bytes
 * (OPP__TMA_STRIDE_BYTES_LIMIT). */
static inline bool hop_tma_ok(const opp__tensor_t *t, int64_t nb) {
    const int64_t strides[3] = {t->head, t->row, nb > 1 ? t->batch : t->row};
    if (((uintptr_t)t->ptr & 15u) != 0) {
        return false;
    }
    for (int i = 0; i < 3; ++i) {
        if (strides[i] <= 0 || (strides[i] * 2) % 16 != 0 ||
            strides[i] * 2 >= OPP__TMA_STRIDE_BYTES_LIMIT) {
            return false;
        }
    }
    return true;
}

/* the TMA split kernel (OPP__SPLIT_TMA): after the maps' helpers above */
#include "kernels/hopper_split.cuh"

/* One launch of configuration C on `stream`: a 1-D grid of min(items,
 * SMs) blocks of C::THREADS threads, items = ceil(max_seqlen_q / (BM / G))
 * * B * Hkv, C::SMEM_BYTES of dynamic shared memory, running the sequences
 * of a.hop_class; the tensor maps are encoded here, on the host, per call
 * (no stream work: safe under graph capture). *launched: whether it
 * launched (no item: no launch). */
template <int DT, class C>
static opp_status_t hopper_enqueue(flash_args a, const opp__problem_t *p, opp__guard_record_t *rec,
                                   struct CUstream_st *stream, bool *launched) {
    const int32_t bmt = C::BM / a.g;
    a.n_mb = ((int64_t)p->max_seqlen_q + bmt - 1) / bmt;
    a.items = a.n_mb * a.batch * a.hkv;
    *launched = false;
    if (a.items <= 0) {
        return OPP_STATUS_SUCCESS;
    }
    hop_encode_fn enc = NULL;
    OPP_TRY(hop_encoder(&enc));
    hop_maps maps;
    const bool packed = p->layout == OPP__LAYOUT_PACKED;
    const int64_t nb = packed ? 1 : p->batch;
    const int64_t q_rows = packed ? p->total_q : p->q_seqlen;
    const int64_t kv_rows = packed ? p->total_kv : p->kv_seqlen;
    OPP_TRY(hop_map(enc, &maps.q, "q", &p->q, DT, p->a.d, p->a.hq, q_rows, nb, (uint32_t)a.g,
                    (uint32_t)bmt));
    OPP_TRY(
        hop_map(enc, &maps.k, "k", &p->k, DT, p->a.d, p->a.hkv, kv_rows, nb, 1, (uint32_t)C::BN));
    OPP_TRY(
        hop_map(enc, &maps.v, "v", &p->v, DT, p->a.dv, p->a.hkv, kv_rows, nb, 1, (uint32_t)C::BN));
    /* out: a box of one consumer's rows, {64, G, 64 / G} when G divides
     * 64 and the tensor suits TMA; else every row is stored from
     * registers (o_ok = 0) */
    maps.o_ok = 0;
    memset(&maps.o, 0, sizeof(maps.o));
    if (C::TMA_O && 64 % a.g == 0 && hop_tma_ok(&p->out, nb)) {
        OPP_TRY(hop_map(enc, &maps.o, "out", &p->out, DT, p->a.dv, p->a.hq, q_rows, nb,
                        (uint32_t)a.g, (uint32_t)(64 / a.g)));
        maps.o_ok = 1;
    }
    static int smem_set[OPP__DEVICE_CACHE_SLOTS];
    OPP_TRY(flash_smem_once((const void *)hopper_attention_kernel<DT, C>, C::SMEM_BYTES, smem_set));
    /* persistent: one block per SM claims the items (the longest first),
     * so a block's next Q and K/V load under its epilogue */
    int64_t cap = 0x7FFFFFFF;
    if (C::PERSISTENT) {
        int sms = 0;
        OPP_TRY(flash_sm_count(&sms));
        cap = sms;
    }
    const unsigned grid = (unsigned)(a.items < cap ? a.items : cap);
    /* the longest-first order where it pays (kernels/hopper_sort_rule.h) */
    opp__hop_sort_in_t sort_in;
    sort_in.packed = packed;
    sort_in.batch = a.batch;
    sort_in.hkv = a.hkv;
    sort_in.g = a.g;
    sort_in.items = a.items;
    sort_in.bmt = bmt;
    sort_in.grid = grid;
    sort_in.split_on = a.split_on;
    sort_in.total_q = p->total_q;
    sort_in.total_kv = p->total_kv;
    sort_in.max_seqlen_q = p->max_seqlen_q;
    sort_in.max_seqlen_kv = p->max_seqlen_kv;
    a.hop_sort = C::PERSISTENT && opp__hop_wants_sort(&sort_in) ? 1 : 0;
    hopper_attention_kernel<DT, C>
        <<<grid, C::THREADS, C::SMEM_BYTES, (cudaStream_t)stream>>>(maps, a, rec);
    OPP_CUDA_TRY(cudaGetLastError());
#if OPP__HOPPER_TRACE
    static bool dump_set;
    if (!dump_set) {
        dump_set = true;
        atexit(hop_trace_dump<C::DB>);
    }
#endif
    *launched = true;
    return OPP_STATUS_SUCCESS;
}

/* The Hopper kernel of configuration C (hopper_enqueue) on every sequence;
 * or, with a wide configuration W (W::BM != C::BM: the D 64 pair), W on
 * the sequences hop_takes_wide() gives it (when max_seqlen_kv allows one),
 * then C on the others. Then, when the plan has split partials and DB <=
 * OPP__SPLIT_DMAX, `split` (the flash split launch and combine of the same
 * bucket, a programmatic dependent of the last launch here; or, with
 * OPP__SPLIT_TMA where it applies, the TMA split kernel's: hop_split_tma);
 * all on `stream`, in that order. */
template <int DT, class C, class W = C>
static opp_status_t
hopper_launch(const opp__problem_t *p, const opp__plan_t *plan, struct CUstream_st *stream,
              opp_status_t (*split)(const flash_args &, const opp__problem_t *,
                                    const opp__guard_record_t *, struct CUstream_st *, bool)) {
    flash_args a = flash_args_init(p, plan, C::DB);
    a.split_on = a.split_on && split != NULL;
    opp__guard_record_t *rec = (opp__guard_record_t *)plan->guard_record;
    bool launched = false;
    if constexpr (W::BM == C::BM) {
        OPP_TRY((hopper_enqueue<DT, C>(a, p, rec, stream, &launched)));
    } else {
        static_assert(W::DB == C::DB && W::SMEM_BYTES <= C::SMEM_BYTES && W::BM >= C::BM,
                      "the wide configuration fits where its line's fits, G <= BM");
        if (hop_takes_wide(p->max_seqlen_kv)) {
            a.hop_class = 2;
            OPP_TRY((hopper_enqueue<DT, W>(a, p, rec, stream, &launched)));
        }
        a.hop_class = 1;
        OPP_TRY((hopper_enqueue<DT, C>(a, p, rec, stream, &launched)));
        a.hop_class = 0;
    }
    if (a.split_on) {
        bool done = false; /* the TMA split kernel, where it is on and applies */
        OPP_TRY((hop_split_tma<DT, C::DB>(a, p, rec, stream, launched, &done)));
        return done ? OPP_STATUS_SUCCESS
                    : split(a, p, rec, stream, launched); /* PDL after a launch of this kernel */
    }
    return OPP_STATUS_SUCCESS;
}

/* One launch function per SM 90 FAST line of kernels/kernel_list.h; SPLIT:
 * the bucket's split entry (OPP__FLASH_SPLIT_ENTRY_NAME) or NULL; WIDE_CFG:
 * the line's wide configuration (a hop_cfg), or cfg_t (none). */
#define OPP__HOPPER_LAUNCHER(name, ALGO, DTYPE, DMAX, ALIGN, SM_, BM_, BN_, THREADS_, SMEM_, \
                             SPLIT, WIDE_CFG)                                                \
    extern "C" opp_status_t opp__launch_##name(                                              \
        const opp__problem_t *p, const opp__kernel_row_t *row, const opp__plan_t *plan,      \
        struct CUstream_st *stream) {                                                        \
        typedef hop_cfg<DMAX, BN_, (BM_) / 64> cfg_t;                                        \
        static_assert(cfg_t::SMEM_BYTES == (SMEM_) && (BM_) == cfg_t::BM &&                  \
                          (THREADS_) == cfg_t::THREADS && (SM_) == 90,                       \
                      "hopper row");                                                         \
        (void)row;                                                                           \
        return hopper_launch<OPP_DTYPE_##DTYPE, cfg_t, WIDE_CFG>(p, plan, stream, SPLIT);    \
    }

#endif /* OPP_KERNELS_HOPPER_LAUNCH_CUH */
