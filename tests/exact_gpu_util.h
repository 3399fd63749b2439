/*
 * exact_gpu_util.h - helpers of the exact GPU path tests: run a logical
 * batch (harness/logical_batch.h) through opp_packed_attention_fwd() or the
 * CPU reference and get the host output back.
 *
 *   out [total_q, Hq, Dv] in the batch's dtype (host, malloc'ed; free()).
 *
 * The device side is the harness's (harness/gpu_packed.h): device buffers
 * come from cudaMalloc (256-byte aligned); the device output
 * is poisoned with NaN before every run, so an element the kernel does not
 * write can never match a finite reference value. Every helper fails the
 * current CMocka test on error.
 */
#ifndef OPP_TESTS_EXACT_GPU_UTIL_H
#define OPP_TESTS_EXACT_GPU_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "harness/gpu_packed.h"
#include "harness/logical_batch.h"
#include "lib/oppacked.h"

struct CUstream_st;

/* The packed batch on the device (harness/gpu_packed.h). */
typedef opp_hgpu_packed_t opp_test_packed_dev_t;

/* Environment integer, or fallback when unset or empty. */
long opp_test_env_long(const char *name, long fallback);

/* Elements of the packed output: total_q * Hq * Dv. */
size_t opp_test_out_elems(const opp_lb_t *lb);

/* Allocates and fills the device copy of lb (out poisoned with NaN). */
void opp_test_packed_upload(const opp_lb_t *lb, opp_test_packed_dev_t *dev);
void opp_test_packed_free(opp_test_packed_dev_t *dev);

/* Copies the device output to a new host buffer. */
void *opp_test_packed_download(const opp_test_packed_dev_t *dev);

/* The CPU reference output of lb (opp_ref_packed_attention). */
void *opp_test_packed_ref(const opp_lb_t *lb);

/* Uploads, runs opp_packed_attention_fwd() on stream, synchronizes,
 * downloads. @return : the host output. */
void *opp_test_packed_gpu(const opp_lb_t *lb, struct CUstream_st *stream);

/* Fails the test unless got == want bit for bit (NaN == NaN); `what`
 * describes the batch in the report. */
void opp_test_assert_out_equal(const opp_lb_t *lb, const void *got, const void *want,
                               const char *what);

#endif /* OPP_TESTS_EXACT_GPU_UTIL_H */
