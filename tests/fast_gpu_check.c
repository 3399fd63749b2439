/*
 * fast_gpu_check.c - the comparisons of the FAST path tests (see
 * fast_gpu_util.h): bit equality per sequence, sanity of valid rows,
 * accuracy against EXACT, and the L4 batch-invariance comparisons of one
 * batch.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numerics/fp_convert.h"
#include "tests/exact_gpu_util.h"
#include "tests/fast_gpu_util.h"
#include "tests/test_util.h"

void opp_ft_assert_seq_equal(const opp_lb_t *a, const opp_ft_res_t *ra, int32_t sa,
                             const opp_lb_t *b, const opp_ft_res_t *rb, int32_t sb,
                             const char *what) {
    assert_int_equal(a->lq[sa], b->lq[sb]);
    const int32_t n = a->lq[sa];
    const size_t es = opp_dtype_size(a->dtype);
    const size_t w = (size_t)a->num_heads * (size_t)a->v_head_size;
    size_t bad = opp_test_bits_equal((const char *)ra->out + (size_t)a->cu_q[sa] * w * es,
                                     (const char *)rb->out + (size_t)b->cu_q[sb] * w * es,
                                     (size_t)n * w, a->dtype, what);
    for (int32_t h = 0; h < a->num_heads && bad == 0; ++h) {
        bad += opp_test_bits_equal(ra->lse + (size_t)h * (size_t)a->total_q + a->cu_q[sa],
                                   rb->lse + (size_t)h * (size_t)b->total_q + b->cu_q[sb],
                                   (size_t)n, OPP_DTYPE_F32, what);
    }
    if (bad != 0) {
        print_error("sequence %d vs sequence %d (L_q %d, L_kv %d; out index = (row * Hq + head) "
                    "* Dv + column, lse index = row): %zu elements differ: %s\n",
                    (int)sa, (int)sb, (int)n, (int)a->lkv[sa], bad, what);
    }
    assert_int_equal(bad, 0);
}

void opp_ft_assert_equal(const opp_lb_t *lb, const opp_ft_res_t *got, const opp_ft_res_t *want,
                         const char *what) {
    for (int32_t b = 0; b < lb->batch; ++b) {
        opp_ft_assert_seq_equal(lb, got, b, lb, want, b, what);
    }
}

size_t opp_ft_assert_sane(const opp_lb_t *lb, const opp_ft_res_t *r, const char *what) {
    const int64_t hq = lb->num_heads, dv = lb->v_head_size;
    size_t none = 0, bad = 0;
    for (int32_t b = 0; b < lb->batch; ++b) {
        const int32_t lq = lb->lq[b], lkv = lb->lkv[b];
        for (int32_t i = 0; i < lq; ++i) {
            const int sees_none = lkv == 0 || (lb->is_causal && (int64_t)i + lkv - lq < 0);
            const int64_t t = lb->cu_q[b] + i;
            for (int64_t h = 0; h < hq; ++h) {
                const float lse = r->lse[h * lb->total_q + t];
                int ok = sees_none ? (isinf(lse) && lse < 0) : isfinite(lse);
                for (int64_t c = 0; c < dv && ok; ++c) {
                    const size_t at = (size_t)((t * hq + h) * dv + c);
                    const double x = opp__load_elem(r->out, at, (int)lb->dtype);
                    ok = sees_none ? (x == 0.0 && !signbit(x)) : isfinite(x);
                }
                none += sees_none != 0;
                if (!ok && bad++ < OPP_TEST_MAX_REPORTED) {
                    print_error("%s: sequence %d row %d head %d (%s): not %s\n", what, (int)b,
                                (int)i, (int)h, sees_none ? "sees no key" : "sees keys",
                                sees_none ? "+0.0 with LSE -inf" : "finite");
                }
            }
        }
    }
    assert_int_equal(bad, 0);
    return none;
}

/* Max |x| over n elements of dtype. */
static double max_abs_of(const void *p, size_t n, opp_dtype_t dtype) {
    double m = 0.0;
    for (size_t i = 0; i < n; ++i) {
        m = fmax(m, fabs(opp__load_elem(p, i, (int)dtype)));
    }
    return m;
}

