/*
 * decode_gpu.c - oppbench --decode-sweep on the GPU (the cases:
 * bench/decode_sweep.c): the copy bandwidth that every case is a fraction
 * of, the shared inputs, and one case - FAST alone, checked, then timed.
 *
 * Bandwidth: a device-to-device cudaMemcpy of min(4 GiB, free memory / 4),
 * read + write counted (2 x its bytes), median of 10 event-timed copies
 * after 2 warm-ups, each after the L2 flush, measured once before the
 * cases in the same process.
 *
 * Inputs: the largest selected case's K and V (up to 16 GiB) and Q for 256
 * tokens x 64 heads are allocated once and shared by every case (a case
 * reads the first rows it needs). Values are seeded normal-ish bf16 (q and k
 * amplitude 1, so scores q.k/sqrt(128) are ~N(0, 1) and the softmax spreads
 * over many keys); K and V repeat with a period of DECODE_PERIOD tokens (a
 * prime: every 1024-key split, sequence and 2^31-element offset sees other
 * keys), generated on the host once and tiled on the device.
 *
 * Check before timing, per case:
 *   - FAST once with its LSE, into a NaN-poisoned output: its device
 *     status, then no NaN/inf anywhere in [B, Hq, 128];
 *   - EXACT on --decode-check-seqs sequences (evenly spaced, first and
 *     last included; all of them when the batch is not larger), each run
 *     alone (batch 1, pointers moved to its rows: EXACT is batch-invariant
 *     and costs ~L_kv per sequence, far too slow for 16 GiB batches): the
 *     FAST rows within the bound of bench/accuracy.h, and FAST's LSE within
 *     DECODE_LSE_BOUND of EXACT's (with ~N(0,1) scores a missing or doubled
 *     1024-key split moves the LSE by >= 1024 / 131072 = 7.8e-3);
 *   - FAST again without LSE: bit-identical output (the timed runs do not
 *     ask for the LSE).
 * Then FAST is timed (bench/gpu_common.c) and its output must still equal
 * the checked one. GB/s = opp_workload_min_bytes() / median.
 */
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/accuracy.h"
#include "bench/bench_gpu.h"
#include "harness/gpu_buffer.h"
#include "harness/gpu_status.h"
#include "harness/rng.h"
#include "numerics/fp_convert.h"

#define DECODE_PERIOD    16411 /* tokens; prime */
#define DECODE_Q_ROWS    256   /* the largest batch (one query each) */
#define DECODE_Q_HEADS   64    /* the largest Hq (group 8) */
#define DECODE_LSE_BOUND 1e-3

static struct {
    int64_t kv_tokens; /* rows of k and v (0: nothing allocated) */
    void *q, *k, *v;   /* q [256, 64, 128], k / v [kv_tokens, 8, 128], bf16 */
    double copy_gbps;  /* bench_gpu_decode_init()'s measurement */
} dc;

// --- the copy bandwidth

typedef struct copy_job {
    void *dst;
    const void *src;
    size_t bytes;
} copy_job_t;

static opp_status_t copy_run(void *job) {
    const copy_job_t *c = job;
    OPP_HGPU_CHECK(
        cudaMemcpyAsync(c->dst, c->src, c->bytes, cudaMemcpyDeviceToDevice, bench_gpu_stream()));
    return OPP_STATUS_SUCCESS;
}

