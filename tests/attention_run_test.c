/*
 * attention_run_test.c - CPU tests of the packed run path's host side:
 * opp_packed_attention_workspace_size(), the workspace plan (counting ==
 * materialising), the EXACT rows of the dispatch table, and every argument
 * error opp_packed_attention_fwd() returns before its first CUDA call
 * (NULL and misaligned pointers, small or misaligned workspaces). Fake
 * device addresses are never dereferenced: each call fails its checks.
 * Needs no GPU. Run: bazel test //tests:attention_run_test
 */
#include <stdint.h>
#include <string.h>

#include "kernels/kernel_list.h"
#include "kernels/kernels.h"
#include "lib/internal/attention_plan.h"
#include "lib/internal/dispatch.h"
#include "lib/internal/problem.h"
#include "tests/test_util.h"

static void good_desc(opp_attention_desc_t *d) {
    opp_attention_desc_init(d);
    d->q_dtype = d->k_dtype = d->v_dtype = d->out_dtype = OPP_DTYPE_BF16;
    d->batch = 3;
    d->num_heads = 32;
    d->kv_num_heads = 8;
    d->head_size = 128;
    d->total_q = d->total_kv = 700;
    d->max_seqlen_q = d->max_seqlen_kv = 400;
    d->is_causal = 1;
}

#define P(addr) ((void *)(uintptr_t)(addr))

/* 256-byte aligned size of n bytes. */
static size_t align256(size_t n) {
    return (n + 255) / 256 * 256;
}

/* 256 bytes (the guard record) unless some sequence may split: f32 never
 * (no FAST kernel), 16-bit data with D <= 128 only above 1024 keys (512
 * from G 4); the
 * size is the same for every algorithm. */
static void test_workspace_size_is_the_guard_record(void **state) {
    (void)state;
    opp_attention_desc_t d;
    good_desc(&d);
    size_t bytes = 1;
    assert_opp_ok(opp_packed_attention_workspace_size(&d, &bytes)); /* L_kv <= 400 */
    assert_int_equal(bytes, 256);
    d.total_q = d.total_kv = INT32_MAX;
    d.max_seqlen_q = d.max_seqlen_kv = INT32_MAX;
    size_t auto_bytes = 0, exact_bytes = 0;
    assert_opp_ok(opp_packed_attention_workspace_size(&d, &auto_bytes));
    d.algo = OPP_ALGO_EXACT;
    assert_opp_ok(opp_packed_attention_workspace_size(&d, &exact_bytes));
    assert_true(auto_bytes > 256);
    assert_int_equal(exact_bytes, auto_bytes);
    d.head_size = d.v_head_size = 256; /* no split above DB 128 */
    assert_opp_ok(opp_packed_attention_workspace_size(&d, &bytes));
    assert_int_equal(bytes, 256);
    d.head_size = d.v_head_size = 128;
    d.q_dtype = d.k_dtype = d.v_dtype = d.out_dtype = OPP_DTYPE_F32;
    d.algo = OPP_ALGO_AUTO;
    assert_opp_ok(opp_packed_attention_workspace_size(&d, &bytes));
    assert_int_equal(bytes, 256); /* f32: the FFMA kernel has no split-KV, no partials */
    /* TF32X3 (f32, D <= 64) plans as FFMA: no partials */
    d.head_size = d.v_head_size = 64;
    d.algo = OPP_ALGO_TF32X3;
    assert_opp_ok(opp_packed_attention_workspace_size(&d, &bytes));
    assert_int_equal(bytes, 256);
    opp__problem_t p;
    assert_opp_ok(opp__problem_from_desc(&d, &p));
    assert_int_equal(opp__plan_split_rows(&p), 0);
}

/* The split-KV partials: rows = min(ceil(max_kv / S) min(total_q, B qmax),
 * (total_kv / S + B) qmax) with qmax = 64 / G, times Hq (Dv + 2) floats,
 * when max_kv exceeds T = 1024 keys (512 from G 4); times 4 in a build with
 * slice items where the launch has at most OPP__SPLIT_SLICE_ITEMS items. */