void opp_ft_check_accuracy(const opp_lb_t *lb, const opp_ft_res_t *fast, const opp_ft_res_t *exact,
                           opp_ft_err_t *e, const char *what) {
    /* 16-bit: a few units of the storage type's last place; f32 (the FFMA
     * kernel: fp32 scores, ex2.approx, fp32 sums over up to 2^13 keys):
     * 2^-14, stated before its first GPU run */
    const double rel =
        lb->dtype == OPP_DTYPE_BF16 ? 0x1p-7 : (lb->dtype == OPP_DTYPE_F32 ? 0x1p-14 : 0x1p-9);
    opp_ft_check_accuracy_rel(lb, fast, exact, rel, e, what);
}

void opp_ft_check_accuracy_rel(const opp_lb_t *lb, const opp_ft_res_t *fast,
                               const opp_ft_res_t *exact, double rel, opp_ft_err_t *e,
                               const char *what) {
    const size_t n = opp_test_out_elems(lb);
    const opp_ft_err_t zero = {0, 0, 0.0, 0.0, 0.0, 0.0};
    opp_ft_err_t b = zero;
    b.batches = 1;
    b.elems = n;
    b.max_ref = max_abs_of(exact->out, n, lb->dtype);
    const double max_v =
        max_abs_of(lb->v, (size_t)lb->total_kv * (size_t)lb->kv_num_heads * (size_t)lb->v_head_size,
                   lb->dtype);
    const double bound = rel * (b.max_ref + 0.5 * max_v);
    size_t bad = 0;
    for (size_t i = 0; i < n; ++i) {
        const double f = opp__load_elem(fast->out, i, (int)lb->dtype);
        const double x = opp__load_elem(exact->out, i, (int)lb->dtype);
        const double d = fabs(f - x);
        if (!(d <= bound) && bad++ < OPP_TEST_MAX_REPORTED) {
            print_error("%s: out[%zu]: fast %.9g exact %.9g: |diff| %.3g > bound %.3g\n", what, i,
                        f, x, d, bound);
        }
        b.max_abs = d > b.max_abs || d != d ? d : b.max_abs;
        b.sum_sq += d * d;
    }
    const size_t nl = (size_t)lb->num_heads * (size_t)lb->total_q;
    for (size_t i = 0; i < nl; ++i) {
        const double f = fast->lse[i], x = exact->lse[i];
        const int both_ninf = isinf(f) && isinf(x) && f < 0 && x < 0;
        const double d = fabs(f - x);
        if (!both_ninf && !(d <= 1e-3 + 1e-4 * fabs(x)) && bad++ < OPP_TEST_MAX_REPORTED) {
            print_error("%s: lse[%zu]: fast %.9g exact %.9g\n", what, i, f, x);
        }
        b.max_lse = !both_ninf && d > b.max_lse ? d : b.max_lse;
    }
    if (bad != 0) {
        print_error("%zu elements beyond the bound (max |exact| %.4g, max |V| %.4g): %s\n", bad,
                    b.max_ref, max_v, what);
    }
    assert_int_equal(bad, 0);
    if (e != NULL) {
        opp_ft_err_merge(e, &b);
    }
}

void opp_ft_err_merge(opp_ft_err_t *into, const opp_ft_err_t *e) {
    into->batches += e->batches;
    into->elems += e->elems;
    into->max_abs = fmax(into->max_abs, e->max_abs);
    into->sum_sq += e->sum_sq;
    into->max_ref = fmax(into->max_ref, e->max_ref);
    into->max_lse = fmax(into->max_lse, e->max_lse);
}

void opp_ft_err_print(const char *label, const opp_ft_err_t *e) {
    const double rms = e->elems > 0 ? sqrt(e->sum_sq / (double)e->elems) : 0.0;
    printf("  %-22s %7zu %11zu   %10.3e %10.3e   %10.4g   %10.3e\n", label, e->batches, e->elems,
           e->max_abs, rms, e->max_ref, e->max_lse);
}

void opp_ft_assert_all_nan(const void *p, size_t n, opp_dtype_t dtype, const char *what) {
    size_t bad = 0;
    for (size_t i = 0; i < n; ++i) {
        bad += !isnan(opp__load_elem(p, i, (int)dtype));
    }
    if (bad != 0) {
        print_error("%s: %zu of %zu elements were written\n", what, bad, n);
    }
    assert_int_equal(bad, 0);
}

// --- batch invariance

/* Runs mix packed through row (NULL: the entry with algo) and compares, for
 * k < n, sequence mine[k] of (lb, ref) with sequence pos[k] of mix. */
