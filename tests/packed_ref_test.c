/*
 * packed_ref_test.c - semantic properties of the CPU packed reference
 * (opp_ref_packed_attention, DESIGN.md §2.1-2.2) that the L0 agreement test
 * cannot see because both references share reference/exact_row.c:
 * tail-aligned causal (pinned row by row against truncated non-causal runs),
 * negative causal offsets, empty sequences, repeat-interleave GQA, the
 * default scale, agreement with the independent long double model of
 * harness/naive_model.h on generated batches, and validation errors.
 *
 * Layout: q [total_q, Hq, D], k [total_kv, Hkv, D], v [total_kv, Hkv, Dv],
 * out [total_q, Hq, Dv]. Environment: OPP_PACKED_NAIVE_BATCHES (default 200).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/logical_batch.h"
#include "harness/naive_model.h"
#include "numerics/fp_convert.h"
#include "reference/opp_reference.h"
#include "tests/test_util.h"

static const opp_dtype_t k_dtypes[3] = {OPP_DTYPE_F32, OPP_DTYPE_F16, OPP_DTYPE_BF16};

static size_t out_elems(const opp_lb_t *lb) {
    return (size_t)lb->total_q * (size_t)lb->num_heads * (size_t)lb->v_head_size;
}

static void *alloc_poisoned(size_t n, opp_dtype_t dtype) {
    void *out = malloc((n + 1) * opp_dtype_size(dtype));
    assert_non_null(out);
    opp_lb_poison_fill(out, n, dtype, OPP_LB_POISON_NAN);
    return out;
}

/* The packed reference on the whole batch (output NaN-poisoned first). */
static void *run_packed(const opp_lb_t *lb) {
    opp_attention_desc_t desc;
    opp_lb_packed_desc(lb, &desc);
    void *out = alloc_poisoned(out_elems(lb), lb->dtype);
    assert_opp_ok(opp_ref_packed_attention(&desc, lb->cu_q, lb->cu_kv, lb->q, lb->k, lb->v, out));
    return out;
}

/* The packed reference on ONE sequence made of query rows q_row0 ..
 * q_row0+lq-1 and key rows kv_row0 .. kv_row0+lkv-1 of lb (pointers into
 * lb's arrays), with is_causal overridden. */
static void *run_one(const opp_lb_t *lb, int64_t q_row0, int32_t lq, int64_t kv_row0, int32_t lkv,
                     int32_t is_causal) {
    const size_t es = opp_dtype_size(lb->dtype);
    opp_attention_desc_t desc;
    opp_lb_packed_desc(lb, &desc);
    desc.batch = 1;
    desc.total_q = lq;
    desc.total_kv = lkv;
    desc.max_seqlen_q = lq;
    desc.max_seqlen_kv = lkv;
    desc.is_causal = is_causal;
    const int32_t cu_q[2] = {0, lq}, cu_kv[2] = {0, lkv};
    const char *q = (const char *)lb->q + (size_t)(q_row0 * lb->num_heads * lb->head_size) * es;
    const char *k = (const char *)lb->k + (size_t)(kv_row0 * lb->kv_num_heads * lb->head_size) * es;
    const char *v =
        (const char *)lb->v + (size_t)(kv_row0 * lb->kv_num_heads * lb->v_head_size) * es;
    const size_t n = (size_t)lq * (size_t)lb->num_heads * (size_t)lb->v_head_size;
    void *out = alloc_poisoned(n, lb->dtype);
    assert_opp_ok(opp_ref_packed_attention(&desc, cu_q, cu_kv, q, k, v, out));
    return out;
}

/* The naive model of the whole batch in packed order: sequence b is an
 * Attention-24 call with B = 1, 3D Q [1, L_q, Hq*D] (= its packed rows) and
 * nonpad_kv_seqlen = [L_kv], whose causal offset nonpad - S_q = L_kv - L_q
 * is the packed tail alignment. */
