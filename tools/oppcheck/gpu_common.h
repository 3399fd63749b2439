/*
 * gpu_common.h - what the GPU parts of oppcheck (gpu_check.c, onnx_gpu.c)
 * share: dying on a CUDA failure (a tool, not the library), uploads, and
 * printing a failed library status.
 */
#ifndef OPP_TOOLS_OPPCHECK_GPU_COMMON_H
#define OPP_TOOLS_OPPCHECK_GPU_COMMON_H

#include <cuda_runtime_api.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "lib/oppacked.h"

#define CUDA_OR_DIE(expr)                                                                \
    do {                                                                                 \
        cudaError_t e_ = (expr);                                                         \
        if (e_ != cudaSuccess) {                                                         \
            fprintf(stderr, "oppcheck: %s failed: %s\n", #expr, cudaGetErrorString(e_)); \
            exit(2);                                                                     \
        }                                                                                \
    } while (0)

/* A device copy of bytes of src (at least 1 byte allocated; bytes 0 copies
 * nothing). Dies on a CUDA failure. */
void *oppcheck_upload(const void *src, size_t bytes);

/* A device buffer of bytes (at least 1 allocated) filled with all-ones bytes:
 * NaN in every float dtype, so an element nobody writes shows up. Dies on a
 * CUDA failure. */
void *oppcheck_device_poisoned(size_t bytes);

/* 1 if st is OPP_STATUS_SUCCESS, else prints "oppcheck: <what>: <status>:
 * <message>" to stderr and returns 0. */
int oppcheck_status_ok(opp_status_t st, const char *what);

/* Runs fn(ctx) twice on stream s (warm-up, then measured between two events)
 * and synchronizes. @st : the status of the last call made.
 * @return : the measured call's milliseconds (0 when a call failed). */
typedef opp_status_t (*oppcheck_run_fn)(void *ctx);
double oppcheck_timed(oppcheck_run_fn fn, void *ctx, cudaStream_t s, opp_status_t *st);

#endif /* OPP_TOOLS_OPPCHECK_GPU_COMMON_H */
