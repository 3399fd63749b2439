/*
 * bench_gpu.h - what oppbench's GPU files share (bench/gpu_common.c: the
 * device state, event timing with L2 flushes, repetitions; bench/fast_gpu.c:
 * the FAST kernel beside an uploaded packed batch). Every CUDA call is
 * checked and exits (bench code, STYLE.md §6); the library's statuses are
 * returned.
 */
#ifndef OPP_BENCH_BENCH_GPU_H
#define OPP_BENCH_BENCH_GPU_H

#include <cuda_runtime_api.h>
#include <stddef.h>
#include <stdint.h>

#include "bench/oppbench.h"
#include "harness/gpu_packed.h"
#include "harness/gpu_timer.h"
#include "lib/oppacked.h"
#include "reference/opp_reference_gpu.h"

// --- the device state of bench_gpu_init() (bench/gpu_common.c)

cudaStream_t bench_gpu_stream(void);
opp_ref_gpu_t *bench_gpu_ref(void);
int32_t bench_gpu_sm_arch(void); /* opp_device_sm_arch() of the device */

/* malloc that exits when out of memory (at least 1 byte). */
void *bench_host_alloc(size_t bytes);
double bench_wall_ms(void);

/* The value seed of a workload: --seed ^ FNV-1a(name). */
uint64_t bench_seed(const bench_opts_t *o, const char *name);

/* One run of fn(job) bracketed by events, after an L2 flush outside them;
 * *ms is the event time. @return : the run's status. */
opp_status_t bench_timed_run(opp_hgpu_run_fn fn, void *job, double *ms);

/* Warm-up runs then repetitions of fn (bench/README.md: --warmup, --reps,
 * --max-seconds-per-impl); first_ms is the validation run's time. Fills
 * r's timing (or fails r on a bad status). */
void bench_time_impl(const bench_opts_t *o, opp_hgpu_run_fn fn, void *job, double first_ms,
                     bench_result_t *r);

/* Marks r failed: "FAILED: <what>: <status>: <last error message>". */
void bench_fail_row(bench_result_t *r, const char *what, opp_status_t st);

/* The determinism check after timing: when r is validated, the device
 * output dev (bytes) must still equal host (the validated copy); else r
 * fails with "output after timing differs from the validated output". */
void bench_check_unchanged(const void *dev, const void *host, size_t bytes, bench_result_t *r);

/* r->kernel := the kernel the run path picks for desc with algo on this
 * device. @return : the query's status; on NOT_SUPPORTED_* r->supported = 0
 * and r->validation says "<impl>: not supported (<reason>)". */
opp_status_t bench_query_kernel(const opp_attention_desc_t *desc, opp_algo_t algo,
                                bench_result_t *r);

// --- FAST (or TF32X3) beside an uploaded packed batch (bench/fast_gpu.c)

typedef struct bench_fast {
    opp_hgpu_packed_t dev;       /* the batch's q, k, v, cu_seqlens; FAST's own out, workspace */
    opp_hgpu_packed_call_t call; /* the run, for bench_timed_run / bench_time_impl */
    void *h_out;                 /* host copy of the first run's output */
    double first_ms;             /* the first run's time */
} bench_fast_t;

/*! bench_fast_setup() :
 * Queries algo (OPP_ALGO_FAST, or OPP_ALGO_TF32X3 for oppbench's tf32x3
 * row) for the packed batch's descriptor desc (r: kernel, or not
 * supported). When it serves, allocates its output (NaN-poisoned) and
 * workspace beside packed's inputs and sets up the call.
 * @return : 1 when algo serves desc (free with bench_fast_free), else 0. */
int bench_fast_setup(const opp_attention_desc_t *desc, opp_algo_t algo,
                     const opp_hgpu_packed_t *packed, bench_fast_t *f, bench_result_t *r);

/*! bench_fast_first_run() :
 * The validation run: FAST once (timed), its device status, and its output
 * copied to f->h_out. @return : the first failing status (r failed). */
opp_status_t bench_fast_first_run(bench_fast_t *f, bench_result_t *r);

/* r's FAST check on host buffers: fast vs exact (n elements of dtype) with
 * bench_err_measure(): validated, max_abs_err, rms_err, the validation text. */
void bench_fast_grade(const void *fast, const void *exact, size_t n, opp_dtype_t dtype,
                      bench_result_t *r);

/* Frees FAST's output, workspace and host copy (not the shared inputs). */
void bench_fast_free(bench_fast_t *f);

#endif /* OPP_BENCH_BENCH_GPU_H */
