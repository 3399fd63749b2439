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
 *
 * Output per case, after the CPU reference line:
 *   <case>: cuBLAS reference (0.4 ms): Y: bit-identical; vs CPU reference: bit-identical
 *   <case>: exact kernel (0.1 ms): Y vs CPU reference: bit-identical
 *   <case>: exact kernel: not run (attn_mask)
 * Device outputs start as all-ones bytes (NaN in every float dtype), so an
 * element a path does not write shows up. A CUDA failure ends the process
 * (a tool, not the library).
 */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/onnx_attention_case.h"
#include "reference/opp_reference_gpu.h"
#include "tools/oppcheck/gpu_common.h"
#include "tools/oppcheck/oppcheck.h"

struct oppcheck_onnx_gpu {
    opp_ref_gpu_t *ref;
    cudaStream_t stream;
    void *ws; /* grown on demand, shared by both paths */
    size_t ws_bytes;
};

int oppcheck_onnx_gpu_open(oppcheck_onnx_gpu_t **out) {
    *out = NULL;
    oppcheck_onnx_gpu_t *g = calloc(1, sizeof(*g));
    if (g == NULL) {
        fprintf(stderr, "oppcheck: out of host memory\n");
        return 2;
    }
    if (!oppcheck_status_ok(opp_ref_gpu_create(&g->ref), "opp_ref_gpu_create")) {
        free(g);
        return 2;
    }
    CUDA_OR_DIE(cudaStreamCreate(&g->stream));
    *out = g;
    return 0;
}

void oppcheck_onnx_gpu_close(oppcheck_onnx_gpu_t *g) {
    if (g != NULL) {
        cudaFree(g->ws);
        cudaStreamDestroy(g->stream);
        opp_ref_gpu_destroy(g->ref);
        free(g);
    }
}

/* Makes g->ws at least bytes long. */
static void *workspace(oppcheck_onnx_gpu_t *g, size_t bytes) {
    if (bytes > g->ws_bytes || g->ws == NULL) {
        cudaFree(g->ws);
        g->ws = NULL;
        CUDA_OR_DIE(cudaMalloc(&g->ws, bytes > 0 ? bytes : 1));
        g->ws_bytes = bytes;
    }
    return g->ws;
}

/* A poisoned device buffer of bytes; NULL when want is NULL. */
static void *device_output(const void *want, size_t bytes) {
    return want != NULL ? oppcheck_device_poisoned(bytes) : NULL;
}

static void free_device(opp_ref_attention24_tensors_t *t) {
    const void *all[] = {t->q,
                         t->k,
                         t->v,
                         t->attn_mask,
                         t->past_key,
                         t->past_value,
                         t->nonpad_kv_seqlen,
                         t->y,
                         t->present_key,
                         t->present_value,
                         t->qk_matmul_output};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); ++i) {
        cudaFree((void *)all[i]);
    }
    memset(t, 0, sizeof(*t));
}

/* Bytes of output slot s of desc (n from opp_ref_attention24_sizes). */
static size_t output_bytes(const opp_ref_attention24_sizes_t *n, int slot, size_t es) {
    const size_t elems[OPP_A24_NUM_OUTPUTS] = {n->y, n->present_key, n->present_value, n->qk};
    return elems[slot] * es;
}

typedef struct cublas_ctx {
    oppcheck_onnx_gpu_t *g;
    const opp_ref_attention24_desc_t *desc;
    const opp_ref_attention24_tensors_t *dev;
} cublas_ctx_t;

static opp_status_t run_cublas(void *ctx) {
    const cublas_ctx_t *c = ctx;
    return opp_ref_gpu_attention24(c->g->ref, c->desc, c->dev, c->g->ws, c->g->ws_bytes,
                                   c->g->stream);
}

/* The cuBLAS reference on dev (inputs uploaded, outputs poisoned); prints
 * its line. Returns 0 agreed, 1 differs, 2 error. */
