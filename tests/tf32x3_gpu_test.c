/*
 * tf32x3_gpu_test.c - the opt-in 3xTF32 kernel for f32 storage
 * (OPP_ALGO_TF32X3, kernels/tf32x3_attention.cuh, issue 11 item 2b) on the
 * GPU, over the generated stream of fast_gpu_test (tests/fast_gpu_util.h:
 * lengths, causal, softcap and scale of its f32 batches) with the head
 * sizes TF32X3 serves (D, Dv in 8..64, multiples of 4, Dv != D too) and GQA
 * ratios 1, 2, 3, 4 and 8:
 *   1. L4 batch invariance: each sequence's TF32X3 bits (out and LSE) are
 *      the same packed, padded 4D/3D (finite and NaN padding), alone,
 *      reversed, between other sequences (NaN values too), and on a
 *      repeated run; rows that see no key are +0 with LSE -inf;
 *   2. accuracy against EXACT (bit-identical to the double reference):
 *      every valid element within the bound below, LSE within 1e-3 +
 *      1e-4 |LSE|; and the criterion on the same inputs: TF32X3's
 *      max abs and RMS error against EXACT at most TF32X3_MAX_RATIO times
 *      the FFMA kernel's (OPP_ALGO_FAST on f32); both tables and the
 *      ratios printed per head-size bucket;
 *   3. opt-in: AUTO and FAST name an ffma_ row for f32 on this device,
 *      TF32X3 the tf32x3_ row on 9.0 and NOT_SUPPORTED_ARCH elsewhere;
 *   4. on a GPU other than 9.0, a TF32X3 run (packed and padded entries)
 *      returns NOT_SUPPORTED_ARCH and writes nothing.
 *   5. the kernel's layouts on one 64 x 64 tile (a first-run diagnosis):
 *      with V = I the output is the attention matrix P itself; with K = I
 *      and one-hot queries it is one-hot at a known key. A wrong K / V
 *      panel, key order or fragment shows as a misplaced peak or P entry,
 *      printed with its row, column and the key permutation that fits.
 * 1, 2 and 5 skip() without a device of compute capability 9.0, 3 without a
 * CUDA device, 4 without one or on 9.0.
 * Environment: OPP_GPU_TEST_BATCHES (default 300; this test runs a third,
 * at least 1), OPP_GPU_TEST_SEED (default 20261203), OPP_GPU_TEST_MAX_LEN
 * (default 0: no cap).
 * Run (GPU machine, no Bazel): LD_LIBRARY_PATH=<dir of libcmocka.so.0>
 *   ./tf32x3_gpu_test
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/gpu_a24.h"
#include "harness/gpu_packed.h"
#include "harness/progress.h"
#include "harness/rng.h"
#include "lib/oppacked.h"
#include "tests/exact_gpu_util.h"
#include "tests/fast_gpu_util.h"
#include "tests/gpu_util.h"
#include "tests/test_util.h"

/* The accuracy bound, stated before the kernel's first GPU run, in the form
 * of the FFMA kernel's (tests/fast_gpu_check.c): every valid output element
 * within TF32X3_REL * (max |exact| + max |V| / 2).
 * FFMA's factor, 2^-14, covers fp32 scores, ex2.approx and fp32 sums over
 * up to 2^13 keys. 3xTF32 adds two things:
 *  - each product a b becomes lo_a hi_b + hi_a lo_b + hi_a hi_b with
 *    hi = tf32(x) (11 significant bits, nearest: |x - hi| <= 2^-11 |x|) and
 *    lo = tf32(x - hi) (|x - hi - lo| <= 2^-22 |x|): the dropped lo_a lo_b
 *    and the two lo roundings leave at most 3 * 2^-22 |a b| < 2^-20 |a b|
 *    per product (about 2^-21 typically), so at D <= 64 a score moves by
 *    less than the 64 * 2^-24 = 2^-18 of sum |q k| that FFMA's own fp32
 *    accumulation may already lose: inside FFMA's factor;
 *  - the tensor cores' fp32 accumulation aligns each k8 step's products to
 *    the largest term and may truncate: at most one ulp (2^-23) of the
 *    accumulator per step, three steps (the three products) per 8 keys of
 *    P V, so at most 3 * 2^13 / 8 * 2^-23 < 2^-11.4 of max |V| on the
 *    stream's longest rows (8192 keys), even if every step lost a whole ulp
 *    in the same direction (the kernel's default, OPP__TF32X3_O_FRESH 1,
 *    truncates against one key block's sum instead and adds the blocks to
 *    O by FFMA, to nearest: far inside this).
 * 2^-14 + 2^-11.4 < 2^-11 = 8x FFMA's factor. The criterion
 * (TF32X3_MAX_RATIO, on the measured errors of both kernels) is the sharper
 * check; this bound catches a wrong kernel (a missed key block, mask or
 * scale: O(1) errors) batch by batch. */
