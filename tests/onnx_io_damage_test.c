/*
 * onnx_io_damage_test.c - group "damaged" of onnx_io_test: damaged copies of
 * real conformance files written into a temporary directory (mkdtemp under
 * $TEST_TMPDIR): truncation at every byte offset, seeded random byte flips,
 * random garbage, empty files, inconsistent dims, a two-node model, missing
 * folders and files, a stray extra file. Every rejection must return -1 with a
 * message naming the file and the reason; nothing may crash (run the binary
 * under valgrind to check memory too).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/onnx_test_util.h"
#include "tools/onnx/onnx_io.h"

int onnx_io_damage_tests_run(void);

static char g_tmp[OTU_PATH_BYTES]; /* temporary directory of this group */
static char g_src[OTU_PATH_BYTES]; /* conformance folder */

static int group_setup(void **state) {
    char names[4][256];
    snprintf(g_src, sizeof g_src, "%s", otu_conformance_dir());
    if (otu_list_cases(g_src, names, 4) < 1) {
        fprintf(stderr, "onnx_io_damage: FAILED: no cases in conformance folder '%s'\n", g_src);
        return -1;
    }
    if (otu_make_temp_dir(g_tmp) != 0) {
        fprintf(stderr, "onnx_io_damage: FAILED: cannot create a temporary directory\n");
        return -1;
    }
    return 0;
}

static int group_teardown(void **state) {
    return g_tmp[0] != '\0' ? otu_remove_tree(g_tmp) : 0;
}

/* Reads <conformance>/<rel> into a malloc'ed buffer; fails the test if absent. */
static uint8_t *read_src(const char *rel, size_t *n) {
    char path[OTU_PATH_BYTES];
    otu_join(path, g_src, rel);
    uint8_t *buf = otu_read_file(path, n);
    if (buf == NULL || *n == 0) {
        fail_msg("cannot read %s", path);
    }
    return buf;
}

/* A fresh copy of conformance case `name` at <tmp>/<tag>; path returned in dst. */
static void copy_case(const char *name, const char *tag, char dst[OTU_PATH_BYTES]) {
    char src[OTU_PATH_BYTES];
    otu_join(src, g_src, name);
    otu_join(dst, g_tmp, tag);
    assert_int_equal(otu_copy_case(src, dst), 0);
}

static void expect_case_error(const char *dir, const char *file, const char *reason) {
    opp_onnx_case_t c;
    char err[1024] = "", want_file[OTU_PATH_BYTES];
    otu_join(want_file, dir, file);
    int rc = opp_onnx_case_load(dir, 0, &c, err, sizeof err);
    if (rc != -1 || !otu_contains(err, want_file) || !otu_contains(err, reason)) {
        fail_msg("rc %d, message '%s'; expected '%s' and '%s'", rc, err, want_file, reason);
    }
    assert_null(c.inputs[0].data);
    assert_int_equal(c.model.n_inputs, 0);
}

/* Loads path as a model (is_model) or a tensor; -1 must name the file. Returns rc. */
static int load_any(const char *path, int is_model, char *err, size_t err_size) {
    int rc;
    err[0] = '\0';
    if (is_model) {
        opp_onnx_model_t m;
        rc = opp_onnx_model_load(path, &m, err, err_size);
        opp_onnx_model_free(&m);
    } else {
        opp_onnx_tensor_t t;
        rc = opp_onnx_tensor_load(path, &t, err, err_size);
        if (rc == 0) {
            assert_int_equal(t.nbytes, t.count * opp_onnx_dtype_size(t.elem_type));
        }
        opp_onnx_tensor_free(&t);
    }
    if (rc != 0 && !otu_contains(err, path)) {
        fail_msg("message '%s' does not name %s", err, path);
    }
    return rc;
}

// --- truncation, flips, garbage

/* A model.onnx and an input_0.pb cut at every byte offset are all rejected. */
static void test_load_rejects_truncation_at_every_offset(void **state) {
    const struct {
        const char *rel;
        int is_model;
    } files[] = {
        {"test_attention_4d_gqa_causal_nonpad_decode/model.onnx", 1},
        {"test_attention_4d/model.onnx", 1},
        {"test_attention_4d/test_data_set_0/input_0.pb", 0},
        {"test_attention_4d_gqa_causal_nonpad_decode/test_data_set_0/input_3.pb", 0},
    };
    char path[OTU_PATH_BYTES], err[1024];
    otu_join(path, g_tmp, "truncated.bin");
    for (size_t f = 0; f < sizeof files / sizeof files[0]; ++f) {
        size_t n;
        uint8_t *buf = read_src(files[f].rel, &n);
        for (size_t cut = 0; cut < n; ++cut) {
            assert_int_equal(otu_write_file(path, buf, cut), 0);
            if (load_any(path, files[f].is_model, err, sizeof err) != -1) {
                free(buf);
                fail_msg("%s cut at %zu of %zu bytes was accepted", files[f].rel, cut, n);
            }
            int known = otu_contains(err, "truncated or corrupt protobuf") ||
                        otu_contains(err, "empty file (0 bytes)") ||
                        otu_contains(err, "Proto."); /* a field-level reason */
            if (!known) {
                free(buf);
                fail_msg("cut at %zu: unexpected message '%s'", cut, err);
            }
        }
        assert_int_equal(load_any(path, files[f].is_model, err, sizeof err), -1);
        assert_int_equal(otu_write_file(path, buf, n), 0);
        assert_int_equal(load_any(path, files[f].is_model, err, sizeof err), 0); /* intact */
        free(buf);
    }
}

