/*
 * attention_run.h - the one run path shared by both public layouts
 * (lib/attention_run.c): check -> plan the workspace -> device guard ->
 * look the kernel up -> launch. Host code that calls the CUDA runtime.
 */
#ifndef OPP_INTERNAL_ATTENTION_RUN_H
#define OPP_INTERNAL_ATTENTION_RUN_H

#include <stddef.h>

#include "lib/internal/dispatch.h"
#include "lib/internal/problem.h"

#ifdef __cplusplus
extern "C" {
#endif

struct CUstream_st;

/*! opp__attention_run() :
 * Runs the bound problem p (lib/internal/problem.h) on stream: binds the
 * workspace plan, finds the current device's compute capability (cached
 * per device, no synchronization), selects the kernel from the dispatch
 * table, enqueues the device guard and then the kernel.
 * @return : SUCCESS when enqueued; BAD_PARAM_* (workspace); NO_DEVICE;
 *           NOT_SUPPORTED_* (no kernel for this device, message naming
 *           it); CUDA_ERROR. */
opp_status_t opp__attention_run(const opp__problem_t *p, void *workspace, size_t workspace_bytes,
                                struct CUstream_st *stream);

/*! opp__attention_run_row() :
 * The run path with the kernel chosen by the caller instead of the table:
 * plan, guard, then row's launch function. For tests that run every row
 * that fits the device (e.g. an sm_80 tile on an H200); the row's shared
 * memory must fit the device (else CUDA_ERROR from the launch).
 * @return : as opp__attention_run(). */
opp_status_t opp__attention_run_row(const opp__problem_t *p, const opp__kernel_row_t *row,
                                    void *workspace, size_t workspace_bytes,
                                    struct CUstream_st *stream);

/*! opp__device_sm() :
 * The current device's index and compute capability (major * 10 + minor),
 * looked up once per device and cached (thread-safe; never synchronizes).
 * @return : SUCCESS, NO_DEVICE, or CUDA_ERROR. */
opp_status_t opp__device_sm(int *device, int32_t *sm);

#ifdef __cplusplus
}
#endif
#endif /* OPP_INTERNAL_ATTENTION_RUN_H */
