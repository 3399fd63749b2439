/*
 * attention24_nonpad_test.c - the Attention-24 layout entry
 * (opp_attention24_desc_*, opp_attention24_nonpad_*):
 *   CPU: defaults, every validation failure (status + message), workspace
 *        size, and run-path argument errors returned before any CUDA call;
 *   GPU: on the padded derivation of generated logical batches (4D and 3D,
 *        padding poisoned with large finite values and with NaN, queries at
 *        the tail of their block), the valid rows of Y are bit-identical to
 *        the packed GPU output and to the CPU reference; padding keys are
 *        never read.
 * GPU tests skip() without a CUDA device.
 * Run (Bazel): bazel test //tests:attention24_nonpad_test --test_output=all
 * Run (GPU machine): ./attention24_nonpad_test (no data files)
 * Environment: OPP_GPU_TEST_BATCHES (default 300; this test runs a third of
 *   them, each in 4 padded variants), OPP_GPU_TEST_SEED (default 20261203).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/logical_batch.h"
#include "tests/exact_gpu_util.h"
#include "tests/gpu_util.h"
#include "tests/test_util.h"

// --- CPU: descriptor and arguments

static void good_desc(opp_attention24_desc_t *d) {
    opp_attention24_desc_init(d);
    d->q_dtype = d->k_dtype = d->v_dtype = d->out_dtype = OPP_DTYPE_BF16;
    d->batch = 2;
    d->num_heads = 8;
    d->kv_num_heads = 2;
    d->head_size = 64;
    d->q_seqlen = 10;
    d->kv_seqlen = 12;
}

/* init sets rank 4, the AUTO algo, and zeros elsewhere. */
static void test_attention24_desc_init_sets_defaults(void **state) {
    (void)state;
    opp_attention24_desc_t d;
    memset(&d, 0x5A, sizeof(d));
    opp_attention24_desc_init(&d);
    assert_int_equal(d.input_rank, 4);
    assert_int_equal(d.algo, OPP_ALGO_AUTO);
    assert_int_equal(d.q_dtype, OPP_DTYPE_UNDEFINED);
    assert_int_equal(d.batch, 0);
    assert_true(d.scale == 0.0f && d.softcap == 0.0f);
    opp_attention24_desc_init(NULL); /* no crash */
}

/* Every field is validated, with the packed descriptor's messages for the
 * shared ones. */
static void test_attention24_desc_check_rejects_each_bad_field(void **state) {
    (void)state;
    opp_attention24_desc_t d;
    good_desc(&d);
    assert_opp_ok(opp_attention24_desc_check(&d));
    assert_opp_status(opp_attention24_desc_check(NULL), OPP_STATUS_BAD_PARAM_NULL_POINTER,
                      "desc is NULL");
    good_desc(&d);
    d.v_dtype = OPP_DTYPE_F16;
    assert_opp_status(opp_attention24_desc_check(&d), OPP_STATUS_BAD_PARAM_DTYPE_MISMATCH,
                      "v_dtype = f16 differs from q_dtype = bf16");
    good_desc(&d);
    d.q_dtype = d.k_dtype = d.v_dtype = d.out_dtype = OPP_DTYPE_F64;
    assert_opp_status(opp_attention24_desc_check(&d), OPP_STATUS_NOT_SUPPORTED_DTYPE, "f64");
    good_desc(&d);
    d.kv_num_heads = 3;
    assert_opp_status(opp_attention24_desc_check(&d), OPP_STATUS_BAD_PARAM_KV_HEADS_NOT_DIVIDING,
                      "num_heads = 8 is not a multiple of kv_num_heads = 3");
    good_desc(&d);
    d.head_size = 300;
    assert_opp_status(opp_attention24_desc_check(&d), OPP_STATUS_NOT_SUPPORTED_HEAD_SIZE,
                      "head_size = 300");
    good_desc(&d);
    d.scale = -1.0f;
    assert_opp_status(opp_attention24_desc_check(&d), OPP_STATUS_BAD_PARAM_SCALE, "scale = -1");
    good_desc(&d);
    d.is_causal = 2;
    assert_opp_status(opp_attention24_desc_check(&d), OPP_STATUS_BAD_PARAM_IS_CAUSAL,
                      "is_causal = 2");
    good_desc(&d);
    d.input_rank = 2;
    assert_opp_status(opp_attention24_desc_check(&d), OPP_STATUS_BAD_PARAM_SHAPE,
                      "input_rank = 2 must be 3 or 4");
    good_desc(&d);
    d.batch = 0;
    assert_opp_status(opp_attention24_desc_check(&d), OPP_STATUS_BAD_PARAM_BATCH, "batch = 0");
    good_desc(&d);
    d.q_seqlen = -1;
    assert_opp_status(opp_attention24_desc_check(&d), OPP_STATUS_BAD_PARAM_SHAPE,
                      "q_seqlen = -1 must be >= 0");
    good_desc(&d);
    d.kv_seqlen = -5;
    assert_opp_status(opp_attention24_desc_check(&d), OPP_STATUS_BAD_PARAM_SHAPE,
                      "kv_seqlen = -5 must be >= 0");
    good_desc(&d);
    d.batch = INT32_MAX;
    d.q_seqlen = INT32_MAX;
    d.num_heads = 1 << 30;
    d.kv_num_heads = 1;
    assert_opp_status(opp_attention24_desc_check(&d), OPP_STATUS_BAD_PARAM_SHAPE,
                      "exceeds INT64_MAX bytes");
}

