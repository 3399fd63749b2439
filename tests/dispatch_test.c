/*
 * dispatch_test.c - CPU tests of the dispatch table (lib/dispatch.c,
 * kernels/kernel_list.h) and of the public kernel query: the rows are
 * well formed, every architecture gets the tile the table promises, AUTO
 * falls back quietly, and every "no kernel" answer names its reason. On a
 * machine without a GPU also: the run path answers NO_DEVICE after every
 * host-side check passed. Run: bazel test //tests:dispatch_test
 */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "kernels/kernel_list.h"
#include "lib/internal/dispatch.h"
#include "lib/internal/problem.h"
#include "tests/test_util.h"

#define P(addr) ((void *)(uintptr_t)(addr))

static opp_attention_desc_t packed_desc(opp_dtype_t dtype, int32_t d, int32_t dv, opp_algo_t algo) {
    opp_attention_desc_t desc;
    opp_attention_desc_init(&desc);
    desc.q_dtype = desc.k_dtype = desc.v_dtype = desc.out_dtype = dtype;
    desc.batch = 2;
    desc.num_heads = 8;
    desc.kv_num_heads = 2;
    desc.head_size = d;
    desc.v_head_size = dv;
    desc.total_q = desc.total_kv = 100;
    desc.max_seqlen_q = desc.max_seqlen_kv = 60;
    desc.algo = algo;
    return desc;
}

static opp_attention24_desc_t padded_desc(opp_dtype_t dtype, int32_t d, opp_algo_t algo) {
    opp_attention24_desc_t desc;
    opp_attention24_desc_init(&desc);
    desc.q_dtype = desc.k_dtype = desc.v_dtype = desc.out_dtype = dtype;
    desc.batch = 2;
    desc.num_heads = 8;
    desc.kv_num_heads = 2;
    desc.head_size = d;
    desc.q_seqlen = 30;
    desc.kv_seqlen = 50;
    desc.algo = algo;
    return desc;
}

/* Names are unique, every row fits some architecture's shared memory, its
 * alignment divides its DMAX, the rows of one (algo, dtype) family never
 * shrink DMAX (the first fitting row is the smallest tile), EXACT rows
 * have key tiles of whole summation chunks and the kernel's shared memory,
 * and the TF32X3 rows are f32 sm_90a rows of the 3xTF32 kernel's tile. */
static void test_rows_well_formed(void **state) {
    (void)state;
    assert_true(OPP__KERNEL_COUNT > 0);
    for (int i = 0; i < OPP__KERNEL_COUNT; ++i) {
        const opp__kernel_row_t *r = &opp__kernel_table[i];
        assert_int_equal(r->id, i);
        assert_true(r->algo == OPP_ALGO_EXACT || r->algo == OPP_ALGO_FAST ||
                    r->algo == OPP_ALGO_TF32X3);
        assert_true(r->dmax >= 1 && r->dmax <= OPP_MAX_HEAD_SIZE);
        assert_true(r->align >= 1 && r->dmax % r->align == 0);
        assert_true(r->sm == 80 || (r->sm == 90 && r->algo != OPP_ALGO_EXACT));
        if (r->algo == OPP_ALGO_TF32X3) {
            assert_int_equal(r->dtype, OPP_DTYPE_F32);
            assert_int_equal(r->sm, 90);
            assert_int_equal(r->align, 4);
#if OPP__TF32X3_WS /* the warp-specialised kernel: producer + NC consumers */
            assert_int_equal(r->bm, 64 * OPP__TF32X3_WS_NC);
            assert_int_equal(r->threads, 128 * (OPP__TF32X3_WS_NC + 1));
            assert_int_equal(r->smem_bytes, OPP__TF32X3_WS_SMEM_BYTES(r->dmax));
#else /* one warpgroup */
            assert_int_equal(r->bm, 64);
            assert_int_equal(r->threads, 128);
            assert_int_equal(r->smem_bytes, OPP__TF32X3_SMEM_BYTES(r->dmax));
#endif
        }
        assert_true(r->smem_bytes <= opp__arch_smem_limit(90));
        assert_true(r->bm > 0 && r->bn > 0 && r->threads > 0 && r->threads <= 1024);
        if (r->algo == OPP_ALGO_EXACT) {
            assert_true(r->bn == 64 || r->bn == 128);
            assert_int_equal(r->smem_bytes, OPP__EXACT_SMEM_BYTES(r->dmax, r->bm, r->bn));
        }
        for (int j = 0; j < i; ++j) {
            const opp__kernel_row_t *o = &opp__kernel_table[j];
            assert_string_not_equal(r->name, o->name);
            if (o->algo == r->algo && o->dtype == r->dtype && o->sm == r->sm) {
                assert_true(o->dmax <= r->dmax);
            }
            if (o->algo == r->algo && o->dtype == r->dtype && o->sm != r->sm) {
                assert_true(o->sm > r->sm); /* the Hopper rows first: they win on 9.0 */
            }
        }
    }
    assert_int_equal(opp__arch_smem_limit(75), 0);
    assert_true(opp__arch_smem_limit(80) > opp__arch_smem_limit(86));
    assert_true(opp__arch_smem_limit(90) > opp__arch_smem_limit(80));
}

