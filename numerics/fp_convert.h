/*
 * fp_convert.h - exact conversions between double and the storage dtypes
 * f32, f16 (IEEE binary16) and bf16 (bfloat16), host + device.
 *
 * Decoding (f16/bf16/f32 -> double) is exact. Encoding (double -> f16/bf16)
 * is ONE round-to-nearest-even step taken directly from the double's bits
 * (never via float, which would round twice), done in integer arithmetic, so
 * host and device give the same bits whatever the FP environment:
 *   - subnormal results are produced (gradual underflow), values at or below
 *     half the smallest subnormal round to +-0 (ties to even);
 *   - overflow rounds to +-inf (f16: |x| >= 65520, bf16: |x| >= 0x1.ffp127
 *     i.e. (2 - 2^-8) * 2^127); +-inf and -0 are kept;
 *   - NaN becomes the quiet NaN 0x7E00 (f16) / 0x7FC0 (bf16) with its sign.
 * double -> f32 uses the hardware RNE conversion (a cast on the host,
 * __double2float_rn on the device); NaN gives 0x7FC00000 with the sign, so
 * the bits do not depend on how either side propagates NaN payloads.
 * Decoded NaNs are quiet, with the sign and the payload bits kept.
 *
 * opp__load_elem / opp__store_elem read and write element `index` of an
 * array of ONNX dtype OPP_DTYPE_F32 / F16 / BF16 (lib/oppacked.h) as double;
 * any other dtype loads NaN and stores nothing (callers validate dtypes).
 */
#ifndef OPP_NUMERICS_FP_CONVERT_H
#define OPP_NUMERICS_FP_CONVERT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "numerics/exact_math.h" /* OPP_HD, opp__double_bits/_from_bits */
#include "lib/oppacked.h"            /* OPP_DTYPE_* */

/* --- float bits ------------------------------------------------------------ */

OPP_HD static inline uint32_t opp__float_bits(float x) {
#if defined(__CUDA_ARCH__)
    return (uint32_t)__float_as_uint(x);
#else
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
#endif
}

OPP_HD static inline float opp__float_from_bits(uint32_t u) {
#if defined(__CUDA_ARCH__)
    return __uint_as_float(u);
#else
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
#endif
}

/* --- decoding (exact) -------------------------------------------------------- */

/* A binary format with `mbits` fraction bits and exponent bias `bias` whose
 * fields were already split: sign (0/1), biased exponent e (0 .. emax), and
 * fraction m. Every case is built from bits (subnormals: an exact integer
 * times a power of two), so no rounding happens. */
OPP_HD static inline double opp__decode_small(uint32_t sign, uint32_t e, uint32_t m, int mbits,
                                              int bias, uint32_t emax) {
    const uint64_t s = (uint64_t)sign << 63;
    uint64_t bits;
    if (e == emax) { /* inf, or NaN made quiet with the payload kept */
        bits = 0x7FF0000000000000ull | ((uint64_t)m << (52 - mbits));
        if (m != 0) {
            bits |= OPP__F64_QUIET_BIT;
        }
    } else if (e == 0) { /* zero or subnormal: m * 2^(1 - bias - mbits) */
        const double mag = (double)m * opp__pow2(1 - bias - mbits);
        bits = opp__double_bits(mag);
    } else {
        bits = ((uint64_t)((int)e - bias + 1023) << 52) | ((uint64_t)m << (52 - mbits));
    }
    return opp__double_from_bits(s | bits);
}

OPP_HD static inline double opp__f16_to_double(uint16_t h) {
    return opp__decode_small((uint32_t)h >> 15, ((uint32_t)h >> 10) & 0x1Fu, (uint32_t)h & 0x3FFu,
                             10, 15, 0x1Fu);
}

OPP_HD static inline double opp__bf16_to_double(uint16_t h) {
    return opp__decode_small((uint32_t)h >> 15, ((uint32_t)h >> 7) & 0xFFu, (uint32_t)h & 0x7Fu, 7,
                             127, 0xFFu);
}

OPP_HD static inline double opp__f32_to_double(float f) {
    const uint32_t u = opp__float_bits(f);
    return opp__decode_small(u >> 31, (u >> 23) & 0xFFu, u & 0x7FFFFFu, 23, 127, 0xFFu);
}

/* --- encoding (one round-to-nearest-even) -------------------------------------- */

