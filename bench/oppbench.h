/*
 * oppbench.h - the pieces of bench/oppbench: one result row per (workload,
 * implementation), the GPU side (bench/gpu_common.c, bench/oppbench_gpu.c,
 * bench/sweep_gpu.c) and the output (bench/report.c). Options are
 * bench/options.h.
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

#include "bench/options.h"
#include "bench/workloads.h"

/* exit-on-error helpers (allowed in bench/ and tools/, STYLE.md §6). */
#define BENCH_DIE(...)                                     \
    do {                                                   \
        fprintf(stderr, "oppbench: fatal: ");              \
        fprintf(stderr, __VA_ARGS__);                      \
        fprintf(stderr, " (%s:%d)\n", __FILE__, __LINE__); \
        exit(2);                                           \
    } while (0)

typedef struct bench_result {
    char workload[OPP_WORKLOAD_NAME_BYTES];
    const char *impl; /* bench_impl_name() */
    int timed;        /* median_ms / min_ms are valid */
    int reps;         /* runs behind median/min (1: single run, see note) */
    double median_ms, min_ms;
    double flops;           /* useful FLOPs (DESIGN.md §7) */
    double tflops;          /* flops / median */
    int supported;          /* a kernel serves the workload (FAST: not always) */
    int validated;          /* see bench/README.md: what each row's check is */
    char kernel[64];        /* the kernel opp_attention_kernel_query() names ("" for cublas) */
    int has_err;            /* max_abs_err / rms_err are valid (FAST vs EXACT) */
    double max_abs_err;     /* max |fast - exact| */
    double rms_err;         /* sqrt(mean((fast - exact)^2)) */
    size_t workspace_bytes; /* of this implementation */
    char validation[200];   /* what validation found, one line */
    char note[120];         /* e.g. "single run: 75.2 s > --max-seconds-per-impl" */
    int has_bytes;          /* decode sweep: bytes, gbps, bw_gbps, bw_fraction are valid */
    double bytes;           /* opp_workload_min_bytes(): K + V read, Q read, out written */
    double gbps;            /* bytes / median (when timed) */
    double bw_gbps;         /* the copy bandwidth measured in the same process */
    double bw_fraction;     /* gbps / bw_gbps (when timed) */
} bench_result_t;

/* Zeroes r and sets the workload name, impl and FLOPs of w. */
void bench_result_init(bench_result_t *r, const opp_workload_t *w, int impl);

// --- GPU side

/* Prints device and library facts and creates the stream, events, L2 flush
 * buffer and the cuBLAS reference. Exits on error. */
void bench_gpu_init(const bench_opts_t *o);
void bench_gpu_shutdown(void);

/* Builds, validates and times workload w (number index in its file; the
 * --dump folder name); fills res[BENCH_IMPL_*]. Returns 0 when exact and
 * cublas validated and FAST (and TF32X3, when --impl names it) validated or
 * has no kernel, else 1. Exits on a CUDA error. */
int bench_gpu_run(const bench_opts_t *o, const opp_workload_t *w, int index,
                  bench_result_t res[BENCH_IMPLS]);

/* A sweep case: FAST alone - checked (NaN/inf everywhere; against EXACT on
 * the first sequence within --sweep-check-max-gflop), then timed. Fills
 * *res (impl "fast"). Returns 0 when validated or unsupported, else 1. */
int bench_gpu_sweep_run(const bench_opts_t *o, const opp_workload_t *w, bench_result_t *res);

/* Frees the sweep's cached inputs (bench_gpu_sweep_run keeps those of the
 * last shape); nothing when there are none. */
void bench_gpu_sweep_release(void);

/* The decode sweep (bench/decode_gpu.c). bench_gpu_decode_init() measures
 * the copy bandwidth (printed, with a JSON line {"bandwidth": ...}) and
 * fills the inputs the selected cases of set share; bench_gpu_decode_run()
 * checks one case (NaN/inf everywhere; --decode-check-seqs sequences and
 * their LSE against EXACT), times it and fills *res (impl "fast", with
 * bytes, GB/s and the fraction of the copy bandwidth). Returns 0 when
 * validated or unsupported, else 1. bench_gpu_decode_release() frees the
 * inputs (nothing when there are none). Exit on a CUDA error. */
void bench_gpu_decode_init(const bench_opts_t *o, const opp_workload_set_t *set,
                           const int *selected);
int bench_gpu_decode_run(const bench_opts_t *o, const opp_workload_t *w, bench_result_t *res);
void bench_gpu_decode_release(void);

// --- output (bench/report.c)

/* One JSON line for r (format in bench/README.md). */
void bench_json_line(FILE *f, const bench_result_t *r);

/* The table of rows: workload | impl | ms (median) | ms (min) | TFLOP/s | validation. */
void bench_print_table(const bench_result_t *rows, int n);

/* The decode sweep's table: case | kernel | ms (median) | ms (min) | GB/s |
 * of copy BW | validation. */
void bench_print_decode_table(const bench_result_t *rows, int n);

/* --list: the selected workloads with tokens, attended pairs and GFLOP; with
 * json != NULL also one JSON line each (bench/fa2_sweep.py --list prints
 * the same fields), with "bytes" (opp_workload_min_bytes) when with_bytes. */
void bench_list_workloads(const opp_workload_set_t *set, const int *selected, int with_bytes,
                          FILE *json);

/* --decode-sweep --list: the skipped combinations ("skipped: NAME (K + V
 * 32.0 GiB > the 16 GiB cap)"); with json != NULL also a JSON line each,
 * {"workload": NAME, "skipped": true, "kv_bytes": N}. */
void bench_list_decode_skipped(FILE *json);

#endif /* OPP_BENCH_OPPBENCH_H */