static int cmp_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void measure_copy(void) {
    size_t free_b = 0, total_b = 0;
    OPP_HGPU_CHECK(cudaMemGetInfo(&free_b, &total_b));
    size_t bytes = (size_t)4 << 30;
    while (bytes > free_b / 4 && bytes > ((size_t)64 << 20)) {
        bytes /= 2;
    }
    void *src = opp_hgpu_alloc(bytes);
    opp_hgpu_fill(src, 0x3c, bytes);
    copy_job_t job = {.dst = opp_hgpu_alloc(bytes), .src = src, .bytes = bytes};
    OPP_HGPU_CHECK(cudaDeviceSynchronize());
    double t[10], ms = 0.0;
    for (int i = 0; i < 12; ++i) {
        (void)bench_timed_run(copy_run, &job, &ms);
        if (i >= 2) {
            t[i - 2] = ms;
        }
    }
    qsort(t, 10, sizeof(double), cmp_double);
    const double median = 0.5 * (t[4] + t[5]);
    dc.copy_gbps = 2.0 * (double)bytes / (median * 1e-3) / 1e9;
    printf("copy bandwidth: %.0f GB/s (cudaMemcpy device to device of %.2f GiB, read + write "
           "counted: 2 x %zu bytes / median %.4f ms of 10 after 2 warm-ups, min %.4f ms)\n",
           dc.copy_gbps, (double)bytes / 1073741824.0, bytes, median, t[0]);
    printf("{\"bandwidth\":{\"method\":\"cudaMemcpy device to device, read + write counted\","
           "\"bytes\":%zu,\"median_ms\":%.6g,\"min_ms\":%.6g,\"gbps\":%.6g,\"reps\":10}}\n",
           2 * bytes, median, t[0], dc.copy_gbps);
    const void *mine[] = {job.dst, job.src};
    OPP_HGPU_CHECK(opp_hgpu_free_all(mine, 2));
}

// --- the shared inputs

/* count normal-ish bf16 values of amplitude 1 from *st. */
static uint16_t *random_bf16(size_t count, uint64_t *st) {
    uint16_t *h = bench_host_alloc(count * sizeof(uint16_t));
    for (size_t i = 0; i < count; ++i) {
        h[i] = opp__double_to_bf16(opp_rng_normalish(st));
    }
    return h;
}

/* Uploads DECODE_PERIOD random rows of row_bytes into dst and repeats them
 * up to rows rows (device copies, doubling). */
static void fill_tiled(void *dst, int64_t rows, size_t row_elems, uint64_t *st) {
    const int64_t base = rows < DECODE_PERIOD ? rows : DECODE_PERIOD;
    const size_t row_bytes = row_elems * sizeof(uint16_t);
    uint16_t *h = random_bf16((size_t)base * row_elems, st);
    opp_hgpu_h2d(dst, h, (size_t)base * row_bytes);
    free(h);
    for (int64_t done = base; done < rows;) {
        const int64_t n = done < rows - done ? done : rows - done;
        OPP_HGPU_CHECK(cudaMemcpy((char *)dst + (size_t)done * row_bytes, dst,
                                  (size_t)n * row_bytes, cudaMemcpyDeviceToDevice));
        done += n;
    }
}

void bench_gpu_decode_init(const bench_opts_t *o, const opp_workload_set_t *set,
                           const int *selected) {
    measure_copy();
    int64_t tokens = 0;
    for (int i = 0; i < set->count; ++i) {
        int64_t tq, tkv;
        opp_workload_tokens(&set->items[i], &tq, &tkv);
        if (selected[i] && tkv > tokens) {
            tokens = tkv;
        }
    }
    const double t0 = bench_wall_ms();
    const size_t row = (size_t)OPP_DECODE_KV_HEADS * OPP_DECODE_HEAD_SIZE;
    dc.kv_tokens = tokens;
    dc.k = opp_hgpu_alloc((size_t)tokens * row * sizeof(uint16_t));
    dc.v = opp_hgpu_alloc((size_t)tokens * row * sizeof(uint16_t));
    dc.q = opp_hgpu_alloc((size_t)DECODE_Q_ROWS * DECODE_Q_HEADS * OPP_DECODE_HEAD_SIZE * 2);
    uint64_t st = bench_seed(o, "decode_sweep");
    fill_tiled(dc.q, DECODE_Q_ROWS, (size_t)DECODE_Q_HEADS * OPP_DECODE_HEAD_SIZE, &st);
    fill_tiled(dc.k, tokens, row, &st);
    fill_tiled(dc.v, tokens, row, &st);
    OPP_HGPU_CHECK(cudaDeviceSynchronize());
    printf("inputs: K and V [%lld, %d, %d] bf16 (%.2f GiB together; %d random tokens repeated), "
           "Q [%d, %d, %d], shared by the cases (%.1f s)\n\n",
           (long long)tokens, OPP_DECODE_KV_HEADS, OPP_DECODE_HEAD_SIZE,
           2.0 * (double)tokens * (double)row * 2.0 / 1073741824.0, DECODE_PERIOD, DECODE_Q_ROWS,
           DECODE_Q_HEADS, OPP_DECODE_HEAD_SIZE, (bench_wall_ms() - t0) / 1e3);
    fflush(stdout);
}

