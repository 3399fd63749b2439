/*
 * attention24_gpu_random.c - the full Attention-24 operator on random
 * descriptors, GPU reference vs CPU reference (see attention24_gpu_cases.h):
 * 3D/4D, bool and float attn_mask (rank 1..4, broadcast dims, short masks),
 * past_key/past_value with present_*, nonpad_kv_seqlen (any value
 * 0..S_kv), causal, softcap, explicit scale, qk_matmul_output modes 0-3,
 * zero-length S_q / S_kv / P. Every output and every row is compared.
 *
 *   Q [B, Hq, S_q, D] (or 3D), K/V [B, Hkv, S_kv, D|Dv], past [B, Hkv, P, .],
 *   mask mask_dims -> [B, Hq, S_q, T], T = P + S_kv.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/compare.h"
#include "harness/rng.h"
#include "numerics/fp_convert.h"
#include "tests/attention24_gpu_cases.h"
#include "tests/test_util.h"

static void *fill(size_t n, opp_dtype_t dtype, double amplitude, uint64_t *st) {
    void *p = malloc((n + 1) * opp_dtype_size(dtype));
    assert_non_null(p);
    for (size_t i = 0; i < n; ++i) {
        opp__store_elem(p, i, (int)dtype, amplitude * opp_rng_normalish(st));
    }
    return p;
}

/* A random descriptor (validated) from the seeded stream. */
static void random_desc(uint64_t *st, opp_dtype_t dtype, opp_ref_attention24_desc_t *a) {
    static const int32_t sizes[6] = {8, 16, 32, 64, 80, 128};
    opp_ref_attention24_desc_init(a);
    a->dtype = dtype;
    a->input_rank = opp_rng_int(st, 3, 4);
    a->batch = opp_rng_int(st, 1, 3);
    a->kv_num_heads = opp_rng_int(st, 1, 3);
    a->q_num_heads = a->kv_num_heads * (1 << opp_rng_int(st, 0, 2));
    a->q_seqlen = opp_rng_int(st, 0, 9) == 0 ? 0 : opp_rng_int(st, 1, 24);
    a->kv_seqlen = opp_rng_int(st, 0, 9) == 0 ? 0 : opp_rng_int(st, 1, 90);
    a->head_size = sizes[opp_rng_int(st, 0, 5)];
    a->v_head_size = opp_rng_int(st, 0, 2) == 0 ? sizes[opp_rng_int(st, 0, 5)] : a->head_size;
    a->scale =
        opp_rng_int(st, 0, 2) == 0 ? (float)(0.05 + 0.4 * opp_rng_normalish(st) * 0.25) : 0.0f;
    a->scale = a->scale < 0.0f ? -a->scale : a->scale;
    a->softcap = opp_rng_int(st, 0, 2) == 0 ? (float)opp_rng_int(st, 2, 30) : 0.0f;
    a->is_causal = opp_rng_int(st, 0, 1);
    const int32_t cache = opp_rng_int(st, 0, 2); /* 0 none, 1 past, 2 nonpad */
    a->has_past = cache == 1;
    a->past_seqlen = a->has_past ? opp_rng_int(st, 0, 40) : 0;
    a->has_nonpad = cache == 2;
    const int32_t mask = opp_rng_int(st, 0, 2); /* 0 none, 1 bool, 2 float */
    const int64_t T = (int64_t)a->past_seqlen + a->kv_seqlen;
    if (mask > 0) {
        const int64_t target[3] = {a->batch, a->q_num_heads, a->q_seqlen};
        a->mask_dtype = mask == 1 ? OPP_DTYPE_BOOL_ : dtype;
        a->mask_rank = opp_rng_int(st, 1, 4);
        for (int32_t i = 0; i < a->mask_rank; ++i) {
            const int32_t axis = 4 - a->mask_rank + i;
            a->mask_dims[i] =
                axis == 3 ? (opp_rng_int(st, 0, 2) == 0 ? opp_rng_int(st, 0, (int32_t)T) : T)
                          : (opp_rng_int(st, 0, 1) ? target[axis] : 1);
        }
    }
    a->qk_matmul_output_mode = opp_rng_int(st, 0, 3);
    assert_opp_ok(opp_ref_attention24_check(a));
}

/* Host outputs of t (NaN-poisoned), present/qk per the flags. */
static void alloc_outputs(const opp_ref_attention24_desc_t *a, const opp_ref_attention24_sizes_t *n,
                          int want_present, int want_qk, opp_ref_attention24_tensors_t *t) {
    const size_t es = opp_dtype_size(a->dtype);
    t->y = malloc((n->y + 1) * es);
    t->present_key = want_present ? malloc((n->present_key + 1) * es) : NULL;
    t->present_value = want_present ? malloc((n->present_value + 1) * es) : NULL;
    t->qk_matmul_output = want_qk ? malloc((n->qk + 1) * es) : NULL;
    assert_non_null(t->y);
    memset(t->y, 0xFF, n->y * es);
}

static void free_outputs(opp_ref_attention24_tensors_t *t) {
    free(t->y);
    free(t->present_key);
    free(t->present_value);
    free(t->qk_matmul_output);
}