/* The query names the tile each architecture gets. */
static void test_query_names_the_kernel(void **state) {
    (void)state;
    const char *name = "x";
    opp_attention_desc_t d = packed_desc(OPP_DTYPE_BF16, 128, 0, OPP_ALGO_EXACT);
    assert_opp_ok(opp_attention_kernel_query(&d, 90, &name));
    assert_string_equal(name, "exact_bf16_d128_bm64");
    assert_opp_ok(opp_attention_kernel_query(&d, 80, &name));
    assert_string_equal(name, "exact_bf16_d128_bm32");
    d = packed_desc(OPP_DTYPE_F32, 64, 256, OPP_ALGO_EXACT);
    assert_opp_ok(opp_attention_kernel_query(&d, 90, &name));
    assert_string_equal(name, "exact_f32_d256_bm32");
    opp_attention24_desc_t a = padded_desc(OPP_DTYPE_F16, 96, OPP_ALGO_EXACT);
    assert_opp_ok(opp_attention24_kernel_query(&a, 90, &name));
    assert_string_equal(name, "exact_f16_d128_bm64");
}

/* The kernel name desc gets on sm (asserts success). */
static const char *query(const opp_attention_desc_t *d, int32_t sm) {
    const char *name = NULL;
    assert_opp_ok(opp_attention_kernel_query(d, sm, &name));
    return name;
}

/* FAST rows: the smallest bucket that holds D and Dv - on 9.0 the Hopper
 * rows' (64, 128, 256), elsewhere the flash rows', with the 99 KB tiles on
 * sm_86 / sm_89; G > 128 or a stride of 2^40 bytes leaves the Hopper rows
 * for the flash rows; AUTO
 * takes FAST where it serves and EXACT elsewhere. */
