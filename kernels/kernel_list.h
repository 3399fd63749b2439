/*
 * kernel_list.h - THE list of attention kernels: one line per kernel
 * instance. Plain C (no CUDA): it generates both the rows of the host-side
 * dispatch table (lib/dispatch.c, linked by validation-only users without
 * cudart) and, in kernels/, the template instantiations with their launch
 * functions (one opp__launch_<name> per line). Add a kernel here and
 * nowhere else.
 *
 *   X(name, ALGO, DTYPE, DMAX, ALIGN, SM, BM, BN, THREADS, SMEM_BYTES)
 *     name     the kernel's readable name; its launcher is opp__launch_<name>
 *     ALGO     EXACT, FAST or TF32X3 (OPP_ALGO_*)
 *     DTYPE    F32, F16 or BF16 (OPP_DTYPE_*): Q, K, V and out
 *     DMAX     serves head sizes D, Dv <= DMAX (rows of one family are listed
 *              with DMAX ascending: the first row that fits wins)
 *     ALIGN    D, Dv and every row/head/batch stride must be multiples of
 *              ALIGN elements (1: any)
 *     SM       80: any GPU of compute capability >= 8.0 whose shared memory
 *              holds the tile; 90: compute capability 9.0 only (sm_90a
 *              code: wgmma, TMA), and only for G <= BM (lib/dispatch.c);
 *              elsewhere the next row of the family serves
 *     BM, BN   query rows (token x head-in-group) and keys per tile (the
 *              exact kernel: BN 64 or 128, whole summation chunks)
 *     THREADS  threads per block
 *     SMEM     dynamic shared memory in bytes; a row is used on a GPU only
 *              when it fits (opp__arch_smem_limit), so the first row that
 *              fits the device is its tile shape. The shape therefore depends
 *              only on (algo, dtype, D, Dv, G, architecture), never on a batch.
 * Every row needs compute capability >= 8.0 (SM 80 rows: sm_80 SASS; sm_86,
 * sm_89, sm_90 SASS and compute_80 PTX are built too; SM 90 rows: sm_90a
 * SASS alone, kernels/BUILD).
 */
#ifndef OPP_KERNELS_KERNEL_LIST_H
#define OPP_KERNELS_KERNEL_LIST_H

/* Shared memory of the exact kernel (doubles: Q [DMAX][BM], two K/V slices of
 * 2048, the score tile [BN][BM + 2], (3 + BN / 64) * BM row statistics, 1024
 * staging; then BM ints). kernels/tile_config.h asserts its template agrees. */
#define OPP__EXACT_SMEM_BYTES(DMAX, BM, BN)                                                       \
    ((size_t)8 * ((DMAX) * (BM) + 2 * 2048 + (BN) * ((BM) + 2) + (3 + (BN) / 64) * (BM) + 1024) + \
     (size_t)4 * (BM))

/* The exact kernel (kernels/exact_attention.cu): double accumulation in the
 * fixed order of numerics/exact_order.h, bit-identical to the CPU reference
 * whatever the tile. Per head-size class, the first row that fits a GPU's
 * shared memory (lib/dispatch.c) is its tile:
 *   D, Dv <= 128  BM 64, BN 128: 176896 B (sm_90, 227 KB)
 *                 BM 32, BN 128: 109952 B (sm_80 / sm_87, 163 KB)
 *                 BM 32, BN  64:  92288 B (sm_86 / sm_89 and newer, 99 KB)
 *   D, Dv <= 256  BM 32, BN 128: 142720 B (sm_80, sm_87, sm_90). Not on 99 KB
 *                 GPUs: Q alone is 64 KB as doubles, and the smallest tile of
 *                 this design (BM 32, BN 64) needs 125056 B. */
