/*
 * options.h - oppbench's command line: the options, their defaults and a
 * strict parser that never exits (host code, no CUDA; CPU-tested by
 * tests/bench_options_test.c). The usage text is bench_usage(); the
 * meaning of each option is bench/README.md.
 */
#ifndef OPP_BENCH_OPTIONS_H
#define OPP_BENCH_OPTIONS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The implementations oppbench can time, in the order of its rows: EXACT,
 * FAST, the cuBLAS reference, and the opt-in TF32X3 kernel (OPP_ALGO_TF32X3:
 * f32 on compute capability 9.0; only when --impl names it). */
enum {
    BENCH_IMPL_EXACT = 0,
    BENCH_IMPL_FAST = 1,
    BENCH_IMPL_CUBLAS = 2,
    BENCH_IMPL_TF32X3 = 3,
    BENCH_IMPLS = 4
};

/* "exact", "fast", "cublas", "tf32x3" for 0..3, "?" otherwise. */
const char *bench_impl_name(int impl);

typedef struct bench_opts {
    const char *workloads_path;
    const char *only;             /* comma-separated names, NULL: all */
    int reps, warmup;             /* timed runs, untimed warm-up runs */
    const char *json_path;        /* also write JSON lines here (NULL: no) */
    int impl[BENCH_IMPLS];        /* 1: time this implementation (validation runs anyway) */
    double max_seconds;           /* a run longer than this: no repetitions */
    uint64_t seed;                /* values of workload i: seed ^ hash(name) */
    double cpu_ref_max_gflop;     /* also compare with the CPU reference up to this size */
    size_t flush_bytes;           /* L2 flush buffer (0: max(256 MiB, 4 x L2)) */
    int list;                     /* only list the workloads (no GPU) */
    const char *dump_dir;         /* write each workload's tensors here (NULL: no) */
    int dump_outputs_only;        /* --dump-outputs: the outputs, cu_seqlens, meta.json */
    int sweep;                    /* time FAST on the synthetic sweep, not the workload file */
    double sweep_check_max_gflop; /* sweep: EXACT check of the first sequence up to this */
    int decode_sweep;             /* time FAST on the decode sweep (bench/decode_sweep.c) */
    int decode_check_seqs;        /* decode sweep: sequences per case checked against EXACT */
} bench_opts_t;

/* The defaults: 20 reps, 3 warm-ups, exact, fast and cublas, 60 s per
 * implementation, seed 1, sweep check up to 2500 GFLOP (all of it), 4
 * sequences per decode-sweep case checked against EXACT. */
void bench_opts_default(bench_opts_t *o);

/*! bench_parse_args() :
 * Parses argv[1..argc-1] into o (which holds the defaults). Options take
 * "--opt VALUE" or "--opt=VALUE"; --impl is a comma list of exact, fast,
 * cublas, tf32x3 without repeats or empty items; --sweep and --decode-sweep each
 * exclude --impl, --dump, --dump-outputs, --workloads, --cpu-ref-max-gflop
 * and each other; --dump and --dump-outputs exclude each other;
 * --sweep-check-max-gflop needs --sweep, --decode-check-seqs --decode-sweep.
 * @return : 0 parsed; 1 --help was asked for (nothing else done); 2 an
 *           error, with a one-line message in err ("bad value for --impl:
 *           'exact,exact' (see --help)"). */
int bench_parse_args(int argc, char **argv, bench_opts_t *o, char *err, size_t err_size);

/* The --help text. */
void bench_usage(FILE *f);

#endif /* OPP_BENCH_OPTIONS_H */
