/*
 * onnx_io.h - read ONNX backend-test case folders (model.onnx +
 * test_data_set_N/input_K.pb, output_K.pb) into plain C structs.
 *
 * Used by tests and tools (host only, no CUDA). Built on protobuf-c with a
 * minimal schema of our own (tools/onnx/onnx_min.proto); unknown protobuf
 * fields are skipped.
 *
 * Layout:  a case folder holds model.onnx, a ModelProto with exactly one node,
 *          and test_data_set_<N>/ folders of serialized TensorProtos. Files are
 *          numbered in node-input (node-output) order with inputs (outputs)
 *          named "" NOT numbered: node inputs Q, K, V, "", "", "", nonpad give
 *          input_0..input_3 = Q, K, V, nonpad. Tensors are exposed per node
 *          slot (slot 6 = nonpad in that example; slots 3..5 have none).
 * Values:  tensor data is copied into one malloc'ed buffer of little-endian
 *          packed elements whatever the encoding in the file (raw_data or a
 *          typed field): f32 4 bytes, f16/bf16 2 bytes (bit patterns), bool,
 *          int8, uint8 1 byte, int16/uint16 2, int32/uint32 4, int64/uint64 8,
 *          double 8. Row-major, dims[0] outermost.
 * Errors:  every function that can fail returns 0 on success and -1 on
 *          failure, after writing a NUL-terminated message naming the file, the
 *          protobuf field and the reason into err (err may be NULL, then
 *          nothing is written; messages longer than err_size are cut). On
 *          failure the output struct is left zeroed and owns nothing. Nothing
 *          here prints, exits or aborts; malformed files never crash.
 * Limits:  names up to OPP_ONNX_NAME_MAX - 1 bytes, rank up to OPP_ONNX_MAX_RANK,
 *          OPP_ONNX_MAX_IO node inputs/outputs, OPP_ONNX_MAX_ATTRS attributes,
 *          files up to OPP_ONNX_MAX_FILE_BYTES. Exceeding one is an error, never
 *          a silent cut. External data (data_location EXTERNAL), string tensors,
 *          complex, 8-, 6-, 4- and 2-bit float/int types are rejected as
 *          unsupported.
 */
#ifndef OPP_TOOLS_ONNX_IO_H
#define OPP_TOOLS_ONNX_IO_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define OPP_ONNX_NAME_MAX       128
#define OPP_ONNX_MAX_RANK       8
#define OPP_ONNX_MAX_IO         16
#define OPP_ONNX_MAX_ATTRS      32
#define OPP_ONNX_MAX_FILE_BYTES ((size_t)1 << 30)

/* ONNX TensorProto.DataType values this reader stores (onnx.proto numbering). */
enum {
    OPP_ONNX_DT_UNDEFINED = 0,
    OPP_ONNX_DT_FLOAT = 1,
    OPP_ONNX_DT_UINT8 = 2,
    OPP_ONNX_DT_INT8 = 3,
    OPP_ONNX_DT_UINT16 = 4,
    OPP_ONNX_DT_INT16 = 5,
    OPP_ONNX_DT_INT32 = 6,
    OPP_ONNX_DT_INT64 = 7,
    OPP_ONNX_DT_BOOL = 9,
    OPP_ONNX_DT_FLOAT16 = 10,
    OPP_ONNX_DT_DOUBLE = 11,
    OPP_ONNX_DT_UINT32 = 12,
    OPP_ONNX_DT_UINT64 = 13,
    OPP_ONNX_DT_BFLOAT16 = 16
};

/* ONNX AttributeProto.AttributeType values (onnx.proto numbering). */
enum {
    OPP_ONNX_ATTR_FLOAT = 1,
    OPP_ONNX_ATTR_INT = 2,
    OPP_ONNX_ATTR_STRING = 3,
    OPP_ONNX_ATTR_TENSOR = 4,
    OPP_ONNX_ATTR_FLOATS = 6,
    OPP_ONNX_ATTR_INTS = 7
};

/* ======   Data types   ====== */

/*! Bytes per element of an ONNX data type in opp_onnx_tensor_t.data.
 * @return : 4, 2, 1 or 8; 0 for a type this reader does not support. */
size_t opp_onnx_dtype_size(int32_t elem_type);

