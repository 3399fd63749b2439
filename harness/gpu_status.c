/*
 * gpu_status.c - the CUDA failure handler, the tools' status line and the
 * device count (see gpu_status.h).
 */
#include "harness/gpu_status.h"

#include <stdio.h>
#include <stdlib.h>

static const char *g_program = "harness";
static opp_hgpu_fail_fn g_handler = NULL;

static void default_fail(const char *what, cudaError_t err, const char *file, int line) {
    (void)file;
    (void)line;
    fprintf(stderr, "%s: %s failed: %s\n", g_program, what, cudaGetErrorString(err));
    exit(2);
}

opp_hgpu_fail_fn opp_hgpu_set_fail_handler(opp_hgpu_fail_fn fn) {
    const opp_hgpu_fail_fn old = g_handler;
    g_handler = fn;
    return old;
}

void opp_hgpu_set_program(const char *name) {
    g_program = name;
}

const char *opp_hgpu_program(void) {
    return g_program;
}

void opp_hgpu_check(cudaError_t err, const char *what, const char *file, int line) {
    if (err != cudaSuccess) {
        (g_handler != NULL ? g_handler : default_fail)(what, err, file, line);
    }
}

int opp_hgpu_status_ok(opp_status_t st, const char *what) {
    if (st != OPP_STATUS_SUCCESS) {
        fprintf(stderr, "%s: %s: %s: %s\n", g_program, what, opp_status_name(st),
                opp_last_error_message());
        return 0;
    }
    return 1;
}

int opp_hgpu_device_count(void) {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        (void)cudaGetLastError(); /* clear the sticky "no device" error */
        return 0;
    }
    return n;
}
