/*
 * gpu_check.c - the GPU part of oppcheck: the exact kernel on the packed
 * layout (L2: vs the CPU packed reference), the same kernel on the padded
 * Attention-24 layouts (vs the packed GPU output), and the cuBLAS padded
 * Attention-24 reference (L3: vs the exact GPU output; f16/bf16 bit for bit,
 * f32 within 1 ulp). Times are CUDA-event milliseconds of one run after a
 * warm-up run. Exits the process on a CUDA failure (a tool, not the library).
 */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference/opp_reference_gpu.h"
#include "tools/oppcheck/gpu_common.h"
#include "tools/oppcheck/oppcheck.h"

int oppcheck_gpu_name(char *name, size_t size) {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
        (void)cudaGetLastError();
        return 0;
    }
    struct cudaDeviceProp p;
    if (cudaGetDeviceProperties(&p, 0) != cudaSuccess) {
        return 0;
    }
    snprintf(name, size, "%s (sm_%d%d, %d SMs)", p.name, p.major, p.minor, p.multiProcessorCount);
    return 1;
}

void *oppcheck_upload(const void *src, size_t bytes) {
    void *d = NULL;
    CUDA_OR_DIE(cudaMalloc(&d, bytes > 0 ? bytes : 1));
    if (bytes > 0) {
        CUDA_OR_DIE(cudaMemcpy(d, src, bytes, cudaMemcpyHostToDevice));
    }
    return d;
}

void *oppcheck_device_poisoned(size_t bytes) {
    void *d = NULL;
    CUDA_OR_DIE(cudaMalloc(&d, bytes > 0 ? bytes : 1));
    CUDA_OR_DIE(cudaMemset(d, 0xff, bytes > 0 ? bytes : 1));
    return d;
}

int oppcheck_status_ok(opp_status_t st, const char *what) {
    if (st != OPP_STATUS_SUCCESS) {
        fprintf(stderr, "oppcheck: %s: %s: %s\n", what, opp_status_name(st),
                opp_last_error_message());
        return 0;
    }
    return 1;
}

double oppcheck_timed(oppcheck_run_fn fn, void *ctx, cudaStream_t s, opp_status_t *st) {
    cudaEvent_t a, b;
    CUDA_OR_DIE(cudaEventCreate(&a));
    CUDA_OR_DIE(cudaEventCreate(&b));
    *st = fn(ctx);
    if (*st == OPP_STATUS_SUCCESS) {
        CUDA_OR_DIE(cudaEventRecord(a, s));
        *st = fn(ctx);
        CUDA_OR_DIE(cudaEventRecord(b, s));
    }
    CUDA_OR_DIE(cudaStreamSynchronize(s));
    float ms = 0.0f;
    if (*st == OPP_STATUS_SUCCESS) {
        CUDA_OR_DIE(cudaEventElapsedTime(&ms, a, b));
    }
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    return (double)ms;
}

typedef struct packed_run {
    const opp_attention_desc_t *desc;
    opp_varlen_t varlen;
    const void *q, *k, *v;
    void *out, *ws;
    size_t ws_bytes;
    cudaStream_t s;
} packed_run_t;

static opp_status_t run_packed(void *ctx) {
    packed_run_t *r = ctx;
    return opp_packed_attention_fwd(r->desc, &r->varlen, r->q, r->k, r->v, r->out, r->ws,
                                    r->ws_bytes, r->s);
}

typedef struct padded_run {
    opp_attention24_desc_t desc;
    const int64_t *nonpad;
    const void *q, *k, *v;
    void *y, *ws;
    size_t ws_bytes;
    cudaStream_t s;
} padded_run_t;

static opp_status_t run_padded(void *ctx) {
    padded_run_t *r = ctx;
    return opp_attention24_nonpad_fwd(&r->desc, r->nonpad, r->q, r->k, r->v, r->y, r->ws,
                                      r->ws_bytes, r->s);
}

typedef struct cublas_run {
    opp_ref_gpu_t *ref;
    const opp_ref_attention24_desc_t *desc;
    opp_ref_attention24_tensors_t t;
    void *ws;
    size_t ws_bytes;
    cudaStream_t s;
} cublas_run_t;

static opp_status_t run_cublas(void *ctx) {
    cublas_run_t *r = ctx;
    return opp_ref_gpu_attention24(r->ref, r->desc, &r->t, r->ws, r->ws_bytes, r->s);
}

/* Compares got (valid rows, packed order) with want; max_ulp 0 = bits. */
static int compare_row(oppcheck_row_t *row, const void *got, const void *want, size_t n,
                       opp_dtype_t dt, uint64_t max_ulp) {
    const size_t bad = opp_cmp(got, want, n, dt, max_ulp == 0, max_ulp, row->name, 5, &row->cmp);
    row->ok = bad == 0;
    return row->ok ? 0 : 1;
}

