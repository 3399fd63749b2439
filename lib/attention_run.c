/*
 * attention_run.c - the one run path of every public forward entry
 * (lib/internal/attention_run.h) and the launch table generated from
 * kernels/kernel_list.h.
 *
 *   entry (attention_packed.c / attention24_nonpad.c): descriptor -> problem
 *   (checked, defaults applied), dispatch at claim level, pointers bound
 *   -> here: workspace plan -> current device's compute capability ->
 *   dispatch row for it -> device guard -> the row's launch function.
 * The guard (kernels/varlen_guard.cu) also writes what the attention
 * kernel will not: quiet NaN over every output element when it finds bad
 * cu_seqlens / nonpad (the kernel then touches nothing), else zero rows
 * past cu_seqlens_q[batch]; stream order puts it before the kernel.
 * No allocation, no synchronization: graph-capturable. The compute
 * capability is looked up once per device (cudaDeviceGetAttribute) and
 * cached (kernels/device_cache.h).
 */
#include <cuda_runtime.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "kernels/device_cache.h"
#include "kernels/kernels.h"
#include "lib/internal/attention_plan.h"
#include "lib/internal/attention_run.h"
#include "lib/internal/check.h"
#include "lib/internal/dispatch.h"

// --- the launch table: one function per line of kernels/kernel_list.h

#define OPP__LAUNCH_ENTRY_(name, ...) opp__launch_##name,
static const opp__launch_fn launchers[OPP__KERNEL_COUNT] = {OPP__KERNEL_LIST(OPP__LAUNCH_ENTRY_)};
#undef OPP__LAUNCH_ENTRY_

// --- the current device

static int sm_cache[OPP__DEVICE_CACHE_SLOTS]; /* 0: not looked up yet */

opp_status_t opp__device_sm(int *device, int32_t *sm) {
    int dev = 0;
    const cudaError_t e = cudaGetDevice(&dev);
    OPP_RETURN_IF(e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver, OPP_STATUS_NO_DEVICE,
                  "no CUDA device is available (%s)", cudaGetErrorName(e));
    OPP_CUDA_TRY(e);
    *device = dev;
    const int cached = opp__device_cache_get(sm_cache, dev);
    if (cached != 0) {
        *sm = cached;
        return OPP_STATUS_SUCCESS;
    }
    int major = 0, minor = 0;
    OPP_CUDA_TRY(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
    OPP_CUDA_TRY(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
    *sm = major * 10 + minor;
    opp__device_cache_set(sm_cache, dev, *sm);
    return OPP_STATUS_SUCCESS;
}

/* Re-records the dispatch table's NOT_SUPPORTED message with the device
 * named (a cold path: only when no kernel fits the device). */
static opp_status_t name_device(opp_status_t st, int device) {
    char msg[512];
    const char *m = opp_last_error_message();
    const char *loc = strstr(m, ".c:"); /* drop the "file:line: " of the first record */
    const char *colon = loc != NULL ? strstr(loc + 3, ": ") : NULL;
    snprintf(msg, sizeof(msg), "%s", colon != NULL ? colon + 2 : m);
    char name[256] = "?";
    struct cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, device) == cudaSuccess) {
        snprintf(name, sizeof(name), "%s", prop.name);
    }
    OPP_RETURN_IF(1, st, "device %d (%s): %s", device, name, msg);
    return st;
}

// --- the run path

opp_status_t opp__attention_run_row(const opp__problem_t *p, const opp__kernel_row_t *row,
                                    void *workspace, size_t workspace_bytes,
                                    struct CUstream_st *stream) {
    opp__plan_t plan;
    OPP_TRY(opp__plan_bind(p, workspace, workspace_bytes, &plan));
    OPP_TRY(opp__varlen_guard_launch(p, plan.guard_record, stream));
    return launchers[row->id](p, row, &plan, stream);
}

opp_status_t opp__attention_run(const opp__problem_t *p, void *workspace, size_t workspace_bytes,
                                struct CUstream_st *stream) {
    opp__plan_t plan;
    OPP_TRY(opp__plan_bind(p, workspace, workspace_bytes, &plan));
    int device = 0;
    int32_t sm = 0;
    OPP_TRY(opp__device_sm(&device, &sm));
    const opp__kernel_row_t *row;
    const opp_status_t st = opp__dispatch_select(p, sm, &row);
    if (st != OPP_STATUS_SUCCESS) {
        return name_device(st, device);
    }
    return opp__attention_run_row(p, row, workspace, workspace_bytes, stream);
}
