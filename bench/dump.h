/*
 * dump.h - oppbench --dump DIR: one workload's inputs and outputs as raw
 * files, for bench/fa2_accuracy.py to run FlashAttention-2 on the very same
 * tensors and compare its error with ours. Host code, no CUDA; CPU-tested
 * by tests/bench_host_test.c.
 *
 * DIR/<workload>/ holds (little-endian, dense, packed; dtype = the
 * workload's: 2 bytes for f16/bf16, 4 for f32):
 *   q.bin              [total_q, Hq, D]     dtype
 *   k.bin              [total_kv, Hkv, D]   dtype
 *   v.bin              [total_kv, Hkv, Dv]  dtype
 *   cu_seqlens_q.bin   [B + 1]              int32
 *   cu_seqlens_kv.bin  [B + 1]              int32
 *   out_exact.bin      [total_q, Hq, Dv]    dtype (OPP_ALGO_EXACT), if it ran
 *   out_fast.bin       [total_q, Hq, Dv]    dtype (OPP_ALGO_FAST), if it ran
 *   out_tf32x3.bin     [total_q, Hq, Dv]    dtype (OPP_ALGO_TF32X3: f32 only), if
 *                                           it ran (opt-in: oppbench --impl tf32x3)
 *   meta.json          one object: "workload", "index", "dtype", "batch",
 *                      "heads", "kv_heads", "head_size", "v_head_size",
 *                      "total_q", "total_kv", "max_seqlen_q",
 *                      "max_seqlen_kv", "causal", "softcap" (0: off),
 *                      "scale" (the one used: 1/sqrt(D) by default),
 *                      "exact_validated", "fast_kernel" (null: no FAST
 *                      kernel serves), "fast_validation", "files" (each
 *                      file's name -> {"shape": [...], "dtype": ...}).
 * meta.json is written last, so a folder without it is incomplete. With
 * outputs_only (--dump-outputs) q.bin, k.bin and v.bin are neither written
 * nor listed (and an earlier dump's are removed).
 */
#ifndef OPP_BENCH_DUMP_H
#define OPP_BENCH_DUMP_H

#include <stddef.h>

#include "harness/logical_batch.h"

typedef struct bench_dump {
    const char *dir;             /* the --dump folder (created if missing) */
    const char *workload;        /* the sub-folder's name */
    int index;                   /* position of the workload in its file */
    const opp_lb_t *lb;          /* q, k, v, cu_seqlens, shape, attributes */
    const void *out_exact;       /* host [total_q, Hq, Dv], NULL: not run */
    const void *out_fast;        /* host [total_q, Hq, Dv], NULL: not run */
    const void *out_tf32x3;      /* host [total_q, Hq, Dv], NULL: not run */
    int exact_validated;         /* exact == cuBLAS reference */
    const char *fast_kernel;     /* NULL: no FAST kernel serves */
    const char *fast_validation; /* oppbench's validation text for FAST */
    int outputs_only;            /* 1: no q.bin, k.bin, v.bin (oppbench --dump-outputs) */
} bench_dump_t;

/*! bench_dump_write() :
 * Writes d's files into d->dir/d->workload/ (both folders created when
 * missing; existing files replaced).
 * @return : 0, or -1 with "PATH: why" in err. */
int bench_dump_write(const bench_dump_t *d, char *err, size_t err_size);

#endif /* OPP_BENCH_DUMP_H */
