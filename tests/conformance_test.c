/*
 * conformance_test.c - L1 on ONNX's own Attention cases: the CPU Attention-24
 * reference (opp_ref_attention24) reproduces Y and every optional output
 * (present_key, present_value, qk_matmul_output) of each of the 66 cases in
 * testdata/onnx-attention-conformance BIT FOR BIT.
 *
 * Data: $OPP_ONNX_CONFORMANCE_DIR, else Bazel runfiles
 * (//testdata:onnx_conformance), else testdata/onnx-attention-conformance
 * relative to the current directory. The group FAILS when the folder is
 * missing or holds fewer than 66 cases: this test never passes having read
 * nothing. Also checks the case mapping (harness/onnx_attention_case.h) rejects
 * what it must and that the comparison catches a one-bit change.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/onnx_attention_case.h"
#include "tests/test_util.h"

#define MIN_CASES 66

static char g_dir[4096];
static char **g_cases;
static int g_n_cases;

static int group_setup(void **state) {
    (void)state;
    char err[1024];
    g_n_cases =
        opp_onnx_case_folder("OPP_ONNX_CONFORMANCE_DIR", "testdata/onnx-attention-conformance",
                             MIN_CASES, g_dir, sizeof(g_dir), &g_cases, err, sizeof(err));
    if (g_n_cases < 0) {
        fprintf(stderr, "FATAL: %s\n", err);
        return -1;
    }
    printf("conformance folder: %s (%d cases)\n", g_dir, g_n_cases);
    return 0;
}

static int group_teardown(void **state) {
    (void)state;
    opp_onnx_case_list_free(g_cases, g_n_cases);
    return 0;
}

/* Loads and maps the case named name (in g_dir); fails the test on error. */
static void load_mapped(const char *name, opp_onnx_case_t *c, opp_ref_attention24_desc_t *d,
                        opp_ref_attention24_tensors_t *t) {
    char path[4200], err[1024];
    snprintf(path, sizeof(path), "%s/%s", g_dir, name);
    if (opp_onnx_case_load(path, 0, c, err, sizeof(err)) != 0 ||
        opp_onnx_attention_map(c, d, t, err, sizeof(err)) != 0) {
        fail_msg("%s: %s", path, err);
    }
}

/* Runs one case; returns 0 identical, 1 differs, 2 unreadable/error. */
static int run_case(const char *path, opp_onnx_attention_result_t *r, char *line, size_t size) {
    char err[1024], prefix[300];
    opp_onnx_case_t c;
    opp_ref_attention24_desc_t d;
    opp_ref_attention24_tensors_t t;
    if (opp_onnx_attention_prepare(path, &c, &d, &t, err, sizeof(err)) != 0) {
        snprintf(line, size, "UNREADABLE: %s", err);
        return 2;
    }
    int rc = 2;
    const opp_status_t st = opp_ref_attention24(&d, &t);
    if (st != OPP_STATUS_SUCCESS) {
        snprintf(line, size, "REFERENCE FAILED: %s: %s", opp_status_name(st),
                 opp_last_error_message());
        goto done;
    }
    snprintf(prefix, sizeof(prefix), "%s/", opp_onnx_case_name(path));
    rc = opp_onnx_attention_compare(&c, &d, &t, prefix, 5, r, err, sizeof(err));
    if (rc < 0) {
        snprintf(line, size, "ERROR: %s", err);
        rc = 2;
        goto done;
    }
    opp_onnx_attention_result_str(r, line, size);
done:
    opp_onnx_attention_free_outputs(&t);
    opp_onnx_case_free(&c);
    return rc;
}

/* Every conformance case: Y and each optional output bit-identical. */
static void test_conformance_every_case_bit_identical(void **state) {
    (void)state;
    int counts[3] = {0, 0, 0};
    int outputs = 0;
    for (int i = 0; i < g_n_cases; ++i) {
        opp_onnx_attention_result_t r;
        char line[2048];
        memset(&r, 0, sizeof(r));
        const int rc = run_case(g_cases[i], &r, line, sizeof(line));
        counts[rc]++;
        outputs += r.n_compared;
        printf("%-4s %s: %s\n", rc == 0 ? "ok" : "FAIL", opp_onnx_case_name(g_cases[i]), line);
    }
    printf("conformance: %d cases, %d bit-identical, %d differ, %d unreadable (%d outputs "
           "compared)\n",
           g_n_cases, counts[0], counts[1], counts[2], outputs);
    assert_int_equal(counts[0], g_n_cases);
}

/* opp_ref_attention24_sizes() (used to size device copies) equals the element
 * counts of the tensors stored in every case, inputs and outputs alike. */