static void test_fast_rows_and_auto(void **state) {
    (void)state;
    opp_attention_desc_t d = packed_desc(OPP_DTYPE_BF16, 128, 0, OPP_ALGO_AUTO);
    assert_string_equal(query(&d, 90), "hopper_bf16_d128");
    assert_string_equal(query(&d, 80), "flash_bf16_d128");
    assert_string_equal(query(&d, 86), "flash_bf16_d128");
    assert_string_equal(query(&d, 100), "flash_bf16_d128"); /* newer: the compute_80 PTX */
    d.num_heads = 256;
    d.kv_num_heads = 1; /* G = 256 > BM */
    assert_string_equal(query(&d, 90), "flash_bf16_d128");
    d.kv_num_heads = 2; /* G = 128 */
    assert_string_equal(query(&d, 90), "hopper_bf16_d128");
    /* a row stride of 2^40 bytes or more has no TMA tensor map: a flash row */
    d = packed_desc(OPP_DTYPE_BF16, 128, 0, OPP_ALGO_FAST);
    d.k_row_stride = ((int64_t)1 << 39);
    assert_string_equal(query(&d, 90), "flash_bf16_d128");
    d.k_row_stride = ((int64_t)1 << 39) - 8;
    assert_string_equal(query(&d, 90), "hopper_bf16_d128");
    d = packed_desc(OPP_DTYPE_F16, 256, 0, OPP_ALGO_FAST);
    assert_string_equal(query(&d, 90), "hopper_f16_d256");
    assert_string_equal(query(&d, 80), "flash_f16_d256");
    assert_string_equal(query(&d, 89), "flash_f16_d256_bm64");
    d = packed_desc(OPP_DTYPE_BF16, 192, 128, OPP_ALGO_FAST);
    assert_string_equal(query(&d, 90), "hopper_bf16_d256");
    assert_string_equal(query(&d, 80), "flash_bf16_d192");
    assert_string_equal(query(&d, 86), "flash_bf16_d192_bm64");
    d = packed_desc(OPP_DTYPE_F16, 64, 256, OPP_ALGO_FAST); /* Dv decides the bucket */
    assert_string_equal(query(&d, 90), "hopper_f16_d256");
    assert_string_equal(query(&d, 80), "flash_f16_d256");
    d = packed_desc(OPP_DTYPE_F16, 32, 24, OPP_ALGO_AUTO);
    assert_string_equal(query(&d, 90), "hopper_f16_d64");
    assert_string_equal(query(&d, 80), "flash_f16_d32");
    d = packed_desc(OPP_DTYPE_F16, 72, 0, OPP_ALGO_AUTO);
    assert_string_equal(query(&d, 90), "hopper_f16_d128");
    assert_string_equal(query(&d, 80), "flash_f16_d96");
    /* f32: the FFMA rows (multiples of 4; the DB 128 tile needs 116 KB) */
    d = packed_desc(OPP_DTYPE_F32, 128, 0, OPP_ALGO_AUTO);
    assert_string_equal(query(&d, 90), "ffma_f32_d128");
    assert_string_equal(query(&d, 80), "ffma_f32_d128");
    assert_string_equal(query(&d, 86), "exact_f32_d128_bm32_bn64");
    d = packed_desc(OPP_DTYPE_F32, 40, 0, OPP_ALGO_AUTO);
    assert_string_equal(query(&d, 86), "ffma_f32_d64");
    d = packed_desc(OPP_DTYPE_F32, 200, 0, OPP_ALGO_AUTO);
    assert_string_equal(query(&d, 90), "ffma_f32_d256");
    assert_string_equal(query(&d, 80), "exact_f32_d256_bm32");
    /* AUTO falls back to EXACT: f32 head sizes not multiples of 4, 16-bit
     * ones not multiples of 8, strides */
    d = packed_desc(OPP_DTYPE_F32, 126, 0, OPP_ALGO_AUTO);
    assert_string_equal(query(&d, 90), "exact_f32_d128_bm64");
    d = packed_desc(OPP_DTYPE_BF16, 100, 0, OPP_ALGO_AUTO);
    assert_string_equal(query(&d, 90), "exact_bf16_d128_bm64");
    d = packed_desc(OPP_DTYPE_BF16, 128, 0, OPP_ALGO_AUTO);
    d.k_row_stride = 2 * 128 + 4;
    assert_string_equal(query(&d, 90), "exact_bf16_d128_bm64");
    const char *name = "x";
    d.algo = OPP_ALGO_FAST;
    assert_opp_status(opp_attention_kernel_query(&d, 90, &name), OPP_STATUS_NOT_SUPPORTED_FEATURE,
                      "k 260");
    opp_attention24_desc_t a = padded_desc(OPP_DTYPE_BF16, 128, OPP_ALGO_AUTO);
    assert_opp_ok(opp_attention24_kernel_query(&a, 90, &name));
    assert_string_equal(name, "hopper_bf16_d128");
    assert_opp_ok(opp_attention24_kernel_query(&a, 89, &name));
    assert_string_equal(name, "flash_bf16_d128");
}

/* 99 KB GPUs (sm_86, sm_89) get the 64-key tiles for D, Dv <= 128 in every
 * dtype; sm_80 and sm_90 keep theirs. Head sizes above 128 do not fit there,
 * and the reason names the smallest tile, its bytes and the limit. */
