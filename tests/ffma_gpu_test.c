/*
 * ffma_gpu_test.c - the FAST path for f32 storage (kernels/ffma_attention.cuh,
 * issue 11 item 2a) on the GPU, over the generated stream of fast_gpu_test
 * (tests/fast_gpu_util.h) with f32 data:
 *   1. L4 batch invariance: each sequence's FAST bits (out and LSE) are the
 *      same packed, padded 4D/3D (finite and NaN padding), alone, reversed,
 *      between other sequences, and on a repeated run;
 *   2. accuracy against EXACT (bit-identical to the double reference): every
 *      valid element within 2^-14 (max |exact| + max |V| / 2), LSE within
 *      1e-3 + 1e-4 |LSE| (tests/fast_gpu_check.c); max abs and RMS printed
 *      per head-size bucket;
 *   3. AUTO names an ffma_ row for f32 on this device where one fits, and
 *      EXACT where none does (D not a multiple of 4).
 * fast_gpu_test's "every FAST row" test also runs the ffma_ rows on their
 * own shapes. Every test skip()s without a CUDA device of compute
 * capability >= 8.0.
 * Environment: OPP_GPU_TEST_BATCHES (default 300; this test runs a third,
 * at least 1), OPP_GPU_TEST_SEED (default 20261203), OPP_GPU_TEST_MAX_LEN
 * (default 0: no cap).
 * Run (GPU machine, no Bazel): LD_LIBRARY_PATH=<dir of libcmocka.so.0>
 *   ./ffma_gpu_test
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "harness/progress.h"
#include "kernels/kernel_list.h"
#include "lib/oppacked.h"
#include "tests/exact_gpu_util.h"
#include "tests/fast_gpu_util.h"
#include "tests/gpu_util.h"
#include "tests/test_util.h"

static long n_batches(void) {
    const long n = opp_test_env_long("OPP_GPU_TEST_BATCHES", 300) / 3;
    return n > 0 ? n : 1;
}

static uint64_t base_seed(void) {
    return (uint64_t)opp_test_env_long("OPP_GPU_TEST_SEED", 20261203);
}

/* The kernel FAST runs for lb on this device (asserts FAST serves it). */
static const char *fast_kernel(const opp_lb_t *lb) {
    int32_t sm = 0;
    assert_opp_ok(opp_device_sm_arch(&sm));
    return opp_ft_kernel_of(lb, OPP_ALGO_FAST, sm);
}

/* Index of the head-size bucket of lb (max of D and Dv): <= 64, <= 128, <= 256. */
static int bucket_of(const opp_lb_t *lb) {
    const int32_t d = lb->head_size > lb->v_head_size ? lb->head_size : lb->v_head_size;
    return d <= 64 ? 0 : (d <= 128 ? 1 : 2);
}

static void test_ffma_stream(void **state) {
    (void)state;
    OPP_FT_REQUIRE_DEVICE();
    const long batches = n_batches();
    const uint64_t seed = base_seed();
    size_t runs = 0, keyless = 0, served = 0, tokens = 0;
    opp_ft_err_t by[3], tot;
    memset(by, 0, sizeof(by));
    memset(&tot, 0, sizeof(tot));
    const size_t smem = opp_ft_device_smem_optin();
    const double t0 = opp_progress_now_s();
    for (long i = 0; i < batches; ++i) {
        opp_lb_t lb;
        opp_ft_gen_batch_dtype(i, seed, OPP_DTYPE_F32, &lb);
        char desc[600], d[512];
        opp_lb_describe(&lb, d, sizeof(d));
        snprintf(desc, sizeof(desc), "f32 batch %ld: %s", i, d);
        /* the DB 256 tile (212 KB) fits 9.0 only: elsewhere FAST is NOT_SUPPORTED */
        if (bucket_of(&lb) == 2 && smem < 217088) {
            opp_lb_free(&lb);
            continue;
        }
        const char *kernel = fast_kernel(&lb);
        assert_true(strncmp(kernel, "ffma_f32_", 9) == 0);
        served++;
        opp_ft_res_t fast, exact;
        opp_ft_run_packed(&lb, OPP_ALGO_FAST, NULL, &fast);
        keyless += opp_ft_assert_sane(&lb, &fast, desc) > 0;
        runs += 1 + (size_t)opp_ft_check_invariance(&lb, &fast, NULL, seed ^ (uint64_t)i, 1, desc);
        opp_ft_run_packed(&lb, OPP_ALGO_EXACT, NULL, &exact);
        opp_ft_check_accuracy(&lb, &fast, &exact, &by[bucket_of(&lb)], desc);
        tokens += (size_t)lb.total_q;
        opp_ft_res_free(&fast);
        opp_ft_res_free(&exact);
        opp_lb_free(&lb);
    }
    printf("f32 FAST (FFMA): %zu of %ld generated batches run%s, %zu query tokens, %zu with rows "
           "that see no key; %zu runs: packed == padded 4D/3D (finite, NaN padding) == alone == "
           "reversed == between other sequences == repeated, bit for bit, out and LSE (%.1f s)\n",
           served, batches,
           (long)served < batches ? " (the rest need the DB 256 tile this device cannot hold)" : "",
           tokens, keyless, runs, opp_progress_now_s() - t0);
    printf("f32 accuracy: FAST vs EXACT (the double reference), valid output elements:\n");
    printf("  %-22s %7s %11s   %10s %10s   %10s   %10s\n", "max(D, Dv)", "batches", "elements",
           "max abs", "RMS", "max|exact|", "max dLSE");
    static const char *const names[3] = {"<= 64", "65..128", "129..256"};
    for (int k = 0; k < 3; ++k) {
        if (by[k].batches > 0) {
            opp_ft_err_print(names[k], &by[k]);
        }
        opp_ft_err_merge(&tot, &by[k]);
    }
    opp_ft_err_print("f32 all", &tot);
    assert_true(served > 0);
}

/* AUTO: an ffma_ row for f32 where D and Dv are multiples of 4 and the tile
 * fits; EXACT otherwise. */
static void test_ffma_auto(void **state) {
    (void)state;
    OPP_FT_REQUIRE_DEVICE();
    int32_t sm = 0;
    assert_opp_ok(opp_device_sm_arch(&sm));
    const int32_t dims[4] = {64, 36, 128, 30};
    for (int k = 0; k < 4; ++k) {
        opp_attention_desc_t d;
        opp_attention_desc_init(&d);
        d.q_dtype = d.k_dtype = d.v_dtype = d.out_dtype = OPP_DTYPE_F32;
        d.batch = 2;
        d.num_heads = 8;
        d.kv_num_heads = 2;
        d.head_size = d.v_head_size = dims[k];
        d.total_q = d.total_kv = 100;
        d.max_seqlen_q = d.max_seqlen_kv = 60;
        const char *name = NULL;
        assert_opp_ok(opp_attention_kernel_query(&d, sm, &name));
        const int want_fast = dims[k] % 4 == 0 && (dims[k] <= 64 || opp_ft_device_smem_optin() >=
                                                                        OPP__FFMA_SMEM_BYTES(128));
        printf("f32 AUTO, D = Dv = %d on sm_%d: %s\n", dims[k], sm, name);
        assert_int_equal(strncmp(name, want_fast ? "ffma_f32_" : "exact_f32_", want_fast ? 9 : 10),
                         0);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ffma_stream),
        cmocka_unit_test(test_ffma_auto),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