#define TF32X3_REL       0x1p-11
#define TF32X3_MAX_RATIO 10.0

static long n_batches(void) {
    const long n = opp_test_env_long("OPP_GPU_TEST_BATCHES", 300) / 3;
    return n > 0 ? n : 1;
}

static uint64_t base_seed(void) {
    return (uint64_t)opp_test_env_long("OPP_GPU_TEST_SEED", 20261203);
}

/* The current device's compute capability (0: no usable device). */
static int32_t device_sm(void) {
    int32_t sm = 0;
    if (opp_test_gpu_count() == 0 || opp_device_sm_arch(&sm) != OPP_STATUS_SUCCESS) {
        return 0;
    }
    return sm;
}

/* skip() unless the device is of compute capability 9.0 (what TF32X3 runs on). */
#define REQUIRE_SM90()                                                                     \
    do {                                                                                   \
        const int32_t sm_ = device_sm();                                                   \
        if (sm_ != 90) {                                                                   \
            if (sm_ != 0) {                                                                \
                printf("TF32X3 needs compute capability 9.0 (this device: %d): skipped\n", \
                       (int)sm_);                                                          \
            }                                                                              \
            skip();                                                                        \
        }                                                                                  \
    } while (0)

static const int32_t head_pairs[][2] = {{8, 8},   {12, 12}, {16, 16}, {20, 20}, {24, 24}, {28, 28},
                                        {32, 32}, {36, 36}, {40, 40}, {44, 44}, {48, 48}, {52, 52},
                                        {56, 56}, {60, 60}, {64, 64}, {64, 32}, {32, 64}, {8, 64},
                                        {64, 8},  {40, 24}, {16, 48}, {28, 60}};
#define N_HEAD_PAIRS ((long)(sizeof(head_pairs) / sizeof(head_pairs[0])))

/* Batch i of the stream: fast_gpu_test's f32 batch i (lengths - zero-length
 * sequences, L_q > L_kv, decode shapes, a 2k..8k sequence every 25th -
 * causal, softcap, scale) with TF32X3's head sizes and G in {1, 2, 3, 4, 8}
 * (one kv head for the long batches). */
static void gen_batch(long i, uint64_t seed, opp_lb_t *lb) {
    opp_lb_t g;
    opp_ft_gen_batch_dtype(i, seed, OPP_DTYPE_F32, &g);
    uint64_t st = seed ^ ((uint64_t)i * 0xD1B54A32D192ED03ull);
    (void)opp_rng_u64(&st);
    static const int32_t ratios[5] = {1, 2, 4, 8, 3};
    const int32_t ratio = ratios[opp_rng_int(&st, 0, 4)];
    const int32_t hkv = g.total_q + g.total_kv > 4096 ? 1 : opp_rng_int(&st, 1, ratio == 8 ? 2 : 3);
    const int32_t *hd = head_pairs[i % N_HEAD_PAIRS];
    const int rc =
        opp_lb_from_lengths(lb, OPP_DTYPE_F32, g.batch, g.lq, g.lkv, hkv * ratio, hkv, hd[0], hd[1],
                            g.scale, g.is_causal, g.softcap, opp_rng_u64(&st));
    opp_lb_free(&g);
    assert_int_equal(rc, 0);
}