/* |x| (given as its bits without the sign, finite, nonzero exponent) rounded
 * to a format with `mbits` fraction bits, bias `bias`: returns the magnitude
 * bits (exponent field << mbits | fraction), which reach the infinity
 * pattern on overflow because a carry out of the fraction increments the
 * exponent field. Values below half the smallest subnormal give 0. */
OPP_HD static inline uint32_t opp__encode_small(uint64_t abits, int mbits, int bias,
                                                uint32_t inf_bits) {
    const int e = (int)(abits >> 52) - 1023; /* unbiased; double subnormals: e = -1023 */
    const int emin = 1 - bias;               /* smallest normal exponent */
    if ((abits >> 52) == 0 || e < emin - mbits - 1) {
        return 0; /* below half the smallest subnormal */
    }
    if (e > bias) {
        return inf_bits;
    }
    const uint64_t sig = (abits & 0x000FFFFFFFFFFFFFull) | 0x0010000000000000ull; /* 53 bits */
    const int shift = (52 - mbits) + (e < emin ? emin - e : 0);                   /* <= 53 */
    uint64_t q = sig >> shift;
    const uint64_t rem = sig & ((1ull << shift) - 1);
    const uint64_t half = 1ull << (shift - 1);
    if (rem > half || (rem == half && (q & 1u))) {
        ++q; /* may carry into the exponent field: correct, up to inf */
    }
    /* normal: q = 2^mbits + fraction, so adding (e + bias - 1) << mbits gives
     * the biased exponent; subnormal: q is the field itself */
    const uint64_t base = e >= emin ? (uint64_t)(e + bias - 1) << mbits : 0;
    return (uint32_t)(base + q);
}

OPP_HD static inline uint16_t opp__double_to_f16(double x) {
    const uint64_t u = opp__double_bits(x);
    const uint16_t sign = (uint16_t)((u >> 48) & 0x8000u);
    const uint64_t a = u & ~OPP__F64_SIGN;
    if (a > OPP__F64_INF) {
        return (uint16_t)(sign | 0x7E00u);
    }
    if (a == OPP__F64_INF) {
        return (uint16_t)(sign | 0x7C00u);
    }
    return (uint16_t)(sign | opp__encode_small(a, 10, 15, 0x7C00u));
}

OPP_HD static inline uint16_t opp__double_to_bf16(double x) {
    const uint64_t u = opp__double_bits(x);
    const uint16_t sign = (uint16_t)((u >> 48) & 0x8000u);
    const uint64_t a = u & ~OPP__F64_SIGN;
    if (a > OPP__F64_INF) {
        return (uint16_t)(sign | 0x7FC0u);
    }
    if (a == OPP__F64_INF) {
        return (uint16_t)(sign | 0x7F80u);
    }
    return (uint16_t)(sign | opp__encode_small(a, 7, 127, 0x7F80u));
}

OPP_HD static inline float opp__double_to_f32(double x) {
    if (x != x) {
        const uint32_t sign = (uint32_t)(opp__double_bits(x) >> 32) & 0x80000000u;
        return opp__float_from_bits(sign | 0x7FC00000u);
    }
#if defined(__CUDA_ARCH__)
    return __double2float_rn(x);
#else
    return (float)x;
#endif
}

/* --- array access by ONNX dtype ---------------------------------------------------- */

/* Element `index` (in elements) of `base`, an array of `dtype`, as double. */
OPP_HD static inline double opp__load_elem(const void *base, size_t index, int dtype) {
    switch (dtype) {
    case OPP_DTYPE_F32:
        return opp__f32_to_double(((const float *)base)[index]);
    case OPP_DTYPE_F16:
        return opp__f16_to_double(((const uint16_t *)base)[index]);
    case OPP_DTYPE_BF16:
        return opp__bf16_to_double(((const uint16_t *)base)[index]);
    default:
        return opp__double_from_bits(0x7FF8000000000000ull);
    }
}

/* Stores `value` rounded once (RNE) to `dtype` at element `index` of `base`. */
OPP_HD static inline void opp__store_elem(void *base, size_t index, int dtype, double value) {
    switch (dtype) {
    case OPP_DTYPE_F32:
        ((float *)base)[index] = opp__double_to_f32(value);
        break;
    case OPP_DTYPE_F16:
        ((uint16_t *)base)[index] = opp__double_to_f16(value);
        break;
    case OPP_DTYPE_BF16:
        ((uint16_t *)base)[index] = opp__double_to_bf16(value);
        break;
    default:
        break;
    }
}

#endif /* OPP_NUMERICS_FP_CONVERT_H */
