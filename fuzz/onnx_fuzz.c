/*
 * onnx_fuzz.c - libFuzzer target: the ONNX protobuf reader of tools/onnx
 * (opp_onnx_tensor_parse() and opp_onnx_model_parse()) on arbitrary bytes
 * (fuzz/README.md).
 *
 * Input: byte 0 chooses the reader (bit 0: TensorProto or ModelProto) and
 * the size of the error buffer (bits 1-7: 1 .. 127 bytes, or 512); the rest
 * is the serialized message.
 * Oracles (the reader's documented contract, tools/onnx/onnx_io.h):
 *   - success: every name NUL-terminated within its array; tensors: rank
 *     0..8, dims >= 0 (zero past rank), count == the product of dims
 *     (computed in 128 bits), nbytes == count * the element size, data NULL
 *     iff count == 0; models: counts within their limits, op_type set,
 *     attribute names set and unique and each found by
 *     opp_onnx_model_attr(), INTS / FLOATS / STRING storage consistent,
 *     TENSOR attributes obey the tensor rules;
 *   - independent round trip: a parsed tensor, re-encoded by protobuf-c as
 *     a TensorProto with raw_data, parses back to the same tensor, bytes and
 *     all;
 *   - failure: the output is all zero (owns nothing) and the message is
 *     non-empty and NUL-terminated within the error buffer.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/onnx/onnx_io.h"
#include "tools/onnx/onnx_min.pb-c.h"

#define REQUIRE(cond, ...)                                                                     \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            fprintf(stderr, "fuzz oracle failed at %s:%d: %s\n  ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                                      \
            fprintf(stderr, "\n");                                                             \
            abort();                                                                           \
        }                                                                                      \
    } while (0)

static int name_ok(const char *name) {
    return memchr(name, '\0', OPP_ONNX_NAME_MAX) != NULL;
}

static int all_zero(const void *p, size_t n) {
    const unsigned char *b = p;
    for (size_t i = 0; i < n; ++i) {
        if (b[i] != 0) {
            return 0;
        }
    }
    return 1;
}

static void check_error(const char *err, size_t err_size) {
    REQUIRE(memchr(err, '\0', err_size) != NULL, "message not NUL-terminated in %zu bytes",
            err_size);
    REQUIRE(err_size == 1 || err[0] != '\0', "empty message (buffer of %zu bytes)", err_size);
}

static void check_tensor(const opp_onnx_tensor_t *t) {
    REQUIRE(name_ok(t->name), "tensor name not terminated");
    REQUIRE(t->rank >= 0 && t->rank <= OPP_ONNX_MAX_RANK, "rank %d", (int)t->rank);
    unsigned __int128 count = 1; /* 0 if any dim is 0, whatever the others */
    int any_zero = 0;
    for (int i = 0; i < OPP_ONNX_MAX_RANK; ++i) {
        if (i < t->rank) {
            REQUIRE(t->dims[i] >= 0, "dims[%d] = %lld", i, (long long)t->dims[i]);
            any_zero |= t->dims[i] == 0;
        } else {
            REQUIRE(t->dims[i] == 0, "dims[%d] = %lld past rank", i, (long long)t->dims[i]);
        }
    }
    for (int i = 0; i < t->rank && !any_zero; ++i) {
        count *= (unsigned __int128)t->dims[i];
        REQUIRE(count <= SIZE_MAX, "an accepted element count overflows size_t");
    }
    count = any_zero ? 0 : count;
    REQUIRE(t->count == (size_t)count, "count %zu != product of dims", t->count);
    const size_t es = opp_onnx_dtype_size(t->elem_type);
    REQUIRE(es > 0, "unsupported elem_type %d accepted", (int)t->elem_type);
    REQUIRE(t->nbytes == t->count * es, "nbytes %zu != %zu * %zu", t->nbytes, t->count, es);
    REQUIRE((t->data == NULL) == (t->count == 0), "data %p with count %zu", t->data, t->count);
}

/* Re-encodes t as a TensorProto with raw_data and parses it back. */
static void round_trip(const opp_onnx_tensor_t *t) {
    Onnx__TensorProto tp = ONNX__TENSOR_PROTO__INIT;
    int64_t dims[OPP_ONNX_MAX_RANK];
    memcpy(dims, t->dims, sizeof dims);
    tp.n_dims = (size_t)t->rank;
    tp.dims = dims;
    tp.has_data_type = 1;
    tp.data_type = t->elem_type;
    char name[OPP_ONNX_NAME_MAX];
    memcpy(name, t->name, sizeof name);
    tp.name = name[0] != '\0' ? name : NULL;
    if (t->count > 0) {
        tp.has_raw_data = 1;
        tp.raw_data.len = t->nbytes;
        tp.raw_data.data = t->data;
    }
    const size_t len = onnx__tensor_proto__get_packed_size(&tp);
    uint8_t *buf = malloc(len > 0 ? len : 1);
    REQUIRE(buf != NULL, "malloc");
    onnx__tensor_proto__pack(&tp, buf);
    opp_onnx_tensor_t back;
    char err[256];
    const int rc = opp_onnx_tensor_parse(buf, len, "round trip", &back, err, sizeof err);
    REQUIRE(rc == 0, "the re-encoded tensor does not parse: %s", err);
    REQUIRE(back.elem_type == t->elem_type && back.rank == t->rank &&
                memcmp(back.dims, t->dims, sizeof back.dims) == 0 && back.count == t->count &&
                back.nbytes == t->nbytes && strcmp(back.name, t->name) == 0,
            "round trip changed the tensor's header");
    REQUIRE(t->nbytes == 0 || memcmp(back.data, t->data, t->nbytes) == 0,
            "round trip changed the bytes");
    opp_onnx_tensor_free(&back);
    free(buf);
}