static void test_sizes_match_every_case_tensor(void **state) {
    (void)state;
    int checked = 0;
    for (int i = 0; i < g_n_cases; ++i) {
        char err[1024];
        opp_onnx_case_t c;
        opp_ref_attention24_desc_t d;
        opp_ref_attention24_tensors_t t;
        assert_int_equal(opp_onnx_attention_prepare(g_cases[i], &c, &d, &t, err, sizeof(err)), 0);
        opp_ref_attention24_sizes_t n;
        opp_ref_attention24_sizes(&d, &n);
        const size_t in[7] = {n.q, n.k, n.v, n.mask, n.past_key, n.past_value, (size_t)d.batch};
        const size_t out[4] = {n.y, n.present_key, n.present_value, n.qk};
        for (int slot = 0; slot < 7; ++slot) {
            const opp_onnx_tensor_t *x = opp_onnx_case_input(&c, slot);
            if (x != NULL && x->data != NULL) {
                if (x->count != in[slot]) {
                    fail_msg("%s: input %d has %zu elements, sizes says %zu", g_cases[i], slot,
                             x->count, in[slot]);
                }
                ++checked;
            }
        }
        for (int slot = 0; slot < 4; ++slot) {
            const opp_onnx_tensor_t *x = opp_onnx_case_output(&c, slot);
            if (x != NULL && x->data != NULL) {
                if (x->count != out[slot]) {
                    fail_msg("%s: output %d has %zu elements, sizes says %zu", g_cases[i], slot,
                             x->count, out[slot]);
                }
                ++checked;
            }
        }
        opp_onnx_attention_free_outputs(&t);
        opp_onnx_case_free(&c);
    }
    printf("opp_ref_attention24_sizes: %d tensors of %d cases match\n", checked, g_n_cases);
    assert_true(checked > 3 * g_n_cases);
}

/* The optional outputs are really compared: past/present and qk cases exist. */
static void test_conformance_optional_outputs_are_compared(void **state) {
    (void)state;
    opp_onnx_attention_result_t r;
    char line[2048];
    char path[4200];
    snprintf(path, sizeof(path), "%s/%s", g_dir,
             "test_attention_4d_with_past_and_present_qk_matmul");
    assert_int_equal(run_case(path, &r, line, sizeof(line)), 0);
    assert_int_equal(r.n_compared, 4);
    assert_true(r.stats[3].compared > 0);
}

/* A one-bit change in an expected output is reported as a mismatch. */
static void test_onnx_attention_compare_detects_one_bit(void **state) {
    (void)state;
    opp_onnx_case_t c;
    opp_ref_attention24_desc_t d;
    opp_ref_attention24_tensors_t t;
    char err[1024];
    load_mapped("test_attention_4d_fp16", &c, &d, &t);
    assert_int_equal(opp_onnx_attention_alloc_outputs(&c, &d, &t, err, sizeof(err)), 0);
    assert_opp_ok(opp_ref_attention24(&d, &t));
    opp_onnx_attention_result_t r;
    assert_int_equal(opp_onnx_attention_compare(&c, &d, &t, "", 0, &r, err, sizeof(err)), 0);
    ((unsigned char *)c.outputs[0].data)[6] ^= 1; /* element 3, lowest bit */
    assert_int_equal(opp_onnx_attention_compare(&c, &d, &t, "", 0, &r, err, sizeof(err)), 1);
    assert_int_equal(r.mismatches, 1);
    assert_int_equal(r.max_ulp, 1);
    opp_onnx_attention_free_outputs(&t);
    opp_onnx_case_free(&c);
}

/* Maps c (modified by the caller) and requires failure with substr in err. */
static void expect_map_error(opp_onnx_case_t *c, const char *substr) {
    opp_ref_attention24_desc_t d;
    opp_ref_attention24_tensors_t t;
    char err[1024] = "";
    const int rc = opp_onnx_attention_map(c, &d, &t, err, sizeof(err));
    if (rc == 0 || strstr(err, substr) == NULL) {
        fail_msg("map returned %d, message '%s', expected an error containing '%s'", rc, err,
                 substr);
    }
    assert_null(t.q);
}

/* op_type other than Attention, or a bad opset, is rejected. */
static void test_onnx_attention_map_rejects_other_ops_and_opsets(void **state) {
    (void)state;
    opp_onnx_case_t c;
    opp_ref_attention24_desc_t d;
    opp_ref_attention24_tensors_t t;
    load_mapped("test_attention_4d", &c, &d, &t);
    strcpy(c.model.op_type, "MatMul");
    expect_map_error(&c, "op_type 'MatMul'");
    strcpy(c.model.op_type, "Attention");
    c.model.opset_version = 22;
    expect_map_error(&c, "opset 22");
    c.model.opset_version = 24;
    strcpy(c.model.domain, "com.microsoft");
    expect_map_error(&c, "domain");
    opp_onnx_case_free(&c);
}