static void *naive_packed(const opp_lb_t *lb) {
    const size_t es = opp_dtype_size(lb->dtype);
    char *out = alloc_poisoned(out_elems(lb), lb->dtype);
    for (int32_t b = 0; b < lb->batch; ++b) {
        if (lb->lq[b] == 0) {
            continue;
        }
        const int64_t nonpad = lb->lkv[b];
        opp_naive_case_t c;
        memset(&c, 0, sizeof(c));
        c.dtype = lb->dtype;
        c.input_rank = 3;
        c.batch = 1;
        c.q_num_heads = lb->num_heads;
        c.kv_num_heads = lb->kv_num_heads;
        c.q_seqlen = lb->lq[b];
        c.kv_seqlen = lb->lkv[b];
        c.head_size = lb->head_size;
        c.v_head_size = lb->v_head_size;
        c.q =
            (const char *)lb->q + (size_t)lb->cu_q[b] * (size_t)lb->num_heads * lb->head_size * es;
        c.k = (const char *)lb->k +
              (size_t)lb->cu_kv[b] * (size_t)lb->kv_num_heads * lb->head_size * es;
        c.v = (const char *)lb->v +
              (size_t)lb->cu_kv[b] * (size_t)lb->kv_num_heads * lb->v_head_size * es;
        c.nonpad_kv_seqlen = &nonpad;
        c.has_scale = lb->scale != 0.0f;
        c.scale = lb->scale;
        c.is_causal = lb->is_causal;
        c.softcap = lb->softcap;
        opp_naive_result_t r;
        assert_int_equal(opp_naive_attention24(&c, &r), 0);
        opp_naive_round(r.y, r.y_elems, lb->dtype,
                        out + (size_t)lb->cu_q[b] * (size_t)lb->num_heads * lb->v_head_size * es);
        opp_naive_result_free(&r);
    }
    return out;
}

static void make_batch(opp_lb_t *lb, opp_dtype_t dtype, int32_t batch, const int32_t *lq,
                       const int32_t *lkv, int32_t hq, int32_t hkv, int32_t d, int32_t dv,
                       int32_t causal, uint64_t seed) {
    assert_int_equal(
        opp_lb_from_lengths(lb, dtype, batch, lq, lkv, hq, hkv, d, dv, 0.0f, causal, 0.0f, seed),
        0);
}

/* Causal row i of a sequence sees exactly keys 0 .. i + L_kv - L_q (tail
 * alignment): it equals, bit for bit, the non-causal reference over only
 * those keys (L_q=3/L_kv=5, L_q=L_kv=4, and 70/140 across key chunks). */
static void test_packed_causal_row_equals_noncausal_over_visible_prefix(void **state) {
    (void)state;
    static const int32_t shapes[3][2] = {{3, 5}, {4, 4}, {70, 140}};
    for (int di = 0; di < 3; ++di) {
        for (int si = 0; si < 3; ++si) {
            const int32_t lq = shapes[si][0], lkv = shapes[si][1];
            opp_lb_t lb;
            make_batch(&lb, k_dtypes[di], 1, &lq, &lkv, 4, 2, 16, 8, 1, 100u + (uint64_t)si);
            char *full = run_packed(&lb);
            const size_t row = (size_t)lb.num_heads * lb.v_head_size, es = opp_dtype_size(lb.dtype);
            for (int32_t i = 0; i < lq; ++i) {
                const int32_t visible = i + lkv - lq + 1;
                void *alone = run_one(&lb, i, 1, 0, visible, 0);
                char what[96];
                snprintf(what, sizeof(what), "%s Lq=%d Lkv=%d row %d (%d keys)",
                         opp_dtype_name(lb.dtype), (int)lq, (int)lkv, (int)i, (int)visible);
                assert_int_equal(
                    opp_test_bits_equal(full + i * row * es, alone, row, lb.dtype, what), 0);
                free(alone);
            }
            free(full);
            opp_lb_free(&lb);
        }
    }
}

static int all_bytes_zero(const void *p, size_t bytes) {
    for (size_t i = 0; i < bytes; ++i) {
        if (((const unsigned char *)p)[i] != 0) {
            return 0;
        }
    }
    return 1;
}

/* L_q=5 > L_kv=2, causal: offset -3, so rows 0..2 see no key and are +0.0
 * in every element; rows 3 and 4 see 1 and 2 keys (not all zero, equal to
 * the non-causal reference over those keys). */
