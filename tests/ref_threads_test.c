/*
 * ref_threads_test.c - the exact CPU references give the same bits on any
 * number of threads and with either kernel set: 1 thread vs N = 2, 3, 7, 16
 * (opp_ref_set_threads) on random ragged packed batches (f32/f16/bf16,
 * causal or not, softcap, GQA, zero-length sequences) and on random
 * Attention-24 cases (3D/4D, bool and float masks of every rank, past with
 * present_*, nonpad_kv_seqlen, every qk_matmul_output mode); the portable
 * kernels (OPP_REF_SIMD=0) vs the default ones; the thread-count API and
 * OPP_REF_THREADS; and that skipping the scores of masked keys keeps ONNX's
 * NaN rows when a masked key is NaN or inf (against the naive model).
 *
 * Before each run the outputs are filled with a byte pattern that differs
 * from run to run, so an element that a run fails to write is caught.
 * Environment: OPP_REF_THREADS_BATCHES (default 24) random cases per kind.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "numerics/fp_convert.h"
#include "reference/opp_reference.h"
#include "tests/a24_case.h"
#include "harness/logical_batch.h"
#include "tests/test_util.h"

/* What each run is compared against the 1-thread run with the default
 * kernels: thread counts, and the portable kernels (OPP_REF_SIMD=0). */
typedef struct variant {
    int threads;
    int portable;
} variant_t;

static const variant_t k_variants[5] = {{2, 0}, {3, 0}, {7, 0}, {16, 0}, {3, 1}};

/* Selects the variant's thread count and kernels (NULL: 1 thread, default). */
static void variant_begin(const variant_t *v) {
    opp_ref_set_threads(v != NULL ? v->threads : 1);
    if (v != NULL && v->portable) {
        setenv("OPP_REF_SIMD", "0", 1);
    }
}

static void variant_end(void) {
    opp_ref_set_threads(0);
    unsetenv("OPP_REF_SIMD");
}

static void variant_name(const variant_t *v, const char *what, char *buf, size_t size) {
    snprintf(buf, size, "%d threads%s: %s", v->threads, v->portable ? ", portable kernels" : "",
             what);
}

static int env_count(const char *name, int fallback) {
    const char *s = getenv(name);
    return s != NULL && atoi(s) > 0 ? atoi(s) : fallback;
}

/* Compares bytes; on a difference reports it through the element comparator. */
static void assert_same(const void *got, const void *want, size_t n, opp_dtype_t dtype,
                        const char *what) {
    if (n > 0 && memcmp(got, want, n * opp_dtype_size(dtype)) != 0) {
        opp_test_bits_equal(got, want, n, dtype, what);
        fail_msg("%s: outputs differ (or an element was not written)", what);
    }
}

/* ---  packed reference  --- */

typedef struct packed_run {
    opp_lb_t lb;
    opp_attention_desc_t desc;
    size_t n; /* output elements */
} packed_run_t;

static void *run_packed(const packed_run_t *r, const variant_t *v, unsigned char pattern) {
    const size_t bytes = (r->n + 1) * opp_dtype_size(r->lb.dtype);
    void *out = malloc(bytes);
    assert_non_null(out);
    memset(out, pattern, bytes);
    variant_begin(v);
    assert_opp_ok(opp_ref_packed_attention(&r->desc, r->lb.cu_q, r->lb.cu_kv, r->lb.q, r->lb.k,
                                           r->lb.v, out));
    variant_end();
    return out;
}

/* Batch `index` of the seeded stream; batch 0 is a fixed ragged GQA batch
 * with empty query and key sequences and a negative causal offset. */
static void make_packed(packed_run_t *r, int index) {
    if (index == 0) {
        const int32_t lq[5] = {0, 37, 0, 100, 90}, lkv[5] = {5, 0, 0, 130, 70};
        assert_int_equal(opp_lb_from_lengths(&r->lb, OPP_DTYPE_BF16, 5, lq, lkv, 8, 2, 64, 40, 0.0f,
                                             1, 30.0f, 0x7e11u),
                         0);
    } else {
        opp_lb_spec_t spec;
        opp_lb_spec_random(&spec);
        assert_int_equal(opp_lb_generate(&spec, 0x7e11u + (uint64_t)index, &r->lb), 0);
    }
    opp_lb_packed_desc(&r->lb, &r->desc);
    r->n = (size_t)r->lb.total_q * (size_t)r->lb.num_heads * (size_t)r->lb.v_head_size;
}

