/*
 * merge_states_test.c - CPU tests of the merge of attention states:
 * every argument error of opp_merge_attention_states_check() and of
 * opp_merge_attention_states() (returned before any CUDA call; fake device
 * addresses are never dereferenced), rows == 0 enqueuing nothing, and the
 * CPU reference (reference/merge_states_ref.h) against an independent long
 * double model that sums exp(lse_i) directly (no max shift).
 *   states_out [n, rows, Hq, Dv], states_lse [n, Hq, rows],
 *   out [rows, Hq, Dv], lse [Hq, rows]
 * Needs no GPU. Run: bazel test //tests:merge_states_test
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "numerics/fp_convert.h"
#include "reference/merge_states_ref.h"
#include "tests/merge_states_util.h"
#include "tests/test_util.h"

#define P(addr) ((void *)(uintptr_t)(addr))

/* Valid fake device addresses far apart: 2 states x 3 rows x 4 heads x 64
 * bf16 = 3 KiB of states_out, 96 bytes of states_lse. */
#define SO  P(0x100000)
#define SL  ((const float *)P(0x200000))
#define OUT P(0x300000)
#define LO  ((float *)P(0x400000))

static opp_status_t merge(opp_dtype_t dt, int32_t n, int64_t rows, int32_t hq, int32_t dv,
                          const void *so, const float *sl, void *out, float *lo) {
    return opp_merge_attention_states(dt, n, rows, hq, dv, so, sl, out, lo, NULL);
}

// --- shape checks

/* Valid shapes pass the host check, for every supported dtype. */
static void test_merge_check_accepts_valid_shapes(void **state) {
    (void)state;
    assert_opp_ok(opp_merge_attention_states_check(OPP_DTYPE_BF16, 2, 3, 4, 64));
    assert_opp_ok(opp_merge_attention_states_check(OPP_DTYPE_F16, 1, 0, 1, 1));
    assert_opp_ok(opp_merge_attention_states_check(OPP_DTYPE_F32, 9, 1000000, 128, 513));
}

/* Undefined, non-ONNX and unsupported dtypes are named in the message. */
static void test_merge_check_rejects_dtypes(void **state) {
    (void)state;
    assert_opp_status(opp_merge_attention_states_check(OPP_DTYPE_UNDEFINED, 2, 3, 4, 64),
                      OPP_STATUS_BAD_PARAM_DTYPE, "dtype = 0 (undefined)");
    assert_opp_status(opp_merge_attention_states_check((opp_dtype_t)99, 2, 3, 4, 64),
                      OPP_STATUS_BAD_PARAM_DTYPE, "dtype = 99 is not an ONNX element type");
    assert_opp_status(opp_merge_attention_states_check((opp_dtype_t)3, 2, 3, 4, 64),
                      OPP_STATUS_NOT_SUPPORTED_DTYPE, "dtype = int8 is not supported");
    assert_opp_status(opp_merge_attention_states_check(OPP_DTYPE_F64, 2, 3, 4, 64),
                      OPP_STATUS_NOT_SUPPORTED_DTYPE, "dtype = f64 is not supported");
}

/* num_states < 1, rows < 0, num_heads < 1 and v_head_size < 1 are each
 * named with their value. */
static void test_merge_check_rejects_counts(void **state) {
    (void)state;
    assert_opp_status(opp_merge_attention_states_check(OPP_DTYPE_F16, 0, 3, 4, 64),
                      OPP_STATUS_BAD_PARAM_SHAPE, "num_states = 0 must be >= 1");
    assert_opp_status(opp_merge_attention_states_check(OPP_DTYPE_F16, -2, 3, 4, 64),
                      OPP_STATUS_BAD_PARAM_SHAPE, "num_states = -2 must be >= 1");
    assert_opp_status(opp_merge_attention_states_check(OPP_DTYPE_F16, 2, -1, 4, 64),
                      OPP_STATUS_BAD_PARAM_SHAPE, "rows = -1 must be >= 0");
    assert_opp_status(opp_merge_attention_states_check(OPP_DTYPE_F16, 2, 3, 0, 64),
                      OPP_STATUS_BAD_PARAM_NUM_HEADS, "num_heads = 0 must be >= 1");
    assert_opp_status(opp_merge_attention_states_check(OPP_DTYPE_F16, 2, 3, -4, 64),
                      OPP_STATUS_BAD_PARAM_NUM_HEADS, "num_heads = -4 must be >= 1");
    assert_opp_status(opp_merge_attention_states_check(OPP_DTYPE_F16, 2, 3, 4, 0),
                      OPP_STATUS_BAD_PARAM_V_HEAD_SIZE, "v_head_size = 0 must be >= 1");
    assert_opp_status(opp_merge_attention_states_check(OPP_DTYPE_F16, 2, 3, 4, -64),
                      OPP_STATUS_BAD_PARAM_V_HEAD_SIZE, "v_head_size = -64 must be >= 1");
}