#define OPP__EXACT_KERNELS(X)                                          \
    X(exact_f32_d128_bm64, EXACT, F32, 128, 1, 80, 64, 128, 256,       \
      OPP__EXACT_SMEM_BYTES(128, 64, 128))                             \
    X(exact_f16_d128_bm64, EXACT, F16, 128, 1, 80, 64, 128, 256,       \
      OPP__EXACT_SMEM_BYTES(128, 64, 128))                             \
    X(exact_bf16_d128_bm64, EXACT, BF16, 128, 1, 80, 64, 128, 256,     \
      OPP__EXACT_SMEM_BYTES(128, 64, 128))                             \
    X(exact_f32_d128_bm32, EXACT, F32, 128, 1, 80, 32, 128, 256,       \
      OPP__EXACT_SMEM_BYTES(128, 32, 128))                             \
    X(exact_f16_d128_bm32, EXACT, F16, 128, 1, 80, 32, 128, 256,       \
      OPP__EXACT_SMEM_BYTES(128, 32, 128))                             \
    X(exact_bf16_d128_bm32, EXACT, BF16, 128, 1, 80, 32, 128, 256,     \
      OPP__EXACT_SMEM_BYTES(128, 32, 128))                             \
    X(exact_f32_d128_bm32_bn64, EXACT, F32, 128, 1, 80, 32, 64, 256,   \
      OPP__EXACT_SMEM_BYTES(128, 32, 64))                              \
    X(exact_f16_d128_bm32_bn64, EXACT, F16, 128, 1, 80, 32, 64, 256,   \
      OPP__EXACT_SMEM_BYTES(128, 32, 64))                              \
    X(exact_bf16_d128_bm32_bn64, EXACT, BF16, 128, 1, 80, 32, 64, 256, \
      OPP__EXACT_SMEM_BYTES(128, 32, 64))                              \
    X(exact_f32_d256_bm32, EXACT, F32, 256, 1, 80, 32, 128, 256,       \
      OPP__EXACT_SMEM_BYTES(256, 32, 128))                             \
    X(exact_f16_d256_bm32, EXACT, F16, 256, 1, 80, 32, 128, 256,       \
      OPP__EXACT_SMEM_BYTES(256, 32, 128))                             \
    X(exact_bf16_d256_bm32, EXACT, BF16, 256, 1, 80, 32, 128, 256,     \
      OPP__EXACT_SMEM_BYTES(256, 32, 128))

/* Shared memory of the flash kernel: 16-bit Q [BM][DB+8], K and V
 * [BN][DB+8] (kernels/flash_attention.cuh asserts its template agrees). */
#define OPP__FLASH_SMEM_BYTES(DB, BM, BN) (((size_t)(BM) + 2 * (size_t)(BN)) * ((DB) + 8) * 2)

/* The FAST flash kernel (kernels/flash_attention.cuh, mma.sync, sm_80 on),
 * one translation unit per head-size bucket (kernels/flash_d<DB>.cu). D and
 * Dv must be multiples of 8 (16-byte loads) and at most DB; the first
 * bucket that fits both is used. BM = 128 rows (4 warps x 2 m16 tiles up
 * to DB 128, 8 warps x 1 above); BN = 64 keys (32 for the 99 KB DB 256 tile),
 * 128 at DB 64 (as FlashAttention-2's D 64 tile: on an H200 encoder_mha_f16
 * 2 % and sweep_d64_noncausal_L1024 7 % faster than BN 64, bench/RESULTS.md,
 * fifteenth session). The split launch's tile keeps BN 64 at every DB. The
 * _bm64 tiles are the 99 KB GPUs' (sm_86, sm_89) for DB 192 and 256. On a
 * GPU whose SM holds two BM 64, BN 64 blocks of DB 256 (227 KB: H100,
 * H200) the DB 256 BM 128 line's launcher runs that four-warp tile instead
 * (FlashAttention-2's D 256 tile there; same BN, so the same bits:
 * softcap_hd256_bf16 12 % faster on an H200, bench/RESULTS.md, sixteenth
 * session); the line's fields stay the BM 128 tile's, which the row's
 * shared-memory test uses. Likewise from DB 128 down, where an SM holds two
 * blocks with K and V in a ring of two slots each (H100, H200), the line's
 * launcher runs that tile (same BM, BN: the same bits; the seventeenth
 * session); the line's SMEM is the one-slot tile's, which any GPU of
 * compute capability 8.0 or more holds. */
