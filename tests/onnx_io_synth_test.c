/*
 * onnx_io_synth_test.c - group "synthetic" of onnx_io_test: TensorProto and
 * ModelProto bytes written by hand (tests/onnx_test_util.h protobuf writer,
 * independent of the reader's schema) to cover the encodings the conformance
 * files do not use (typed *_data fields, packed dims, scalars, empty tensors,
 * attribute kinds) and every rejection the reader promises.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "tests/onnx_test_util.h"
#include "tools/onnx/onnx_io.h"

int onnx_io_synth_tests_run(void);

static int parse_tensor(const otu_pb_t *w, opp_onnx_tensor_t *t, char *err, size_t err_size) {
    return opp_onnx_tensor_parse(w->buf, w->len, "synthetic.pb", t, err, err_size);
}

/* Parsing w fails with a message naming the source and containing want. */
static void expect_tensor_error(otu_pb_t *w, const char *want) {
    opp_onnx_tensor_t t;
    char err[512] = "";
    int rc = parse_tensor(w, &t, err, sizeof err);
    otu_pb_free(w);
    if (rc != -1 || !otu_contains(err, "synthetic.pb: ") || !otu_contains(err, want)) {
        fail_msg("rc %d, message '%s', expected it to contain '%s'", rc, err, want);
    }
    assert_null(t.data);
    assert_int_equal(t.count, 0);
}

static void expect_model_error(otu_pb_t *w, const char *want) {
    opp_onnx_model_t m;
    char err[512] = "";
    int rc = opp_onnx_model_parse(w->buf, w->len, "synthetic.onnx", &m, err, sizeof err);
    otu_pb_free(w);
    if (rc != -1 || !otu_contains(err, "synthetic.onnx: ") || !otu_contains(err, want)) {
        fail_msg("rc %d, message '%s', expected it to contain '%s'", rc, err, want);
    }
    assert_int_equal(m.n_attrs, 0);
}

static void packed_varints(otu_pb_t *w, uint32_t field, const int64_t *v, int n) {
    otu_pb_t list = {0};
    for (int k = 0; k < n; ++k) {
        otu_pb_varint(&list, (uint64_t)v[k]);
    }
    otu_pb_msg(w, field, &list);
    otu_pb_free(&list);
}

static void dims_dt(otu_pb_t *w, int64_t d0, int64_t d1, int32_t dt) {
    const int64_t dims[2] = {d0, d1};
    otu_pb_tensor_raw(w, dims, 2, dt, "x", NULL, 0);
}

// --- tensors accepted

/* float_data (packed fixed32) becomes little-endian f32 elements. */
static void test_tensor_parse_float_data_accepted(void **state) {
    otu_pb_t w = {0}, list = {0};
    const float v[3] = {1.5f, -2.0f, 0.25f};
    dims_dt(&w, 1, 3, OPP_ONNX_DT_FLOAT);
    otu_pb_raw(&list, v, sizeof v); /* x86: host order is little-endian */
    otu_pb_msg(&w, 4, &list);
    opp_onnx_tensor_t t;
    char err[256] = "";
    assert_int_equal(parse_tensor(&w, &t, err, sizeof err), 0);
    assert_int_equal(t.count, 3);
    assert_int_equal(t.nbytes, 12);
    assert_memory_equal(t.data, v, 12);
    assert_string_equal(t.name, "x");
    opp_onnx_tensor_free(&t);
    otu_pb_free(&w);
    otu_pb_free(&list);
}

/* int32_data holds f16 bit patterns, bools and int8 values, one per int32. */
static void test_tensor_parse_int32_data_narrow_types_accepted(void **state) {
    const struct {
        int32_t dt;
        int64_t v[3];
        uint8_t want[6];
        size_t nbytes;
    } cases[] = {
        {OPP_ONNX_DT_FLOAT16, {0x3c00, 0xc000, 0xffff}, {0x00, 0x3c, 0x00, 0xc0, 0xff, 0xff}, 6},
        {OPP_ONNX_DT_BFLOAT16, {0x3f80, 0, 1}, {0x80, 0x3f, 0, 0, 1, 0}, 6},
        {OPP_ONNX_DT_BOOL, {1, 0, 1}, {1, 0, 1}, 3},
        {OPP_ONNX_DT_INT8, {-1, 127, -128}, {0xff, 0x7f, 0x80}, 3},
        {OPP_ONNX_DT_INT16, {-2, 300, 0}, {0xfe, 0xff, 0x2c, 0x01, 0, 0}, 6},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
        otu_pb_t w = {0};
        opp_onnx_tensor_t t;
        char err[256] = "";
        dims_dt(&w, 3, 1, cases[k].dt);
        packed_varints(&w, 5, cases[k].v, 3);
        if (parse_tensor(&w, &t, err, sizeof err) != 0) {
            fail_msg("case %zu: %s", k, err);
        }
        assert_int_equal(t.nbytes, cases[k].nbytes);
        assert_memory_equal(t.data, cases[k].want, cases[k].nbytes);
        opp_onnx_tensor_free(&t);
        otu_pb_free(&w);
    }
}