void bench_gpu_decode_release(void) {
    const void *mine[] = {dc.q, dc.k, dc.v};
    OPP_HGPU_CHECK(opp_hgpu_free_all(mine, 3));
    memset(&dc, 0, sizeof dc);
}

// --- the check

/* EXACT on sequence s alone (descriptor one: batch 1; dev1 holds its output,
 * cu_seqlens and workspace; q, k, v are pointed at sequence s's rows):
 * h_out := its output [Hq, D], h_lse := its LSE [Hq]; *ms its time.
 * @return : the run's or the device status. */
static opp_status_t exact_one(const opp_attention_desc_t *one, int32_t s, opp_hgpu_packed_t *dev1,
                              float *lse_dev, void *h_out, float *h_lse, double *ms) {
    const size_t q_row = (size_t)one->num_heads * one->head_size * 2;
    const size_t kv_rows = (size_t)one->max_seqlen_kv * one->kv_num_heads * one->head_size * 2;
    dev1->q = (char *)dc.q + (size_t)s * q_row;
    dev1->k = (char *)dc.k + (size_t)s * kv_rows;
    dev1->v = (char *)dc.v + (size_t)s * kv_rows;
    opp_hgpu_fill(dev1->out, 0xff, q_row);
    OPP_HGPU_CHECK(cudaDeviceSynchronize());
    opp_hgpu_packed_call_t call = {
        .desc = *one, .dev = dev1, .stream = bench_gpu_stream(), .lse = lse_dev};
    opp_status_t st = bench_timed_run(opp_hgpu_packed_run, &call, ms);
    if (st == OPP_STATUS_SUCCESS) {
        st = opp_attention_device_status(dev1->workspace, dev1->workspace_bytes, call.stream);
    }
    opp_hgpu_d2h(h_out, dev1->out, q_row);
    opp_hgpu_d2h(h_lse, lse_dev, sizeof(float) * (size_t)one->num_heads);
    return st;
}

/* FAST's output f->h_out and LSE fast_lse ([Hq, B]) vs EXACT on the sampled
 * sequences; fills r's validation. */
