/*
 * oppbench_gpu.c - one workload of bench/oppbench on the GPU: build the
 * logical batch (harness/logical_batch.h), upload its packed and padded
 * (4D, finite poison) representations, then VALIDATE before timing:
 *   exact   opp_packed_attention_fwd (OPP_ALGO_EXACT) vs the cuBLAS padded
 *           Attention-24 reference (opp_ref_gpu_attention24): bit-identical
 *           for f16/bf16, <= 1 ulp for f32 with the flip count reported (L3
 *           of the agreement contract); optionally vs the CPU reference (L2)
 *   fast    OPP_ALGO_FAST where a FAST kernel serves the workload on this
 *           device: no NaN/inf, max |fast - exact| within the bound of
 *           bench/accuracy.h; max abs and RMS error reported
 *   tf32x3  (only when --impl names it) OPP_ALGO_TF32X3, where it serves the
 *           workload on this device (f32, D <= 64, sm_90): checked exactly
 *           as fast, its max abs and RMS error reported and, beside FAST's,
 *           as multiples of FAST's (the issue 11 criterion: at most 10x)
 * then (--dump) write the tensors for bench/fa2_accuracy.py, then time each
 * implementation of --impl with CUDA events (bench/gpu_common.c), and check
 * that every output still equals its validated copy (determinism).
 * Build and run: see bench/README.md.
 */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/accuracy.h"
#include "bench/bench_gpu.h"
#include "bench/dump.h"
#include "harness/compare.h"
#include "harness/gpu_a24.h"
#include "harness/gpu_buffer.h"
#include "harness/gpu_status.h"
#include "harness/logical_batch.h"

// --- validation

