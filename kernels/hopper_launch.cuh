/*
 * hopper_launch.cuh - the host side of the Hopper kernel
 * (kernels/hopper_attention.cuh): the TMA tensor maps, encoded per call
 * (kernels/hopper_maps.cuh: no stream work, graph-capturable), the grid,
 * and the launch
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
#include "kernels/hopper_maps.cuh"
#include "kernels/hopper_sort_rule.h"
#include "kernels/hopper_split.cuh"

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

/* One launch of configuration C on `stream`: a 1-D grid of min(items,
 * SMs) blocks of C::THREADS threads, items = ceil(max_seqlen_q / (BM / G))
 * * B * Hkv, C::SMEM_BYTES of dynamic shared memory, running the sequences
 * of a.hop_class; the tensor maps are encoded here, on the host, per call
 * (no stream work: safe under graph capture). after_guard: the guard's
 * launch is the one before on `stream`, so that with C::GUARD_PDL the probe
 * launch, or one with no split launch after it, can be the guard's
 * programmatic dependent (its instance waits for the guard before it reads
 * the record). *launched: whether it launched (no item: no launch). */
template <int DT, class C>
static opp_status_t hopper_enqueue(flash_args a, const opp__problem_t *p, opp__guard_record_t *rec,
                                   struct CUstream_st *stream, bool after_guard, bool *launched) {
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
    /* persistent: one block per SM claims the items (the longest first),
     * so a block's next Q and K/V load under its epilogue */
    int64_t cap = 0x7FFFFFFF;
    if (C::PERSISTENT) {
        int sms = 0;
        OPP_TRY(flash_sm_count(&sms));
        cap = (int64_t)sms * C::BLOCKS_PER_SM;
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
    /* the probe instance (from D 128: at D 64 the probe made ptxas
     * serialise the wgmma pipeline, C7511) for split decode batches; with
     * C::GUARD_PDL the guard's dependent, as is the GPDL instance for a
     * launch with no split launch after it (prefill_gqa_causal_bf16, whose
     * split rows follow, ran 0.6 % slower as the guard's dependent on an
     * H100, bench/RESULTS.md, forty-first session: it keeps the ordinary
     * launch and machine code) */
    static int smem_set[OPP__DEVICE_CACHE_SLOTS], smem_set_probe[OPP__DEVICE_CACHE_SLOTS],
        smem_set_pdl[OPP__DEVICE_CACHE_SLOTS];
    void (*kernel)(const hop_maps, const flash_args, opp__guard_record_t *) =
        hopper_attention_kernel<DT, C>;
    int *set = smem_set;
    bool probe = false;
    if constexpr (C::DB > 64 && C::PERSISTENT) {
        if (opp__hop_wants_probe(&sort_in)) {
            probe = true;
            kernel = hopper_attention_kernel<DT, C, true>;
            set = smem_set_probe;
        }
    }
    const bool pdl = C::GUARD_PDL && after_guard && (probe || !a.split_on);
    if constexpr (C::GUARD_PDL) {
        if (pdl && !probe) {
            kernel = hopper_attention_kernel<DT, C, false, true>;
            set = smem_set_pdl;
        }
    }
    OPP_TRY(flash_smem_once((const void *)kernel, C::SMEM_BYTES, set));
    if (pdl) {
        OPP_TRY(
            flash_launch_dependent(kernel, grid, C::THREADS, C::SMEM_BYTES, stream, maps, a, rec));
    } else {
        kernel<<<grid, C::THREADS, C::SMEM_BYTES, (cudaStream_t)stream>>>(maps, a, rec);
    }
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
    flash_set_split(&a, a.split_on && split != NULL);
    opp__guard_record_t *rec = (opp__guard_record_t *)plan->guard_record;
    bool launched = false;
    if (flash_all_split(a, p)) {
        /* every row splits (OPP__SPLIT_ALL_KV, a decode batch): no launch here */
    } else if constexpr (W::BM == C::BM) {
        OPP_TRY((hopper_enqueue<DT, C>(a, p, rec, stream, true, &launched)));
    } else {
        static_assert(W::DB == C::DB && W::BM >= C::BM &&
                          W::SMEM_BYTES + 1024 <= C::BLOCKS_PER_SM * (C::SMEM_BYTES + 1024),
                      "the wide configuration fits where its line's fits (the line's two "
                      "blocks' shared memory, when it runs two an SM), G <= BM");
        if (hop_takes_wide(p->max_seqlen_kv)) {
            a.hop_class = 2;
            OPP_TRY((hopper_enqueue<DT, W>(a, p, rec, stream, true, &launched)));
        }
        a.hop_class = 1; /* after the wide launch, an ordinary launch */
        OPP_TRY((hopper_enqueue<DT, C>(a, p, rec, stream, !launched, &launched)));
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
