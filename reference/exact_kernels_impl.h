/*
 * exact_kernels_impl.h - the body of the host row kernels (scores and
 * softmax + P V), included once per instruction set: exact_kernels.c
 * (portable C) and exact_kernels_avx2.c (AVX2 + FMA intrinsics). Not a
 * header to include anywhere else.
 *
 * The including file defines OPP_EXACT_AVX2 (0 or 1) and, when it is 1,
 * includes <immintrin.h> with the avx2/fma target enabled. Both variants
 * follow numerics/exact_order.h: x_j is one fma chain over d ascending, y_v
 * is one fma chain over the visible keys of a chunk plus one addition per
 * chunk. Vector lanes hold different j (scores) or different v (P V), never
 * parts of one sum, so the variants give identical bits. The file must be
 * compiled without floating-point contraction (OPP_C_COPTS).
 *
 * The kernels take a block of up to OPP__EXACT_MAX_ROWS query rows and loop
 * over key tiles (scores) and key chunks (P V) outside, rows inside, so a
 * tile of K or a chunk of V comes from memory once per block instead of
 * once per row (a long sequence's widened K and V do not fit in cache).
 * Each row still meets its chunks in ascending order.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "numerics/exact_math.h"
#include "numerics/exact_order.h"
#include "reference/exact_row.h"

#ifndef OPP_EXACT_AVX2
#error "define OPP_EXACT_AVX2 before including exact_kernels_impl.h"
#endif

/* softcap c > 0: c * tanh(x / c); c == 0 returns x. */
static inline double kernel_softcap(double x, double c) {
    if (c > 0.0) {
        return c * opp__tanh(x / c);
    }
    return x;
}

/* x[j] = dot(qs, key j) for the OPP__EXACT_KB keys of the block at kt,
 * stored for j < count. Each lane is its own chain: ascending d, fused. */
static void kernel_dot_block(const double *qs, const double *kt, int32_t d, int32_t count,
                             double *x) {
    double acc[OPP__EXACT_KB];
    for (int32_t l = 0; l < OPP__EXACT_KB; ++l) {
        acc[l] = 0.0;
    }
    for (int32_t dd = 0; dd < d; ++dd) {
        const double *k = kt + (size_t)dd * OPP__EXACT_KB;
        for (int32_t l = 0; l < OPP__EXACT_KB; ++l) {
            acc[l] = fma(qs[dd], k[l], acc[l]);
        }
    }
    for (int32_t l = 0; l < count; ++l) {
        x[l] = acc[l];
    }
}

#if OPP_EXACT_AVX2
_Static_assert(OPP__EXACT_KB == 8, "a key block is two 4-lane vectors");

/* Four blocks (32 keys) at once: eight independent 4-lane fma chains. */
static void kernel_dot_4blocks(const double *qs, const double *kt, int32_t d, double *x) {
    __m256d a[8];
#pragma GCC unroll 8
    for (int i = 0; i < 8; ++i) {
        a[i] = _mm256_setzero_pd();
    }
    const size_t block = (size_t)d * OPP__EXACT_KB;
    for (int32_t dd = 0; dd < d; ++dd) {
        const __m256d q = _mm256_broadcast_sd(qs + dd);
        const double *k = kt + (size_t)dd * OPP__EXACT_KB;
#pragma GCC unroll 4
        for (int i = 0; i < 4; ++i) {
            a[2 * i] = _mm256_fmadd_pd(q, _mm256_loadu_pd(k + i * block), a[2 * i]);
            a[2 * i + 1] = _mm256_fmadd_pd(q, _mm256_loadu_pd(k + i * block + 4), a[2 * i + 1]);
        }
    }
#pragma GCC unroll 8
    for (int i = 0; i < 8; ++i) {
        _mm256_storeu_pd(x + 4 * i, a[i]);
    }
}
#endif

/* The dots of one row against keys j0 .. min(j0 + 32, n) - 1. */
static void kernel_dots(const double *qs, const opp__exact_kv_t *kv, int32_t j0, int32_t n,
                        double *x) {
    const int32_t d = kv->d;
#if OPP_EXACT_AVX2
    if (j0 + 4 * OPP__EXACT_KB <= n) {
        kernel_dot_4blocks(qs, kv->kt + (size_t)j0 * d, d, x + j0);
        return;
    }
#endif
    const int32_t j1 = n - j0 < 4 * OPP__EXACT_KB ? n : j0 + 4 * OPP__EXACT_KB;
    for (int32_t jb = j0; jb < j1; jb += OPP__EXACT_KB) {
        const int32_t count = j1 - jb < OPP__EXACT_KB ? j1 - jb : OPP__EXACT_KB;
        kernel_dot_block(qs, kv->kt + (size_t)jb * d, d, count, x + jb);
    }
}

/* Key tiles of 32 outside, rows inside: a tile of K comes from memory once
 * and serves every row of the block. */
