/*
 * onnx_io_test.c - tests of the ONNX case reader (tools/onnx/onnx_io.h), CPU only.
 *
 * Group "conformance": the 66 ONNX Attention conformance cases in
 * testdata/onnx-attention-conformance (found via $OPP_ONNX_CONFORMANCE_DIR,
 * else Bazel runfiles, else the current directory). The group FAILS if the
 * folder is missing or holds fewer than 66 cases: it never passes on nothing.
 * Groups "synthetic" (onnx_io_synth_test.c) and "damaged"
 * (onnx_io_damage_test.c) build or corrupt files in a temporary directory.
 *
 * Run: bazel test //tests:onnx_io_test
 *      or OPP_ONNX_CONFORMANCE_DIR=<dir> bazel-bin/tests/onnx_io_test
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "tests/onnx_test_util.h"
#include "tools/onnx/onnx_io.h"

#define N_CONFORMANCE 66

int onnx_io_synth_tests_run(void);
int onnx_io_damage_tests_run(void);

static char g_names[OTU_MAX_CASES][256];
static int g_n_cases;
static char g_dir[OTU_PATH_BYTES];

static int group_setup(void **state) {
    snprintf(g_dir, sizeof g_dir, "%s", otu_conformance_dir());
    g_n_cases = otu_list_cases(g_dir, g_names, OTU_MAX_CASES);
    if (g_n_cases < N_CONFORMANCE) {
        fprintf(stderr,
                "onnx_io_test: FAILED: ONNX conformance folder '%s' %s (%d cases, need %d); set "
                "OPP_ONNX_CONFORMANCE_DIR or run under bazel test\n",
                g_dir, g_n_cases < 0 ? "cannot be read" : "is incomplete", g_n_cases,
                N_CONFORMANCE);
        return -1;
    }
    return 0;
}

/* Loads case `name` from the conformance folder; fails the test on error. */
static void load_case(const char *name, opp_onnx_case_t *c) {
    char path[OTU_PATH_BYTES], err[512] = "";
    otu_join(path, g_dir, name);
    int rc = opp_onnx_case_load(path, 0, c, err, sizeof err);
    if (rc != 0) {
        fail_msg("%s: %s", name, err);
    }
}

