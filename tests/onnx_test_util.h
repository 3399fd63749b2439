/*
 * onnx_test_util.h - helpers for the ONNX case reader tests (onnx_io_test):
 *   - a tiny protobuf writer (varints, tags, length-delimited fields), so tests
 *     can build TensorProto/ModelProto bytes by hand, independent of the
 *     reader's schema;
 *   - file helpers: temporary directories (under $TEST_TMPDIR), whole-file
 *     read/write, copying a case folder, recursive removal;
 *   - finding the conformance folder: $OPP_ONNX_CONFORMANCE_DIR, else Bazel
 *     runfiles ($TEST_SRCDIR/oppacked/...), else the current directory.
 * Test-only code: allocation failures and over-long paths abort the test binary.
 */
#ifndef OPP_TESTS_ONNX_TEST_UTIL_H
#define OPP_TESTS_ONNX_TEST_UTIL_H

#include <stddef.h>
#include <stdint.h>

#define OTU_PATH_BYTES 4096
#define OTU_MAX_CASES  256

// --- protobuf writer

typedef struct otu_pb {
    uint8_t *buf;
    size_t len, cap;
} otu_pb_t;

void otu_pb_free(otu_pb_t *w);
void otu_pb_raw(otu_pb_t *w, const void *data, size_t n);        /* append bytes as they are */
void otu_pb_varint(otu_pb_t *w, uint64_t v);                     /* bare varint (packed lists) */
void otu_pb_int(otu_pb_t *w, uint32_t field, int64_t v);         /* wire type 0 */
void otu_pb_fixed32(otu_pb_t *w, uint32_t field, uint32_t bits); /* wire type 5 */
void otu_pb_bytes(otu_pb_t *w, uint32_t field, const void *data, size_t n); /* wire type 2 */
void otu_pb_str(otu_pb_t *w, uint32_t field, const char *s);
void otu_pb_msg(otu_pb_t *w, uint32_t field, const otu_pb_t *sub); /* sub as a submessage */

/* TensorProto{dims (unpacked), data_type, name, raw_data} - raw == NULL omits raw_data. */
void otu_pb_tensor_raw(otu_pb_t *w, const int64_t *dims, int rank, int32_t data_type,
                       const char *name, const void *raw, size_t raw_bytes);

/* ModelProto{ir_version 10, graph{n_nodes x node(op_type "Add", inputs A,B -> C),
 * inputs A,B / output C as FLOAT [2]}, opset_import{"" : 21} if with_opset}.
 * attrs (may be NULL) is appended to the first node as-is (AttributeProto fields 5). */
void otu_pb_model_add(otu_pb_t *w, int n_nodes, int with_opset, const otu_pb_t *attrs);

// --- files

/* out = dir + "/" + name; aborts the test binary if it does not fit. */
void otu_join(char out[OTU_PATH_BYTES], const char *dir, const char *name);
int otu_write_file(const char *path, const void *data, size_t n); /* 0 or -1 */
uint8_t *otu_read_file(const char *path, size_t *n);              /* malloc'ed or NULL */
int otu_make_temp_dir(char out[OTU_PATH_BYTES]);                  /* 0 or -1 */
int otu_remove_tree(const char *path);                            /* 0 or -1 */
/* Copies src/model.onnx and src/test_data_set_0/ into dst (created). 0 or -1. */
int otu_copy_case(const char *src, const char *dst);

// --- conformance data

/* Folder of the ONNX conformance cases (see the file comment): the first that
 * applies of $OPP_ONNX_CONFORMANCE_DIR (even if missing), the runfiles path (if
 * it exists), "testdata/onnx-attention-conformance". Never NULL; may not exist. */
const char *otu_conformance_dir(void);

/* Sorted names of the subfolders of dir that hold a model.onnx.
 * @return : the number found (at most max), or -1 if dir cannot be read. */
int otu_list_cases(const char *dir, char names[][256], int max);

/* True if haystack contains needle. */
int otu_contains(const char *haystack, const char *needle);

#endif /* OPP_TESTS_ONNX_TEST_UTIL_H */