static void kernel_scores(const double *qs, int32_t rows, const int32_t *n,
                          const opp__exact_kv_t *kv, double c, double *x, size_t ld) {
    int32_t n_max = 0;
    for (int32_t r = 0; r < rows; ++r) {
        n_max = n[r] > n_max ? n[r] : n_max;
    }
    for (int32_t j0 = 0; j0 < n_max; j0 += 4 * OPP__EXACT_KB) {
        for (int32_t r = 0; r < rows; ++r) {
            if (j0 < n[r]) {
                kernel_dots(qs + (size_t)r * (size_t)kv->d, kv, j0, n[r], x + (size_t)r * ld);
            }
        }
    }
    for (int32_t r = 0; c > 0.0 && r < rows; ++r) {
        double *xr = x + (size_t)r * ld;
        for (int32_t j = 0; j < n[r]; ++j) {
            xr[j] = kernel_softcap(xr[j], c);
        }
    }
}

/* y[v0 .. v0+KB) += the fused chain over the visible keys j0 .. j1-1 of one
 * chunk (part starts at +0 and is added to y once). */
static void kernel_pv_columns(const double *x, const double *p, const double *vd, int32_t dvp,
                              int32_t j0, int32_t j1, int32_t v0, double *y) {
    double part[OPP__EXACT_KB];
    for (int32_t l = 0; l < OPP__EXACT_KB; ++l) {
        part[l] = 0.0;
    }
    for (int32_t j = j0; j < j1; ++j) {
        if (x[j] != -INFINITY) {
            const double *row = vd + (size_t)j * dvp + v0;
            for (int32_t l = 0; l < OPP__EXACT_KB; ++l) {
                part[l] = fma(p[j], row[l], part[l]);
            }
        }
    }
    for (int32_t l = 0; l < OPP__EXACT_KB; ++l) {
        y[v0 + l] = y[v0 + l] + part[l];
    }
}

#if OPP_EXACT_AVX2
/* The same for 32 columns: eight independent 4-lane chains. */
static void kernel_pv_32columns(const double *x, const double *p, const double *vd, int32_t dvp,
                                int32_t j0, int32_t j1, int32_t v0, double *y) {
    __m256d a[8];
#pragma GCC unroll 8
    for (int i = 0; i < 8; ++i) {
        a[i] = _mm256_setzero_pd();
    }
    for (int32_t j = j0; j < j1; ++j) {
        if (x[j] != -INFINITY) {
            const __m256d pj = _mm256_broadcast_sd(p + j);
            const double *row = vd + (size_t)j * dvp + v0;
#pragma GCC unroll 8
            for (int i = 0; i < 8; ++i) {
                a[i] = _mm256_fmadd_pd(pj, _mm256_loadu_pd(row + 4 * i), a[i]);
            }
        }
    }
#pragma GCC unroll 8
    for (int i = 0; i < 8; ++i) {
        _mm256_storeu_pd(y + v0 + 4 * i, _mm256_add_pd(_mm256_loadu_pd(y + v0 + 4 * i), a[i]));
    }
}
#endif

/* One row's softmax: p_j = e_j / S over x[0..n) (p = 0 for keys that are
 * not visible). @return : 0 when no key is visible (or the max is -inf). */
static int kernel_softmax(const double *x, int32_t n, double *p) {
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
        return 0;
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
    return 1;
}

/* Softmax per row, then y = P V with key chunks outside and rows inside (a
 * chunk of V comes from memory once and serves every row of the block);
 * each row still adds its chunk partials to y in ascending chunk order. */
static void kernel_softmax_pv(const double *x, int32_t rows, const int32_t *n,
                              const opp__exact_kv_t *kv, double *y, double *p, size_t ld) {
    const int32_t dvp = kv->dv_pad;
    int32_t n_pv[OPP__EXACT_MAX_ROWS];
    int32_t n_max = 0;
    for (int32_t r = 0; r < rows; ++r) {
        for (int32_t v = 0; v < dvp; ++v) {
            y[(size_t)r * dvp + v] = 0.0;
        }
        n_pv[r] = kernel_softmax(x + (size_t)r * ld, n[r], p + (size_t)r * ld) ? n[r] : 0;
        n_max = n_pv[r] > n_max ? n_pv[r] : n_max;
    }
    /* y: chunked, fused sum of p_j * v_j, a block of columns at a time. */
    for (int32_t c0 = 0; c0 < n_max; c0 += OPP_EXACT_KEY_CHUNK) {
        for (int32_t r = 0; r < rows; ++r) {
            if (c0 >= n_pv[r]) {
                continue;
            }
            const int32_t c1 =
                n_pv[r] - c0 < OPP_EXACT_KEY_CHUNK ? n_pv[r] : c0 + OPP_EXACT_KEY_CHUNK;
            const double *xr = x + (size_t)r * ld, *pr = p + (size_t)r * ld;
            double *yr = y + (size_t)r * dvp;
            int32_t v0 = 0;
#if OPP_EXACT_AVX2
            for (; v0 + 4 * OPP__EXACT_KB <= dvp; v0 += 4 * OPP__EXACT_KB) {
                kernel_pv_32columns(xr, pr, kv->vd, dvp, c0, c1, v0, yr);
            }
#endif
            for (; v0 < dvp; v0 += OPP__EXACT_KB) {
                kernel_pv_columns(xr, pr, kv->vd, dvp, c0, c1, v0, yr);
            }
        }
    }
}

static const opp__exact_row_ops_t kernel_ops = {kernel_scores, kernel_softmax_pv};
