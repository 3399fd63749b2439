/*
 * compare.h - element-wise comparison of f32 / f16 / bf16 / f64 host buffers
 * by bits and by ulp distance, without CMocka, for tests and tools alike.
 *
 * Any NaN equals any NaN; +0 and -0 have different bits but are 0 ulp
 * apart; NaN against a number is an infinite (UINT64_MAX) distance. The
 * first max_reported mismatches are printed to stderr as
 *   what[index]: got 0x3f800001 (1.00000012) want 0x3f800000 (1) ulp 1
 */
#ifndef OPP_HARNESS_COMPARE_H
#define OPP_HARNESS_COMPARE_H

#include <stddef.h>
#include <stdint.h>

#include "lib/oppacked.h"

typedef struct opp_cmp_stats {
    size_t compared;   /* elements compared */
    size_t identical;  /* identical bits (or both NaN) */
    size_t mismatches; /* elements counted as mismatches */
    uint64_t max_ulp;  /* largest distance seen (UINT64_MAX: NaN vs number) */
} opp_cmp_stats_t;

/* Compares n elements of dtype. exact: a mismatch is any bit difference;
 * else a distance above max_ulp. stats (may be NULL) ACCUMULATES.
 * @return : the number of mismatches; SIZE_MAX (after printing why) when
 *           dtype is not F32/F16/BF16/F64 or a pointer is NULL with n > 0. */
size_t opp_cmp(const void *got, const void *want, size_t n, opp_dtype_t dtype, int exact,
               uint64_t max_ulp, const char *what, size_t max_reported, opp_cmp_stats_t *stats);

/* The ulp distance between two elements given as raw bits (low 16/32/64
 * bits); 0 when both are NaN, UINT64_MAX when one is. */
uint64_t opp_cmp_ulp_distance(uint64_t a_bits, uint64_t b_bits, opp_dtype_t dtype);

/* Error of an approximate result (the FAST path) against an exact one, in
 * double. Accumulates over calls; zero-initialise it first. */
typedef struct opp_err_stats {
    size_t compared;  /* elements compared */
    size_t nonfinite; /* elements where got is NaN/inf but want is finite */
    double max_abs;   /* max |got - want| over finite pairs */
    double sum_sq;    /* sum of (got - want)^2 over finite pairs */
    double max_want;  /* max |want| */
} opp_err_stats_t;

/* Adds the error of n elements of dtype got against want to stats.
 * @return : 0, or -1 (after printing why) for an unsupported dtype or a NULL
 *           pointer with n > 0. */
int opp_cmp_error(const void *got, const void *want, size_t n, opp_dtype_t dtype,
                  opp_err_stats_t *stats);

/* Root-mean-square error of stats (0 when nothing was compared). */
double opp_err_rms(const opp_err_stats_t *stats);

#endif /* OPP_HARNESS_COMPARE_H */