/*! Name of an ONNX data type ("FLOAT", "FLOAT16", "INT64", ...).
 * @return : a static string, never NULL ("UNKNOWN" for other values). */
const char *opp_onnx_dtype_name(int32_t elem_type);

/* ======   Tensors   ====== */

/* One TensorProto. Owns data (free with opp_onnx_tensor_free). */
typedef struct opp_onnx_tensor {
    char name[OPP_ONNX_NAME_MAX];    /* TensorProto.name, "" if absent */
    int32_t elem_type;               /* ONNX DataType (OPP_ONNX_DT_*) */
    int32_t rank;                    /* 0 for a scalar */
    int64_t dims[OPP_ONNX_MAX_RANK]; /* dims[0..rank-1], each >= 0; rest 0 */
    size_t count;                    /* elements: product of dims (1 for a scalar) */
    void *data;                      /* malloc'ed, little-endian packed elements (see top of file);
                                        NULL when count == 0 */
    size_t nbytes;                   /* == count * opp_onnx_dtype_size(elem_type) */
} opp_onnx_tensor_t;

/*! Reads one serialized TensorProto file (e.g. test_data_set_0/input_0.pb).
 * Accepts raw_data and the typed fields (float_data; int32_data for int32,
 * int16, uint16, int8, uint8, bool, f16, bf16 bit patterns; int64_data;
 * double_data; uint64_data for uint32/uint64). Rejects: negative dims, rank >
 * OPP_ONNX_MAX_RANK, an element count that overflows, a data amount that differs
 * from the product of dims, several data fields at once, typed values out of
 * range for the type, external data, unsupported data types.
 * @out    : written on success; zeroed on failure. Caller frees.
 * @return : 0 on success, -1 with a message "<path>: <Field>: <reason>" in err. */
int opp_onnx_tensor_load(const char *path, opp_onnx_tensor_t *out, char *err, size_t err_size);

/*! As opp_onnx_tensor_load, on len bytes in memory; where names the source
 * in messages (e.g. a file name). */
int opp_onnx_tensor_parse(const void *buf, size_t len, const char *where, opp_onnx_tensor_t *out,
                          char *err, size_t err_size);

/*! Frees t->data and zeroes *t. Accepts NULL and zeroed structs. */
void opp_onnx_tensor_free(opp_onnx_tensor_t *t);

/* ======   Models   ====== */

/* One node attribute. Only the member matching type is meaningful. */
typedef struct opp_onnx_attr {
    char name[OPP_ONNX_NAME_MAX];
    int32_t type;  /* AttributeType (OPP_ONNX_ATTR_*); other types keep name and type only */
    int64_t i;     /* INT */
    float f;       /* FLOAT */
    size_t n_ints; /* INTS: ints[0..n_ints-1], malloc'ed (NULL if empty) */
    int64_t *ints;
    size_t n_floats; /* FLOATS: floats[0..n_floats-1], malloc'ed (NULL if empty) */
    float *floats;
    char *s;             /* STRING: malloc'ed, NUL-terminated (bytes may hold NULs) */
    size_t s_len;        /* STRING: length in bytes without the NUL */
    opp_onnx_tensor_t t; /* TENSOR: the value; zeroed otherwise */
} opp_onnx_attr_t;

/* A graph input or output (ValueInfoProto with a tensor type). */
typedef struct opp_onnx_value_info {
    char name[OPP_ONNX_NAME_MAX];
    int32_t elem_type;               /* 0 if the type is not a tensor type or unset */
    int32_t rank;                    /* -1 when no shape is given */
    int64_t dims[OPP_ONNX_MAX_RANK]; /* -1 for a symbolic or unknown dim */
} opp_onnx_value_info_t;

