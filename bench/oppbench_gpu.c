/*
 * oppbench_gpu.c - the GPU side of bench/oppbench: for one workload, build
 * the logical batch (harness/logical_batch.h), upload its packed and padded
 * (4D, finite poison) representations, VALIDATE the exact packed kernel
 * (opp_packed_attention_fwd) against the cuBLAS padded Attention-24
 * reference (opp_ref_gpu_attention24) - bit-identical for f16/bf16, <= 1 ulp
 * for f32 with the flip count reported (L3 of the agreement contract) - and
 * only then time each implementation with CUDA events: warm-up runs, then
 * repetitions, each preceded by an L2 flush outside the timed region.
 *
 * Every CUDA call is checked and exits on error (bench code, STYLE.md §6).
 * Uploads, poison, the two implementations as calls and their event timing
 * are the harness's (harness/gpu_*.h), shared with the tests and oppcheck.
 * Build and run: see bench/README.md.
 */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/oppbench.h"
#include "harness/compare.h"
#include "harness/gpu_a24.h"
#include "harness/gpu_packed.h"
#include "harness/gpu_status.h"
#include "harness/gpu_timer.h"
#include "harness/logical_batch.h"
#include "lib/oppacked.h"
#include "reference/opp_reference_gpu.h"

static struct {
    cudaStream_t stream;
    opp_hgpu_timer_t timer;
    void *flush;
    size_t flush_bytes;
    unsigned flushes;
    opp_ref_gpu_t *ref;
} g;

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

static void *host_alloc(size_t bytes) {
    void *h = malloc(bytes > 0 ? bytes : 1);
    if (h == NULL) {
        BENCH_DIE("out of host memory (%zu bytes)", bytes);
    }
    return h;
}

static double wall_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* One run bracketed by events (after an L2 flush outside them); *ms is the
 * event time. Returns the run's status. */