/* scale = 0.0 explicitly, unknown attributes and bad attribute values are errors. */
static void test_onnx_attention_map_rejects_bad_attributes(void **state) {
    (void)state;
    opp_onnx_case_t c;
    opp_ref_attention24_desc_t d;
    opp_ref_attention24_tensors_t t;
    load_mapped("test_attention_4d_scaled", &c, &d, &t);
    assert_true(d.scale > 0.0f);
    opp_onnx_attr_t *scale = (opp_onnx_attr_t *)opp_onnx_model_attr(&c.model, "scale");
    assert_non_null(scale);
    scale->f = 0.0f;
    expect_map_error(&c, "scale = 0 is reserved for the default");
    scale->f = 0.5f;
    strcpy(scale->name, "scaling");
    expect_map_error(&c, "unknown attribute 'scaling'");
    strcpy(scale->name, "is_causal");
    expect_map_error(&c, "attribute is_causal has type 1");
    scale->type = OPP_ONNX_ATTR_INT;
    scale->i = 2;
    expect_map_error(&c, "is_causal = 2");
    strcpy(scale->name, "qk_matmul_output_mode");
    scale->i = 4;
    expect_map_error(&c, "qk_matmul_output_mode = 4");
    opp_onnx_case_free(&c);
}

/* 3D inputs: missing or non-dividing head counts are errors naming the values. */
static void test_onnx_attention_map_rejects_bad_3d_heads(void **state) {
    (void)state;
    opp_onnx_case_t c;
    opp_ref_attention24_desc_t d;
    opp_ref_attention24_tensors_t t;
    load_mapped("test_attention_3d_gqa", &c, &d, &t);
    assert_int_equal(d.input_rank, 3);
    opp_onnx_attr_t *hq = (opp_onnx_attr_t *)opp_onnx_model_attr(&c.model, "q_num_heads");
    const int64_t saved = hq->i;
    char want[128];
    hq->i = c.inputs[0].dims[2] + 1;
    snprintf(want, sizeof(want), "hidden size %lld is not divisible by q_num_heads = %lld",
             (long long)c.inputs[0].dims[2], (long long)hq->i);
    expect_map_error(&c, want);
    hq->i = saved;
    strcpy(hq->name, "num_heads");
    expect_map_error(&c, "unknown attribute 'num_heads'");
    opp_onnx_case_free(&c);
}

/* Inconsistent shapes and dtypes (K batch, V dtype, nonpad) are errors. */
static void test_onnx_attention_map_rejects_inconsistent_shapes(void **state) {
    (void)state;
    opp_onnx_case_t c;
    opp_ref_attention24_desc_t d;
    opp_ref_attention24_tensors_t t;
    load_mapped("test_attention_4d_gqa_causal_nonpad_decode", &c, &d, &t);
    assert_int_equal(d.has_nonpad, 1);
    c.inputs[1].dims[3] += 1;
    expect_map_error(&c, "differ in head_size");
    c.inputs[1].dims[3] -= 1;
    c.inputs[2].elem_type = OPP_ONNX_DT_FLOAT16;
    expect_map_error(&c, "V dtype FLOAT16");
    c.inputs[2].elem_type = c.inputs[0].elem_type;
    ((int64_t *)c.inputs[6].data)[0] = c.inputs[1].dims[2] + 1;
    expect_map_error(&c, "nonpad_kv_seqlen[0]");
    opp_onnx_case_free(&c);
}

/* A case whose expected Y has the wrong shape is rejected by the output allocation. */
static void test_onnx_attention_alloc_rejects_wrong_output_shape(void **state) {
    (void)state;
    opp_onnx_case_t c;
    opp_ref_attention24_desc_t d;
    opp_ref_attention24_tensors_t t;
    char err[1024] = "";
    load_mapped("test_attention_4d_with_past_and_present", &c, &d, &t);
    c.outputs[1].dims[2] -= 1;
    assert_int_equal(opp_onnx_attention_alloc_outputs(&c, &d, &t, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "present_key has shape"));
    assert_null(t.y);
    opp_onnx_case_free(&c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conformance_every_case_bit_identical),
        cmocka_unit_test(test_conformance_optional_outputs_are_compared),
        cmocka_unit_test(test_sizes_match_every_case_tensor),
        cmocka_unit_test(test_onnx_attention_compare_detects_one_bit),
        cmocka_unit_test(test_onnx_attention_map_rejects_other_ops_and_opsets),
        cmocka_unit_test(test_onnx_attention_map_rejects_bad_attributes),
        cmocka_unit_test(test_onnx_attention_map_rejects_bad_3d_heads),
        cmocka_unit_test(test_onnx_attention_map_rejects_inconsistent_shapes),
        cmocka_unit_test(test_onnx_attention_alloc_rejects_wrong_output_shape),
    };
    return cmocka_run_group_tests_name("conformance", tests, group_setup, group_teardown);
}
