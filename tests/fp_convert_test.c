/*
 * fp_convert_test.c - CMocka tests of numerics/fp_convert.h on the host:
 * decoding of known f16/bf16 bit patterns, round-to-nearest-even encoding
 * (ties to even, the double-rounding trap, overflow and underflow
 * boundaries, signed zeros, infinities, NaNs), exhaustive round trips of all
 * 65536 f16 and bf16 patterns, double -> f16 against gcc's _Float16
 * conversion on 2*10^6 doubles, and double -> f16/bf16 against a brute-force
 * nearest-value oracle (binary search over the patterns, exact distances).
 * Run: bazel test //tests:fp_convert_test --test_output=all
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <math.h>
#include <float.h>

#include <cmocka.h>

#include "numerics/fp_convert.h"

/* xorshift64*: fixed seeds, so every run checks the same points. */
static uint64_t rng_next(uint64_t *s) {
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1Dull;
}

/* A random double with a random 52-bit fraction, exponent in [elo, ehi]
 * (unbiased, normal), random sign. */
static double rng_double_exp(uint64_t *s, int elo, int ehi) {
    const uint64_t r = rng_next(s);
    const int e = elo + (int)(rng_next(s) % (uint64_t)(ehi - elo + 1));
    const uint64_t bits =
        (r & OPP__F64_SIGN) | ((uint64_t)(e + 1023) << 52) | (rng_next(s) & 0x000FFFFFFFFFFFFFull);
    return opp__double_from_bits(bits);
}

#define ASSERT_F16(x, want)  assert_int_equal(opp__double_to_f16(x), (want))
#define ASSERT_BF16(x, want) assert_int_equal(opp__double_to_bf16(x), (want))

/* Decoded value is exactly `want`, sign of zero included. */
static void assert_decodes_to(double got, double want) {
    assert_true(opp__double_bits(got) == opp__double_bits(want));
}

/* Known f16 patterns decode to their exact values. */
static void test_f16_decode_known_patterns(void **state) {
    (void)state;
    assert_decodes_to(opp__f16_to_double(0x0001), 0x1p-24);
    assert_decodes_to(opp__f16_to_double(0x03FF), 1023.0 * 0x1p-24);
    assert_decodes_to(opp__f16_to_double(0x0400), 0x1p-14);
    assert_decodes_to(opp__f16_to_double(0x3C00), 1.0);
    assert_decodes_to(opp__f16_to_double(0x3C01), 1.0 + 0x1p-10);
    assert_decodes_to(opp__f16_to_double(0xC000), -2.0);
    assert_decodes_to(opp__f16_to_double(0x3555), 0x1.554p-2);
    assert_decodes_to(opp__f16_to_double(0x7BFF), 65504.0);
    assert_decodes_to(opp__f16_to_double(0x0000), 0.0);
    assert_decodes_to(opp__f16_to_double(0x8000), -0.0);
    assert_true(opp__f16_to_double(0x7C00) == INFINITY);
    assert_true(opp__f16_to_double(0xFC00) == -INFINITY);
    const uint16_t nans[] = {0x7E00, 0x7C01, 0x7FFF, 0xFE00, 0xFC01};
    for (size_t i = 0; i < sizeof nans / sizeof nans[0]; ++i) {
        const double d = opp__f16_to_double(nans[i]);
        assert_true(isnan(d));
        assert_true((opp__double_bits(d) & OPP__F64_QUIET_BIT) != 0);
        assert_int_equal(signbit(d) != 0, (nans[i] & 0x8000) != 0);
    }
}

/* Known bf16 patterns decode to their exact values. */
static void test_bf16_decode_known_patterns(void **state) {
    (void)state;
    assert_decodes_to(opp__bf16_to_double(0x3F80), 1.0);
    assert_decodes_to(opp__bf16_to_double(0x0001), 0x1p-133);
    assert_decodes_to(opp__bf16_to_double(0x007F), 127.0 * 0x1p-133);
    assert_decodes_to(opp__bf16_to_double(0x0080), 0x1p-126);
    assert_decodes_to(opp__bf16_to_double(0x7F7F), 0x1.fep127);
    assert_decodes_to(opp__bf16_to_double(0x4049), 3.140625);
    assert_decodes_to(opp__bf16_to_double(0xBF80), -1.0);
    assert_decodes_to(opp__bf16_to_double(0x8000), -0.0);
    assert_true(opp__bf16_to_double(0x7F80) == INFINITY);
    assert_true(opp__bf16_to_double(0xFF80) == -INFINITY);
    assert_true(isnan(opp__bf16_to_double(0x7FC0)));
    assert_true(isnan(opp__bf16_to_double(0x7F81)));
    assert_true(signbit(opp__bf16_to_double(0xFFC0)));
}

