/*
 * attention24_ref_test.c - semantic properties of the CPU Attention-24
 * reference (opp_ref_attention24, DESIGN.md §2.3) on hand-built cases:
 * past_key/past_value as a packed concatenation, top-left causal without
 * a cache, the three ways to write a mask (bool vs float, broadcast ranks,
 * short masks), finite float masks, fully masked rows, the four
 * qk_matmul_output modes and softmax_precision. Expectations come from
 * simpler runs of the reference itself (bit for bit) or from the naive long
 * double model (harness/naive_model.h, within 1 ulp). Random cross-checks and
 * bad inputs are in attention24_ref_naive_test.c.
 *
 * Shapes: Q [B, Hq, S_q, D] or 3D [B, S_q, Hq*D]; K/V [B, Hkv, S_kv, D|Dv];
 * past_* [B, Hkv, P, D|Dv]; Y like Q with Dv; qk [B, Hq, S_q, T], T = P + S_kv.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/logical_batch.h"
#include "harness/naive_model.h"
#include "numerics/fp_convert.h"
#include "reference/opp_reference.h"
#include "tests/a24_case.h"
#include "tests/test_util.h"

static const opp_dtype_t k_dtypes[3] = {OPP_DTYPE_F32, OPP_DTYPE_F16, OPP_DTYPE_BF16};

/* Copies rows between packed [total, H, W] (rows cu[b] + off + t) and a
 * padded tensor of S rows per (b, h): rank 4 [B, H, S, W], rank 3 [B, S, H*W]. */
static void copy_rows(void *padded, const void *packed, int to_packed, int32_t rank, int64_t B,
                      int64_t H, int64_t S, int64_t W, const int32_t *cu, int64_t off, size_t es) {
    for (int64_t b = 0; b < B; ++b) {
        for (int64_t t = 0; t < S; ++t) {
            for (int64_t h = 0; h < H; ++h) {
                const int64_t prow = (cu[b] + off + t) * H + h;
                const int64_t drow = rank == 4 ? (b * H + h) * S + t : (b * S + t) * H + h;
                char *dst = to_packed ? (char *)packed + (size_t)(prow * W) * es
                                      : (char *)padded + (size_t)(drow * W) * es;
                const char *src = to_packed ? (const char *)padded + (size_t)(drow * W) * es
                                            : (const char *)packed + (size_t)(prow * W) * es;
                memcpy(dst, src, (size_t)W * es);
            }
        }
    }
}

static void set_shape(opp_ref_attention24_desc_t *d, opp_dtype_t dtype, int32_t rank, int32_t B,
                      int32_t hq, int32_t hkv, int32_t sq, int32_t skv, int32_t dh, int32_t dv) {
    opp_ref_attention24_desc_init(d);
    d->dtype = dtype;
    d->input_rank = rank;
    d->batch = B;
    d->q_num_heads = hq;
    d->kv_num_heads = hkv;
    d->q_seqlen = sq;
    d->kv_seqlen = skv;
    d->head_size = dh;
    d->v_head_size = dv;
}

/* With past (P rows) and S_kv new rows (4D or 3D new K/V; past 4D), Y equals
 * the packed reference over L_kv = P + S_kv concatenated keys and L_q = S_q
 * (causal with S_q = S_kv, where offset P equals the packed L_kv - L_q;
 * non-causal with S_q != S_kv), bit for bit; present_* are the concatenation. */