static void test_query_99kb_gets_bn64_tiles(void **state) {
    (void)state;
    static const struct {
        opp_dtype_t dtype;
        const char *name;
    } want[3] = {{OPP_DTYPE_F32, "exact_f32_d128_bm32_bn64"},
                 {OPP_DTYPE_F16, "exact_f16_d128_bm32_bn64"},
                 {OPP_DTYPE_BF16, "exact_bf16_d128_bm32_bn64"}};
    const int32_t sms[2] = {86, 89};
    const char *name = "x";
    for (int s = 0; s < 2; ++s) {
        for (int t = 0; t < 3; ++t) {
            const int32_t dims[4][2] = {{1, 1}, {64, 64}, {100, 37}, {128, 128}};
            for (int k = 0; k < 4; ++k) {
                opp_attention_desc_t d =
                    packed_desc(want[t].dtype, dims[k][0], dims[k][1], OPP_ALGO_EXACT);
                assert_opp_ok(opp_attention_kernel_query(&d, sms[s], &name));
                assert_string_equal(name, want[t].name);
                d.algo = OPP_ALGO_AUTO; /* FAST where it serves: 16-bit, multiples of 8;
                                         * f32, multiples of 4 in the 99 KB tile (D <= 64) */
                assert_opp_ok(opp_attention_kernel_query(&d, sms[s], &name));
                const int f32 = want[t].dtype == OPP_DTYPE_F32;
                const int fast = f32 ? dims[k][0] == 64 && dims[k][1] == 64
                                     : dims[k][0] % 8 == 0 && dims[k][1] % 8 == 0;
                if (fast) {
                    assert_true(strncmp(name, f32 ? "ffma_" : "flash_", f32 ? 5 : 6) == 0);
                } else {
                    assert_string_equal(name, want[t].name);
                }
            }
            opp_attention24_desc_t a = padded_desc(want[t].dtype, 128, OPP_ALGO_EXACT);
            assert_opp_ok(opp_attention24_kernel_query(&a, sms[s], &name));
            assert_string_equal(name, want[t].name);
        }
    }
    opp_attention_desc_t d = packed_desc(OPP_DTYPE_F16, 128, 0, OPP_ALGO_EXACT);
    assert_opp_ok(opp_attention_kernel_query(&d, 80, &name));
    assert_string_equal(name, "exact_f16_d128_bm32");
    assert_opp_ok(opp_attention_kernel_query(&d, 90, &name));
    assert_string_equal(name, "exact_f16_d128_bm64");
    d = packed_desc(OPP_DTYPE_BF16, 64, 256, OPP_ALGO_EXACT);
    assert_opp_status(opp_attention_kernel_query(&d, 86, &name), OPP_STATUS_NOT_SUPPORTED_ARCH,
                      "no EXACT kernel fits compute capability 8.6 for head_size = 64, "
                      "v_head_size = 256: the smallest that serves them, exact_bf16_d256_bm32, "
                      "needs 142720 bytes of shared memory per block, more than the 101376 it "
                      "offers; on it, EXACT serves bf16 head sizes up to 128");
    assert_null(name);
    opp_attention24_desc_t a = padded_desc(OPP_DTYPE_F32, 192, OPP_ALGO_AUTO);
    assert_opp_status(opp_attention24_kernel_query(&a, 89, &name), OPP_STATUS_NOT_SUPPORTED_ARCH,
                      "exact_f32_d256_bm32");
    assert_opp_ok(opp_attention24_kernel_query(&a, 80, &name));
    assert_string_equal(name, "exact_f32_d256_bm32");
}

