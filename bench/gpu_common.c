/*
 * gpu_common.c - oppbench's device state and timing (see bench_gpu.h):
 * device facts, the stream, the L2 flush buffer, the cuBLAS reference
 * handle; one run bracketed by CUDA events after an L2 flush outside them
 * (harness/gpu_timer.h); warm-up runs then repetitions, median and min.
 * Build and run: see bench/README.md.
 */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/bench_gpu.h"
#include "harness/gpu_buffer.h"
#include "harness/gpu_status.h"

static struct {
    cudaStream_t stream;
    opp_hgpu_timer_t timer;
    void *flush;
    size_t flush_bytes;
    unsigned flushes;
    opp_ref_gpu_t *ref;
    int32_t sm_arch;
} g;

cudaStream_t bench_gpu_stream(void) {
    return g.stream;
}

opp_ref_gpu_t *bench_gpu_ref(void) {
    return g.ref;
}

int32_t bench_gpu_sm_arch(void) {
    return g.sm_arch;
}

// --- setup

/* A failed CUDA call (here or in the harness) ends oppbench. */
static void die_on_cuda(const char *what, cudaError_t err, const char *file, int line) {
    fprintf(stderr, "oppbench: fatal: %s: %s (%s) (%s:%d)\n", what, cudaGetErrorName(err),
            cudaGetErrorString(err), file, line);
    exit(2);
}

void bench_gpu_init(const bench_opts_t *o) {
    opp_hgpu_set_fail_handler(die_on_cuda);
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
        BENCH_DIE("no CUDA device (%s); run oppbench on the GPU machine (bench/README.md)",
                  e != cudaSuccess ? cudaGetErrorString(e) : "device count 0");
    }
    int dev = 0, clock_khz = 0, mem_khz = 0, drv = 0, rt = 0;
    struct cudaDeviceProp p;
    OPP_HGPU_CHECK(cudaGetDevice(&dev));
    OPP_HGPU_CHECK(cudaGetDeviceProperties(&p, dev));
    if (cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, dev) != cudaSuccess) {
        (void)cudaGetLastError();
    }
    OPP_HGPU_CHECK(cudaDriverGetVersion(&drv));
    OPP_HGPU_CHECK(cudaRuntimeGetVersion(&rt));
    printf("device %d: %s, sm_%d%d, %d SMs, max SM clock %.0f MHz, memory clock %.0f MHz, "
           "bus %d bit, L2 %.1f MiB, memory %.1f GiB\n",
           dev, p.name, p.major, p.minor, p.multiProcessorCount, clock_khz / 1e3, mem_khz / 1e3,
           p.memoryBusWidth, p.l2CacheSize / 1048576.0, (double)p.totalGlobalMem / 1073741824.0);
    printf("CUDA driver %d.%d, runtime %d.%d; liboppacked %s\n", drv / 1000, drv % 1000 / 10,
           rt / 1000, rt % 1000 / 10, opp_version_string());
    const opp_status_t arch = opp_device_sm_arch(&g.sm_arch);
    if (arch != OPP_STATUS_SUCCESS) {
        BENCH_DIE("opp_device_sm_arch: %s: %s", opp_status_name(arch), opp_last_error_message());
    }
    g.flush_bytes = o->flush_bytes;
    if (g.flush_bytes == 0) {
        g.flush_bytes = (size_t)256 << 20;
        if ((size_t)p.l2CacheSize * 4 > g.flush_bytes) {
            g.flush_bytes = (size_t)p.l2CacheSize * 4;
        }
    }
    OPP_HGPU_CHECK(cudaStreamCreateWithFlags(&g.stream, cudaStreamNonBlocking));
    opp_hgpu_timer_init(&g.timer);
    OPP_HGPU_CHECK(cudaMalloc(&g.flush, g.flush_bytes));
    const opp_status_t st = opp_ref_gpu_create(&g.ref);
    if (st != OPP_STATUS_SUCCESS) {
        BENCH_DIE("opp_ref_gpu_create: %s: %s", opp_status_name(st), opp_last_error_message());
    }
    printf("L2 flush: %.0f MiB written between timed runs (outside the timed region)\n\n",
           (double)g.flush_bytes / 1048576.0);
    fflush(stdout);
}

void bench_gpu_shutdown(void) {
    opp_ref_gpu_destroy(g.ref);
    OPP_HGPU_CHECK(cudaFree(g.flush));
    opp_hgpu_timer_destroy(&g.timer);
    OPP_HGPU_CHECK(cudaStreamDestroy(g.stream));
}