static void test_workspace_size_split_partials(void **state) {
    (void)state;
    const struct {
        int32_t batch, total_q, total_kv, max_kv, hq, hkv, dv;
        opp_algo_t algo;
    } cases[] = {
        {64, 64, 300000, 8192, 32, 8, 128, OPP_ALGO_AUTO},   /* decode: the first term */
        {2, 16384, 16384, 16384, 32, 8, 128, OPP_ALGO_FAST}, /* long prefill: B qmax */
        {3, 4000, 2100, 1025, 8, 8, 64, OPP_ALGO_FAST},      /* MHA: qmax 64 */
        {5, 5, INT32_MAX, INT32_MAX, 16, 2, 96, OPP_ALGO_AUTO},
        {8, 8, 4096, 513, 32, 8, 128, OPP_ALGO_AUTO},  /* G 4: more than 512 keys split */
        {1, 1, 1100, 1100, 32, 8, 128, OPP_ALGO_AUTO}, /* 16 items: slice items' bound */
        {1, 4, 1100, 1100, 32, 8, 128, OPP_ALGO_AUTO}, /* speculative: 4 tokens */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
        opp_attention_desc_t d;
        good_desc(&d);
        d.algo = cases[i].algo;
        d.batch = cases[i].batch;
        d.total_q = cases[i].total_q;
        d.total_kv = cases[i].total_kv;
        d.max_seqlen_q = cases[i].total_q;
        d.max_seqlen_kv = cases[i].max_kv;
        d.num_heads = cases[i].hq;
        d.kv_num_heads = cases[i].hkv;
        d.head_size = d.v_head_size = cases[i].dv;
        const int64_t g = cases[i].hq / cases[i].hkv, qmax = 64 / g, b = cases[i].batch;
        const int64_t q_split = cases[i].total_q < b * qmax ? cases[i].total_q : b * qmax;
        const int64_t rows_a = ((int64_t)cases[i].max_kv + 1023) / 1024 * q_split;
        const int64_t rows_b = ((int64_t)cases[i].total_kv / 1024 + b) * qmax;
        /* four slice partials a row where the split launch may run a split's
         * slices as items (OPP__SPLIT_SLICE_ITEMS, an A/B build's switch: at
         * most that many items, ceil(max_kv / S) B Hkv) */
        const int64_t items = ((int64_t)cases[i].max_kv + 1023) / 1024 * b * cases[i].hkv;
        const size_t slices =
            OPP__SPLIT_SLICE_ITEMS > 0 && items <= OPP__SPLIT_SLICE_ITEMS ? OPP__SPLIT_SLICES : 1;
        const size_t rows =
            (size_t)(rows_a < rows_b ? rows_a : rows_b) * (size_t)cases[i].hq * slices;
        const size_t want = 256 + align256(rows * (size_t)cases[i].dv * 4) + align256(rows * 8);
        size_t bytes = 0;
        assert_opp_ok(opp_packed_attention_workspace_size(&d, &bytes));
        if (bytes != want) {
            fail_msg("case %zu: %zu bytes, expected %zu", i, bytes, want);
        }
        /* no sequence can split: at most T keys, T = 1024, 512 from G 4 */
        d.max_seqlen_kv = d.total_kv = g >= 4 ? 512 : 1024;
        assert_opp_ok(opp_packed_attention_workspace_size(&d, &bytes));
        assert_int_equal(bytes, 256);
    }
}

/* workspace_size reports desc errors as opp_attention_desc_check does. */
static void test_workspace_size_rejects_bad_desc(void **state) {
    (void)state;
    opp_attention_desc_t d;
    good_desc(&d);
    size_t bytes = 0;
    assert_opp_status(opp_packed_attention_workspace_size(NULL, &bytes),
                      OPP_STATUS_BAD_PARAM_NULL_POINTER, "desc is NULL");
    assert_opp_status(opp_packed_attention_workspace_size(&d, NULL),
                      OPP_STATUS_BAD_PARAM_NULL_POINTER, "workspace_bytes is NULL");
    d.kv_num_heads = 5;
    assert_opp_status(opp_packed_attention_workspace_size(&d, &bytes),
                      OPP_STATUS_BAD_PARAM_KV_HEADS_NOT_DIVIDING, "kv_num_heads = 5");
    good_desc(&d);
    d.algo = (opp_algo_t)4;
    assert_opp_status(opp_packed_attention_workspace_size(&d, &bytes), OPP_STATUS_BAD_PARAM_ALGO,
                      "algo = 4");
}

/* Counting and materialising run the same layout: same size, and each
 * region lands at base + its counted offset, 256-byte aligned. */
static void test_plan_count_equals_materialize(void **state) {
    (void)state;
    opp_attention_desc_t d;
    good_desc(&d);
    opp__problem_t p;
    assert_opp_ok(opp__problem_from_desc(&d, &p));
    opp__plan_t counted, placed;
    opp__plan_layout(&p, NULL, &counted);
    assert_null(counted.guard_record);
    assert_int_equal(counted.workspace_bytes % 256, 0);
    char *base = (char *)P(0x7f0000000000ull);
    opp__plan_layout(&p, base, &placed);
    assert_int_equal(placed.workspace_bytes, counted.workspace_bytes);
    assert_ptr_equal(placed.guard_record, base); /* device_status relies on offset 0 */
    assert_true(counted.workspace_bytes >= OPP__GUARD_RECORD_BYTES);
    opp__plan_t bound;
    assert_opp_ok(opp__plan_bind(&p, base, counted.workspace_bytes, &bound));
    assert_ptr_equal(bound.guard_record, base);
}