/* Every failure has a status and a reason; the name is NULL then. */
static void test_query_reasons(void **state) {
    (void)state;
    const char *name = "x";
    opp_attention_desc_t d = packed_desc(OPP_DTYPE_BF16, 128, 0, OPP_ALGO_EXACT);
    assert_opp_status(opp_attention_kernel_query(&d, 75, &name), OPP_STATUS_NOT_SUPPORTED_ARCH,
                      "compute capability 7.5 is not supported");
    assert_null(name);
    assert_opp_status(opp_attention_kernel_query(&d, 0, &name), OPP_STATUS_BAD_PARAM,
                      "sm_arch = 0");
    assert_opp_status(opp_attention_kernel_query(&d, 90, NULL), OPP_STATUS_BAD_PARAM_NULL_POINTER,
                      "kernel_name is NULL");
    d.head_size = 300;
    assert_opp_status(opp_attention_kernel_query(&d, 90, &name), OPP_STATUS_NOT_SUPPORTED_HEAD_SIZE,
                      "head_size = 300");
    d = packed_desc(OPP_DTYPE_F64, 64, 0, OPP_ALGO_EXACT);
    assert_opp_status(opp_attention_kernel_query(&d, 90, &name), OPP_STATUS_NOT_SUPPORTED_DTYPE,
                      "f64");
    /* the query checks the descriptor first, like the run path */
    d = packed_desc(OPP_DTYPE_BF16, 64, 0, OPP_ALGO_EXACT);
    d.batch = 0;
    assert_opp_status(opp_attention_kernel_query(&d, 90, &name), OPP_STATUS_BAD_PARAM_BATCH,
                      "batch = 0");
    opp_attention24_desc_t a = padded_desc(OPP_DTYPE_F16, 64, OPP_ALGO_EXACT);
    a.input_rank = 5;
    assert_opp_status(opp_attention24_kernel_query(&a, 90, &name), OPP_STATUS_BAD_PARAM_SHAPE,
                      "input_rank = 5");
}

/* TF32X3 (opt-in): its f32 row on 9.0 for D, Dv <= 64, multiples of 4, any
 * G and stride; every other GPU, dtype, head size or alignment gets the
 * reason; AUTO and FAST never take it. */
static void test_tf32x3_rows(void **state) {
    (void)state;
    const int32_t dims[5][2] = {{64, 64}, {4, 4}, {8, 64}, {64, 36}, {40, 0}};
    for (int k = 0; k < 5; ++k) {
        opp_attention_desc_t d =
            packed_desc(OPP_DTYPE_F32, dims[k][0], dims[k][1], OPP_ALGO_TF32X3);
        assert_string_equal(query(&d, 90), "tf32x3_f32_d64");
        assert_opp_ok(opp_attention_claim_check(&d));
        assert_opp_ok(opp_attention_desc_check(&d)); /* some GPU (9.0) runs it */
        d.algo = OPP_ALGO_AUTO;                      /* AUTO and FAST: the FFMA rows, on 9.0 too */
        assert_string_equal(query(&d, 90), "ffma_f32_d64");
        assert_string_equal(query(&d, 80), "ffma_f32_d64");
        d.algo = OPP_ALGO_FAST;
        assert_string_equal(query(&d, 90), "ffma_f32_d64");
        assert_string_equal(query(&d, 89), "ffma_f32_d64");
    }
    /* any GQA ratio (no BM limit as the Hopper FAST rows have) and any
     * stride that is a multiple of 4 elements (no TMA limit) */
    opp_attention_desc_t d = packed_desc(OPP_DTYPE_F32, 64, 0, OPP_ALGO_TF32X3);
    d.num_heads = 256;
    d.kv_num_heads = 1;
    assert_string_equal(query(&d, 90), "tf32x3_f32_d64");
    d = packed_desc(OPP_DTYPE_F32, 64, 0, OPP_ALGO_TF32X3);
    d.k_row_stride = ((int64_t)1 << 39);
    assert_string_equal(query(&d, 90), "tf32x3_f32_d64");
    d.k_row_stride = 2 * 64 + 4;
    assert_string_equal(query(&d, 90), "tf32x3_f32_d64");
    opp_attention24_desc_t a = padded_desc(OPP_DTYPE_F32, 48, OPP_ALGO_TF32X3);
    const char *name = "x";
    assert_opp_ok(opp_attention24_kernel_query(&a, 90, &name));
    assert_string_equal(name, "tf32x3_f32_d64");
    a.algo = OPP_ALGO_AUTO;
    assert_opp_ok(opp_attention24_kernel_query(&a, 90, &name));
    assert_string_equal(name, "ffma_f32_d64");
}