#define OPP__FLASH_D32_KERNELS(X)                                                            \
    X(flash_f16_d32, FAST, F16, 32, 8, 80, 128, 64, 128, OPP__FLASH_SMEM_BYTES(32, 128, 64)) \
    X(flash_bf16_d32, FAST, BF16, 32, 8, 80, 128, 64, 128, OPP__FLASH_SMEM_BYTES(32, 128, 64))
#define OPP__FLASH_D64_KERNELS(X)                                                              \
    X(flash_f16_d64, FAST, F16, 64, 8, 80, 128, 128, 128, OPP__FLASH_SMEM_BYTES(64, 128, 128)) \
    X(flash_bf16_d64, FAST, BF16, 64, 8, 80, 128, 128, 128, OPP__FLASH_SMEM_BYTES(64, 128, 128))
#define OPP__FLASH_D96_KERNELS(X)                                                            \
    X(flash_f16_d96, FAST, F16, 96, 8, 80, 128, 64, 128, OPP__FLASH_SMEM_BYTES(96, 128, 64)) \
    X(flash_bf16_d96, FAST, BF16, 96, 8, 80, 128, 64, 128, OPP__FLASH_SMEM_BYTES(96, 128, 64))
#define OPP__FLASH_D128_KERNELS(X)                                                              \
    X(flash_f16_d128, FAST, F16, 128, 8, 80, 128, 64, 128, OPP__FLASH_SMEM_BYTES(128, 128, 64)) \
    X(flash_bf16_d128, FAST, BF16, 128, 8, 80, 128, 64, 128, OPP__FLASH_SMEM_BYTES(128, 128, 64))
#define OPP__FLASH_D192_KERNELS(X)                                                                 \
    X(flash_f16_d192, FAST, F16, 192, 8, 80, 128, 64, 256, OPP__FLASH_SMEM_BYTES(192, 128, 64))    \
    X(flash_bf16_d192, FAST, BF16, 192, 8, 80, 128, 64, 256, OPP__FLASH_SMEM_BYTES(192, 128, 64))  \
    X(flash_f16_d192_bm64, FAST, F16, 192, 8, 80, 64, 64, 128, OPP__FLASH_SMEM_BYTES(192, 64, 64)) \
    X(flash_bf16_d192_bm64, FAST, BF16, 192, 8, 80, 64, 64, 128, OPP__FLASH_SMEM_BYTES(192, 64, 64))
#define OPP__FLASH_D256_KERNELS(X)                                                                 \
    X(flash_f16_d256, FAST, F16, 256, 8, 80, 128, 64, 256, OPP__FLASH_SMEM_BYTES(256, 128, 64))    \
    X(flash_bf16_d256, FAST, BF16, 256, 8, 80, 128, 64, 256, OPP__FLASH_SMEM_BYTES(256, 128, 64))  \
    X(flash_f16_d256_bm64, FAST, F16, 256, 8, 80, 64, 32, 128, OPP__FLASH_SMEM_BYTES(256, 64, 32)) \
    X(flash_bf16_d256_bm64, FAST, BF16, 256, 8, 80, 64, 32, 128, OPP__FLASH_SMEM_BYTES(256, 64, 32))
/* Stages of the Hopper kernel's K and V rings: 4 at D <= 64 (short key
 * blocks: more loads in flight), else 2 (what fits); 2 in a tile of one
 * consumer (BM 64: two blocks an SM, whose shared memory must fit twice). */
