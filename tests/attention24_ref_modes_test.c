/*
 * attention24_ref_modes_test.c - the CPU Attention-24 reference
 * (opp_ref_attention24) on fully masked rows, the four
 * qk_matmul_output_mode values and softmax_precision (DESIGN.md §2.3):
 *   - a row whose additive bias is all -inf (mask, causal, nonpad = 0) gives
 *     +0.0 in Y and in the mode-3 output; a finite bias never does;
 *   - mode 0 = mode 1 = the scores after softcap (as onnx 1.23 does),
 *     mode 2 = mode 0 + bias (-inf where masked, padding columns included),
 *     mode 3 = the probabilities (rows sum to 1, or are zeros);
 *   - softmax_precision 1/10/11/16 changes no bit (double regardless).
 * Expectations: the reference's own other outputs (bit for bit) and the
 * naive long double model (harness/naive_model.h, within 1 ulp).
 * Shapes: Y [B, Hq, S_q, Dv] (4D here), qk [B, Hq, S_q, T].
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numerics/fp_convert.h"
#include "reference/opp_reference.h"
#include "tests/a24_case.h"
#include "tests/test_util.h"

static const opp_dtype_t k_dtypes[3] = {OPP_DTYPE_F32, OPP_DTYPE_F16, OPP_DTYPE_BF16};

static void set_shape(opp_ref_attention24_desc_t *d, opp_dtype_t dtype, int32_t B, int32_t hq,
                      int32_t hkv, int32_t sq, int32_t skv, int32_t dh, int32_t dv) {
    opp_ref_attention24_desc_init(d);
    d->dtype = dtype;
    d->input_rank = 4;
    d->batch = B;
    d->q_num_heads = hq;
    d->kv_num_heads = hkv;
    d->q_seqlen = sq;
    d->kv_seqlen = skv;
    d->head_size = dh;
    d->v_head_size = dv;
}

static int all_bytes_zero(const void *p, size_t bytes) {
    for (size_t i = 0; i < bytes; ++i) {
        if (((const unsigned char *)p)[i] != 0) {
            return 0;
        }
    }
    return 1;
}

/* Checks row (b, h, t) of Y and of the mode-3 output: +0.0 everywhere when
 * want_zero, else not all zero. */
static void assert_row(const a24_case_t *c, int64_t b, int64_t h, int64_t t, int want_zero) {
    const size_t es = opp_dtype_size(c->d.dtype);
    const int64_t row = (b * c->d.q_num_heads + h) * c->d.q_seqlen + t, T = a24_total(&c->d);
    const char *y = (const char *)c->y + (size_t)(row * c->d.v_head_size) * es;
    const char *p = (const char *)c->qk + (size_t)(row * T) * es;
    if (want_zero != all_bytes_zero(y, (size_t)c->d.v_head_size * es) ||
        want_zero != all_bytes_zero(p, (size_t)T * es)) {
        print_error("row b=%lld h=%lld t=%lld: expected %s\n", (long long)b, (long long)h,
                    (long long)t, want_zero ? "zeros" : "a non-zero row");
        fail();
    }
}

/* A row whose bool mask is all False, or that causal + mask leave with no
 * key, gives +0.0 in Y and mode 3; every other row does not. */
static void test_a24_fully_masked_rows_are_zero(void **state) {
    (void)state;
    for (int di = 0; di < 3; ++di) {
        for (int32_t causal = 0; causal <= 1; ++causal) {
            a24_case_t c = {0};
            set_shape(&c.d, k_dtypes[di], 2, 4, 2, 4, 5, 8, 8);
            c.d.is_causal = causal;
            c.d.mask_dtype = OPP_DTYPE_BOOL_;
            c.d.mask_rank = 4;
            const int64_t dims[4] = {2, 4, 4, 5};
            memcpy(c.d.mask_dims, dims, sizeof(dims));
            c.d.qk_matmul_output_mode = 3;
            c.want_qk = 1;
            assert_int_equal(a24_case_alloc(&c, 1100u + (uint64_t)causal, 1.0), 0);
            uint8_t *m = c.mask;
            memset(m, 1, c.mask_elems);
            memset(m + ((1 * 4 + 2) * 4 + 1) * 5, 0, 5); /* (b=1, h=2, t=1): all False */
            memset(m + ((0 * 4 + 0) * 4 + 3) * 5, 0, 5); /* (b=0, h=0, t=3): all False */
            if (causal) {
                m[((0 * 4 + 3) * 4 + 0) * 5 + 0] = 0; /* (0, 3, 0) sees only key 0: masked */
            }
            assert_opp_ok(a24_case_run(&c));
            for (int64_t b = 0; b < 2; ++b) {
                for (int64_t h = 0; h < 4; ++h) {
                    for (int64_t t = 0; t < 4; ++t) {
                        const int zero = (b == 1 && h == 2 && t == 1) ||
                                         (b == 0 && h == 0 && t == 3) ||
                                         (causal && b == 0 && h == 3 && t == 0);
                        assert_row(&c, b, h, t, zero);
                    }
                }
            }
            assert_int_equal(a24_case_compare_naive(&c, 1, "fully masked", NULL, NULL), 0);
            a24_case_free(&c);
        }
    }
}