/* Compares one output; f32 within 1 ulp (flips counted), else bit for bit. */
static void compare(const void *got, const void *want, size_t n,
                    const opp_ref_attention24_desc_t *a, const char *what,
                    opp_a24g_cases_result_t *r) {
    if (got == NULL) {
        return;
    }
    const int f32 = a->dtype == OPP_DTYPE_F32;
    opp_cmp_stats_t cs = {0, 0, 0, 0};
    const size_t bad = opp_cmp(got, want, n, a->dtype, !f32, 1, what, 5, &cs);
    if (bad != 0) {
        print_error("%s: %zu of %zu elements differ\n", what, bad, n);
        r->failed++;
    }
    if (f32) {
        r->f32_elems += n;
        r->f32_flips += cs.compared - cs.identical;
    }
}

void opp_a24g_random_cases(long count, uint64_t seed, opp_ref_gpu_t *ref, opp_a24g_ws_t *ws,
                           struct CUstream_st *stream, opp_a24g_cases_result_t *r) {
    static const opp_dtype_t dtypes[3] = {OPP_DTYPE_F32, OPP_DTYPE_F16, OPP_DTYPE_BF16};
    memset(r, 0, sizeof(*r));
    for (long i = 0; i < count; ++i) {
        uint64_t st = seed + (uint64_t)i * 104729u;
        opp_ref_attention24_desc_t a;
        random_desc(&st, dtypes[i % 3], &a);
        opp_ref_attention24_sizes_t n;
        opp_ref_attention24_sizes(&a, &n);
        const double amp = 0.5 + 2.5 * (double)(opp_rng_u64(&st) >> 11) * 0x1.0p-53;
        opp_ref_attention24_tensors_t in;
        memset(&in, 0, sizeof(in));
        in.q = fill(n.q, a.dtype, amp, &st);
        in.k = fill(n.k, a.dtype, amp, &st);
        in.v = fill(n.v, a.dtype, 1.0, &st);
        int64_t *nonpad = NULL;
        uint8_t *mask = NULL;
        if (a.has_past) {
            in.past_key = fill(n.past_key, a.dtype, amp, &st);
            in.past_value = fill(n.past_value, a.dtype, 1.0, &st);
        }
        if (a.has_nonpad) {
            nonpad = malloc(sizeof(int64_t) * (size_t)a.batch);
            assert_non_null(nonpad);
            for (int32_t b = 0; b < a.batch; ++b) {
                nonpad[b] = opp_rng_int(&st, 0, a.kv_seqlen);
            }
            in.nonpad_kv_seqlen = nonpad;
        }
        if (a.mask_dtype == OPP_DTYPE_BOOL_) {
            mask = malloc(n.mask + 1);
            assert_non_null(mask);
            for (size_t j = 0; j < n.mask; ++j) {
                mask[j] = opp_rng_int(&st, 0, 4) != 0;
            }
            in.attn_mask = mask;
        } else if (a.mask_dtype != OPP_DTYPE_UNDEFINED) {
            static const double values[5] = {0.0, 0.0, 0.75, -1.5, -INFINITY};
            mask = malloc((n.mask + 1) * opp_dtype_size(a.dtype));
            assert_non_null(mask);
            for (size_t j = 0; j < n.mask; ++j) {
                opp__store_elem(mask, j, (int)a.dtype, values[opp_rng_int(&st, 0, 4)]);
            }
            in.attn_mask = mask;
        }
        const int want_present = opp_rng_int(&st, 0, 1), want_qk = opp_rng_int(&st, 0, 1);
        opp_ref_attention24_tensors_t cpu = in, gpu = in;
        alloc_outputs(&a, &n, want_present, want_qk, &cpu);
        alloc_outputs(&a, &n, want_present, want_qk, &gpu);
        assert_opp_ok(opp_ref_attention24(&a, &cpu));
        assert_opp_ok(opp_a24g_run_host(ref, &a, &gpu, ws, stream));
        char what[160];
        const int before = r->failed;
        snprintf(what, sizeof(what), "random case %ld Y", i);
        compare(gpu.y, cpu.y, n.y, &a, what, r);
        snprintf(what, sizeof(what), "random case %ld present_key", i);
        compare(gpu.present_key, cpu.present_key, n.present_key, &a, what, r);
        snprintf(what, sizeof(what), "random case %ld present_value", i);
        compare(gpu.present_value, cpu.present_value, n.present_value, &a, what, r);
        snprintf(what, sizeof(what), "random case %ld qk_matmul_output (mode %d)", i,
                 (int)a.qk_matmul_output_mode);
        compare(gpu.qk_matmul_output, cpu.qk_matmul_output, n.qk, &a, what, r);
        r->cases++;
        r->identical += r->failed == before;
        free_outputs(&cpu);
        free_outputs(&gpu);
        free((void *)in.q);
        free((void *)in.k);
        free((void *)in.v);
        free((void *)in.past_key);
        free((void *)in.past_value);
        free(nonpad);
        free(mask);
    }
}