#ifndef OPP__HOPPER_STAGES_D64
#define OPP__HOPPER_STAGES_D64 4
#endif
#define OPP__HOPPER_STAGES(DB, BM) ((DB) <= 64 && (BM) > 64 ? OPP__HOPPER_STAGES_D64 : 2)
/* The D 64 lines' tile rows: 128 (two consumer warpgroups, one block an
 * SM) or 64 (one consumer warpgroup, two blocks an SM, so that one block's
 * per-item waits - Q, the first Q K^T, the epilogue - run under the other
 * block's products; kernels/hopper_config.cuh). A row's bits do not depend
 * on it. With 64, dispatch takes the lines for G <= 64 only. Measured
 * (H100, bench/RESULTS.md, thirty-sixth session): 64 is 3.1 % faster on
 * encoder_mha_f16 but 2.9 % slower on sweep_d64_causal_L1024 (L512
 * non-causal equal, L4096 causal 0.5 % faster), the same bits: not yet
 * the default. */
#ifndef OPP__HOPPER_D64_BM
#define OPP__HOPPER_D64_BM 128
#endif
/* Batches of up to this many sequences run the Hopper kernel's (sequence,
 * kv head) pairs longest sequence first (kernels/hopper_items.cuh,
 * hop_sort_sequences); larger ones in batch order. */
#ifndef OPP__HOPPER_SORT_MAX
#define OPP__HOPPER_SORT_MAX 512
#endif
/* ... and only launches of at most this many items an SM, whose lengths
 * differ (kernels/hopper_sort_rule.h): with more, the tail
 * is a small part of the launch and the sort's few microseconds at the
 * start cost more than it saves. */
#ifndef OPP__HOPPER_SORT_ITEMS_PER_SM
#define OPP__HOPPER_SORT_ITEMS_PER_SM 16
#endif
/* Which items of the Hopper kernel at D 128 run a last key block whose
 * keys the tile's rows see number at most 64 at half width
 * (kernels/hopper_config.cuh, hop_cfg::TRIM): bit 0 those of one key
 * block, bit 1 those of more. */
#ifndef OPP__HOPPER_TRIM_WHERE
#define OPP__HOPPER_TRIM_WHERE 3
#endif
/* Shared memory of the Hopper kernel: 1024 bytes of alignment slack, Q
 * [BM][DB], OPP__HOPPER_STAGES(DB, BM) stages of K and V [BN][DB], at DB <= 128
 * the O tile [BM][DB] the TMA stores read (16-bit, 128-byte-swizzled panels
 * of 64 columns), 256 bytes of mbarriers and item slots, the sequence order
 * (uint16 [OPP__HOPPER_SORT_MAX]), 256 bytes of claim queue (kernels/hopper_config.cuh asserts its
 * template agrees). */
#define OPP__HOPPER_SMEM_BYTES(DB, BM, BN)                                                    \
    ((size_t)1536 + (size_t)2 * OPP__HOPPER_SORT_MAX +                                        \
     ((size_t)(BM) * ((DB) <= 128 ? 2 : 1) + 2 * OPP__HOPPER_STAGES(DB, BM) * (size_t)(BN)) * \
         (DB)*2)

/* A TMA tensor map takes strides below 2^40 bytes: larger strides of q, k
 * or v send a problem from the SM 90 rows to a flash row (lib/dispatch.c);
 * an out the map cannot describe is stored from registers
 * (kernels/hopper_launch.cuh). */
#define OPP__TMA_STRIDE_BYTES_LIMIT ((int64_t)1 << 40)

/* The FAST Hopper kernel (kernels/hopper_attention.cuh: TMA loads, wgmma,
 * one producer warp and two consumer warpgroups of 64 rows each), compute
 * capability 9.0 only; listed first, so on an H100 / H200 it serves D, Dv
 * up to its DMAX and the flash rows below serve the rest (and every other
 * GPU). One translation unit per bucket (kernels/hopper_d<DB>.cu).
 * A D64 line's fields are its OPP__HOPPER_D64_BM configuration's (G <= BM); its
 * launcher also runs the wide one, OPP__HOPPER_WIDE_D64_* (three consumer
 * warpgroups: BM 192, BN 96, 512 threads, less shared memory), on the
 * sequences hop_takes_wide() gives it (kernels/hopper_items.cuh). */
