/*
 * fastdiv.h - x / d by a multiply and a shift, for the flash kernel's index
 * arithmetic (the G-packed rows' token, the item's sequence and kv head):
 * plain C, usable from host C (the launchers build the divisors;
 * //tests:fastdiv_test checks it against the division) and from CUDA
 * device code.
 *
 * For 1 <= d < 2^31: shr = 31 + ceil(log2 d), mul = ceil(2^shr / d), which
 * is below 2^32 (d > 2^(shr - 32) unless d is a power of two, where mul =
 * 2^31). Then for every 0 <= x < 2^31, (x mul) >> shr = floor(x / d): with
 * e = mul d - 2^shr in [0, d), x mul / 2^shr = x / d + x e / (d 2^shr),
 * whose second term is below 2^31 / 2^shr <= 1 / d, too little to carry
 * the fraction of x / d (at most (d - 1) / d) past the next integer.
 * Dividends of 2^31 and more need the division itself (the callers test).
 */
#ifndef OPP_KERNELS_FASTDIV_H
#define OPP_KERNELS_FASTDIV_H

#include <stdint.h>

#ifdef __CUDACC__
#define OPP__FASTDIV_HD __host__ __device__
#else
#define OPP__FASTDIV_HD
#endif

/* A divisor d as (mul, shr); {0, 0} is no divisor (every quotient 0). */
typedef struct opp__fastdiv {
    uint32_t mul;
    int32_t shr;
} opp__fastdiv_t;

/* The divisor d, 1 <= d < 2^31 (else {0, 0}). */
static inline opp__fastdiv_t opp__fastdiv_make(int64_t d) {
    opp__fastdiv_t f = {0, 0};
    if (d < 1 || d > 0x7FFFFFFF) {
        return f;
    }
    int l = 0;
    while (((int64_t)1 << l) < d) {
        ++l;
    }
    const uint64_t p = (uint64_t)1 << (31 + l);
    f.mul = (uint32_t)((p + (uint64_t)d - 1) / (uint64_t)d);
    f.shr = 31 + l;
    return f;
}

/* floor(x / d) for 0 <= x < 2^31, *f = opp__fastdiv_make(d). */
static inline OPP__FASTDIV_HD int32_t opp__fastdiv(int32_t x, const opp__fastdiv_t *f) {
    return (int32_t)(((uint64_t)(uint32_t)x * f->mul) >> f->shr);
}

#endif /* OPP_KERNELS_FASTDIV_H */