/* The padded runs (exact kernel and cuBLAS reference) for one layout. */
static int run_layout(const opp_lb_t *lb, int32_t rank, opp_lb_poison_t poison,
                      const void *gpu_packed, oppcheck_table_t *t, opp_ref_gpu_t *ref,
                      cudaStream_t s) {
    const size_t es = opp_dtype_size(lb->dtype);
    const size_t n = (size_t)lb->total_q * (size_t)lb->num_heads * (size_t)lb->v_head_size;
    opp_lb_padded_t pad;
    if (opp_lb_to_padded(lb, rank, poison, &pad) != 0) {
        fprintf(stderr, "oppcheck: out of host memory for the padded tensors\n");
        return 2;
    }
    void *valid = malloc((n + 1) * es);
    void *hy = malloc((pad.y_elems + 1) * es);
    padded_run_t p;
    memset(&p, 0, sizeof(p));
    opp_attention24_desc_init(&p.desc);
    p.desc.q_dtype = p.desc.k_dtype = p.desc.v_dtype = p.desc.out_dtype = lb->dtype;
    p.desc.input_rank = rank;
    p.desc.batch = lb->batch;
    p.desc.num_heads = lb->num_heads;
    p.desc.kv_num_heads = lb->kv_num_heads;
    p.desc.head_size = lb->head_size;
    p.desc.v_head_size = lb->v_head_size;
    p.desc.q_seqlen = pad.desc.q_seqlen;
    p.desc.kv_seqlen = pad.desc.kv_seqlen;
    p.desc.scale = lb->scale;
    p.desc.is_causal = lb->is_causal;
    p.desc.softcap = lb->softcap;
    p.q = oppcheck_upload(pad.q, pad.q_elems * es);
    p.k = oppcheck_upload(pad.k, pad.k_elems * es);
    p.v = oppcheck_upload(pad.v, pad.v_elems * es);
    p.nonpad = oppcheck_upload(pad.nonpad, sizeof(int64_t) * (size_t)lb->batch);
    p.y = oppcheck_upload(pad.y, pad.y_elems * es); /* poisoned with NaN */
    p.s = s;
    int rc = 0;
    char name[96];
    snprintf(name, sizeof(name), "exact GPU kernel (Attention-24 %dD, %s pad) vs packed", (int)rank,
             poison == OPP_LB_POISON_NAN ? "NaN" : "finite");
    oppcheck_row_t *row = oppcheck_table_add(t, name);
    opp_status_t st = opp_attention24_nonpad_workspace_size(&p.desc, &p.ws_bytes);
    if (oppcheck_status_ok(st, "opp_attention24_nonpad_workspace_size")) {
        CUDA_OR_DIE(cudaMalloc(&p.ws, p.ws_bytes > 0 ? p.ws_bytes : 1));
        row->ms = oppcheck_timed(run_padded, &p, s, &st);
    }
    if (oppcheck_status_ok(st, "opp_attention24_nonpad_fwd") &&
        oppcheck_status_ok(opp_packed_attention_device_status(p.ws, p.ws_bytes, s),
                           "device guard")) {
        CUDA_OR_DIE(cudaMemcpy(hy, p.y, pad.y_elems * es, cudaMemcpyDeviceToHost));
        opp_lb_padded_valid_rows(lb, &pad, hy, valid);
        rc |= compare_row(row, valid, gpu_packed, n, lb->dtype, 0);
    } else {
        row->ok = 0;
        rc = 2;
    }
    if (ref != NULL) {
        cublas_run_t c;
        memset(&c, 0, sizeof(c));
        c.ref = ref;
        c.desc = &pad.desc;
        c.t.q = p.q;
        c.t.k = p.k;
        c.t.v = p.v;
        c.t.nonpad_kv_seqlen = p.nonpad;
        c.t.y = p.y;
        c.s = s;
        snprintf(name, sizeof(name), "cuBLAS padded Attention-24 (%dD, %s pad) vs exact GPU",
                 (int)rank, poison == OPP_LB_POISON_NAN ? "NaN" : "finite");
        row = oppcheck_table_add(t, name);
        CUDA_OR_DIE(cudaMemset(p.y, 0xff, pad.y_elems * es));
        st = opp_ref_gpu_attention24_workspace_size(&pad.desc, &c.ws_bytes);
        if (oppcheck_status_ok(st, "opp_ref_gpu_attention24_workspace_size")) {
            CUDA_OR_DIE(cudaMalloc(&c.ws, c.ws_bytes > 0 ? c.ws_bytes : 1));
            row->ms = oppcheck_timed(run_cublas, &c, s, &st);
        }
        if (oppcheck_status_ok(st, "opp_ref_gpu_attention24")) {
            CUDA_OR_DIE(cudaMemcpy(hy, p.y, pad.y_elems * es, cudaMemcpyDeviceToHost));
            opp_lb_padded_valid_rows(lb, &pad, hy, valid);
            /* L3: f16/bf16 bit for bit; f32 within 1 ulp (the flip rate is
             * 100% - bit-identical %). */
            rc |= compare_row(row, valid, gpu_packed, n, lb->dtype,
                              lb->dtype == OPP_DTYPE_F32 ? 1 : 0);
        } else {
            row->ok = 0;
            rc = 2;
        }
        cudaFree(c.ws);
    }
    cudaFree((void *)p.q);
    cudaFree((void *)p.k);
    cudaFree((void *)p.v);
    cudaFree((void *)p.nonpad);
    cudaFree(p.y);
    cudaFree(p.ws);
    free(valid);
    free(hy);
    opp_lb_padded_free(&pad);
    return rc;
}