/* Shapes whose largest tensor exceeds 64-bit byte addressing are refused
 * (states_out, or states_lse when a line is under 4 bytes); the largest
 * that fits is accepted. */
static void test_merge_check_rejects_overflowing_sizes(void **state) {
    (void)state;
    assert_opp_status(opp_merge_attention_states_check(OPP_DTYPE_F32, 2, INT64_MAX / 8 + 1, 1, 1),
                      OPP_STATUS_BAD_PARAM_SHAPE,
                      "num_states = 2 x rows = 1152921504606846976 x num_heads = 1 x "
                      "v_head_size = 1 elements of f32 exceed 64-bit byte addressing");
    assert_opp_status(opp_merge_attention_states_check(OPP_DTYPE_F16, 1, INT64_MAX / 2, 2, 1),
                      OPP_STATUS_BAD_PARAM_SHAPE, "exceed 64-bit byte addressing");
    assert_opp_status(opp_merge_attention_states_check(OPP_DTYPE_BF16, INT32_MAX, INT32_MAX,
                                                       INT32_MAX, INT32_MAX),
                      OPP_STATUS_BAD_PARAM_SHAPE, "exceed 64-bit byte addressing");
    /* f16 with Dv = 1: the float32 LSE (4 bytes per line) is the largest */
    assert_opp_status(opp_merge_attention_states_check(OPP_DTYPE_F16, 1, INT64_MAX / 4 + 1, 1, 1),
                      OPP_STATUS_BAD_PARAM_SHAPE, "exceed 64-bit byte addressing");
    assert_opp_ok(opp_merge_attention_states_check(OPP_DTYPE_F16, 1, INT64_MAX / 4, 1, 1));
    assert_opp_ok(opp_merge_attention_states_check(OPP_DTYPE_F32, 1, INT64_MAX / 4, 1, 1));
}

// --- the run entry's host checks

/* The run entry returns the shape check's status and message first. */
static void test_merge_fwd_checks_shapes_first(void **state) {
    (void)state;
    assert_opp_status(merge(OPP_DTYPE_F16, 0, 3, 4, 64, NULL, NULL, NULL, NULL),
                      OPP_STATUS_BAD_PARAM_SHAPE, "num_states = 0 must be >= 1");
    assert_opp_status(merge(OPP_DTYPE_F64, 2, 3, 4, 64, SO, SL, OUT, LO),
                      OPP_STATUS_NOT_SUPPORTED_DTYPE, "dtype = f64");
    assert_opp_status(merge(OPP_DTYPE_F16, 2, 3, 4, 0, SO, SL, OUT, LO),
                      OPP_STATUS_BAD_PARAM_V_HEAD_SIZE, "v_head_size = 0");
}

/* rows == 0 is valid, reads and writes nothing and launches nothing (on a
 * machine without a GPU a launch would fail with CUDA_ERROR), NULL
 * pointers included. */
static void test_merge_fwd_rows_zero_enqueues_nothing(void **state) {
    (void)state;
    assert_opp_ok(merge(OPP_DTYPE_BF16, 3, 0, 4, 64, NULL, NULL, NULL, NULL));
    assert_opp_ok(merge(OPP_DTYPE_F32, 1, 0, 1, 1, SO, SL, OUT, LO));
}

/* A required NULL pointer is named; lse_out may be NULL. */
static void test_merge_fwd_rejects_null_pointers(void **state) {
    (void)state;
    assert_opp_status(merge(OPP_DTYPE_BF16, 2, 3, 4, 64, NULL, SL, OUT, LO),
                      OPP_STATUS_BAD_PARAM_NULL_POINTER, "states_out is NULL");
    assert_opp_status(merge(OPP_DTYPE_BF16, 2, 3, 4, 64, SO, NULL, OUT, LO),
                      OPP_STATUS_BAD_PARAM_NULL_POINTER, "states_lse is NULL");
    assert_opp_status(merge(OPP_DTYPE_BF16, 2, 3, 4, 64, SO, SL, NULL, LO),
                      OPP_STATUS_BAD_PARAM_NULL_POINTER, "out is NULL");
    assert_opp_status(merge(OPP_DTYPE_BF16, 2, 3, 4, 64, SO, SL, NULL, NULL),
                      OPP_STATUS_BAD_PARAM_NULL_POINTER, "out is NULL");
}

