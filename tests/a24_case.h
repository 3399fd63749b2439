/*
 * a24_case.h - one hand-built case of the CPU Attention-24 reference for
 * the reference property tests: the descriptor, seeded random host inputs,
 * NaN-poisoned outputs, the call, and the same case handed to the naive
 * model (harness/naive_model.h).
 *
 * Shapes (opp_reference.h): Q [B, Hq, S_q, D] (or 3D [B, S_q, Hq*D]),
 * K [B, Hkv, S_kv, D], V [B, Hkv, S_kv, Dv], past_* [B, Hkv, P, D|Dv],
 * attn_mask mask_dims (rank 1..4), Y like Q with Dv, qk [B, Hq, S_q, T],
 * present_* [B, Hkv, T, D|Dv], T = P + S_kv.
 */
#ifndef OPP_TESTS_A24_CASE_H
#define OPP_TESTS_A24_CASE_H

#include <stddef.h>
#include <stdint.h>

#include "harness/naive_model.h"
#include "reference/opp_reference.h"
#include "tests/test_util.h"

typedef struct a24_case {
    opp_ref_attention24_desc_t d; /* set by the test before a24_case_alloc */
    int want_qk, want_present;    /* produce qk_matmul_output / present_* */
    void *q, *k, *v, *past_key, *past_value, *mask;
    int64_t *nonpad; /* [B], = kv_seqlen after alloc when has_nonpad */
    void *y, *qk, *present_key, *present_value;
    size_t q_elems, k_elems, v_elems, pk_elems, pv_elems, mask_elems;
    size_t y_elems, qk_elems, prk_elems, prv_elems;
} a24_case_t;

/* T = past_seqlen + kv_seqlen. */
int64_t a24_total(const opp_ref_attention24_desc_t *d);

/* Allocates every buffer of c->d and fills the inputs from seed: values
 * ~ amplitude * N(0,1); a bool mask ~75% True; a float mask drawn from
 * {0, 0, 0.75, -1.5, 2.25, -inf}. Outputs are NaN-poisoned.
 * @return : 0, or -1 on allocation failure. */
int a24_case_alloc(a24_case_t *c, uint64_t seed, double amplitude);

/* Re-poisons the outputs (NaN) so a rerun proves what it writes. */
void a24_case_poison_outputs(a24_case_t *c);

/* The tensors struct of the case (optional outputs per want_*). */
void a24_case_tensors(const a24_case_t *c, opp_ref_attention24_tensors_t *t);

/* Runs opp_ref_attention24 on the case. */
opp_status_t a24_case_run(a24_case_t *c);

/* The same case for the naive model. */
void a24_case_to_naive(const a24_case_t *c, opp_naive_case_t *n);

void a24_case_free(a24_case_t *c);

/* Runs the naive model on the case and compares Y, and qk when want_qk,
 * within max_ulp (tests/test_util.h comparator; stats may be NULL).
 * @return : mismatching elements (SIZE_MAX if the model cannot allocate). */
size_t a24_case_compare_naive(const a24_case_t *c, uint64_t max_ulp, const char *what,
                              opp_test_ulp_stats_t *y_stats, opp_test_ulp_stats_t *qk_stats);

/* A float mask (dtype) of 0 / -inf from n bools. malloc'ed. */
void *a24_mask_bool_to_float(const void *mask, size_t n, opp_dtype_t dtype);

/* The mask of d (rank d->mask_rank, dims d->mask_dims, bool or d->dtype)
 * expanded by numpy broadcasting to full [B, Hq, S_q, T] = target, columns
 * j >= M filled with False / -inf. malloc'ed, same element type. */
void *a24_mask_expand(const opp_ref_attention24_desc_t *d, const void *mask,
                      const int64_t target[4]);

/* Deterministic splitmix64 stream helpers. */
uint64_t a24_rand_u64(uint64_t *state);
int32_t a24_rand_int(uint64_t *state, int32_t lo, int32_t hi); /* inclusive */

#endif /* OPP_TESTS_A24_CASE_H */
