/*
 * gpu_check.c - the GPU part of oppcheck: the exact kernel on the packed
 * layout (L2: vs the CPU packed reference), the same kernel on the padded
 * Attention-24 layouts (vs the packed GPU output), and the cuBLAS padded
 * Attention-24 reference (L3: vs the exact GPU output; f16/bf16 bit for bit,
 * f32 within 1 ulp); then, where a FAST kernel serves the batch, the FAST
 * path on the packed layout (its error against the exact GPU output) and on
 * the padded layouts (L4: bit-identical to the FAST packed output); then the
 * same for the opt-in TF32X3 kernel where it serves the batch (f32, D and
 * Dv <= 64, compute capability 9.0; elsewhere one line says why not), with
 * its error as a multiple of FAST's on the same batch. Times are CUDA-event
 * milliseconds of one run after a warm-up run. Uploads, poison, the runs and their timing are the
 * harness's (harness/gpu_*.h). Exits the process on a CUDA failure (a
 * tool, not the library).
 */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/gpu_a24.h"
#include "harness/gpu_packed.h"
#include "harness/gpu_status.h"
#include "harness/gpu_timer.h"
#include "reference/opp_reference_gpu.h"
#include "tools/oppcheck/oppcheck.h"

int oppcheck_gpu_name(char *name, size_t size) {
    if (opp_hgpu_device_count() == 0) {
        return 0;
    }
    struct cudaDeviceProp p;
    if (cudaGetDeviceProperties(&p, 0) != cudaSuccess) {
        return 0;
    }
    snprintf(name, size, "%s (sm_%d%d, %d SMs)", p.name, p.major, p.minor, p.multiProcessorCount);
    return 1;
}

/* Compares got (valid rows, packed order) with want; max_ulp 0 = bits. */
static int compare_row(oppcheck_row_t *row, const void *got, const void *want, size_t n,
                       opp_dtype_t dt, uint64_t max_ulp) {
    const size_t bad = opp_cmp(got, want, n, dt, max_ulp == 0, max_ulp, row->name, 5, &row->cmp);
    row->ok = bad == 0;
    return row->ok ? 0 : 1;
}

