/*
 * workloads.h - the benchmark workload file (../shared/bench/workloads.json)
 * as C structs, and the FLOP count of DESIGN.md §7.
 *
 * File format (strict JSON, read by Jansson with duplicate keys rejected;
 * unknown members are errors, "note" strings are allowed anywhere):
 *   { "version": 1, "note": "...",
 *     "workloads": [ { "name": "prefill_gqa_causal_bf16", "dtype": "bf16",
 *                      "heads": 32, "kv_heads": 8, "head_size": 128,
 *                      "causal": true, "softcap": 50.0,        (optional)
 *                      "lq": [814, ...], "lkv": [814, ...] }, ... ] }
 * dtype is "f32", "f16" or "bf16"; lq and lkv have one entry per sequence.
 *
 * FLOPs = 4 * sum_b attended_pairs(L_q[b], L_kv[b]) * heads * head_size, where
 * attended pairs are L_q * L_kv, or with causal (tail-aligned: query i sees
 * key j iff j <= i + L_kv - L_q) exactly the visible (i, j) pairs.
 *
 * Host code, no CUDA; used by bench/oppbench and tests/bench_workloads_test.c.
 */
#ifndef OPP_BENCH_WORKLOADS_H
#define OPP_BENCH_WORKLOADS_H

#include <stddef.h>
#include <stdint.h>

#include "lib/oppacked.h"

#define OPP_WORKLOAD_NAME_BYTES 64

typedef struct opp_workload {
    char name[OPP_WORKLOAD_NAME_BYTES];
    opp_dtype_t dtype;
    int32_t heads;     /* Hq */
    int32_t kv_heads;  /* Hkv, divides Hq */
    int32_t head_size; /* D (and Dv) */
    int32_t causal;    /* 0 or 1 */
    float softcap;     /* 0 = off */
    int32_t batch;     /* B = entries of lq and lkv */
    int32_t *lq, *lkv; /* [batch] */
} opp_workload_t;

typedef struct opp_workload_set {
    opp_workload_t *items;
    int count;
} opp_workload_set_t;

/*! opp_workloads_parse() :
 * Parses text[0 .. length) as a workload file into set (zeroed first).
 * path only labels errors. A JSON syntax error (Jansson's message) is
 * "PATH:LINE:COLUMN: message"; a schema error is "PATH: message", where the
 * message names the offending member and its workload, e.g.
 *   w.json: unknown member "casual" in workload "prefill_gqa_causal_bf16"
 * @return : 0, or -1 with the message in err (set is left empty). */
int opp_workloads_parse(const char *text, size_t length, const char *path, opp_workload_set_t *set,
                        char *err, size_t err_size);

/*! opp_workloads_path() : the workload file a benchmark reads: `given`
 * (its --workloads) when not NULL, else $OPP_WORKLOADS when set and not
 * empty, else ../shared/bench/workloads.json relative to the repo root (the
 * cwd, or $BUILD_WORKSPACE_DIRECTORY under bazel run), formatted into buf.
 * @return : the path (given, the environment's string, or buf). */
const char *opp_workloads_path(const char *given, char *buf, size_t size);

/*! opp_workloads_load() : reads the file at path, then as opp_workloads_parse()
 * (an unreadable file is "PATH:...: unable to open PATH: why").
 * @return : 0, or -1 with the message in err. */
int opp_workloads_load(const char *path, opp_workload_set_t *set, char *err, size_t err_size);

/*! opp_workloads_free() : frees what a load put into set (NULL is fine). */
void opp_workloads_free(opp_workload_set_t *set);

/*! opp_workloads_select() :
 * Marks selected[i] = 1 for every workload whose name is in the
 * comma-separated list only (NULL or "": all of them).
 * @return : the number selected, or -1 with "unknown workload 'x' (known:
 *           a, b, ...)" in err. */
int opp_workloads_select(const opp_workload_set_t *set, const char *only, int *selected, char *err,
                         size_t err_size);

/*! opp_attended_pairs() :
 * @return : the number of (query, key) pairs that attend in one sequence:
 *           lq * lkv, or with causal the pairs with j <= i + lkv - lq (rows
 *           with no visible key count 0). Negative lengths count as 0. */
int64_t opp_attended_pairs(int32_t lq, int32_t lkv, int causal);

