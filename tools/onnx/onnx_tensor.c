/*
 * onnx_tensor.c - TensorProto -> opp_onnx_tensor_t: validates data_type, dims
 * and the amount of data, and copies raw_data or one typed field
 * (float_data, int32_data, int64_data, double_data, uint64_data) into one
 * buffer of little-endian packed elements. Also the .pb file entry points.
 */
#include <stdlib.h>
#include <string.h>

#include "tools/onnx/onnx_io_internal.h"

// --- helpers

static void store_le(uint8_t *p, uint64_t v, size_t size) {
    for (size_t b = 0; b < size; ++b) {
        p[b] = (uint8_t)(v >> (8 * b));
    }
}

/* Accepted int32_data range per data type (ONNX stores 8/16-bit types and
 * f16/bf16 bit patterns one per int32). @return 0 if int32_data is not valid. */
static int int32_range(int32_t dt, int64_t *lo, int64_t *hi) {
    switch (dt) {
    case OPP_ONNX_DT_INT32:
        *lo = INT32_MIN;
        *hi = INT32_MAX;
        return 1;
    case OPP_ONNX_DT_INT16:
        *lo = INT16_MIN;
        *hi = INT16_MAX;
        return 1;
    case OPP_ONNX_DT_INT8:
        *lo = INT8_MIN;
        *hi = INT8_MAX;
        return 1;
    case OPP_ONNX_DT_UINT16:
    case OPP_ONNX_DT_FLOAT16:
    case OPP_ONNX_DT_BFLOAT16:
        *lo = 0;
        *hi = UINT16_MAX;
        return 1;
    case OPP_ONNX_DT_UINT8:
        *lo = 0;
        *hi = UINT8_MAX;
        return 1;
    case OPP_ONNX_DT_BOOL:
        *lo = 0;
        *hi = 1;
        return 1;
    default:
        return 0;
    }
}

static const char *external_location(const Onnx__TensorProto *tp) {
    for (size_t k = 0; k < tp->n_external_data; ++k) {
        const Onnx__StringStringEntryProto *e = tp->external_data[k];
        if (e != NULL && e->key != NULL && strcmp(e->key, "location") == 0 && e->value != NULL) {
            return e->value;
        }
    }
    return "?";
}

/* Checks dims; sets out->rank/dims/count. */
static int convert_dims(const Onnx__TensorProto *tp, const char *where, opp_onnx_tensor_t *out,
                        char *err, size_t err_size) {
    if (tp->n_dims > OPP_ONNX_MAX_RANK) {
        return opp__onnx_fail(err, err_size,
                              "%s: TensorProto.dims: rank %zu exceeds the maximum %d", where,
                              tp->n_dims, OPP_ONNX_MAX_RANK);
    }
    int any_zero = 0;
    for (size_t d = 0; d < tp->n_dims; ++d) {
        if (tp->dims[d] < 0) {
            return opp__onnx_fail(err, err_size,
                                  "%s: TensorProto.dims: dims[%zu] = %lld is negative", where, d,
                                  (long long)tp->dims[d]);
        }
        any_zero |= tp->dims[d] == 0;
        out->dims[d] = tp->dims[d];
    }
    out->rank = (int32_t)tp->n_dims;
    /* Keep count * 8 bytes representable: count <= SIZE_MAX / 8 (and < 2^63). */
    const uint64_t limit = (uint64_t)(SIZE_MAX / 8) < (uint64_t)INT64_MAX ? (uint64_t)(SIZE_MAX / 8)
                                                                          : (uint64_t)INT64_MAX;
    uint64_t count = 1;
    for (size_t d = 0; d < tp->n_dims && !any_zero; ++d) {
        uint64_t dim = (uint64_t)tp->dims[d];
        if (count > limit / dim) {
            char shape[160];
            opp__onnx_format_dims(tp->dims, tp->n_dims, shape, sizeof shape);
            return opp__onnx_fail(
                err, err_size, "%s: TensorProto.dims: element count of %s overflows", where, shape);
        }
        count *= dim;
    }
    out->count = any_zero ? 0 : (size_t)count;
    return 0;
}

/* Copies n typed values (one of the *_data arrays) into out->data as
 * little-endian elements of esize bytes, checking each against [lo, hi]. */
