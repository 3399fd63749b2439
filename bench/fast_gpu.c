/*
 * fast_gpu.c - an approximate kernel (OPP_ALGO_FAST, or the opt-in
 * OPP_ALGO_TF32X3) beside an uploaded packed batch, for oppbench's
 * workloads and sweep (see bench_gpu.h): it reads the batch's q, k, v and
 * cu_seqlens and writes its own NaN-poisoned output [total_q, Hq, Dv] with
 * its own workspace, so the EXACT output stays.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/accuracy.h"
#include "bench/bench_gpu.h"
#include "harness/gpu_buffer.h"
#include "harness/gpu_status.h"

/* "<impl> <what>" for r's failure messages. */
static const char *what_of(const bench_result_t *r, const char *what, char *buf, size_t size) {
    snprintf(buf, size, "%s %s", r->impl, what);
    return buf;
}

int bench_fast_setup(const opp_attention_desc_t *desc, opp_algo_t algo,
                     const opp_hgpu_packed_t *packed, bench_fast_t *f, bench_result_t *r) {
    char what[64];
    memset(f, 0, sizeof(*f));
    if (bench_query_kernel(desc, algo, r) != OPP_STATUS_SUCCESS) {
        return 0;
    }
    f->call.desc = *desc;
    f->call.desc.algo = algo;
    size_t ws_bytes = 0;
    const opp_status_t st = opp_packed_attention_workspace_size(&f->call.desc, &ws_bytes);
    if (st != OPP_STATUS_SUCCESS) {
        bench_fail_row(r, what_of(r, "workspace size", what, sizeof what), st);
        return 0;
    }
    f->dev = (opp_hgpu_packed_t){.q = packed->q,
                                 .k = packed->k,
                                 .v = packed->v,
                                 .out = opp_hgpu_alloc(packed->out_bytes),
                                 .cu_q = packed->cu_q,
                                 .cu_kv = packed->cu_kv,
                                 .workspace = opp_hgpu_alloc(ws_bytes),
                                 .workspace_bytes = ws_bytes,
                                 .out_bytes = packed->out_bytes};
    opp_hgpu_fill(f->dev.out, 0xff, f->dev.out_bytes); /* all-ones: NaN in every dtype */
    f->call.dev = &f->dev;
    f->call.stream = bench_gpu_stream();
    r->workspace_bytes = ws_bytes;
    /* the fill ran on the legacy stream, which does not order ours */
    OPP_HGPU_CHECK(cudaDeviceSynchronize());
    return 1;
}

opp_status_t bench_fast_first_run(bench_fast_t *f, bench_result_t *r) {
    char what[64];
    opp_status_t st = bench_timed_run(opp_hgpu_packed_run, &f->call, &f->first_ms);
    if (st != OPP_STATUS_SUCCESS) {
        bench_fail_row(r, what_of(r, "kernel run", what, sizeof what), st);
        return st;
    }
    st = opp_attention_device_status(f->dev.workspace, f->dev.workspace_bytes, f->call.stream);
    if (st != OPP_STATUS_SUCCESS) {
        bench_fail_row(r, what_of(r, "kernel device status", what, sizeof what), st);
        return st;
    }
    f->h_out = bench_host_alloc(f->dev.out_bytes);
    opp_hgpu_d2h(f->h_out, f->dev.out, f->dev.out_bytes);
    return OPP_STATUS_SUCCESS;
}

void bench_fast_grade(const void *fast, const void *exact, size_t n, opp_dtype_t dtype,
                      bench_result_t *r) {
    bench_err_t e;
    r->validated = bench_err_measure(fast, exact, n, dtype, &e);
    r->has_err = e.nonfinite == 0;
    r->max_abs_err = e.max_abs;
    r->rms_err = e.rms;
    bench_err_describe(&e, r->validated, r->validation, sizeof r->validation);
}

void bench_fast_free(bench_fast_t *f) {
    const void *mine[] = {f->dev.out, f->dev.workspace};
    OPP_HGPU_CHECK(opp_hgpu_free_all(mine, 2));
    free(f->h_out);
    memset(f, 0, sizeof(*f));
}