static void test_packed_causal_negative_offset_rows_without_keys_are_zero(void **state) {
    (void)state;
    const int32_t lq = 5, lkv = 2;
    for (int di = 0; di < 3; ++di) {
        opp_lb_t lb;
        make_batch(&lb, k_dtypes[di], 1, &lq, &lkv, 2, 1, 8, 8, 1, 7u);
        char *out = run_packed(&lb);
        const size_t row = (size_t)lb.num_heads * lb.v_head_size, es = opp_dtype_size(lb.dtype);
        for (int32_t i = 0; i < 3; ++i) {
            assert_true(all_bytes_zero(out + i * row * es, row * es));
        }
        for (int32_t i = 3; i < 5; ++i) {
            assert_false(all_bytes_zero(out + i * row * es, row * es));
            void *alone = run_one(&lb, i, 1, 0, i - 2, 0);
            assert_int_equal(opp_test_bits_equal(out + i * row * es, alone, row, lb.dtype, "row"),
                             0);
            free(alone);
        }
        free(out);
        opp_lb_free(&lb);
    }
}

/* A sequence with L_kv = 0 and L_q > 0 outputs +0.0 rows, causal or not. */
static void test_packed_empty_kv_sequence_gives_zero_rows(void **state) {
    (void)state;
    const int32_t lq[3] = {2, 3, 1}, lkv[3] = {4, 0, 3};
    for (int di = 0; di < 3; ++di) {
        for (int32_t causal = 0; causal <= 1; ++causal) {
            opp_lb_t lb;
            make_batch(&lb, k_dtypes[di], 3, lq, lkv, 2, 2, 8, 4, causal, 11u);
            char *out = run_packed(&lb);
            const size_t row = (size_t)lb.num_heads * lb.v_head_size, es = opp_dtype_size(lb.dtype);
            assert_true(all_bytes_zero(out + (size_t)lb.cu_q[1] * row * es, 3 * row * es));
            assert_false(all_bytes_zero(out, 2 * row * es));
            assert_false(all_bytes_zero(out + (size_t)lb.cu_q[2] * row * es, row * es));
            free(out);
            opp_lb_free(&lb);
        }
    }
}

/* L_q = 0 sequences (with or without keys) between others change nothing:
 * every non-empty sequence equals the reference run on it alone. */
static void test_packed_empty_query_sequences_do_not_disturb_neighbours(void **state) {
    (void)state;
    const int32_t lq[6] = {3, 0, 4, 0, 2, 0}, lkv[6] = {5, 6, 0, 0, 7, 3};
    for (int di = 0; di < 3; ++di) {
        for (int32_t causal = 0; causal <= 1; ++causal) {
            opp_lb_t lb;
            make_batch(&lb, k_dtypes[di], 6, lq, lkv, 4, 2, 16, 16, causal, 12u);
            char *out = run_packed(&lb);
            const size_t row = (size_t)lb.num_heads * lb.v_head_size, es = opp_dtype_size(lb.dtype);
            for (int32_t b = 0; b < lb.batch; ++b) {
                if (lq[b] == 0) {
                    continue;
                }
                void *alone = run_one(&lb, lb.cu_q[b], lq[b], lb.cu_kv[b], lkv[b], causal);
                assert_int_equal(opp_test_bits_equal(out + (size_t)lb.cu_q[b] * row * es, alone,
                                                     (size_t)lq[b] * row, lb.dtype, "sequence"),
                                 0);
                free(alone);
            }
            free(out);
            opp_lb_free(&lb);
        }
    }
}

/* The totals are a capacity and max_seqlen a bound (as in the library):
 * a batch ending below total_q / total_kv, run with max_seqlen INT32_MAX,
 * gives the full batch's rows for its sequences and zero rows past its end. */
static void test_packed_rows_past_the_batch_are_zero(void **state) {
    (void)state;
    const int32_t lq[4] = {5, 15, 5, 5}, lkv[4] = {5, 15, 5, 5};
    for (int di = 0; di < 3; ++di) {
        opp_lb_t lb;
        make_batch(&lb, k_dtypes[di], 4, lq, lkv, 4, 2, 8, 12, 1, 13u);
        char *full = run_packed(&lb);
        opp_attention_desc_t desc;
        opp_lb_packed_desc(&lb, &desc);
        desc.max_seqlen_q = desc.max_seqlen_kv = INT32_MAX;
        const int32_t cu_q[5] = {0, 5, 20, 25, 25}, cu_kv[5] = {0, 5, 20, 25, 28};
        const size_t row = (size_t)lb.num_heads * lb.v_head_size, es = opp_dtype_size(lb.dtype);
        char *out = alloc_poisoned(out_elems(&lb), lb.dtype);
        assert_opp_ok(opp_ref_packed_attention(&desc, cu_q, cu_kv, lb.q, lb.k, lb.v, out));
        assert_int_equal(opp_test_bits_equal(out, full, 25 * row, lb.dtype, "rows of the batch"),
                         0);
        assert_true(all_bytes_zero(out + 25 * row * es, 5 * row * es));
        free(out);
        free(full);
        opp_lb_free(&lb);
    }
}

