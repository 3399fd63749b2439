/*
 * attention24_ref_naive_test.c - the CPU Attention-24 reference
 * (opp_ref_attention24) against the independent naive long double model
 * (harness/naive_model.h) on random small cases that use every option at once
 * (bool/float masks of every rank, broadcast and short; past; nonpad;
 * causal; softcap; scale; 3D/4D; f32/f16/bf16; qk modes 0-3; present_*),
 * and every way to call it wrongly (status AND message, nothing written).
 *
 * Environment: OPP_A24_NAIVE_CASES (default 2000), OPP_A24_NAIVE_SEED.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/rng.h"
#include "numerics/fp_convert.h"
#include "reference/opp_reference.h"
#include "tests/a24_case.h"
#include "tests/test_util.h"

static const opp_dtype_t k_dtypes[3] = {OPP_DTYPE_F32, OPP_DTYPE_F16, OPP_DTYPE_BF16};

static long env_long(const char *name, long fallback) {
    const char *s = getenv(name);
    return (s != NULL && *s != '\0') ? strtol(s, NULL, 10) : fallback;
}

/* A random descriptor using every option (see the file comment). */
static void random_case(a24_case_t *c, uint64_t *st) {
    static const int32_t head_sizes[6] = {1, 4, 8, 8, 16, 32};
    opp_ref_attention24_desc_t *d = &c->d;
    memset(c, 0, sizeof(*c));
    opp_ref_attention24_desc_init(d);
    d->dtype = k_dtypes[a24_rand_int(st, 0, 2)];
    d->input_rank = a24_rand_int(st, 3, 4);
    d->batch = a24_rand_int(st, 1, 3);
    d->kv_num_heads = a24_rand_int(st, 1, 3);
    d->q_num_heads = d->kv_num_heads * a24_rand_int(st, 1, 3);
    d->q_seqlen = a24_rand_int(st, 0, 9) == 0 ? 0 : a24_rand_int(st, 1, 7);
    d->kv_seqlen = a24_rand_int(st, 0, 7);
    d->head_size = head_sizes[a24_rand_int(st, 0, 5)];
    d->v_head_size = a24_rand_int(st, 0, 2) ? d->head_size : head_sizes[a24_rand_int(st, 0, 5)];
    d->has_past = a24_rand_int(st, 0, 9) < 3;
    d->past_seqlen = d->has_past ? a24_rand_int(st, 0, 4) : 0;
    d->has_nonpad = !d->has_past && a24_rand_int(st, 0, 9) < 4;
    d->is_causal = a24_rand_int(st, 0, 1);
    d->softcap = a24_rand_int(st, 0, 9) < 3 ? (float)(0.5 + 7.5 * opp_rng_unit(st)) : 0.0f;
    d->scale = a24_rand_int(st, 0, 9) < 4 ? (float)(0.05 + opp_rng_unit(st)) : 0.0f;
    d->qk_matmul_output_mode = a24_rand_int(st, 0, 3);
    d->softmax_precision = a24_rand_int(st, 0, 3) == 0 ? 1 : 0;
    const int mask_kind = a24_rand_int(st, 0, 2); /* none, bool, float */
    if (mask_kind != 0) {
        const int64_t total = a24_total(d);
        const int64_t target[3] = {d->batch, d->q_num_heads, d->q_seqlen};
        d->mask_dtype = mask_kind == 1 ? OPP_DTYPE_BOOL_ : d->dtype;
        d->mask_rank = a24_rand_int(st, 1, 4);
        for (int32_t i = 0; i + 1 < d->mask_rank; ++i) {
            d->mask_dims[i] = a24_rand_int(st, 0, 2) == 0 ? 1 : target[4 - d->mask_rank + i];
        }
        const int short_mask = total > 0 && a24_rand_int(st, 0, 2) == 0;
        d->mask_dims[d->mask_rank - 1] =
            short_mask ? a24_rand_int(st, 0, (int32_t)total - 1) : total;
    }
    c->want_qk = a24_rand_int(st, 0, 4) != 0;
    c->want_present = a24_rand_int(st, 0, 1);
}