/* Index of the head-size bucket of lb (max of D and Dv): <= 16, <= 32, <= 64. */
static int bucket_of(const opp_lb_t *lb) {
    const int32_t d = lb->head_size > lb->v_head_size ? lb->head_size : lb->v_head_size;
    return d <= 16 ? 0 : (d <= 32 ? 1 : 2);
}

static double rms_of(const opp_ft_err_t *e) {
    return e->elems > 0 ? sqrt(e->sum_sq / (double)e->elems) : 0.0;
}

/* One ratio line: TF32X3's max abs and RMS error as multiples of FFMA's. */
static void print_ratio(const char *label, const opp_ft_err_t *t, const opp_ft_err_t *f) {
    printf("  %-22s max abs %.3e / %.3e = x%.3g, RMS %.3e / %.3e = x%.3g\n", label, t->max_abs,
           f->max_abs, f->max_abs > 0.0 ? t->max_abs / f->max_abs : 0.0, rms_of(t), rms_of(f),
           rms_of(f) > 0.0 ? rms_of(t) / rms_of(f) : 0.0);
}

static void test_tf32x3_stream(void **state) {
    (void)state;
    REQUIRE_SM90();
    const long batches = n_batches();
    const uint64_t seed = base_seed();
    size_t runs = 0, keyless = 0, tokens = 0;
    opp_ft_err_t tf[3], ff[3], tf_all, ff_all;
    memset(tf, 0, sizeof(tf));
    memset(ff, 0, sizeof(ff));
    memset(&tf_all, 0, sizeof(tf_all));
    memset(&ff_all, 0, sizeof(ff_all));
    const double t0 = opp_progress_now_s();
    for (long i = 0; i < batches; ++i) {
        opp_lb_t lb;
        gen_batch(i, seed, &lb);
        char desc[600], d[512];
        opp_lb_describe(&lb, d, sizeof(d));
        snprintf(desc, sizeof(desc), "f32 batch %ld (TF32X3): %s", i, d);
        assert_string_equal(opp_ft_kernel_of(&lb, OPP_ALGO_TF32X3, 90), "tf32x3_f32_d64");
        assert_int_equal(strncmp(opp_ft_kernel_of(&lb, OPP_ALGO_FAST, 90), "ffma_f32_", 9), 0);
        opp_ft_res_t t, f, exact;
        opp_ft_run_packed(&lb, OPP_ALGO_TF32X3, NULL, &t);
        keyless += opp_ft_assert_sane(&lb, &t, desc) > 0;
        runs += 1 + (size_t)opp_ft_check_invariance_algo(&lb, &t, OPP_ALGO_TF32X3, NULL,
                                                         seed ^ (uint64_t)i, 1, desc);
        opp_ft_run_packed(&lb, OPP_ALGO_EXACT, NULL, &exact);
        opp_ft_run_packed(&lb, OPP_ALGO_FAST, NULL, &f);
        const int k = bucket_of(&lb);
        opp_ft_check_accuracy_rel(&lb, &t, &exact, TF32X3_REL, &tf[k], desc);
        opp_ft_check_accuracy(&lb, &f, &exact, &ff[k], desc); /* FFMA's own bound, 2^-14 */
        tokens += (size_t)lb.total_q;
        opp_ft_res_free(&t);
        opp_ft_res_free(&f);
        opp_ft_res_free(&exact);
        opp_lb_free(&lb);
    }
    printf("f32 TF32X3: %ld generated batches, %zu query tokens, %zu with rows that see no key; "
           "%zu runs: packed == padded 4D/3D (finite, NaN padding) == alone == reversed == "
           "between other sequences == repeated, bit for bit, out and LSE (%.1f s)\n",
           batches, tokens, keyless, runs, opp_progress_now_s() - t0);
    printf("f32 accuracy vs EXACT (the double reference), valid output elements; TF32X3 bound "
           "2^-11 (max |exact| + max |V| / 2), FFMA's 2^-14:\n");
    printf("  %-22s %7s %11s   %10s %10s   %10s   %10s\n", "kernel, max(D, Dv)", "batches",
           "elements", "max abs", "RMS", "max|exact|", "max dLSE");
    static const char *const names[3] = {"<= 16", "17..32", "33..64"};
    char label[64];
    for (int k = 0; k < 3; ++k) {
        if (tf[k].batches > 0) {
            snprintf(label, sizeof(label), "TF32X3 %s", names[k]);
            opp_ft_err_print(label, &tf[k]);
            snprintf(label, sizeof(label), "FFMA   %s", names[k]);
            opp_ft_err_print(label, &ff[k]);
        }
        opp_ft_err_merge(&tf_all, &tf[k]);
        opp_ft_err_merge(&ff_all, &ff[k]);
    }
    opp_ft_err_print("TF32X3 all", &tf_all);
    opp_ft_err_print("FFMA   all", &ff_all);
    printf("TF32X3 error as a multiple of FFMA's on the same inputs (issue 11: at most %g):\n",
           TF32X3_MAX_RATIO);
    for (int k = 0; k < 3; ++k) {
        if (tf[k].batches > 0) {
            print_ratio(names[k], &tf[k], &ff[k]);
        }
    }
    print_ratio("all", &tf_all, &ff_all);
    assert_true(tf_all.elems > 0);
    /* an FFMA error of exactly 0 over the whole stream would make any TF32X3
     * error infinitely worse: then TF32X3 must be exact too */
    assert_true(tf_all.max_abs <= TF32X3_MAX_RATIO * ff_all.max_abs);
    assert_true(rms_of(&tf_all) <= TF32X3_MAX_RATIO * rms_of(&ff_all));
}

