/*
 * exact_math.h - the exact path's portable exp() and tanh() (host + device).
 *
 * opp__exp(x) and opp__tanh(x) are written in plain IEEE double arithmetic
 * (+ - * /, explicit fma(), comparisons, exact bit manipulation) and call no
 * libm function whose host and device versions could differ. Compiled from
 * this one source by gcc (-std=c11 -ffp-contract=off) and by nvcc
 * (-fmad=false) they give bit-identical results (DESIGN.md section 4).
 * They are also contraction-proof: every product that feeds an addition is
 * either an explicit fma() or exact (a power-of-two scaling, or a product
 * whose operands have few enough bits), so -ffp-contract=fast / -fmad=true
 * give the same bits too (tests/exact_math_test.c checks that on the host).
 * Requires FLT_EVAL_METHOD == 0 (no x87 excess precision).
 *
 * exp(x), method:
 *   k  = nearest integer to x*log2(e), as fma(x, log2e, 0x1.8p52) - 0x1.8p52
 *        (one rounding: the fma's result is the integer in the low bits).
 *   rh = fma(-k, LN2_HI, x)   exact (LN2_HI = ln2 rounded to 53 bits; the
 *        difference is a multiple of 2^-54 below 0.5 in magnitude).
 *   p  = k * LN2_LO           exact (LN2_LO has 41 bits, |k| < 2^11);
 *        LN2_HI + LN2_LO = ln2 within 2^-102.
 *   r + t = rh - p            (TwoSum: r rounded, t its exact tail), |r| <= 0.35.
 *   exp(r + t) = 1 + r + a + b with a = r2h/2 (r^2 = r2h + r2l exactly, by
 *        fma) and b = r^3 Q3(r) + r2l/2 + t(1 + r), Q3(r) = sum_{n=3}^{14}
 *        r^(n-3)/n! (Taylor, truncation < 2^-62 relative) in Horner form.
 *   m  = (1 + r + a) as a double-double (Fast2Sum, TwoSum) + the small rest,
 *        so m carries one final rounding plus ~2^-60 of accumulated error.
 *   exp(x) = m * 2^k, with 2^k built from exponent bits; k = 1024 takes two
 *        steps (the first exact), so overflow gives +inf exactly when it
 *        should; a subnormal result is rounded once on the subnormal grid
 *        (2^-1022 + y at a scale where every term is exact, as musl does).
 *   Specials: NaN -> the same NaN made quiet, x > 709.79 (and +inf) -> +inf,
 *   x < -745.2 (and -inf) -> +0; in between overflow/underflow happen
 *   naturally in the final scaling.
 *
 * tanh(x), method (a = |x|, sign restored at the end by negation, so
 * tanh(-x) == -tanh(x) bit for bit):
 *   a < 2^-27: tanh(x) = x (x^2/3 < 2^-55 relative: rounds to x);
 *   a > 22: +-1 (1 - tanh(a) < 2^-62; the result is already 1 above 19.07);
 *   otherwise the same reduction of 2a gives e^(2a) = 2^k (1 + r + a' + b'),
 *   and N = e^(2a) - 1 = (2^k - 1) + 2^k r + 2^k a' + 2^k b' is summed as a
 *   double-double from exact terms, without cancellation (for k = 0 it is
 *   r + a' + b' directly, an expm1), D = N + 2 as a double-double, and
 *   tanh(a) = N / D by one division and one residual correction:
 *   q = Nh/Dh, q + (fma(-q, Dh, Nh) + Nl - q Dl) / Dh.
 *   Specials: +-0 -> +-0, +-inf -> +-1, NaN -> the same NaN made quiet.
 *
 * Measured accuracy (gcc 12.2, glibc 2.36, x86-64; fixed seeds;
 * `bazel test //tests:exact_math_test --test_output=all`):
 *   opp__exp vs glibc exp: max 1 ulp. Uniform [-746, 710], 10^7 points:
 *     differs on 0.22%; subnormal range [-745.2, -708.3], 10^6: 0.005%;
 *     log-uniform |x| in [2^-60, 1], 10^6: 0.024%; 235700 edge points
 *     (overflow/underflow/min-normal thresholds +-20000 ulps, every k's
 *     reduction boundary): 0.10%.
 *   opp__exp vs x87 expl, 10^6 points in [-745, 709.7]: max 0.524 ulp.
 *   opp__tanh vs glibc tanh: max 2 ulp (uniform [-30, 30], 10^7 points:
 *     differs on 1.8%; +-[0.5, 1], 10^6: 49.7%; |x| in [2^-40, 2]: 27%).
 *     The differences are glibc's: its tanh is off by up to 2.07 ulp
 *     (checked against 200-bit mpmath), ours by at most 0.555 ulp:
 *   opp__tanh vs x87 tanhl, 10^6 points in [-20, 20] and 10^6 log-uniform
 *     |x| in [2^-30, 2]: max 0.551 / 0.555 ulp.
 *   Host vs device (H200, nvcc 13.0, -fmad=false and also -fmad=true):
 *     bit-identical on 1048612 inputs (//tests:exact_math_gpu_test).
 */