/* int64_data, double_data and uint64_data (for UINT32) are accepted. */
static void test_tensor_parse_int64_double_uint64_data_accepted(void **state) {
    otu_pb_t w = {0}, list = {0};
    opp_onnx_tensor_t t;
    char err[256] = "";
    const int64_t v[2] = {-3, (int64_t)1 << 40};
    dims_dt(&w, 2, 1, OPP_ONNX_DT_INT64);
    packed_varints(&w, 7, v, 2);
    assert_int_equal(parse_tensor(&w, &t, err, sizeof err), 0);
    assert_memory_equal(t.data, v, 16);
    opp_onnx_tensor_free(&t);
    otu_pb_free(&w);

    const double d = 0.5;
    dims_dt(&w, 1, 1, OPP_ONNX_DT_DOUBLE);
    otu_pb_raw(&list, &d, 8);
    otu_pb_msg(&w, 10, &list);
    assert_int_equal(parse_tensor(&w, &t, err, sizeof err), 0);
    assert_memory_equal(t.data, &d, 8);
    opp_onnx_tensor_free(&t);
    otu_pb_free(&w);

    const int64_t u = 4000000000;
    const uint32_t u32 = 4000000000u;
    dims_dt(&w, 1, 1, OPP_ONNX_DT_UINT32);
    packed_varints(&w, 11, &u, 1);
    assert_int_equal(parse_tensor(&w, &t, err, sizeof err), 0);
    assert_memory_equal(t.data, &u32, 4);
    opp_onnx_tensor_free(&t);
    otu_pb_free(&w);
    otu_pb_free(&list);
}

/* Packed dims, a scalar (rank 0, one element) and an empty tensor (a 0 dim). */
static void test_tensor_parse_packed_dims_scalar_and_empty_accepted(void **state) {
    otu_pb_t w = {0};
    opp_onnx_tensor_t t;
    char err[256] = "";
    const int64_t dims[2] = {2, 3};
    const float raw[6] = {0};
    packed_varints(&w, 1, dims, 2);
    otu_pb_tensor_raw(&w, NULL, 0, OPP_ONNX_DT_FLOAT, NULL, raw, sizeof raw);
    assert_int_equal(parse_tensor(&w, &t, err, sizeof err), 0);
    assert_int_equal(t.rank, 2);
    assert_int_equal(t.dims[1], 3);
    assert_int_equal(t.count, 6);
    opp_onnx_tensor_free(&t);
    otu_pb_free(&w);

    otu_pb_tensor_raw(&w, NULL, 0, OPP_ONNX_DT_FLOAT, "s", raw, 4);
    assert_int_equal(parse_tensor(&w, &t, err, sizeof err), 0);
    assert_int_equal(t.rank, 0);
    assert_int_equal(t.count, 1);
    opp_onnx_tensor_free(&t);
    otu_pb_free(&w);

    const int64_t huge_then_zero[3] = {(int64_t)1 << 40, (int64_t)1 << 40, 0};
    otu_pb_tensor_raw(&w, huge_then_zero, 3, OPP_ONNX_DT_FLOAT, NULL, NULL, 0);
    assert_int_equal(parse_tensor(&w, &t, err, sizeof err), 0);
    assert_int_equal(t.count, 0);
    assert_null(t.data);
    otu_pb_free(&w);
}

// --- tensors rejected