static void test_tf32x3_reasons(void **state) {
    (void)state;
    const char *name = "x";
    /* f16 / bf16: dtype, at claim time too */
    const opp_dtype_t dts[2] = {OPP_DTYPE_F16, OPP_DTYPE_BF16};
    const char *const dt_msg[2] = {"no TF32X3 kernel for q_dtype = f16 (TF32X3 serves f32 only)",
                                   "no TF32X3 kernel for q_dtype = bf16 (TF32X3 serves f32 only)"};
    for (int k = 0; k < 2; ++k) {
        opp_attention_desc_t d = packed_desc(dts[k], 64, 0, OPP_ALGO_TF32X3);
        assert_opp_status(opp_attention_kernel_query(&d, 90, &name), OPP_STATUS_NOT_SUPPORTED_DTYPE,
                          dt_msg[k]);
        assert_null(name);
        assert_opp_status(opp_attention_claim_check(&d), OPP_STATUS_NOT_SUPPORTED_DTYPE, dt_msg[k]);
        opp_attention24_desc_t a = padded_desc(dts[k], 64, OPP_ALGO_TF32X3);
        assert_opp_status(opp_attention24_kernel_query(&a, 90, &name),
                          OPP_STATUS_NOT_SUPPORTED_DTYPE, dt_msg[k]);
    }
    /* head sizes above 64 (D or Dv), then alignment */
    opp_attention_desc_t d = packed_desc(OPP_DTYPE_F32, 128, 0, OPP_ALGO_TF32X3);
    assert_opp_status(opp_attention_kernel_query(&d, 90, &name), OPP_STATUS_NOT_SUPPORTED_HEAD_SIZE,
                      "no TF32X3 kernel for head_size = 128, v_head_size = 128 (TF32X3 serves "
                      "head sizes up to 64)");
    assert_opp_status(opp_attention_claim_check(&d), OPP_STATUS_NOT_SUPPORTED_HEAD_SIZE,
                      "TF32X3 serves head sizes up to 64");
    d = packed_desc(OPP_DTYPE_F32, 64, 68, OPP_ALGO_TF32X3);
    assert_opp_status(opp_attention_kernel_query(&d, 90, &name), OPP_STATUS_NOT_SUPPORTED_HEAD_SIZE,
                      "v_head_size = 68 (TF32X3 serves");
    d = packed_desc(OPP_DTYPE_F32, 62, 0, OPP_ALGO_TF32X3);
    assert_opp_status(opp_attention_kernel_query(&d, 90, &name), OPP_STATUS_NOT_SUPPORTED_HEAD_SIZE,
                      "no TF32X3 kernel for head_size = 62, v_head_size = 62: TF32X3 needs "
                      "multiples of 4");
    d = packed_desc(OPP_DTYPE_F32, 64, 30, OPP_ALGO_TF32X3);
    assert_opp_status(opp_attention_claim_check(&d), OPP_STATUS_NOT_SUPPORTED_HEAD_SIZE,
                      "TF32X3 needs multiples of 4");
    d.algo = OPP_ALGO_AUTO; /* AUTO: quietly EXACT */
    assert_string_equal(query(&d, 90), "exact_f32_d128_bm64");
    /* row strides: multiples of 4 elements (descriptor level) */
    d = packed_desc(OPP_DTYPE_F32, 64, 0, OPP_ALGO_TF32X3);
    d.q_row_stride = 8 * 64 + 2;
    assert_opp_status(opp_attention_kernel_query(&d, 90, &name), OPP_STATUS_NOT_SUPPORTED_FEATURE,
                      "no TF32X3 kernel for these strides: TF32X3 needs every row stride to be a "
                      "multiple of 4 elements (q 514");
    assert_opp_status(opp_attention_desc_check(&d), OPP_STATUS_NOT_SUPPORTED_FEATURE, "q 514");
    /* every GPU but 9.0: the architecture, before 8.0 too */
    const int32_t sms[6] = {80, 86, 89, 100, 120, 75};
    char want[160];
    for (int k = 0; k < 6; ++k) {
        d = packed_desc(OPP_DTYPE_F32, 64, 0, OPP_ALGO_TF32X3);
        snprintf(want, sizeof(want),
                 "no TF32X3 kernel for compute capability %d.%d: TF32X3 needs compute "
                 "capability 9.0",
                 (int)sms[k] / 10, (int)sms[k] % 10);
        assert_opp_status(opp_attention_kernel_query(&d, sms[k], &name),
                          OPP_STATUS_NOT_SUPPORTED_ARCH, want);
        assert_null(name);
        opp_attention24_desc_t a = padded_desc(OPP_DTYPE_F32, 32, OPP_ALGO_TF32X3);
        assert_opp_status(opp_attention24_kernel_query(&a, sms[k], &name),
                          OPP_STATUS_NOT_SUPPORTED_ARCH, want);
        d.algo = OPP_ALGO_AUTO; /* never TF32X3, whatever the GPU */
        if (sms[k] >= 80) {
            assert_true(strncmp(query(&d, sms[k]), "ffma_f32_", 9) == 0);
        }
    }
    /* a head-size reason wins over the architecture */
    d = packed_desc(OPP_DTYPE_F32, 96, 0, OPP_ALGO_TF32X3);
    assert_opp_status(opp_attention_kernel_query(&d, 80, &name), OPP_STATUS_NOT_SUPPORTED_HEAD_SIZE,
                      "TF32X3 serves head sizes up to 64");
}