#define OPP__HOPPER_D64_KERNELS(X)                                                              \
    X(hopper_f16_d64, FAST, F16, 64, 8, 90, OPP__HOPPER_D64_BM, 128,                            \
      128 * (OPP__HOPPER_D64_BM / 64 + 1), OPP__HOPPER_SMEM_BYTES(64, OPP__HOPPER_D64_BM, 128)) \
    X(hopper_bf16_d64, FAST, BF16, 64, 8, 90, OPP__HOPPER_D64_BM, 128,                          \
      128 * (OPP__HOPPER_D64_BM / 64 + 1), OPP__HOPPER_SMEM_BYTES(64, OPP__HOPPER_D64_BM, 128))
/* the D64 lines' wide configuration: BM (three consumers), BN, and the
 * sequences it runs: those with at least MIN_KEYS keys (hop_takes_wide) */
#define OPP__HOPPER_WIDE_D64_BM       192
#define OPP__HOPPER_WIDE_D64_BN       96
#define OPP__HOPPER_WIDE_D64_MIN_KEYS 4096
#define OPP__HOPPER_D128_KERNELS(X)                            \
    X(hopper_f16_d128, FAST, F16, 128, 8, 90, 128, 128, 384,   \
      OPP__HOPPER_SMEM_BYTES(128, 128, 128))                   \
    X(hopper_bf16_d128, FAST, BF16, 128, 8, 90, 128, 128, 384, \
      OPP__HOPPER_SMEM_BYTES(128, 128, 128))
#define OPP__HOPPER_D256_KERNELS(X)                                                               \
    X(hopper_f16_d256, FAST, F16, 256, 8, 90, 128, 64, 384, OPP__HOPPER_SMEM_BYTES(256, 128, 64)) \
    X(hopper_bf16_d256, FAST, BF16, 256, 8, 90, 128, 64, 384, OPP__HOPPER_SMEM_BYTES(256, 128, 64))

/* Query rows of the FAST f32 kernel's tile (kernels/ffma_attention.cuh) at
 * DB 64, a compile-time switch for A/B builds: 64 (8 rows a thread, three
 * blocks an SM) or 32 (4 rows a thread, four blocks an SM: the longest
 * tiles of a causal batch, its critical path, take a quarter of an SM
 * instead of a third); a row's arithmetic, so its bits, are the same. 32
 * made prefill_f32 8 % slower on an H100 (bench/RESULTS.md, twenty-third
 * session): the smaller register tile costs more than the path saves. */
#ifndef OPP__FFMA_BM_D64
#define OPP__FFMA_BM_D64 64
#endif
/* Threads of a tile row at DB 64, a compile-time switch for A/B builds: 16
 * (a half warp, 4 keys of S and 4 columns of O a thread) or 8 (8 keys and 8
 * columns a thread, so a shared load feeds twice the FFMA: 16 row groups of
 * 8 rows, BM 128, two blocks an SM with 102 KB of shared memory each - more
 * than sm_86 / sm_89 allow a block, so an H100 / H200 / A100 A/B only). A
 * row's arithmetic is the same, l's sums included (kernels/
 * ffma_attention.cuh), so the same bits. 8 measured on an H100 (bench/
 * RESULTS.md, thirty-third session): the same bits, ffma_gpu_test and
 * fast_gpu_test passed, prefill_f32 23 % slower (0.36 ms against 0.29):
 * 16 stays. */
#ifndef OPP__FFMA_LANES_D64
#define OPP__FFMA_LANES_D64 16
#endif
#define OPP__FFMA_LANES(DB) ((DB) <= 64 ? OPP__FFMA_LANES_D64 : 16)
#define OPP__FFMA_BM(DB)    ((DB) <= 64 ? (OPP__FFMA_LANES_D64 == 8 ? 128 : OPP__FFMA_BM_D64) : 64)
/* Its shared memory: Q [BM][DB+4], K and V [64][DB+4], P [BM][68], float. */
#define OPP__FFMA_SMEM_BYTES(DB) \
    (((size_t)(2 * 64 + OPP__FFMA_BM(DB)) * ((DB) + 4) + (size_t)OPP__FFMA_BM(DB) * 68) * 4)
