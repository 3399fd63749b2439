/*
 * attention24_gpu_cases.h - runs the cuBLAS Attention-24 reference on every
 * ONNX case folder of a data directory (ONNX's conformance cases or the
 * project's golden cases) and compares every output the case has (Y,
 * present_key, present_value, qk_matmul_output; all rows).
 *
 * Rule (DESIGN.md §4, L3): f16 and bf16 outputs bit-identical; f32 outputs
 * within 1 ulp (GEMM summation order), the number of flipped elements
 * reported. One line per case is printed, then a summary.
 */
#ifndef OPP_TESTS_ATTENTION24_GPU_CASES_H
#define OPP_TESTS_ATTENTION24_GPU_CASES_H

#include <stddef.h>
#include <stdint.h>

#include "tests/attention24_gpu_run.h"

typedef struct opp_a24g_cases_result {
    int cases;        /* case folders found */
    int identical;    /* every output bit-identical */
    int within_1ulp;  /* f32 cases with 1-ulp flips only */
    int failed;       /* unreadable, reference error, or outside the rule */
    size_t f32_flips; /* f32 elements that differ (by 1 ulp) */
    size_t f32_elems; /* f32 elements compared */
} opp_a24g_cases_result_t;

/*! Runs every case of the folder opp_onnx_data_dir(env_var, rel) on ref.
 * Fails the current test when the folder holds fewer than min_cases cases.
 * @r : written (zeroed first). */
void opp_a24g_run_cases(const char *env_var, const char *rel, int min_cases, opp_ref_gpu_t *ref,
                        opp_a24g_ws_t *ws, struct CUstream_st *stream, opp_a24g_cases_result_t *r);

/*! Runs count random descriptors of the full operator (attention24_gpu_random.c:
 * masks, past/present, nonpad, qk modes, 3D/4D, empty sizes) from seed on
 * ref and on the CPU reference, comparing every output on every row with
 * the rule above; mismatches are printed and counted in r->failed, and
 * r->identical counts the cases that pass.
 * @r : written (zeroed first). */
void opp_a24g_random_cases(long count, uint64_t seed, opp_ref_gpu_t *ref, opp_a24g_ws_t *ws,
                           struct CUstream_st *stream, opp_a24g_cases_result_t *r);

#endif /* OPP_TESTS_ATTENTION24_GPU_CASES_H */