/* AUTO resolves to a row of some family on every supported architecture
 * and records no error on the way (a FAST miss is not an error). */
static void test_auto_resolves_quietly(void **state) {
    (void)state;
    const int32_t sms[4] = {80, 86, 89, 90};
    for (int s = 0; s < 4; ++s) {
        opp_attention_desc_t d = packed_desc(OPP_DTYPE_F16, 64, 0, OPP_ALGO_AUTO);
        opp__problem_t p;
        assert_opp_ok(opp__problem_from_desc(&d, &p));
        const opp__kernel_row_t *row = NULL;
        opp_test_clear_last_error_();
        assert_opp_ok(opp__dispatch_select(&p, sms[s], &row));
        assert_non_null(row);
        assert_string_equal(opp_last_error_message(), "");
    }
}

/* Without a GPU, a run whose every host-side check passes says NO_DEVICE
 * (not CUDA_ERROR); with one, this test has nothing to check. */
static void test_run_without_device_is_no_device(void **state) {
    (void)state;
    int count = 0;
    if (cudaGetDeviceCount(&count) == cudaSuccess && count > 0) {
        skip();
    }
    int32_t sm = -1;
    assert_opp_status(opp_device_sm_arch(&sm), OPP_STATUS_NO_DEVICE, "no CUDA device");
    assert_opp_status(opp_device_sm_arch(NULL), OPP_STATUS_BAD_PARAM_NULL_POINTER, "sm_arch");
    opp_attention_desc_t d = packed_desc(OPP_DTYPE_BF16, 128, 0, OPP_ALGO_AUTO);
    const opp_varlen_t vl = {(const int32_t *)P(0x1000), (const int32_t *)P(0x2000)};
    void *t = P(0x10000);
    assert_opp_status(opp_packed_attention_fwd(&d, &vl, t, t, t, t, P(0x20000), 256, NULL),
                      OPP_STATUS_NO_DEVICE, "no CUDA device");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows_well_formed),
        cmocka_unit_test(test_query_names_the_kernel),
        cmocka_unit_test(test_fast_rows_and_auto),
        cmocka_unit_test(test_query_reasons),
        cmocka_unit_test(test_query_99kb_gets_bn64_tiles),
        cmocka_unit_test(test_tf32x3_rows),
        cmocka_unit_test(test_tf32x3_reasons),
        cmocka_unit_test(test_auto_resolves_quietly),
        cmocka_unit_test(test_run_without_device_is_no_device),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