/* Exact output vs the cuBLAS reference's valid rows (L3), both rows. Returns 1 if ok. */
static int validate_l3(const void *exact, const void *ref, size_t n, opp_dtype_t dt,
                       const char *name, bench_result_t *re, bench_result_t *rc) {
    char msg[200];
    const size_t nan_exact = bench_count_nonfinite(exact, n, dt);
    const size_t nan_ref = bench_count_nonfinite(ref, n, dt);
    opp_cmp_stats_t s;
    memset(&s, 0, sizeof s);
    int ok;
    if (nan_exact > 0 || nan_ref > 0) {
        snprintf(msg, sizeof msg, "FAILED: NaN/inf in output (exact %zu, cublas %zu of %zu)",
                 nan_exact, nan_ref, n);
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
    re->validated = rc->validated = ok;
    snprintf(re->validation, sizeof re->validation, "%s", msg);
    snprintf(rc->validation, sizeof rc->validation, "%s", msg);
    return ok;
}

/* Optional L2 check: exact GPU output vs the CPU packed reference. */
static int validate_cpu(const opp_lb_t *lb, const opp_attention_desc_t *desc, const void *exact,
                        size_t n, bench_result_t *re, bench_result_t *rc) {
    void *cpu = bench_host_alloc(n * opp_dtype_size(lb->dtype));
    const double t0 = bench_wall_ms();
    const opp_status_t st =
        opp_ref_packed_attention(desc, lb->cu_q, lb->cu_kv, lb->q, lb->k, lb->v, cpu);
    int ok = 0;
    if (st != OPP_STATUS_SUCCESS) {
        bench_fail_row(re, "CPU reference", st);
        bench_fail_row(rc, "CPU reference", st);
    } else {
        ok = opp_cmp(exact, cpu, n, lb->dtype, 1, 0, "exact vs CPU", 5, NULL) == 0;
        printf("    CPU reference: %.1f s, exact kernel %s\n", (bench_wall_ms() - t0) / 1e3,
               ok ? "bit-identical" : "DIFFERS");
        bench_result_t *rows[2] = {re, rc};
        for (int i = 0; i < 2; ++i) {
            const size_t k = strlen(rows[i]->validation);
            snprintf(rows[i]->validation + k, sizeof rows[i]->validation - k, "; CPU ref %s",
                     ok ? "bit-identical" : "DIFFERS");
            rows[i]->validated = rows[i]->validated && ok;
        }
    }
    free(cpu);
    return ok;
}

/* FAST's (or TF32X3's) first run vs the validated exact output. */
static void validate_fast(const void *h_exact, int exact_ok, size_t n, opp_dtype_t dt,
                          bench_fast_t *f, bench_result_t *r) {
    if (bench_fast_first_run(f, r) != OPP_STATUS_SUCCESS) {
        return;
    }
    if (!exact_ok) {
        snprintf(r->validation, sizeof r->validation,
                 "not validated: the exact output it is compared with failed");
        return;
    }
    bench_fast_grade(f->h_out, h_exact, n, dt, r);
}

/* Appends to TF32X3's validation its errors as multiples of FAST's on the
 * same inputs ("; vs fast: max_abs x1.9 rms x2.3"), when both have them. */
static void compare_with_fast(const bench_result_t *rf, bench_result_t *rt) {
    if (!rt->has_err || !rf->has_err || rf->max_abs_err <= 0.0 || rf->rms_err <= 0.0) {
        return;
    }
    const size_t k = strlen(rt->validation);
    snprintf(rt->validation + k, sizeof rt->validation - k, "; vs fast: max_abs x%.3g rms x%.3g",
             rt->max_abs_err / rf->max_abs_err, rt->rms_err / rf->rms_err);
}

// --- one workload

/* The device side of one workload: the batch packed and padded, the
 * reference's workspace, FAST's and TF32X3's buffers. */
typedef struct run {
    opp_hgpu_packed_t packed;
    opp_ref_attention24_tensors_t padded;
    opp_hgpu_packed_call_t exact;
    opp_hgpu_ref_call_t cublas;
    bench_fast_t fast, tf32x3;
    int has_fast, has_tf32x3;
} run_t;

int bench_gpu_run(const bench_opts_t *o, const opp_workload_t *w, int index,
                  bench_result_t res[BENCH_IMPLS]) {
    for (int k = 0; k < BENCH_IMPLS; ++k) {
        bench_result_init(&res[k], w, k);
    }
    bench_result_t *re = &res[BENCH_IMPL_EXACT], *rf = &res[BENCH_IMPL_FAST],
                   *rc = &res[BENCH_IMPL_CUBLAS], *rt = &res[BENCH_IMPL_TF32X3];
    opp_lb_t lb;
    const double t0 = bench_wall_ms();
    if (opp_lb_from_lengths(&lb, w->dtype, w->batch, w->lq, w->lkv, w->heads, w->kv_heads,
                            w->head_size, w->head_size, 0.0f, w->causal, w->softcap,
                            bench_seed(o, w->name)) != 0) {
        BENCH_DIE("out of host memory for the logical batch of %s", w->name);
    }
    opp_attention_desc_t desc; /* algo EXACT */
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
           (int)lb.max_lkv, (int)pad.desc.q_seqlen, (int)pad.desc.kv_seqlen, re->flops / 1e9,
           (bench_wall_ms() - t0) / 1e3);
    size_t ws_ref = 0;
    opp_status_t st = bench_query_kernel(&desc, OPP_ALGO_EXACT, re);
    if (st == OPP_STATUS_SUCCESS) {
        st = opp_packed_attention_workspace_size(&desc, &re->workspace_bytes);
    }
    if (st == OPP_STATUS_SUCCESS) {
        st = opp_ref_gpu_attention24_workspace_size(&pad.desc, &ws_ref);
    }
    if (st != OPP_STATUS_SUCCESS) {
        for (int k = 0; k < BENCH_IMPLS; ++k) {
            bench_fail_row(&res[k], "exact kernel query / workspace sizes", st);
        }
        opp_lb_padded_free(&pad);
        opp_lb_free(&lb);
        return 1;
    }
    rc->workspace_bytes = ws_ref;

    run_t g;
    memset(&g, 0, sizeof g);
    st = opp_hgpu_packed_upload(&lb, OPP_HGPU_POISON_ONES, &g.packed); /* out: NaN */
    if (st != OPP_STATUS_SUCCESS) {
        BENCH_DIE("opp_packed_attention_workspace_size: %s: %s", opp_status_name(st),
                  opp_last_error_message());
    }
    g.exact =
        (opp_hgpu_packed_call_t){.desc = desc, .dev = &g.packed, .stream = bench_gpu_stream()};
    const opp_ref_attention24_tensors_t host_padded = opp_lb_padded_tensors(&pad);
    opp_hgpu_a24_upload(&pad.desc, &host_padded, OPP_HGPU_POISON_NAN, &g.padded); /* y: NaN */
    g.cublas = (opp_hgpu_ref_call_t){bench_gpu_ref(),        &pad.desc, &g.padded,
                                     opp_hgpu_alloc(ws_ref), ws_ref,    bench_gpu_stream()};
    g.has_fast = bench_fast_setup(&desc, OPP_ALGO_FAST, &g.packed, &g.fast, rf);
    if (o->impl[BENCH_IMPL_TF32X3]) { /* opt-in: only when --impl names it */
        g.has_tf32x3 = bench_fast_setup(&desc, OPP_ALGO_TF32X3, &g.packed, &g.tf32x3, rt);
    }
    printf("  kernels: exact %s, fast %s; workspace: exact %zu, fast %zu, cublas %zu bytes "
           "(%.1f MiB)\n",
           re->kernel, g.has_fast ? rf->kernel : "-", re->workspace_bytes, rf->workspace_bytes,
           ws_ref, (double)ws_ref / 1048576.0);
    /* cudaMemcpy from pageable memory may return before its DMA is done, and
     * the legacy stream does not order ours (non-blocking): wait here. */
    OPP_HGPU_CHECK(cudaDeviceSynchronize());

    /* Validate before timing: one run of each, then compare on the host. */
    void *h_exact = bench_host_alloc(n_out * es), *h_ref = bench_host_alloc(n_out * es);
    void *h_y = bench_host_alloc(pad.y_elems * es + 1);
    double ms_ref = 0.0, ms_exact = 0.0;
    int exact_ran = 0;
    if ((st = bench_timed_run(opp_hgpu_ref_run, &g.cublas, &ms_ref)) != OPP_STATUS_SUCCESS) {
        bench_fail_row(re, "cublas reference run", st);
        bench_fail_row(rc, "cublas reference run", st);
    } else if ((st = bench_timed_run(opp_hgpu_packed_run, &g.exact, &ms_exact)) !=
               OPP_STATUS_SUCCESS) {
        bench_fail_row(re, "exact kernel run", st);
        bench_fail_row(rc, "exact kernel run", st);
    } else if ((st = opp_attention_device_status(g.packed.workspace, g.packed.workspace_bytes,
                                                 bench_gpu_stream())) != OPP_STATUS_SUCCESS) {
        bench_fail_row(re, "exact kernel device status", st);
        bench_fail_row(rc, "exact kernel device status", st);
    } else {
        exact_ran = 1;
        opp_hgpu_d2h(h_exact, g.packed.out, n_out * es);
        opp_hgpu_d2h(h_y, g.padded.y, pad.y_elems * es);
        opp_lb_padded_valid_rows(&lb, &pad, h_y, h_ref);
        if (validate_l3(h_exact, h_ref, n_out, lb.dtype, w->name, re, rc) &&
            o->cpu_ref_max_gflop > 0.0 && re->flops / 1e9 <= o->cpu_ref_max_gflop) {
            validate_cpu(&lb, &desc, h_exact, n_out, re, rc);
        }
    }
    printf("  validation (first runs: cublas %.2f ms, exact %.2f ms): %s\n", ms_ref, ms_exact,
           re->validation);
    if (g.has_fast) {
        validate_fast(h_exact, re->validated, n_out, lb.dtype, &g.fast, rf);
        printf("  fast (%s, first run %.3f ms): %s\n", rf->kernel, g.fast.first_ms, rf->validation);
    } else {
        printf("  %s\n", rf->validation);
    }
    if (g.has_tf32x3) {
        validate_fast(h_exact, re->validated, n_out, lb.dtype, &g.tf32x3, rt);
        compare_with_fast(rf, rt);
        printf("  tf32x3 (%s, first run %.3f ms, workspace %zu bytes): %s\n", rt->kernel,
               g.tf32x3.first_ms, rt->workspace_bytes, rt->validation);
    } else if (o->impl[BENCH_IMPL_TF32X3]) {
        printf("  %s\n", rt->validation);
    }
    fflush(stdout);

    if (o->dump_dir != NULL) {
        char err[512];
        const bench_dump_t d = {o->dump_dir,
                                w->name,
                                index,
                                &lb,
                                exact_ran ? h_exact : NULL,
                                g.fast.h_out,
                                g.has_tf32x3 ? g.tf32x3.h_out : NULL,
                                re->validated,
                                g.has_fast ? rf->kernel : NULL,
                                rf->validation,
                                o->dump_outputs_only};
        const double td = bench_wall_ms();
        if (bench_dump_write(&d, err, sizeof err) != 0) {
            BENCH_DIE("--dump: %s", err);
        }
        printf("  dumped to %s/%s (%.1f s)\n", o->dump_dir, w->name, (bench_wall_ms() - td) / 1e3);
    }

    /* Time what was asked for and validated; then the output must not have changed. */
    opp_hgpu_run_fn fns[BENCH_IMPLS] = {opp_hgpu_packed_run, opp_hgpu_packed_run, opp_hgpu_ref_run,
                                        opp_hgpu_packed_run};
    void *jobs[BENCH_IMPLS] = {&g.exact, &g.fast.call, &g.cublas, &g.tf32x3.call};
    const double first[BENCH_IMPLS] = {ms_exact, g.fast.first_ms, ms_ref, g.tf32x3.first_ms};
    for (int k = 0; k < BENCH_IMPLS; ++k) {
        if (o->impl[k] && res[k].validated) {
            bench_time_impl(o, fns[k], jobs[k], first[k], &res[k]);
        }
    }
    if (o->impl[BENCH_IMPL_EXACT]) {
        bench_check_unchanged(g.packed.out, h_exact, n_out * es, re);
    }
    if (o->impl[BENCH_IMPL_FAST] && g.has_fast) {
        bench_check_unchanged(g.fast.dev.out, g.fast.h_out, n_out * es, rf);
    }
    if (g.has_tf32x3) {
        bench_check_unchanged(g.tf32x3.dev.out, g.tf32x3.h_out, n_out * es, rt);
    }
    if (o->impl[BENCH_IMPL_CUBLAS] && rc->validated) {
        void *again = bench_host_alloc(n_out * es);
        opp_hgpu_d2h(h_y, g.padded.y, pad.y_elems * es);
        opp_lb_padded_valid_rows(&lb, &pad, h_y, again);
        if (memcmp(again, h_ref, n_out * es) != 0) {
            rc->validated = 0;
            snprintf(rc->validation, sizeof rc->validation,
                     "FAILED: output after timing differs from the validated output");
        }
        free(again);
    }

    bench_fast_free(&g.fast); /* nothing to free when FAST does not serve */
    bench_fast_free(&g.tf32x3);
    OPP_HGPU_CHECK(opp_hgpu_packed_free(&g.packed));
    OPP_HGPU_CHECK(opp_hgpu_a24_free(&g.padded));
    OPP_HGPU_CHECK(opp_hgpu_free(g.cublas.workspace));
    free(h_exact);
    free(h_ref);
    free(h_y);
    opp_lb_padded_free(&pad);
    opp_lb_free(&lb);
    const int tf32x3_ok = !o->impl[BENCH_IMPL_TF32X3] || rt->validated || !rt->supported;
    return (re->validated && rc->validated && (rf->validated || !rf->supported) && tf32x3_ok) ? 0
                                                                                              : 1;
}