int oppcheck_run_gpu(const opp_lb_t *lb, const oppcheck_opts_t *o, const void *cpu_packed,
                     oppcheck_table_t *t) {
    const size_t es = opp_dtype_size(lb->dtype);
    const size_t n = (size_t)lb->total_q * (size_t)lb->num_heads * (size_t)lb->v_head_size;
    cudaStream_t s;
    CUDA_OR_DIE(cudaStreamCreate(&s));
    opp_attention_desc_t desc;
    opp_lb_packed_desc(lb, &desc);
    packed_run_t r;
    memset(&r, 0, sizeof(r));
    r.desc = &desc;
    r.s = s;
    r.q = oppcheck_upload(lb->q,
                          (size_t)lb->total_q * (size_t)lb->num_heads * (size_t)lb->head_size * es);
    r.k = oppcheck_upload(lb->k, (size_t)lb->total_kv * (size_t)lb->kv_num_heads *
                                     (size_t)lb->head_size * es);
    r.v = oppcheck_upload(lb->v, (size_t)lb->total_kv * (size_t)lb->kv_num_heads *
                                     (size_t)lb->v_head_size * es);
    r.varlen.cu_seqlens_q = oppcheck_upload(lb->cu_q, sizeof(int32_t) * ((size_t)lb->batch + 1));
    r.varlen.cu_seqlens_kv = oppcheck_upload(lb->cu_kv, sizeof(int32_t) * ((size_t)lb->batch + 1));
    r.out = oppcheck_device_poisoned(n * es + 1);
    void *gpu_packed = malloc(n * es + 1);
    int rc = 0;
    oppcheck_row_t *row = oppcheck_table_add(t, "exact GPU kernel (packed) vs CPU packed ref");
    opp_status_t st = opp_packed_attention_workspace_size(&desc, &r.ws_bytes);
    if (oppcheck_status_ok(st, "opp_packed_attention_workspace_size")) {
        CUDA_OR_DIE(cudaMalloc(&r.ws, r.ws_bytes > 0 ? r.ws_bytes : 1));
        row->ms = oppcheck_timed(run_packed, &r, s, &st);
    }
    if (oppcheck_status_ok(st, "opp_packed_attention_fwd") &&
        oppcheck_status_ok(opp_packed_attention_device_status(r.ws, r.ws_bytes, s),
                           "device guard")) {
        CUDA_OR_DIE(cudaMemcpy(gpu_packed, r.out, n * es, cudaMemcpyDeviceToHost));
        rc |= compare_row(row, gpu_packed, cpu_packed, n, lb->dtype, 0);
        opp_ref_gpu_t *ref = NULL;
        if (!oppcheck_status_ok(opp_ref_gpu_create(&ref), "opp_ref_gpu_create")) {
            rc = 2;
        }
        for (int32_t rank = 4; rank >= 3; --rank) {
            for (int p = 0; p < 2; ++p) {
                if ((o->layouts & (rank == 4 ? 1 : 2)) && (o->poisons & (1 << p))) {
                    rc |= run_layout(lb, rank, (opp_lb_poison_t)p, gpu_packed, t, ref, s);
                }
            }
        }
        opp_ref_gpu_destroy(ref);
    } else {
        row->ok = 0;
        rc = 2;
    }
    cudaFree((void *)r.q);
    cudaFree((void *)r.k);
    cudaFree((void *)r.v);
    cudaFree((void *)r.varlen.cu_seqlens_q);
    cudaFree((void *)r.varlen.cu_seqlens_kv);
    cudaFree(r.out);
    cudaFree(r.ws);
    cudaStreamDestroy(s);
    free(gpu_packed);
    return rc & 2 ? 2 : rc;
}