/* The tensors need 16-byte alignment, the LSE arrays 4-byte alignment. */
static void test_merge_fwd_rejects_misaligned_pointers(void **state) {
    (void)state;
    assert_opp_status(merge(OPP_DTYPE_BF16, 2, 3, 4, 64, P(0x100008), SL, OUT, LO),
                      OPP_STATUS_BAD_PARAM_MISALIGNED, "states_out = 0x100008 is not 16-byte");
    assert_opp_status(merge(OPP_DTYPE_BF16, 2, 3, 4, 64, SO, (const float *)P(0x200002), OUT, LO),
                      OPP_STATUS_BAD_PARAM_MISALIGNED, "states_lse = 0x200002 is not 4-byte");
    assert_opp_status(merge(OPP_DTYPE_F32, 2, 3, 4, 64, SO, SL, P(0x300004), LO),
                      OPP_STATUS_BAD_PARAM_MISALIGNED, "out = 0x300004 is not 16-byte");
    assert_opp_status(merge(OPP_DTYPE_F32, 2, 3, 4, 64, SO, SL, OUT, (float *)P(0x400001)),
                      OPP_STATUS_BAD_PARAM_MISALIGNED, "lse_out = 0x400001 is not 4-byte");
}

/* An output that overlaps an input or the other output is refused (the
 * kernel reads every state of a line while writing it). */
static void test_merge_fwd_rejects_overlapping_outputs(void **state) {
    (void)state;
    /* states_out spans 2 * 3 * 4 * 64 * 2 = 3072 bytes from 0x100000 */
    assert_opp_status(merge(OPP_DTYPE_BF16, 2, 3, 4, 64, SO, SL, P(0x100000 + 1536), LO),
                      OPP_STATUS_BAD_PARAM, "out = 0x100600 (1536 bytes) overlaps states_out");
    assert_opp_status(merge(OPP_DTYPE_BF16, 2, 3, 4, 64, SO, SL, P(0x100000 - 1520), LO),
                      OPP_STATUS_BAD_PARAM, "overlaps states_out");
    /* states_lse spans 2 * 4 * 3 * 4 = 96 bytes from 0x200000 */
    assert_opp_status(merge(OPP_DTYPE_BF16, 2, 3, 4, 64, SO, SL, P(0x200000 - 1520), LO),
                      OPP_STATUS_BAD_PARAM, "out = 0x1ffa10 (1536 bytes) overlaps states_lse");
    assert_opp_status(merge(OPP_DTYPE_BF16, 2, 3, 4, 64, SO, SL, OUT, (float *)P(0x200000 + 92)),
                      OPP_STATUS_BAD_PARAM, "lse_out = 0x20005c (48 bytes) overlaps states_lse");
    assert_opp_status(merge(OPP_DTYPE_BF16, 2, 3, 4, 64, SO, SL, OUT, (float *)P(0x100000 + 3068)),
                      OPP_STATUS_BAD_PARAM, "lse_out = 0x100bfc (48 bytes) overlaps states_out");
    assert_opp_status(merge(OPP_DTYPE_BF16, 2, 3, 4, 64, SO, SL, OUT, (float *)P(0x300000 + 1532)),
                      OPP_STATUS_BAD_PARAM, "lse_out = 0x3005fc (48 bytes) overlaps out");
}

// --- the CPU reference

/* 1 + half an ulp of x in dtype (at least half the smallest subnormal). */
static double half_ulp(double x, opp_dtype_t dtype) {
    int e = 0;
    (void)frexp(x, &e); /* |x| in [2^(e-1), 2^e) */
    const double u = opp_test_unit_roundoff(dtype);
    return fmax(ldexp(u, e - 1), opp_test_min_subnormal(dtype) / 2.0);
}

/* The reference equals an independent long double model, element by
 * element, up to its one rounding to dtype: out within half an ulp (plus
 * 2^-48 max |o| for the double sums) of sum_i e^l_i o_i / sum_i e^l_i
 * over the states with lse > -inf, lse within half a float32 ulp (plus
 * 2^-45 (1 + max |l|)) of log sum_i e^l_i; a keyless line +0 and -inf;
 * the NaN/inf values of keyless states never reach the output. */