static void check_sampled(const bench_opts_t *o, const opp_attention_desc_t *desc,
                          const bench_fast_t *f, const float *fast_lse, bench_result_t *r) {
    const int32_t B = desc->batch, H = desc->num_heads, L = desc->max_seqlen_kv;
    const int n = o->decode_check_seqs < B ? o->decode_check_seqs : B;
    const size_t row = (size_t)H * desc->head_size; /* elements of one sequence's output */
    opp_attention_desc_t one = *desc;
    one.algo = OPP_ALGO_EXACT;
    one.batch = 1;
    one.total_q = one.max_seqlen_q = 1;
    one.total_kv = L;
    size_t ws = 0;
    opp_status_t st = opp_packed_attention_workspace_size(&one, &ws);
    if (st != OPP_STATUS_SUCCESS) {
        bench_fail_row(r, "exact workspace size (one sequence)", st);
        return;
    }
    const int32_t cu[4] = {0, 1, 0, L};
    opp_hgpu_packed_t dev1 = {.out = opp_hgpu_alloc(row * 2),
                              .cu_q = opp_hgpu_upload(cu, 2 * sizeof(int32_t)),
                              .cu_kv = opp_hgpu_upload(cu + 2, 2 * sizeof(int32_t)),
                              .workspace = opp_hgpu_alloc(ws),
                              .workspace_bytes = ws,
                              .out_bytes = row * 2};
    float *lse_dev = opp_hgpu_alloc(sizeof(float) * (size_t)H);
    uint16_t *fast = bench_host_alloc(row * 2 * (size_t)n), *exact = bench_host_alloc(row * 2 * n);
    float *lse = bench_host_alloc(sizeof(float) * (size_t)H);
    double lse_max = 0.0, ms_total = 0.0;
    int32_t lse_seq = 0, lse_head = 0;
    char seqs[96] = ""; /* a long list is cut: the count follows it */
    for (int i = 0; i < n && st == OPP_STATUS_SUCCESS; ++i) {
        const int32_t s = n == 1 ? 0 : (int32_t)((int64_t)i * (B - 1) / (n - 1));
        double ms = 0.0;
        st = exact_one(&one, s, &dev1, lse_dev, exact + row * (size_t)i, lse, &ms);
        ms_total += ms;
        memcpy(fast + row * (size_t)i, (const uint16_t *)f->h_out + row * (size_t)s, row * 2);
        for (int32_t h = 0; h < H; ++h) {
            const double d = fabs((double)fast_lse[(size_t)h * B + s] - (double)lse[h]);
            if (!isnan(lse_max) && !(d <= lse_max)) { /* a NaN stays: the worst */
                lse_max = d, lse_seq = s, lse_head = h;
            }
        }
        const size_t k = strlen(seqs);
        snprintf(seqs + k, sizeof seqs - k, "%s%d", i ? "," : "", (int)s);
    }
    if (st != OPP_STATUS_SUCCESS) {
        bench_fail_row(r, "exact kernel (one sequence)", st);
    } else {
        bench_fast_grade(fast, exact, row * (size_t)n, desc->q_dtype, r);
        const size_t k = strlen(r->validation);
        if (r->validated && !(lse_max <= DECODE_LSE_BOUND)) {
            r->validated = 0;
            snprintf(r->validation, sizeof r->validation,
                     "FAILED: LSE differs from EXACT's by %.3g > %g (sequence %d, head %d)",
                     lse_max, DECODE_LSE_BOUND, (int)lse_seq, (int)lse_head);
        } else {
            snprintf(r->validation + k, sizeof r->validation - k,
                     "; lse %.2g (%d of %d sequences vs EXACT: %s)", lse_max, n, (int)B, seqs);
        }
        printf("  EXACT on %d sequence(s) alone: %.1f ms; %s\n", n, ms_total, r->validation);
    }
    const void *mine[] = {dev1.out, dev1.cu_q, dev1.cu_kv, dev1.workspace, lse_dev};
    OPP_HGPU_CHECK(opp_hgpu_free_all(mine, 5));
    free(fast);
    free(exact);
    free(lse);
}

// --- one case

/* 1 when FAST's device output equals its validated host copy. */
static int same_output(const bench_fast_t *f) {
    void *again = bench_host_alloc(f->dev.out_bytes);
    opp_hgpu_d2h(again, f->dev.out, f->dev.out_bytes);
    const int same = memcmp(again, f->h_out, f->dev.out_bytes) == 0;
    free(again);
    return same;
}