#ifndef OPP_NUMERICS_EXACT_MATH_H
#define OPP_NUMERICS_EXACT_MATH_H

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

/* Identical to exact_order.h's definition (a repeated identical #define is
 * allowed), so the two headers can be included in any order. */
#ifndef OPP_HD
#if defined(__CUDACC__)
#define OPP_HD __host__ __device__
#else
#define OPP_HD
#endif
#endif

#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD != 0 && !defined(__CUDA_ARCH__)
#error "exact_math.h needs FLT_EVAL_METHOD == 0 (SSE2 doubles, no x87 excess precision)"
#endif

/* --- exact bit access --------------------------------------------------- */

OPP_HD static inline uint64_t opp__double_bits(double x) {
#if defined(__CUDA_ARCH__)
    return (uint64_t)__double_as_longlong(x);
#else
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u;
#endif
}

OPP_HD static inline double opp__double_from_bits(uint64_t u) {
#if defined(__CUDA_ARCH__)
    return __longlong_as_double((long long)u);
#else
    double x;
    memcpy(&x, &u, sizeof x);
    return x;
#endif
}

#define OPP__F64_SIGN      0x8000000000000000ull
#define OPP__F64_QUIET_BIT 0x0008000000000000ull
#define OPP__F64_INF       0x7FF0000000000000ull

/* 2^k for -1022 <= k <= 1023 (a normal power of two), from its bits. */
OPP_HD static inline double opp__pow2(int k) {
    return opp__double_from_bits((uint64_t)(k + 1023) << 52);
}

/* A NaN input returned quiet (same sign and payload): deterministic on both
 * compilers, unlike NaN arithmetic, whose payload differs host vs device. */
OPP_HD static inline double opp__quiet_nan(double x) {
    return opp__double_from_bits(opp__double_bits(x) | OPP__F64_QUIET_BIT);
}

/* --- constants ------------------------------------------------------------ */

#define OPP__LOG2E       0x1.71547652b82fep+0 /* log2(e) rounded */
#define OPP__ROUND_MAGIC 0x1.8p+52            /* 1.5 * 2^52: round to integer */
#define OPP__LN2_HI      0x1.62e42fefa39efp-1 /* ln2 rounded to 53 bits */
#define OPP__LN2_LO      0x1.abc9e3b398p-56   /* ln2 - LN2_HI to 41 bits */
#define OPP__EXP_OVF_X   709.79               /* above: exp(x) > 2^1024 */
#define OPP__EXP_UNF_X   -745.2               /* below: exp(x) < 2^-1075 */

/* 1/n! rounded to double, n = 2 .. 14. */
#define OPP__INV_F2  0x1p-1
#define OPP__INV_F3  0x1.5555555555555p-3
#define OPP__INV_F4  0x1.5555555555555p-5
#define OPP__INV_F5  0x1.1111111111111p-7
#define OPP__INV_F6  0x1.6c16c16c16c17p-10
#define OPP__INV_F7  0x1.a01a01a01a01ap-13
#define OPP__INV_F8  0x1.a01a01a01a01ap-16
#define OPP__INV_F9  0x1.71de3a556c734p-19
#define OPP__INV_F10 0x1.27e4fb7789f5cp-22
#define OPP__INV_F11 0x1.ae64567f544e4p-26
#define OPP__INV_F12 0x1.1eed8eff8d898p-29
#define OPP__INV_F13 0x1.6124613a86d09p-33
#define OPP__INV_F14 0x1.93974a8c07c9dp-37

/* --- building blocks ------------------------------------------------------ */

/* s + *err == a + b exactly (Knuth's TwoSum, no precondition). */
OPP_HD static inline double opp__two_sum(double a, double b, double *err) {
    const double s = a + b;
    const double bb = s - a;
    *err = (a - (s - bb)) + (b - bb);
    return s;
}

/* Reduction shared by exp and tanh, for |x| <= 746: returns k and sets
 * r, a, b with exp(x) = 2^k * (1 + r + a + b): |r| <= 0.35, a = fl(r*r)/2
 * (|a| <= 0.061), and |b| <= 0.008 carries the rest, with an error of about
 * 2^-60 absolute. */