/* max_seqlen is an upper bound only; the problem the run uses (and sizes
 * the kernels' grids from) holds min(max_seqlen, total), which still
 * bounds every sequence since cu_seqlens[batch] <= total. */
static void test_problem_bound_is_max_seqlen_capped_by_total(void **state) {
    (void)state;
    opp_attention_desc_t d;
    good_desc(&d);
    d.total_q = 700;
    d.total_kv = 900;
    d.max_seqlen_q = INT32_MAX;
    d.max_seqlen_kv = 901;
    opp__problem_t p;
    assert_opp_ok(opp__problem_from_desc(&d, &p));
    assert_int_equal(p.max_seqlen_q, 700);
    assert_int_equal(p.max_seqlen_kv, 900);
    assert_int_equal(p.total_q, 700);
    assert_int_equal(p.total_kv, 900);
    d.max_seqlen_q = 5;
    d.max_seqlen_kv = 0;
    assert_opp_ok(opp__problem_from_desc(&d, &p));
    assert_int_equal(p.max_seqlen_q, 5);
    assert_int_equal(p.max_seqlen_kv, 0);
}

/* The EXACT status of (dtype, D, Dv) on compute capability sm. */
static opp_status_t exact_select(opp_dtype_t dtype, int32_t d, int32_t dv, int32_t sm) {
    opp_attention_desc_t desc;
    good_desc(&desc);
    desc.q_dtype = desc.k_dtype = desc.v_dtype = desc.out_dtype = dtype;
    desc.num_heads = desc.kv_num_heads = 1;
    desc.head_size = d;
    desc.v_head_size = dv;
    desc.algo = OPP_ALGO_EXACT;
    opp__problem_t p;
    const opp_status_t st = opp__problem_from_desc(&desc, &p);
    if (st != OPP_STATUS_SUCCESS) {
        return st;
    }
    const opp__kernel_row_t *row;
    return opp__dispatch_select(&p, sm, &row);
}

/* Every dtype x (D, Dv) in 1..256 has an EXACT kernel on sm_80 and sm_90,
 * in 1..128 on sm_86 and sm_89; the table's reasons say what is missing. */
static void test_dispatch_covers_all_head_sizes(void **state) {
    (void)state;
    const opp_dtype_t dtypes[3] = {OPP_DTYPE_F32, OPP_DTYPE_F16, OPP_DTYPE_BF16};
    const int32_t sms[3] = {0, 80, 90};
    for (int s = 0; s < 3; ++s) {
        for (int t = 0; t < 3; ++t) {
            for (int32_t d = 1; d <= 256; d += (d < 20 ? 1 : 7)) {
                assert_opp_ok(exact_select(dtypes[t], d, 1, sms[s]));
                assert_opp_ok(exact_select(dtypes[t], 1, d, sms[s]));
                assert_opp_ok(exact_select(dtypes[t], d, 257 - d, sms[s]));
            }
            assert_opp_ok(exact_select(dtypes[t], 256, 256, sms[s]));
        }
    }
    /* 99 KB GPUs: every head size up to 128; above, the reason says why not */
    const int32_t small[2] = {86, 89};
    for (int s = 0; s < 2; ++s) {
        for (int t = 0; t < 3; ++t) {
            for (int32_t d = 1; d <= 128; d += (d < 20 ? 1 : 7)) {
                assert_opp_ok(exact_select(dtypes[t], d, 1, small[s]));
                assert_opp_ok(exact_select(dtypes[t], 1, d, small[s]));
                assert_opp_ok(exact_select(dtypes[t], d, 129 - d, small[s]));
            }
            assert_opp_ok(exact_select(dtypes[t], 128, 128, small[s]));
            assert_opp_status(exact_select(dtypes[t], 129, 64, small[s]),
                              OPP_STATUS_NOT_SUPPORTED_ARCH, "up to 128");
            assert_opp_status(exact_select(dtypes[t], 8, 256, small[s]),
                              OPP_STATUS_NOT_SUPPORTED_ARCH, "_d256_bm32, needs 142720 bytes");
        }
    }
    assert_opp_status(exact_select(OPP_DTYPE_BF16, 257, 64, 90), OPP_STATUS_NOT_SUPPORTED_HEAD_SIZE,
                      "head_size = 257");
    assert_opp_status(exact_select(OPP_DTYPE_F64, 64, 64, 90), OPP_STATUS_NOT_SUPPORTED_DTYPE,
                      "f64");
    assert_opp_status(exact_select(OPP_DTYPE_F16, 64, 64, 75), OPP_STATUS_NOT_SUPPORTED_ARCH,
                      "compute capability 7.5 is not supported");
}