/* 1 thread == 2, 3, 7, 16 threads == portable kernels, bit for bit, on
 * random ragged batches. */
static void test_packed_ref_threads_bit_identical(void **state) {
    (void)state;
    const int batches = env_count("OPP_REF_THREADS_BATCHES", 24);
    for (int i = 0; i < batches; ++i) {
        packed_run_t r;
        make_packed(&r, i);
        char what[1200], desc[1024];
        opp_lb_describe(&r.lb, desc, sizeof(desc));
        void *want = run_packed(&r, NULL, 0xA5);
        for (int k = 0; k < 5; ++k) {
            variant_name(&k_variants[k], desc, what, sizeof(what));
            void *got = run_packed(&r, &k_variants[k], (unsigned char)(0x11 * (k + 1)));
            assert_same(got, want, r.n, r.lb.dtype, what);
            free(got);
        }
        free(want);
        opp_lb_free(&r.lb);
    }
}

/* ---  Attention-24 reference  --- */

/* A random valid case: every option the reference has, small shapes. */
static void make_a24(a24_case_t *c, uint64_t seed) {
    static const opp_dtype_t dtypes[3] = {OPP_DTYPE_F32, OPP_DTYPE_F16, OPP_DTYPE_BF16};
    uint64_t st = seed;
    memset(c, 0, sizeof(*c));
    opp_ref_attention24_desc_t *d = &c->d;
    opp_ref_attention24_desc_init(d);
    d->dtype = dtypes[a24_rand_int(&st, 0, 2)];
    d->input_rank = a24_rand_int(&st, 3, 4);
    d->batch = a24_rand_int(&st, 1, 3);
    d->kv_num_heads = a24_rand_int(&st, 1, 3);
    d->q_num_heads = d->kv_num_heads * a24_rand_int(&st, 1, 3);
    d->q_seqlen = a24_rand_int(&st, 0, 4) == 0 ? a24_rand_int(&st, 0, 1) : a24_rand_int(&st, 2, 70);
    d->kv_seqlen = a24_rand_int(&st, 0, 5) == 0 ? 0 : a24_rand_int(&st, 1, 90);
    d->has_past = a24_rand_int(&st, 0, 2) == 0;
    d->past_seqlen = d->has_past ? a24_rand_int(&st, 0, 12) : 0;
    d->has_nonpad = !d->has_past && a24_rand_int(&st, 0, 1);
    d->head_size = a24_rand_int(&st, 1, 40);
    d->v_head_size = a24_rand_int(&st, 0, 1) ? d->head_size : a24_rand_int(&st, 1, 40);
    d->is_causal = a24_rand_int(&st, 0, 1);
    d->softcap = a24_rand_int(&st, 0, 2) == 0 ? 3.5f : 0.0f;
    d->scale = a24_rand_int(&st, 0, 2) == 0 ? 0.3f : 0.0f;
    c->want_qk = a24_rand_int(&st, 0, 1);
    d->qk_matmul_output_mode = a24_rand_int(&st, 0, 3);
    c->want_present = a24_rand_int(&st, 0, 1);
    const int mask = a24_rand_int(&st, 0, 2); /* none, bool, float */
    if (mask != 0) {
        const int64_t total = a24_total(d);
        const int64_t full[3] = {d->batch, d->q_num_heads, d->q_seqlen};
        d->mask_dtype = mask == 1 ? OPP_DTYPE_BOOL_ : d->dtype;
        d->mask_rank = a24_rand_int(&st, 1, 4);
        for (int32_t i = 0; i < d->mask_rank; ++i) {
            const int32_t axis = 4 - d->mask_rank + i;
            d->mask_dims[i] = axis == 3 ? a24_rand_int(&st, (int32_t)(total > 0), (int32_t)total)
                                        : (a24_rand_int(&st, 0, 1) ? full[axis] : 1);
        }
    }
    assert_opp_ok(opp_ref_attention24_check(d));
    assert_int_equal(a24_case_alloc(c, seed * 31u + 7u, 1.5), 0);
    for (int32_t b = 0; d->has_nonpad && b < d->batch; ++b) {
        c->nonpad[b] = a24_rand_int(&st, 0, d->kv_seqlen);
    }
}

