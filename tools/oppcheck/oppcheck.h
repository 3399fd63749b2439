/*
 * oppcheck.h - the pieces of the main job (tools/oppcheck): options, the
 * result table, and the checks it runs.
 *
 *   bazel run //tools:oppcheck -- [options]     one logical batch, every path
 *   bazel run //tools:oppcheck -- --onnx-test DIR...   ONNX case folders
 *   bazel run //tools:oppcheck -- --help        the options
 */
#ifndef OPP_TOOLS_OPPCHECK_H
#define OPP_TOOLS_OPPCHECK_H

#include <stddef.h>
#include <stdint.h>

#include "harness/compare.h"
#include "harness/logical_batch.h"

/* Options of a logical-batch run. */
typedef struct oppcheck_opts {
    opp_dtype_t dtype;
    int32_t batch;
    int32_t *lq, *lkv; /* explicit lengths (NULL: random in min_len..max_len) */
    int32_t min_len, max_len;
    int32_t num_heads, kv_num_heads, head_size, v_head_size;
    int32_t is_causal;
    float softcap, scale;
    uint64_t seed;
    int layouts;  /* bit 0: 4D, bit 1: 3D */
    int poisons;  /* bit 0: finite, bit 1: NaN */
    int cpu_only; /* skip GPU paths even when a GPU is present */
} oppcheck_opts_t;

/* One row of the printed table. */
typedef struct oppcheck_row {
    char name[96];
    opp_cmp_stats_t cmp; /* compared == 0: a timing-only row (or an error row) */
    opp_err_stats_t err; /* compared > 0: an error row (FAST vs exact) */
    double ms;
    int ok;
} oppcheck_row_t;

typedef struct oppcheck_table {
    oppcheck_row_t rows[48];
    int count;
} oppcheck_table_t;

oppcheck_row_t *oppcheck_table_add(oppcheck_table_t *t, const char *name);
void oppcheck_table_print(const oppcheck_table_t *t);

/* Monotonic wall-clock milliseconds. */
double oppcheck_now_ms(void);

/* The name oppcheck's lines give the kernels of algo: "exact", "FAST" or
 * "TF32X3" (the approximate paths by their algorithm's name). */
static inline const char *oppcheck_algo_name(opp_algo_t algo) {
    return algo == OPP_ALGO_FAST ? "FAST" : (algo == OPP_ALGO_TF32X3 ? "TF32X3" : "exact");
}

/* Runs the CPU references on lb; fills the table. Returns 0 if everything
 * agreed, 1 on a disagreement, 2 on an error (message printed). */
int oppcheck_run_cpu(const opp_lb_t *lb, const oppcheck_opts_t *o, oppcheck_table_t *t,
                     void **packed_out);

/* ======   GPU (gpu_check.c)   ====== */

/* 1 and the device's name when a CUDA device is usable, else 0. */
int oppcheck_gpu_name(char *name, size_t size);

/* Runs the exact kernel (packed, then each requested padded layout) and the
 * cuBLAS padded reference; compares with cpu_packed (the CPU packed
 * reference's output) and fills the table. Returns 0 / 1 / 2 as
 * oppcheck_run_cpu. */
int oppcheck_run_gpu(const opp_lb_t *lb, const oppcheck_opts_t *o, const void *cpu_packed,
                     oppcheck_table_t *t);

/* ======   --onnx-test (onnx_check.c)   ====== */

struct opp_onnx_case;
struct opp_ref_attention24_desc;
struct opp_ref_attention24_tensors;

/* The GPU paths of --onnx-test (onnx_gpu.c): the cuBLAS reference and, where
 * the case fits opp_attention24_nonpad_fwd(), the exact kernel, compared
 * with the case's outputs and the CPU reference's (ref). */
typedef struct oppcheck_onnx_gpu oppcheck_onnx_gpu_t;

/* Creates the cuBLAS handle and a stream; 0, or 2 after printing why. */
int oppcheck_onnx_gpu_open(oppcheck_onnx_gpu_t **g);

/* Runs one mapped case (c, desc; ref holds the host inputs and the CPU
 * reference's outputs); prints a line per path. Returns 0 agreed, 1 a
 * difference, 2 an error. */
int oppcheck_onnx_gpu_case(oppcheck_onnx_gpu_t *g, const char *case_path,
                           const struct opp_onnx_case *c,
                           const struct opp_ref_attention24_desc *desc,
                           const struct opp_ref_attention24_tensors *ref);

void oppcheck_onnx_gpu_close(oppcheck_onnx_gpu_t *g);

/* Runs every case under dirs[0..n_dirs-1] (case folders or folders of them);
 * prints a line per case and "N cases, N bit-identical, N differ, N
 * unreadable". Returns 0 all bit-identical, 1 a difference, 2 unreadable input. */
int oppcheck_onnx_test(int n_dirs, char **dirs, int cpu_only);

#endif /* OPP_TOOLS_OPPCHECK_H */