/* desc and varlen errors come first, before any pointer is looked at. */
static void test_fwd_rejects_bad_desc_and_varlen(void **state) {
    (void)state;
    opp_attention_desc_t d;
    good_desc(&d);
    const opp_varlen_t varlen = {(const int32_t *)P(0x1000), (const int32_t *)P(0x2000)};
    assert_opp_status(opp_packed_attention_fwd(NULL, &varlen, P(0x10000), P(0x10000), P(0x10000),
                                               P(0x10000), P(0x20000), 256, NULL),
                      OPP_STATUS_BAD_PARAM_NULL_POINTER, "desc is NULL");
    d.head_size = 512;
    assert_opp_status(opp_packed_attention_fwd(&d, &varlen, P(0x10000), P(0x10000), P(0x10000),
                                               P(0x10000), P(0x20000), 256, NULL),
                      OPP_STATUS_NOT_SUPPORTED_HEAD_SIZE, "head_size = 512");
    good_desc(&d);
    assert_opp_status(opp_packed_attention_fwd(&d, NULL, P(0x10000), P(0x10000), P(0x10000),
                                               P(0x10000), P(0x20000), 256, NULL),
                      OPP_STATUS_BAD_PARAM_NULL_POINTER, "varlen is NULL");
    const opp_varlen_t no_q = {NULL, (const int32_t *)P(0x2000)};
    assert_opp_status(opp_packed_attention_fwd(&d, &no_q, P(0x10000), P(0x10000), P(0x10000),
                                               P(0x10000), P(0x20000), 256, NULL),
                      OPP_STATUS_BAD_PARAM_NULL_POINTER, "varlen->cu_seqlens_q is NULL");
    const opp_varlen_t odd_kv = {(const int32_t *)P(0x1000), (const int32_t *)P(0x2002)};
    assert_opp_status(opp_packed_attention_fwd(&d, &odd_kv, P(0x10000), P(0x10000), P(0x10000),
                                               P(0x10000), P(0x20000), 256, NULL),
                      OPP_STATUS_BAD_PARAM_MISALIGNED,
                      "varlen->cu_seqlens_kv = 0x2002 is not 4-byte aligned");
}

/* NULL and misaligned tensors, then the workspace: NULL, misaligned, small. */
static void test_fwd_rejects_bad_pointers_and_workspace(void **state) {
    (void)state;
    opp_attention_desc_t d;
    good_desc(&d);
    const opp_varlen_t vl = {(const int32_t *)P(0x1000), (const int32_t *)P(0x2000)};
    void *t = P(0x10000), *ws = P(0x20000);
    assert_opp_status(opp_packed_attention_fwd(&d, &vl, NULL, t, t, t, ws, 256, NULL),
                      OPP_STATUS_BAD_PARAM_NULL_POINTER, "q is NULL but has 700 rows");
    assert_opp_status(opp_packed_attention_fwd(&d, &vl, t, NULL, t, t, ws, 256, NULL),
                      OPP_STATUS_BAD_PARAM_NULL_POINTER, "k is NULL");
    assert_opp_status(opp_packed_attention_fwd(&d, &vl, t, t, P(0x10004), t, ws, 256, NULL),
                      OPP_STATUS_BAD_PARAM_MISALIGNED, "v = 0x10004 is not 16-byte aligned");
    assert_opp_status(opp_packed_attention_fwd(&d, &vl, t, t, t, P(0x10008), ws, 256, NULL),
                      OPP_STATUS_BAD_PARAM_MISALIGNED, "out = 0x10008 is not 16-byte aligned");
    assert_opp_status(opp_packed_attention_fwd(&d, &vl, t, t, t, t, NULL, 256, NULL),
                      OPP_STATUS_BAD_PARAM_NULL_POINTER,
                      "workspace is NULL (256 bytes are required)");
    assert_opp_status(opp_packed_attention_fwd(&d, &vl, t, t, t, t, P(0x20100 - 16), 256, NULL),
                      OPP_STATUS_BAD_PARAM_MISALIGNED, "workspace = 0x200f0 is not 256-byte");
    assert_opp_status(opp_packed_attention_fwd(&d, &vl, t, t, t, t, ws, 0, NULL),
                      OPP_STATUS_BAD_PARAM_WORKSPACE,
                      "workspace_bytes = 0 is below the 256 bytes this descriptor needs");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_workspace_size_is_the_guard_record),
        cmocka_unit_test(test_workspace_size_split_partials),
        cmocka_unit_test(test_workspace_size_rejects_bad_desc),
        cmocka_unit_test(test_plan_count_equals_materialize),
        cmocka_unit_test(test_problem_bound_is_max_seqlen_capped_by_total),
        cmocka_unit_test(test_dispatch_covers_all_head_sizes),
        cmocka_unit_test(test_fwd_rejects_bad_desc_and_varlen),
        cmocka_unit_test(test_fwd_rejects_bad_pointers_and_workspace),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
