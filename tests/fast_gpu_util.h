/*
 * fast_gpu_util.h - helpers of the FAST path tests (tests/fast_gpu_test.c,
 * L4 of the agreement contract, DESIGN.md section 4): the generated batch
 * stream and runs of a logical batch through the packed or the padded
 * entry (public entry with an algorithm, or one chosen dispatch row through
 * opp__attention_run_row) with their LSE (fast_gpu_util.c); the
 * comparisons and the batch-invariance checks (fast_gpu_check.c).
 *
 * Results come back on the host in packed order whatever the layout:
 *   out [total_q, Hq, Dv] in the batch's dtype, lse [Hq, total_q] float32
 * (padded runs: the valid tail rows gathered). Device outputs (out, y and
 * lse) are poisoned with NaN before every run, so an element the kernel
 * does not write can never pass a comparison that also checks finiteness.
 * Every helper fails the current CMocka test on error.
 */
#ifndef OPP_TESTS_FAST_GPU_UTIL_H
#define OPP_TESTS_FAST_GPU_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "harness/gpu_packed.h"
#include "harness/logical_batch.h"
#include "lib/internal/dispatch.h"
#include "lib/oppacked.h"

/* 1 when a CUDA device of compute capability >= 8.0 (what FAST needs) is
 * present; otherwise prints why not (once) and returns 0. */
int opp_ft_device_ok(void);

/* skip() the current test unless opp_ft_device_ok(). */
#define OPP_FT_REQUIRE_DEVICE()    \
    do {                           \
        if (!opp_ft_device_ok()) { \
            skip();                \
        }                          \
    } while (0)

/* cudaDevAttrMaxSharedMemoryPerBlockOptin of the current device, bytes. */
size_t opp_ft_device_smem_optin(void);

/* len capped by OPP_GPU_TEST_MAX_LEN (when set and > 0). */
int32_t opp_ft_cap_len(int32_t len);

// --- generated batches

/* Batch number i of the L4 stream from seed (deterministic): f16 / bf16
 * alternating; (D, Dv) cycling through 32..256 and Dv != D pairs; causal,
 * softcap (0 or 5..50), GQA ratio 1, 2, 4, 8 or MQA, default or custom
 * scale drawn at random; 1..6 sequences with lengths 0..300 (zero-length
 * sequences, decode, L_q > L_kv, L_q < L_kv); every 25th batch holds one
 * sequence of 2k..8k tokens; every 5th (i % 5 == 2) is decode-shaped: 0..16
 * queries against 0..5000 keys, often at the split-KV edges (1024 +- 1,
 * 2048 +- 1, 3073, 4096). The padded layouts put a sequence's queries at the
 * tail of S_q = max L_q rows, so their split rows (the last tokens) are
 * checked against the packed ones too. Lengths capped by opp_ft_cap_len(). */
void opp_ft_gen_batch(long i, uint64_t seed, opp_lb_t *lb);
/* The same stream's batch i with the given dtype (opp_ft_gen_batch: f16
 * for even i, bf16 for odd). */
void opp_ft_gen_batch_dtype(long i, uint64_t seed, opp_dtype_t dtype, opp_lb_t *lb);

/* n sequences of random lengths 0..400 with lb's attributes (fillers for
 * other batch compositions); with nan_values every Q, K and V value is NaN
 * (nothing of them may reach another sequence's rows). */
void opp_ft_gen_like(const opp_lb_t *lb, int32_t n, uint64_t seed, int nan_values, opp_lb_t *out);

/* Variant v (0..2) of a batch for dispatch row `row`: its dtype, head sizes
 * that fit its DMAX ((DMAX, DMAX), (DMAX - 24 or 8, DMAX), (DMAX, DMAX / 2)),
 * GQA 4, MQA 6 or none, five sequences across several BM and BN tiles with
 * zero lengths and L_q > L_kv. */
void opp_ft_gen_for_row(const opp__kernel_row_t *row, int v, uint64_t seed, opp_lb_t *lb);

// --- runs

typedef struct opp_ft_res {
    void *out;  /* [total_q, Hq, Dv], dtype */
    float *lse; /* [Hq, total_q] */
} opp_ft_res_t;

void opp_ft_res_free(opp_ft_res_t *r);

/* Runs lb packed (opp_packed_attention_fwd_lse with algo; or, when row is
 * not NULL, the problem of the descriptor of row's algo (FAST, TF32X3)
 * through row), synchronizes, checks the device status and downloads. */
void opp_ft_run_packed(const opp_lb_t *lb, opp_algo_t algo, const opp__kernel_row_t *row,
                       opp_ft_res_t *res);

/* The kernel algo runs for lb on compute capability sm (asserts that one
 * serves it). */
const char *opp_ft_kernel_of(const opp_lb_t *lb, opp_algo_t algo, int32_t sm);

/* c := the padded call (opp_hgpu_nonpad_run) of pad's tensors uploaded in
 * dev, with algo and a workspace of the size the descriptor asks for
 * (allocated here; opp_test_gpu_free(c->workspace)); no LSE. */
