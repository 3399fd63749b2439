/*
 * merge_states_util.h - what the merge-attention-states tests share: random
 * host states and the per-element error bounds of the merge.
 *
 *   states_out [n, rows, Hq, Dv] dtype    states_lse [n, Hq, rows] float32
 *   out        [rows, Hq, Dv]    dtype    lse        [Hq, rows]    float32
 *
 * Random states (opp_test_merge_random): o values ~ N(0, 1) * 2 rounded
 * once to dtype; lse uniform in [-8, 24], a state without keys (-inf) with
 * probability 1/5 and then its o values NaN or inf (they must be
 * skipped), one state in 8 pushed 250 below the others (its float32 weight
 * underflows to 0, its double weight does not: finite o there), and every
 * row t with t % 5 == 3 keyless in every state (out +0, lse -inf).
 */
#ifndef OPP_TESTS_MERGE_STATES_UTIL_H
#define OPP_TESTS_MERGE_STATES_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "lib/oppacked.h"

typedef struct opp_test_merge {
    opp_dtype_t dtype;
    int32_t n, hq, dv;
    int64_t rows;
    void *states_out;  /* host [n, rows, Hq, Dv] */
    float *states_lse; /* host [n, Hq, rows] */
} opp_test_merge_t;

/* Elements of out ([rows, Hq, Dv]) and of lse ([Hq, rows]). */
size_t opp_test_merge_out_elems(const opp_test_merge_t *m);
size_t opp_test_merge_lse_elems(const opp_test_merge_t *m);

/* Random states as in the file comment (fails the test on malloc failure). */
void opp_test_merge_random(opp_test_merge_t *m, opp_dtype_t dtype, int32_t n, int64_t rows,
                           int32_t hq, int32_t dv, uint64_t seed);
void opp_test_merge_free(opp_test_merge_t *m);

/* 2^-p of the storage dtype (the unit roundoff: f32 2^-24, f16 2^-11,
 * bf16 2^-8) and its smallest subnormal. */
double opp_test_unit_roundoff(opp_dtype_t dtype);
double opp_test_min_subnormal(opp_dtype_t dtype);

/* Facts of line (row t, head h) of m: the contributing states (lse > -inf)
 * and, over them, max |lse_i|; and max |o_i[c]| (column c) over the states
 * that weigh at least e^-200 (lse_i >= max lse - 200). */
typedef struct opp_test_merge_line {
    int32_t contributing;
    double max_abs_lse;
} opp_test_merge_line_t;
void opp_test_merge_line_facts(const opp_test_merge_t *m, int64_t t, int32_t h,
                               opp_test_merge_line_t *facts);
double opp_test_merge_max_abs_o(const opp_test_merge_t *m, int64_t t, int32_t h, int32_t c);

/* Compares got with want element by element: where want is NaN got must be
 * NaN, where want is an infinity or zero got must have its bits, elsewhere
 * |got - want| <= out_bound(element) / lse_bound(element). The bounds are
 * callbacks of (m, t, h, c, got, want). Prints the first
 * OPP_TEST_MAX_REPORTED violations.
 * @return : the number of violations. */
typedef double (*opp_test_merge_bound_fn)(const opp_test_merge_t *m, int64_t t, int32_t h,
                                          int32_t c, double got, double want);
size_t opp_test_merge_compare_out(const opp_test_merge_t *m, const void *got, const void *want,
                                  opp_test_merge_bound_fn bound, const char *what);
size_t opp_test_merge_compare_lse(const opp_test_merge_t *m, const float *got, const float *want,
                                  opp_test_merge_bound_fn bound, const char *what);

#endif /* OPP_TESTS_MERGE_STATES_UTIL_H */
