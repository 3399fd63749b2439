/*
 * concurrency_test.c - concurrency and repetition of the run path
 * (DESIGN.md section 4: deterministic output; section 5: no hidden state):
 *
 *   - 8 host threads, each with its own stream, workspace and batch (all
 *     different: dtype, heads, head sizes, causal, softcap, lengths), run
 *     at once, OPP_GPU_TEST_ITERS times each (default 8); every result
 *     (out [total_q, Hq, Dv] and lse [Hq, total_q]) is bit-identical to
 *     that batch's serial run, made first on one stream. Three rounds: all
 *     EXACT, all FAST, and EXACT / FAST alternating by thread.
 *   - one batch (4 sequences up to 900 keys, GQA, causal) run
 *     OPP_GPU_TEST_REPEATS times (default 1000) on one stream, out and lse
 *     poisoned before each run: every run bit-identical to the first, for
 *     EXACT and FAST.
 *
 * Worker threads call only the CUDA runtime and the library (CMocka's
 * assertions are not thread-safe); they record what they saw and the main
 * thread asserts. OPP_GPU_TEST_MAX_LEN caps every length (runs under
 * compute-sanitizer). FAST parts are skipped (printed) below compute
 * capability 8.0; every test skip()s without a CUDA device.
 * Run (Bazel): bazel test //tests:concurrency_test --test_output=all
 * Run (GPU machine): ./concurrency_test (no data files)
 */
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/logical_batch.h"
#include "tests/exact_gpu_util.h"
#include "tests/gpu_util.h"
#include "tests/test_util.h"

#define THREADS 8

/* len capped by OPP_GPU_TEST_MAX_LEN (when set and > 0: runs under
 * compute-sanitizer). */
static int32_t cap_len(int32_t len) {
    const long cap = opp_test_env_long("OPP_GPU_TEST_MAX_LEN", 0);
    return cap > 0 && len > cap ? (int32_t)cap : len;
}

static void cuda_ok(cudaError_t err, const char *what) {
    if (err != cudaSuccess) {
        fail_msg("%s: %s (%s)", what, cudaGetErrorName(err), cudaGetErrorString(err));
    }
}

/* Whether FAST can run here (compute capability >= 8.0); prints why not. */
static int fast_ok(void) {
    int32_t sm = 0;
    assert_opp_ok(opp_device_sm_arch(&sm));
    if (sm < 80) {
        printf("FAST needs compute capability 8.0, the device has %d.%d: FAST skipped\n", sm / 10,
               sm % 10);
    }
    return sm >= 80;
}

/* One batch on the device with its results. */
typedef struct job {
    opp_lb_t lb;
    opp_test_packed_dev_t dev;
    opp_attention_desc_t desc;
    float *lse; /* device [Hq, total_q] */
    size_t lse_bytes;
    void *want_out, *got_out; /* host: the serial run's, a worker's scratch */
    float *want_lse, *got_lse;
    cudaStream_t stream;
    long iters;
    pthread_barrier_t *start;
    /* what the worker saw */
    long runs, mismatches;
    char error[256];
} job_t;

/* Poisons out and lse, runs on the job's stream, synchronizes, reads the
 * device status and the results into got_*. Thread-safe (no CMocka).
 * @return : 0, or -1 with job->error set. */
static int job_run(job_t *j) {
    const opp_varlen_t varlen = {j->dev.cu_q, j->dev.cu_kv};
    cudaError_t e = cudaMemsetAsync(j->dev.out, 0xFF, j->dev.out_bytes, j->stream);
    if (e == cudaSuccess) {
        e = cudaMemsetAsync(j->lse, 0xFF, j->lse_bytes, j->stream);
    }
    if (e != cudaSuccess) {
        snprintf(j->error, sizeof(j->error), "poison: %s", cudaGetErrorString(e));
        return -1;
    }
    opp_status_t st =
        opp_packed_attention_fwd_lse(&j->desc, &varlen, j->dev.q, j->dev.k, j->dev.v, j->dev.out,
                                     j->lse, j->dev.workspace, j->dev.workspace_bytes, j->stream);
    if (st == OPP_STATUS_SUCCESS) {
        st = opp_attention_device_status(j->dev.workspace, j->dev.workspace_bytes, j->stream);
    }
    if (st != OPP_STATUS_SUCCESS) {
        snprintf(j->error, sizeof(j->error), "run: %s: %s", opp_status_name(st),
                 opp_last_error_message());
        return -1;
    }
    e = cudaMemcpyAsync(j->got_out, j->dev.out, j->dev.out_bytes, cudaMemcpyDeviceToHost,
                        j->stream);
    if (e == cudaSuccess) {
        e = cudaMemcpyAsync(j->got_lse, j->lse, j->lse_bytes, cudaMemcpyDeviceToHost, j->stream);
    }
    if (e == cudaSuccess) {
        e = cudaStreamSynchronize(j->stream);
    }
    if (e != cudaSuccess) {
        snprintf(j->error, sizeof(j->error), "download: %s", cudaGetErrorString(e));
        return -1;
    }
    return 0;
}