static int convert_typed(const Onnx__TensorProto *tp, const char *field, const char *where,
                         opp_onnx_tensor_t *out, size_t esize, char *err, size_t err_size) {
    int32_t dt = out->elem_type;
    int64_t lo = 0, hi = 0;
    for (size_t k = 0; k < out->count; ++k) {
        uint8_t *dst = (uint8_t *)out->data + k * esize;
        uint64_t bits = 0;
        if (tp->n_float_data > 0) {
            uint32_t u;
            memcpy(&u, &tp->float_data[k], 4);
            bits = u;
        } else if (tp->n_double_data > 0) {
            memcpy(&bits, &tp->double_data[k], 8);
        } else if (tp->n_int64_data > 0) {
            bits = (uint64_t)tp->int64_data[k];
        } else if (tp->n_uint64_data > 0) {
            bits = tp->uint64_data[k];
            if (dt == OPP_ONNX_DT_UINT32 && bits > UINT32_MAX) {
                return opp__onnx_fail(err, err_size,
                                      "%s: TensorProto.%s: value [%zu] = %llu is out of range for "
                                      "UINT32",
                                      where, field, k, (unsigned long long)bits);
            }
        } else {
            int64_t v = tp->int32_data[k];
            int32_range(dt, &lo, &hi);
            if (v < lo || v > hi) {
                return opp__onnx_fail(err, err_size,
                                      "%s: TensorProto.%s: value [%zu] = %lld is out of range for "
                                      "%s ([%lld, %lld])",
                                      where, field, k, (long long)v, opp_onnx_dtype_name(dt),
                                      (long long)lo, (long long)hi);
            }
            bits = (uint64_t)v;
        }
        store_le(dst, bits, esize);
    }
    return 0;
}

// --- conversion

static int tensor_from_proto(const Onnx__TensorProto *tp, const char *where, opp_onnx_tensor_t *out,
                             char *err, size_t err_size) {
    if (opp__onnx_copy_name(out->name, tp->name, where, "TensorProto.name", err, err_size) != 0) {
        return -1;
    }
    int32_t loc = tp->has_data_location ? tp->data_location : 0;
    if (loc == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL || tp->n_external_data > 0) {
        return opp__onnx_fail(err, err_size,
                              "%s: TensorProto.data_location: external data (location '%s') is "
                              "not supported; store the values inside the file (raw_data)",
                              where, external_location(tp));
    }
    if (loc != ONNX__TENSOR_PROTO__DATA_LOCATION__DEFAULT) {
        return opp__onnx_fail(err, err_size, "%s: TensorProto.data_location: unknown value %d",
                              where, (int)loc);
    }
    int32_t dt = tp->has_data_type ? tp->data_type : 0;
    out->elem_type = dt;
    size_t esize = opp_onnx_dtype_size(dt);
    if (dt == OPP_ONNX_DT_UNDEFINED) {
        return opp__onnx_fail(err, err_size, "%s: TensorProto.data_type: missing (UNDEFINED)",
                              where);
    }
    if (esize == 0) {
        return opp__onnx_fail(err, err_size,
                              "%s: TensorProto.data_type: %d (%s) is not supported by this reader",
                              where, (int)dt, opp_onnx_dtype_name(dt));
    }
    if (convert_dims(tp, where, out, err, err_size) != 0) {
        return -1;
    }
    char shape[160];
    opp__onnx_format_dims(out->dims, (size_t)out->rank, shape, sizeof shape);

    /* Exactly one data source: raw_data or one typed field (or none if empty). */
    const struct {
        const char *field;
        size_t n;
    } typed[] = {
        {"float_data", tp->n_float_data},   {"int32_data", tp->n_int32_data},
        {"string_data", tp->n_string_data}, {"int64_data", tp->n_int64_data},
        {"double_data", tp->n_double_data}, {"uint64_data", tp->n_uint64_data},
    };
    const char *field = NULL;
    size_t n_values = 0;
    for (size_t f = 0; f < sizeof typed / sizeof typed[0]; ++f) {
        if (typed[f].n == 0) {
            continue;
        }
        if (field != NULL || tp->has_raw_data) {
            return opp__onnx_fail(err, err_size, "%s: TensorProto.%s: set together with %s", where,
                                  typed[f].field, field != NULL ? field : "raw_data");
        }
        field = typed[f].field;
        n_values = typed[f].n;
    }
    size_t need = out->count * esize;
    if (tp->has_raw_data) {
        if (tp->raw_data.len != need) {
            return opp__onnx_fail(err, err_size,
                                  "%s: TensorProto.dims: %d dims %s give %zu elements but raw_data "
                                  "holds %zu bytes (need %zu)",
                                  where, (int)out->rank, shape, out->count, tp->raw_data.len, need);
        }
    } else if (field == NULL && out->count > 0) {
        return opp__onnx_fail(err, err_size,
                              "%s: TensorProto.raw_data: missing: %d dims %s give %zu elements "
                              "but neither raw_data nor a typed *_data field holds any",
                              where, (int)out->rank, shape, out->count);
    } else if (field != NULL) {
        int64_t lo, hi;
        int ok = (tp->n_float_data > 0 && dt == OPP_ONNX_DT_FLOAT) ||
                 (tp->n_int32_data > 0 && int32_range(dt, &lo, &hi)) ||
                 (tp->n_int64_data > 0 && dt == OPP_ONNX_DT_INT64) ||
                 (tp->n_double_data > 0 && dt == OPP_ONNX_DT_DOUBLE) ||
                 (tp->n_uint64_data > 0 && (dt == OPP_ONNX_DT_UINT64 || dt == OPP_ONNX_DT_UINT32));
        if (!ok) {
            return opp__onnx_fail(err, err_size,
                                  "%s: TensorProto.%s: not a valid field for data_type %d (%s)",
                                  where, field, (int)dt, opp_onnx_dtype_name(dt));
        }
        if (n_values != out->count) {
            return opp__onnx_fail(err, err_size,
                                  "%s: TensorProto.dims: %d dims %s give %zu elements but %s "
                                  "holds %zu values",
                                  where, (int)out->rank, shape, out->count, field, n_values);
        }
    }
    if (need == 0) {
        return 0;
    }
    out->data = malloc(need);
    if (out->data == NULL) {
        return opp__onnx_fail(err, err_size, "%s: out of memory for %zu bytes of tensor data",
                              where, need);
    }
    out->nbytes = need;
    if (tp->has_raw_data) {
        memcpy(out->data, tp->raw_data.data, need);
        return 0;
    }
    return convert_typed(tp, field, where, out, esize, err, err_size);
}

