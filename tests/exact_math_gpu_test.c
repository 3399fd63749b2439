/*
 * exact_math_gpu_test.c - CMocka test that the GPU computes the exact path's
 * shared numerics bit for bit like the host: opp__exp, opp__tanh,
 * double -> f16/bf16/f32 and f16/bf16/f32 -> double (lib/internal/
 * exact_math.h, fp_convert.h) on >= 10^6 inputs (random over the
 * interesting ranges, near-tie conversion inputs, random bit patterns with
 * NaNs/infs/subnormals, all 65536 f16 and bf16 patterns, edge cases). The
 * device side is tests/exact_math_gpu.cu (nvcc -fmad=false). Every test
 * skip()s when there is no CUDA device.
 * Run: bazel test //tests:exact_math_gpu_test --test_output=all
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <float.h>

#include <cmocka.h>

#include "numerics/exact_math.h"
#include "numerics/fp_convert.h"
#include "tests/exact_math_gpu.h"

#define N_RANDOM (1u << 20)

static uint64_t rng_next(uint64_t *s) {
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1Dull;
}

static double rng_uniform(uint64_t *s, double lo, double hi) {
    return fma(hi - lo, (double)(rng_next(s) >> 11) * 0x1p-53, lo);
}

/* Inputs: edge cases first, then N_RANDOM points cycling through ranges. */
static double *make_inputs(size_t *n_out) {
    static const double edges[] = {0.0,
                                   -0.0,
                                   INFINITY,
                                   -INFINITY,
                                   NAN,
                                   -NAN,
                                   1.0,
                                   -1.0,
                                   0x1p-1074,
                                   -0x1p-1074,
                                   DBL_MIN,
                                   DBL_MAX,
                                   -DBL_MAX,
                                   709.78,
                                   0x1.62e42fefa39efp+9,
                                   0x1.62e42fefa39f0p+9,
                                   709.79,
                                   -708.3964185322641,
                                   -744.4400719213812,
                                   -745.1332191019412,
                                   -745.2,
                                   19.0615474653985,
                                   22.0,
                                   0x1p-27,
                                   1e-8,
                                   65504.0,
                                   65519.99,
                                   65520.0,
                                   0x1p-24,
                                   0x1p-25,
                                   1.0 + 0x1p-11,
                                   1.0 + 0x1p-8 + 0x1p-30,
                                   0x1.ffp127,
                                   0x1.fep127,
                                   0x1p-133,
                                   0x1p-134};
    const size_t n_edges = sizeof edges / sizeof edges[0];
    double *x = malloc((n_edges + N_RANDOM) * sizeof *x);
    assert_non_null(x);
    for (size_t i = 0; i < n_edges; ++i) {
        x[i] = edges[i];
    }
    uint64_t s = 0x6A09E667F3BCC909ull;
    for (size_t i = 0; i < N_RANDOM; ++i) {
        double v;
        switch (i % 8) {
        case 0:
        case 1:
            v = rng_uniform(&s, -746.0, 710.0);
            break;
        case 2:
            v = rng_uniform(&s, -30.0, 30.0);
            break;
        case 3:
            v = rng_uniform(&s, -745.3, -708.0);
            break;
        case 4: /* log-uniform tiny magnitudes */
            v = ldexp(1.0 + (double)(rng_next(&s) >> 11) * 0x1p-53, -(int)(rng_next(&s) % 80)) *
                ((rng_next(&s) & 1) ? -1.0 : 1.0);
            break;
        case 5: { /* near an f16 tie */
            const uint16_t p = (uint16_t)(rng_next(&s) % 0x7BFF);
            const double mid =
                0.5 * (opp__f16_to_double(p) + opp__f16_to_double((uint16_t)(p + 1)));
            v = opp__double_from_bits(opp__double_bits(mid) + rng_next(&s) % 5 - 2);
            break;
        }
        case 6: { /* near a bf16 tie */
            const uint16_t p = (uint16_t)(rng_next(&s) % 0x7F7F);
            const double mid =
                0.5 * (opp__bf16_to_double(p) + opp__bf16_to_double((uint16_t)(p + 1)));
            v = opp__double_from_bits(opp__double_bits(mid) + rng_next(&s) % 5 - 2);
            break;
        }
        default: /* any bit pattern: NaN payloads, infs, subnormals */
            v = opp__double_from_bits(rng_next(&s));
            break;
        }
        x[n_edges + i] = v;
    }
    *n_out = n_edges + N_RANDOM;
    return x;
}

/* Counts elements whose bits differ; prints the first 5. */
static size_t count_mismatch_f64(const char *what, const double *in, const double *dev,
                                 const double *host, size_t n) {
    size_t bad = 0;
    for (size_t i = 0; i < n; ++i) {
        if (opp__double_bits(dev[i]) != opp__double_bits(host[i]) && bad++ < 5) {
            printf("%s[%zu]: in=%a device=%a (0x%016llx) host=%a (0x%016llx)\n", what, i, in[i],
                   dev[i], (unsigned long long)opp__double_bits(dev[i]), host[i],
                   (unsigned long long)opp__double_bits(host[i]));
        }
    }
    printf("%-10s %zu elements, %zu bit mismatches device vs host\n", what, n, bad);
    return bad;
}