/* The outputs of one run (copies). */
typedef struct a24_outputs {
    void *y, *qk, *present_key, *present_value;
} a24_outputs_t;

static void fill_outputs(a24_case_t *c, unsigned char pattern) {
    const size_t es = opp_dtype_size(c->d.dtype);
    memset(c->y, pattern, c->y_elems * es);
    memset(c->qk, pattern, c->qk_elems * es);
    memset(c->present_key, pattern, c->prk_elems * es);
    memset(c->present_value, pattern, c->prv_elems * es);
}

static void *copy_of(const void *src, size_t n, size_t es) {
    void *dst = malloc(n * es + 1);
    assert_non_null(dst);
    memcpy(dst, src, n * es);
    return dst;
}

static a24_outputs_t run_a24(a24_case_t *c, const variant_t *v, unsigned char pattern) {
    const size_t es = opp_dtype_size(c->d.dtype);
    fill_outputs(c, pattern);
    variant_begin(v);
    assert_opp_ok(a24_case_run(c));
    variant_end();
    a24_outputs_t o;
    o.y = copy_of(c->y, c->y_elems, es);
    o.qk = copy_of(c->qk, c->want_qk ? c->qk_elems : 0, es);
    o.present_key = copy_of(c->present_key, c->want_present ? c->prk_elems : 0, es);
    o.present_value = copy_of(c->present_value, c->want_present ? c->prv_elems : 0, es);
    return o;
}

static void assert_outputs_same(const a24_case_t *c, const a24_outputs_t *got,
                                const a24_outputs_t *want, const char *what) {
    const opp_dtype_t dt = c->d.dtype;
    char name[700];
    snprintf(name, sizeof(name), "%s Y", what);
    assert_same(got->y, want->y, c->y_elems, dt, name);
    snprintf(name, sizeof(name), "%s qk_matmul_output", what);
    assert_same(got->qk, want->qk, c->want_qk ? c->qk_elems : 0, dt, name);
    snprintf(name, sizeof(name), "%s present_*", what);
    assert_same(got->present_key, want->present_key, c->want_present ? c->prk_elems : 0, dt, name);
    assert_same(got->present_value, want->present_value, c->want_present ? c->prv_elems : 0, dt,
                name);
}

static void free_outputs(a24_outputs_t *o) {
    free(o->y);
    free(o->qk);
    free(o->present_key);
    free(o->present_value);
}

static void describe_a24(const a24_case_t *c, int index, char *buf, size_t size) {
    const opp_ref_attention24_desc_t *d = &c->d;
    snprintf(buf, size,
             "case %d: %s rank %d B %d Hq %d Hkv %d S_q %d S_kv %d P %d nonpad %d D %d Dv %d "
             "causal %d softcap %g mask %d/%d qk %d(mode %d) present %d",
             index, opp_dtype_name(d->dtype), (int)d->input_rank, (int)d->batch,
             (int)d->q_num_heads, (int)d->kv_num_heads, (int)d->q_seqlen, (int)d->kv_seqlen,
             (int)d->past_seqlen, (int)d->has_nonpad, (int)d->head_size, (int)d->v_head_size,
             (int)d->is_causal, (double)d->softcap, (int)d->mask_dtype, (int)d->mask_rank,
             c->want_qk, (int)d->qk_matmul_output_mode, c->want_present);
}

/* 1 thread == 2, 3, 7, 16 threads == portable kernels, bit for bit, on
 * every output. */
static void test_a24_ref_threads_bit_identical(void **state) {
    (void)state;
    const int cases = 2 * env_count("OPP_REF_THREADS_BATCHES", 24);
    for (int i = 0; i < cases; ++i) {
        a24_case_t c;
        make_a24(&c, 0xa24u + (uint64_t)i);
        char desc[512], what[600];
        describe_a24(&c, i, desc, sizeof(desc));
        a24_outputs_t want = run_a24(&c, NULL, 0xA5);
        for (int k = 0; k < 5; ++k) {
            variant_name(&k_variants[k], desc, what, sizeof(what));
            a24_outputs_t got = run_a24(&c, &k_variants[k], (unsigned char)(0x11 * (k + 1)));
            assert_outputs_same(&c, &got, &want, what);
            free_outputs(&got);
        }
        free_outputs(&want);
        a24_case_free(&c);
    }
}