/* k or v [total_kv, Hkv, W] widened to Hq heads: head h takes kv head
 * h / (Hq/Hkv) (interleave) or h % Hkv (tile). */
static void *widen_heads(const void *src, int64_t rows, int32_t hkv, int32_t hq, int32_t w,
                         size_t es, int tiled) {
    char *dst = malloc((size_t)(rows * hq * w + 1) * es);
    assert_non_null(dst);
    for (int64_t r = 0; r < rows; ++r) {
        for (int32_t h = 0; h < hq; ++h) {
            const int32_t hk = tiled ? h % hkv : h / (hq / hkv);
            memcpy(dst + (size_t)((r * hq + h) * w) * es,
                   (const char *)src + (size_t)((r * hkv + hk) * w) * es, (size_t)w * es);
        }
    }
    return dst;
}

/* GQA/MQA is repeat-interleave: Hq=8 with Hkv=1, 2, 4 equals the MHA run
 * with K/V heads repeated [kv0,kv0,...,kv1,...]; the tiled layout
 * [kv0,kv1,kv0,...] gives different bits (so a wrong mapping is caught). */
static void test_packed_gqa_equals_mha_with_interleaved_kv_heads(void **state) {
    (void)state;
    static const int32_t hkvs[3] = {1, 2, 4};
    const int32_t lq[3] = {5, 1, 7}, lkv[3] = {6, 9, 3};
    for (int di = 0; di < 3; ++di) {
        for (int hi = 0; hi < 3; ++hi) {
            opp_lb_t lb;
            make_batch(&lb, k_dtypes[di], 3, lq, lkv, 8, hkvs[hi], 16, 8, hi == 1, 21u);
            void *gqa = run_packed(&lb);
            const size_t es = opp_dtype_size(lb.dtype), n = out_elems(&lb);
            for (int tiled = 0; tiled <= 1; ++tiled) {
                opp_attention_desc_t desc;
                opp_lb_packed_desc(&lb, &desc);
                desc.kv_num_heads = 8;
                void *k =
                    widen_heads(lb.k, lb.total_kv, lb.kv_num_heads, 8, lb.head_size, es, tiled);
                void *v =
                    widen_heads(lb.v, lb.total_kv, lb.kv_num_heads, 8, lb.v_head_size, es, tiled);
                void *mha = alloc_poisoned(n, lb.dtype);
                assert_opp_ok(opp_ref_packed_attention(&desc, lb.cu_q, lb.cu_kv, lb.q, k, v, mha));
                if (!tiled) {
                    assert_int_equal(opp_test_bits_equal(gqa, mha, n, lb.dtype, "gqa vs mha"), 0);
                } else if (hkvs[hi] > 1) {
                    size_t differ = 0;
                    for (size_t i = 0; i < n * es; i += es) {
                        differ += memcmp((char *)gqa + i, (char *)mha + i, es) != 0;
                    }
                    assert_true(differ > n / 4);
                }
                free(k);
                free(v);
                free(mha);
            }
            free(gqa);
            opp_lb_free(&lb);
        }
    }
}

/* The default scale (desc.scale = 0) is 1/sqrt(D): within 1 ulp of the
 * naive model computed with 1/sqrtl(D) in long double, for several D. */
static void test_packed_default_scale_matches_naive_inverse_sqrt_d(void **state) {
    (void)state;
    static const int32_t ds[5] = {8, 16, 80, 96, 128};
    const int32_t lq[2] = {6, 9}, lkv[2] = {11, 4};
    for (int di = 0; di < 3; ++di) {
        for (int i = 0; i < 5; ++i) {
            opp_lb_t lb;
            make_batch(&lb, k_dtypes[di], 2, lq, lkv, 4, 2, ds[i], 8, i & 1, 31u + (uint64_t)i);
            void *got = run_packed(&lb);
            void *want = naive_packed(&lb);
            assert_int_equal(
                opp_test_ulp_compare(got, want, out_elems(&lb), lb.dtype, 1, "default scale", NULL),
                0);
            free(got);
            free(want);
            opp_lb_free(&lb);
        }
    }
}