/* The padded runs (exact kernel and cuBLAS reference) for one layout. */
static int run_layout(const opp_lb_t *lb, int32_t rank, opp_lb_poison_t poison, opp_algo_t algo,
                      const void *gpu_packed, oppcheck_table_t *t, opp_ref_gpu_t *ref,
                      cudaStream_t s) {
    const size_t es = opp_dtype_size(lb->dtype);
    const size_t n = opp_hgpu_out_elems(lb);
    opp_lb_padded_t pad;
    if (opp_lb_to_padded(lb, rank, poison, &pad) != 0) {
        fprintf(stderr, "oppcheck: out of host memory for the padded tensors\n");
        return 2;
    }
    void *valid = malloc((n + 1) * es);
    void *hy = malloc((pad.y_elems + 1) * es);
    const opp_ref_attention24_tensors_t host = opp_lb_padded_tensors(&pad);
    opp_ref_attention24_tensors_t dev; /* y poisoned with NaN */
    opp_hgpu_a24_upload(&pad.desc, &host, OPP_HGPU_POISON_NAN, &dev);
    opp_hgpu_nonpad_call_t p = {.nonpad = dev.nonpad_kv_seqlen,
                                .q = dev.q,
                                .k = dev.k,
                                .v = dev.v,
                                .y = dev.y,
                                .stream = s};
    opp_hgpu_nonpad_desc(&pad.desc, &p.desc);
    p.desc.algo = algo;
    int rc = 0;
    char name[96];
    snprintf(name, sizeof(name), "%s%s kernel (Attention-24 %dD, %s pad) vs packed",
             oppcheck_algo_name(algo), algo == OPP_ALGO_EXACT ? " GPU" : "", (int)rank,
             poison == OPP_LB_POISON_NAN ? "NaN" : "finite");
    oppcheck_row_t *row = oppcheck_table_add(t, name);
    opp_status_t st = opp_attention24_nonpad_workspace_size(&p.desc, &p.workspace_bytes);
    if (opp_hgpu_status_ok(st, "opp_attention24_nonpad_workspace_size")) {
        p.workspace = opp_hgpu_alloc(p.workspace_bytes);
        row->ms = opp_hgpu_time_after_warmup(opp_hgpu_nonpad_run, &p, s, &st);
    }
    if (opp_hgpu_status_ok(st, "opp_attention24_nonpad_fwd") &&
        opp_hgpu_status_ok(opp_packed_attention_device_status(p.workspace, p.workspace_bytes, s),
                           "device guard")) {
        opp_hgpu_d2h(hy, dev.y, pad.y_elems * es);
        opp_lb_padded_valid_rows(lb, &pad, hy, valid);
        rc |= compare_row(row, valid, gpu_packed, n, lb->dtype, 0);
    } else {
        row->ok = 0;
        rc = 2;
    }
    if (ref != NULL) {
        opp_hgpu_ref_call_t c = {.ref = ref, .desc = &pad.desc, .dev = &dev, .stream = s};
        snprintf(name, sizeof(name), "cuBLAS padded Attention-24 (%dD, %s pad) vs exact GPU",
                 (int)rank, poison == OPP_LB_POISON_NAN ? "NaN" : "finite");
        row = oppcheck_table_add(t, name);
        opp_hgpu_poison(dev.y, pad.y_elems, lb->dtype, OPP_HGPU_POISON_ONES);
        st = opp_ref_gpu_attention24_workspace_size(&pad.desc, &c.workspace_bytes);
        if (opp_hgpu_status_ok(st, "opp_ref_gpu_attention24_workspace_size")) {
            c.workspace = opp_hgpu_alloc(c.workspace_bytes);
            row->ms = opp_hgpu_time_after_warmup(opp_hgpu_ref_run, &c, s, &st);
        }
        if (opp_hgpu_status_ok(st, "opp_ref_gpu_attention24")) {
            opp_hgpu_d2h(hy, dev.y, pad.y_elems * es);
            opp_lb_padded_valid_rows(lb, &pad, hy, valid);
            /* L3: f16/bf16 bit for bit; f32 within 1 ulp (the flip rate is
             * 100% - bit-identical %). */
            rc |= compare_row(row, valid, gpu_packed, n, lb->dtype,
                              lb->dtype == OPP_DTYPE_F32 ? 1 : 0);
        } else {
            row->ok = 0;
            rc = 2;
        }
        (void)opp_hgpu_free(c.workspace);
    }
    (void)opp_hgpu_a24_free(&dev);
    (void)opp_hgpu_free(p.workspace);
    free(valid);
    free(hy);
    opp_lb_padded_free(&pad);
    return rc;
}

/* An approximate path - algo FAST, or the opt-in TF32X3 - where its kernel
 * serves the batch on this device (else one line says why not): on the
 * packed layout (error vs the exact GPU output `exact`, no NaN), then on
 * the padded layouts (bit-identical to its packed output). r: the packed
 * call of the exact run (its buffers are reused). *err_row: its packed
 * error row (NULL when it did not run). */
static int run_fast(const opp_lb_t *lb, const oppcheck_opts_t *o, opp_hgpu_packed_call_t *r,
                    const void *exact, oppcheck_table_t *t, cudaStream_t s, opp_algo_t algo,
                    const oppcheck_row_t **err_row) {
    const size_t es = opp_dtype_size(lb->dtype);
    const size_t n = opp_hgpu_out_elems(lb);
    const char *alg = oppcheck_algo_name(algo);
    *err_row = NULL;
    r->desc.algo = algo;
    int32_t sm = 0;
    const char *kernel = NULL;
    char name[96];
    opp_status_t st = opp_device_sm_arch(&sm);
    if (st == OPP_STATUS_SUCCESS) {
        st = opp_attention_kernel_query(&r->desc, sm, &kernel);
    }
    if (st != OPP_STATUS_SUCCESS) {
        printf("%s path: not run: %s: %s\n", alg, opp_status_name(st), opp_last_error_message());
        return 0;
    }
    snprintf(name, sizeof(name), "%s kernel %s (packed) vs exact GPU", alg, kernel);
    oppcheck_row_t *row = oppcheck_table_add(t, name);
    opp_hgpu_poison(r->dev->out, n, lb->dtype, OPP_HGPU_POISON_ONES);
    row->ms = opp_hgpu_time_after_warmup(opp_hgpu_packed_run, r, s, &st);
    snprintf(name, sizeof(name), "opp_packed_attention_fwd (%s)", alg);
    if (!opp_hgpu_status_ok(st, name)) {
        row->ok = 0;
        return 2;
    }
    *err_row = row;
    void *fast = malloc(n * es + 1);
    opp_hgpu_d2h(fast, r->dev->out, n * es);
    opp_cmp_error(fast, exact, n, lb->dtype, &row->err);
    /* finite inputs: no NaN / inf, and an error of the fp32-accumulation kind
     * (a broken kernel is off by O(max |y|)) */
    row->ok = row->err.nonfinite == 0 && row->err.max_abs <= 0.02 * row->err.max_want + 1e-3;
    int rc = row->ok ? 0 : 1;
    for (int32_t rank = 4; rank >= 3; --rank) {
        for (int p = 0; p < 2; ++p) {
            if ((o->layouts & (rank == 4 ? 1 : 2)) && (o->poisons & (1 << p))) {
                rc |= run_layout(lb, rank, (opp_lb_poison_t)p, algo, fast, t, NULL, s);
            }
        }
    }
    free(fast);
    return rc;
}