/* f16 ties go to the even pattern; anything off the tie goes to the nearest. */
static void test_f16_encode_ties_to_even(void **state) {
    (void)state;
    ASSERT_F16(1.0 + 0x1p-11, 0x3C00);           /* tie, 0x3C00 even */
    ASSERT_F16(1.0 + 3 * 0x1p-11, 0x3C02);       /* tie, 0x3C02 even */
    ASSERT_F16(1.0 + 0x1p-11 + 0x1p-40, 0x3C01); /* just above the tie */
    ASSERT_F16(1.0 + 0x1p-11 - 0x1p-40, 0x3C00); /* just below */
    ASSERT_F16(-(1.0 + 3 * 0x1p-11), 0xBC02);
    ASSERT_F16(1.0 + 0x1p-11 + 0x1p-52, 0x3C01); /* last double above the tie */
    ASSERT_F16(2048.0 + 1.0, 0x6800);            /* 2049: tie at ulp 2 */
    ASSERT_F16(2048.0 + 3.0, 0x6802);
    ASSERT_F16(0x1p-14 - 0x1p-25, 0x0400); /* subnormal max/min normal tie */
    ASSERT_F16(0x1p-14 - 0x1p-25 - 0x1p-60, 0x03FF);
}

/* f16 overflow: 65520 and above (half an ulp above 65504) become inf. */
static void test_f16_encode_overflow_boundary(void **state) {
    (void)state;
    ASSERT_F16(65504.0, 0x7BFF);
    ASSERT_F16(65519.99, 0x7BFF);
    ASSERT_F16(nextafter(65520.0, 0.0), 0x7BFF);
    ASSERT_F16(65520.0, 0x7C00);
    ASSERT_F16(-65520.0, 0xFC00);
    ASSERT_F16(-65519.99, 0xFBFF);
    ASSERT_F16(65536.0, 0x7C00);
    ASSERT_F16(1e300, 0x7C00);
    ASSERT_F16(DBL_MAX, 0x7C00);
    ASSERT_F16(-DBL_MAX, 0xFC00);
    ASSERT_F16(INFINITY, 0x7C00);
    ASSERT_F16(-INFINITY, 0xFC00);
}

/* f16 subnormals and underflow: half the smallest subnormal rounds to 0. */
static void test_f16_encode_subnormal_and_underflow(void **state) {
    (void)state;
    ASSERT_F16(0x1p-24, 0x0001);
    ASSERT_F16(0x1p-25, 0x0000); /* tie -> even 0 */
    ASSERT_F16(0x1p-25 + 0x1p-70, 0x0001);
    ASSERT_F16(-0x1p-25, 0x8000);
    ASSERT_F16(-(0x1p-25 + 0x1p-70), 0x8001);
    ASSERT_F16(3 * 0x1p-25, 0x0002); /* 1.5 subnormal ulps: tie -> 2 */
    ASSERT_F16(5 * 0x1p-25, 0x0002); /* 2.5: tie -> 2 */
    ASSERT_F16(1023.0 * 0x1p-24, 0x03FF);
    ASSERT_F16(0x1p-26, 0x0000);
    ASSERT_F16(1e-300, 0x0000);
    ASSERT_F16(4.9e-324, 0x0000); /* double subnormal */
    ASSERT_F16(-4.9e-324, 0x8000);
    ASSERT_F16(0.0, 0x0000);
    ASSERT_F16(-0.0, 0x8000);
}

/* NaN encodes to the quiet NaN with the sign kept; f16/bf16 alike. */
static void test_encode_nan_is_quiet_with_sign(void **state) {
    (void)state;
    const double qnan = opp__double_from_bits(0x7FF8000000000000ull);
    const double snan = opp__double_from_bits(0x7FF0000000000001ull);
    const double nqnan = opp__double_from_bits(0xFFF8000000000123ull);
    ASSERT_F16(qnan, 0x7E00);
    ASSERT_F16(snan, 0x7E00);
    ASSERT_F16(nqnan, 0xFE00);
    ASSERT_BF16(qnan, 0x7FC0);
    ASSERT_BF16(snan, 0x7FC0);
    ASSERT_BF16(nqnan, 0xFFC0);
    const uint32_t f = opp__float_bits(opp__double_to_f32(nqnan));
    assert_int_equal(f, 0xFFC00000u);
    assert_int_equal(opp__float_bits(opp__double_to_f32(snan)), 0x7FC00000u);
}