/* nonpad_kv_seqlen[b] = 0 gives all-zero rows for batch b (causal or not);
 * with causal, nonpad < S_q leaves the first S_q - nonpad rows with no key. */
static void test_a24_nonpad_zero_gives_zero_rows(void **state) {
    (void)state;
    for (int di = 0; di < 3; ++di) {
        for (int32_t causal = 0; causal <= 1; ++causal) {
            a24_case_t c = {0};
            set_shape(&c.d, k_dtypes[di], 3, 2, 1, 4, 6, 8, 8);
            c.d.is_causal = causal;
            c.d.has_nonpad = 1;
            c.d.qk_matmul_output_mode = 3;
            c.want_qk = 1;
            assert_int_equal(a24_case_alloc(&c, 1200u + (uint64_t)causal, 1.0), 0);
            c.nonpad[0] = 0;
            c.nonpad[1] = 6;
            c.nonpad[2] = 2;
            assert_opp_ok(a24_case_run(&c));
            for (int64_t h = 0; h < 2; ++h) {
                for (int64_t t = 0; t < 4; ++t) {
                    assert_row(&c, 0, h, t, 1);
                    assert_row(&c, 1, h, t, 0);
                    assert_row(&c, 2, h, t, causal && t < 2); /* offset 2 - 4 = -2 */
                }
            }
            assert_int_equal(a24_case_compare_naive(&c, 1, "nonpad", NULL, NULL), 0);
            a24_case_free(&c);
        }
    }
}

/* A float mask row of large but FINITE negative values (-30000) is not
 * "fully masked" (the decision is bias == -inf): the row is not zero and
 * agrees with the naive model. */
static void test_a24_finite_negative_mask_row_is_not_zeroed(void **state) {
    (void)state;
    for (int di = 0; di < 3; ++di) {
        a24_case_t c = {0};
        set_shape(&c.d, k_dtypes[di], 1, 2, 2, 3, 5, 8, 8);
        c.d.mask_dtype = c.d.dtype;
        c.d.mask_rank = 2;
        const int64_t dims[4] = {3, 5, 0, 0};
        memcpy(c.d.mask_dims, dims, sizeof(dims));
        c.d.qk_matmul_output_mode = 3;
        c.want_qk = 1;
        assert_int_equal(a24_case_alloc(&c, 1300u, 1.0), 0);
        for (size_t i = 0; i < c.mask_elems; ++i) {
            opp__store_elem(c.mask, i, (int)c.d.dtype, i < 5 ? -30000.0 : 0.0);
        }
        assert_opp_ok(a24_case_run(&c));
        for (int64_t h = 0; h < 2; ++h) {
            assert_row(&c, 0, h, 0, 0);
        }
        assert_int_equal(a24_case_compare_naive(&c, 1, "finite mask row", NULL, NULL), 0);
        a24_case_free(&c);
    }
}

/* The qk-mode case: B=2, Hq=4, Hkv=2, S_q=5, S_kv=8, bool mask [S_q, T],
 * nonpad = {8, 3} (padding columns 3..7 of batch 1 hold finite values). */