/* The workspace is the 256-byte guard record; errors as desc_check. */
static void test_attention24_workspace_size_is_the_guard_record(void **state) {
    (void)state;
    opp_attention24_desc_t d;
    good_desc(&d);
    size_t bytes = 0;
    assert_opp_ok(opp_attention24_nonpad_workspace_size(&d, &bytes));
    assert_int_equal(bytes, 256);
    assert_opp_status(opp_attention24_nonpad_workspace_size(&d, NULL),
                      OPP_STATUS_BAD_PARAM_NULL_POINTER, "workspace_bytes is NULL");
    d.input_rank = 5;
    assert_opp_status(opp_attention24_nonpad_workspace_size(&d, &bytes), OPP_STATUS_BAD_PARAM_SHAPE,
                      "input_rank = 5");
}

/* Bad pointers and workspaces are refused before any CUDA call (the fake
 * addresses below are never dereferenced). */
static void test_attention24_fwd_rejects_bad_arguments_before_cuda(void **state) {
    (void)state;
    opp_attention24_desc_t d;
    good_desc(&d);
    void *p = (void *)(uintptr_t)0x10000, *ws = (void *)(uintptr_t)0x20000;
    const int64_t *np = (const int64_t *)(uintptr_t)0x30000;
    assert_opp_status(opp_attention24_nonpad_fwd(&d, NULL, p, p, p, p, ws, 256, NULL),
                      OPP_STATUS_BAD_PARAM_NULL_POINTER, "nonpad_kv_seqlen is NULL");
    assert_opp_status(opp_attention24_nonpad_fwd(&d, (const int64_t *)(uintptr_t)0x30004, p, p, p,
                                                 p, ws, 256, NULL),
                      OPP_STATUS_BAD_PARAM_MISALIGNED, "is not 8-byte aligned");
    assert_opp_status(opp_attention24_nonpad_fwd(&d, np, NULL, p, p, p, ws, 256, NULL),
                      OPP_STATUS_BAD_PARAM_NULL_POINTER, "q is NULL but has 20 rows");
    assert_opp_status(opp_attention24_nonpad_fwd(&d, np, p, p, (char *)p + 8, p, ws, 256, NULL),
                      OPP_STATUS_BAD_PARAM_MISALIGNED, "v = 0x10008 is not 16-byte aligned");
    assert_opp_status(opp_attention24_nonpad_fwd(&d, np, p, p, p, NULL, ws, 256, NULL),
                      OPP_STATUS_BAD_PARAM_NULL_POINTER, "y is NULL");
    assert_opp_status(opp_attention24_nonpad_fwd(&d, np, p, p, p, p, NULL, 256, NULL),
                      OPP_STATUS_BAD_PARAM_NULL_POINTER, "workspace is NULL");
    assert_opp_status(opp_attention24_nonpad_fwd(&d, np, p, p, p, p, (char *)ws + 128, 256, NULL),
                      OPP_STATUS_BAD_PARAM_MISALIGNED, "is not 256-byte aligned");
    assert_opp_status(opp_attention24_nonpad_fwd(&d, np, p, p, p, p, ws, 255, NULL),
                      OPP_STATUS_BAD_PARAM_WORKSPACE,
                      "workspace_bytes = 255 is below the 256 bytes");
    d.head_size = 0;
    assert_opp_status(opp_attention24_nonpad_fwd(&d, np, p, p, p, p, ws, 256, NULL),
                      OPP_STATUS_BAD_PARAM_HEAD_SIZE, "head_size = 0");
}

// --- GPU: the padded layout against the packed path

/* Runs the padded representation of lb through opp_attention24_nonpad_fwd
 * and returns the valid rows of Y in packed order. */
