/*
 * onnx_gpu.c - the GPU paths of oppcheck --onnx-test, run per case after the
 * CPU Attention-24 reference (onnx_check.c):
 *
 *   cuBLAS reference  the full operator (reference/opp_reference_gpu.h) on
 *                     device copies of the case's inputs, producing every
 *                     output the case names; each output is compared bit
 *                     for bit with the case's expected output AND with the
 *                     CPU reference's output.
 *   exact kernel      opp_attention24_nonpad_fwd() (the library) on the same
 *                     device inputs, when the case fits that entry: no
 *                     attn_mask, no past. nonpad_kv_seqlen is the case's, or
 *                     S_kv for every sequence when the case has none; a
 *                     causal case without nonpad_kv_seqlen runs only when
 *                     S_q == S_kv (ONNX's causal offset is then 0, the
 *                     entry's is nonpad - S_q). Its Y is compared bit for
 *                     bit with the CPU reference's Y; the device guard's
 *                     status is read after the run.
 *   FAST kernel       the same entry with OPP_ALGO_FAST, where a FAST kernel
 *                     serves the case (f16/bf16, head sizes multiples of 8):
 *                     Y's error against the CPU reference's (max abs, RMS;
 *                     no NaN; max abs within 2% of max |Y|) on the valid
 *                     query rows (a golden case's sidecar names them; its
 *                     padded query rows hold poison up to 1e30).
 *   TF32X3 kernel     the same with the opt-in OPP_ALGO_TF32X3, where it
 *                     serves the case on this device (f32, D and Dv <= 64,
 *                     compute capability 9.0; else "not run" and why),
 *                     compared as the FAST kernel.
 *
 * Output per case, after the CPU reference line:
 *   <case>: cuBLAS reference (0.4 ms): Y: bit-identical; vs CPU reference: bit-identical
 *   <case>: exact kernel (0.1 ms): Y vs CPU reference: bit-identical
 *   <case>: exact kernel: not run (attn_mask)
 *   <case>: FAST kernel (0.1 ms): Y vs CPU reference: max abs err 0.0009, rms 0.0002, 0 non-finite
 *   <case>: TF32X3 kernel: not run (NOT_SUPPORTED_DTYPE: no TF32X3 kernel for q_dtype = f16 ...)
 * Device outputs start as all-ones bytes (NaN in every float dtype), so an
 * element a path does not write shows up. Uploads, poison, the runs and
 * their timing are the harness's (harness/gpu_*.h). A CUDA failure ends
 * the process (a tool, not the library).
 */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/gpu_a24.h"
#include "harness/gpu_packed.h"
#include "harness/gpu_status.h"
#include "harness/gpu_timer.h"
#include "harness/onnx_attention_case.h"
#include "reference/opp_reference_gpu.h"
#include "tools/oppcheck/oppcheck.h"

struct oppcheck_onnx_gpu {
    opp_ref_gpu_t *ref;
    cudaStream_t stream;
    opp_hgpu_ws_t ws; /* grown on demand, shared by both paths */
};

int oppcheck_onnx_gpu_open(oppcheck_onnx_gpu_t **out) {
    *out = NULL;
    oppcheck_onnx_gpu_t *g = calloc(1, sizeof(*g));
    if (g == NULL) {
        fprintf(stderr, "oppcheck: out of host memory\n");
        return 2;
    }
    if (!opp_hgpu_status_ok(opp_ref_gpu_create(&g->ref), "opp_ref_gpu_create")) {
        free(g);
        return 2;
    }
    OPP_HGPU_CHECK(cudaStreamCreate(&g->stream));
    *out = g;
    return 0;
}

void oppcheck_onnx_gpu_close(oppcheck_onnx_gpu_t *g) {
    if (g != NULL) {
        (void)opp_hgpu_ws_free(&g->ws);
        cudaStreamDestroy(g->stream);
        opp_ref_gpu_destroy(g->ref);
        free(g);
    }
}

/* Elements of output slot s of desc (n from opp_ref_attention24_sizes). */
static size_t output_elems(const opp_ref_attention24_sizes_t *n, int slot) {
    const size_t elems[OPP_A24_NUM_OUTPUTS] = {n->y, n->present_key, n->present_value, n->qk};
    return elems[slot];
}

/* The cuBLAS reference on dev (inputs uploaded, outputs poisoned); prints
 * its line. Returns 0 agreed, 1 differs, 2 error. */