static void check_ref_against_model(opp_dtype_t dtype, int32_t n, int64_t rows, int32_t hq,
                                    int32_t dv, uint64_t seed) {
    opp_test_merge_t m;
    opp_test_merge_random(&m, dtype, n, rows, hq, dv, seed);
    const size_t oe = opp_test_merge_out_elems(&m), le = opp_test_merge_lse_elems(&m);
    void *out = malloc(oe * opp_dtype_size(dtype) + 1);
    float *lse = malloc(le * sizeof(float) + 1);
    assert_non_null(out);
    assert_non_null(lse);
    assert_opp_ok(opp_ref_merge_attention_states(dtype, n, rows, hq, dv, m.states_out, m.states_lse,
                                                 out, lse));
    size_t bad = 0;
    for (int64_t t = 0; t < rows; ++t) {
        for (int32_t h = 0; h < hq; ++h) {
            long double wsum = 0.0L, lmax = 0.0L;
            for (int32_t i = 0; i < n; ++i) {
                const float l = m.states_lse[((size_t)i * hq + h) * (size_t)rows + (size_t)t];
                if (l > -INFINITY) {
                    wsum += expl((long double)l);
                    lmax = fmaxl(lmax, fabsl((long double)l));
                }
            }
            const double got_lse = lse[(size_t)h * rows + (size_t)t];
            if (wsum == 0.0L) {
                bad += !(isinf(got_lse) && got_lse < 0);
            } else {
                const double want = (double)logl(wsum);
                bad += !(fabs(got_lse - want) <=
                         half_ulp(want, OPP_DTYPE_F32) + 0x1p-45 * (1.0 + (double)lmax));
            }
            for (int32_t c = 0; c < dv; ++c) {
                const size_t e = ((size_t)t * hq + h) * (size_t)dv + (size_t)c;
                const double got = opp__load_elem(out, e, dtype);
                if (wsum == 0.0L) {
                    bad += !(got == 0.0 && !signbit(got));
                    continue;
                }
                long double acc = 0.0L, omax = 0.0L;
                for (int32_t i = 0; i < n; ++i) {
                    const float l = m.states_lse[((size_t)i * hq + h) * (size_t)rows + (size_t)t];
                    if (l > -INFINITY) {
                        const long double o =
                            opp__load_elem(m.states_out, (size_t)i * oe + e, dtype);
                        acc += expl((long double)l) * o;
                        omax = fmaxl(omax, fabsl(o));
                    }
                }
                const double want = (double)(acc / wsum);
                const int ok = fabs(got - want) <= half_ulp(want, dtype) + 0x1p-48 * (double)omax;
                if (!ok && bad < OPP_TEST_MAX_REPORTED) {
                    print_error("%s n=%d row %lld head %d col %d: got %.9g want %.12g\n",
                                opp_dtype_name(dtype), n, (long long)t, h, c, got, want);
                }
                bad += !ok;
            }
        }
    }
    assert_int_equal(bad, 0);
    free(out);
    free(lse);
    opp_test_merge_free(&m);
}

/* Small random cases of every dtype and 1 to 6 states (see
 * merge_states_util.h: keyless states holding NaN/inf, keyless rows,
 * states whose float32 weight underflows) match the model. */
static void test_merge_ref_matches_independent_model(void **state) {
    (void)state;
    const opp_dtype_t dts[3] = {OPP_DTYPE_F32, OPP_DTYPE_F16, OPP_DTYPE_BF16};
    for (int d = 0; d < 3; ++d) {
        for (int32_t n = 1; n <= 6; ++n) {
            check_ref_against_model(dts[d], n, 11, 3, 5 + 4 * n, 1000u * (uint64_t)d + (uint64_t)n);
        }
    }
}

/* One state merges to itself bit for bit (w = 1, a division by 1), LSE
 * included; a keyless line to +0 and -inf. */