static int check_cublas(oppcheck_onnx_gpu_t *g, const char *path, const opp_onnx_case_t *c,
                        const opp_ref_attention24_sizes_t *n, const opp_ref_attention24_desc_t *d,
                        const opp_ref_attention24_tensors_t *ref,
                        const opp_ref_attention24_tensors_t *dev) {
    char err[1024], prefix[1200], line[1024];
    const size_t es = opp_dtype_size(d->dtype);
    size_t need = 0;
    if (!oppcheck_status_ok(opp_ref_gpu_attention24_workspace_size(d, &need),
                            "opp_ref_gpu_attention24_workspace_size")) {
        printf("%s: cuBLAS reference: ERROR (workspace size)\n", path);
        return 2;
    }
    workspace(g, need);
    cublas_ctx_t ctx = {g, d, dev};
    opp_status_t st;
    const double ms = oppcheck_timed(run_cublas, &ctx, g->stream, &st);
    if (!oppcheck_status_ok(st, "opp_ref_gpu_attention24")) {
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
    opp_cmp_stats_t vs_cpu;
    memset(&vs_cpu, 0, sizeof(vs_cpu));
    size_t cpu_bad = 0;
    for (int s = 0; s < OPP_A24_NUM_OUTPUTS; ++s) {
        void *h = opp_onnx_attention_output_ptr(&got, s);
        const void *dv = opp_onnx_attention_output_ptr(dev, s);
        const void *want = opp_onnx_attention_output_ptr(ref, s);
        if (h == NULL || dv == NULL || want == NULL) {
            continue;
        }
        const size_t bytes = output_bytes(n, s, es);
        CUDA_OR_DIE(cudaMemcpy(h, dv, bytes, cudaMemcpyDeviceToHost));
        snprintf(prefix, sizeof(prefix), "%s: cuBLAS vs CPU reference: %s", path,
                 opp_onnx_attention_output_name(s));
        cpu_bad += opp_cmp(h, want, bytes / es, d->dtype, 1, 0, prefix, 3, &vs_cpu);
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

typedef struct exact_ctx {
    opp_attention24_desc_t desc;
    const int64_t *nonpad;
    const void *q, *k, *v;
    void *y, *ws;
    size_t ws_bytes;
    cudaStream_t s;
} exact_ctx_t;

static opp_status_t run_exact(void *ctx) {
    const exact_ctx_t *e = ctx;
    return opp_attention24_nonpad_fwd(&e->desc, e->nonpad, e->q, e->k, e->v, e->y, e->ws,
                                      e->ws_bytes, e->s);
}

/* The exact kernel on dev's Q, K, V; prints its line. 0 / 1 / 2 as above. */
static int check_exact(oppcheck_onnx_gpu_t *g, const char *path,
                       const opp_ref_attention24_sizes_t *n, const opp_ref_attention24_desc_t *d,
                       const opp_ref_attention24_tensors_t *ref,
                       const opp_ref_attention24_tensors_t *dev) {
    const char *why = exact_not_applicable(d);
    if (why != NULL) {
        printf("%s: exact kernel: not run (%s)\n", path, why);
        return 0;
    }
    exact_ctx_t e;
    memset(&e, 0, sizeof(e));
    opp_attention24_desc_init(&e.desc);
    e.desc.q_dtype = e.desc.k_dtype = e.desc.v_dtype = e.desc.out_dtype = d->dtype;
    e.desc.input_rank = d->input_rank;
    e.desc.batch = d->batch;
    e.desc.num_heads = d->q_num_heads;
    e.desc.kv_num_heads = d->kv_num_heads;
    e.desc.head_size = d->head_size;
    e.desc.v_head_size = d->v_head_size;
    e.desc.q_seqlen = d->q_seqlen;
    e.desc.kv_seqlen = d->kv_seqlen;
    e.desc.scale = d->scale;
    e.desc.is_causal = d->is_causal;
    e.desc.softcap = d->softcap;
    const opp_status_t chk = opp_attention24_desc_check(&e.desc);
    if (chk != OPP_STATUS_SUCCESS) {
        const int unsupported = chk >= OPP_STATUS_NOT_SUPPORTED && chk < OPP_STATUS_CUDA_ERROR;
        printf("%s: exact kernel: %s (%s: %s)\n", path, unsupported ? "not run" : "ERROR",
               opp_status_name(chk), opp_last_error_message());
        return unsupported ? 0 : 2;
    }
    const size_t es = opp_dtype_size(d->dtype);
    int64_t *nonpad = NULL;
    if (!d->has_nonpad) { /* every key is valid */
        nonpad = malloc(sizeof(int64_t) * (size_t)d->batch);
        if (nonpad == NULL) {
            fprintf(stderr, "oppcheck: out of host memory\n");
            return 2;
        }
        for (int32_t b = 0; b < d->batch; ++b) {
            nonpad[b] = d->kv_seqlen;
        }
        e.nonpad = oppcheck_upload(nonpad, sizeof(int64_t) * (size_t)d->batch);
    } else {
        e.nonpad = dev->nonpad_kv_seqlen;
    }
    e.q = dev->q;
    e.k = dev->k;
    e.v = dev->v;
    e.y = device_output(ref->y, n->y * es);
    e.s = g->stream;
    int rc = 2;
    void *host_y = malloc(n->y * es + 1);
    opp_status_t st = opp_attention24_nonpad_workspace_size(&e.desc, &e.ws_bytes);
    if (host_y == NULL) {
        fprintf(stderr, "oppcheck: out of host memory\n");
    } else if (oppcheck_status_ok(st, "opp_attention24_nonpad_workspace_size")) {
        e.ws = workspace(g, e.ws_bytes);
        const double ms = oppcheck_timed(run_exact, &e, g->stream, &st);
        if (!oppcheck_status_ok(st, "opp_attention24_nonpad_fwd") ||
            !oppcheck_status_ok(opp_packed_attention_device_status(e.ws, e.ws_bytes, g->stream),
                                "device guard")) {
            printf("%s: exact kernel FAILED: %s\n", path, opp_status_name(st));
        } else {
            char what[1200];
            opp_cmp_stats_t cmp;
            memset(&cmp, 0, sizeof(cmp));
            CUDA_OR_DIE(cudaMemcpy(host_y, e.y, n->y * es, cudaMemcpyDeviceToHost));
            snprintf(what, sizeof(what), "%s: exact vs CPU reference: Y", path);
            const size_t bad = opp_cmp(host_y, ref->y, n->y, d->dtype, 1, 0, what, 3, &cmp);
            if (bad == 0) {
                printf("%s: exact kernel (%.2f ms): Y vs CPU reference: bit-identical\n", path, ms);
            } else {
                printf("%s: exact kernel (%.2f ms): Y vs CPU reference: %zu of %zu elements "
                       "differ, max %llu ulp\n",
                       path, ms, bad, cmp.compared, (unsigned long long)cmp.max_ulp);
            }
            rc = bad == 0 ? 0 : 1;
        }
    }
    free(host_y);
    if (nonpad != NULL) {
        cudaFree((void *)e.nonpad);
        free(nonpad);
    }
    cudaFree(e.y);
    return rc;
}

int oppcheck_onnx_gpu_case(oppcheck_onnx_gpu_t *g, const char *path, const opp_onnx_case_t *c,
                           const opp_ref_attention24_desc_t *d,
                           const opp_ref_attention24_tensors_t *ref) {
    const size_t es = opp_dtype_size(d->dtype);
    const size_t mask_es = d->mask_dtype == OPP_DTYPE_BOOL_ ? 1 : es;
    opp_ref_attention24_sizes_t n;
    opp_ref_attention24_sizes(d, &n);
    opp_ref_attention24_tensors_t dev;
    memset(&dev, 0, sizeof(dev));
    dev.q = oppcheck_upload(ref->q, n.q * es);
    dev.k = oppcheck_upload(ref->k, n.k * es);
    dev.v = oppcheck_upload(ref->v, n.v * es);
    if (ref->attn_mask != NULL) {
        dev.attn_mask = oppcheck_upload(ref->attn_mask, n.mask * mask_es);
    }
    if (ref->past_key != NULL) {
        dev.past_key = oppcheck_upload(ref->past_key, n.past_key * es);
        dev.past_value = oppcheck_upload(ref->past_value, n.past_value * es);
    }
    if (ref->nonpad_kv_seqlen != NULL) {
        dev.nonpad_kv_seqlen =
            oppcheck_upload(ref->nonpad_kv_seqlen, sizeof(int64_t) * (size_t)d->batch);
    }
    dev.y = device_output(ref->y, n.y * es);
    dev.present_key = device_output(ref->present_key, n.present_key * es);
    dev.present_value = device_output(ref->present_value, n.present_value * es);
    dev.qk_matmul_output = device_output(ref->qk_matmul_output, n.qk * es);
    const int a = check_cublas(g, path, c, &n, d, ref, &dev);
    const int b = check_exact(g, path, &n, d, ref, &dev);
    free_device(&dev);
    return a > b ? a : b;
}
