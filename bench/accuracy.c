/*
 * accuracy.c - FAST vs EXACT error statistics in double (see accuracy.h).
 */
#include "bench/accuracy.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "numerics/fp_convert.h"

size_t bench_count_nonfinite(const void *buf, size_t n, opp_dtype_t dtype) {
    size_t bad = 0;
    for (size_t i = 0; i < n; ++i) {
        bad += !isfinite(opp__load_elem(buf, i, (int)dtype));
    }
    return bad;
}

int bench_err_measure(const void *got, const void *want, size_t n, opp_dtype_t dtype,
                      bench_err_t *e) {
    memset(e, 0, sizeof(*e));
    e->n = n;
    double sum_sq = 0.0;
    size_t finite = 0;
    for (size_t i = 0; i < n; ++i) {
        const double g = opp__load_elem(got, i, (int)dtype);
        const double w = opp__load_elem(want, i, (int)dtype);
        if (!isfinite(g)) {
            ++e->nonfinite;
            continue;
        }
        if (!isfinite(w)) {
            ++e->want_bad;
            continue;
        }
        const double d = fabs(g - w);
        if (d > e->max_abs) {
            e->max_abs = d;
            e->worst = i;
        }
        e->want_max = fabs(w) > e->want_max ? fabs(w) : e->want_max;
        sum_sq += d * d;
        ++finite;
    }
    e->rms = finite > 0 ? sqrt(sum_sq / (double)finite) : 0.0;
    e->bound = BENCH_ERR_REL * e->want_max + BENCH_ERR_ABS;
    return e->nonfinite == 0 && e->want_bad == 0 && e->max_abs <= e->bound;
}

void bench_err_describe(const bench_err_t *e, int ok, char *buf, size_t size) {
    if (ok) {
        snprintf(buf, size, "ok: max_abs %.3g rms %.3g", e->max_abs, e->rms);
    } else if (e->nonfinite > 0) {
        snprintf(buf, size, "FAILED: %zu NaN/inf of %zu elems", e->nonfinite, e->n);
    } else if (e->want_bad > 0) {
        snprintf(buf, size, "FAILED: %zu NaN/inf in the exact output", e->want_bad);
    } else {
        snprintf(buf, size, "FAILED: max_abs %.3g > bound %.3g (elem %zu; rms %.3g)", e->max_abs,
                 e->bound, e->worst, e->rms);
    }
}