static void *run_padded_gpu(const opp_lb_t *lb, int32_t rank, opp_lb_poison_t poison) {
    opp_lb_padded_t pad;
    assert_int_equal(opp_lb_to_padded(lb, rank, poison, &pad), 0);
    const size_t es = opp_dtype_size(lb->dtype);
    opp_attention24_desc_t d;
    opp_attention24_desc_init(&d);
    d.algo = OPP_ALGO_EXACT; /* compared bit for bit with the exact packed run */
    d.q_dtype = d.k_dtype = d.v_dtype = d.out_dtype = lb->dtype;
    d.input_rank = rank;
    d.batch = lb->batch;
    d.num_heads = lb->num_heads;
    d.kv_num_heads = lb->kv_num_heads;
    d.head_size = lb->head_size;
    d.v_head_size = lb->v_head_size;
    d.q_seqlen = pad.desc.q_seqlen;
    d.kv_seqlen = pad.desc.kv_seqlen;
    d.scale = lb->scale;
    d.is_causal = lb->is_causal;
    d.softcap = lb->softcap;
    void *q = opp_test_gpu_alloc(pad.q_elems * es), *k = opp_test_gpu_alloc(pad.k_elems * es);
    void *v = opp_test_gpu_alloc(pad.v_elems * es), *y = opp_test_gpu_alloc(pad.y_elems * es);
    int64_t *np = opp_test_gpu_alloc(sizeof(int64_t) * (size_t)lb->batch);
    opp_test_h2d(q, pad.q, pad.q_elems * es);
    opp_test_h2d(k, pad.k, pad.k_elems * es);
    opp_test_h2d(v, pad.v, pad.v_elems * es);
    opp_test_h2d(y, pad.y, pad.y_elems * es); /* NaN poison */
    opp_test_h2d(np, pad.nonpad, sizeof(int64_t) * (size_t)lb->batch);
    size_t ws_bytes = 0;
    assert_opp_ok(opp_attention24_nonpad_workspace_size(&d, &ws_bytes));
    void *ws = opp_test_gpu_alloc(ws_bytes);
    assert_opp_ok(opp_attention24_nonpad_fwd(&d, np, q, k, v, y, ws, ws_bytes, NULL));
    opp_test_gpu_sync();
    assert_opp_ok(opp_packed_attention_device_status(ws, ws_bytes, NULL));
    opp_test_d2h(pad.y, y, pad.y_elems * es);
    void *out = malloc((opp_test_out_elems(lb) + 1) * es);
    assert_non_null(out);
    opp_lb_padded_valid_rows(lb, &pad, pad.y, out);
    opp_test_gpu_free(q);
    opp_test_gpu_free(k);
    opp_test_gpu_free(v);
    opp_test_gpu_free(y);
    opp_test_gpu_free(np);
    opp_test_gpu_free(ws);
    opp_lb_padded_free(&pad);
    return out;
}

/* 4D and 3D, finite and NaN padding: the valid rows equal the packed GPU
 * output and the CPU reference bit for bit. */
static void test_attention24_nonpad_valid_rows_equal_packed(void **state) {
    (void)state;
    OPP_TEST_REQUIRE_GPU();
    const long batches = opp_test_env_long("OPP_GPU_TEST_BATCHES", 300) / 3 + 1;
    const uint64_t seed = (uint64_t)opp_test_env_long("OPP_GPU_TEST_SEED", 20261203) + 17u;
    opp_lb_spec_t spec;
    opp_lb_spec_random(&spec);
    for (long i = 0; i < batches; ++i) {
        opp_lb_t lb;
        assert_int_equal(opp_lb_generate(&spec, seed + (uint64_t)i * 104729u, &lb), 0);
        char what[600], desc[512];
        opp_lb_describe(&lb, desc, sizeof(desc));
        void *want = opp_test_packed_ref(&lb);
        void *packed = opp_test_packed_gpu(&lb, NULL);
        snprintf(what, sizeof(what), "packed GPU, batch %ld: %s", i, desc);
        opp_test_assert_out_equal(&lb, packed, want, what);
        for (int32_t rank = 3; rank <= 4; ++rank) {
            for (int p = 0; p < 2; ++p) {
                void *got = run_padded_gpu(&lb, rank, (opp_lb_poison_t)p);
                snprintf(what, sizeof(what), "padded rank %d, %s poison, batch %ld: %s", (int)rank,
                         p ? "NaN" : "finite", i, desc);
                opp_test_assert_out_equal(&lb, got, packed, what);
                free(got);
            }
        }
        free(want);
        free(packed);
        opp_lb_free(&lb);
    }
    printf("Attention-24 layout: %ld batches x (4D, 3D) x (finite, NaN padding): valid rows "
           "bit-identical to the packed GPU output and the CPU reference\n",
           batches);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_attention24_desc_init_sets_defaults),
        cmocka_unit_test(test_attention24_desc_check_rejects_each_bad_field),
        cmocka_unit_test(test_attention24_workspace_size_is_the_guard_record),
        cmocka_unit_test(test_attention24_fwd_rejects_bad_arguments_before_cuda),
        cmocka_unit_test(test_attention24_nonpad_valid_rows_equal_packed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