static int check_cublas(oppcheck_onnx_gpu_t *g, const char *path, const opp_onnx_case_t *c,
                        const opp_ref_attention24_sizes_t *n, const opp_ref_attention24_desc_t *d,
                        const opp_ref_attention24_tensors_t *ref,
                        const opp_ref_attention24_tensors_t *dev) {
    char err[1024], prefix[1200], line[1024];
    size_t need = 0;
    if (!opp_hgpu_status_ok(opp_ref_gpu_attention24_workspace_size(d, &need),
                            "opp_ref_gpu_attention24_workspace_size")) {
        printf("%s: cuBLAS reference: ERROR (workspace size)\n", path);
        return 2;
    }
    void *ws = opp_hgpu_ws_reserve(&g->ws, need);
    opp_hgpu_ref_call_t call = {g->ref, d, dev, ws, g->ws.bytes, g->stream};
    opp_status_t st;
    const double ms = opp_hgpu_time_after_warmup(opp_hgpu_ref_run, &call, g->stream, &st);
    if (!opp_hgpu_status_ok(st, "opp_ref_gpu_attention24")) {
        printf("%s: cuBLAS reference FAILED: %s\n", path, opp_status_name(st));
        return 2;
    }
    /* Download into host buffers shaped like the case's outputs. */
    opp_ref_attention24_tensors_t got = *ref;
    got.y = got.present_key = got.present_value = got.qk_matmul_output = NULL;
    if (opp_onnx_attention_alloc_outputs(c, d, &got, err, sizeof(err)) != 0) {
        printf("%s: cuBLAS reference: ERROR: %s\n", path, err);
        return 2;
    }
    opp_hgpu_a24_download(d, dev, &got);
    opp_cmp_stats_t vs_cpu;
    memset(&vs_cpu, 0, sizeof(vs_cpu));
    size_t cpu_bad = 0;
    for (int s = 0; s < OPP_A24_NUM_OUTPUTS; ++s) {
        const void *h = opp_onnx_attention_output_ptr(&got, s);
        const void *dv = opp_onnx_attention_output_ptr(dev, s);
        const void *want = opp_onnx_attention_output_ptr(ref, s);
        if (h == NULL || dv == NULL || want == NULL) {
            continue;
        }
        snprintf(prefix, sizeof(prefix), "%s: cuBLAS vs CPU reference: %s", path,
                 opp_onnx_attention_output_name(s));
        cpu_bad += opp_cmp(h, want, output_elems(n, s), d->dtype, 1, 0, prefix, 3, &vs_cpu);
    }
    opp_onnx_attention_result_t r;
    snprintf(prefix, sizeof(prefix), "%s: cuBLAS: ", path);
    const int rc = opp_onnx_attention_compare(c, d, &got, prefix, 3, &r, err, sizeof(err));
    opp_onnx_attention_free_outputs(&got);
    if (rc < 0) {
        printf("%s: cuBLAS reference: ERROR: %s\n", path, err);
        return 2;
    }
    opp_onnx_attention_result_str(&r, line, sizeof(line));
    if (cpu_bad == 0) {
        printf("%s: cuBLAS reference (%.2f ms): %s; vs CPU reference: bit-identical\n", path, ms,
               line);
    } else {
        printf("%s: cuBLAS reference (%.2f ms): %s; vs CPU reference: %zu of %zu elements "
               "differ, max %llu ulp\n",
               path, ms, line, cpu_bad, vs_cpu.compared, (unsigned long long)vs_cpu.max_ulp);
    }
    return rc == 0 && cpu_bad == 0 ? 0 : 1;
}

/* Why the exact entry cannot run this case, or NULL when it can. */
static const char *exact_not_applicable(const opp_ref_attention24_desc_t *d) {
    if (d->mask_dtype != OPP_DTYPE_UNDEFINED) {
        return "attn_mask";
    }
    if (d->has_past) {
        return "past_key/past_value";
    }
    if (d->is_causal && !d->has_nonpad && d->q_seqlen != d->kv_seqlen) {
        return "causal without nonpad_kv_seqlen and S_q != S_kv: ONNX's offset is 0, the "
               "entry's nonpad - S_q";
    }
    return NULL;
}

