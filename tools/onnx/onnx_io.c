/*
 * onnx_io.c - shared pieces of the ONNX case reader: the data-type table,
 * error formatting, whole-file reading and bounded name copies.
 * The TensorProto conversion is in onnx_tensor.c, models in onnx_model.c,
 * case folders in onnx_case.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tools/onnx/onnx_io_internal.h"

// --- data types

size_t opp_onnx_dtype_size(int32_t elem_type) {
    switch (elem_type) {
    case OPP_ONNX_DT_BOOL:
    case OPP_ONNX_DT_INT8:
    case OPP_ONNX_DT_UINT8:
        return 1;
    case OPP_ONNX_DT_FLOAT16:
    case OPP_ONNX_DT_BFLOAT16:
    case OPP_ONNX_DT_INT16:
    case OPP_ONNX_DT_UINT16:
        return 2;
    case OPP_ONNX_DT_FLOAT:
    case OPP_ONNX_DT_INT32:
    case OPP_ONNX_DT_UINT32:
        return 4;
    case OPP_ONNX_DT_DOUBLE:
    case OPP_ONNX_DT_INT64:
    case OPP_ONNX_DT_UINT64:
        return 8;
    default:
        return 0;
    }
}

const char *opp_onnx_dtype_name(int32_t elem_type) {
    /* Index = onnx.proto TensorProto.DataType value. */
    static const char *const names[] = {
        "UNDEFINED",      "FLOAT",    "UINT8",        "INT8",           "UINT16",
        "INT16",          "INT32",    "INT64",        "STRING",         "BOOL",
        "FLOAT16",        "DOUBLE",   "UINT32",       "UINT64",         "COMPLEX64",
        "COMPLEX128",     "BFLOAT16", "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2",
        "FLOAT8E5M2FNUZ", "UINT4",    "INT4",         "FLOAT4E2M1",     "FLOAT8E8M0",
        "UINT2",          "INT2",     "FLOAT6E2M3",   "FLOAT6E3M2",
    };
    if (elem_type < 0 || (size_t)elem_type >= sizeof(names) / sizeof(names[0])) {
        return "UNKNOWN";
    }
    return names[elem_type];
}

// --- errors and names

int opp__onnx_fail(char *err, size_t err_size, const char *fmt, ...) {
    if (err != NULL && err_size > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, err_size, fmt, ap);
        va_end(ap);
    }
    return -1;
}

int opp__onnx_copy_name(char dst[OPP_ONNX_NAME_MAX], const char *src, const char *where,
                        const char *field, char *err, size_t err_size) {
    size_t len = src != NULL ? strlen(src) : 0;
    memset(dst, 0, OPP_ONNX_NAME_MAX);
    if (len >= OPP_ONNX_NAME_MAX) {
        return opp__onnx_fail(err, err_size,
                              "%s: %s: name of %zu bytes is longer than the %d this reader keeps",
                              where, field, len, OPP_ONNX_NAME_MAX - 1);
    }
    if (len > 0) {
        memcpy(dst, src, len);
    }
    return 0;
}

void opp__onnx_format_dims(const int64_t *dims, size_t rank, char *buf, size_t buf_size) {
    size_t used = 0;
    if (buf_size < 8) {
        if (buf_size > 0) {
            buf[0] = '\0';
        }
        return;
    }
    buf[used++] = '[';
    for (size_t d = 0; d < rank; ++d) {
        char item[32];
        int n = snprintf(item, sizeof item, "%s%lld", d > 0 ? "," : "", (long long)dims[d]);
        if (n < 0 || used + (size_t)n + 2 > buf_size - 4) {
            memcpy(buf + used, "...", 3);
            used += 3;
            break;
        }
        memcpy(buf + used, item, (size_t)n);
        used += (size_t)n;
    }
    buf[used++] = ']';
    buf[used] = '\0';
}

// --- files

static void errno_text(int errnum, char *buf, size_t buf_size) {
    if (strerror_r(errnum, buf, buf_size) != 0) {
        snprintf(buf, buf_size, "error %d", errnum);
    }
}

int opp__onnx_read_file(const char *path, uint8_t **buf, size_t *len, char *err, size_t err_size) {
    char why[128];
    struct stat st;
    *buf = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        errno_text(errno, why, sizeof why);
        return opp__onnx_fail(err, err_size, "cannot open %s: %s", path, why);
    }
    if (fstat(fd, &st) != 0) {
        errno_text(errno, why, sizeof why);
        close(fd);
        return opp__onnx_fail(err, err_size, "cannot stat %s: %s", path, why);
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return opp__onnx_fail(err, err_size, "cannot read %s: not a regular file", path);
    }
    if (st.st_size < 0 || (uint64_t)st.st_size > OPP_ONNX_MAX_FILE_BYTES) {
        close(fd);
        return opp__onnx_fail(err, err_size, "cannot read %s: %lld bytes, over the %zu allowed",
                              path, (long long)st.st_size, OPP_ONNX_MAX_FILE_BYTES);
    }
    size_t size = (size_t)st.st_size;
    uint8_t *data = malloc(size > 0 ? size : 1);
    if (data == NULL) {
        close(fd);
        return opp__onnx_fail(err, err_size, "cannot read %s: out of memory for %zu bytes", path,
                              size);
    }
    size_t got = 0;
    while (got < size) {
        ssize_t n = read(fd, data + got, size - got);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            if (n < 0) {
                errno_text(errno, why, sizeof why);
            } else {
                snprintf(why, sizeof why, "file shrank to %zu bytes while reading", got);
            }
            free(data);
            close(fd);
            return opp__onnx_fail(err, err_size, "cannot read %s: %s", path, why);
        }
        got += (size_t)n;
    }
    close(fd);
    *buf = data;
    *len = size;
    return 0;
}
