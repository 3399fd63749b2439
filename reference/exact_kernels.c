/*
 * exact_kernels.c - the portable C instance of the host row kernels
 * (exact_kernels_impl.h): plain loops, fma() from libm. Runs on every CPU;
 * opp__exact_row_ops() uses it where the AVX2 instance cannot run.
 */
#define OPP_EXACT_AVX2 0
#include "reference/exact_kernels_impl.h"

const opp__exact_row_ops_t *const opp__exact_row_ops_portable = &kernel_ops;
