/*
 * exact_math_test.c - CMocka tests of numerics/exact_math.h on the host:
 * special values of opp__exp and opp__tanh, their accuracy against glibc
 * (max ulp distance, asserted <= 1 for exp and <= 2 for tanh) and against
 * x87 long double expl/tanhl (fractional ulps, asserted < 0.6), tanh's odd
 * symmetry bit for bit, and that a copy compiled with -mfma
 * -ffp-contract=fast (exact_math_contracted.c) gives the same bits.
 * Measured numbers are printed; the fixed seeds make every run identical.
 * Run: bazel test //tests:exact_math_test --test_output=all
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <math.h>
#include <float.h>

#include <cmocka.h>

#include "numerics/exact_math.h"

/* exact_math_contracted.c: the same functions compiled with contraction on. */
double opp_test_exp_contracted(double x);
double opp_test_tanh_contracted(double x);

static uint64_t rng_next(uint64_t *s) {
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1Dull;
}

static double rng_unit(uint64_t *s) {
    return (double)(rng_next(s) >> 11) * 0x1p-53;
}

/* Uniform in [lo, hi) (one rounding: an explicit fma). */
static double rng_uniform(uint64_t *s, double lo, double hi) {
    return fma(hi - lo, rng_unit(s), lo);
}

/* Log-uniform magnitude in [2^elo, 2^ehi), random sign. */
static double rng_log_uniform(uint64_t *s, int elo, int ehi) {
    const double m = 1.0 + rng_unit(s);
    const int e = elo + (int)(rng_next(s) % (uint64_t)(ehi - elo));
    const double x = ldexp(m, e);
    return (rng_next(s) & 1) ? -x : x;
}

/* Distance in ulps between two doubles (adjacent doubles: 1; +0 vs -0: 0). */
static uint64_t ulp_dist(double a, double b) {
    if (isnan(a) || isnan(b)) {
        return isnan(a) && isnan(b) ? 0 : UINT64_MAX;
    }
    const uint64_t ua = opp__double_bits(a), ub = opp__double_bits(b);
    const int64_t oa = (ua >> 63) ? -(int64_t)(ua & ~OPP__F64_SIGN) : (int64_t)ua;
    const int64_t ob = (ub >> 63) ? -(int64_t)(ub & ~OPP__F64_SIGN) : (int64_t)ub;
    return oa > ob ? (uint64_t)(oa - ob) : (uint64_t)(ob - oa);
}

typedef double (*fn_t)(double);

/* Running comparison of f against a reference over many points. */
typedef struct {
    uint64_t n, differ, max_ulp;
    double worst_x;
} stats_t;

static void stats_add(stats_t *st, fn_t f, fn_t ref, double x) {
    const uint64_t d = ulp_dist(f(x), ref(x));
    st->n++;
    st->differ += d != 0;
    if (d > st->max_ulp) {
        st->max_ulp = d;
        st->worst_x = x;
    }
}

static void stats_print(const char *what, const stats_t *st) {
    printf("%-44s n=%-9llu max_ulp=%llu differ=%llu (%.4f%%) worst_x=%a\n", what,
           (unsigned long long)st->n, (unsigned long long)st->max_ulp,
           (unsigned long long)st->differ, 100.0 * (double)st->differ / (double)st->n, st->worst_x);
}

static double exp_ref(double x) {
    return exp(x);
}

static double tanh_ref(double x) {
    return tanh(x);
}

static double exp_ours(double x) {
    return opp__exp(x);
}

static double tanh_ours(double x) {
    return opp__tanh(x);
}

static void assert_bits(double got, double want) {
    if (opp__double_bits(got) != opp__double_bits(want)) {
        printf("got %a (0x%016llx) want %a (0x%016llx)\n", got,
               (unsigned long long)opp__double_bits(got), want,
               (unsigned long long)opp__double_bits(want));
    }
    assert_true(opp__double_bits(got) == opp__double_bits(want));
}

