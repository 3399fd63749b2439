/*
 * merge_states_util.c - see merge_states_util.h.
 */
#include "tests/merge_states_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/rng.h"
#include "numerics/fp_convert.h"
#include "tests/test_util.h"

size_t opp_test_merge_out_elems(const opp_test_merge_t *m) {
    return (size_t)m->rows * (size_t)m->hq * (size_t)m->dv;
}

size_t opp_test_merge_lse_elems(const opp_test_merge_t *m) {
    return (size_t)m->rows * (size_t)m->hq;
}

void opp_test_merge_random(opp_test_merge_t *m, opp_dtype_t dtype, int32_t n, int64_t rows,
                           int32_t hq, int32_t dv, uint64_t seed) {
    m->dtype = dtype;
    m->n = n;
    m->rows = rows;
    m->hq = hq;
    m->dv = dv;
    const size_t oe = opp_test_merge_out_elems(m), le = opp_test_merge_lse_elems(m);
    m->states_out = malloc((oe * (size_t)n + 1) * opp_dtype_size(dtype));
    m->states_lse = malloc((le * (size_t)n + 1) * sizeof(float));
    assert_non_null(m->states_out);
    assert_non_null(m->states_lse);
    uint64_t st = seed;
    for (int32_t i = 0; i < n; ++i) {
        for (int32_t h = 0; h < hq; ++h) {
            for (int64_t t = 0; t < rows; ++t) {
                const size_t li = ((size_t)i * hq + h) * (size_t)rows + (size_t)t;
                const int32_t kind = opp_rng_int(&st, 0, 39);
                float l = (float)(-8.0 + 32.0 * opp_rng_unit(&st));
                if (t % 5 == 3 || kind < 8) {
                    l = -INFINITY; /* this state saw no key of the row */
                } else if (kind < 13) {
                    l -= 250.0f; /* float32 weight 0, double weight > 0 */
                }
                m->states_lse[li] = l;
                const size_t o0 = ((size_t)i * oe) + ((size_t)t * hq + h) * (size_t)dv;
                for (int32_t c = 0; c < dv; ++c) {
                    double v = 2.0 * opp_rng_normalish(&st);
                    if (l == -INFINITY) {
                        v = (c + kind) % 3 == 0 ? INFINITY : NAN; /* never read */
                    }
                    opp__store_elem(m->states_out, o0 + (size_t)c, dtype, v);
                }
            }
        }
    }
}

void opp_test_merge_free(opp_test_merge_t *m) {
    free(m->states_out);
    free(m->states_lse);
    memset(m, 0, sizeof(*m));
}

double opp_test_unit_roundoff(opp_dtype_t dtype) {
    return dtype == OPP_DTYPE_F32 ? 0x1p-24 : dtype == OPP_DTYPE_F16 ? 0x1p-11 : 0x1p-8;
}

double opp_test_min_subnormal(opp_dtype_t dtype) {
    return dtype == OPP_DTYPE_F32 ? 0x1p-149 : dtype == OPP_DTYPE_F16 ? 0x1p-24 : 0x1p-133;
}

void opp_test_merge_line_facts(const opp_test_merge_t *m, int64_t t, int32_t h,
                               opp_test_merge_line_t *facts) {
    facts->contributing = 0;
    facts->max_abs_lse = 0.0;
    for (int32_t i = 0; i < m->n; ++i) {
        const float l = m->states_lse[((size_t)i * m->hq + h) * (size_t)m->rows + (size_t)t];
        if (l > -INFINITY) {
            facts->contributing += 1;
            facts->max_abs_lse = fmax(facts->max_abs_lse, fabs((double)l));
        }
    }
}

double opp_test_merge_max_abs_o(const opp_test_merge_t *m, int64_t t, int32_t h, int32_t c) {
    const size_t oe = opp_test_merge_out_elems(m);
    const float *lse = m->states_lse + (size_t)h * (size_t)m->rows + (size_t)t;
    const size_t lse_state = (size_t)m->hq * (size_t)m->rows;
    double lmax = -INFINITY, mx = 0.0;
    for (int32_t i = 0; i < m->n; ++i) {
        lmax = fmax(lmax, (double)lse[i * lse_state]);
    }
    for (int32_t i = 0; i < m->n; ++i) {
        /* a state below lmax - 200 weighs < e^-200 < 2^-288 relative: its
         * share of the result is far below every dtype's smallest
         * subnormal (the bounds' absolute term) for |o| < 2^100 */
        if (lse[i * lse_state] > -INFINITY && lse[i * lse_state] >= lmax - 200.0) {
            const size_t e = (size_t)i * oe + ((size_t)t * m->hq + h) * (size_t)m->dv + (size_t)c;
            mx = fmax(mx, fabs(opp__load_elem(m->states_out, e, m->dtype)));
        }
    }
    return mx;
}

/* One element: 0 if it passes, else 1 (printed while reported < max). */
static size_t check_one(const opp_test_merge_t *m, int64_t t, int32_t h, int32_t c, double got,
                        double want, int keyless, double keyless_value,
                        opp_test_merge_bound_fn bound, const char *what, size_t *reported) {
    int ok;
    double lim = 0.0;
    if (keyless) { /* the spec's value, bit for bit (+0 or -inf), in both */
        ok = memcmp(&got, &keyless_value, sizeof got) == 0 &&
             memcmp(&want, &keyless_value, sizeof want) == 0;
    } else if (isnan(want) || isinf(want)) {
        ok = isnan(want) ? isnan(got) : got == want;
    } else {
        lim = bound(m, t, h, c, got, want);
        ok = fabs(got - want) <= lim;
    }
    if (!ok && *reported < OPP_TEST_MAX_REPORTED) {
        print_error("%s (row %lld, head %d, col %d): got %.9g want %.9g |diff| %.3g bound %.3g%s\n",
                    what, (long long)t, (int)h, (int)c, got, want, fabs(got - want), lim,
                    keyless ? " (keyless line)" : "");
        *reported += 1;
    }
    return ok ? 0 : 1;
}

size_t opp_test_merge_compare_out(const opp_test_merge_t *m, const void *got, const void *want,
                                  opp_test_merge_bound_fn bound, const char *what) {
    size_t bad = 0, reported = 0;
    for (int64_t t = 0; t < m->rows; ++t) {
        for (int32_t h = 0; h < m->hq; ++h) {
            opp_test_merge_line_t f;
            opp_test_merge_line_facts(m, t, h, &f);
            for (int32_t c = 0; c < m->dv; ++c) {
                const size_t e = ((size_t)t * m->hq + h) * (size_t)m->dv + (size_t)c;
                bad += check_one(m, t, h, c, opp__load_elem(got, e, m->dtype),
                                 opp__load_elem(want, e, m->dtype), f.contributing == 0, 0.0, bound,
                                 what, &reported);
            }
        }
    }
    return bad;
}

size_t opp_test_merge_compare_lse(const opp_test_merge_t *m, const float *got, const float *want,
                                  opp_test_merge_bound_fn bound, const char *what) {
    size_t bad = 0, reported = 0;
    for (int64_t t = 0; t < m->rows; ++t) {
        for (int32_t h = 0; h < m->hq; ++h) {
            opp_test_merge_line_t f;
            opp_test_merge_line_facts(m, t, h, &f);
            const size_t e = (size_t)h * (size_t)m->rows + (size_t)t;
            bad += check_one(m, t, h, 0, got[e], want[e], f.contributing == 0, -INFINITY, bound,
                             what, &reported);
        }
    }
    return bad;
}