/* The reference agrees with the naive model on random cases that combine
 * every option: Y and qk within 1 ulp (f16/bf16 almost all bit-identical),
 * present_* bit for bit. Prints identical fractions per dtype. */
static void test_a24_matches_naive_model_random_cases(void **state) {
    (void)state;
    const long cases = env_long("OPP_A24_NAIVE_CASES", 2000);
    uint64_t st = (uint64_t)env_long("OPP_A24_NAIVE_SEED", 24240);
    opp_test_ulp_stats_t ys[3], qks[3];
    memset(ys, 0, sizeof(ys));
    memset(qks, 0, sizeof(qks));
    size_t n_mask = 0, n_past = 0, n_nonpad = 0, n_causal = 0, n_softcap = 0, n_modes[4] = {0};
    for (long i = 0; i < cases; ++i) {
        a24_case_t c;
        random_case(&c, &st);
        const opp_ref_attention24_desc_t *d = &c.d;
        char what[256];
        snprintf(what, sizeof(what),
                 "case %ld: %s rank %d B %d Hq %d Hkv %d Sq %d Skv %d P %d D %d Dv %d causal %d "
                 "nonpad %d softcap %g scale %g mode %d mask %d rank %d",
                 i, opp_dtype_name(d->dtype), (int)d->input_rank, (int)d->batch,
                 (int)d->q_num_heads, (int)d->kv_num_heads, (int)d->q_seqlen, (int)d->kv_seqlen,
                 (int)d->past_seqlen, (int)d->head_size, (int)d->v_head_size, (int)d->is_causal,
                 (int)d->has_nonpad, (double)d->softcap, (double)d->scale,
                 (int)d->qk_matmul_output_mode, (int)d->mask_dtype, (int)d->mask_rank);
        assert_opp_ok(opp_ref_attention24_check(d));
        assert_int_equal(a24_case_alloc(&c, a24_rand_u64(&st), 0.25 + 2.75 * opp_rng_unit(&st)), 0);
        for (int32_t b = 0; d->has_nonpad && b < d->batch; ++b) {
            c.nonpad[b] = a24_rand_int(&st, 0, d->kv_seqlen);
        }
        assert_opp_ok(a24_case_run(&c));
        const int di = d->dtype == OPP_DTYPE_F32 ? 0 : d->dtype == OPP_DTYPE_F16 ? 1 : 2;
        assert_int_equal(a24_case_compare_naive(&c, 1, what, &ys[di], &qks[di]), 0);
        if (c.want_present) {
            opp_naive_case_t n;
            a24_case_to_naive(&c, &n);
            opp_naive_result_t r;
            assert_int_equal(opp_naive_attention24(&n, &r), 0);
            void *pk = opp_naive_rounded(r.present_key, r.present_key_elems, d->dtype);
            void *pv = opp_naive_rounded(r.present_value, r.present_value_elems, d->dtype);
            assert_int_equal(opp_test_bits_equal(c.present_key, pk, c.prk_elems, d->dtype, what),
                             0);
            assert_int_equal(opp_test_bits_equal(c.present_value, pv, c.prv_elems, d->dtype, what),
                             0);
            free(pk);
            free(pv);
            opp_naive_result_free(&r);
        }
        n_mask += d->mask_dtype != OPP_DTYPE_UNDEFINED;
        n_past += d->has_past;
        n_nonpad += d->has_nonpad;
        n_causal += d->is_causal;
        n_softcap += d->softcap > 0.0f;
        n_modes[d->qk_matmul_output_mode] += c.want_qk;
        a24_case_free(&c);
    }
    printf("a24 vs naive: %ld cases (mask %zu, past %zu, nonpad %zu, causal %zu, softcap %zu, "
           "qk modes %zu/%zu/%zu/%zu)\n",
           cases, n_mask, n_past, n_nonpad, n_causal, n_softcap, n_modes[0], n_modes[1], n_modes[2],
           n_modes[3]);
    for (int di = 0; di < 3; ++di) {
        const double fy = ys[di].compared ? (double)ys[di].identical / (double)ys[di].compared : 1;
        const double fq =
            qks[di].compared ? (double)qks[di].identical / (double)qks[di].compared : 1;
        printf("  %-4s Y: %zu elements, identical %.6f (%zu differ), max ulp %llu; qk: %zu, "
               "identical %.6f (%zu differ), max ulp %llu\n",
               opp_dtype_name(k_dtypes[di]), ys[di].compared, fy,
               ys[di].compared - ys[di].identical, (unsigned long long)ys[di].max_ulp,
               qks[di].compared, fq, qks[di].compared - qks[di].identical,
               (unsigned long long)qks[di].max_ulp);
        assert_true(ys[di].compared > 0 && qks[di].compared > 0);
        if (di > 0) {
            assert_true(fy >= 0.999 && fq >= 0.999);
        }
    }
}