/* AUTO and FAST: an ffma_ row for f32 (D = Dv = 64); TF32X3: its row on
 * 9.0, NOT_SUPPORTED_ARCH with the reason elsewhere. */
static void test_tf32x3_opt_in(void **state) {
    (void)state;
    const int32_t sm = device_sm();
    if (sm < 80) {
        skip();
    }
    opp_attention_desc_t d;
    opp_attention_desc_init(&d);
    d.q_dtype = d.k_dtype = d.v_dtype = d.out_dtype = OPP_DTYPE_F32;
    d.batch = 2;
    d.num_heads = 8;
    d.kv_num_heads = 2;
    d.head_size = d.v_head_size = 64;
    d.total_q = d.total_kv = 100;
    d.max_seqlen_q = d.max_seqlen_kv = 60;
    const opp_algo_t algos[2] = {OPP_ALGO_AUTO, OPP_ALGO_FAST};
    const char *name = NULL;
    for (int k = 0; k < 2; ++k) {
        d.algo = algos[k];
        assert_opp_ok(opp_attention_kernel_query(&d, sm, &name));
        printf("f32 %s, D = Dv = 64 on sm_%d: %s\n", k == 0 ? "AUTO" : "FAST", (int)sm, name);
        assert_int_equal(strncmp(name, "ffma_f32_", 9), 0);
    }
    d.algo = OPP_ALGO_TF32X3;
    if (sm == 90) {
        assert_opp_ok(opp_attention_kernel_query(&d, sm, &name));
        assert_string_equal(name, "tf32x3_f32_d64");
    } else {
        assert_opp_status(opp_attention_kernel_query(&d, sm, &name), OPP_STATUS_NOT_SUPPORTED_ARCH,
                          "TF32X3 needs compute capability 9.0");
    }
    printf("f32 TF32X3, D = Dv = 64 on sm_%d: %s\n", (int)sm,
           sm == 90 ? name : opp_last_error_message());
}

/* On a GPU other than 9.0 both entries refuse TF32X3 before any launch:
 * NOT_SUPPORTED_ARCH naming the device, and out / y (NaN-poisoned) and LSE
 * untouched. */