/* An explicit scale that is exactly 1/sqrt(D) in float (0.25 for D=16,
 * 0.125 for D=64, 0.5 for D=4) gives the default's bits; 0.5 for D=16 does
 * not (the scale is really used). */
static void test_packed_explicit_exact_scale_equals_default(void **state) {
    (void)state;
    static const int32_t ds[3] = {16, 64, 4};
    static const float scales[3] = {0.25f, 0.125f, 0.5f};
    const int32_t lq[2] = {4, 7}, lkv[2] = {9, 7};
    for (int di = 0; di < 3; ++di) {
        for (int i = 0; i < 3; ++i) {
            opp_lb_t lb;
            make_batch(&lb, k_dtypes[di], 2, lq, lkv, 2, 1, ds[i], 8, 1, 41u + (uint64_t)i);
            void *dflt = run_packed(&lb);
            lb.scale = scales[i];
            void *expl_scale = run_packed(&lb);
            assert_int_equal(
                opp_test_bits_equal(expl_scale, dflt, out_elems(&lb), lb.dtype, "scale"), 0);
            if (ds[i] == 16) {
                lb.scale = 0.5f;
                void *other = run_packed(&lb);
                assert_int_not_equal(memcmp(other, dflt, out_elems(&lb) * opp_dtype_size(lb.dtype)),
                                     0);
                free(other);
            }
            free(dflt);
            free(expl_scale);
            opp_lb_free(&lb);
        }
    }
}

static long env_long(const char *name, long fallback) {
    const char *s = getenv(name);
    return (s != NULL && *s != '\0') ? strtol(s, NULL, 10) : fallback;
}

/* On generated batches (ragged, empty, long, GQA/MQA, softcap, scale,
 * causal, Dv != D) the packed reference agrees with the naive long double
 * model: f16/bf16 bit-identical in >= 99.9% of elements and never > 1 ulp
 * apart, f32 within 2 ulp. */
static void test_packed_matches_naive_model_generated_batches(void **state) {
    (void)state;
    const long batches = env_long("OPP_PACKED_NAIVE_BATCHES", 200);
    opp_test_ulp_stats_t stats[3];
    memset(stats, 0, sizeof(stats));
    size_t counts[3] = {0, 0, 0};
    opp_lb_spec_t spec;
    opp_lb_spec_random(&spec);
    for (long i = 0; i < batches; ++i) {
        opp_lb_t lb;
        assert_int_equal(opp_lb_generate(&spec, 90001u + (uint64_t)i * 104729u, &lb), 0);
        const int di = lb.dtype == OPP_DTYPE_F32 ? 0 : lb.dtype == OPP_DTYPE_F16 ? 1 : 2;
        char what[512];
        opp_lb_describe(&lb, what, sizeof(what));
        void *got = run_packed(&lb);
        void *want = naive_packed(&lb);
        const size_t bad = opp_test_ulp_compare(got, want, out_elems(&lb), lb.dtype,
                                                di == 0 ? 2 : 1, what, &stats[di]);
        assert_int_equal(bad, 0);
        counts[di]++;
        free(got);
        free(want);
        opp_lb_free(&lb);
    }
    for (int di = 0; di < 3; ++di) {
        const double frac =
            stats[di].compared ? (double)stats[di].identical / (double)stats[di].compared : 1.0;
        printf("packed vs naive, %-4s: %zu batches, %zu elements, identical %.6f (%zu differ), max "
               "ulp %llu\n",
               opp_dtype_name(k_dtypes[di]), counts[di], stats[di].compared, frac,
               stats[di].compared - stats[di].identical, (unsigned long long)stats[di].max_ulp);
        assert_true(counts[di] > 0);
        if (di > 0) {
            assert_true(frac >= 0.999);
        }
    }
}

/* NULL q, k, v, out are rejected with BAD_PARAM_NULL_POINTER naming the
 * argument, and nothing is written to out. */
