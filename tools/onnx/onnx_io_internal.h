/*
 * onnx_io_internal.h - helpers shared by the onnx_io sources (not part of the
 * public API): error formatting, whole-file reading, bounded name copies and
 * the TensorProto -> opp_onnx_tensor_t conversion used for both .pb files and
 * TENSOR attributes.
 */
#ifndef OPP_TOOLS_ONNX_IO_INTERNAL_H
#define OPP_TOOLS_ONNX_IO_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "tools/onnx/onnx_io.h"
#include "tools/onnx/onnx_min.pb-c.h"

/* Writes the formatted message into err (if err and err_size allow).
 * @return : -1, so callers can `return opp__onnx_fail(...)`. */
int opp__onnx_fail(char *err, size_t err_size, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Reads the whole regular file at path into a malloc'ed buffer (*buf is
 * non-NULL even for an empty file). Rejects missing/unreadable files,
 * non-regular files and files over OPP_ONNX_MAX_FILE_BYTES.
 * @return : 0, or -1 with "cannot open <path>: <strerror>" and the like. */
int opp__onnx_read_file(const char *path, uint8_t **buf, size_t *len, char *err, size_t err_size);

/* Copies src (NULL means "") into dst[OPP_ONNX_NAME_MAX].
 * @return : 0, or -1 with "<where>: <field>: name of N bytes ..." when too long. */
int opp__onnx_copy_name(char dst[OPP_ONNX_NAME_MAX], const char *src, const char *where,
                        const char *field, char *err, size_t err_size);

/* Converts an unpacked TensorProto; where prefixes every message.
 * @return : 0 with *out owning its data, or -1 with *out zeroed. */
int opp__onnx_tensor_from_proto(const Onnx__TensorProto *tp, const char *where,
                                opp_onnx_tensor_t *out, char *err, size_t err_size);

/* Formats dims as "[2,3,4]" into buf (cut with "..." if it does not fit). */
void opp__onnx_format_dims(const int64_t *dims, size_t rank, char *buf, size_t buf_size);

#endif /* OPP_TOOLS_ONNX_IO_INTERNAL_H */
