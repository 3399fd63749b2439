/*
 * l0_agreement_test.c - L0 of the agreement contract (DESIGN.md §4): on the
 * same logical batch the CPU packed reference and the CPU padded
 * Attention-24 reference agree BIT FOR BIT on the valid rows, for every
 * dtype, in 4D and 3D layouts, with large-finite and with NaN padding.
 *
 * Environment: OPP_L0_BATCHES (default 400) generated batches, seeded by
 * OPP_L0_SEED (default 20261202).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness/logical_batch.h"
#include "numerics/fp_convert.h"
#include "reference/opp_reference.h"
#include "tests/test_util.h"

static long env_long(const char *name, long fallback) {
    const char *s = getenv(name);
    return (s != NULL && *s != '\0') ? strtol(s, NULL, 10) : fallback;
}

static void *alloc_out(const opp_lb_t *lb) {
    const size_t n = (size_t)lb->total_q * (size_t)lb->num_heads * (size_t)lb->v_head_size;
    void *out = malloc((n + 1) * opp_dtype_size(lb->dtype));
    assert_non_null(out);
    opp_lb_poison_fill(out, n, lb->dtype, OPP_LB_POISON_NAN);
    return out;
}

/* Runs the packed reference of lb into a new buffer. */
static void *run_packed(const opp_lb_t *lb) {
    opp_attention_desc_t desc;
    opp_lb_packed_desc(lb, &desc);
    void *out = alloc_out(lb);
    assert_opp_ok(opp_ref_packed_attention(&desc, lb->cu_q, lb->cu_kv, lb->q, lb->k, lb->v, out));
    return out;
}

/* Runs the padded reference and returns its valid rows in packed order. */
static void *run_padded(const opp_lb_t *lb, int32_t rank, opp_lb_poison_t poison) {
    opp_lb_padded_t pad;
    assert_int_equal(opp_lb_to_padded(lb, rank, poison, &pad), 0);
    opp_ref_attention24_tensors_t t = opp_lb_padded_tensors(&pad);
    assert_opp_ok(opp_ref_attention24(&pad.desc, &t));
    void *out = alloc_out(lb);
    opp_lb_padded_valid_rows(lb, &pad, pad.y, out);
    opp_lb_padded_free(&pad);
    return out;
}

/* Packed and padded references agree bit for bit on hundreds of generated
 * batches (ragged lengths with 0 and 1, L_kv < L_q and > L_q, GQA 1/2/4/8,
 * MQA, head sizes 8..256, Dv != D, softcap, explicit scale, causal). */
static void test_l0_packed_equals_padded_generated_batches(void **state) {
    (void)state;
    const long batches = env_long("OPP_L0_BATCHES", 400);
    const uint64_t seed = (uint64_t)env_long("OPP_L0_SEED", 20261202);
    size_t elements = 0, per_dtype[3] = {0, 0, 0}, causal = 0, softcap = 0, gqa = 0;
    const clock_t t0 = clock();
    opp_lb_spec_t spec;
    opp_lb_spec_random(&spec);
    for (long i = 0; i < batches; ++i) {
        opp_lb_t lb;
        assert_int_equal(opp_lb_generate(&spec, seed + (uint64_t)i * 7919u, &lb), 0);
        char what[512];
        opp_lb_describe(&lb, what, sizeof(what));
        const size_t n = (size_t)lb.total_q * (size_t)lb.num_heads * (size_t)lb.v_head_size;
        void *packed = run_packed(&lb);
        for (int32_t rank = 3; rank <= 4; ++rank) {
            for (int p = 0; p < 2; ++p) {
                void *padded = run_padded(&lb, rank, (opp_lb_poison_t)p);
                const size_t bad = opp_test_bits_equal(padded, packed, n, lb.dtype, what);
                if (bad != 0) {
                    print_error("batch %ld (%s padding, rank %d) disagrees: %s\n", i,
                                p ? "NaN" : "finite", (int)rank, what);
                }
                assert_int_equal(bad, 0);
                free(padded);
            }
        }
        elements += n;
        per_dtype[lb.dtype == OPP_DTYPE_F32 ? 0 : lb.dtype == OPP_DTYPE_F16 ? 1 : 2]++;
        causal += lb.is_causal != 0;
        softcap += lb.softcap > 0.0f;
        gqa += lb.num_heads != lb.kv_num_heads;
        free(packed);
        opp_lb_free(&lb);
    }
    printf("L0: %ld batches (f32 %zu, f16 %zu, bf16 %zu; causal %zu, softcap %zu, GQA/MQA %zu), "
           "%zu output elements x 4 padded variants, all bit-identical (%.1f s CPU)\n",
           batches, per_dtype[0], per_dtype[1], per_dtype[2], causal, softcap, gqa, elements,
           (double)(clock() - t0) / CLOCKS_PER_SEC);
}

