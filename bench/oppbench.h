/*
 * oppbench.h - the pieces of bench/oppbench: options, one result row per
 * (workload, implementation), and the GPU side (bench/oppbench_gpu.c).
 *
 *   bazel build -c opt //bench:oppbench && bazel-bin/bench/oppbench --help
 *   on the GPU machine: see bench/README.md
 */
#ifndef OPP_BENCH_OPPBENCH_H
#define OPP_BENCH_OPPBENCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench/workloads.h"

/* exit-on-error helpers (allowed in bench/ and tools/, STYLE.md §6). */
#define BENCH_DIE(...)                                     \
    do {                                                   \
        fprintf(stderr, "oppbench: fatal: ");              \
        fprintf(stderr, __VA_ARGS__);                      \
        fprintf(stderr, " (%s:%d)\n", __FILE__, __LINE__); \
        exit(2);                                           \
    } while (0)

typedef struct bench_opts {
    const char *workloads_path;
    const char *only;         /* comma-separated names, NULL: all */
    int reps, warmup;         /* timed runs, untimed warm-up runs */
    const char *json_path;    /* also write JSON lines here (NULL: no) */
    int impl_exact;           /* time opp_packed_attention_fwd */
    int impl_cublas;          /* time opp_ref_gpu_attention24 (padded, cuBLAS) */
    double max_seconds;       /* a run longer than this: no repetitions */
    uint64_t seed;            /* values of workload i: seed ^ hash(name) */
    double cpu_ref_max_gflop; /* also compare with the CPU reference up to this size */
    size_t flush_bytes;       /* L2 flush buffer (0: max(256 MiB, 4 x L2)) */
    int list;                 /* only list the workloads (no GPU) */
} bench_opts_t;

enum { BENCH_IMPL_EXACT = 0, BENCH_IMPL_CUBLAS = 1 };

typedef struct bench_result {
    char workload[OPP_WORKLOAD_NAME_BYTES];
    const char *impl; /* "exact" or "cublas" */
    int timed;        /* median_ms / min_ms are valid */
    int reps;         /* runs behind median/min (1: single run, see note) */
    double median_ms, min_ms;
    double flops;           /* useful FLOPs (DESIGN.md §7) */
    double tflops;          /* flops / median */
    int validated;          /* exact == cuBLAS reference (and CPU ref if run) */
    size_t workspace_bytes; /* of this implementation */
    char validation[200];   /* what validation found, one line */
    char note[120];         /* e.g. "single run: 75.2 s > --max-seconds-per-impl" */
} bench_result_t;

/* Prints device and library facts and creates the stream, events, L2 flush
 * buffer and the cuBLAS reference. Exits on error. */
void bench_gpu_init(const bench_opts_t *o);
void bench_gpu_shutdown(void);

/* Builds, validates and times workload w; fills res[0] (exact) and res[1]
 * (cublas). Returns 0 when validated, 1 when validation failed. Exits on a
 * CUDA error. */
int bench_gpu_run(const bench_opts_t *o, const opp_workload_t *w, bench_result_t res[2]);

#endif /* OPP_BENCH_OPPBENCH_H */