static void test_tf32x3_other_gpu_not_supported(void **state) {
    (void)state;
    const int32_t sm = device_sm();
    if (sm == 0 || sm == 90) {
        skip();
    }
    const int32_t lq[3] = {5, 0, 70}, lkv[3] = {9, 3, 64};
    opp_lb_t lb;
    assert_int_equal(
        opp_lb_from_lengths(&lb, OPP_DTYPE_F32, 3, lq, lkv, 8, 2, 64, 32, 0.0f, 1, 0.0f, 11), 0);
    opp_test_packed_dev_t dev; /* out poisoned with NaN */
    opp_test_packed_upload(&lb, &dev);
    opp_hgpu_packed_call_t c = {.dev = &dev, .stream = NULL};
    opp_lb_packed_desc(&lb, &c.desc);
    c.desc.algo = OPP_ALGO_TF32X3;
    assert_opp_status(opp_hgpu_packed_run(&c), OPP_STATUS_NOT_SUPPORTED_ARCH,
                      "TF32X3 needs compute capability 9.0");
    printf("packed entry, TF32X3 on sm_%d: %s\n", (int)sm, opp_last_error_message());
    opp_test_gpu_sync();
    void *out = opp_test_packed_download(&dev);
    opp_ft_assert_all_nan(out, opp_test_out_elems(&lb), OPP_DTYPE_F32, "out of a refused run");
    free(out);
    opp_test_packed_free(&dev);

    opp_lb_padded_t pad;
    assert_int_equal(opp_lb_to_padded(&lb, 4, OPP_LB_POISON_NAN, &pad), 0);
    const opp_ref_attention24_tensors_t host = opp_lb_padded_tensors(&pad);
    opp_ref_attention24_tensors_t a24; /* y poisoned with NaN */
    opp_hgpu_a24_upload(&pad.desc, &host, OPP_HGPU_POISON_NAN, &a24);
    opp_hgpu_nonpad_call_t n;
    opp_ft_nonpad_call(&pad, &a24, OPP_ALGO_TF32X3, &n);
    assert_opp_status(opp_hgpu_nonpad_run(&n), OPP_STATUS_NOT_SUPPORTED_ARCH,
                      "TF32X3 needs compute capability 9.0");
    opp_test_gpu_sync();
    void *y = malloc(pad.y_elems * sizeof(float) + 1);
    assert_non_null(y);
    opp_test_d2h(y, a24.y, pad.y_elems * sizeof(float));
    opp_ft_assert_all_nan(y, pad.y_elems, OPP_DTYPE_F32, "y of a refused run");
    free(y);
    opp_test_gpu_free(n.workspace);
    assert_int_equal(opp_hgpu_a24_free(&a24), cudaSuccess);
    opp_lb_padded_free(&pad);
    opp_lb_free(&lb);
}

/* 5: one sequence, 64 queries, 64 keys, one head, D = Dv = 64, scale 1. */
#define LAYOUT_N 64

/* The key permutation the kernel's V panels use inside 8-key groups (0 2 4
 * 6 1 3 5 7: position u holds key perm8(u)) and its inverse. */
static int perm8(int k) {
    const int u = k & 7;
    return (k & ~7) + (u < 4 ? 2 * u : 2 * (u - 4) + 1);
}
static int perm8_inv(int k) {
    const int u = k & 7;
    return (k & ~7) + (u % 2 == 0 ? u / 2 : 4 + u / 2);
}

/* Which mapping of key -> column explains argmax column got for key want. */
static const char *layout_guess(int got, int want) {
    return got == perm8(want)          ? "key order 0 2 4 6 1 3 5 7 applied once too often"
           : got == perm8_inv(want)    ? "key order 0 2 4 6 1 3 5 7 inverted"
           : (got ^ 8) == want         ? "8-key groups swapped"
           : (got % 32) == (want % 32) ? "the wrong 32-column panel"
                                       : "no simple permutation";
}