static opp_status_t timed_run(opp_hgpu_run_fn fn, void *job, double *ms) {
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

static void fail_row(bench_result_t *r, const char *what, opp_status_t st) {
    r->validated = 0;
    r->timed = 0;
    snprintf(r->validation, sizeof r->validation, "FAILED: %s: %s: %s", what, opp_status_name(st),
             opp_last_error_message());
}

/* Warm-up runs then repetitions of fn; first_ms is the validation run. */
static void time_impl(const bench_opts_t *o, opp_hgpu_run_fn fn, void *job, double first_ms,
                      bench_result_t *r) {
    const double limit_ms = o->max_seconds * 1e3;
    double ms = first_ms, spent = 0.0;
    const char *which = "validation run";
    for (int i = 0; i < o->warmup && ms <= limit_ms; ++i) {
        const opp_status_t st = timed_run(fn, job, &ms);
        if (st != OPP_STATUS_SUCCESS) {
            fail_row(r, "warm-up run", st);
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
        return;
    }
    double *t = host_alloc(sizeof(double) * (size_t)o->reps);
    int n = 0;
    while (n < o->reps) {
        const opp_status_t st = timed_run(fn, job, &t[n]);
        if (st != OPP_STATUS_SUCCESS) {
            fail_row(r, "timed run", st);
            free(t);
            return;
        }
        spent += t[n++];
        if (spent > limit_ms && n >= 3 && n < o->reps) {
            snprintf(r->note, sizeof r->note,
                     "%d of %d repetitions (they took %.1f s > --max-seconds-per-impl)", n, o->reps,
                     spent / 1e3);
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

// --- validation

static size_t count_nan(const void *buf, size_t n, opp_dtype_t dt) {
    size_t nan = 0;
    for (size_t i = 0; i < n; ++i) {
        if (dt == OPP_DTYPE_F32) {
            uint32_t b;
            memcpy(&b, (const char *)buf + 4 * i, 4);
            nan += (b & 0x7fffffffu) > 0x7f800000u;
        } else {
            uint16_t b;
            memcpy(&b, (const char *)buf + 2 * i, 2);
            nan += (b & 0x7fffu) > (dt == OPP_DTYPE_F16 ? 0x7c00u : 0x7f80u);
        }
    }
    return nan;
}

/* Exact output vs the cuBLAS reference's valid rows (L3). Returns 1 if ok. */
static int validate_l3(const void *exact, const void *ref, size_t n, opp_dtype_t dt,
                       const char *name, bench_result_t res[2]) {
    char msg[200];
    const size_t nan_exact = count_nan(exact, n, dt), nan_ref = count_nan(ref, n, dt);
    opp_cmp_stats_t s;
    memset(&s, 0, sizeof s);
    int ok;
    if (nan_exact > 0 || nan_ref > 0) {
        snprintf(msg, sizeof msg, "FAILED: NaN in output (exact %zu, cublas %zu of %zu)", nan_exact,
                 nan_ref, n);
        ok = 0;
    } else if (dt == OPP_DTYPE_F32) {
        const size_t bad = opp_cmp(exact, ref, n, dt, 0, 1, name, 5, &s);
        const size_t flips = s.compared - s.identical;
        ok = bad == 0;
        if (ok) {
            snprintf(msg, sizeof msg, "ok: f32, %zu of %zu elems flip 1 ulp (rate %.2e)", flips, n,
                     n ? (double)flips / (double)n : 0.0);
        } else {
            snprintf(msg, sizeof msg, "FAILED: f32, %zu of %zu elems > 1 ulp (max %llu)", bad, n,
                     (unsigned long long)s.max_ulp);
        }
    } else {
        const size_t bad = opp_cmp(exact, ref, n, dt, 1, 0, name, 5, &s);
        ok = bad == 0;
        if (ok) {
            snprintf(msg, sizeof msg, "ok: %zu elems bit-identical", n);
        } else {
            snprintf(msg, sizeof msg, "FAILED: %zu of %zu elems differ (max %llu ulp)", bad, n,
                     (unsigned long long)s.max_ulp);
        }
    }
    for (int i = 0; i < 2; ++i) {
        res[i].validated = ok;
        snprintf(res[i].validation, sizeof res[i].validation, "%s", msg);
    }
    return ok;
}

/* Optional L2 check: exact GPU output vs the CPU packed reference. */
static int validate_cpu(const opp_lb_t *lb, const opp_attention_desc_t *desc, const void *exact,
                        size_t n, bench_result_t res[2]) {
    void *cpu = host_alloc(n * opp_dtype_size(lb->dtype));
    const double t0 = wall_ms();
    const opp_status_t st =
        opp_ref_packed_attention(desc, lb->cu_q, lb->cu_kv, lb->q, lb->k, lb->v, cpu);
    int ok = 0;
    if (st != OPP_STATUS_SUCCESS) {
        fail_row(&res[0], "CPU reference", st);
        fail_row(&res[1], "CPU reference", st);
    } else {
        ok = opp_cmp(exact, cpu, n, lb->dtype, 1, 0, "exact vs CPU", 5, NULL) == 0;
        printf("    CPU reference: %.1f s, exact kernel %s\n", (wall_ms() - t0) / 1e3,
               ok ? "bit-identical" : "DIFFERS");
        for (int i = 0; i < 2; ++i) {
            const size_t k = strlen(res[i].validation);
            snprintf(res[i].validation + k, sizeof res[i].validation - k, "; CPU ref %s",
                     ok ? "bit-identical" : "DIFFERS");
            res[i].validated = res[i].validated && ok;
        }
    }
    free(cpu);
    return ok;
}

// --- one workload

static uint64_t fnv1a(const char *s) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; ++s) {
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    }
    return h;
}

int bench_gpu_run(const bench_opts_t *o, const opp_workload_t *w, bench_result_t res[2]) {
    const double flops = opp_workload_flops(w);
    opp_lb_t lb;
    const double t0 = wall_ms();
    if (opp_lb_from_lengths(&lb, w->dtype, w->batch, w->lq, w->lkv, w->heads, w->kv_heads,
                            w->head_size, w->head_size, 0.0f, w->causal, w->softcap,
                            o->seed ^ fnv1a(w->name)) != 0) {
        BENCH_DIE("out of host memory for the logical batch of %s", w->name);
    }
    opp_attention_desc_t desc;
    opp_lb_packed_desc(&lb, &desc);
    opp_lb_padded_t pad;
    if (opp_lb_to_padded(&lb, 4, OPP_LB_POISON_FINITE, &pad) != 0) {
        BENCH_DIE("out of host memory for the padded representation of %s", w->name);
    }
    const size_t es = opp_dtype_size(lb.dtype);
    const size_t n_out = opp_hgpu_out_elems(&lb);
    printf("  batch: B=%d total_q=%lld total_kv=%lld max L_q=%d max L_kv=%d, padded S_q=%d "
           "S_kv=%d, %.2f GFLOP (built in %.1f s)\n",
           (int)lb.batch, (long long)lb.total_q, (long long)lb.total_kv, (int)lb.max_lq,
           (int)lb.max_lkv, (int)pad.desc.q_seqlen, (int)pad.desc.kv_seqlen, flops / 1e9,
           (wall_ms() - t0) / 1e3);
    size_t ws_exact = 0, ws_ref = 0;
    opp_status_t st = opp_packed_attention_workspace_size(&desc, &ws_exact);
    if (st != OPP_STATUS_SUCCESS) {
        fail_row(&res[0], "exact workspace size", st);
        fail_row(&res[1], "exact workspace size", st);
        opp_lb_padded_free(&pad);
        opp_lb_free(&lb);
        return 1;
    }
    st = opp_ref_gpu_attention24_workspace_size(&pad.desc, &ws_ref);
    if (st != OPP_STATUS_SUCCESS) {
        fail_row(&res[0], "cublas workspace size", st);
        fail_row(&res[1], "cublas workspace size", st);
        opp_lb_padded_free(&pad);
        opp_lb_free(&lb);
        return 1;
    }
    res[BENCH_IMPL_EXACT].workspace_bytes = ws_exact;
    res[BENCH_IMPL_CUBLAS].workspace_bytes = ws_ref;
    printf("  workspace: exact %zu bytes (%.1f MiB), cublas %zu bytes (%.1f MiB)\n", ws_exact,
           (double)ws_exact / 1048576.0, ws_ref, (double)ws_ref / 1048576.0);

    opp_hgpu_packed_t packed; /* out: all-ones bytes, NaN in every dtype */
    st = opp_hgpu_packed_upload(&lb, OPP_HGPU_POISON_ONES, &packed);
    if (st != OPP_STATUS_SUCCESS) {
        BENCH_DIE("opp_packed_attention_workspace_size: %s: %s", opp_status_name(st),
                  opp_last_error_message());
    }
    opp_hgpu_packed_call_t ej = {.desc = desc, .dev = &packed, .stream = g.stream};
    const opp_ref_attention24_tensors_t host_padded = opp_lb_padded_tensors(&pad);
    opp_ref_attention24_tensors_t padded; /* y: the dtype's NaN */
    opp_hgpu_a24_upload(&pad.desc, &host_padded, OPP_HGPU_POISON_NAN, &padded);
    opp_hgpu_ref_call_t cj = {g.ref, &pad.desc, &padded, opp_hgpu_alloc(ws_ref), ws_ref, g.stream};
    /* cudaMemcpy from pageable memory may return before its DMA is done, and
     * the legacy stream does not order g.stream (non-blocking): wait here. */
    OPP_HGPU_CHECK(cudaDeviceSynchronize());

    /* Validate before timing: one run of each, then compare on the host. */
    void *h_exact = host_alloc(n_out * es), *h_ref = host_alloc(n_out * es);
    void *h_y = host_alloc(pad.y_elems * es + 1);
    double ms_ref = 0.0, ms_exact = 0.0;
    int ok = 0;
    if ((st = timed_run(opp_hgpu_ref_run, &cj, &ms_ref)) != OPP_STATUS_SUCCESS) {
        fail_row(&res[0], "cublas reference run", st);
        fail_row(&res[1], "cublas reference run", st);
    } else if ((st = timed_run(opp_hgpu_packed_run, &ej, &ms_exact)) != OPP_STATUS_SUCCESS) {
        fail_row(&res[0], "exact kernel run", st);
        fail_row(&res[1], "exact kernel run", st);
    } else if ((st = opp_packed_attention_device_status(packed.workspace, ws_exact, g.stream)) !=
               OPP_STATUS_SUCCESS) {
        fail_row(&res[0], "exact kernel device status", st);
        fail_row(&res[1], "exact kernel device status", st);
    } else {
        opp_hgpu_d2h(h_exact, packed.out, n_out * es);
        opp_hgpu_d2h(h_y, padded.y, pad.y_elems * es);
        opp_lb_padded_valid_rows(&lb, &pad, h_y, h_ref);
        ok = validate_l3(h_exact, h_ref, n_out, lb.dtype, w->name, res);
        if (ok && o->cpu_ref_max_gflop > 0.0 && flops / 1e9 <= o->cpu_ref_max_gflop) {
            ok = validate_cpu(&lb, &desc, h_exact, n_out, res);
        }
    }
    printf("  validation (first runs: cublas %.2f ms, exact %.2f ms): %s\n", ms_ref, ms_exact,
           res[0].validation);
    fflush(stdout);

    /* Time what was asked for; then the output must not have changed. */
    opp_hgpu_run_fn fns[2] = {opp_hgpu_packed_run, opp_hgpu_ref_run};
    void *jobs[2] = {&ej, &cj};
    const double first[2] = {ms_exact, ms_ref};
    const int want[2] = {o->impl_exact, o->impl_cublas};
    for (int i = 0; ok && i < 2; ++i) {
        if (!want[i]) {
            continue;
        }
        printf("  timing %s: %d warm-up + %d runs ...\n", res[i].impl, o->warmup, o->reps);
        fflush(stdout);
        time_impl(o, fns[i], jobs[i], first[i], &res[i]);
        if (res[i].timed) {
            res[i].tflops = flops / (res[i].median_ms * 1e-3) / 1e12;
        }
    }
    if (ok && o->impl_exact && res[0].validated) {
        void *again = host_alloc(n_out * es);
        opp_hgpu_d2h(again, packed.out, n_out * es);
        if (memcmp(again, h_exact, n_out * es) != 0) {
            res[0].validated = 0;
            snprintf(res[0].validation, sizeof res[0].validation,
                     "FAILED: output after timing differs from the validated output");
        }
        free(again);
    }
    if (ok && o->impl_cublas && res[1].validated) {
        void *again = host_alloc(n_out * es);
        opp_hgpu_d2h(h_y, padded.y, pad.y_elems * es);
        opp_lb_padded_valid_rows(&lb, &pad, h_y, again);
        if (memcmp(again, h_ref, n_out * es) != 0) {
            res[1].validated = 0;
            snprintf(res[1].validation, sizeof res[1].validation,
                     "FAILED: output after timing differs from the validated output");
        }
        free(again);
    }

    OPP_HGPU_CHECK(opp_hgpu_packed_free(&packed));
    OPP_HGPU_CHECK(opp_hgpu_a24_free(&padded));
    OPP_HGPU_CHECK(opp_hgpu_free(cj.workspace));
    free(h_exact);
    free(h_ref);
    free(h_y);
    opp_lb_padded_free(&pad);
    opp_lb_free(&lb);
    return (res[0].validated && res[1].validated) ? 0 : 1;
}