/* exp specials: +-0, +-inf, NaN, overflow and underflow thresholds. */
static void test_exp_special_values(void **state) {
    (void)state;
    assert_bits(opp__exp(0.0), 1.0);
    assert_bits(opp__exp(-0.0), 1.0);
    assert_bits(opp__exp(-INFINITY), 0.0);
    assert_bits(opp__exp(INFINITY), INFINITY);
    assert_true(isnan(opp__exp(NAN)));
    assert_true(isnan(opp__exp(-NAN)));
    const double snan = opp__double_from_bits(0x7FF0000000000001ull);
    assert_bits(opp__exp(snan), opp__double_from_bits(0x7FF8000000000001ull)); /* quieted */
    const double ovf = 0x1.62e42fefa39efp+9; /* largest x with a finite exp */
    assert_true(isfinite(opp__exp(ovf)));
    assert_bits(opp__exp(ovf), exp(ovf));
    assert_bits(opp__exp(nextafter(ovf, INFINITY)), INFINITY);
    assert_bits(opp__exp(710.0), INFINITY);
    assert_bits(opp__exp(DBL_MAX), INFINITY);
    const double unf = -0x1.74910d52d3052p+9; /* ~ ln(2^-1075): 0 at or below */
    assert_bits(opp__exp(unf), exp(unf));
    assert_bits(opp__exp(-0x1.74385446d71c3p+9), exp(-0x1.74385446d71c3p+9)); /* ~2^-1074 */
    assert_bits(opp__exp(-745.2), 0.0);
    assert_bits(opp__exp(-800.0), 0.0);
    assert_bits(opp__exp(-DBL_MAX), 0.0);
    assert_true(opp__exp(-745.0) == 0x1p-1074); /* 4.94e-324, the smallest subnormal */
    assert_bits(opp__exp(1.0), exp(1.0));
    assert_bits(opp__exp(0x1p-60), 1.0);
    assert_bits(opp__exp(-0x1p-60), 1.0);
    assert_bits(opp__exp(-0x1p-52), 1.0 - 0x1p-52); /* 1 - 2^-52 + 2^-105 */
    assert_bits(opp__exp(4.9e-324), 1.0);
}

/* exp within 1 ulp of glibc over [-746, 710] and many edge points. */
static void test_exp_within_1ulp_of_glibc(void **state) {
    (void)state;
    uint64_t s = 0x243F6A8885A308D3ull;
    stats_t all = {0}, sub = {0}, tiny = {0}, edge = {0};
    for (int i = 0; i < 10000000; ++i) {
        stats_add(&all, exp_ours, exp_ref, rng_uniform(&s, -746.0, 710.0));
    }
    for (int i = 0; i < 1000000; ++i) { /* subnormal results and the zero boundary */
        stats_add(&sub, exp_ours, exp_ref, rng_uniform(&s, -745.2, -708.3));
    }
    for (int i = 0; i < 1000000; ++i) {
        stats_add(&tiny, exp_ours, exp_ref, rng_log_uniform(&s, -60, 0));
    }
    const double pivots[] = {0x1.62e42fefa39efp+9, -0x1.74910d52d3052p+9, -0x1.6232bdd7abcd2p+9,
                             -0x1.74385446d71c3p+9, 0.0};
    for (size_t p = 0; p < sizeof pivots / sizeof pivots[0]; ++p) {
        double up = pivots[p], down = pivots[p];
        for (int i = 0; i < 20000; ++i) {
            stats_add(&edge, exp_ours, exp_ref, up);
            stats_add(&edge, exp_ours, exp_ref, down);
            up = nextafter(up, INFINITY);
            down = nextafter(down, -INFINITY);
        }
    }
    for (int k = -1075; k <= 1024; ++k) { /* reduction boundaries (k + 1/2) ln2 and integers */
        const double b = (k + 0.5) * 0x1.62e42fefa39efp-1;
        double up = b, down = b;
        for (int i = 0; i < 8; ++i) {
            stats_add(&edge, exp_ours, exp_ref, up);
            stats_add(&edge, exp_ours, exp_ref, down);
            up = nextafter(up, INFINITY);
            down = nextafter(down, -INFINITY);
        }
        stats_add(&edge, exp_ours, exp_ref, (double)k * 0.6875);
    }
    stats_print("exp vs glibc, uniform [-746, 710]", &all);
    stats_print("exp vs glibc, uniform [-745.2, -708.3]", &sub);
    stats_print("exp vs glibc, log-uniform |x| in [2^-60, 1]", &tiny);
    stats_print("exp vs glibc, edge points", &edge);
    assert_true(all.max_ulp <= 1);
    assert_true(sub.max_ulp <= 1);
    assert_true(tiny.max_ulp <= 1);
    assert_true(edge.max_ulp <= 1);
}

/* Error of f(x) against a long double reference, in ulps of the double
 * result (subnormal ulp below 2^-1022). Skips points where either is inf. */
