/*
 * edge31.h - what the two parts of edge31_gpu_test share: the tests
 * themselves (edge31_gpu_test.c: one sequence with L_kv near 2^31;
 * edge31_batch.c: a batch with more than 2^31 query elements) and the
 * helpers that decide whether this device can run them.
 */
#ifndef OPP_TESTS_EDGE31_H
#define OPP_TESTS_EDGE31_H

#include <stddef.h>

/* skip()s the current test, after printing why, when OPP_EDGE31_ONLY is
 * set and does not name `part` ('a' or 'b'), when OPP_GPU_TEST_MAX_LEN
 * caps lengths (the reduced compute-sanitizer runs of
 * tools/gpu_run_all.sh --sanitize: these edges exist only at full size),
 * or when the device has fewer than `bytes` + 1 GiB free (cudaMemGetInfo).
 * `what` names the part in the message. Call it after
 * OPP_FT_REQUIRE_DEVICE(). */
void opp_e31_require(char part, size_t bytes, const char *what);

/* Fails the test on a CUDA error code (cudaError_t as int) of `what`. */
void opp_e31_cuda_ok(int err, const char *what);

/* Part (b): a batch with total_q * Hq * D > 2^32 (edge31_batch.c). */
void test_edge31_big_batch(void **state);

#endif /* OPP_TESTS_EDGE31_H */