static uint64_t xorshift(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Seeded random byte flips never crash; rejections name the file; acceptances are
 * well-formed (flips inside raw_data payloads cannot be detected by a reader). */
static void test_load_survives_random_byte_flips(void **state) {
    const char *rels[2] = {"test_attention_4d_gqa_causal_nonpad_decode/model.onnx",
                           "test_attention_4d_gqa_causal_nonpad_decode/test_data_set_0/input_0.pb"};
    char path[OTU_PATH_BYTES], err[1024];
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    otu_join(path, g_tmp, "flipped.bin");
    for (int f = 0; f < 2; ++f) {
        size_t n;
        uint8_t *orig = read_src(rels[f], &n);
        uint8_t *buf = malloc(n);
        int rejected = 0;
        for (int round = 0; round < 400; ++round) {
            memcpy(buf, orig, n);
            int flips = 1 + (int)(xorshift(&seed) % 3);
            for (int k = 0; k < flips; ++k) {
                buf[xorshift(&seed) % n] ^= (uint8_t)(1 + xorshift(&seed) % 255);
            }
            assert_int_equal(otu_write_file(path, buf, n), 0);
            rejected += load_any(path, f == 0, err, sizeof err) != 0;
        }
        print_message("  %s: %d of 400 flipped copies rejected\n", rels[f], rejected);
        assert_true(rejected > 0);
        free(buf);
        free(orig);
    }
}

/* Random garbage and an empty file are rejected as models, tensors and cases. */
static void test_load_rejects_garbage_and_empty_files(void **state) {
    char path[OTU_PATH_BYTES], dir[OTU_PATH_BYTES], err[1024];
    uint8_t garbage[4096];
    uint64_t seed = 12345;
    for (size_t k = 0; k < sizeof garbage; ++k) {
        garbage[k] = (uint8_t)xorshift(&seed);
    }
    otu_join(path, g_tmp, "garbage.bin");
    assert_int_equal(otu_write_file(path, garbage, sizeof garbage), 0);
    assert_int_equal(load_any(path, 1, err, sizeof err), -1);
    assert_true(otu_contains(err, "truncated or corrupt protobuf (protobuf-c could not unpack "
                                  "4096 bytes as a ModelProto)"));
    assert_int_equal(load_any(path, 0, err, sizeof err), -1);
    assert_true(otu_contains(err, "TensorProto"));

    otu_join(path, g_tmp, "empty.pb");
    assert_int_equal(otu_write_file(path, "", 0), 0);
    assert_int_equal(load_any(path, 0, err, sizeof err), -1);
    assert_true(otu_contains(err, "empty file (0 bytes)"));
    assert_int_equal(load_any(path, 1, err, sizeof err), -1);

    copy_case("test_attention_4d", "garbage_case", dir);
    otu_join(path, dir, "model.onnx");
    assert_int_equal(otu_write_file(path, garbage, sizeof garbage), 0);
    expect_case_error(dir, "model.onnx", "truncated or corrupt protobuf");
    copy_case("test_attention_4d", "empty_input_case", dir);
    otu_join(path, dir, "test_data_set_0/input_2.pb");
    assert_int_equal(otu_write_file(path, "", 0), 0);
    expect_case_error(dir, "test_data_set_0/input_2.pb", "empty file (0 bytes)");
}

// --- inconsistent case folders

/* Wrong dims for the data, and right data with a shape the graph contradicts. */
static void test_case_load_rejects_inconsistent_dims(void **state) {
    char dir[OTU_PATH_BYTES], path[OTU_PATH_BYTES], err[512];
    opp_onnx_tensor_t k;
    otu_pb_t w = {0};
    copy_case("test_attention_4d", "bad_dims", dir);
    otu_join(path, dir, "test_data_set_0/input_1.pb");
    assert_int_equal(opp_onnx_tensor_load(path, &k, err, sizeof err), 0); /* K [2,3,6,8] */
    const int64_t wrong[4] = {2, 3, 6, 9}, other[4] = {2, 3, 12, 4};
    otu_pb_tensor_raw(&w, wrong, 4, OPP_ONNX_DT_FLOAT, "K", k.data, k.nbytes);
    assert_int_equal(otu_write_file(path, w.buf, w.len), 0);
    expect_case_error(dir, "test_data_set_0/input_1.pb",
                      "TensorProto.dims: 4 dims [2,3,6,9] give 324 elements but raw_data holds "
                      "1152 bytes (need 1296)");
    otu_pb_free(&w);
    otu_pb_tensor_raw(&w, other, 4, OPP_ONNX_DT_FLOAT, "K", k.data, k.nbytes);
    assert_int_equal(otu_write_file(path, w.buf, w.len), 0);
    expect_case_error(dir, "test_data_set_0/input_1.pb",
                      "TensorProto.dims: [2,3,12,4] but the model declares 'K' with shape "
                      "[2,3,6,8]");
    otu_pb_free(&w);
    otu_pb_tensor_raw(&w, k.dims, 4, OPP_ONNX_DT_FLOAT, "V", k.data, k.nbytes);
    assert_int_equal(otu_write_file(path, w.buf, w.len), 0);
    expect_case_error(dir, "test_data_set_0/input_1.pb",
                      "TensorProto.name: 'V' but this file is for node input slot 1, 'K'");
    otu_pb_free(&w);
    otu_pb_tensor_raw(&w, k.dims, 4, OPP_ONNX_DT_INT32, "K", k.data, k.nbytes);
    assert_int_equal(otu_write_file(path, w.buf, w.len), 0);
    expect_case_error(dir, "test_data_set_0/input_1.pb",
                      "TensorProto.data_type: 6 (INT32) but the model declares 'K' as 1 (FLOAT)");
    otu_pb_free(&w);
    opp_onnx_tensor_free(&k);
}

/* A two-node model.onnx in a case folder is rejected with the node count. */
static void test_case_load_rejects_two_node_model(void **state) {
    char dir[OTU_PATH_BYTES], path[OTU_PATH_BYTES];
    otu_pb_t w = {0};
    copy_case("test_attention_4d", "two_nodes", dir);
    otu_pb_model_add(&w, 2, 1, NULL);
    otu_join(path, dir, "model.onnx");
    assert_int_equal(otu_write_file(path, w.buf, w.len), 0);
    otu_pb_free(&w);
    expect_case_error(dir, "model.onnx", "GraphProto.node: the graph has 2 nodes");
}

/* Missing folder, data set, output_1.pb, and a stray input_3.pb are errors. */
static void test_case_load_rejects_missing_and_extra_files(void **state) {
    char dir[OTU_PATH_BYTES], path[OTU_PATH_BYTES], err[1024];
    opp_onnx_case_t c;
    otu_join(dir, g_tmp, "no_such_case");
    expect_case_error(dir, "model.onnx", "cannot open");
    expect_case_error(dir, "model.onnx", "No such file or directory");

    otu_join(path, g_src, "test_attention_4d");
    assert_int_equal(opp_onnx_case_load(path, 1, &c, err, sizeof err), -1);
    assert_true(otu_contains(err, "cannot open "));
    assert_true(otu_contains(err, "test_attention_4d/test_data_set_1: No such file or directory"));
    assert_int_equal(opp_onnx_case_load(path, -1, &c, err, sizeof err), -1);
    assert_true(otu_contains(err, "data set -1 is negative"));

    copy_case("test_attention_4d_with_qk_matmul", "no_output_1", dir);
    otu_join(path, dir, "test_data_set_0/output_1.pb");
    assert_int_equal(unlink(path), 0);
    expect_case_error(dir, "test_data_set_0/output_1.pb", "cannot open ");
    expect_case_error(dir, "test_data_set_0/output_1.pb", ": No such file or directory");

    copy_case("test_attention_4d", "extra_input", dir);
    otu_join(path, dir, "test_data_set_0/input_3.pb");
    assert_int_equal(otu_write_file(path, "x", 1), 0);
    expect_case_error(dir, "test_data_set_0/input_3.pb",
                      "unexpected file: the node has only 3 named inputs");

    copy_case("test_attention_4d", "dir_as_file", dir);
    otu_join(path, dir, "test_data_set_0/input_0.pb");
    assert_int_equal(unlink(path), 0);
    assert_int_equal(mkdir(path, 0700), 0);
    expect_case_error(dir, "test_data_set_0/input_0.pb", "not a regular file");
}

int onnx_io_damage_tests_run(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_load_rejects_truncation_at_every_offset),
        cmocka_unit_test(test_load_survives_random_byte_flips),
        cmocka_unit_test(test_load_rejects_garbage_and_empty_files),
        cmocka_unit_test(test_case_load_rejects_inconsistent_dims),
        cmocka_unit_test(test_case_load_rejects_two_node_model),
        cmocka_unit_test(test_case_load_rejects_missing_and_extra_files),
    };
    return cmocka_run_group_tests_name("onnx_io_damaged", tests, group_setup, group_teardown);
}