void *bench_host_alloc(size_t bytes) {
    void *h = malloc(bytes > 0 ? bytes : 1);
    if (h == NULL) {
        BENCH_DIE("out of host memory (%zu bytes)", bytes);
    }
    return h;
}

double bench_wall_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

uint64_t bench_seed(const bench_opts_t *o, const char *name) {
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
    for (; *name; ++name) {
        h = (h ^ (unsigned char)*name) * 0x100000001b3ull;
    }
    return o->seed ^ h;
}

// --- rows

void bench_fail_row(bench_result_t *r, const char *what, opp_status_t st) {
    r->validated = 0;
    r->timed = 0;
    snprintf(r->validation, sizeof r->validation, "FAILED: %s: %s: %s", what, opp_status_name(st),
             opp_last_error_message());
}

opp_status_t bench_query_kernel(const opp_attention_desc_t *desc, opp_algo_t algo,
                                bench_result_t *r) {
    opp_attention_desc_t d = *desc;
    d.algo = algo;
    const char *name = NULL;
    const opp_status_t st = opp_attention_kernel_query(&d, g.sm_arch, &name);
    if (st == OPP_STATUS_SUCCESS) {
        snprintf(r->kernel, sizeof r->kernel, "%s", name);
    } else if (OPP_STATUS_CATEGORY(st) == OPP_STATUS_NOT_SUPPORTED) {
        r->supported = 0;
        snprintf(r->validation, sizeof r->validation, "%s: not supported (%s)", r->impl,
                 opp_last_error_message());
    } else {
        bench_fail_row(r, "kernel query", st);
    }
    return st;
}

void bench_check_unchanged(const void *dev, const void *host, size_t bytes, bench_result_t *r) {
    if (!r->validated) {
        return;
    }
    void *again = bench_host_alloc(bytes);
    opp_hgpu_d2h(again, dev, bytes);
    if (memcmp(again, host, bytes) != 0) {
        r->validated = 0;
        snprintf(r->validation, sizeof r->validation,
                 "FAILED: output after timing differs from the validated output");
    }
    free(again);
}

// --- timing

opp_status_t bench_timed_run(opp_hgpu_run_fn fn, void *job, double *ms) {
    OPP_HGPU_CHECK(cudaMemsetAsync(g.flush, (int)(g.flushes++ & 0xff), g.flush_bytes, g.stream));
    float f = 0.0f;
    const opp_status_t st = opp_hgpu_timer_run(&g.timer, fn, job, g.stream, &f);
    OPP_HGPU_CHECK(cudaGetLastError());
    *ms = f;
    return st;
}

static int cmp_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void bench_time_impl(const bench_opts_t *o, opp_hgpu_run_fn fn, void *job, double first_ms,
                     bench_result_t *r) {
    const double limit_ms = o->max_seconds * 1e3;
    double ms = first_ms, spent = 0.0;
    const char *which = "validation run";
    printf("  timing %s: %d warm-up + %d runs ...\n", r->impl, o->warmup, o->reps);
    fflush(stdout);
    for (int i = 0; i < o->warmup && ms <= limit_ms; ++i) {
        const opp_status_t st = bench_timed_run(fn, job, &ms);
        if (st != OPP_STATUS_SUCCESS) {
            bench_fail_row(r, "warm-up run", st);
            return;
        }
        which = "warm-up run";
    }
    if (ms > limit_ms) {
        r->timed = 1;
        r->reps = 1;
        r->median_ms = r->min_ms = ms;
        snprintf(r->note, sizeof r->note,
                 "single %s: %.1f s > --max-seconds-per-impl %.0f; repetitions skipped", which,
                 ms / 1e3, o->max_seconds);
    } else {
        double *t = bench_host_alloc(sizeof(double) * (size_t)o->reps);
        int n = 0;
        while (n < o->reps) {
            const opp_status_t st = bench_timed_run(fn, job, &t[n]);
            if (st != OPP_STATUS_SUCCESS) {
                bench_fail_row(r, "timed run", st);
                free(t);
                return;
            }
            spent += t[n++];
            if (spent > limit_ms && n >= 3 && n < o->reps) {
                snprintf(r->note, sizeof r->note,
                         "%d of %d repetitions (they took %.1f s > --max-seconds-per-impl)", n,
                         o->reps, spent / 1e3);
                break;
            }
        }
        qsort(t, (size_t)n, sizeof(double), cmp_double);
        r->timed = 1;
        r->reps = n;
        r->min_ms = t[0];
        r->median_ms = n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
        free(t);
    }
    r->tflops = r->flops / (r->median_ms * 1e-3) / 1e12;
}