static void test_merge_ref_single_state_is_identity(void **state) {
    (void)state;
    opp_test_merge_t m;
    opp_test_merge_random(&m, OPP_DTYPE_BF16, 1, 10, 2, 8, 77);
    const size_t oe = opp_test_merge_out_elems(&m), le = opp_test_merge_lse_elems(&m);
    uint16_t *out = malloc(oe * 2), *want = malloc(oe * 2);
    float *lse = malloc(le * sizeof(float)), *want_lse = malloc(le * sizeof(float));
    assert_non_null(out);
    assert_non_null(want);
    assert_non_null(lse);
    assert_non_null(want_lse);
    assert_opp_ok(opp_ref_merge_attention_states(OPP_DTYPE_BF16, 1, 10, 2, 8, m.states_out,
                                                 m.states_lse, out, lse));
    memcpy(want, m.states_out, oe * 2);
    memcpy(want_lse, m.states_lse, le * sizeof(float));
    for (int64_t t = 0; t < 10; ++t) {
        for (int32_t h = 0; h < 2; ++h) {
            if (m.states_lse[h * 10 + t] == -INFINITY) { /* NaN/inf state values -> +0 */
                memset(want + (t * 2 + h) * 8, 0, 8 * 2);
            }
        }
    }
    assert_int_equal(opp_test_bits_equal(out, want, oe, OPP_DTYPE_BF16, "out"), 0);
    assert_int_equal(opp_test_bits_equal(lse, want_lse, le, OPP_DTYPE_F32, "lse"), 0);
    free(out);
    free(want);
    free(lse);
    free(want_lse);
    opp_test_merge_free(&m);
}

/* A NaN or +inf LSE in any state makes its line NaN (out and lse), even
 * where the other states are fine; NaN o values with weight > 0 reach the
 * output (only skipped states are ignored). */
static void test_merge_ref_undefined_lse_is_nan(void **state) {
    (void)state;
    /* n = 2, rows = 3, Hq = 1, Dv = 2 (f32) */
    const float so[12] = {1, 2, 3, 4, NAN, 6, 7, 8, 9, 10, 11, 12};
    const float sl[6] = {0.5f, NAN, 1.0f, 0.25f, 2.0f, INFINITY};
    float out[6], lse[3];
    assert_opp_ok(opp_ref_merge_attention_states(OPP_DTYPE_F32, 2, 3, 1, 2, so, sl, out, lse));
    /* row 0: both states finite, and so are their o values */
    assert_true(isfinite(out[0]) && isfinite(out[1]) && isfinite(lse[0]));
    /* row 1: lse NaN in state 0 */
    assert_true(isnan(out[2]) && isnan(out[3]) && isnan(lse[1]));
    /* row 2: state 0 has the NaN o value, weighted: NaN; +inf lse too */
    assert_true(isnan(out[4]) && isnan(out[5]) && isnan(lse[2]));
    const float sl2[6] = {0.5f, 3.0f, 1.0f, 0.25f, 2.0f, 1.0f};
    assert_opp_ok(opp_ref_merge_attention_states(OPP_DTYPE_F32, 2, 3, 1, 2, so, sl2, out, lse));
    assert_true(isnan(out[4]) && isfinite(out[5]) && isfinite(lse[2]));
}

/* The reference refuses what the GPU entry refuses on shapes and NULLs. */
static void test_merge_ref_rejects_bad_arguments(void **state) {
    (void)state;
    float f[4] = {0};
    assert_opp_status(opp_ref_merge_attention_states(OPP_DTYPE_F32, 0, 1, 1, 1, f, f, f, f),
                      OPP_STATUS_BAD_PARAM_SHAPE, "num_states = 0");
    assert_opp_status(opp_ref_merge_attention_states(OPP_DTYPE_F32, 1, 1, 1, 1, NULL, f, f, f),
                      OPP_STATUS_BAD_PARAM_NULL_POINTER, "states_out is NULL");
    assert_opp_ok(
        opp_ref_merge_attention_states(OPP_DTYPE_F32, 1, 0, 1, 1, NULL, NULL, NULL, NULL));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_merge_check_accepts_valid_shapes),
        cmocka_unit_test(test_merge_check_rejects_dtypes),
        cmocka_unit_test(test_merge_check_rejects_counts),
        cmocka_unit_test(test_merge_check_rejects_overflowing_sizes),
        cmocka_unit_test(test_merge_fwd_checks_shapes_first),
        cmocka_unit_test(test_merge_fwd_rows_zero_enqueues_nothing),
        cmocka_unit_test(test_merge_fwd_rejects_null_pointers),
        cmocka_unit_test(test_merge_fwd_rejects_misaligned_pointers),
        cmocka_unit_test(test_merge_fwd_rejects_overlapping_outputs),
        cmocka_unit_test(test_merge_ref_matches_independent_model),
        cmocka_unit_test(test_merge_ref_single_state_is_identity),
        cmocka_unit_test(test_merge_ref_undefined_lse_is_nan),
        cmocka_unit_test(test_merge_ref_rejects_bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
