/*
 * tile_config.h - the tile shapes of the exact attention kernel, in one
 * place (STYLE.md section 11). CUDA C++ only (included by the kernels/ .cu files).
 *
 * A block of OPP__EXACT_THREADS threads owns BM query rows (rows = token x
 * query-head-in-group, so the G query heads sharing a kv head share every
 * K/V tile) and walks the keys in tiles of BN keys, BN = 64 or 128, i.e.
 * one or two whole summation chunks of exact_order.h (OPP_EXACT_KEY_CHUNK =
 * 64); tile kt holds keys kt BN .. kt BN + BN - 1, so tiles are aligned to
 * the chunks (which are numbered by key index).
 *   Q   resident in shared memory as doubles, [DMAX][BM] (d-major)
 *   K   streamed in slices of BK = 2048 / BN d-values x BN keys
 *       (16 x 128 or 32 x 64)
 *   V   streamed in slices of BJ = 2048 / DMAX keys x DMAX columns
 *   QK  register micro-tile TM rows x KJ = BN / 16 keys per thread (16 x 16
 *       threads)
 *   PV  register micro-tile TM rows x VT columns per thread (16 x 16 threads)
 * Every slice is 2048 elements: 8 per thread, one 16-byte load for 16-bit
 * dtypes (two for f32). The tile shape never changes result bits (the order
 * of numerics/exact_order.h does not depend on it); it only decides the
 * shared memory a block needs, and with it which GPUs can run the tile.
 *
 * The instances (dtype x (DMAX, BM, BN)) are the EXACT lines of
 * kernels/kernel_list.h, whose shared-memory formula the template checks.
 */
#ifndef OPP_KERNELS_TILE_CONFIG_H
#define OPP_KERNELS_TILE_CONFIG_H

#include <stddef.h>

#include "kernels/kernel_list.h"
#include "numerics/exact_order.h"

#define OPP__EXACT_THREADS 256
#define OPP__EXACT_CHUNK   64 /* the kernel's unrolled chunk; must be OPP_EXACT_KEY_CHUNK */

/* The kernel unrolls its chunk loops on OPP__EXACT_CHUNK; the fixed order
 * (numerics/exact_order.h) decides the bits. They must be one number. */
static_assert(OPP__EXACT_CHUNK == OPP_EXACT_KEY_CHUNK, "exact kernel chunk != exact order chunk");

/* DMAX_: largest D and Dv; BM_: query rows per block; BN_: keys per tile. */
template <int DMAX_, int BM_, int BN_> struct opp__exact_cfg {
    static constexpr int DMAX = DMAX_;
    static constexpr int BM = BM_;
    static constexpr int BN = BN_;
    static constexpr int BN_LOG2 = BN_ == 128 ? 7 : 6; /* tid / BN = tid >> BN_LOG2 */
    static constexpr int NCH = BN_ / OPP__EXACT_CHUNK; /* summation chunks per key tile */
    static constexpr int TM = BM_ / 16;                /* rows per thread */
    static constexpr int KJ = BN_ / 16;                /* keys per thread (QK micro-tile) */
    static constexpr int VT = DMAX_ / 16;              /* V columns per thread */
    static constexpr int SLAB = 2048;                  /* elements (doubles) of a K or V slice */
    static constexpr int BK = SLAB / BN_;              /* d-values per K slice */
    static constexpr int BJ = SLAB / DMAX_;            /* keys per V slice */
    static constexpr int LDR = BM_ + 2; /* pitch (doubles) of a score-tile key column */
    /* shared memory, in doubles: Q, two slices, scores [BN][LDR], row stats */
    static constexpr size_t Q_ELEMS = (size_t)DMAX_ * BM_;
    static constexpr size_t SC_ELEMS = (size_t)BN_ * LDR;
    /* m, S, 2 max partials, and for BN 128 chunk 1's parts of pass 2 */
    static constexpr size_t STAT_ELEMS = (size_t)(3 + NCH) * BM_;
    static constexpr size_t RAW_ELEMS = 1024; /* cp.async staging: 256 threads x 32 bytes */
    static constexpr size_t KEND_INTS = (size_t)BM_;
    static constexpr size_t SMEM_BYTES =
        (Q_ELEMS + 2 * SLAB + SC_ELEMS + STAT_ELEMS + RAW_ELEMS) * sizeof(double) +
        KEND_INTS * sizeof(int);
    static_assert(BM_ == 32 || BM_ == 64, "TM must be 2 or 4");
    static_assert(BN_ == 64 || BN_ == 128, "KJ must be 4 or 8");
    static_assert((1 << BN_LOG2) == BN_, "BN_LOG2");
    static_assert(BN_ % OPP__EXACT_CHUNK == 0, "a key tile holds whole chunks");
    static_assert(BK % 8 == 0 && BK * BN_ == SLAB, "K slice: whole 8-element cells");
    static_assert(DMAX_ % 32 == 0 && DMAX_ <= 256, "VT must be even, BJ >= 8");
    static_assert(OPP__EXACT_CHUNK % BJ == 0, "a V slice never straddles two chunks");
    static_assert(SMEM_BYTES == OPP__EXACT_SMEM_BYTES(DMAX_, BM_, BN_),
                  "kernel_list.h's formula disagrees with the tile");
};

#endif /* OPP_KERNELS_TILE_CONFIG_H */