/* One invalid call: a mutation of the valid base case. */
typedef struct bad_input {
    const char *name;
    opp_status_t status;
    const char *message; /* substring of opp_last_error_message() */
    int desc_only;       /* 1: opp_ref_attention24_check rejects it too */
} bad_input_t;

static const bad_input_t k_bad[] = {
    {"nonpad+past", OPP_STATUS_BAD_PARAM_NONPAD, "cannot be combined", 1},
    {"mask f16 for f32", OPP_STATUS_BAD_PARAM_MASK, "must be bool or the dtype of Q", 1},
    {"mask int8", OPP_STATUS_BAD_PARAM_MASK, "attn_mask dtype = int8", 1},
    {"mask batch dim 3", OPP_STATUS_BAD_PARAM_MASK, "does not broadcast to batch = 2", 1},
    {"mask head dim 3", OPP_STATUS_BAD_PARAM_MASK, "does not broadcast to q_num_heads = 4", 1},
    {"mask query dim 2", OPP_STATUS_BAD_PARAM_MASK, "does not broadcast to q_sequence_length", 1},
    {"mask last dim > T", OPP_STATUS_BAD_PARAM_MASK, "= 7 must be 0..total_sequence_length = 6", 1},
    {"mask rank 0", OPP_STATUS_BAD_PARAM_MASK, "attn_mask rank = 0 must be 1..4", 1},
    {"mask rank 5", OPP_STATUS_BAD_PARAM_MASK, "attn_mask rank = 5 must be 1..4", 1},
    {"qk mode 4", OPP_STATUS_BAD_PARAM_QK_MATMUL_OUTPUT_MODE, "qk_matmul_output_mode = 4", 1},
    {"qk mode -1", OPP_STATUS_BAD_PARAM_QK_MATMUL_OUTPUT_MODE, "qk_matmul_output_mode = -1", 1},
    {"softmax_precision 7", OPP_STATUS_BAD_PARAM_SOFTMAX_PRECISION, "softmax_precision = 7", 1},
    {"nonpad -1", OPP_STATUS_BAD_PARAM_NONPAD, "nonpad_kv_seqlen[1] = -1 is outside 0..", 0},
    {"nonpad > S_kv", OPP_STATUS_BAD_PARAM_NONPAD, "nonpad_kv_seqlen[0] = 7 is outside 0..", 0},
    {"past_value NULL", OPP_STATUS_BAD_PARAM_PAST, "past_value is NULL", 0},
    {"past given, has_past 0", OPP_STATUS_BAD_PARAM_PAST, "given but has_past = 0", 0},
    {"past_seqlen without past", OPP_STATUS_BAD_PARAM_PAST, "past_seqlen = 2 without", 1},
    {"Y NULL", OPP_STATUS_BAD_PARAM_NULL_POINTER, "Y is NULL", 0},
    {"Q NULL", OPP_STATUS_BAD_PARAM_NULL_POINTER, "Q is NULL", 0},
    {"tensors NULL", OPP_STATUS_BAD_PARAM_NULL_POINTER, "tensors is NULL", 0},
    {"mask NULL", OPP_STATUS_BAD_PARAM_NULL_POINTER, "attn_mask is NULL", 0},
    {"nonpad NULL", OPP_STATUS_BAD_PARAM_NONPAD, "nonpad_kv_seqlen is NULL but has_nonpad = 1", 0},
    {"input_rank 5", OPP_STATUS_BAD_PARAM_SHAPE, "input_rank = 5 must be 3 or 4", 1},
    {"Hq % Hkv", OPP_STATUS_BAD_PARAM_KV_HEADS_NOT_DIVIDING,
     "q_num_heads = 4 is not a multiple of kv_num_heads = 3", 1},
    {"S_q -1", OPP_STATUS_BAD_PARAM_SHAPE, "sequence lengths must be >= 0 (q -1", 1},
    {"S_kv -2", OPP_STATUS_BAD_PARAM_SHAPE, "kv -2", 1},
    {"P -1", OPP_STATUS_BAD_PARAM_SHAPE, "past -1", 1},
    {"dtype f64", OPP_STATUS_NOT_SUPPORTED_DTYPE, "dtype = f64 is not supported", 1},
    {"dtype 99", OPP_STATUS_BAD_PARAM_DTYPE, "dtype = 99 is not an ONNX element type", 1},
    {"dtype 0", OPP_STATUS_BAD_PARAM_DTYPE, "is not set", 1},
    {"scale NaN", OPP_STATUS_BAD_PARAM_SCALE, "scale = nan", 1},
    {"scale -1", OPP_STATUS_BAD_PARAM_SCALE, "scale = -1", 1},
    {"softcap -1", OPP_STATUS_BAD_PARAM_SOFTCAP, "softcap = -1", 1},
    {"softcap inf", OPP_STATUS_BAD_PARAM_SOFTCAP, "softcap = inf", 1},
    {"is_causal 2", OPP_STATUS_BAD_PARAM_IS_CAUSAL, "is_causal = 2", 1},
    {"batch 0", OPP_STATUS_BAD_PARAM_BATCH, "batch = 0", 1},
    {"head_size 0", OPP_STATUS_BAD_PARAM_HEAD_SIZE, "head_size = 0", 1},
    {"desc NULL", OPP_STATUS_BAD_PARAM_NULL_POINTER, "desc is NULL", 1},
};