/* A single-node ModelProto. Owns attribute storage (free with opp_onnx_model_free). */
typedef struct opp_onnx_model {
    int64_t ir_version;
    int64_t opset_version; /* of the default domain ("" or "ai.onnx"); 0 if not imported */
    char op_type[OPP_ONNX_NAME_MAX];
    char domain[OPP_ONNX_NAME_MAX]; /* node domain, "" = default */
    char node_name[OPP_ONNX_NAME_MAX];
    int32_t n_inputs; /* node input slots, "" for a skipped optional input */
    char inputs[OPP_ONNX_MAX_IO][OPP_ONNX_NAME_MAX];
    int32_t n_outputs; /* node output slots, "" for an unused optional output */
    char outputs[OPP_ONNX_MAX_IO][OPP_ONNX_NAME_MAX];
    int32_t n_attrs;
    opp_onnx_attr_t attrs[OPP_ONNX_MAX_ATTRS];
    int32_t n_graph_inputs; /* GraphProto.input, in file order */
    opp_onnx_value_info_t graph_inputs[OPP_ONNX_MAX_IO];
    int32_t n_graph_outputs; /* GraphProto.output, in file order */
    opp_onnx_value_info_t graph_outputs[OPP_ONNX_MAX_IO];
} opp_onnx_model_t;

/*! Reads a model.onnx holding one node. Rejects: a graph with != 1 node,
 * initializers, a node without op_type, no opset for the default domain when
 * the node is in it, unnamed or duplicate attributes, attributes without a
 * type, anything beyond the limits at the top of this file.
 * @out    : written on success; zeroed on failure. Caller frees.
 * @return : 0 on success, -1 with a message in err. */
int opp_onnx_model_load(const char *path, opp_onnx_model_t *out, char *err, size_t err_size);

/*! As opp_onnx_model_load, on len bytes in memory; where names the source. */
int opp_onnx_model_parse(const void *buf, size_t len, const char *where, opp_onnx_model_t *out,
                         char *err, size_t err_size);

/*! Frees attribute storage and zeroes *m. Accepts NULL and zeroed structs. */
void opp_onnx_model_free(opp_onnx_model_t *m);

/*! The node attribute called name.
 * @return : a pointer into m, or NULL when the node has no such attribute. */
const opp_onnx_attr_t *opp_onnx_model_attr(const opp_onnx_model_t *m, const char *name);

/*! Value of an INT attribute.
 * @return : its value; dflt when absent or when the attribute is not an INT. */
int64_t opp_onnx_model_attr_int(const opp_onnx_model_t *m, const char *name, int64_t dflt);

/*! Value of a FLOAT attribute.
 * @return : its value; dflt when absent or when the attribute is not a FLOAT. */
float opp_onnx_model_attr_float(const opp_onnx_model_t *m, const char *name, float dflt);

/* ======   Cases   ====== */

/* One data set of a case folder, by node slot. Owns everything it holds. */
typedef struct opp_onnx_case {
    opp_onnx_model_t model;
    int32_t data_set;                           /* N of test_data_set_<N> */
    opp_onnx_tensor_t inputs[OPP_ONNX_MAX_IO];  /* by node input slot (zeroed if "") */
    opp_onnx_tensor_t outputs[OPP_ONNX_MAX_IO]; /* by node output slot (zeroed if "") */
} opp_onnx_case_t;

/*! Reads case_dir/model.onnx and case_dir/test_data_set_<data_set>/input_K.pb
 * and output_K.pb, numbered as described at the top of this file. Every named
 * node input and output must have its file; a file beyond them (input_<n>.pb
 * with n = number of named inputs) is an error too. Checks each tensor against
 * the graph's ValueInfo: same name (when the tensor has one), same elem_type
 * (when declared), same dims (for each fixed dim). The graph's inputs/outputs,
 * when listed, must be the node's named inputs/outputs in order.
 * @out    : written on success; zeroed on failure. Caller frees.
 * @return : 0 on success, -1 with a message in err, e.g.
 *           "cannot open <dir>/test_data_set_0/output_1.pb: No such file or directory". */
int opp_onnx_case_load(const char *case_dir, int data_set, opp_onnx_case_t *out, char *err,
                       size_t err_size);

/*! The tensor of node input slot (0-based, node order, "" slots included).
 * @return : a pointer into c, or NULL when slot is out of range or unnamed. */
const opp_onnx_tensor_t *opp_onnx_case_input(const opp_onnx_case_t *c, int slot);

/*! The tensor of node output slot; as opp_onnx_case_input. */
const opp_onnx_tensor_t *opp_onnx_case_output(const opp_onnx_case_t *c, int slot);

/*! Frees every tensor and the model, zeroes *c. Accepts NULL and zeroed structs. */
void opp_onnx_case_free(opp_onnx_case_t *c);

#ifdef __cplusplus
}
#endif
#endif /* OPP_TOOLS_ONNX_IO_H */