static void test_a24_past_equals_packed_concatenation(void **state) {
    (void)state;
    static const int32_t shapes[4][4] = {/* causal, P, S_q, S_kv */
                                         {1, 4, 3, 3},
                                         {1, 6, 1, 1},
                                         {0, 3, 2, 5},
                                         {0, 5, 4, 1}};
    for (int di = 0; di < 3; ++di) {
        for (int si = 0; si < 4; ++si) {
            for (int32_t rank = 3; rank <= 4; ++rank) {
                const int32_t causal = shapes[si][0], P = shapes[si][1], sq = shapes[si][2];
                const int32_t skv = shapes[si][3];
                const int32_t lq[2] = {sq, sq}, lkv[2] = {P + skv, P + skv};
                const float softcap = si == 2 ? 2.5f : 0.0f, scale = si == 3 ? 0.3f : 0.0f;
                opp_lb_t lb;
                assert_int_equal(opp_lb_from_lengths(&lb, k_dtypes[di], 2, lq, lkv, 4, 2, 8, 12,
                                                     scale, causal, softcap, 500u + (uint64_t)si),
                                 0);
                opp_attention_desc_t pd;
                opp_lb_packed_desc(&lb, &pd);
                const size_t es = opp_dtype_size(lb.dtype);
                const size_t n = (size_t)lb.total_q * 4 * 12;
                char *packed = malloc(n * es + es), *got = malloc(n * es + es);
                assert_true(packed && got);
                assert_opp_ok(
                    opp_ref_packed_attention(&pd, lb.cu_q, lb.cu_kv, lb.q, lb.k, lb.v, packed));
                a24_case_t c = {0};
                set_shape(&c.d, lb.dtype, rank, 2, 4, 2, sq, skv, 8, 12);
                c.d.has_past = 1;
                c.d.past_seqlen = P;
                c.d.is_causal = causal;
                c.d.softcap = softcap;
                c.d.scale = scale;
                c.want_present = 1;
                assert_int_equal(a24_case_alloc(&c, 1u, 1.0), 0);
                copy_rows(c.q, lb.q, 0, rank, 2, 4, sq, 8, lb.cu_q, 0, es);
                copy_rows(c.past_key, lb.k, 0, 4, 2, 2, P, 8, lb.cu_kv, 0, es);
                copy_rows(c.past_value, lb.v, 0, 4, 2, 2, P, 12, lb.cu_kv, 0, es);
                copy_rows(c.k, lb.k, 0, rank, 2, 2, skv, 8, lb.cu_kv, P, es);
                copy_rows(c.v, lb.v, 0, rank, 2, 2, skv, 12, lb.cu_kv, P, es);
                assert_opp_ok(a24_case_run(&c));
                copy_rows(c.y, got, 1, rank, 2, 4, sq, 12, lb.cu_q, 0, es);
                char what[128];
                snprintf(what, sizeof(what), "%s rank %d causal %d P %d S_q %d S_kv %d",
                         opp_dtype_name(lb.dtype), (int)rank, (int)causal, (int)P, (int)sq,
                         (int)skv);
                assert_int_equal(opp_test_bits_equal(got, packed, n, lb.dtype, what), 0);
                /* present_* [B, Hkv, T, W] = every packed key row of the sequence */
                char *pk = malloc(c.prk_elems * es + es), *pv = malloc(c.prv_elems * es + es);
                assert_true(pk && pv);
                copy_rows(pk, lb.k, 0, 4, 2, 2, P + skv, 8, lb.cu_kv, 0, es);
                copy_rows(pv, lb.v, 0, 4, 2, 2, P + skv, 12, lb.cu_kv, 0, es);
                assert_int_equal(
                    opp_test_bits_equal(c.present_key, pk, c.prk_elems, lb.dtype, what), 0);
                assert_int_equal(
                    opp_test_bits_equal(c.present_value, pv, c.prv_elems, lb.dtype, what), 0);
                free(pk);
                free(pv);
                free(packed);
                free(got);
                a24_case_free(&c);
                opp_lb_free(&lb);
            }
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

/* Without past and nonpad, causal is top-left (offset 0): row t equals the
 * non-causal reference over keys 0 .. min(t, S_kv - 1) only, bit for bit,
 * for S_q > S_kv, S_q < S_kv and S_q = S_kv; with S_kv = 0 rows are +0.0.
 * The same data with nonpad = S_kv (tail-aligned) gives other bits. */
static void test_a24_top_left_causal_row_equals_noncausal_prefix(void **state) {
    (void)state;
    static const int32_t shapes[4][2] = {{6, 3}, {3, 6}, {4, 4}, {3, 0}};
    for (int di = 0; di < 3; ++di) {
        for (int si = 0; si < 4; ++si) {
            const int32_t sq = shapes[si][0], skv = shapes[si][1];
            a24_case_t c = {0};
            set_shape(&c.d, k_dtypes[di], 3, 1, 2, 1, sq, skv, 8, 8);
            c.d.is_causal = 1;
            assert_int_equal(a24_case_alloc(&c, 600u + (uint64_t)si, 1.5), 0);
            assert_opp_ok(a24_case_run(&c));
            const size_t es = opp_dtype_size(c.d.dtype), row = 2 * 8;
            if (skv == 0) {
                assert_true(all_bytes_zero(c.y, c.y_elems * es));
            }
            for (int32_t t = 0; t < sq && skv > 0; ++t) {
                opp_ref_attention24_desc_t d = c.d;
                d.is_causal = 0;
                d.q_seqlen = 1;
                d.kv_seqlen = t + 1 < skv ? t + 1 : skv;
                void *y = malloc(row * es);
                opp_ref_attention24_tensors_t tt = {0};
                tt.q = (const char *)c.q + (size_t)t * 2 * 8 * es; /* 3D, B = 1: row t */
                tt.k = c.k;                                        /* first d.kv_seqlen rows */
                tt.v = c.v;
                tt.y = y;
                assert_opp_ok(opp_ref_attention24(&d, &tt));
                assert_int_equal(
                    opp_test_bits_equal((char *)c.y + (size_t)t * row * es, y, row, d.dtype, "row"),
                    0);
                free(y);
            }
            if (sq != skv && skv > 0) {
                void *top_left = malloc(c.y_elems * es);
                memcpy(top_left, c.y, c.y_elems * es);
                c.d.has_nonpad = 1;
                assert_opp_ok(a24_case_run(&c));
                assert_int_not_equal(memcmp(top_left, c.y, c.y_elems * es), 0);
                free(top_left);
            }
            a24_case_free(&c);
        }
    }
}

/* Runs the case (outputs re-poisoned) and returns copies of Y and qk. */
static void run_copy(a24_case_t *c, void **y, void **qk) {
    const size_t es = opp_dtype_size(c->d.dtype);
    a24_case_poison_outputs(c);
    assert_opp_ok(a24_case_run(c));
    *y = malloc(c->y_elems * es + es);
    *qk = malloc(c->qk_elems * es + es);
    assert_true(*y && *qk);
    memcpy(*y, c->y, c->y_elems * es);
    memcpy(*qk, c->qk, c->qk_elems * es);
}

/* Reruns c with another mask (dtype, rank, dims, data) and checks Y and qk
 * against want_y / want_qk bit for bit; c's own mask is restored. */
static void assert_same_with_mask(a24_case_t *c, opp_dtype_t mdtype, int32_t mrank,
                                  const int64_t *mdims, void *mask, const void *want_y,
                                  const void *want_qk, const char *what) {
    a24_case_t alt = *c;
    alt.d.mask_dtype = mdtype;
    alt.d.mask_rank = mrank;
    memcpy(alt.d.mask_dims, mdims, sizeof(alt.d.mask_dims));
    alt.mask = mask;
    void *y, *qk;
    run_copy(&alt, &y, &qk);
    assert_int_equal(opp_test_bits_equal(y, want_y, c->y_elems, c->d.dtype, what), 0);
    assert_int_equal(opp_test_bits_equal(qk, want_qk, c->qk_elems, c->d.dtype, what), 0);
    free(y);
    free(qk);
}

/* A bool mask equals the float mask of 0 / -inf (Y, mode 2 and mode 3
 * bit for bit), causal or not, with or without past. */
static void test_a24_bool_mask_equals_float_zero_neginf_mask(void **state) {
    (void)state;
    for (int di = 0; di < 3; ++di) {
        for (int v = 0; v < 4; ++v) {
            for (int32_t mode = 2; mode <= 3; ++mode) {
                a24_case_t c = {0};
                set_shape(&c.d, k_dtypes[di], 4, 2, 4, 2, 5, 6, 8, 8);
                c.d.is_causal = v & 1;
                c.d.has_past = v >> 1;
                c.d.past_seqlen = 3 * (v >> 1);
                c.d.mask_dtype = OPP_DTYPE_BOOL_;
                c.d.mask_rank = 4;
                const int64_t dims[4] = {2, 4, 5, a24_total(&c.d)};
                memcpy(c.d.mask_dims, dims, sizeof(dims));
                c.d.qk_matmul_output_mode = mode;
                c.want_qk = 1;
                assert_int_equal(a24_case_alloc(&c, 700u + (uint64_t)v, 1.0), 0);
                void *y, *qk;
                run_copy(&c, &y, &qk);
                void *fmask = a24_mask_bool_to_float(c.mask, c.mask_elems, c.d.dtype);
                assert_same_with_mask(&c, c.d.dtype, 4, dims, fmask, y, qk, "bool vs float");
                free(fmask);
                free(y);
                free(qk);
                a24_case_free(&c);
            }
        }
    }
}

/* Masks of rank 1 [T], 2 [S_q, T], 3 [1|Hq, S_q, T] and rank 4 with size-1
 * dims give exactly the bits of the same mask expanded to [B, Hq, S_q, T]
 * (numpy broadcasting, right-aligned), bool and float, causal or not.
 * (With causal, onnx 1.23.2's reference deviates for a broadcast query axis:
 * see harness/naive_model.h; the spec's per-row rule is what is pinned here.) */
static void test_a24_broadcast_mask_equals_expanded_rank4(void **state) {
    (void)state;
    /* dims with 0 = "the full target size" of that axis */
    static const int32_t ranks[7] = {1, 2, 3, 3, 4, 4, 4};
    static const int64_t shapes[7][4] = {{0},          {0, 0},       {1, 0, 0},   {0, 0, 0},
                                         {1, 0, 1, 0}, {0, 1, 0, 0}, {1, 1, 1, 0}};
    for (int di = 0; di < 3; ++di) {
        for (int si = 0; si < 7; ++si) {
            for (int v = 0; v < 4; ++v) {
                a24_case_t c = {0};
                set_shape(&c.d, k_dtypes[di], v & 2 ? 3 : 4, 2, 4, 2, 5, 6, 8, 8);
                c.d.has_past = v & 1;
                c.d.past_seqlen = 2 * (v & 1);
                c.d.is_causal = (si + v) & 1;
                c.d.mask_dtype = v & 2 ? c.d.dtype : OPP_DTYPE_BOOL_;
                c.d.mask_rank = ranks[si];
                const int64_t target[4] = {2, 4, 5, a24_total(&c.d)};
                for (int32_t i = 0; i < ranks[si]; ++i) {
                    const int64_t s = shapes[si][i];
                    c.d.mask_dims[i] = s != 0 ? s : target[4 - ranks[si] + i];
                }
                c.d.qk_matmul_output_mode = 3;
                c.want_qk = 1;
                assert_int_equal(a24_case_alloc(&c, 800u + (uint64_t)(si * 4 + v), 1.0), 0);
                void *y, *qk;
                run_copy(&c, &y, &qk);
                void *full = a24_mask_expand(&c.d, c.mask, target);
                assert_same_with_mask(&c, c.d.mask_dtype, 4, target, full, y, qk, "broadcast");
                free(full);
                free(y);
                free(qk);
                a24_case_free(&c);
            }
        }
    }
}

/* A short mask (last dim M < T) equals the full-length mask with False /
 * -inf in columns M .. T-1, for rank 4 and rank 2, bool and float. */
static void test_a24_short_mask_equals_padded_full_mask(void **state) {
    (void)state;
    for (int di = 0; di < 3; ++di) {
        for (int v = 0; v < 8; ++v) {
            a24_case_t c = {0};
            set_shape(&c.d, k_dtypes[di], 4, 2, 4, 2, 5, 7, 8, 8);
            c.d.is_causal = v & 1;
            c.d.mask_dtype = v & 2 ? c.d.dtype : OPP_DTYPE_BOOL_;
            c.d.mask_rank = v & 4 ? 2 : 4;
            const int64_t target[4] = {2, 4, 5, 7}, m = v & 4 ? 1 : 4;
            const int64_t dims4[4] = {2, 4, 5, m}, dims2[4] = {5, m, 0, 0};
            memcpy(c.d.mask_dims, v & 4 ? dims2 : dims4, sizeof(dims4));
            c.d.qk_matmul_output_mode = 3;
            c.want_qk = 1;
            assert_int_equal(a24_case_alloc(&c, 900u + (uint64_t)v, 1.0), 0);
            void *y, *qk;
            run_copy(&c, &y, &qk);
            void *full = a24_mask_expand(&c.d, c.mask, target);
            assert_same_with_mask(&c, c.d.mask_dtype, 4, target, full, y, qk, "short mask");
            free(full);
            free(y);
            free(qk);
            a24_case_free(&c);
        }
    }
}

/* Y (and qk when produced) of c within max_ulp of the naive model. */
static void assert_matches_naive(const a24_case_t *c, uint64_t max_ulp, const char *what) {
    assert_int_equal(a24_case_compare_naive(c, max_ulp, what, NULL, NULL), 0);
}

/* A float mask with finite values (-1.5, 0.75, 2.25, 0) is added to the
 * scores: Y differs from the unmasked run, and Y and the mode 2 / mode 3
 * outputs agree with the naive model within 1 ulp. */
static void test_a24_finite_float_mask_is_added_to_scores(void **state) {
    (void)state;
    static const double values[4] = {-1.5, 0.75, 2.25, 0.0};
    for (int di = 0; di < 3; ++di) {
        for (int32_t mode = 2; mode <= 3; ++mode) {
            a24_case_t c = {0};
            set_shape(&c.d, k_dtypes[di], 4, 2, 4, 2, 5, 6, 8, 8);
            c.d.is_causal = mode == 3;
            c.d.mask_dtype = c.d.dtype;
            c.d.mask_rank = 3;
            const int64_t dims[4] = {4, 5, 6, 0};
            memcpy(c.d.mask_dims, dims, sizeof(dims));
            c.d.qk_matmul_output_mode = mode;
            c.want_qk = 1;
            assert_int_equal(a24_case_alloc(&c, 1000u + (uint64_t)mode, 1.0), 0);
            for (size_t i = 0; i < c.mask_elems; ++i) {
                opp__store_elem(c.mask, i, (int)c.d.dtype, values[(i * 7) % 4]);
            }
            void *y, *qk;
            run_copy(&c, &y, &qk);
            assert_matches_naive(&c, 1, "finite float mask");
            c.d.mask_dtype = OPP_DTYPE_UNDEFINED;
            assert_opp_ok(a24_case_run(&c));
            size_t differ = 0;
            const size_t es = opp_dtype_size(c.d.dtype);
            for (size_t i = 0; i < c.y_elems; ++i) {
                differ += memcmp((char *)y + i * es, (char *)c.y + i * es, es) != 0;
            }
            assert_true(differ > c.y_elems / 2);
            c.d.mask_dtype = c.d.dtype;
            free(y);
            free(qk);
            a24_case_free(&c);
        }
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a24_past_equals_packed_concatenation),
        cmocka_unit_test(test_a24_top_left_causal_row_equals_noncausal_prefix),
        cmocka_unit_test(test_a24_bool_mask_equals_float_zero_neginf_mask),
        cmocka_unit_test(test_a24_broadcast_mask_equals_expanded_rank4),
        cmocka_unit_test(test_a24_short_mask_equals_padded_full_mask),
        cmocka_unit_test(test_a24_finite_float_mask_is_added_to_scores),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