/* A NaN or inf in a key (or query) that the causal rule or a mask hides
 * still reaches the row as in ONNX (score + -inf = NaN): the reference
 * scores masked keys whenever their score may not be finite. */
static void test_a24_ref_nonfinite_masked_key_follows_onnx(void **state) {
    (void)state;
    static const double poison[3] = {NAN, INFINITY, -INFINITY};
    for (int dt = 0; dt < 3; ++dt) {
        for (int pi = 0; pi < 3; ++pi) {
            for (int on_query = 0; on_query < 2; ++on_query) {
                a24_case_t c;
                memset(&c, 0, sizeof(c));
                opp_ref_attention24_desc_init(&c.d);
                c.d.dtype = dt == 0 ? OPP_DTYPE_F32 : (dt == 1 ? OPP_DTYPE_F16 : OPP_DTYPE_BF16);
                c.d.batch = 1;
                c.d.q_num_heads = c.d.kv_num_heads = 1;
                c.d.q_seqlen = c.d.kv_seqlen = 40;
                c.d.head_size = c.d.v_head_size = 8;
                c.d.is_causal = 1;
                assert_int_equal(a24_case_alloc(&c, 99u + (uint64_t)pi, 1.0), 0);
                /* key 30 is hidden from rows 0..29; query row 5 sees keys 0..5 */
                if (on_query) {
                    opp__store_elem(c.q, 5 * 8 + 3, (int)c.d.dtype, poison[pi]);
                } else {
                    opp__store_elem(c.k, 30 * 8 + 3, (int)c.d.dtype, poison[pi]);
                }
                assert_opp_ok(a24_case_run(&c));
                char what[96];
                snprintf(what, sizeof(what), "%s poison %g in %s", opp_dtype_name(c.d.dtype),
                         poison[pi], on_query ? "query 5" : "key 30");
                assert_int_equal(a24_case_compare_naive(&c, 1, what, NULL, NULL), 0);
                a24_case_free(&c);
            }
        }
    }
}

/* ---  thread count  --- */

/* opp_ref_set_threads wins over OPP_REF_THREADS, which wins over the online
 * CPU count; bad environment values are ignored; requests are clamped. */
static void test_ref_threads_count_sources(void **state) {
    (void)state;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    cpus = cpus < 1 ? 1 : (cpus > OPP_REF_MAX_THREADS ? OPP_REF_MAX_THREADS : cpus);
    unsetenv("OPP_REF_THREADS");
    opp_ref_set_threads(0);
    assert_int_equal(opp_ref_threads(), cpus);
    setenv("OPP_REF_THREADS", "3", 1);
    assert_int_equal(opp_ref_threads(), 3);
    opp_ref_set_threads(5);
    assert_int_equal(opp_ref_threads(), 5);
    opp_ref_set_threads(-1);
    assert_int_equal(opp_ref_threads(), 3);
    setenv("OPP_REF_THREADS", "7x", 1);
    assert_int_equal(opp_ref_threads(), cpus);
    setenv("OPP_REF_THREADS", "0", 1);
    assert_int_equal(opp_ref_threads(), cpus);
    setenv("OPP_REF_THREADS", "99999", 1);
    assert_int_equal(opp_ref_threads(), OPP_REF_MAX_THREADS);
    opp_ref_set_threads(1 << 30);
    assert_int_equal(opp_ref_threads(), OPP_REF_MAX_THREADS);
    opp_ref_set_threads(0);
    unsetenv("OPP_REF_THREADS");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ref_threads_count_sources),
        cmocka_unit_test(test_packed_ref_threads_bit_identical),
        cmocka_unit_test(test_a24_ref_threads_bit_identical),
        cmocka_unit_test(test_a24_ref_nonfinite_masked_key_follows_onnx),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
