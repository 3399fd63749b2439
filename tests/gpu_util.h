/*
 * gpu_util.h - helpers for GPU test groups (CMocka).
 *
 *   opp_test_gpu_count()          number of usable CUDA devices (0 when the
 *                                 driver or device is missing; never fails)
 *   OPP_TEST_REQUIRE_GPU()        skip() the current test when there is none
 *   opp_test_gpu_alloc / _free    cudaMalloc / cudaFree that fail the test
 *   opp_test_h2d / opp_test_d2h   synchronous copies that fail the test
 *   opp_test_gpu_fill             fills device memory with a byte pattern
 *
 * A GPU test group calls OPP_TEST_REQUIRE_GPU() first in every test (or in
 * its group setup, returning the skip), so on a machine without a GPU the
 * tests are reported as SKIPPED, never as passed.
 *
 * The helpers wrap the harness's GPU adapters (harness/gpu_buffer.h); a
 * binary linking this file has the harness's CUDA failures fail the
 * current CMocka test (never exit), from any harness GPU adapter.
 */
#ifndef OPP_TESTS_GPU_UTIL_H
#define OPP_TESTS_GPU_UTIL_H

#include <stddef.h>

#include "tests/test_util.h"

/* Number of CUDA devices usable by this process (0 on any error). */
int opp_test_gpu_count(void);

#define OPP_TEST_REQUIRE_GPU()           \
    do {                                 \
        if (opp_test_gpu_count() == 0) { \
            skip();                      \
        }                                \
    } while (0)

/* Device allocation of bytes (at least 1); fails the test on error. */
void *opp_test_gpu_alloc(size_t bytes);
void opp_test_gpu_free(void *ptr);
void opp_test_h2d(void *dst, const void *src, size_t bytes);
void opp_test_d2h(void *dst, const void *src, size_t bytes);
void opp_test_gpu_fill(void *dst, int byte, size_t bytes);
/* Synchronizes the device; fails the test on an execution error. */
void opp_test_gpu_sync(void);

#endif /* OPP_TESTS_GPU_UTIL_H */