/* Whether the last run's results equal the serial run's, bit for bit. */
static int job_matches(const job_t *j) {
    return memcmp(j->got_out, j->want_out, j->dev.out_bytes) == 0 &&
           memcmp(j->got_lse, j->want_lse, j->lse_bytes) == 0;
}

static void *worker(void *arg) {
    job_t *j = arg;
    pthread_barrier_wait(j->start);
    for (long i = 0; i < j->iters && j->error[0] == '\0'; ++i) {
        if (job_run(j) != 0) {
            break;
        }
        j->runs++;
        j->mismatches += !job_matches(j);
    }
    return NULL;
}

/* Uploads lb (taken over by the job) with algo, allocates the results. */
static void job_init(job_t *j, const opp_lb_t *lb, opp_algo_t algo) {
    memset(j, 0, sizeof(*j));
    j->lb = *lb;
    opp_test_packed_upload(&j->lb, &j->dev);
    opp_lb_packed_desc(&j->lb, &j->desc);
    j->desc.algo = algo;
    j->lse_bytes = (size_t)j->lb.num_heads * (size_t)j->lb.total_q * sizeof(float);
    j->lse = opp_test_gpu_alloc(j->lse_bytes);
    j->want_out = malloc(j->dev.out_bytes + 16);
    j->got_out = malloc(j->dev.out_bytes + 16);
    j->want_lse = malloc(j->lse_bytes + 16);
    j->got_lse = malloc(j->lse_bytes + 16);
    assert_true(j->want_out && j->got_out && j->want_lse && j->got_lse);
    cuda_ok(cudaStreamCreateWithFlags(&j->stream, cudaStreamNonBlocking), "cudaStreamCreate");
}

/* The serial run: the reference of every later run of the job. Every
 * element is checked written (finite out, lse finite or -inf), so two runs
 * that both skip an element cannot pass as equal poison. */
static void job_reference(job_t *j) {
    if (job_run(j) != 0) {
        fail_msg("serial run: %s", j->error);
    }
    const size_t es = opp_dtype_size(j->lb.dtype), n = j->dev.out_bytes / es;
    for (size_t i = 0; i < n; ++i) {
        const uint32_t e =
            es == 4 ? ((const uint32_t *)j->got_out)[i] : ((const uint16_t *)j->got_out)[i];
        const uint32_t exp_mask =
            es == 4 ? 0x7F800000u : (j->lb.dtype == OPP_DTYPE_F16 ? 0x7C00u : 0x7F80u);
        if ((e & exp_mask) == exp_mask) {
            fail_msg("serial run: out element %zu is not finite (0x%x)", i, e);
        }
    }
    for (size_t i = 0; i < j->lse_bytes / sizeof(float); ++i) {
        uint32_t e;
        memcpy(&e, &j->got_lse[i], sizeof(e));
        if ((e & 0x7F800000u) == 0x7F800000u && e != 0xFF800000u) {
            fail_msg("serial run: lse element %zu is 0x%08x", i, e);
        }
    }
    memcpy(j->want_out, j->got_out, j->dev.out_bytes);
    memcpy(j->want_lse, j->got_lse, j->lse_bytes);
}

static void job_free(job_t *j) {
    cuda_ok(cudaStreamDestroy(j->stream), "cudaStreamDestroy");
    opp_test_gpu_free(j->lse);
    opp_test_packed_free(&j->dev);
    free(j->want_out);
    free(j->got_out);
    free(j->want_lse);
    free(j->got_lse);
    opp_lb_free(&j->lb);
}

/* Batch t of the concurrent rounds: every thread's differs (f16 / bf16,
 * head sizes 32..256 with Dv != D, GQA 1..8, causal, softcap, lengths
 * 0..~600 with decode rows and L_q > L_kv); all FAST- and EXACT-able. */
static void concurrent_batch(int t, opp_lb_t *lb) {
    static const struct {
        int32_t hq, hkv, d, dv, causal;
        float softcap;
    } shape[THREADS] = {
        {8, 2, 128, 128, 1, 0.0f}, {4, 4, 64, 64, 0, 0.0f},    {8, 1, 96, 64, 1, 30.0f},
        {16, 2, 32, 32, 0, 0.0f},  {2, 1, 256, 256, 1, 0.0f},  {6, 3, 128, 64, 0, 50.0f},
        {8, 8, 64, 128, 1, 0.0f},  {12, 4, 192, 192, 0, 0.0f},
    };
    int32_t lq[6], lkv[6];
    const int32_t batch = 2 + t % 5;
    for (int32_t b = 0; b < batch; ++b) {
        lq[b] = (int32_t)((t * 131 + b * 197) % 600);
        lkv[b] = b == 1 ? 1 + t : (int32_t)((t * 173 + b * 89) % 600);
        if (b == 2) {
            lq[b] = 1; /* a decode row */
        }
        lq[b] = cap_len(lq[b]);
        lkv[b] = cap_len(lkv[b]);
    }
    assert_int_equal(opp_lb_from_lengths(lb, t % 2 ? OPP_DTYPE_F16 : OPP_DTYPE_BF16, batch, lq, lkv,
                                         shape[t].hq, shape[t].hkv, shape[t].d, shape[t].dv, 0.0f,
                                         shape[t].causal, shape[t].softcap, 1000u + (uint64_t)t),
                     0);
}