static void test_packed_null_tensors_rejected_by_name(void **state) {
    (void)state;
    const int32_t lq = 2, lkv = 3;
    opp_lb_t lb;
    make_batch(&lb, OPP_DTYPE_F16, 1, &lq, &lkv, 2, 2, 8, 8, 0, 5u);
    opp_attention_desc_t desc;
    opp_lb_packed_desc(&lb, &desc);
    const size_t n = out_elems(&lb);
    void *out = alloc_poisoned(n, lb.dtype);
    void *ref = alloc_poisoned(n, lb.dtype);
    assert_opp_status(opp_ref_packed_attention(NULL, lb.cu_q, lb.cu_kv, lb.q, lb.k, lb.v, out),
                      OPP_STATUS_BAD_PARAM_NULL_POINTER, "desc is NULL");
    assert_opp_status(opp_ref_packed_attention(&desc, lb.cu_q, lb.cu_kv, NULL, lb.k, lb.v, out),
                      OPP_STATUS_BAD_PARAM_NULL_POINTER, "q is NULL");
    assert_opp_status(opp_ref_packed_attention(&desc, lb.cu_q, lb.cu_kv, lb.q, NULL, lb.v, out),
                      OPP_STATUS_BAD_PARAM_NULL_POINTER, "k is NULL");
    assert_opp_status(opp_ref_packed_attention(&desc, lb.cu_q, lb.cu_kv, lb.q, lb.k, NULL, out),
                      OPP_STATUS_BAD_PARAM_NULL_POINTER, "v is NULL");
    assert_opp_status(opp_ref_packed_attention(&desc, lb.cu_q, lb.cu_kv, lb.q, lb.k, lb.v, NULL),
                      OPP_STATUS_BAD_PARAM_NULL_POINTER, "out is NULL");
    assert_opp_status(opp_ref_packed_attention(&desc, NULL, lb.cu_kv, lb.q, lb.k, lb.v, out),
                      OPP_STATUS_BAD_PARAM_NULL_POINTER, "cu_seqlens_q is NULL");
    assert_memory_equal(out, ref, n * opp_dtype_size(lb.dtype));
    free(out);
    free(ref);
    opp_lb_free(&lb);
}

/* A decreasing cu_seqlens (q or kv) is BAD_PARAM_SEQLENS_DECREASING with
 * the index and both values in the message; nothing is written. */
static void test_packed_decreasing_cu_seqlens_rejected(void **state) {
    (void)state;
    const int32_t lq[3] = {2, 2, 2}, lkv[3] = {5, 1, 2};
    opp_lb_t lb;
    make_batch(&lb, OPP_DTYPE_F32, 3, lq, lkv, 2, 2, 8, 8, 0, 6u);
    opp_attention_desc_t desc;
    opp_lb_packed_desc(&lb, &desc);
    desc.max_seqlen_kv = 8;
    desc.max_seqlen_q = 6;
    const size_t n = out_elems(&lb);
    void *out = alloc_poisoned(n, lb.dtype);
    void *ref = alloc_poisoned(n, lb.dtype);
    const int32_t bad_kv[4] = {0, 5, 3, 8}, bad_q[4] = {0, 4, 2, 6};
    assert_opp_status(opp_ref_packed_attention(&desc, lb.cu_q, bad_kv, lb.q, lb.k, lb.v, out),
                      OPP_STATUS_BAD_PARAM_SEQLENS_DECREASING,
                      "cu_seqlens_kv[2] = 3 < cu_seqlens_kv[1] = 5");
    assert_opp_status(opp_ref_packed_attention(&desc, bad_q, lb.cu_kv, lb.q, lb.k, lb.v, out),
                      OPP_STATUS_BAD_PARAM_SEQLENS_DECREASING,
                      "cu_seqlens_q[2] = 2 < cu_seqlens_q[1] = 4");
    assert_memory_equal(out, ref, n * opp_dtype_size(lb.dtype));
    free(out);
    free(ref);
    opp_lb_free(&lb);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_packed_causal_row_equals_noncausal_over_visible_prefix),
        cmocka_unit_test(test_packed_causal_negative_offset_rows_without_keys_are_zero),
        cmocka_unit_test(test_packed_empty_kv_sequence_gives_zero_rows),
        cmocka_unit_test(test_packed_empty_query_sequences_do_not_disturb_neighbours),
        cmocka_unit_test(test_packed_rows_past_the_batch_are_zero),
        cmocka_unit_test(test_packed_gqa_equals_mha_with_interleaved_kv_heads),
        cmocka_unit_test(test_packed_default_scale_matches_naive_inverse_sqrt_d),
        cmocka_unit_test(test_packed_explicit_exact_scale_equals_default),
        cmocka_unit_test(test_packed_matches_naive_model_generated_batches),
        cmocka_unit_test(test_packed_null_tensors_rejected_by_name),
        cmocka_unit_test(test_packed_decreasing_cu_seqlens_rejected),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