int bench_gpu_decode_run(const bench_opts_t *o, const opp_workload_t *w, bench_result_t *r) {
    bench_result_init(r, w, BENCH_IMPL_FAST);
    r->has_bytes = 1;
    r->bytes = opp_workload_min_bytes(w);
    r->bw_gbps = dc.copy_gbps;
    const int32_t B = w->batch, L = w->lkv[0];
    opp_attention_desc_t desc;
    opp_attention_desc_init(&desc);
    desc.q_dtype = desc.k_dtype = desc.v_dtype = desc.out_dtype = w->dtype;
    desc.batch = B;
    desc.num_heads = w->heads;
    desc.kv_num_heads = w->kv_heads;
    desc.head_size = w->head_size;
    desc.total_q = B;
    desc.total_kv = (int64_t)B * L;
    desc.max_seqlen_q = 1;
    desc.max_seqlen_kv = L;
    desc.algo = OPP_ALGO_EXACT;
    if (desc.total_kv > dc.kv_tokens || B > DECODE_Q_ROWS || w->heads > DECODE_Q_HEADS) {
        BENCH_DIE("decode case %s exceeds the shared inputs", w->name);
    }
    int32_t *cu = bench_host_alloc(sizeof(int32_t) * 2 * ((size_t)B + 1));
    for (int32_t b = 0; b <= B; ++b) {
        cu[b] = b;
        cu[B + 1 + b] = b * L;
    }
    const size_t out_bytes = (size_t)B * w->heads * w->head_size * 2;
    const opp_hgpu_packed_t packed = {
        .q = dc.q,
        .k = dc.k,
        .v = dc.v,
        .cu_q = opp_hgpu_upload(cu, sizeof(int32_t) * ((size_t)B + 1)),
        .cu_kv = opp_hgpu_upload(cu + B + 1, sizeof(int32_t) * ((size_t)B + 1)),
        .out_bytes = out_bytes};
    float *lse_dev = opp_hgpu_alloc(sizeof(float) * (size_t)B * w->heads);
    float *lse = bench_host_alloc(sizeof(float) * (size_t)B * w->heads);
    bench_fast_t f;
    if (!bench_fast_setup(&desc, OPP_ALGO_FAST, &packed, &f, r)) { /* synchronizes */
        printf("  %s\n", r->validation);
    } else {
        f.call.lse = lse_dev;
        if (bench_fast_first_run(&f, r) == OPP_STATUS_SUCCESS) {
            opp_hgpu_d2h(lse, lse_dev, sizeof(float) * (size_t)B * w->heads);
            f.call.lse = NULL;
            const size_t n_out = out_bytes / 2,
                         bad = bench_count_nonfinite(f.h_out, n_out, w->dtype);
            printf("  fast (%s, first run with LSE %.3f ms)\n", r->kernel, f.first_ms);
            if (bad > 0) {
                snprintf(r->validation, sizeof r->validation, "FAILED: %zu NaN/inf of %zu elems",
                         bad, n_out);
            } else {
                check_sampled(o, &desc, &f, lse, r);
            }
        }
        if (r->validated) {
            /* the timed runs do not ask for the LSE: the output must not change */
            double ms = 0.0;
            const opp_status_t st = bench_timed_run(opp_hgpu_packed_run, &f.call, &ms);
            if (st != OPP_STATUS_SUCCESS) {
                bench_fail_row(r, "fast kernel run without LSE", st);
            } else if (!same_output(&f)) {
                r->validated = 0;
                snprintf(r->validation, sizeof r->validation,
                         "FAILED: the output without LSE differs from the one with LSE");
            }
        }
        if (r->validated) {
            bench_time_impl(o, opp_hgpu_packed_run, &f.call, f.first_ms, r);
            bench_check_unchanged(f.dev.out, f.h_out, f.dev.out_bytes, r);
        }
        if (r->timed) {
            r->gbps = r->bytes / (r->median_ms * 1e-3) / 1e9;
            r->bw_fraction = r->gbps / r->bw_gbps;
            printf("  %.4f ms, %.0f GB/s = %.1f%% of the copy bandwidth\n", r->median_ms, r->gbps,
                   100.0 * r->bw_fraction);
        }
    }
    bench_fast_free(&f);
    const void *mine[] = {packed.cu_q, packed.cu_kv, lse_dev};
    OPP_HGPU_CHECK(opp_hgpu_free_all(mine, 3));
    free(cu);
    free(lse);
    return (r->validated || !r->supported) ? 0 : 1;
}