/* Applies bad input i to a copy of the base case (B=2, Hq=4, Hkv=2, S_q=5,
 * S_kv=6, f32, bool mask [S_q, T], nonpad). *dp / *tp may be set to NULL. */
static void mutate(size_t i, opp_ref_attention24_desc_t *d, opp_ref_attention24_tensors_t *t,
                   int64_t *nonpad, const void *spare, opp_ref_attention24_desc_t **dp,
                   opp_ref_attention24_tensors_t **tp) {
    switch (i) {
    case 0:
        d->has_past = 1;
        d->past_seqlen = 2;
        t->past_key = t->past_value = spare;
        break;
    case 1:
        d->mask_dtype = OPP_DTYPE_F16;
        break;
    case 2:
        d->mask_dtype = (opp_dtype_t)3;
        break;
    case 3:
        d->mask_rank = 4;
        d->mask_dims[0] = 3;
        d->mask_dims[1] = 4;
        d->mask_dims[2] = 5;
        d->mask_dims[3] = 6;
        break;
    case 4:
        d->mask_rank = 3;
        d->mask_dims[0] = 3;
        d->mask_dims[1] = 5;
        d->mask_dims[2] = 6;
        break;
    case 5:
        d->mask_dims[0] = 2;
        break;
    case 6:
        d->mask_dims[1] = 7;
        break;
    case 7:
        d->mask_rank = 0;
        break;
    case 8:
        d->mask_rank = 5;
        break;
    case 9:
        d->qk_matmul_output_mode = 4;
        break;
    case 10:
        d->qk_matmul_output_mode = -1;
        break;
    case 11:
        d->softmax_precision = 7;
        break;
    case 12:
        nonpad[1] = -1;
        break;
    case 13:
        nonpad[0] = 7;
        break;
    case 14:
        d->has_nonpad = 0;
        t->nonpad_kv_seqlen = NULL;
        d->has_past = 1;
        d->past_seqlen = 1;
        t->past_key = spare;
        break;
    case 15:
        t->past_key = t->past_value = spare;
        break;
    case 16:
        d->past_seqlen = 2;
        break;
    case 17:
        t->y = NULL;
        break;
    case 18:
        t->q = NULL;
        break;
    case 19:
        *tp = NULL;
        break;
    case 20:
        t->attn_mask = NULL;
        break;
    case 21:
        t->nonpad_kv_seqlen = NULL;
        break;
    case 22:
        d->input_rank = 5;
        break;
    case 23:
        d->kv_num_heads = 3;
        break;
    case 24:
        d->q_seqlen = -1;
        break;
    case 25:
        d->kv_seqlen = -2;
        break;
    case 26:
        d->has_past = 1;
        d->has_nonpad = 0;
        d->past_seqlen = -1;
        break;
    case 27:
        d->dtype = OPP_DTYPE_F64;
        break;
    case 28:
        d->dtype = (opp_dtype_t)99;
        break;
    case 29:
        d->dtype = OPP_DTYPE_UNDEFINED;
        break;
    case 30:
        d->scale = NAN;
        break;
    case 31:
        d->scale = -1.0f;
        break;
    case 32:
        d->softcap = -1.0f;
        break;
    case 33:
        d->softcap = INFINITY;
        break;
    case 34:
        d->is_causal = 2;
        break;
    case 35:
        d->batch = 0;
        break;
    case 36:
        d->head_size = 0;
        break;
    default:
        *dp = NULL;
        break;
    }
}

