/*
 * exact_kernels_avx2.c - the AVX2 + FMA instance of the host row kernels
 * (exact_kernels_impl.h) on x86-64 with gcc (elsewhere: none). The target pragma
 * comes before every include, so the exact exp/tanh inlined from
 * numerics/exact_math.h use the FMA instruction too (an fma() is correctly
 * rounded either way: the bits do not change, only the speed). Only called
 * after opp__exact_row_ops() has checked that the CPU has AVX2 and FMA.
 */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#pragma GCC target("avx2,fma")
#include <immintrin.h>

#define OPP_EXACT_AVX2 1
#include "reference/exact_kernels_impl.h"

const opp__exact_row_ops_t *const opp__exact_row_ops_avx2 = &kernel_ops;
#else
#include "reference/exact_row.h"

const opp__exact_row_ops_t *const opp__exact_row_ops_avx2 = NULL;
#endif
