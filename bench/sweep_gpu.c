/*
 * sweep_gpu.c - one case of oppbench --sweep on the GPU (the cases:
 * bench/sweep.c): FAST alone. Before timing, its output is checked:
 *   - no NaN or inf anywhere in [total_q, Hq, D];
 *   - against EXACT on the first sequence, when that costs at most
 *     --sweep-check-max-gflop: the EXACT kernel runs on a descriptor of that
 *     one sequence (batch 1, the same device inputs: cu_seqlens[0..1] are
 *     [0, L]), and FAST's first L rows must be within the bound of
 *     bench/accuracy.h. EXACT is batch-invariant by construction, so its
 *     rows are what the whole batch would give; EXACT on a 16k sequence
 *     costs ~0.4 s, far less than EXACT on the whole sweep.
 * Then FAST is timed (bench/gpu_common.c) and its output must still equal
 * the checked one. The inputs of all cases of one shape are generated and
 * uploaded once (cache_inputs; free with bench_gpu_sweep_release()).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/accuracy.h"
#include "bench/bench_gpu.h"
#include "harness/gpu_buffer.h"
#include "harness/gpu_status.h"
#include "harness/logical_batch.h"

/* FAST's first sequence vs EXACT on that sequence alone. packed.out (never
 * written, NaN-poisoned) receives EXACT's rows. Fills r's validation. */
static void check_first_sequence(const opp_lb_t *lb, const opp_attention_desc_t *desc,
                                 const opp_hgpu_packed_t *packed, const bench_fast_t *f,
                                 bench_result_t *r) {
    opp_attention_desc_t one = *desc;
    one.algo = OPP_ALGO_EXACT;
    one.batch = 1;
    one.total_q = one.max_seqlen_q = lb->lq[0];
    one.total_kv = one.max_seqlen_kv = lb->lkv[0];
    size_t ws_bytes = 0;
    opp_status_t st = opp_packed_attention_workspace_size(&one, &ws_bytes);
    if (st != OPP_STATUS_SUCCESS) {
        bench_fail_row(r, "exact workspace size (first sequence)", st);
        return;
    }
    opp_hgpu_packed_t dev = *packed;
    dev.workspace = opp_hgpu_alloc(ws_bytes);
    dev.workspace_bytes = ws_bytes;
    opp_hgpu_packed_call_t call = {.desc = one, .dev = &dev, .stream = f->call.stream};
    double ms = 0.0;
    if ((st = bench_timed_run(opp_hgpu_packed_run, &call, &ms)) != OPP_STATUS_SUCCESS ||
        (st = opp_attention_device_status(dev.workspace, ws_bytes, call.stream)) !=
            OPP_STATUS_SUCCESS) {
        bench_fail_row(r, "exact kernel (first sequence)", st);
    } else {
        const size_t n = (size_t)lb->lq[0] * (size_t)lb->num_heads * (size_t)lb->v_head_size;
        const size_t bytes = n * opp_dtype_size(lb->dtype);
        void *exact = bench_host_alloc(bytes);
        opp_hgpu_d2h(exact, dev.out, bytes);
        bench_fast_grade(f->h_out, exact, n, lb->dtype, r);
        const size_t k = strlen(r->validation);
        snprintf(r->validation + k, sizeof r->validation - k, " (sequence 0 of %d vs EXACT)",
                 (int)lb->batch);
        printf("  EXACT on sequence 0: %.1f ms; %s\n", ms, r->validation);
        free(exact);
    }
    OPP_HGPU_CHECK(opp_hgpu_free(dev.workspace));
}

// --- the inputs, generated once per shape

/* Every case of one head size has q, k, v of the same shape [16384, H, D]
 * (bench/sweep.c); only the lengths differ. So the values are generated
 * (~1-2 s of host time for 100M elements) and uploaded once per shape and
 * shared by its cases, seeded by the shape ("sweep_d<D>_H<H>"). */
static struct {
    opp_lb_t lb;              /* one sequence of all tokens; head_size 0: empty */
    opp_hgpu_packed_t packed; /* lb on the device; out is the cases' EXACT output */
} cache;

void bench_gpu_sweep_release(void) {
    OPP_HGPU_CHECK(opp_hgpu_packed_free(&cache.packed));
    opp_lb_free(&cache.lb);
}

static void cache_inputs(const bench_opts_t *o, const opp_workload_t *w) {
    int64_t tq, tkv;
    opp_workload_tokens(w, &tq, &tkv);
    const opp_lb_t *c = &cache.lb;
    if (c->head_size == w->head_size && c->num_heads == w->heads &&
        c->kv_num_heads == w->kv_heads && c->dtype == w->dtype && c->total_q == tq &&
        c->total_kv == tkv) {
        return;
    }
    bench_gpu_sweep_release();
    char key[64];
    snprintf(key, sizeof key, "sweep_d%d_H%d", (int)w->head_size, (int)w->heads);
    const int32_t lq = (int32_t)tq, lkv = (int32_t)tkv;
    const double t0 = bench_wall_ms();
    if (opp_lb_from_lengths(&cache.lb, w->dtype, 1, &lq, &lkv, w->heads, w->kv_heads, w->head_size,
                            w->head_size, 0.0f, 0, 0.0f, bench_seed(o, key)) != 0) {
        BENCH_DIE("out of host memory for the sweep's inputs");
    }
    const opp_status_t st = opp_hgpu_packed_upload(&cache.lb, OPP_HGPU_POISON_ONES, &cache.packed);
    if (st != OPP_STATUS_SUCCESS) {
        BENCH_DIE("opp_packed_attention_workspace_size: %s: %s", opp_status_name(st),
                  opp_last_error_message());
    }
    printf("  inputs [%lld, %d, %d] generated and uploaded (%.1f s), shared by the cases of "
           "this shape\n",
           (long long)tq, (int)w->heads, (int)w->head_size, (bench_wall_ms() - t0) / 1e3);
}