/* bf16 ties to even, and the double-rounding trap: via float would be wrong. */
static void test_bf16_encode_ties_and_double_rounding_trap(void **state) {
    (void)state;
    ASSERT_BF16(1.0, 0x3F80);
    ASSERT_BF16(1.0 + 0x1p-8, 0x3F80);     /* tie -> even */
    ASSERT_BF16(1.0 + 3 * 0x1p-8, 0x3F82); /* tie -> even */
    ASSERT_BF16(-(1.0 + 3 * 0x1p-8), 0xBF82);
    ASSERT_BF16(1.0 + 0x1p-8 - 0x1p-60, 0x3F80);
    /* Just above a tie, but within half a float ulp of it: (float)x is the
     * tie itself, so double -> float -> bf16 would give 0x3F80. */
    const double trap = 1.0 + 0x1p-8 + 0x1p-30;
    const float via_float = (float)trap;
    assert_int_equal(opp__float_bits(via_float), opp__float_bits(1.0f + 0x1p-8f));
    ASSERT_BF16(trap, 0x3F81);
    ASSERT_BF16(-trap, 0xBF81);
    ASSERT_BF16(3.0 + 3 * 0x1p-7 + 0x1p-40, 0x4042); /* 3.0234..+: above tie, up */
}

/* bf16 overflow, subnormals, underflow, signed zeros, infinities. */
static void test_bf16_encode_boundaries(void **state) {
    (void)state;
    ASSERT_BF16(0x1.fep127, 0x7F7F); /* max finite */
    ASSERT_BF16(0x1.ffp127, 0x7F80); /* tie max/2^128 -> even = inf */
    ASSERT_BF16(nextafter(0x1.ffp127, 0.0), 0x7F7F);
    ASSERT_BF16((double)FLT_MAX, 0x7F80);
    ASSERT_BF16(-0x1.ffp127, 0xFF80);
    ASSERT_BF16(1e300, 0x7F80);
    ASSERT_BF16(INFINITY, 0x7F80);
    ASSERT_BF16(-INFINITY, 0xFF80);
    ASSERT_BF16(0x1p-126, 0x0080);
    ASSERT_BF16(0x1p-133, 0x0001);
    ASSERT_BF16(0x1p-134, 0x0000); /* tie -> 0 */
    ASSERT_BF16(0x1p-134 + 0x1p-180, 0x0001);
    ASSERT_BF16(-0x1p-134, 0x8000);
    ASSERT_BF16(3 * 0x1p-134, 0x0002);
    ASSERT_BF16(0x1p-126 - 0x1p-134, 0x0080); /* tie 0x7F / 0x80 -> even */
    ASSERT_BF16(0x1p-140, 0x0000);
    ASSERT_BF16(4.9e-324, 0x0000);
    ASSERT_BF16(0.0, 0x0000);
    ASSERT_BF16(-0.0, 0x8000);
}

/* Decode then encode gives back every f16 pattern (NaNs: a quiet NaN). */
static void test_f16_round_trip_exhaustive(void **state) {
    (void)state;
    for (uint32_t h = 0; h < 0x10000u; ++h) {
        const double d = opp__f16_to_double((uint16_t)h);
        const uint16_t back = opp__double_to_f16(d);
        if ((h & 0x7C00u) == 0x7C00u && (h & 0x03FFu) != 0) {
            assert_true(isnan(d));
            assert_int_equal(back, (h & 0x8000u) | 0x7E00u);
        } else {
            assert_int_equal(back, h);
        }
    }
}

/* Decode then encode gives back every bf16 pattern (NaNs: a quiet NaN). */
static void test_bf16_round_trip_exhaustive(void **state) {
    (void)state;
    for (uint32_t h = 0; h < 0x10000u; ++h) {
        const double d = opp__bf16_to_double((uint16_t)h);
        const uint16_t back = opp__double_to_bf16(d);
        if ((h & 0x7F80u) == 0x7F80u && (h & 0x007Fu) != 0) {
            assert_true(isnan(d));
            assert_int_equal(back, (h & 0x8000u) | 0x7FC0u);
        } else {
            assert_int_equal(back, h);
        }
        /* bf16 is the top half of an f32: the f32 path agrees exactly */
        const float f = opp__float_from_bits(h << 16);
        if (!isnan(d)) {
            assert_decodes_to(opp__f32_to_double(f), d);
        }
    }
}

