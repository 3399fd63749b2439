/*
 * read_ceiling.h - the read-time ceiling of a split-KV decode launch: how
 * fast an H100 / H200 reads a workload's K and V (16-bit, [total_kv, Hkv,
 * D] each, packed) with no arithmetic, in three access patterns:
 *   flat     one grid-stride stream of 16-byte loads over both tensors;
 *   cpasync  the split kernel's pattern (kernels/flash_split.cuh): a block
 *            per item (split s, sequence b, kv head hk) of OPP__SPLIT_KEYS
 *            keys, tiles of ROWS keys by 16-byte cp.async into a ring of
 *            STAGES shared-memory stages, two barriers a tile;
 *   tma      the same items and tiles by TMA (cp.async.bulk.tensor, the
 *            Hopper kernel's 128-byte-swizzled 64-column boxes) into an
 *            mbarrier ring fed by one producer warp, four consumer warps;
 *            a block an item, or persistent: as many blocks as the SMs
 *            hold, claiming the items by an atomic counter (as the TMA
 *            split kernel of kernels/hopper_split.cuh does); with HEADS
 *            2, 4 or 8, an item and its boxes span that many adjacent kv
 *            heads (HEADS x D x 2 contiguous bytes a key row instead of
 *            D x 2: the read time of a split kernel whose items hold
 *            several heads).
 * Every pattern sums the 32-bit words it read (keys past a sequence's end
 * excluded) and the sum must equal the host's, computed from the fill
 * formula, before the pattern is timed. bench/README.md has the command;
 * bench/RESULTS.md the figures.
 */
#ifndef OPP_BENCH_READ_CEILING_H
#define OPP_BENCH_READ_CEILING_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __CUDACC__
#define RC_HOST_DEVICE __host__ __device__
#else
#define RC_HOST_DEVICE
#endif

/* The words of K and V: word i of tensor t (0: K, 1: V) holds
 * rc_word(i, t). A 32-bit integer mix (two multiply-xorshift rounds). */
static inline RC_HOST_DEVICE uint32_t rc_word(uint64_t i, uint32_t t) {
    uint32_t x = (uint32_t)i ^ (uint32_t)(i >> 32) * 0x9E3779B9u ^ (t + 1u) * 0x85EBCA6Bu;
    x ^= x >> 16;
    x *= 0x7FEB352Du;
    x ^= x >> 15;
    x *= 0x846CA68Bu;
    x ^= x >> 16;
    return x;
}

typedef enum rc_pattern { RC_FLAT = 0, RC_CPASYNC = 1, RC_TMA = 2 } rc_pattern_t;

/* One timed case: the pattern, and for cpasync / tma the tile's keys
 * (ROWS: 32, 64 or 128) and the ring's stages (2 .. 8); persistent: tma
 * on a grid of (blocks an SM x SMs) blocks claiming the items one at a
 * time, else a block per item; heads: tma's kv heads an item (0 or 1:
 * one; 2, 4 or 8, dividing the shape's hkv). */
typedef struct rc_case {
    rc_pattern_t pattern;
    int32_t rows, stages, persistent, heads;
} rc_case_t;

/* The shape read: batch sequences of lkv[b] keys, hkv kv heads, head size
 * d (a multiple of 64, at most 256), 16-bit elements. */
typedef struct rc_shape {
    int32_t batch, hkv, d;
    const int32_t *lkv;
} rc_shape_t;

/* What one case gave: the median of reps timed runs (ms), the words' sum
 * of its validation run, the blocks an SM it ran at. */
typedef struct rc_result {
    double ms;
    uint64_t sum;
    int32_t blocks_per_sm;
} rc_result_t;

/* Host side (bench/read_ceiling_host.c). */

/* Keys of all sequences; -1 when a length is negative. */
int64_t rc_total_keys(const rc_shape_t *s);

/* Split items: ceil(max lkv / split_keys) B Hkv (the split launch's grid). */
int64_t rc_items(const rc_shape_t *s, int32_t split_keys);

/* The sum over words 0 .. words-1 of tensor t of rc_word, modulo 2^64. */
uint64_t rc_expected_sum(uint64_t words, uint32_t t);

/* "flat", "cpasync r64 s2", "tma r64 s4 persistent", "tma r32 s3 h2":
 * into buf. */
void rc_case_name(const rc_case_t *c, char *buf, size_t size);

/* A --case spec into *c: "flat", or KIND:ROWS:STAGES[:persistent][:hN]
 * with KIND cpasync or tma, ROWS and STAGES decimal integers (no sign, no
 * space), e.g. "cpasync:64:2", "tma:64:4:persistent",
 * "tma:32:3:persistent:h2"; N 2 .. 8. 0, or -1 (c zeroed) for anything
 * else, trailing characters included. The values' ranges are
 * rc_case_check's. */
int rc_case_parse(const char *spec, rc_case_t *c);

/* The kv heads an item of the case reads: its heads for tma with heads
 * > 1, else 1. */
int32_t rc_case_heads(const rc_case_t *c);

/* Checks a case's fields; 0, or -1 with a message naming the field.
 * (heads dividing the shape's hkv: rc_case_fits.) */
int rc_case_check(const rc_case_t *c, char *err, size_t err_size);

/* rc_case_check, then whether the case fits the shape: its heads an item
 * (rc_case_heads) divide the shape's hkv; 0, or -1 with a message naming
 * the field (rc_gpu_run checks a case with it). */
int rc_case_fits(const rc_case_t *c, const rc_shape_t *s, char *err, size_t err_size);

/* Checks a split size for rc_gpu_set_split_keys (a multiple of 128, every
 * case's ROWS, and at least 128); 0, or -1 with a message naming it. */
int rc_split_keys_check(int32_t keys, char *err, size_t err_size);

/* GPU side (bench/read_ceiling_gpu.cu); every function returns 0, or -1
 * with a message in err. */

typedef struct rc_gpu rc_gpu_t;

/* Allocates and fills K and V for the shape on the current device (which
 * must be compute capability 9.0: TMA). */
int rc_gpu_open(const rc_shape_t *s, rc_gpu_t **out, char *err, size_t err_size);

/* One validation run (its sum into r->sum): 1 with a message when the sum
 * is not `expect` (nothing timed); else `warmup` untimed and `reps` timed
 * runs, their median into r->ms, and 0. */
int rc_gpu_run(rc_gpu_t *g, const rc_case_t *c, uint64_t expect, int32_t warmup, int32_t reps,
               rc_result_t *r, char *err, size_t err_size);

/* Items of `keys` keys (rc_split_keys_check) instead of OPP__SPLIT_KEYS:
 * the read time of a finer split, e.g. a split's keys spread over several
 * SMs. */
int rc_gpu_set_split_keys(rc_gpu_t *g, int32_t keys, char *err, size_t err_size);

/* Before each warm-up and timed run of rc_gpu_run, `bytes` of a buffer
 * of their own are written (untimed), so that L2 holds none of K and V and
 * a shape smaller than L2 is read from DRAM; 0: no such write. */
int rc_gpu_set_flush(rc_gpu_t *g, size_t bytes, char *err, size_t err_size);

/* The device's name (for the report). */
const char *rc_gpu_name(const rc_gpu_t *g);

void rc_gpu_close(rc_gpu_t *g);

#ifdef __cplusplus
}
#endif

#endif /* OPP_BENCH_READ_CEILING_H */