OPP_HD static inline int opp__exp_reduce(double x, double *r_out, double *a_out, double *b_out) {
    const double kd = fma(x, OPP__LOG2E, OPP__ROUND_MAGIC) - OPP__ROUND_MAGIC;
    const double rh = fma(-kd, OPP__LN2_HI, x); /* exact */
    const double p = kd * OPP__LN2_LO;          /* exact */
    double t;
    const double r = opp__two_sum(rh, -p, &t);
    /* Q3(r) = sum_{n=3}^{14} r^(n-3)/n!, Horner */
    double q = OPP__INV_F14;
    q = fma(q, r, OPP__INV_F13);
    q = fma(q, r, OPP__INV_F12);
    q = fma(q, r, OPP__INV_F11);
    q = fma(q, r, OPP__INV_F10);
    q = fma(q, r, OPP__INV_F9);
    q = fma(q, r, OPP__INV_F8);
    q = fma(q, r, OPP__INV_F7);
    q = fma(q, r, OPP__INV_F6);
    q = fma(q, r, OPP__INV_F5);
    q = fma(q, r, OPP__INV_F4);
    q = fma(q, r, OPP__INV_F3);
    const double r2h = r * r;
    const double r2l = fma(r, r, -r2h); /* r^2 == r2h + r2l exactly */
    const double rq = r * q;
    *r_out = r;
    *a_out = 0.5 * r2h; /* exact */
    /* b = r^3 Q3(r) + r^2_lo / 2 + t (1 + r) */
    *b_out = fma(r2h, rq, 0.5 * r2l + fma(t, r, t));
    return (int)kd;
}

/* (s + c) * 2^k, rounded once, for s in [0.69, 1.5], |c| <= 2^-50 and
 * -1075 <= k <= 1024. k = 1024 takes two steps (the first exact), so overflow
 * gives +inf exactly when it should. A subnormal result is rounded on the
 * subnormal grid directly: 2^-1022 + y, computed at a scale where every
 * term is exact, has the subnormal spacing as its ulp (as in musl's exp). */
OPP_HD static inline double opp__exp_scale(double s, double c, int k) {
    if (k > 1023) {
        return ((s + c) * 2.0) * opp__pow2(k - 1);
    }
    if (k < -1022 || (k == -1022 && s < 1.0)) {
        const double sc = opp__pow2(k + 600); /* s * sc and c * sc are exact */
        const double big = 0x1p-422;          /* 2^-1022 * 2^600 */
        double e;
        const double u = opp__two_sum(big, s * sc, &e);
        const double v = u + (e + c * sc); /* the one rounding */
        return (v - big) * 0x1p-600;       /* both exact */
    }
    return (s + c) * opp__pow2(k);
}

/* --- exp ------------------------------------------------------------------ */

/* e^x, within 1 ulp of the correctly rounded value (see the file comment). */
OPP_HD static inline double opp__exp(double x) {
    if (x != x) {
        return opp__quiet_nan(x);
    }
    if (x > OPP__EXP_OVF_X) {
        return opp__double_from_bits(OPP__F64_INF);
    }
    if (x < OPP__EXP_UNF_X) {
        return 0.0;
    }
    double r, a, b, e;
    const int k = opp__exp_reduce(x, &r, &a, &b);
    const double hi = 1.0 + r;
    const double lo = (1.0 - hi) + r; /* hi + lo == 1 + r exactly */
    const double s = opp__two_sum(hi, a, &e);
    return opp__exp_scale(s, (lo + e) + b, k);
}

/* --- tanh ----------------------------------------------------------------- */

/* tanh(a) for 2^-27 <= a <= 22. */
OPP_HD static inline double opp__tanh_positive(double a) {
    double r, ea, eb, e1, e2, nl, de;
    const int k = opp__exp_reduce(2.0 * a, &r, &ea, &eb); /* 0 <= k <= 64 */
    const double sc = opp__pow2(k);
    /* N = e^(2a) - 1 = (2^k - 1) + 2^k r + 2^k ea + 2^k eb; every term exact. */
    const double s1 = opp__two_sum(sc - 1.0, sc * r, &e1);
    const double s2 = opp__two_sum(s1, sc * ea, &e2);
    const double nh = opp__two_sum(s2, (e1 + e2) + sc * eb, &nl);
    /* D = N + 2 */
    const double dh = opp__two_sum(nh, 2.0, &de);
    const double dl = de + nl;
    /* N / D: one division and one residual correction. */
    const double q = nh / dh;
    double res = fma(-q, dh, nh); /* exact */
    res = fma(-q, dl, res + nl);
    return q + res / dh;
}

/* tanh(x), odd-symmetric bit for bit (see the file comment). */
OPP_HD static inline double opp__tanh(double x) {
    if (x != x) {
        return opp__quiet_nan(x);
    }
    const double a = opp__double_from_bits(opp__double_bits(x) & ~OPP__F64_SIGN);
    if (a < 0x1p-27) {
        return x;
    }
    const double t = a > 22.0 ? 1.0 : opp__tanh_positive(a);
    return x < 0.0 ? -t : t;
}

#endif /* OPP_NUMERICS_EXACT_MATH_H */
