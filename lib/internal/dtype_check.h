/*
 * dtype_check.h - internal predicates on opp_dtype_t (ONNX TensorProto
 * values), defined in lib/dtype.c and shared by every validator.
 */
#ifndef OPP_INTERNAL_DTYPE_CHECK_H
#define OPP_INTERNAL_DTYPE_CHECK_H

#include "lib/oppacked.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Largest ONNX TensorProto.DataType value the library knows by name. */
#define OPP__DTYPE_ONNX_MAX 28

/* 1 if dtype is a defined ONNX element type (1 .. OPP__DTYPE_ONNX_MAX),
 * else 0. UNDEFINED (0) is "not set", hence 0 here. */
int opp__dtype_is_onnx(opp_dtype_t dtype);

/* 1 if dtype is a storage type the kernels support (F32, F16, BF16). */
int opp__dtype_is_supported(opp_dtype_t dtype);

#ifdef __cplusplus
}
#endif
#endif /* OPP_INTERNAL_DTYPE_CHECK_H */