static double frac_ulp_err(double got, long double want) {
    if (!isfinite(got) || !isfinite(want) || want == 0.0L) {
        return 0.0;
    }
    int e = ilogbl(want);
    if (e < -1022) {
        e = -1022;
    }
    return (double)(fabsl((long double)got - want) / ldexpl(1.0L, e - 52));
}

/* exp and tanh are within 0.6 ulp of x87 long double expl/tanhl. */
static void test_exp_tanh_error_vs_long_double(void **state) {
    (void)state;
    uint64_t s = 0x13198A2E03707344ull;
    double exp_max = 0.0, tanh_max = 0.0, tanh_small_max = 0.0;
    for (int i = 0; i < 1000000; ++i) {
        const double x = rng_uniform(&s, -745.0, 709.7);
        const double e = frac_ulp_err(opp__exp(x), expl((long double)x));
        exp_max = e > exp_max ? e : exp_max;
        const double t = rng_uniform(&s, -20.0, 20.0);
        const double et = frac_ulp_err(opp__tanh(t), tanhl((long double)t));
        tanh_max = et > tanh_max ? et : tanh_max;
        const double ts = rng_log_uniform(&s, -30, 1);
        const double es = frac_ulp_err(opp__tanh(ts), tanhl((long double)ts));
        tanh_small_max = es > tanh_small_max ? es : tanh_small_max;
    }
    printf("exp  vs expl,  uniform [-745, 709.7]:            max err %.4f ulp\n", exp_max);
    printf("tanh vs tanhl, uniform [-20, 20]:                max err %.4f ulp\n", tanh_max);
    printf("tanh vs tanhl, log-uniform |x| in [2^-30, 2]:    max err %.4f ulp\n", tanh_small_max);
    assert_true(exp_max < 0.6);
    assert_true(tanh_max < 0.6);
    assert_true(tanh_small_max < 0.6);
}

/* tanh specials: +-0 keep their sign, +-inf -> +-1, NaN -> NaN. */
static void test_tanh_special_values(void **state) {
    (void)state;
    assert_bits(opp__tanh(0.0), 0.0);
    assert_bits(opp__tanh(-0.0), -0.0);
    assert_bits(opp__tanh(INFINITY), 1.0);
    assert_bits(opp__tanh(-INFINITY), -1.0);
    assert_true(isnan(opp__tanh(NAN)));
    assert_true(signbit(opp__tanh(-NAN)));
    assert_bits(opp__tanh(DBL_MAX), 1.0);
    assert_bits(opp__tanh(-DBL_MAX), -1.0);
    assert_bits(opp__tanh(0.5), tanh(0.5));
}

/* tanh(x) == x for |x| < 1e-8, subnormals included. */
static void test_tanh_tiny_is_identity(void **state) {
    (void)state;
    uint64_t s = 0xA4093822299F31D0ull;
    const double fixed[] = {1e-8, 0x1p-27, 0x1.4p-27, 1e-9, 1e-300, DBL_MIN, 0x1p-1074, 0x1p-1060};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; ++i) {
        assert_bits(opp__tanh(fixed[i]), fixed[i]);
        assert_bits(opp__tanh(-fixed[i]), -fixed[i]);
    }
    for (int i = 0; i < 1000000; ++i) {
        double x = rng_log_uniform(&s, -1074, -27);
        if (fabs(x) >= 1e-8) {
            x *= 0.5;
        }
        assert_bits(opp__tanh(x), x);
    }
}

/* |x| > 19.1 saturates to +-1 exactly; just below it does not. */
static void test_tanh_saturation(void **state) {
    (void)state;
    uint64_t s = 0x082EFA98EC4E6C89ull;
    for (int i = 0; i < 1000000; ++i) {
        const double x = rng_uniform(&s, 19.1, 1000.0);
        assert_bits(opp__tanh(x), 1.0);
        assert_bits(opp__tanh(-x), -1.0);
    }
    assert_bits(opp__tanh(22.0), 1.0);
    assert_bits(opp__tanh(nextafter(22.0, 30.0)), 1.0);
    /* 1 - tanh(x) = 2 e^-2x: above half an ulp below 1 (2^-54) at 19.0 and
     * 19.03, below it at 19.1 (the boundary is atanh(1 - 2^-54) = 19.0615) */
    assert_bits(opp__tanh(19.0), 1.0 - 0x1p-53);
    assert_bits(opp__tanh(19.03), 1.0 - 0x1p-53);
    assert_bits(opp__tanh(19.1), 1.0);
}