static size_t count_mismatch_u16(const char *what, const double *in, const uint16_t *dev,
                                 const uint16_t *host, size_t n) {
    size_t bad = 0;
    for (size_t i = 0; i < n; ++i) {
        if (dev[i] != host[i] && bad++ < 5) {
            printf("%s[%zu]: in=%a device=0x%04x host=0x%04x\n", what, i, in[i], dev[i], host[i]);
        }
    }
    printf("%-10s %zu elements, %zu bit mismatches device vs host\n", what, n, bad);
    return bad;
}

/* exp, tanh, double->f16 and double->bf16: device bits == host bits. */
static void test_device_exp_tanh_encode_match_host(void **state) {
    (void)state;
    if (opp_test_exact_math_on_device(NULL, 0, NULL, NULL, NULL, NULL) == -1) {
        skip();
    }
    size_t n;
    double *x = make_inputs(&n);
    double *de = malloc(n * sizeof *de), *dt = malloc(n * sizeof *dt);
    double *he = malloc(n * sizeof *he), *ht = malloc(n * sizeof *ht);
    uint16_t *dh = malloc(n * sizeof *dh), *db = malloc(n * sizeof *db);
    uint16_t *hh = malloc(n * sizeof *hh), *hb = malloc(n * sizeof *hb);
    assert_true(de && dt && he && ht && dh && db && hh && hb);
    assert_int_equal(opp_test_exact_math_on_device(x, n, de, dt, dh, db), 0);
    for (size_t i = 0; i < n; ++i) {
        he[i] = opp__exp(x[i]);
        ht[i] = opp__tanh(x[i]);
        hh[i] = opp__double_to_f16(x[i]);
        hb[i] = opp__double_to_bf16(x[i]);
    }
    size_t bad = count_mismatch_f64("exp", x, de, he, n);
    bad += count_mismatch_f64("tanh", x, dt, ht, n);
    bad += count_mismatch_u16("to_f16", x, dh, hh, n);
    bad += count_mismatch_u16("to_bf16", x, db, hb, n);
    free(x), free(de), free(dt), free(he), free(ht), free(dh), free(db), free(hh), free(hb);
    assert_int_equal(bad, 0);
}

/* f16/bf16/f32 -> double (all 16-bit patterns) and double -> f32. */
static void test_device_conversions_match_host(void **state) {
    (void)state;
    if (opp_test_convert_on_device(NULL, NULL, 0, NULL, NULL, NULL, NULL) == -1) {
        skip();
    }
    size_t n;
    double *x = make_inputs(&n);
    uint32_t *bits = malloc(n * sizeof *bits);
    double *d16 = malloc(n * sizeof *d16), *db16 = malloc(n * sizeof *db16);
    double *d32 = malloc(n * sizeof *d32), *h16 = malloc(n * sizeof *h16);
    double *hb16 = malloc(n * sizeof *hb16), *h32 = malloc(n * sizeof *h32);
    float *denc = malloc(n * sizeof *denc);
    assert_true(bits && d16 && db16 && d32 && h16 && hb16 && h32 && denc);
    uint64_t s = 0xBB67AE8584CAA73Bull;
    for (size_t i = 0; i < n; ++i) { /* i < 65536: every f16 (low) and bf16 (high) pattern */
        bits[i] = i < 0x10000u ? (uint32_t)(i | (i << 16)) : (uint32_t)rng_next(&s);
    }
    assert_int_equal(opp_test_convert_on_device(bits, x, n, d16, db16, d32, denc), 0);
    size_t bad_enc = 0;
    for (size_t i = 0; i < n; ++i) {
        h16[i] = opp__f16_to_double((uint16_t)(bits[i] & 0xFFFFu));
        hb16[i] = opp__bf16_to_double((uint16_t)(bits[i] >> 16));
        h32[i] = opp__f32_to_double(opp__float_from_bits(bits[i]));
        const uint32_t want = opp__float_bits(opp__double_to_f32(x[i]));
        if (opp__float_bits(denc[i]) != want && bad_enc++ < 5) {
            printf("to_f32[%zu]: in=%a device=0x%08x host=0x%08x\n", i, x[i],
                   opp__float_bits(denc[i]), want);
        }
    }
    printf("%-10s %zu elements, %zu bit mismatches device vs host\n", "to_f32", n, bad_enc);
    size_t bad = bad_enc;
    bad += count_mismatch_f64("from_f16", x, d16, h16, n);
    bad += count_mismatch_f64("from_bf16", x, db16, hb16, n);
    bad += count_mismatch_f64("from_f32", x, d32, h32, n);
    free(x), free(bits), free(d16), free(db16), free(d32), free(h16), free(hb16), free(h32);
    free(denc);
    assert_int_equal(bad, 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_device_exp_tanh_encode_match_host),
        cmocka_unit_test(test_device_conversions_match_host),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