/* Its threads: OPP__FFMA_LANES(DB) per tile row group; 8 rows a thread at
 * DB 64 (4 with BM 32), 4 above. */
#define OPP__FFMA_THREADS(DB) ((DB) <= 64 ? 16 * 8 : 256)

/* The FAST kernel for f32 storage (kernels/ffma_attention.cuh: CUDA cores,
 * fp32 throughout), sm_80 on; D, Dv and strides multiples of 4 (16-byte
 * loads and stores). One translation unit per bucket (ffma_d<DB>.cu). The
 * DB 256 tile needs 212 KB of shared memory: 9.0 only (else EXACT). */
#define OPP__FFMA_D64_KERNELS(X) \
    X(ffma_f32_d64, FAST, F32, 64, 4, 80, OPP__FFMA_BM(64), 64, 128, OPP__FFMA_SMEM_BYTES(64))
#define OPP__FFMA_D128_KERNELS(X) \
    X(ffma_f32_d128, FAST, F32, 128, 4, 80, 64, 64, 256, OPP__FFMA_SMEM_BYTES(128))
#define OPP__FFMA_D256_KERNELS(X) \
    X(ffma_f32_d256, FAST, F32, 256, 4, 80, 64, 64, 256, OPP__FFMA_SMEM_BYTES(256))

/* Shared memory of the opt-in 3xTF32 f32 kernel (kernels/tf32x3_attention.cuh,
 * wgmma on sm_90a): four 128-byte-swizzled fp32 panels pairs of [64][DB]
 * (K hi in place of the loaded K, K lo, V hi and lo transposed), the
 * Q and V staging tiles [64][DB+4], and 1024 bytes to align the panels. */
#define OPP__TF32X3_SMEM_BYTES(DB) ((size_t)4 * (4 * 64 * (DB) + 2 * 64 * ((DB) + 4)) + 1024)

/* The opt-in 3xTF32 kernel for f32 storage (OPP_ALGO_TF32X3): each operand
 * split into tf32 hi + lo, three tensor-core products per matrix product
 * (lo x hi, hi x lo, hi x hi) with fp32 accumulation; compute capability
 * 9.0 only (sm_90a wgmma); D, Dv <= 64, multiples of 4. AUTO never takes it. */
/* OPP__TF32X3_WS 1 (default): the warp-specialised kernel
 * (kernels/tf32x3_ws.cuh: a producer warpgroup splits K and V for NC
 * consumer warpgroups of 64 rows each, OPP__TF32X3_WS_NC below; BM 192, 512
 * threads at NC 3; the kernel at NC 2 was 1.11x the one-warpgroup kernel's
 * speed on an H100, bench/RESULTS.md twenty-sixth session); 0: one
 * warpgroup a block (kernels/tf32x3_attention.cuh; BM 64, 128 threads), an
 * A/B build. Its shared memory, in [64][DB] fp32 tiles: the split K (two a
 * stage), V (two a stage), Q (two a consumer), two landing stages of K and
 * V (four); 64 bytes of mbarriers, 1024 to align. */
#ifndef OPP__TF32X3_WS
#define OPP__TF32X3_WS 1
#endif
/* OPP__TF32X3_WS_KSTAGES: 1 or 2 split K stages */
#ifndef OPP__TF32X3_WS_KSTAGES
#define OPP__TF32X3_WS_KSTAGES 1
#endif
/* OPP__TF32X3_WS_OVERLAP 1: each consumer's P V in flight under its own
 * softmax (kernels/tf32x3_ws_blocks.cuh), with two split V stages; an A/B
 * build (5-6 % slower on an H100, bench/RESULTS.md twenty-seventh session) */
#ifndef OPP__TF32X3_WS_OVERLAP
#define OPP__TF32X3_WS_OVERLAP 0
#endif
#define OPP__TF32X3_WS_VSTAGES (OPP__TF32X3_WS_OVERLAP ? 2 : 1)
/* OPP__TF32X3_WS_NC: consumer warpgroups a block (3, the default: 1.04x
 * two's speed on an H100, bench/RESULTS.md twenty-seventh session; or 2),
 * 64 query rows each: BM 64 NC, 128 (NC + 1) threads */
