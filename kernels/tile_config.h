/*
 * tile_config.h - the tile shapes of the exact attention kernel, in one
 * place (STYLE.md section 11). CUDA C++ only (included by the kernels/ .cu files).
 *
 * A block of OPP__EXACT_THREADS threads owns BM query rows (rows = token x
 * query-head-in-group, so the G query heads sharing a kv head share every
 * K/V tile) and walks the keys in tiles of OPP__EXACT_BN = 128 keys, i.e.
 * exactly two summation chunks of exact_order.h (OPP_EXACT_KEY_CHUNK = 64).
 *   Q   resident in shared memory as doubles, [DMAX][BM] (d-major)
 *   K   streamed in slices of OPP__EXACT_BK d-values x 128 keys
 *   V   streamed in slices of BJ keys x DMAX columns
 *   QK  register micro-tile TM rows x 8 keys per thread (16 x 16 threads)
 *   PV  register micro-tile TM rows x VT columns per thread (16 x 16 threads)
 * Every slice is 2048 elements: 8 per thread, one 16-byte load for 16-bit
 * dtypes (two for f32).
 *
 * The instances (dtype x (DMAX, BM)) are the EXACT lines of
 * kernels/kernel_list.h, whose shared-memory formula the template checks.
 */
#ifndef OPP_KERNELS_TILE_CONFIG_H
#define OPP_KERNELS_TILE_CONFIG_H

#include <stddef.h>

#include "kernels/kernel_list.h"
#include "numerics/exact_order.h"

#define OPP__EXACT_THREADS 256
#define OPP__EXACT_BN      128 /* keys per tile: two summation chunks */
#define OPP__EXACT_CHUNK   64  /* the kernel's unrolled chunk; must be OPP_EXACT_KEY_CHUNK */
#define OPP__EXACT_BK      16  /* d-values per K slice */

/* The kernel unrolls its chunk loops on OPP__EXACT_CHUNK; the fixed order
 * (numerics/exact_order.h) decides the bits. They must be one number. */
static_assert(OPP__EXACT_CHUNK == OPP_EXACT_KEY_CHUNK, "exact kernel chunk != exact order chunk");
static_assert(OPP__EXACT_BN % OPP__EXACT_CHUNK == 0, "a key tile holds whole chunks");

/* DMAX_: largest D and Dv; BM_: query rows per block. */
template <int DMAX_, int BM_> struct opp__exact_cfg {
    static constexpr int DMAX = DMAX_;
    static constexpr int BM = BM_;
    static constexpr int TM = BM_ / 16;     /* rows per thread */
    static constexpr int VT = DMAX_ / 16;   /* V columns per thread */
    static constexpr int BJ = 2048 / DMAX_; /* keys per V slice */
    static constexpr int LDR = BM_ + 2;     /* pitch (doubles) of a score-tile key column */
    static constexpr int SLAB = 2048;       /* doubles per K or V slice */
    /* shared memory, in doubles: Q, two slices, scores [BN][LDR], row stats */
    static constexpr size_t Q_ELEMS = (size_t)DMAX_ * BM_;
    static constexpr size_t SC_ELEMS = (size_t)OPP__EXACT_BN * LDR;
    static constexpr size_t STAT_ELEMS = 5 * (size_t)BM_; /* m, S, 2 max partials, 1 chunk part */
    static constexpr size_t RAW_ELEMS = 1024; /* cp.async staging: 256 threads x 32 bytes */
    static constexpr size_t KEND_INTS = (size_t)BM_;
    static constexpr size_t SMEM_BYTES =
        (Q_ELEMS + 2 * SLAB + SC_ELEMS + STAT_ELEMS + RAW_ELEMS) * sizeof(double) +
        KEND_INTS * sizeof(int);
    static_assert(BM_ == 32 || BM_ == 64, "TM must be 2 or 4");
    static_assert(DMAX_ % 32 == 0 && DMAX_ <= 256, "VT must be even, BJ >= 8");
    static_assert(OPP__EXACT_CHUNK % BJ == 0, "a V slice never straddles two chunks");
    static_assert(SMEM_BYTES == OPP__EXACT_SMEM_BYTES(DMAX_, BM_),
                  "kernel_list.h's formula disagrees with the tile");
};

#endif /* OPP_KERNELS_TILE_CONFIG_H */
