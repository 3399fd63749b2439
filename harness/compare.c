/*
 * compare.c - bit and ulp comparison of host buffers (see compare.h). No
 * CMocka: used by the tests (through test_util) and by the tools.
 */
#include "harness/compare.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

// --- floating-point formats

typedef struct fp_format {
    size_t bytes;
    int exp_bits;
    int mant_bits;
    int digits; /* significant decimal digits that round-trip */
} fp_format_t;

/* Returns 0 and fills *f for F32/F16/BF16/F64, else -1. */
static int fp_format_of(opp_dtype_t dtype, fp_format_t *f) {
    switch ((int)dtype) {
    case OPP_DTYPE_F32:
        *f = (fp_format_t){4, 8, 23, 9};
        return 0;
    case OPP_DTYPE_F16:
        *f = (fp_format_t){2, 5, 10, 5};
        return 0;
    case OPP_DTYPE_BF16:
        *f = (fp_format_t){2, 8, 7, 4};
        return 0;
    case OPP_DTYPE_F64:
        *f = (fp_format_t){8, 11, 52, 17};
        return 0;
    default:
        return -1;
    }
}

static uint64_t load_bits(const void *p, size_t i, size_t bytes) {
    const unsigned char *src = (const unsigned char *)p + i * bytes;
    if (bytes == 2) {
        uint16_t v;
        memcpy(&v, src, 2);
        return v;
    }
    if (bytes == 4) {
        uint32_t v;
        memcpy(&v, src, 4);
        return v;
    }
    uint64_t v;
    memcpy(&v, src, 8);
    return v;
}

static uint64_t sign_mask(const fp_format_t *f) {
    return (uint64_t)1 << (f->exp_bits + f->mant_bits);
}

static uint64_t mant_mask(const fp_format_t *f) {
    return ((uint64_t)1 << f->mant_bits) - 1;
}

static uint64_t exp_field(uint64_t bits, const fp_format_t *f) {
    return (bits >> f->mant_bits) & (((uint64_t)1 << f->exp_bits) - 1);
}

static int is_nan_bits(uint64_t bits, const fp_format_t *f) {
    return exp_field(bits, f) == (((uint64_t)1 << f->exp_bits) - 1) && (bits & mant_mask(f)) != 0;
}

static double bits_to_double(uint64_t bits, const fp_format_t *f) {
    const double sign = (bits & sign_mask(f)) ? -1.0 : 1.0;
    const int bias = (1 << (f->exp_bits - 1)) - 1;
    const uint64_t e = exp_field(bits, f), m = bits & mant_mask(f);
    if (e == (((uint64_t)1 << f->exp_bits) - 1)) {
        return m != 0 ? NAN : sign * INFINITY;
    }
    if (e == 0) {
        return sign * ldexp((double)m, 1 - bias - f->mant_bits);
    }
    return sign * ldexp((double)(m | ((uint64_t)1 << f->mant_bits)), (int)e - bias - f->mant_bits);
}

static uint64_t ulp_distance(uint64_t a, uint64_t b, const fp_format_t *f) {
    const int a_nan = is_nan_bits(a, f), b_nan = is_nan_bits(b, f);
    if (a_nan || b_nan) {
        return (a_nan && b_nan) ? 0 : UINT64_MAX;
    }
    const uint64_t s = sign_mask(f), am = a & ~s, bm = b & ~s;
    if ((a & s) == (b & s)) {
        return am > bm ? am - bm : bm - am;
    }
    return am + bm; /* opposite signs: distance through zero (+0 and -0 coincide) */
}

static void report_mismatch(const char *what, size_t i, uint64_t got, uint64_t want, uint64_t ulp,
                            const fp_format_t *f) {
    const int hex = (int)(2 * f->bytes);
    char ulp_text[32];
    if (ulp == UINT64_MAX) {
        strcpy(ulp_text, "inf");
    } else {
        snprintf(ulp_text, sizeof ulp_text, "%llu", (unsigned long long)ulp);
    }
    fprintf(stderr, "%s[%zu]: got 0x%0*llx (%.*g) want 0x%0*llx (%.*g) ulp %s\n", what, i, hex,
            (unsigned long long)got, f->digits, bits_to_double(got, f), hex,
            (unsigned long long)want, f->digits, bits_to_double(want, f), ulp_text);
}