/* Fails unless got is bad->status and the last error message contains
 * bad->message; names the bad input in the report. */
static void expect_rejected(opp_status_t got, const bad_input_t *bad, const char *fn) {
    const char *msg = opp_last_error_message();
    if (got != bad->status || strstr(msg, bad->message) == NULL) {
        print_error("bad input '%s' via %s: got %s \"%s\", want %s with \"%s\"\n", bad->name, fn,
                    opp_status_name(got), msg, opp_status_name(bad->status), bad->message);
        fail();
    }
}

/* Every invalid descriptor or tensor set is rejected with its status and a
 * message naming the fault (by opp_ref_attention24_check too when the
 * descriptor alone is wrong), and Y is left untouched. */
static void test_a24_bad_inputs_rejected_with_status_and_message(void **state) {
    (void)state;
    a24_case_t c = {0};
    opp_ref_attention24_desc_init(&c.d);
    c.d.dtype = OPP_DTYPE_F32;
    c.d.batch = 2;
    c.d.q_num_heads = 4;
    c.d.kv_num_heads = 2;
    c.d.q_seqlen = 5;
    c.d.kv_seqlen = 6;
    c.d.head_size = 8;
    c.d.v_head_size = 8;
    c.d.has_nonpad = 1;
    c.d.mask_dtype = OPP_DTYPE_BOOL_;
    c.d.mask_rank = 2;
    c.d.mask_dims[0] = 5;
    c.d.mask_dims[1] = 6;
    c.want_qk = 1;
    assert_int_equal(a24_case_alloc(&c, 77u, 1.0), 0);
    assert_opp_ok(opp_ref_attention24_check(&c.d));
    float spare[256] = {0};
    const size_t ybytes = c.y_elems * sizeof(float);
    void *poisoned = malloc(ybytes);
    assert_non_null(poisoned);
    memcpy(poisoned, c.y, ybytes);
    for (size_t i = 0; i < sizeof(k_bad) / sizeof(k_bad[0]); ++i) {
        opp_ref_attention24_desc_t d = c.d, *dp = &d;
        opp_ref_attention24_tensors_t t, *tp = &t;
        a24_case_tensors(&c, &t);
        int64_t nonpad[2] = {6, 6};
        t.nonpad_kv_seqlen = nonpad;
        mutate(i, &d, &t, nonpad, spare, &dp, &tp);
        if (k_bad[i].desc_only) {
            opp_test_clear_last_error_();
            expect_rejected(opp_ref_attention24_check(dp), &k_bad[i], "opp_ref_attention24_check");
        } else {
            assert_opp_ok(opp_ref_attention24_check(dp));
        }
        opp_test_clear_last_error_();
        expect_rejected(opp_ref_attention24(dp, tp), &k_bad[i], "opp_ref_attention24");
        assert_memory_equal(c.y, poisoned, ybytes);
    }
    /* the untouched base case runs */
    assert_opp_ok(a24_case_run(&c));
    free(poisoned);
    a24_case_free(&c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a24_matches_naive_model_random_cases),
        cmocka_unit_test(test_a24_bad_inputs_rejected_with_status_and_message),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