/* An input set spread over all relevant exponents, plus near-tie points. */
static double sample_input(uint64_t *s, uint64_t i, double (*decode)(uint16_t), uint16_t maxpat,
                           int elo, int ehi) {
    switch (i % 4) {
    case 0:
        return rng_double_exp(s, elo, ehi);
    case 1: { /* near the midpoint of two neighbours: +-few double ulps */
        const uint16_t p = (uint16_t)(rng_next(s) % maxpat);
        const double mid = 0.5 * (decode(p) + decode((uint16_t)(p + 1)));
        const int64_t k = (int64_t)(rng_next(s) % 9) - 4;
        const double x = opp__double_from_bits(opp__double_bits(mid) + (uint64_t)k);
        return (rng_next(s) & 1) ? -x : x;
    }
    case 2: { /* a nonzero representable value, perturbed by at most 1 ulp */
        const uint16_t p = (uint16_t)(1 + rng_next(s) % maxpat);
        const uint64_t k = rng_next(s) % 3; /* bits - 1, bits, bits + 1 */
        return opp__double_from_bits(opp__double_bits(decode(p)) + k - 1);
    }
    default:
        return rng_double_exp(s, elo - 40, ehi + 40);
    }
}

#ifdef __FLT16_MAX__
/* double -> f16 equals gcc's own (_Float16) conversion, a single RNE. */
static void test_f16_encode_matches_float16_cast(void **state) {
    (void)state;
    uint64_t s = 0x9E3779B97F4A7C15ull;
    size_t mismatches = 0;
    const size_t n = 2000000;
    for (size_t i = 0; i < n; ++i) {
        const double x = sample_input(&s, i, opp__f16_to_double, 0x7BFF, -26, 16);
        const _Float16 h = (_Float16)x;
        uint16_t want;
        memcpy(&want, &h, sizeof want);
        const uint16_t got = opp__double_to_f16(x);
        if (got != want && mismatches++ < 5) {
            printf("f16 mismatch: x=%a got=0x%04x want=0x%04x\n", x, got, want);
        }
    }
    printf("double->f16 vs (_Float16): %zu inputs, %zu mismatches\n", n, mismatches);
    assert_int_equal(mismatches, 0);
}
#else
static void test_f16_encode_matches_float16_cast(void **state) {
    (void)state;
    skip();
}
#endif