/*! opp_workload_flops() :
 * @return : 4 * sum_b attended_pairs * heads * head_size (as a double: the
 *           long workloads exceed 2^53 only far beyond any real size). */
double opp_workload_flops(const opp_workload_t *w);

/*! opp_workload_tokens() : sets the token totals sum(lq), sum(lkv). */
void opp_workload_tokens(const opp_workload_t *w, int64_t *total_q, int64_t *total_kv);

/* The sweep (bench/sweep.c), FlashAttention's benchmark shapes: bf16,
 * OPP_SWEEP_TOKENS tokens in every case, L = 128 .. 16384 (powers of two),
 * batch = OPP_SWEEP_TOKENS / L sequences of L queries and L keys,
 * heads = kv_heads = OPP_SWEEP_HIDDEN / D, D in {64, 128, 256}, causal and
 * not, no softcap. Names: sweep_d<D>_<causal|noncausal>_L<L>, in the order
 * D, then non-causal before causal, then L ascending (48 cases).
 * bench/fa2_sweep.py lists the same cases (tests/bench_scripts_test.sh). */
#define OPP_SWEEP_TOKENS 16384
#define OPP_SWEEP_HIDDEN 2048

/*! opp_sweep_workloads() :
 * Fills set (zeroed first) with the sweep's cases; free with
 * opp_workloads_free().
 * @return : 0, or -1 when out of memory (set left empty). */
int opp_sweep_workloads(opp_workload_set_t *set);

/* The decode sweep (bench/decode_sweep.c), issue 11: one query per sequence
 * against a long KV cache. bf16, D = Dv = OPP_DECODE_HEAD_SIZE,
 * kv_heads = OPP_DECODE_KV_HEADS, heads = kv_heads * G for the group sizes
 * G in {1, 4, 8}, batch in {1, 8, 64, 256}, L_kv in {1024, 4096, 16384,
 * 65536, 131072} (every sequence L_q = 1, L_kv), not causal, no softcap.
 * Names: decode_g<G>_b<batch>_kv<L_kv>, in the order G, batch, L_kv
 * ascending (60 combinations). A combination whose K + V
 * (batch * L_kv * kv_heads * (D + Dv) * 2 bytes) exceeds
 * OPP_DECODE_MAX_KV_BYTES is skipped (9 of them: batch 256 with L_kv >=
 * 65536, batch 64 with L_kv = 131072), so 51 cases run.
 * bench/fa2_sweep.py --decode lists the same cases and the same skipped
 * ones (tests/bench_scripts_test.sh). */
#define OPP_DECODE_KV_HEADS     8
#define OPP_DECODE_HEAD_SIZE    128
#define OPP_DECODE_MAX_KV_BYTES ((int64_t)16 << 30)
#define OPP_DECODE_COMBINATIONS 60

/* One combination of the decode sweep. */
typedef struct opp_decode_case {
    char name[OPP_WORKLOAD_NAME_BYTES];
    int32_t group, batch, lkv;
    int64_t kv_bytes; /* K + V bytes: batch * lkv * kv_heads * (D + Dv) * 2 */
    int skipped;      /* kv_bytes > OPP_DECODE_MAX_KV_BYTES: not run */
} opp_decode_case_t;

/*! opp_decode_sweep_cases() :
 * Fills cases[0 .. OPP_DECODE_COMBINATIONS) with every combination, skipped
 * ones included, in the order above. */
void opp_decode_sweep_cases(opp_decode_case_t cases[OPP_DECODE_COMBINATIONS]);

/*! opp_decode_sweep_workloads() :
 * Fills set (zeroed first) with the combinations that are not skipped;
 * free with opp_workloads_free().
 * @return : 0, or -1 when out of memory (set left empty). */
int opp_decode_sweep_workloads(opp_workload_set_t *set);

/*! opp_workload_min_bytes() :
 * @return : the bytes any kernel must move for w once: K and V read
 *           (sum_b L_kv * kv_heads * 2 * D), Q read and out written
 *           (sum_b L_q * heads * 2 * D), in elements of w->dtype. The
 *           decode sweep's GB/s is this over the median time. */
double opp_workload_min_bytes(const opp_workload_t *w);

#endif /* OPP_BENCH_WORKLOADS_H */