/* The valid (tail) query rows of a golden case (its logical_batch.txt): got
 * and want compacted to them in place, so the FAST comparison skips the
 * padded query rows, whose inputs are the case's poison (up to 1e30 in
 * bf16: fp32 scores of those rows overflow by design, and ONNX's padded
 * rows are never compared by the agreement contract). Without a sidecar
 * (ONNX's own cases) every row counts. @return : the elements kept. */
static size_t keep_valid_rows(const char *path, const opp_ref_attention24_desc_t *d, void *got,
                              void *want, size_t n) {
    char sc_path[4200], err[512];
    snprintf(sc_path, sizeof(sc_path), "%s/logical_batch.txt", path);
    opp_onnx_sidecar_t sc;
    if (opp_onnx_sidecar_load(sc_path, &sc, err, sizeof(err)) != 0 || sc.batch != d->batch) {
        opp_onnx_sidecar_free(&sc);
        return n;
    }
    const size_t es = opp_dtype_size(d->dtype), row = (size_t)d->v_head_size * es;
    size_t kept = 0;
    for (int32_t b = 0; b < d->batch; ++b) {
        for (int32_t h = 0; h < d->q_num_heads; ++h) {
            for (int32_t i = d->q_seqlen - sc.lq[b]; i < d->q_seqlen; ++i) {
                const size_t at = d->input_rank == 4
                                      ? (((size_t)b * d->q_num_heads + h) * d->q_seqlen + i)
                                      : (((size_t)b * d->q_seqlen + i) * d->q_num_heads + h);
                memmove((char *)got + kept * es, (char *)got + at * row, row);
                memmove((char *)want + kept * es, (char *)want + at * row, row);
                kept += (size_t)d->v_head_size;
            }
        }
    }
    opp_onnx_sidecar_free(&sc);
    return kept;
}

/* Prints how Y of the kernel (algo) compares with the CPU reference's:
 * EXACT bit for bit, FAST and TF32X3 by their error (no NaN,
 * fp32-accumulation size). @return : 0 agreed, 1 not. */
static int compare_y(const char *path, const char *kernel, opp_algo_t algo, double ms,
                     const void *got, const void *want, size_t n, opp_dtype_t dt) {
    if (algo != OPP_ALGO_EXACT) {
        opp_err_stats_t err;
        memset(&err, 0, sizeof(err));
        opp_cmp_error(got, want, n, dt, &err); /* n: the valid rows (keep_valid_rows) */
        const int ok = err.nonfinite == 0 && err.max_abs <= 0.02 * err.max_want + 1e-3;
        printf("%s: %s (%.2f ms): Y vs CPU reference: max abs err %.3g, rms %.3g, %zu non-finite"
               "%s\n",
               path, kernel, ms, err.max_abs, opp_err_rms(&err), err.nonfinite,
               ok ? "" : "  DISAGREES");
        return ok ? 0 : 1;
    }
    char what[1200];
    opp_cmp_stats_t cmp;
    memset(&cmp, 0, sizeof(cmp));
    snprintf(what, sizeof(what), "%s: %s vs CPU reference: Y", path, kernel);
    const size_t bad = opp_cmp(got, want, n, dt, 1, 0, what, 3, &cmp);
    if (bad == 0) {
        printf("%s: %s (%.2f ms): Y vs CPU reference: bit-identical\n", path, kernel, ms);
    } else {
        printf("%s: %s (%.2f ms): Y vs CPU reference: %zu of %zu elements differ, max %llu ulp\n",
               path, kernel, ms, bad, cmp.compared, (unsigned long long)cmp.max_ulp);
    }
    return bad == 0 ? 0 : 1;
}

/* The library's kernel of `algo` (EXACT, or FAST / TF32X3 where one serves
 * the case) on dev's Q, K, V; prints its line. 0 / 1 / 2 as above. */
