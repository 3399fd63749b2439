/*
 * gpu_timer.h - timing one call on a stream with CUDA events, the way the
 * tests, tools/oppcheck and bench/oppbench all time: an event recorded
 * before the call and one after it on the same stream, a wait for the
 * second, and cudaEventElapsedTime between them (milliseconds; what the
 * call enqueued, not host time). Host C against the CUDA runtime API.
 *
 * A call is a function of one context pointer returning a status
 * (opp_hgpu_run_fn: harness/gpu_packed.h has the library's entries,
 * harness/gpu_a24.h the reference), so a timer can repeat it. A failed
 * CUDA call goes to the process's handler (harness/gpu_status.h).
 */
#ifndef OPP_HARNESS_GPU_TIMER_H
#define OPP_HARNESS_GPU_TIMER_H

#include <cuda_runtime_api.h>

#include "lib/oppacked.h"

/* One call to time; ctx is the caller's. */
typedef opp_status_t (*opp_hgpu_run_fn)(void *ctx);

typedef struct opp_hgpu_timer {
    cudaEvent_t start, stop;
} opp_hgpu_timer_t;

/* Creates the two events. */
void opp_hgpu_timer_init(opp_hgpu_timer_t *t);
void opp_hgpu_timer_destroy(opp_hgpu_timer_t *t);

/*! Records start on stream, calls fn(ctx), records stop, waits for stop.
 * @ms : the events' elapsed milliseconds (written even when fn failed).
 * @return : fn's status. */
opp_status_t opp_hgpu_timer_run(opp_hgpu_timer_t *t, opp_hgpu_run_fn fn, void *ctx,
                                cudaStream_t stream, float *ms);

/*! One untimed warm-up call of fn(ctx), then (if it succeeded) one timed
 * call as opp_hgpu_timer_run; the stream is idle afterwards.
 * @st : the status of the last call made.
 * @return : the timed call's milliseconds; 0 when a call failed. */
double opp_hgpu_time_after_warmup(opp_hgpu_run_fn fn, void *ctx, cudaStream_t stream,
                                  opp_status_t *st);

#endif /* OPP_HARNESS_GPU_TIMER_H */