/* Largest positive pattern p <= maxfinite with decode(p) <= a (a >= 0). */
static uint16_t floor_pattern(double a, double (*decode)(uint16_t), uint16_t maxfinite) {
    uint32_t lo = 0, hi = maxfinite; /* decode(lo) <= a is invariant */
    while (lo < hi) {
        const uint32_t mid = (lo + hi + 1) / 2;
        if (decode((uint16_t)mid) <= a) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    return (uint16_t)lo;
}

/* The nearest pattern to x by exact distances (ties: even pattern). `beyond`
 * is where the pattern after maxfinite would be (2^16 for f16, 2^128 for
 * bf16), so rounding to inf follows IEEE's "as if unbounded" rule.
 * The two distances are exact whenever x is at least a quarter of the
 * smallest subnormal: both neighbours are then multiples of ulp(x) and lie
 * within 2x of it. Below that only vhi - a may round, far from any tie. */
static uint16_t nearest_pattern(double x, double (*decode)(uint16_t), uint16_t maxfinite,
                                double beyond, uint16_t inf) {
    const double a = fabs(x);
    const uint16_t sign = signbit(x) ? 0x8000 : 0;
    const uint16_t lo = floor_pattern(a, decode, maxfinite);
    const double vlo = decode(lo);
    const double vhi = lo == maxfinite ? beyond : decode((uint16_t)(lo + 1));
    const uint16_t phi = lo == maxfinite ? inf : (uint16_t)(lo + 1);
    if (a >= beyond) {
        return sign | inf;
    }
    const double dlo = a - vlo;
    const double dhi = vhi - a;
    if (dlo < dhi || (dlo == dhi && (lo & 1u) == 0)) {
        return sign | lo;
    }
    return sign | phi;
}

static void check_against_oracle(const char *name, uint16_t (*encode)(double),
                                 double (*decode)(uint16_t), uint16_t maxfinite, double beyond,
                                 uint16_t inf, int elo, int ehi, uint64_t seed) {
    uint64_t s = seed;
    size_t mismatches = 0;
    const size_t n = 1000000;
    for (size_t i = 0; i < n; ++i) {
        const double x = sample_input(&s, i, decode, maxfinite, elo, ehi);
        const uint16_t want = nearest_pattern(x, decode, maxfinite, beyond, inf);
        const uint16_t got = encode(x);
        if (got != want && mismatches++ < 5) {
            printf("%s mismatch: x=%a got=0x%04x want=0x%04x\n", name, x, got, want);
        }
    }
    printf("double->%s vs brute-force nearest: %zu inputs, %zu mismatches\n", name, n, mismatches);
    assert_int_equal(mismatches, 0);
}

/* double -> bf16 is the nearest bf16 (brute force, exact distances). */
static void test_bf16_encode_is_nearest_brute_force(void **state) {
    (void)state;
    check_against_oracle("bf16", opp__double_to_bf16, opp__bf16_to_double, 0x7F7F, 0x1p128, 0x7F80,
                         -136, 128, 0xD1B54A32D192ED03ull);
}

/* double -> f16 is the nearest f16 (brute force, exact distances). */
static void test_f16_encode_is_nearest_brute_force(void **state) {
    (void)state;
    check_against_oracle("f16", opp__double_to_f16, opp__f16_to_double, 0x7BFF, 65536.0, 0x7C00,
                         -26, 16, 0x8CB92BA72F3D8DD7ull);
}

/* double -> f32 is the C cast (RNE) for non-NaN; f32 -> double is exact. */
static void test_f32_conversions(void **state) {
    (void)state;
    uint64_t s = 12345;
    for (size_t i = 0; i < 1000000; ++i) {
        const double x = rng_double_exp(&s, -160, 130);
        assert_int_equal(opp__float_bits(opp__double_to_f32(x)), opp__float_bits((float)x));
        const uint32_t fb = (uint32_t)rng_next(&s);
        const float f = opp__float_from_bits(fb);
        const double d = opp__f32_to_double(f);
        if (isnan(f)) {
            assert_true(isnan(d));
        } else {
            assert_decodes_to(d, (double)f);
        }
    }
    assert_int_equal(opp__float_bits(opp__double_to_f32(-0.0)), 0x80000000u);
    assert_int_equal(opp__float_bits(opp__double_to_f32(0x1p-149)), 0x00000001u);
    assert_int_equal(opp__float_bits(opp__double_to_f32(0x1p-150)), 0x00000000u);
    assert_int_equal(opp__float_bits(opp__double_to_f32(1e300)), 0x7F800000u);
}

/* load/store by ONNX dtype: round trips; an unknown dtype loads NaN. */
static void test_load_store_elem_by_dtype(void **state) {
    (void)state;
    float f32[3] = {0};
    uint16_t h16[3] = {0}, b16[3] = {0};
    const double v[3] = {1.0 + 0x1p-11, -65520.0, 1.0 + 0x1p-8 + 0x1p-30};
    for (size_t i = 0; i < 3; ++i) {
        opp__store_elem(f32, i, OPP_DTYPE_F32, v[i]);
        opp__store_elem(h16, i, OPP_DTYPE_F16, v[i]);
        opp__store_elem(b16, i, OPP_DTYPE_BF16, v[i]);
    }
    assert_int_equal(h16[0], 0x3C00);
    assert_int_equal(h16[1], 0xFC00);
    assert_int_equal(b16[2], 0x3F81);
    for (size_t i = 0; i < 3; ++i) {
        assert_decodes_to(opp__load_elem(f32, i, OPP_DTYPE_F32), (double)(float)v[i]);
        assert_decodes_to(opp__load_elem(h16, i, OPP_DTYPE_F16), opp__f16_to_double(h16[i]));
        assert_decodes_to(opp__load_elem(b16, i, OPP_DTYPE_BF16), opp__bf16_to_double(b16[i]));
    }
    assert_true(isnan(opp__load_elem(f32, 0, OPP_DTYPE_F64)));
    opp__store_elem(h16, 0, OPP_DTYPE_UNDEFINED, 2.0);
    assert_int_equal(h16[0], 0x3C00);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_f16_decode_known_patterns),
        cmocka_unit_test(test_bf16_decode_known_patterns),
        cmocka_unit_test(test_f16_encode_ties_to_even),
        cmocka_unit_test(test_f16_encode_overflow_boundary),
        cmocka_unit_test(test_f16_encode_subnormal_and_underflow),
        cmocka_unit_test(test_encode_nan_is_quiet_with_sign),
        cmocka_unit_test(test_bf16_encode_ties_and_double_rounding_trap),
        cmocka_unit_test(test_bf16_encode_boundaries),
        cmocka_unit_test(test_f16_round_trip_exhaustive),
        cmocka_unit_test(test_bf16_round_trip_exhaustive),
        cmocka_unit_test(test_f16_encode_matches_float16_cast),
        cmocka_unit_test(test_bf16_encode_is_nearest_brute_force),
        cmocka_unit_test(test_f16_encode_is_nearest_brute_force),
        cmocka_unit_test(test_f32_conversions),
        cmocka_unit_test(test_load_store_elem_by_dtype),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