static void check_composition(const opp_lb_t *lb, const opp_ft_res_t *ref, const opp_lb_t *mix,
                              const int32_t *mine, const int32_t *pos, int32_t n, opp_algo_t algo,
                              const opp__kernel_row_t *row, const char *what) {
    opp_ft_res_t r;
    opp_ft_run_packed(mix, algo, row, &r);
    for (int32_t k = 0; k < n; ++k) {
        opp_ft_assert_seq_equal(lb, ref, mine[k], mix, &r, pos[k], what);
    }
    opp_ft_res_free(&r);
}

int opp_ft_check_invariance(const opp_lb_t *lb, const opp_ft_res_t *ref,
                            const opp__kernel_row_t *row, uint64_t seed, int full,
                            const char *desc) {
    return opp_ft_check_invariance_algo(lb, ref, OPP_ALGO_FAST, row, seed, full, desc);
}

int opp_ft_check_invariance_algo(const opp_lb_t *lb, const opp_ft_res_t *ref, opp_algo_t algo,
                                 const opp__kernel_row_t *row, uint64_t seed, int full,
                                 const char *desc) {
    char what[768];
    int runs = 0;
    for (int32_t rank = 4; rank >= (full ? 3 : 4); --rank) { /* (a) */
        for (int p = full ? 0 : 1; p < 2; ++p) {
            opp_ft_res_t r;
            opp_ft_run_padded(lb, rank, (opp_lb_poison_t)p, algo, row, &r);
            snprintf(what, sizeof(what), "padded %dD, %s padding vs packed: %s", (int)rank,
                     p ? "NaN" : "finite", desc);
            opp_ft_assert_equal(lb, &r, ref, what);
            opp_ft_res_free(&r);
            runs++;
        }
    }
    const int32_t B = lb->batch, n = 2 * B + 1;
    int32_t *seq = malloc(sizeof(int32_t) * (size_t)n * 3);
    const opp_lb_t **src = malloc(sizeof(*src) * (size_t)n);
    assert_true(seq != NULL && src != NULL);
    int32_t *mine = seq + n, *pos = seq + 2 * n;
    opp_lb_t mix;
    const int32_t zero = 0;
    for (int32_t b = 0; b < B; ++b) { /* (b) */
        assert_int_equal(opp_lb_compose(&mix, &lb, &b, 1), 0);
        snprintf(what, sizeof(what), "sequence %d alone vs in the batch: %s", (int)b, desc);
        check_composition(lb, ref, &mix, &b, &zero, 1, algo, row, what);
        opp_lb_free(&mix);
        runs++;
    }
    if (full) {
        for (int32_t k = 0; k < B; ++k) { /* (c) reversed */
            src[k] = lb;
            seq[k] = mine[k] = B - 1 - k;
            pos[k] = k;
        }
        assert_int_equal(opp_lb_compose(&mix, src, seq, B), 0);
        snprintf(what, sizeof(what), "batch reversed vs in order: %s", desc);
        check_composition(lb, ref, &mix, mine, pos, B, algo, row, what);
        opp_lb_free(&mix);
        opp_lb_t fill; /* (c) other sequences before, between and after */
        const int nan_fill = (int)(seed & 1);
        opp_ft_gen_like(lb, B + 1, seed, nan_fill, &fill);
        for (int32_t k = 0; k < n; ++k) {
            src[k] = k % 2 ? lb : &fill;
            seq[k] = k / 2;
        }
        for (int32_t b = 0; b < B; ++b) {
            mine[b] = b;
            pos[b] = 2 * b + 1;
        }
        assert_int_equal(opp_lb_compose(&mix, src, seq, n), 0);
        snprintf(what, sizeof(what), "batch interleaved with %d other sequences%s: %s", (int)B + 1,
                 nan_fill ? " of NaN values" : "", desc);
        check_composition(lb, ref, &mix, mine, pos, B, algo, row, what);
        opp_lb_free(&mix);
        opp_lb_free(&fill);
        opp_ft_res_t r; /* (d) */
        opp_ft_run_packed(lb, algo, row, &r);
        snprintf(what, sizeof(what), "repeated run: %s", desc);
        opp_ft_assert_equal(lb, &r, ref, what);
        opp_ft_res_free(&r);
        runs += 3;
    }
    free(seq);
    free(src);
    return runs;
}