/* The cached inputs with w's lengths: lb (shallow: its arrays are the
 * cache's or cu's, never freed through it), desc (EXACT), and on the device
 * packed with w's cu_seqlens, a fresh workspace and the re-poisoned output.
 * cu holds cu_q and cu_kv on the host ([2][batch + 1]). */
static void case_inputs(const opp_workload_t *w, int32_t *cu, opp_lb_t *lb,
                        opp_attention_desc_t *desc, opp_hgpu_packed_t *packed) {
    *lb = cache.lb;
    lb->batch = w->batch;
    lb->lq = w->lq;
    lb->lkv = w->lkv;
    lb->is_causal = w->causal;
    lb->softcap = w->softcap;
    lb->cu_q = cu;
    lb->cu_kv = cu + w->batch + 1;
    lb->cu_q[0] = lb->cu_kv[0] = lb->max_lq = lb->max_lkv = 0;
    for (int32_t b = 0; b < w->batch; ++b) {
        lb->cu_q[b + 1] = lb->cu_q[b] + w->lq[b];
        lb->cu_kv[b + 1] = lb->cu_kv[b] + w->lkv[b];
        lb->max_lq = w->lq[b] > lb->max_lq ? w->lq[b] : lb->max_lq;
        lb->max_lkv = w->lkv[b] > lb->max_lkv ? w->lkv[b] : lb->max_lkv;
    }
    opp_lb_packed_desc(lb, desc);
    *packed = cache.packed;
    const size_t cu_bytes = ((size_t)w->batch + 1) * sizeof(int32_t);
    packed->cu_q = opp_hgpu_upload(lb->cu_q, cu_bytes);
    packed->cu_kv = opp_hgpu_upload(lb->cu_kv, cu_bytes);
    const opp_status_t st = opp_packed_attention_workspace_size(desc, &packed->workspace_bytes);
    if (st != OPP_STATUS_SUCCESS) {
        BENCH_DIE("opp_packed_attention_workspace_size: %s: %s", opp_status_name(st),
                  opp_last_error_message());
    }
    packed->workspace = opp_hgpu_alloc(packed->workspace_bytes);
    opp_hgpu_fill(packed->out, 0xff, packed->out_bytes); /* NaN: the EXACT check's output */
    /* the copies and the fill ran on the legacy stream, which does not order ours */
    OPP_HGPU_CHECK(cudaDeviceSynchronize());
}

// --- one case

int bench_gpu_sweep_run(const bench_opts_t *o, const opp_workload_t *w, bench_result_t *r) {
    bench_result_init(r, w, BENCH_IMPL_FAST);
    cache_inputs(o, w);
    int32_t *cu = bench_host_alloc(sizeof(int32_t) * 2 * ((size_t)w->batch + 1));
    opp_lb_t lb;
    opp_attention_desc_t desc;
    opp_hgpu_packed_t packed;
    case_inputs(w, cu, &lb, &desc, &packed);
    const size_t n_out = opp_hgpu_out_elems(&lb);
    bench_fast_t f;
    if (!bench_fast_setup(&desc, OPP_ALGO_FAST, &packed, &f, r)) { /* synchronizes */
        printf("  %s\n", r->validation);
    } else if (bench_fast_first_run(&f, r) == OPP_STATUS_SUCCESS) {
        const size_t bad = bench_count_nonfinite(f.h_out, n_out, lb.dtype);
        const int64_t pairs = opp_attended_pairs(lb.lq[0], lb.lkv[0], lb.is_causal);
        const double check_gflop = 4.0 * (double)pairs * lb.num_heads * lb.head_size / 1e9;
        printf("  fast (%s, first run %.3f ms)\n", r->kernel, f.first_ms);
        if (bad > 0) {
            snprintf(r->validation, sizeof r->validation, "FAILED: %zu NaN/inf of %zu elems", bad,
                     n_out);
        } else if (check_gflop <= o->sweep_check_max_gflop) {
            check_first_sequence(&lb, &desc, &packed, &f, r);
        } else {
            r->validated = 1;
            snprintf(r->validation, sizeof r->validation,
                     "ok: no NaN/inf (EXACT check skipped: %.0f GFLOP > --sweep-check-max-gflop)",
                     check_gflop);
        }
        if (r->validated) {
            bench_time_impl(o, opp_hgpu_packed_run, &f.call, f.first_ms, r);
            bench_check_unchanged(f.dev.out, f.h_out, f.dev.out_bytes, r);
        }
    }
    bench_fast_free(&f); /* nothing to free when FAST does not serve */
    const void *mine[] = {packed.cu_q, packed.cu_kv, packed.workspace};
    OPP_HGPU_CHECK(opp_hgpu_free_all(mine, 3));
    free(cu);
    return (r->validated || !r->supported) ? 0 : 1;
}