void opp_ft_nonpad_call(const opp_lb_padded_t *pad, const opp_ref_attention24_tensors_t *dev,
                        opp_algo_t algo, opp_hgpu_nonpad_call_t *c);

/* The same on the padded Attention-24 representation (rank 3 or 4, padding
 * filled with poison) through opp_attention24_nonpad_fwd_lse (or row);
 * res gets the valid rows. */
void opp_ft_run_padded(const opp_lb_t *lb, int32_t rank, opp_lb_poison_t poison, opp_algo_t algo,
                       const opp__kernel_row_t *row, opp_ft_res_t *res);

/* lb's packed descriptor with algo and row strides stride[t] (t: q, k, v,
 * out; elements). */
void opp_ft_strided_desc(const opp_lb_t *lb, const int64_t stride[4], opp_algo_t algo,
                         opp_attention_desc_t *desc);

/* lb packed with algo and LSE on tensors whose rows are stride[t] elements
 * apart (t: q, k, v, out; the gaps NaN), through the public entry. On
 * success res gets out densely and lse, and the gaps of out are checked
 * unwritten.
 * @return : the entry's status (res stays empty unless SUCCESS). */
opp_status_t opp_ft_run_strided(const opp_lb_t *lb, const int64_t stride[4], opp_algo_t algo,
                                opp_ft_res_t *res);

// --- comparisons

/* Fails unless sequence sa of (a, ra) and sequence sb of (b, rb) have the
 * same bits in out and lse. */
void opp_ft_assert_seq_equal(const opp_lb_t *a, const opp_ft_res_t *ra, int32_t sa,
                             const opp_lb_t *b, const opp_ft_res_t *rb, int32_t sb,
                             const char *what);

/* Every sequence of lb: got == want bit for bit. */
void opp_ft_assert_equal(const opp_lb_t *lb, const opp_ft_res_t *got, const opp_ft_res_t *want,
                         const char *what);

/* Fails unless every valid output element and LSE is finite, except rows
 * that see no key (L_kv = 0, or causal with i + L_kv - L_q < 0), whose
 * output bits are all zero and whose LSE is -inf.
 * @return : the number of such (token, head) rows. */
size_t opp_ft_assert_sane(const opp_lb_t *lb, const opp_ft_res_t *r, const char *what);

/* Error of FAST against EXACT over valid elements (both as double). */
typedef struct opp_ft_err {
    size_t batches, elems;
    double max_abs, sum_sq; /* |fast - exact|: max and sum of squares */
    double max_ref;         /* max |exact| */
    double max_lse;         /* max |lse_fast - lse_exact| over finite LSE */
} opp_ft_err_t;

/* Fails when an output element differs by more than
 * rel * (max |exact| + max |V| / 2), rel = 2^-7 (bf16), 2^-9 (f16) or 2^-14
 * (f32: the FFMA kernel), or an LSE by more than 1e-3 + 1e-4 |exact| (-inf
 * must match -inf). Adds the batch to e (may be NULL). */
void opp_ft_check_accuracy(const opp_lb_t *lb, const opp_ft_res_t *fast, const opp_ft_res_t *exact,
                           opp_ft_err_t *e, const char *what);

/* The same with the bound's factor rel given (another approximate kernel's,
 * e.g. TF32X3's in tests/tf32x3_gpu_test.c). */
void opp_ft_check_accuracy_rel(const opp_lb_t *lb, const opp_ft_res_t *got,
                               const opp_ft_res_t *exact, double rel, opp_ft_err_t *e,
                               const char *what);

void opp_ft_err_merge(opp_ft_err_t *into, const opp_ft_err_t *e);

/* One table line: label, batches, elements, max abs, RMS, max |exact|, max
 * LSE difference. */
void opp_ft_err_print(const char *label, const opp_ft_err_t *e);

/* Fails unless n elements of dtype at host p are all NaN (never written). */
void opp_ft_assert_all_nan(const void *p, size_t n, opp_dtype_t dtype, const char *what);

/*! opp_ft_check_invariance() :
 * The L4 comparisons of ref, lb's packed FAST result through row (NULL:
 * the public entry), each run through the same row: (a) both padded
 * layouts with finite and NaN padding, (b) each sequence alone, (c) the
 * batch reversed and interleaved with B + 1 other sequences (drawn from
 * seed; all-NaN values when seed is odd), (d) a repeated run. `full` 0 runs only the 4D NaN-padded
 * layout and (b). `desc` names the batch in failures.
 * @return : the number of runs compared. */
int opp_ft_check_invariance(const opp_lb_t *lb, const opp_ft_res_t *ref,
                            const opp__kernel_row_t *row, uint64_t seed, int full,
                            const char *desc);

/* opp_ft_check_invariance() of algo's result ref (FAST, or the opt-in
 * TF32X3; row NULL: the public entries with algo). */
int opp_ft_check_invariance_algo(const opp_lb_t *lb, const opp_ft_res_t *ref, opp_algo_t algo,
                                 const opp__kernel_row_t *row, uint64_t seed, int full,
                                 const char *desc);

#endif /* OPP_TESTS_FAST_GPU_UTIL_H */