int oppcheck_run_gpu(const opp_lb_t *lb, const oppcheck_opts_t *o, const void *cpu_packed,
                     oppcheck_table_t *t) {
    const size_t es = opp_dtype_size(lb->dtype);
    const size_t n = opp_hgpu_out_elems(lb);
    cudaStream_t s;
    OPP_HGPU_CHECK(cudaStreamCreate(&s));
    opp_hgpu_packed_t dev; /* out poisoned with all-ones bytes (NaN) */
    opp_status_t st = opp_hgpu_packed_upload(lb, OPP_HGPU_POISON_ONES, &dev);
    opp_hgpu_packed_call_t r = {.dev = &dev, .stream = s};
    opp_lb_packed_desc(lb, &r.desc);
    void *gpu_packed = malloc(n * es + 1);
    int rc = 0;
    oppcheck_row_t *row = oppcheck_table_add(t, "exact GPU kernel (packed) vs CPU packed ref");
    if (opp_hgpu_status_ok(st, "opp_packed_attention_workspace_size")) {
        row->ms = opp_hgpu_time_after_warmup(opp_hgpu_packed_run, &r, s, &st);
    }
    if (opp_hgpu_status_ok(st, "opp_packed_attention_fwd") &&
        opp_hgpu_status_ok(
            opp_packed_attention_device_status(dev.workspace, dev.workspace_bytes, s),
            "device guard")) {
        opp_hgpu_d2h(gpu_packed, dev.out, n * es);
        rc |= compare_row(row, gpu_packed, cpu_packed, n, lb->dtype, 0);
        opp_ref_gpu_t *ref = NULL;
        if (!opp_hgpu_status_ok(opp_ref_gpu_create(&ref), "opp_ref_gpu_create")) {
            rc = 2;
        }
        for (int32_t rank = 4; rank >= 3; --rank) {
            for (int p = 0; p < 2; ++p) {
                if ((o->layouts & (rank == 4 ? 1 : 2)) && (o->poisons & (1 << p))) {
                    rc |= run_layout(lb, rank, (opp_lb_poison_t)p, OPP_ALGO_EXACT, gpu_packed, t,
                                     ref, s);
                }
            }
        }
        opp_ref_gpu_destroy(ref);
        const oppcheck_row_t *fast = NULL, *tf32x3 = NULL;
        rc |= run_fast(lb, o, &r, gpu_packed, t, s, OPP_ALGO_FAST, &fast);
        rc |= run_fast(lb, o, &r, gpu_packed, t, s, OPP_ALGO_TF32X3, &tf32x3);
        if (fast != NULL && tf32x3 != NULL && fast->err.max_abs > 0.0 &&
            opp_err_rms(&fast->err) > 0.0) {
            printf("TF32X3 error as a multiple of FAST's on this batch: max abs x%.3g, rms x%.3g "
                   "(issue 11: at most 10)\n",
                   tf32x3->err.max_abs / fast->err.max_abs,
                   opp_err_rms(&tf32x3->err) / opp_err_rms(&fast->err));
        }
    } else {
        row->ok = 0;
        rc = 2;
    }
    (void)opp_hgpu_packed_free(&dev);
    cudaStreamDestroy(s);
    free(gpu_packed);
    return rc & 2 ? 2 : rc;
}