#ifndef OPP__TF32X3_WS_NC
#define OPP__TF32X3_WS_NC 3
#endif
#define OPP__TF32X3_WS_SMEM_BYTES(DB)                                                            \
    ((size_t)4 * 64 * (DB) *                                                                     \
         (2 * OPP__TF32X3_WS_KSTAGES + 2 * OPP__TF32X3_WS_VSTAGES + 2 * OPP__TF32X3_WS_NC + 4) + \
     64 + 1024)
#if OPP__TF32X3_WS
#define OPP__TF32X3_D64_KERNELS(X)                                        \
    X(tf32x3_f32_d64, TF32X3, F32, 64, 4, 90, 64 * OPP__TF32X3_WS_NC, 64, \
      128 * (OPP__TF32X3_WS_NC + 1), OPP__TF32X3_WS_SMEM_BYTES(64))
#else
#define OPP__TF32X3_D64_KERNELS(X) \
    X(tf32x3_f32_d64, TF32X3, F32, 64, 4, 90, 64, 64, 128, OPP__TF32X3_SMEM_BYTES(64))
#endif

/* one bucket a line (clang-format's layout of this macro is not stable) */
// clang-format off
#define OPP__FAST_KERNELS(X)   \
    OPP__HOPPER_D64_KERNELS(X)  \
    OPP__HOPPER_D128_KERNELS(X) \
    OPP__HOPPER_D256_KERNELS(X) \
    OPP__FLASH_D32_KERNELS(X)   \
    OPP__FLASH_D64_KERNELS(X)   \
    OPP__FLASH_D96_KERNELS(X)   \
    OPP__FLASH_D128_KERNELS(X)  \
    OPP__FLASH_D192_KERNELS(X)  \
    OPP__FLASH_D256_KERNELS(X)  \
    OPP__FFMA_D64_KERNELS(X)    \
    OPP__FFMA_D128_KERNELS(X)   \
    OPP__FFMA_D256_KERNELS(X)
// clang-format on

/* 1 (default): on SM 90, from DB 128, the Hopper kernel's launch is the
 * guard's programmatic dependent (PDL), as the portable kernel's is, when
 * it is a decode batch's probe launch or has no split launch after it: its
 * blocks start while the guard runs (the GPDL instance sets up its shared
 * memory, barriers and sequence order meanwhile, reading only the caller's
 * lengths; the probe looks for tokens), wait (griddepcontrol.wait) for the
 * guard's end and record, and only then let the split launch after them
 * start (kernels/hopper_attention.cuh). A launch with a split launch after
 * it keeps the ordinary launch and its machine code. 0: every launch
 * ordinary, the record read first (the machine code before the switch).
 * The same bits. Measured on an H100 (bench/RESULTS.md, forty-first
 * session) with every first launch the guard's dependent: time down
 * 10.3 % on decode_g4_b1_kv1024, 10.7 % on decode_g4_b8_kv4096, 2.3 % on
 * decode_gqa_bf16, 2.9 % on decode_g1_b1_kv1024, 0.8-1.6 % on
 * short_many_causal_bf16, 0.9 % on softcap_hd256_bf16, but up 0.5-0.7 %
 * on prefill_gqa_causal_bf16 (whose split rows follow): hence the rule
 * above. Not at DB 64 (C7511). */
#ifndef OPP__HOPPER_GUARD_PDL
#define OPP__HOPPER_GUARD_PDL 1
#endif

/* split-KV's switches (their own file: the list stays one concept) */
#include "kernels/split_config.h"

/* The whole list, in dispatch order. */
#define OPP__KERNEL_LIST(X) OPP__EXACT_KERNELS(X) OPP__FAST_KERNELS(X) OPP__TF32X3_D64_KERNELS(X)

#endif /* OPP_KERNELS_KERNEL_LIST_H */