static void check_model(const opp_onnx_model_t *m) {
    REQUIRE(name_ok(m->op_type) && m->op_type[0] != '\0', "op_type");
    REQUIRE(name_ok(m->domain) && name_ok(m->node_name), "domain / node name");
    REQUIRE(m->n_inputs >= 0 && m->n_inputs <= OPP_ONNX_MAX_IO, "n_inputs %d", (int)m->n_inputs);
    REQUIRE(m->n_outputs >= 0 && m->n_outputs <= OPP_ONNX_MAX_IO, "n_outputs %d",
            (int)m->n_outputs);
    for (int i = 0; i < m->n_inputs; ++i) {
        REQUIRE(name_ok(m->inputs[i]), "input %d", i);
    }
    for (int i = 0; i < m->n_outputs; ++i) {
        REQUIRE(name_ok(m->outputs[i]), "output %d", i);
    }
    REQUIRE(m->n_attrs >= 0 && m->n_attrs <= OPP_ONNX_MAX_ATTRS, "n_attrs %d", (int)m->n_attrs);
    for (int i = 0; i < m->n_attrs; ++i) {
        const opp_onnx_attr_t *a = &m->attrs[i];
        REQUIRE(name_ok(a->name) && a->name[0] != '\0', "attribute %d name", i);
        REQUIRE(opp_onnx_model_attr(m, a->name) == a, "attribute %s not unique or not found",
                a->name);
        REQUIRE(a->type != 0, "attribute %s without type", a->name);
        REQUIRE((a->ints == NULL) == (a->n_ints == 0), "ints of %s", a->name);
        REQUIRE((a->floats == NULL) == (a->n_floats == 0), "floats of %s", a->name);
        if (a->type == OPP_ONNX_ATTR_STRING) {
            REQUIRE(a->s != NULL && a->s[a->s_len] == '\0', "string of %s", a->name);
        }
        if (a->type == OPP_ONNX_ATTR_TENSOR) {
            check_tensor(&a->t);
        }
    }
    const int32_t ns[2] = {m->n_graph_inputs, m->n_graph_outputs};
    const opp_onnx_value_info_t *vis[2] = {m->graph_inputs, m->graph_outputs};
    for (int k = 0; k < 2; ++k) {
        REQUIRE(ns[k] >= 0 && ns[k] <= OPP_ONNX_MAX_IO, "graph io count %d", (int)ns[k]);
        for (int i = 0; i < ns[k]; ++i) {
            REQUIRE(name_ok(vis[k][i].name), "value info name");
            REQUIRE(vis[k][i].rank >= -1 && vis[k][i].rank <= OPP_ONNX_MAX_RANK, "value rank %d",
                    (int)vis[k][i].rank);
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) {
        return 0;
    }
    const uint8_t sel = data[0];
    ++data;
    --size;
    static char err[512];
    const size_t err_size = (sel >> 1) != 0 ? (size_t)(sel >> 1) : sizeof err;
    memset(err, 0x55, sizeof err);
    if ((sel & 1) == 0) {
        opp_onnx_tensor_t t;
        memset(&t, 0xAB, sizeof t);
        if (opp_onnx_tensor_parse(data, size, "fuzz", &t, err, err_size) == 0) {
            check_tensor(&t);
            round_trip(&t);
            opp_onnx_tensor_free(&t);
            REQUIRE(all_zero(&t, sizeof t), "tensor_free leaves bytes");
        } else {
            REQUIRE(all_zero(&t, sizeof t), "a failed parse left the tensor non-zero");
            check_error(err, err_size);
        }
        return 0;
    }
    static opp_onnx_model_t m;
    memset(&m, 0xAB, sizeof m);
    if (opp_onnx_model_parse(data, size, "fuzz", &m, err, err_size) == 0) {
        check_model(&m);
        opp_onnx_model_free(&m);
        REQUIRE(all_zero(&m, sizeof m), "model_free leaves bytes");
    } else {
        REQUIRE(all_zero(&m, sizeof m), "a failed parse left the model non-zero");
        check_error(err, err_size);
    }
    return 0;
}
