/*
 * exact_row.c - the shared key/value layout of the host row kernels
 * (opp__exact_kv_t: widening, scaling, interleaving) and the choice of the
 * kernel set (numerics/exact_order.h is the specification; the kernels are
 * exact_kernels_impl.h). Compiled with -ffp-contract=off.
 */
#include "reference/exact_row.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "numerics/fp_convert.h"

static int32_t round_up_kb(int32_t n) {
    return (n + OPP__EXACT_KB - 1) / OPP__EXACT_KB * OPP__EXACT_KB;
}

size_t opp__exact_kv_doubles(int32_t n, int32_t d, int32_t dv) {
    const size_t total = (size_t)round_up_kb(n) * (size_t)d + (size_t)n * (size_t)round_up_kb(dv);
    return total > 0 ? total : 1;
}

void opp__exact_kv_init(opp__exact_kv_t *kv, double *mem, int32_t n, int32_t d, int32_t dv) {
    kv->n = n;
    kv->d = d;
    kv->dv = dv;
    kv->dv_pad = round_up_kb(dv);
    kv->last_nonfinite = -1;
    kv->kt = mem;
    kv->vd = mem + (size_t)round_up_kb(n) * (size_t)d;
    memset(mem, 0, opp__exact_kv_doubles(n, d, dv) * sizeof(double));
}

void opp__exact_kv_set_key(opp__exact_kv_t *kv, int32_t j, const void *src, int dtype, double s) {
    double *dst = kv->kt + (size_t)(j / OPP__EXACT_KB) * (size_t)kv->d * OPP__EXACT_KB +
                  (size_t)(j % OPP__EXACT_KB);
    int finite = 1;
    for (int32_t d = 0; d < kv->d; ++d) {
        const double x = opp__load_elem(src, (size_t)d, dtype) * s;
        dst[(size_t)d * OPP__EXACT_KB] = x;
        finite = finite && isfinite(x);
    }
    if (!finite && j > kv->last_nonfinite) {
        kv->last_nonfinite = j;
    }
}

void opp__exact_kv_set_value(opp__exact_kv_t *kv, int32_t j, const void *src, int dtype) {
    double *dst = kv->vd + (size_t)j * (size_t)kv->dv_pad;
    for (int32_t v = 0; v < kv->dv; ++v) {
        dst[v] = opp__load_elem(src, (size_t)v, dtype);
    }
}

int opp__exact_load_scaled(double *dst, const void *src, int32_t n, int dtype, double s) {
    int finite = 1;
    for (int32_t d = 0; d < n; ++d) {
        dst[d] = opp__load_elem(src, (size_t)d, dtype) * s;
        finite = finite && isfinite(dst[d]);
    }
    return finite;
}

const opp__exact_row_ops_t *opp__exact_row_ops(void) {
    const char *simd = getenv("OPP_REF_SIMD");
    if (simd != NULL && strcmp(simd, "0") == 0) {
        return opp__exact_row_ops_portable;
    }
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
    if (opp__exact_row_ops_avx2 != NULL && __builtin_cpu_supports("avx2") &&
        __builtin_cpu_supports("fma")) {
        return opp__exact_row_ops_avx2;
    }
#endif
    return opp__exact_row_ops_portable;
}
