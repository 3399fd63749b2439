/*
 * dtype.c - names and sizes of element types.
 *
 * opp_dtype_t values are ONNX TensorProto.DataType values (0 .. 28). The
 * four floating types the library knows get short names ("f32", "f16",
 * "bf16", "f64"); every other ONNX value gets its lowercase ONNX name, so
 * messages can say "q_dtype = int8 is not supported".
 */
#include "lib/internal/dtype_check.h"

/* Indexed by ONNX TensorProto.DataType value. */
static const char *const opp_dtype_names_[] = {
    "undefined",      /* 0  UNDEFINED */
    "f32",            /* 1  FLOAT */
    "uint8",          /* 2  UINT8 */
    "int8",           /* 3  INT8 */
    "uint16",         /* 4  UINT16 */
    "int16",          /* 5  INT16 */
    "int32",          /* 6  INT32 */
    "int64",          /* 7  INT64 */
    "string",         /* 8  STRING */
    "bool",           /* 9  BOOL */
    "f16",            /* 10 FLOAT16 */
    "f64",            /* 11 DOUBLE */
    "uint32",         /* 12 UINT32 */
    "uint64",         /* 13 UINT64 */
    "complex64",      /* 14 COMPLEX64 */
    "complex128",     /* 15 COMPLEX128 */
    "bf16",           /* 16 BFLOAT16 */
    "float8e4m3fn",   /* 17 FLOAT8E4M3FN */
    "float8e4m3fnuz", /* 18 FLOAT8E4M3FNUZ */
    "float8e5m2",     /* 19 FLOAT8E5M2 */
    "float8e5m2fnuz", /* 20 FLOAT8E5M2FNUZ */
    "uint4",          /* 21 UINT4 */
    "int4",           /* 22 INT4 */
    "float4e2m1",     /* 23 FLOAT4E2M1 */
    "float8e8m0",     /* 24 FLOAT8E8M0 */
    "uint2",          /* 25 UINT2 */
    "int2",           /* 26 INT2 */
    "float6e2m3",     /* 27 FLOAT6E2M3 */
    "float6e3m2",     /* 28 FLOAT6E3M2 */
};

_Static_assert(sizeof opp_dtype_names_ / sizeof opp_dtype_names_[0] == OPP__DTYPE_ONNX_MAX + 1,
               "one name per ONNX value 0 .. OPP__DTYPE_ONNX_MAX");

// --- internal (lib/internal/dtype_check.h)

int opp__dtype_is_onnx(opp_dtype_t dtype) {
    const int v = (int)dtype;
    return v >= 1 && v <= OPP__DTYPE_ONNX_MAX;
}

int opp__dtype_is_supported(opp_dtype_t dtype) {
    const int v = (int)dtype;
    return v == OPP_DTYPE_F32 || v == OPP_DTYPE_F16 || v == OPP_DTYPE_BF16;
}

// --- public entry

const char *opp_dtype_name(opp_dtype_t dtype) {
    const int v = (int)dtype;
    return (v >= 0 && v <= OPP__DTYPE_ONNX_MAX) ? opp_dtype_names_[v] : "invalid";
}

size_t opp_dtype_size(opp_dtype_t dtype) {
    switch ((int)dtype) {
    case OPP_DTYPE_F32:
        return 4;
    case OPP_DTYPE_F16:
    case OPP_DTYPE_BF16:
        return 2;
    case OPP_DTYPE_F64:
        return 8;
    default:
        return 0;
    }
}