static int check_kernel(oppcheck_onnx_gpu_t *g, const char *path,
                        const opp_ref_attention24_sizes_t *n, const opp_ref_attention24_desc_t *d,
                        const opp_ref_attention24_tensors_t *ref,
                        const opp_ref_attention24_tensors_t *dev, opp_algo_t algo) {
    char kernel[32];
    snprintf(kernel, sizeof(kernel), "%s kernel", oppcheck_algo_name(algo));
    const char *why = exact_not_applicable(d);
    if (why != NULL) {
        printf("%s: %s: not run (%s)\n", path, kernel, why);
        return 0;
    }
    opp_hgpu_nonpad_call_t e;
    memset(&e, 0, sizeof(e));
    opp_hgpu_nonpad_desc(d, &e.desc);
    e.desc.algo = algo;
    opp_status_t chk = opp_attention24_desc_check(&e.desc);
    int32_t sm = 0;
    const char *name = NULL;
    if (chk == OPP_STATUS_SUCCESS && algo == OPP_ALGO_TF32X3 && /* 9.0 only: ask first */
        (chk = opp_device_sm_arch(&sm)) == OPP_STATUS_SUCCESS) {
        chk = opp_attention24_kernel_query(&e.desc, sm, &name);
    }
    if (chk != OPP_STATUS_SUCCESS) {
        const int unsupported = chk >= OPP_STATUS_NOT_SUPPORTED && chk < OPP_STATUS_CUDA_ERROR;
        printf("%s: %s: %s (%s: %s)\n", path, kernel, unsupported ? "not run" : "ERROR",
               opp_status_name(chk), opp_last_error_message());
        return unsupported ? 0 : 2;
    }
    const size_t es = opp_dtype_size(d->dtype);
    int64_t *full_nonpad = NULL;
    if (!d->has_nonpad) { /* every key is valid */
        full_nonpad = opp_hgpu_upload_full_nonpad(d->batch, d->kv_seqlen);
    }
    e.nonpad = full_nonpad != NULL ? full_nonpad : dev->nonpad_kv_seqlen;
    e.q = dev->q;
    e.k = dev->k;
    e.v = dev->v;
    e.y = opp_hgpu_alloc_poisoned(n->y, d->dtype, OPP_HGPU_POISON_ONES);
    e.stream = g->stream;
    int rc = 2;
    void *host_y = malloc(n->y * es + 1);
    opp_status_t st = opp_attention24_nonpad_workspace_size(&e.desc, &e.workspace_bytes);
    if (host_y == NULL) {
        fprintf(stderr, "oppcheck: out of host memory\n");
    } else if (opp_hgpu_status_ok(st, "opp_attention24_nonpad_workspace_size")) {
        e.workspace = opp_hgpu_ws_reserve(&g->ws, e.workspace_bytes);
        const double ms = opp_hgpu_time_after_warmup(opp_hgpu_nonpad_run, &e, g->stream, &st);
        if (!opp_hgpu_status_ok(st, "opp_attention24_nonpad_fwd") ||
            !opp_hgpu_status_ok(
                opp_attention_device_status(e.workspace, e.workspace_bytes, g->stream),
                "device guard")) {
            printf("%s: %s FAILED: %s\n", path, kernel, opp_status_name(st));
        } else {
            opp_hgpu_d2h(host_y, e.y, n->y * es);
            size_t count = n->y;
            void *want = (void *)ref->y;
            void *want_copy = NULL;
            if (algo != OPP_ALGO_EXACT && (want_copy = malloc(n->y * es + 1)) != NULL) {
                memcpy(want_copy, ref->y, n->y * es);
                want = want_copy;
                count = keep_valid_rows(path, d, host_y, want, n->y);
            }
            rc = compare_y(path, kernel, algo, ms, host_y, want, count, d->dtype);
            free(want_copy);
        }
    }
    free(host_y);
    (void)opp_hgpu_free(full_nonpad);
    (void)opp_hgpu_free(e.y);
    return rc;
}

int oppcheck_onnx_gpu_case(oppcheck_onnx_gpu_t *g, const char *path, const opp_onnx_case_t *c,
                           const opp_ref_attention24_desc_t *d,
                           const opp_ref_attention24_tensors_t *ref) {
    opp_ref_attention24_sizes_t n;
    opp_ref_attention24_sizes(d, &n);
    opp_ref_attention24_tensors_t dev; /* outputs poisoned with all-ones bytes */
    opp_hgpu_a24_upload(d, ref, OPP_HGPU_POISON_ONES, &dev);
    const int a = check_cublas(g, path, c, &n, d, ref, &dev);
    const int b = check_kernel(g, path, &n, d, ref, &dev, OPP_ALGO_EXACT);
    const int f = check_kernel(g, path, &n, d, ref, &dev, OPP_ALGO_FAST);
    const int t = check_kernel(g, path, &n, d, ref, &dev, OPP_ALGO_TF32X3);
    (void)opp_hgpu_a24_free(&dev);
    const int worst = a > b ? a : b, approx = f > t ? f : t;
    return worst > approx ? worst : approx;
}