static void mode_case(a24_case_t *c, opp_dtype_t dtype, int32_t causal, float softcap, int32_t mode,
                      uint64_t seed) {
    memset(c, 0, sizeof(*c));
    set_shape(&c->d, dtype, 2, 4, 2, 5, 8, 16, 8);
    c->d.is_causal = causal;
    c->d.softcap = softcap;
    c->d.has_nonpad = 1;
    c->d.mask_dtype = OPP_DTYPE_BOOL_;
    c->d.mask_rank = 2;
    const int64_t dims[4] = {5, 8, 0, 0};
    memcpy(c->d.mask_dims, dims, sizeof(dims));
    c->d.qk_matmul_output_mode = mode;
    c->want_qk = 1;
    assert_int_equal(a24_case_alloc(c, seed, 2.0), 0);
    c->nonpad[1] = 3;
    assert_opp_ok(a24_case_run(c));
}

/* Whether key j is visible to row (b, t) of a mode_case: mask True, causal
 * j <= t + nonpad[b] - S_q, and j < nonpad[b]. */
static int visible(const a24_case_t *c, int64_t b, int64_t t, int64_t j) {
    const int64_t off = c->nonpad[b] - c->d.q_seqlen;
    return ((const uint8_t *)c->mask)[t * 8 + j] && !(c->d.is_causal && j > t + off) &&
           j < c->nonpad[b];
}

/* Mode 0 is the scaled scores after softcap (|x| <= softcap), within 1 ulp
 * of the naive model over every column (padding included); mode 1 is the
 * same bits. */
static void test_a24_qk_mode0_and_mode1_are_softcapped_scores(void **state) {
    (void)state;
    for (int di = 0; di < 3; ++di) {
        for (int v = 0; v < 4; ++v) {
            const float softcap = v & 2 ? 1.75f : 0.0f;
            a24_case_t c0, c1;
            mode_case(&c0, k_dtypes[di], v & 1, softcap, 0, 1400u + (uint64_t)v);
            assert_int_equal(a24_case_compare_naive(&c0, 1, "mode 0", NULL, NULL), 0);
            mode_case(&c1, k_dtypes[di], v & 1, softcap, 1, 1400u + (uint64_t)v);
            assert_int_equal(opp_test_bits_equal(c1.qk, c0.qk, c0.qk_elems, c0.d.dtype, "mode 1"),
                             0);
            size_t above_one = 0;
            for (size_t i = 0; i < c0.qk_elems; ++i) {
                const double x = opp__load_elem(c0.qk, i, (int)c0.d.dtype);
                assert_false(isnan(x));
                if (softcap > 0.0f) {
                    assert_true(fabs(x) <= (double)softcap);
                }
                above_one += fabs(x) > 1.0;
            }
            assert_true(above_one > 0); /* the scores are not trivially small */
            a24_case_free(&c0);
            a24_case_free(&c1);
        }
    }
}

/* Mode 2 is mode 0 plus the bias: the mode-0 bits where the key is
 * visible, -inf where the mask, the causal rule (offset nonpad - S_q) or
 * the padding (j >= nonpad) hides it; and within 1 ulp of the naive model. */
static void test_a24_qk_mode2_is_mode0_plus_bias(void **state) {
    (void)state;
    for (int di = 0; di < 3; ++di) {
        for (int v = 0; v < 4; ++v) {
            a24_case_t c0, c2;
            const float softcap = v & 2 ? 3.0f : 0.0f;
            mode_case(&c0, k_dtypes[di], v & 1, softcap, 0, 1500u + (uint64_t)v);
            mode_case(&c2, k_dtypes[di], v & 1, softcap, 2, 1500u + (uint64_t)v);
            assert_int_equal(a24_case_compare_naive(&c2, 1, "mode 2", NULL, NULL), 0);
            const size_t es = opp_dtype_size(c0.d.dtype);
            void *want = malloc(c0.qk_elems * es);
            assert_non_null(want);
            size_t i = 0, hidden = 0;
            for (int64_t b = 0; b < 2; ++b) {
                for (int64_t h = 0; h < 4; ++h) {
                    for (int64_t t = 0; t < 5; ++t) {
                        for (int64_t j = 0; j < 8; ++j, ++i) {
                            const int masked = !visible(&c0, b, t, j);
                            hidden += masked;
                            memcpy((char *)want + i * es, (char *)c0.qk + i * es, es);
                            if (masked) {
                                opp__store_elem(want, i, (int)c0.d.dtype, -INFINITY);
                            }
                        }
                    }
                }
            }
            assert_true(hidden > 0 && hidden < i);
            assert_int_equal(opp_test_bits_equal(c2.qk, want, c0.qk_elems, c0.d.dtype, "mode 2"),
                             0);
            free(want);
            a24_case_free(&c0);
            a24_case_free(&c2);
        }
    }
}