/* tanh within 2 ulp of glibc over [-30, 30], [0.5, 1] and tiny |x|. */
static void test_tanh_within_2ulp_of_glibc(void **state) {
    (void)state;
    uint64_t s = 0x452821E638D01377ull;
    stats_t all = {0}, mid = {0}, tiny = {0}, edge = {0};
    for (int i = 0; i < 10000000; ++i) {
        stats_add(&all, tanh_ours, tanh_ref, rng_uniform(&s, -30.0, 30.0));
    }
    for (int i = 0; i < 1000000; ++i) {
        const double x = rng_uniform(&s, 0.5, 1.0);
        stats_add(&mid, tanh_ours, tanh_ref, (i & 1) ? -x : x);
    }
    for (int i = 0; i < 1000000; ++i) {
        stats_add(&tiny, tanh_ours, tanh_ref, rng_log_uniform(&s, -40, 1));
    }
    const double pivots[] = {0x1p-27, 0x1.30fc1931f09cap+4, 22.0, 0.5 * 0x1.62e42fefa39efp-1};
    for (size_t p = 0; p < sizeof pivots / sizeof pivots[0]; ++p) {
        double up = pivots[p], down = pivots[p];
        for (int i = 0; i < 20000; ++i) {
            stats_add(&edge, tanh_ours, tanh_ref, up);
            stats_add(&edge, tanh_ours, tanh_ref, -down);
            up = nextafter(up, INFINITY);
            down = nextafter(down, 0.0);
        }
    }
    stats_print("tanh vs glibc, uniform [-30, 30]", &all);
    stats_print("tanh vs glibc, uniform +-[0.5, 1]", &mid);
    stats_print("tanh vs glibc, log-uniform |x| in [2^-40, 2]", &tiny);
    stats_print("tanh vs glibc, edge points", &edge);
    assert_true(all.max_ulp <= 2);
    assert_true(mid.max_ulp <= 2);
    assert_true(tiny.max_ulp <= 2);
    assert_true(edge.max_ulp <= 2);
}

/* tanh(-x) == -tanh(x) bit for bit, over random bit patterns and ranges. */
static void test_tanh_odd_symmetry_bit_exact(void **state) {
    (void)state;
    uint64_t s = 0xBE5466CF34E90C6Cull;
    for (int i = 0; i < 2000000; ++i) {
        const double x = (i & 1) ? opp__double_from_bits(rng_next(&s)) : rng_uniform(&s, 0.0, 25.0);
        const uint64_t p = opp__double_bits(opp__tanh(x));
        const uint64_t m = opp__double_bits(opp__tanh(-x));
        assert_true(p == (m ^ OPP__F64_SIGN));
    }
}

/* A copy built with -mfma -ffp-contract=fast gives the same bits. */
static void test_contraction_does_not_change_bits(void **state) {
    (void)state;
#if defined(__x86_64__) || defined(__i386__)
    if (!__builtin_cpu_supports("fma")) {
        skip();
    }
#endif
    uint64_t s = 0xC0AC29B7C97C50DDull;
    uint64_t mismatches = 0;
    for (int i = 0; i < 2000000; ++i) {
        const double x =
            (i % 3 == 0) ? opp__double_from_bits(rng_next(&s)) : rng_uniform(&s, -746.0, 710.0);
        const double t = (i % 3 == 0) ? x : rng_uniform(&s, -25.0, 25.0);
        mismatches += opp__double_bits(opp__exp(x)) != opp__double_bits(opp_test_exp_contracted(x));
        mismatches +=
            opp__double_bits(opp__tanh(t)) != opp__double_bits(opp_test_tanh_contracted(t));
    }
    printf("contraction on vs off: %llu mismatches in 4000000 evaluations\n",
           (unsigned long long)mismatches);
    assert_true(mismatches == 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exp_special_values),
        cmocka_unit_test(test_exp_within_1ulp_of_glibc),
        cmocka_unit_test(test_exp_tanh_error_vs_long_double),
        cmocka_unit_test(test_tanh_special_values),
        cmocka_unit_test(test_tanh_tiny_is_identity),
        cmocka_unit_test(test_tanh_saturation),
        cmocka_unit_test(test_tanh_within_2ulp_of_glibc),
        cmocka_unit_test(test_tanh_odd_symmetry_bit_exact),
        cmocka_unit_test(test_contraction_does_not_change_bits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