/* Each malformed tensor gives -1 and a message naming the field and reason. */
static void test_tensor_parse_rejects_malformed(void **state) {
    otu_pb_t w = {0}, ext = {0};
    const uint8_t raw[32] = {0};
    const int64_t neg[2] = {2, -3}, big[3] = {(int64_t)1 << 31, (int64_t)1 << 31, (int64_t)1 << 31};
    const int64_t nine[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1}, d23[2] = {2, 3};

    otu_pb_tensor_raw(&w, neg, 2, OPP_ONNX_DT_FLOAT, NULL, raw, 0);
    expect_tensor_error(&w, "TensorProto.dims: dims[1] = -3 is negative");
    otu_pb_tensor_raw(&w, nine, 9, OPP_ONNX_DT_FLOAT, NULL, raw, 4);
    expect_tensor_error(&w, "TensorProto.dims: rank 9 exceeds the maximum 8");
    otu_pb_tensor_raw(&w, big, 3, OPP_ONNX_DT_FLOAT, NULL, raw, 4);
    expect_tensor_error(&w, "element count of [2147483648,2147483648,2147483648] overflows");
    otu_pb_tensor_raw(&w, d23, 2, OPP_ONNX_DT_FLOAT, NULL, raw, 20);
    expect_tensor_error(&w, "TensorProto.dims: 2 dims [2,3] give 6 elements but raw_data holds "
                            "20 bytes (need 24)");
    otu_pb_tensor_raw(&w, d23, 2, OPP_ONNX_DT_FLOAT, NULL, NULL, 0);
    expect_tensor_error(&w, "TensorProto.raw_data: missing");
    otu_pb_tensor_raw(&w, d23, 2, OPP_ONNX_DT_UNDEFINED, NULL, raw, 24);
    expect_tensor_error(&w, "TensorProto.data_type: missing (UNDEFINED)");
    otu_pb_tensor_raw(&w, d23, 2, 8, NULL, raw, 24);
    expect_tensor_error(&w, "TensorProto.data_type: 8 (STRING) is not supported");
    otu_pb_tensor_raw(&w, d23, 2, 17, NULL, raw, 6);
    expect_tensor_error(&w, "17 (FLOAT8E4M3FN) is not supported");

    otu_pb_str(&ext, 1, "location");
    otu_pb_str(&ext, 2, "weights.bin");
    otu_pb_tensor_raw(&w, d23, 2, OPP_ONNX_DT_FLOAT, NULL, NULL, 0);
    otu_pb_msg(&w, 13, &ext);
    otu_pb_int(&w, 14, 1);
    expect_tensor_error(&w, "TensorProto.data_location: external data (location 'weights.bin') "
                            "is not supported");
    otu_pb_free(&ext);

    const int64_t five[5] = {1, 2, 3, 4, 5}, v300 = 300, v2 = 2;
    dims_dt(&w, 2, 3, OPP_ONNX_DT_INT64);
    packed_varints(&w, 7, five, 5);
    expect_tensor_error(&w, "2 dims [2,3] give 6 elements but int64_data holds 5 values");
    dims_dt(&w, 1, 1, OPP_ONNX_DT_FLOAT);
    packed_varints(&w, 7, five, 1);
    expect_tensor_error(&w, "TensorProto.int64_data: not a valid field for data_type 1 (FLOAT)");
    dims_dt(&w, 1, 1, OPP_ONNX_DT_INT64);
    packed_varints(&w, 7, five, 1);
    otu_pb_bytes(&w, 9, raw, 8);
    expect_tensor_error(&w, "TensorProto.int64_data: set together with raw_data");
    dims_dt(&w, 1, 1, OPP_ONNX_DT_UINT8);
    packed_varints(&w, 5, &v300, 1);
    expect_tensor_error(&w, "int32_data: value [0] = 300 is out of range for UINT8");
    dims_dt(&w, 1, 1, OPP_ONNX_DT_BOOL);
    packed_varints(&w, 5, &v2, 1);
    expect_tensor_error(&w, "out of range for BOOL");

    char long_name[200];
    memset(long_name, 'n', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = '\0';
    otu_pb_tensor_raw(&w, d23, 2, OPP_ONNX_DT_FLOAT, long_name, raw, 24);
    expect_tensor_error(&w, "TensorProto.name: name of 199 bytes is longer than the 127");
}

// --- models

/* Every stored attribute kind keeps its value; unknown fields are skipped. */
static void test_model_parse_attribute_kinds_accepted(void **state) {
    otu_pb_t attrs = {0}, a = {0}, w = {0}, t = {0};
    const float f2[2] = {0.5f, -1.0f}, tv[2] = {3.0f, 4.0f};
    const int64_t ints[3] = {1, -2, 3}, tdim = 2;
#define ADD_ATTR(build)            \
    do {                           \
        build;                     \
        otu_pb_msg(&attrs, 5, &a); \
        otu_pb_free(&a);           \
    } while (0)
    ADD_ATTR((otu_pb_str(&a, 1, "i"), otu_pb_int(&a, 3, -7), otu_pb_int(&a, 20, 2)));
    ADD_ATTR((otu_pb_str(&a, 1, "f"), otu_pb_fixed32(&a, 2, 0x3e800000u), otu_pb_int(&a, 20, 1)));
    ADD_ATTR((otu_pb_str(&a, 1, "s"), otu_pb_str(&a, 4, "hello"), otu_pb_int(&a, 20, 3)));
    ADD_ATTR((otu_pb_str(&a, 1, "is"), packed_varints(&a, 8, ints, 3), otu_pb_int(&a, 20, 7)));
    ADD_ATTR((otu_pb_str(&a, 1, "fs"), otu_pb_bytes(&a, 7, f2, 8), otu_pb_int(&a, 20, 6)));
    otu_pb_tensor_raw(&t, &tdim, 1, OPP_ONNX_DT_FLOAT, "tv", tv, 8);
    ADD_ATTR((otu_pb_str(&a, 1, "t"), otu_pb_msg(&a, 5, &t), otu_pb_int(&a, 20, 4),
              otu_pb_str(&a, 13, "doc string: an unknown field here")));
    ADD_ATTR((otu_pb_str(&a, 1, "g"), otu_pb_int(&a, 20, 5)));
    otu_pb_model_add(&w, 1, 1, &attrs);
    otu_pb_str(&w, 6, "model doc_string: unknown to the reader");

    opp_onnx_model_t m;
    char err[256] = "";
    assert_int_equal(opp_onnx_model_parse(w.buf, w.len, "m.onnx", &m, err, sizeof err), 0);
    assert_int_equal(m.n_attrs, 7);
    assert_int_equal(opp_onnx_model_attr_int(&m, "i", 0), -7);
    assert_true(opp_onnx_model_attr_float(&m, "f", 0.0f) == 0.25f);
    assert_string_equal(opp_onnx_model_attr(&m, "s")->s, "hello");
    assert_int_equal(opp_onnx_model_attr(&m, "s")->s_len, 5);
    assert_int_equal(opp_onnx_model_attr(&m, "is")->n_ints, 3);
    assert_memory_equal(opp_onnx_model_attr(&m, "is")->ints, ints, sizeof ints);
    assert_memory_equal(opp_onnx_model_attr(&m, "fs")->floats, f2, sizeof f2);
    assert_memory_equal(opp_onnx_model_attr(&m, "t")->t.data, tv, sizeof tv);
    assert_int_equal(opp_onnx_model_attr(&m, "g")->type, 5);
    assert_string_equal(m.op_type, "Add");
    assert_int_equal(m.opset_version, 21);
    assert_int_equal(m.n_graph_inputs, 2);
    assert_int_equal(m.graph_outputs[0].dims[0], 2);
    opp_onnx_model_free(&m);
    otu_pb_free(&attrs);
    otu_pb_free(&t);
    otu_pb_free(&w);
}

/* Models outside the reader's contract give -1 and name the field. */
static void test_model_parse_rejects_malformed(void **state) {
    otu_pb_t w = {0}, attrs = {0}, a = {0}, t = {0};
    const int64_t tdim = 3;
    otu_pb_model_add(&w, 2, 1, NULL);
    expect_model_error(&w, "GraphProto.node: the graph has 2 nodes; this reader handles "
                           "single-node models only");
    otu_pb_model_add(&w, 0, 1, NULL);
    expect_model_error(&w, "the graph has 0 nodes");
    otu_pb_model_add(&w, 1, 0, NULL);
    expect_model_error(&w, "ModelProto.opset_import: no entry for the default domain");
    otu_pb_int(&w, 1, 10);
    expect_model_error(&w, "ModelProto.graph: missing");

    otu_pb_str(&a, 1, "k");
    otu_pb_int(&a, 3, 1);
    otu_pb_msg(&attrs, 5, &a);
    otu_pb_model_add(&w, 1, 1, &attrs);
    expect_model_error(&w, "AttributeProto.type: missing (UNDEFINED) for attribute 'k'");
    otu_pb_int(&a, 20, 2);
    otu_pb_free(&attrs);
    otu_pb_msg(&attrs, 5, &a);
    otu_pb_msg(&attrs, 5, &a);
    otu_pb_model_add(&w, 1, 1, &attrs);
    expect_model_error(&w, "NodeProto.attribute: attribute 'k' appears twice");
    otu_pb_free(&a);
    otu_pb_free(&attrs);

    otu_pb_tensor_raw(&t, &tdim, 1, OPP_ONNX_DT_FLOAT, NULL, "abcd", 4);
    otu_pb_str(&a, 1, "w");
    otu_pb_msg(&a, 5, &t);
    otu_pb_int(&a, 20, 4);
    otu_pb_msg(&attrs, 5, &a);
    otu_pb_model_add(&w, 1, 1, &attrs);
    expect_model_error(&w, "attribute 'w': TensorProto.dims: 1 dims [3] give 3 elements but "
                           "raw_data holds 4 bytes (need 12)");
    otu_pb_free(&a);
    otu_pb_free(&t);
    otu_pb_free(&attrs);
}

int onnx_io_synth_tests_run(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tensor_parse_float_data_accepted),
        cmocka_unit_test(test_tensor_parse_int32_data_narrow_types_accepted),
        cmocka_unit_test(test_tensor_parse_int64_double_uint64_data_accepted),
        cmocka_unit_test(test_tensor_parse_packed_dims_scalar_and_empty_accepted),
        cmocka_unit_test(test_tensor_parse_rejects_malformed),
        cmocka_unit_test(test_model_parse_attribute_kinds_accepted),
        cmocka_unit_test(test_model_parse_rejects_malformed),
    };
    return cmocka_run_group_tests_name("onnx_io_synthetic", tests, NULL, NULL);
}