/* 8 threads x 8 streams, different batches at once, each bit-identical to
 * its serial run; rounds all EXACT, all FAST, alternating. */
static void test_concurrent_streams_bit_identical_to_serial(void **state) {
    (void)state;
    OPP_TEST_REQUIRE_GPU();
    const int fast = fast_ok();
    const long iters = opp_test_env_long("OPP_GPU_TEST_ITERS", 8);
    for (int round = 0; round < 3; ++round) {
        if (round > 0 && !fast) {
            break;
        }
        static const char *const names[3] = {"EXACT", "FAST", "EXACT/FAST alternating"};
        job_t jobs[THREADS];
        pthread_barrier_t start;
        assert_int_equal(pthread_barrier_init(&start, NULL, THREADS), 0);
        for (int t = 0; t < THREADS; ++t) {
            opp_lb_t lb;
            concurrent_batch(t, &lb);
            const opp_algo_t algo =
                round == 0
                    ? OPP_ALGO_EXACT
                    : (round == 1 ? OPP_ALGO_FAST : (t % 2 ? OPP_ALGO_FAST : OPP_ALGO_EXACT));
            job_init(&jobs[t], &lb, algo);
            jobs[t].iters = iters;
            jobs[t].start = &start;
            job_reference(&jobs[t]); /* serial: one job at a time */
        }
        pthread_t tid[THREADS];
        for (int t = 0; t < THREADS; ++t) {
            assert_int_equal(pthread_create(&tid[t], NULL, worker, &jobs[t]), 0);
        }
        for (int t = 0; t < THREADS; ++t) {
            assert_int_equal(pthread_join(tid[t], NULL), 0);
        }
        pthread_barrier_destroy(&start);
        long runs = 0, bad = 0;
        for (int t = 0; t < THREADS; ++t) {
            char desc[512];
            opp_lb_describe(&jobs[t].lb, desc, sizeof(desc));
            if (jobs[t].error[0] != '\0') {
                fail_msg("%s, thread %d (%s): %s", names[round], t, desc, jobs[t].error);
            }
            if (jobs[t].mismatches != 0 || jobs[t].runs != iters) {
                fail_msg("%s, thread %d (%s): %ld of %ld concurrent runs differ from the serial "
                         "run",
                         names[round], t, desc, jobs[t].mismatches, jobs[t].runs);
            }
            runs += jobs[t].runs;
            bad += jobs[t].mismatches;
            job_free(&jobs[t]);
        }
        printf("%s: %d threads x %ld runs on %d streams, %ld runs, %ld differ from the serial "
               "run\n",
               names[round], THREADS, iters, THREADS, runs, bad);
    }
}

/* One batch run OPP_GPU_TEST_REPEATS times per algorithm, each run
 * bit-identical to the first. */
static void test_repeated_runs_bit_identical(void **state) {
    (void)state;
    OPP_TEST_REQUIRE_GPU();
    const int fast = fast_ok();
    const long repeats = opp_test_env_long("OPP_GPU_TEST_REPEATS", 1000);
    const int32_t lq[4] = {cap_len(700), 1, cap_len(300), cap_len(513)};
    const int32_t lkv[4] = {cap_len(700), 64, cap_len(300), cap_len(900)};
    for (int a = 0; a < (fast ? 2 : 1); ++a) {
        opp_lb_t lb;
        assert_int_equal(opp_lb_from_lengths(&lb, OPP_DTYPE_BF16, 4, lq, lkv, 8, 2, 128, 128, 0.0f,
                                             1, 0.0f, 77u),
                         0);
        job_t j;
        job_init(&j, &lb, a == 0 ? OPP_ALGO_EXACT : OPP_ALGO_FAST);
        job_reference(&j);
        long differ = 0;
        for (long r = 0; r < repeats; ++r) {
            if (job_run(&j) != 0) {
                fail_msg("repeat %ld: %s", r, j.error);
            }
            differ += !job_matches(&j);
        }
        printf("%s: %ld repeated runs, %ld differ from the first\n", a == 0 ? "EXACT" : "FAST",
               repeats, differ);
        assert_int_equal(differ, 0);
        job_free(&j);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_concurrent_streams_bit_identical_to_serial),
        cmocka_unit_test(test_repeated_runs_bit_identical),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