size_t opp_cmp(const void *got, const void *want, size_t n, opp_dtype_t dtype, int exact,
               uint64_t max_ulp, const char *what, size_t max_reported, opp_cmp_stats_t *stats) {
    fp_format_t f;
    what = what != NULL ? what : "buffer";
    if (fp_format_of(dtype, &f) != 0) {
        fprintf(stderr, "%s: cannot compare dtype %s (%d)\n", what, opp_dtype_name(dtype),
                (int)dtype);
        return SIZE_MAX;
    }
    if (n > 0 && (got == NULL || want == NULL)) {
        fprintf(stderr, "%s: %s is NULL\n", what, got == NULL ? "got" : "want");
        return SIZE_MAX;
    }
    size_t mismatches = 0, identical = 0;
    uint64_t worst = 0;
    for (size_t i = 0; i < n; ++i) {
        const uint64_t g = load_bits(got, i, f.bytes), w = load_bits(want, i, f.bytes);
        const uint64_t ulp = ulp_distance(g, w, &f);
        const int same = g == w || (is_nan_bits(g, &f) && is_nan_bits(w, &f));
        identical += (size_t)same;
        worst = ulp > worst ? ulp : worst;
        if (exact ? !same : ulp > max_ulp) {
            if (mismatches < max_reported) {
                report_mismatch(what, i, g, w, ulp, &f);
            }
            ++mismatches;
        }
    }
    if (mismatches > 0) {
        fprintf(stderr, "%s: %zu of %zu elements differ\n", what, mismatches, n);
    }
    if (stats != NULL) {
        stats->compared += n;
        stats->identical += identical;
        stats->mismatches += mismatches;
        stats->max_ulp = worst > stats->max_ulp ? worst : stats->max_ulp;
    }
    return mismatches;
}

uint64_t opp_cmp_ulp_distance(uint64_t a_bits, uint64_t b_bits, opp_dtype_t dtype) {
    fp_format_t f;
    if (fp_format_of(dtype, &f) != 0) {
        return UINT64_MAX;
    }
    const uint64_t keep = f.bytes == 8 ? UINT64_MAX : (((uint64_t)1 << (8 * f.bytes)) - 1);
    return ulp_distance(a_bits & keep, b_bits & keep, &f);
}

// --- error of approximate results

int opp_cmp_error(const void *got, const void *want, size_t n, opp_dtype_t dtype,
                  opp_err_stats_t *stats) {
    fp_format_t f;
    if (fp_format_of(dtype, &f) != 0 || (n > 0 && (got == NULL || want == NULL))) {
        fprintf(stderr, "opp_cmp_error: dtype %s or a NULL buffer is not supported\n",
                opp_dtype_name(dtype));
        return -1;
    }
    for (size_t i = 0; i < n; ++i) {
        const double g = bits_to_double(load_bits(got, i, f.bytes), &f);
        const double w = bits_to_double(load_bits(want, i, f.bytes), &f);
        ++stats->compared;
        if (!isfinite(w)) {
            continue;
        }
        if (!isfinite(g)) {
            ++stats->nonfinite;
            continue;
        }
        const double e = fabs(g - w);
        stats->max_abs = e > stats->max_abs ? e : stats->max_abs;
        stats->sum_sq += e * e;
        stats->max_want = fabs(w) > stats->max_want ? fabs(w) : stats->max_want;
    }
    return 0;
}

double opp_err_rms(const opp_err_stats_t *stats) {
    const size_t finite = stats->compared - stats->nonfinite;
    return finite > 0 ? sqrt(stats->sum_sq / (double)finite) : 0.0;
}