int opp__onnx_tensor_from_proto(const Onnx__TensorProto *tp, const char *where,
                                opp_onnx_tensor_t *out, char *err, size_t err_size) {
    memset(out, 0, sizeof *out);
    if (tensor_from_proto(tp, where, out, err, err_size) != 0) {
        opp_onnx_tensor_free(out);
        return -1;
    }
    return 0;
}

// --- public entry

int opp_onnx_tensor_parse(const void *buf, size_t len, const char *where, opp_onnx_tensor_t *out,
                          char *err, size_t err_size) {
    if (out == NULL) {
        return opp__onnx_fail(err, err_size, "opp_onnx_tensor_parse: out is NULL");
    }
    memset(out, 0, sizeof *out);
    where = where != NULL ? where : "(buffer)";
    if (buf == NULL && len > 0) {
        return opp__onnx_fail(err, err_size, "%s: buffer is NULL", where);
    }
    if (len == 0) {
        return opp__onnx_fail(err, err_size, "%s: empty file (0 bytes), not a TensorProto", where);
    }
    Onnx__TensorProto *tp = onnx__tensor_proto__unpack(NULL, len, buf);
    if (tp == NULL) {
        return opp__onnx_fail(err, err_size,
                              "%s: truncated or corrupt protobuf (protobuf-c could not unpack %zu "
                              "bytes as a TensorProto)",
                              where, len);
    }
    int rc = opp__onnx_tensor_from_proto(tp, where, out, err, err_size);
    onnx__tensor_proto__free_unpacked(tp, NULL);
    return rc;
}

int opp_onnx_tensor_load(const char *path, opp_onnx_tensor_t *out, char *err, size_t err_size) {
    uint8_t *buf;
    size_t len;
    if (out == NULL || path == NULL) {
        return opp__onnx_fail(err, err_size, "opp_onnx_tensor_load: path or out is NULL");
    }
    memset(out, 0, sizeof *out);
    if (opp__onnx_read_file(path, &buf, &len, err, err_size) != 0) {
        return -1;
    }
    int rc = opp_onnx_tensor_parse(buf, len, path, out, err, err_size);
    free(buf);
    return rc;
}

void opp_onnx_tensor_free(opp_onnx_tensor_t *t) {
    if (t == NULL) {
        return;
    }
    free(t->data);
    memset(t, 0, sizeof *t);
}