static void test_tf32x3_layout(void **state) {
    (void)state;
    if (device_sm() != 90) {
        skip();
    }
    const int n = LAYOUT_N;
    const int32_t len[1] = {LAYOUT_N};
    opp_lb_t lb;
    assert_int_equal(
        opp_lb_from_lengths(&lb, OPP_DTYPE_F32, 1, len, len, 1, 1, n, n, 1.0f, 0, 0.0f, 5), 0);
    float *q = (float *)lb.q, *k = (float *)lb.k, *v = (float *)lb.v;
    int bad = 0;

    /* (a) K = I, query r = 20 e_{c(r)}, V = I: out row r ~ e_{c(r)} (its
     * weight 1 / (1 + 63 e^-20)) */
    for (int r = 0; r < n; ++r) {
        for (int d = 0; d < n; ++d) {
            q[r * n + d] = d == (5 * r + 3) % n ? 20.0f : 0.0f;
            k[r * n + d] = v[r * n + d] = r == d ? 1.0f : 0.0f;
        }
    }
    opp_ft_res_t res;
    opp_ft_run_packed(&lb, OPP_ALGO_TF32X3, NULL, &res);
    const float *o = (const float *)res.out;
    for (int r = 0; r < n; ++r) {
        const int want = (5 * r + 3) % n;
        int got = 0;
        for (int d = 1; d < n; ++d) {
            got = o[r * n + d] > o[r * n + got] ? d : got;
        }
        if (got != want || !(o[r * n + got] > 0.999f)) {
            if (bad++ < 8) {
                printf("one-hot probe: row %d peaks at column %d (%.6g), want %d: %s\n", r, got,
                       (double)o[r * n + got], want, layout_guess(got, want));
            }
        }
    }
    opp_ft_res_free(&res);

    /* (b) random Q, K (the generator's), V = I: out = P, against the double
     * softmax of Q K^T */
    opp_lb_free(&lb);
    assert_int_equal(
        opp_lb_from_lengths(&lb, OPP_DTYPE_F32, 1, len, len, 1, 1, n, n, 0.125f, 0, 0.0f, 6), 0);
    q = (float *)lb.q, k = (float *)lb.k, v = (float *)lb.v;
    for (int r = 0; r < n; ++r) {
        for (int d = 0; d < n; ++d) {
            v[r * n + d] = r == d ? 1.0f : 0.0f;
        }
    }
    opp_ft_run_packed(&lb, OPP_ALGO_TF32X3, NULL, &res);
    o = (const float *)res.out;
    double worst = 0.0;
    int shown = 0;
    for (int r = 0; r < n; ++r) {
        double s[LAYOUT_N], mx = -INFINITY, sum = 0.0;
        for (int c = 0; c < n; ++c) {
            s[c] = 0.0;
            for (int d = 0; d < n; ++d) {
                s[c] += (double)q[r * n + d] * (double)k[c * n + d];
            }
            s[c] *= 0.125;
            mx = s[c] > mx ? s[c] : mx;
        }
        for (int c = 0; c < n; ++c) {
            s[c] = exp(s[c] - mx);
            sum += s[c];
        }
        for (int c = 0; c < n; ++c) {
            const double e = fabs((double)o[r * n + c] - s[c] / sum);
            worst = e > worst ? e : worst;
            if (e > 1e-5) {
                ++bad;
                if (shown++ < 8) {
                    printf("P probe: out[%d][%d] = %.8g, P = %.8g\n", r, c, (double)o[r * n + c],
                           s[c] / sum);
                }
            }
        }
    }
    printf("layout probes: %d wrong, P probe max |out - P| = %.3g\n", bad, worst);
    opp_ft_res_free(&res);
    opp_lb_free(&lb);
    assert_int_equal(bad, 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tf32x3_stream),
        cmocka_unit_test(test_tf32x3_opt_in),
        cmocka_unit_test(test_tf32x3_other_gpu_not_supported),
        cmocka_unit_test(test_tf32x3_layout),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
