/*
 * gpu_status.h - what the harness's GPU adapters (harness/gpu_*.h) do when
 * a CUDA call fails, the status line of the tools, and the device count.
 * Host C against the CUDA runtime API; shared by the tests, tools/oppcheck
 * and bench/oppbench.
 *
 * A failed CUDA call goes to ONE handler per process, which must not return:
 *   default (tools/oppcheck)  prints "<program>: <what> failed: <cuda message>"
 *                             to stderr and exits with status 2 (exit on
 *                             error is allowed in tools/ and bench/, STYLE.md §6)
 *   bench/oppbench            its own "oppbench: fatal: ..." line, exit 2
 *   tests (tests/gpu_util.c)  fails the current CMocka test
 * <what> names the call: "cudaMalloc (4096 bytes)", or the expression
 * text of OPP_HGPU_CHECK(expr).
 */
#ifndef OPP_HARNESS_GPU_STATUS_H
#define OPP_HARNESS_GPU_STATUS_H

#include <cuda_runtime_api.h>

#include "lib/oppacked.h"

/* Called with the failed call's description, its error and where it was
 * checked (file, line). Must not return (exit, or longjmp as CMocka does). */
typedef void (*opp_hgpu_fail_fn)(const char *what, cudaError_t err, const char *file, int line);

/* Installs fn as the process's handler (NULL: the default above).
 * @return : the handler it replaces (NULL when that was the default). */
opp_hgpu_fail_fn opp_hgpu_set_fail_handler(opp_hgpu_fail_fn fn);

/* The program name the default handler and opp_hgpu_status_ok() print
 * (default "harness"); name must outlive every use. */
void opp_hgpu_set_program(const char *name);
const char *opp_hgpu_program(void);

/* Hands err to the handler unless it is cudaSuccess. */
void opp_hgpu_check(cudaError_t err, const char *what, const char *file, int line);

/* Checks one CUDA runtime call, naming it by its text. */
#define OPP_HGPU_CHECK(expr) opp_hgpu_check((expr), #expr, __FILE__, __LINE__)

/* 1 if st is OPP_STATUS_SUCCESS, else prints "<program>: <what>: <status
 * name>: <opp_last_error_message()>" to stderr and returns 0. */
int opp_hgpu_status_ok(opp_status_t st, const char *what);

/* The number of usable CUDA devices: 0 when the driver or the device is
 * missing (the runtime's sticky "no device" error is cleared). Never fails. */
int opp_hgpu_device_count(void);

#endif /* OPP_HARNESS_GPU_STATUS_H */