static uint32_t f32_bits(const opp_onnx_tensor_t *t, size_t k) {
    const uint8_t *p = (const uint8_t *)t->data + 4 * k;
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint16_t u16_at(const opp_onnx_tensor_t *t, size_t k) {
    const uint8_t *p = (const uint8_t *)t->data + 2 * k;
    return (uint16_t)(p[0] | p[1] << 8);
}

static int64_t i64_at(const opp_onnx_tensor_t *t, size_t k) {
    uint64_t v = 0;
    for (int b = 7; b >= 0; --b) {
        v = v << 8 | ((const uint8_t *)t->data)[8 * k + (size_t)b];
    }
    return (int64_t)v;
}

static void assert_dims(const opp_onnx_tensor_t *t, int rank, const int64_t *dims) {
    assert_non_null(t);
    assert_int_equal(t->rank, rank);
    for (int d = 0; d < rank; ++d) {
        assert_int_equal(t->dims[d], dims[d]);
    }
}

// --- conformance

/* The conformance folder holds at least the 66 ONNX cases (the group setup also checks). */
static void test_conformance_dir_holds_66_cases(void **state) {
    assert_true(g_n_cases >= N_CONFORMANCE);
    assert_string_equal(g_names[0], "test_attention_23_boolmask_fullymasked_row_nan_robustness");
}

/* Every case loads; every named slot has a well-formed tensor, unnamed slots none. */
static void test_case_load_every_conformance_case_succeeds(void **state) {
    int loaded = 0;
    for (int n = 0; n < g_n_cases; ++n) {
        opp_onnx_case_t c;
        load_case(g_names[n], &c);
        assert_string_equal(c.model.op_type, "Attention");
        assert_string_equal(c.model.domain, "");
        assert_true(c.model.opset_version == 23 || c.model.opset_version == 24);
        assert_true(c.model.ir_version >= 11);
        for (int s = 0; s < c.model.n_inputs; ++s) {
            const opp_onnx_tensor_t *t = opp_onnx_case_input(&c, s);
            if (c.model.inputs[s][0] == '\0') {
                assert_null(t);
                continue;
            }
            assert_non_null(t);
            assert_string_equal(t->name, c.model.inputs[s]);
            assert_int_equal(t->nbytes, t->count * opp_onnx_dtype_size(t->elem_type));
            assert_true(t->count > 0 && t->data != NULL);
        }
        for (int s = 0; s < c.model.n_outputs; ++s) {
            const opp_onnx_tensor_t *t = opp_onnx_case_output(&c, s);
            assert_true((t == NULL) == (c.model.outputs[s][0] == '\0'));
        }
        assert_non_null(opp_onnx_case_output(&c, 0));
        assert_null(opp_onnx_case_input(&c, -1));
        assert_null(opp_onnx_case_input(&c, c.model.n_inputs));
        opp_onnx_case_free(&c);
        ++loaded;
    }
    assert_true(loaded >= N_CONFORMANCE);
}

/* Q/K/V dtypes and shapes agree with the graph inputs and with each other. */
static void test_case_load_qkv_consistent_with_graph_inputs(void **state) {
    for (int n = 0; n < g_n_cases; ++n) {
        opp_onnx_case_t c;
        load_case(g_names[n], &c);
        const opp_onnx_tensor_t *q = opp_onnx_case_input(&c, 0);
        const opp_onnx_tensor_t *k = opp_onnx_case_input(&c, 1);
        const opp_onnx_tensor_t *v = opp_onnx_case_input(&c, 2);
        const opp_onnx_tensor_t *y = opp_onnx_case_output(&c, 0);
        assert_true(q != NULL && k != NULL && v != NULL && y != NULL);
        for (int s = 0; s < 3; ++s) {
            const opp_onnx_value_info_t *vi = &c.model.graph_inputs[s];
            const opp_onnx_tensor_t *t = opp_onnx_case_input(&c, s);
            assert_int_equal(t->elem_type, vi->elem_type);
            assert_dims(t, vi->rank, vi->dims);
        }
        assert_true(q->elem_type == k->elem_type && k->elem_type == v->elem_type);
        assert_int_equal(y->elem_type, q->elem_type);
        assert_true(q->elem_type == OPP_ONNX_DT_FLOAT || q->elem_type == OPP_ONNX_DT_FLOAT16);
        assert_true(q->rank == k->rank && k->rank == v->rank && (q->rank == 3 || q->rank == 4));
        assert_true(q->dims[0] == k->dims[0] && k->dims[0] == v->dims[0]); /* B */
        assert_int_equal(k->dims[1], v->dims[1]); /* Hkv (4D) or S_kv (3D) */
        if (q->rank == 4) {                       /* (B, H, S, D) */
            assert_int_equal(q->dims[3], k->dims[3]);
            assert_int_equal(k->dims[2], v->dims[2]);
            assert_int_equal(q->dims[1] % k->dims[1], 0);
        } else { /* (B, S, H*D) */
            int64_t hq = opp_onnx_model_attr_int(&c.model, "q_num_heads", 0);
            int64_t hkv = opp_onnx_model_attr_int(&c.model, "kv_num_heads", 0);
            assert_true(hq > 0 && hkv > 0 && hq % hkv == 0);
            assert_int_equal(q->dims[2] % hq, 0);
            assert_int_equal(k->dims[2] % hkv, 0);
            assert_int_equal(q->dims[2] / hq, k->dims[2] / hkv);
        }
        const opp_onnx_tensor_t *nonpad = opp_onnx_case_input(&c, 6);
        if (nonpad != NULL) {
            assert_int_equal(nonpad->elem_type, OPP_ONNX_DT_INT64);
            assert_dims(nonpad, 1, q->dims);
        }
        opp_onnx_case_free(&c);
    }
}

/* Values equal what Python onnx reads. Expected numbers were obtained with
 * onnx 1.23.2: onnx.numpy_helper.to_array(TensorProto parsed from the file)
 * .reshape(-1)[:3] and [-1], viewed as uint32 (f32) / uint16 (f16) bits. */
static void test_case_load_values_match_python_onnx(void **state) {
    opp_onnx_case_t c;
    load_case("test_attention_4d", &c);
    const int64_t qdims[4] = {2, 3, 4, 8};
    const opp_onnx_tensor_t *q = opp_onnx_case_input(&c, 0), *y = opp_onnx_case_output(&c, 0);
    assert_dims(q, 4, qdims);
    assert_int_equal(q->count, 192);
    assert_int_equal(f32_bits(q, 0), 0x3f0c7f0b);   /* 0.54881352 */
    assert_int_equal(f32_bits(q, 1), 0x3f3716a6);   /* 0.71518934 */
    assert_int_equal(f32_bits(q, 2), 0x3f1a4eb3);   /* 0.60276335 */
    assert_int_equal(f32_bits(q, 191), 0x3e56e148); /* 0.20984375 */
    assert_int_equal(f32_bits(y, 0), 0x3f005ffe);
    assert_int_equal(f32_bits(y, 191), 0x3efb35e1);
    opp_onnx_case_free(&c);

    load_case("test_attention_4d_fp16", &c);
    q = opp_onnx_case_input(&c, 0);
    assert_int_equal(q->elem_type, OPP_ONNX_DT_FLOAT16);
    assert_int_equal(q->nbytes, 192 * 2);
    assert_int_equal(u16_at(q, 0), 0x3864);
    assert_int_equal(u16_at(q, 1), 0x39b9);
    assert_int_equal(u16_at(q, 2), 0x38d2);
    assert_int_equal(u16_at(q, 191), 0x32b7);
    assert_int_equal(u16_at(opp_onnx_case_output(&c, 0), 0), 0x3803);
    opp_onnx_case_free(&c);

    /* bool mask: numpy_helper.to_array(...).astype(int).reshape(-1)[:12] */
    load_case("test_attention_4d_causal_nonpad_attn_mask_composition", &c);
    const opp_onnx_tensor_t *mask = opp_onnx_case_input(&c, 3);
    const uint8_t want_mask[12] = {1, 1, 1, 0, 0, 0, 1, 1, 1, 0, 0, 0};
    const int64_t mdims[4] = {2, 1, 3, 6};
    assert_dims(mask, 4, mdims);
    assert_int_equal(mask->elem_type, OPP_ONNX_DT_BOOL);
    assert_memory_equal(mask->data, want_mask, 12);
    assert_int_equal(i64_at(opp_onnx_case_input(&c, 6), 0), 4); /* nonpad_kv_seqlen = [4, 5] */
    assert_int_equal(i64_at(opp_onnx_case_input(&c, 6), 1), 5);
    opp_onnx_case_free(&c);
}

/* Files skip "" slots: input_3.pb is node slot 6, output_1.pb is node slot 3. */
static void test_case_load_maps_files_to_node_slots(void **state) {
    opp_onnx_case_t c;
    load_case("test_attention_4d_gqa_causal_nonpad_decode", &c);
    assert_int_equal(c.model.n_inputs, 7);
    assert_string_equal(c.model.inputs[6], "nonpad_kv_seqlen");
    for (int s = 3; s < 6; ++s) {
        assert_null(opp_onnx_case_input(&c, s));
    }
    const opp_onnx_tensor_t *nonpad = opp_onnx_case_input(&c, 6);
    assert_string_equal(nonpad->name, "nonpad_kv_seqlen");
    assert_int_equal(i64_at(nonpad, 0), 8); /* Python: [8, 5] */
    assert_int_equal(i64_at(nonpad, 1), 5);
    opp_onnx_case_free(&c);

    load_case("test_attention_4d_with_qk_matmul_softcap", &c);
    assert_int_equal(c.model.n_outputs, 4);
    assert_null(opp_onnx_case_output(&c, 1));
    assert_null(opp_onnx_case_output(&c, 2));
    const opp_onnx_tensor_t *qk = opp_onnx_case_output(&c, 3);
    const int64_t qkdims[4] = {2, 3, 4, 6};
    assert_string_equal(qk->name, "qk_matmul_output");
    assert_dims(qk, 4, qkdims);
    assert_int_equal(f32_bits(qk, 0), 0x3f3ad6de); /* Python: 0.72984111 */
    opp_onnx_case_free(&c);
}

/* Attributes equal what Python onnx reads (onnx.helper.get_attribute_value). */
static void test_model_attrs_match_python_onnx(void **state) {
    opp_onnx_case_t c;
    load_case("test_attention_3d_diff_heads_sizes_softcap", &c);
    assert_int_equal(c.model.ir_version, 11);
    assert_int_equal(c.model.opset_version, 23);
    assert_int_equal(c.model.n_attrs, 3);
    assert_int_equal(opp_onnx_model_attr(&c.model, "q_num_heads")->type, OPP_ONNX_ATTR_INT);
    assert_int_equal(opp_onnx_model_attr_int(&c.model, "q_num_heads", -1), 3);
    assert_int_equal(opp_onnx_model_attr_int(&c.model, "kv_num_heads", -1), 3);
    assert_true(opp_onnx_model_attr_float(&c.model, "softcap", 0.0f) == 3.0f);
    assert_null(opp_onnx_model_attr(&c.model, "scale"));
    assert_true(opp_onnx_model_attr_float(&c.model, "scale", -2.0f) == -2.0f);
    assert_int_equal(opp_onnx_model_attr_int(&c.model, "softcap", 7), 7); /* wrong type */
    opp_onnx_case_free(&c);

    load_case("test_attention_4d_diff_heads_sizes_scaled", &c);
    float scale = opp_onnx_model_attr_float(&c.model, "scale", 0.0f);
    uint32_t bits;
    memcpy(&bits, &scale, 4);
    assert_int_equal(bits, 1008981770u); /* np.float32(0.01).view(np.uint32) */
    opp_onnx_case_free(&c);

    load_case("test_attention_4d_with_qk_matmul_softcap", &c);
    assert_int_equal(opp_onnx_model_attr_int(&c.model, "qk_matmul_output_mode", -1), 1);
    assert_true(opp_onnx_model_attr_float(&c.model, "softcap", 0.0f) == 2.0f);
    opp_onnx_case_free(&c);

    load_case("test_attention_4d_gqa_causal_nonpad_decode", &c);
    assert_int_equal(c.model.ir_version, 12);
    assert_int_equal(c.model.opset_version, 24);
    assert_int_equal(opp_onnx_model_attr_int(&c.model, "is_causal", -1), 1);
    opp_onnx_case_free(&c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conformance_dir_holds_66_cases),
        cmocka_unit_test(test_case_load_every_conformance_case_succeeds),
        cmocka_unit_test(test_case_load_qkv_consistent_with_graph_inputs),
        cmocka_unit_test(test_case_load_values_match_python_onnx),
        cmocka_unit_test(test_case_load_maps_files_to_node_slots),
        cmocka_unit_test(test_model_attrs_match_python_onnx),
    };
    int failed = cmocka_run_group_tests_name("onnx_io_conformance", tests, group_setup, NULL);
    failed += onnx_io_synth_tests_run();
    failed += onnx_io_damage_tests_run();
    return failed != 0 ? 1 : 0;
}