/* Mode 3 rows are probabilities: rows with a visible key sum to 1 within
 * the dtype's rounding, rows without one are zeros; all within 1 ulp of
 * the naive model. */
static void test_a24_qk_mode3_rows_are_probabilities(void **state) {
    (void)state;
    for (int di = 0; di < 3; ++di) {
        for (int v = 0; v < 4; ++v) {
            a24_case_t c;
            mode_case(&c, k_dtypes[di], v & 1, v & 2 ? 2.0f : 0.0f, 3, 1600u + (uint64_t)v);
            assert_int_equal(a24_case_compare_naive(&c, 1, "mode 3", NULL, NULL), 0);
            const size_t es = opp_dtype_size(c.d.dtype);
            const double eps = c.d.dtype == OPP_DTYPE_F32   ? 0x1p-23
                               : c.d.dtype == OPP_DTYPE_F16 ? 0x1p-10
                                                            : 0x1p-7;
            size_t r = 0, zero_rows = 0;
            for (int64_t b = 0; b < 2; ++b) {
                for (int64_t h = 0; h < 4; ++h) {
                    for (int64_t t = 0; t < 5; ++t, ++r) {
                        int any = 0;
                        double sum = 0.0;
                        for (int64_t j = 0; j < 8; ++j) {
                            const double p =
                                opp__load_elem(c.qk, r * 8 + (size_t)j, (int)c.d.dtype);
                            assert_true(p >= 0.0 && p <= 1.0);
                            assert_true(visible(&c, b, t, j) || p == 0.0);
                            any |= visible(&c, b, t, j);
                            sum += p;
                        }
                        zero_rows += !any;
                        if (any ? fabs(sum - 1.0) > eps
                                : !all_bytes_zero((char *)c.qk + r * 8 * es, 8 * es)) {
                            print_error("mode 3 row %zu (visible key: %d) sums to %.17g\n", r, any,
                                        sum);
                            fail();
                        }
                    }
                }
            }
            assert_true(zero_rows > 0 || !(v & 1)); /* causal: batch 1 rows 0, 1 see no key */
            a24_case_free(&c);
        }
    }
}

/* softmax_precision FLOAT, FLOAT16, DOUBLE, BFLOAT16 give the bits of the
 * unset attribute (Y and mode-3 output): the exact path is double always. */
static void test_a24_softmax_precision_changes_no_bits(void **state) {
    (void)state;
    static const int32_t precisions[4] = {1, 10, 11, 16};
    for (int di = 0; di < 3; ++di) {
        a24_case_t c;
        mode_case(&c, k_dtypes[di], 1, 0.0f, 3, 1700u);
        const size_t es = opp_dtype_size(c.d.dtype);
        void *y = malloc(c.y_elems * es), *qk = malloc(c.qk_elems * es);
        assert_true(y && qk);
        memcpy(y, c.y, c.y_elems * es);
        memcpy(qk, c.qk, c.qk_elems * es);
        for (int i = 0; i < 4; ++i) {
            c.d.softmax_precision = precisions[i];
            a24_case_poison_outputs(&c);
            assert_opp_ok(a24_case_run(&c));
            assert_int_equal(opp_test_bits_equal(c.y, y, c.y_elems, c.d.dtype, "Y"), 0);
            assert_int_equal(opp_test_bits_equal(c.qk, qk, c.qk_elems, c.d.dtype, "qk"), 0);
        }
        free(y);
        free(qk);
        a24_case_free(&c);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a24_fully_masked_rows_are_zero),
        cmocka_unit_test(test_a24_nonpad_zero_gives_zero_rows),
        cmocka_unit_test(test_a24_finite_negative_mask_row_is_not_zeroed),
        cmocka_unit_test(test_a24_qk_mode0_and_mode1_are_softcapped_scores),
        cmocka_unit_test(test_a24_qk_mode2_is_mode0_plus_bias),
        cmocka_unit_test(test_a24_qk_mode3_rows_are_probabilities),
        cmocka_unit_test(test_a24_softmax_precision_changes_no_bits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
