/*
 * exact_row.c - the host implementation of one exact attention row
 * (numerics/exact_order.h is the specification; this file follows it
 * line by line). Compiled with -ffp-contract=off: every fused multiply-add is
 * an explicit fma().
 */
#include "reference/exact_row.h"

#include <math.h>

#include "numerics/exact_math.h"
#include "numerics/exact_order.h"
#include "numerics/fp_convert.h"

void opp__exact_load_scaled(double *dst, const void *src, int32_t n, int dtype, double s) {
    for (int32_t d = 0; d < n; ++d) {
        dst[d] = opp__load_elem(src, (size_t)d, dtype) * s;
    }
}

void opp__exact_load(double *dst, const void *src, int32_t n, int dtype) {
    for (int32_t d = 0; d < n; ++d) {
        dst[d] = opp__load_elem(src, (size_t)d, dtype);
    }
}

double opp__exact_softcap(double x, double c) {
    if (c > 0.0) {
        return c * opp__tanh(x / c);
    }
    return x;
}

void opp__exact_softmax_pv(const double *x, int32_t n, const double *vd, int32_t dv, double *y,
                           double *p) {
    for (int32_t v = 0; v < dv; ++v) {
        y[v] = 0.0;
    }
    for (int32_t j = 0; j < n; ++j) {
        p[j] = 0.0;
    }
    /* m: NaN-propagating max over visible keys (order-free). */
    int any_visible = 0;
    double m = -INFINITY;
    for (int32_t j = 0; j < n; ++j) {
        if (x[j] != -INFINITY) {
            m = any_visible ? opp__max_nan(m, x[j]) : x[j];
            any_visible = 1;
        }
    }
    if (!any_visible || m == -INFINITY) {
        return;
    }
    /* S: chunked sum of e_j = exp(x_j - m); e_j parked in p. */
    double total = 0.0;
    for (int32_t c0 = 0; c0 < n; c0 += OPP_EXACT_KEY_CHUNK) {
        const int32_t c1 = n - c0 < OPP_EXACT_KEY_CHUNK ? n : c0 + OPP_EXACT_KEY_CHUNK;
        double part = 0.0;
        for (int32_t j = c0; j < c1; ++j) {
            if (x[j] != -INFINITY) {
                p[j] = opp__exp(x[j] - m);
                part = part + p[j];
            }
        }
        total = total + part;
    }
    /* p_j = e_j / S, one division per key. */
    for (int32_t j = 0; j < n; ++j) {
        if (x[j] != -INFINITY) {
            p[j] = p[j] / total;
        }
    }
    /* y: chunked, fused sum of p_j * v_j. */
    for (int32_t c0 = 0; c0 < n; c0 += OPP_EXACT_KEY_CHUNK) {
        const int32_t c1 = n - c0 < OPP_EXACT_KEY_CHUNK ? n : c0 + OPP_EXACT_KEY_CHUNK;
        for (int32_t v = 0; v < dv; ++v) {
            double part = 0.0;
            for (int32_t j = c0; j < c1; ++j) {
                if (x[j] != -INFINITY) {
                    part = fma(p[j], vd[(int64_t)j * dv + v], part);
                }
            }
            y[v] = y[v] + part;
        }
    }
}