/* Row strides wider than the rows (gaps full of NaN) give the same bits as
 * the dense layout: the reference reads exactly the rows it should. */
static void test_l0_strided_packed_equals_dense(void **state) {
    (void)state;
    opp_lb_spec_t spec;
    opp_lb_spec_random(&spec);
    for (int i = 0; i < 20; ++i) {
        opp_lb_t lb;
        assert_int_equal(opp_lb_generate(&spec, 777u + (uint64_t)i, &lb), 0);
        void *dense = run_packed(&lb);
        opp_attention_desc_t desc;
        opp_lb_packed_desc(&lb, &desc);
        const size_t es = opp_dtype_size(lb.dtype);
        const int64_t qw = (int64_t)lb.num_heads * lb.head_size;
        const int64_t kw = (int64_t)lb.kv_num_heads * lb.head_size;
        const int64_t vw = (int64_t)lb.kv_num_heads * lb.v_head_size;
        const int64_t ow = (int64_t)lb.num_heads * lb.v_head_size;
        desc.q_row_stride = qw + 3;
        desc.k_row_stride = kw + 5;
        desc.v_row_stride = vw + 1;
        desc.out_row_stride = ow + 7;
        const int64_t tq = lb.total_q + 1, tkv = lb.total_kv + 1;
        char *q = malloc((size_t)(tq * desc.q_row_stride) * es);
        char *k = malloc((size_t)(tkv * desc.k_row_stride) * es);
        char *v = malloc((size_t)(tkv * desc.v_row_stride) * es);
        char *o = malloc((size_t)(tq * desc.out_row_stride) * es);
        assert_true(q && k && v && o);
        opp_lb_poison_fill(q, (size_t)(tq * desc.q_row_stride), lb.dtype, OPP_LB_POISON_NAN);
        opp_lb_poison_fill(k, (size_t)(tkv * desc.k_row_stride), lb.dtype, OPP_LB_POISON_NAN);
        opp_lb_poison_fill(v, (size_t)(tkv * desc.v_row_stride), lb.dtype, OPP_LB_POISON_NAN);
        for (int64_t r = 0; r < lb.total_q; ++r) {
            memcpy(q + (size_t)(r * desc.q_row_stride) * es, (char *)lb.q + (size_t)(r * qw) * es,
                   (size_t)qw * es);
        }
        for (int64_t r = 0; r < lb.total_kv; ++r) {
            memcpy(k + (size_t)(r * desc.k_row_stride) * es, (char *)lb.k + (size_t)(r * kw) * es,
                   (size_t)kw * es);
            memcpy(v + (size_t)(r * desc.v_row_stride) * es, (char *)lb.v + (size_t)(r * vw) * es,
                   (size_t)vw * es);
        }
        assert_opp_ok(opp_ref_packed_attention(&desc, lb.cu_q, lb.cu_kv, q, k, v, o));
        for (int64_t r = 0; r < lb.total_q; ++r) {
            assert_int_equal(opp_test_bits_equal(o + (size_t)(r * desc.out_row_stride) * es,
                                                 (char *)dense + (size_t)(r * ow) * es, (size_t)ow,
                                                 lb.dtype, "strided row"),
                             0);
        }
        free(q);
        free(k);
        free(v);
        free(o);
        free(dense);
        opp_lb_free(&lb);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_l0_packed_equals_padded_generated_batches),
        cmocka_unit_test(test_l0_strided_packed_equals_dense),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
