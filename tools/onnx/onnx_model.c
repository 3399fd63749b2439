/*
 * onnx_model.c - ModelProto -> opp_onnx_model_t for single-node models:
 * IR and opset versions, the node's op_type/domain/inputs/outputs, its
 * attributes (INT, FLOAT, STRING, TENSOR, INTS, FLOATS values), and the
 * graph's input/output ValueInfos (name, elem_type, dims).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/onnx/onnx_io_internal.h"

// --- attributes

static int convert_attr(const Onnx__AttributeProto *ap, size_t index, const char *where,
                        opp_onnx_attr_t *out, char *err, size_t err_size) {
    char field[64];
    snprintf(field, sizeof field, "NodeProto.attribute[%zu].name", index);
    if (opp__onnx_copy_name(out->name, ap->name, where, field, err, err_size) != 0) {
        return -1;
    }
    if (out->name[0] == '\0') {
        return opp__onnx_fail(err, err_size, "%s: %s: missing or empty", where, field);
    }
    out->type = ap->has_type ? ap->type : 0;
    switch (out->type) {
    case OPP_ONNX_ATTR_FLOAT:
        out->f = ap->f;
        return 0;
    case OPP_ONNX_ATTR_INT:
        out->i = ap->i;
        return 0;
    case OPP_ONNX_ATTR_STRING:
        out->s = malloc(ap->s.len + 1);
        if (out->s == NULL) {
            return opp__onnx_fail(err, err_size, "%s: attribute '%s': out of memory", where,
                                  out->name);
        }
        if (ap->s.len > 0) {
            memcpy(out->s, ap->s.data, ap->s.len);
        }
        out->s[ap->s.len] = '\0';
        out->s_len = ap->s.len;
        return 0;
    case OPP_ONNX_ATTR_TENSOR: {
        char twhere[OPP_ONNX_NAME_MAX + 4096];
        if (ap->t == NULL) {
            return opp__onnx_fail(err, err_size, "%s: AttributeProto.t: missing for TENSOR '%s'",
                                  where, out->name);
        }
        snprintf(twhere, sizeof twhere, "%s: attribute '%s'", where, out->name);
        return opp__onnx_tensor_from_proto(ap->t, twhere, &out->t, err, err_size);
    }
    case OPP_ONNX_ATTR_INTS:
        if (ap->n_ints > 0) {
            out->ints = malloc(ap->n_ints * sizeof *out->ints);
            if (out->ints == NULL) {
                return opp__onnx_fail(err, err_size, "%s: attribute '%s': out of memory", where,
                                      out->name);
            }
            memcpy(out->ints, ap->ints, ap->n_ints * sizeof *out->ints);
            out->n_ints = ap->n_ints;
        }
        return 0;
    case OPP_ONNX_ATTR_FLOATS:
        if (ap->n_floats > 0) {
            out->floats = malloc(ap->n_floats * sizeof *out->floats);
            if (out->floats == NULL) {
                return opp__onnx_fail(err, err_size, "%s: attribute '%s': out of memory", where,
                                      out->name);
            }
            memcpy(out->floats, ap->floats, ap->n_floats * sizeof *out->floats);
            out->n_floats = ap->n_floats;
        }
        return 0;
    case 0:
        return opp__onnx_fail(err, err_size,
                              "%s: AttributeProto.type: missing (UNDEFINED) for attribute '%s'",
                              where, out->name);
    default:
        return 0; /* GRAPH, STRINGS, TENSORS, ...: kept as name and type only */
    }
}

static void free_attr(opp_onnx_attr_t *a) {
    free(a->ints);
    free(a->floats);
    free(a->s);
    opp_onnx_tensor_free(&a->t);
    memset(a, 0, sizeof *a);
}

// --- value infos and names

static int convert_value_info(const Onnx__ValueInfoProto *vp, const char *field, const char *where,
                              opp_onnx_value_info_t *out, char *err, size_t err_size) {
    char name_field[80];
    snprintf(name_field, sizeof name_field, "%s.name", field);
    if (opp__onnx_copy_name(out->name, vp->name, where, name_field, err, err_size) != 0) {
        return -1;
    }
    out->rank = -1;
    const Onnx__TypeProto__Tensor *tt = vp->type != NULL ? vp->type->tensor_type : NULL;
    if (tt == NULL) {
        return 0;
    }
    out->elem_type = tt->has_elem_type ? tt->elem_type : 0;
    if (tt->shape == NULL) {
        return 0;
    }
    if (tt->shape->n_dim > OPP_ONNX_MAX_RANK) {
        return opp__onnx_fail(err, err_size,
                              "%s: %s '%s': TensorShapeProto.dim: rank %zu exceeds "
                              "the maximum %d",
                              where, field, out->name, tt->shape->n_dim, OPP_ONNX_MAX_RANK);
    }
    out->rank = (int32_t)tt->shape->n_dim;
    for (size_t d = 0; d < tt->shape->n_dim; ++d) {
        const Onnx__TensorShapeProto__Dimension *dim = tt->shape->dim[d];
        out->dims[d] = -1;
        if (dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
            if (dim->dim_value < 0) {
                return opp__onnx_fail(err, err_size,
                                      "%s: %s '%s': Dimension.dim_value: dim %zu "
                                      "= %lld is negative",
                                      where, field, out->name, d, (long long)dim->dim_value);
            }
            out->dims[d] = dim->dim_value;
        }
    }
    return 0;
}

static int copy_names(char **src, size_t n, const char *field, const char *where,
                      char dst[][OPP_ONNX_NAME_MAX], int32_t *n_out, char *err, size_t err_size) {
    if (n > OPP_ONNX_MAX_IO) {
        return opp__onnx_fail(err, err_size, "%s: %s: %zu entries, more than the %d supported",
                              where, field, n, OPP_ONNX_MAX_IO);
    }
    for (size_t k = 0; k < n; ++k) {
        char item[64];
        snprintf(item, sizeof item, "%s[%zu]", field, k);
        if (opp__onnx_copy_name(dst[k], src[k], where, item, err, err_size) != 0) {
            return -1;
        }
    }
    *n_out = (int32_t)n;
    return 0;
}

// --- model

static int is_default_domain(const char *domain) {
    return domain == NULL || domain[0] == '\0' || strcmp(domain, "ai.onnx") == 0;
}

static int convert_model(const Onnx__ModelProto *mp, const char *where, opp_onnx_model_t *out,
                         char *err, size_t err_size) {
    if (!mp->has_ir_version) {
        return opp__onnx_fail(err, err_size, "%s: ModelProto.ir_version: missing", where);
    }
    out->ir_version = mp->ir_version;
    int default_opsets = 0;
    for (size_t k = 0; k < mp->n_opset_import; ++k) {
        const Onnx__OperatorSetIdProto *op = mp->opset_import[k];
        if (is_default_domain(op->domain)) {
            out->opset_version = op->version;
            ++default_opsets;
        }
    }
    if (default_opsets > 1) {
        return opp__onnx_fail(err, err_size,
                              "%s: ModelProto.opset_import: %d entries for the default domain",
                              where, default_opsets);
    }
    const Onnx__GraphProto *g = mp->graph;
    if (g == NULL) {
        return opp__onnx_fail(err, err_size, "%s: ModelProto.graph: missing", where);
    }
    if (g->n_node != 1) {
        return opp__onnx_fail(err, err_size,
                              "%s: GraphProto.node: the graph has %zu nodes; this reader handles "
                              "single-node models only",
                              where, g->n_node);
    }
    if (g->n_initializer > 0) {
        return opp__onnx_fail(err, err_size,
                              "%s: GraphProto.initializer: %zu initializers; not supported (test "
                              "data must come from input_K.pb files)",
                              where, g->n_initializer);
    }
    const Onnx__NodeProto *node = g->node[0];
    if (opp__onnx_copy_name(out->op_type, node->op_type, where, "NodeProto.op_type", err,
                            err_size) != 0 ||
        opp__onnx_copy_name(out->domain, node->domain, where, "NodeProto.domain", err, err_size) !=
            0 ||
        opp__onnx_copy_name(out->node_name, node->name, where, "NodeProto.name", err, err_size) !=
            0) {
        return -1;
    }
    if (out->op_type[0] == '\0') {
        return opp__onnx_fail(err, err_size, "%s: NodeProto.op_type: missing", where);
    }
    if (is_default_domain(out->domain) && default_opsets == 0) {
        return opp__onnx_fail(err, err_size,
                              "%s: ModelProto.opset_import: no entry for the default domain "
                              "(\"\" or ai.onnx) of node '%s'",
                              where, out->op_type);
    }
    if (copy_names(node->input, node->n_input, "NodeProto.input", where, out->inputs,
                   &out->n_inputs, err, err_size) != 0 ||
        copy_names(node->output, node->n_output, "NodeProto.output", where, out->outputs,
                   &out->n_outputs, err, err_size) != 0) {
        return -1;
    }
    if (node->n_attribute > OPP_ONNX_MAX_ATTRS) {
        return opp__onnx_fail(err, err_size,
                              "%s: NodeProto.attribute: %zu attributes, more than the %d supported",
                              where, node->n_attribute, OPP_ONNX_MAX_ATTRS);
    }
    for (size_t k = 0; k < node->n_attribute; ++k) {
        out->n_attrs = (int32_t)k + 1; /* so that a failure frees this one too */
        if (convert_attr(node->attribute[k], k, where, &out->attrs[k], err, err_size) != 0) {
            return -1;
        }
        if (opp_onnx_model_attr(out, out->attrs[k].name) != &out->attrs[k]) {
            return opp__onnx_fail(err, err_size,
                                  "%s: NodeProto.attribute: attribute '%s' appears twice", where,
                                  out->attrs[k].name);
        }
    }
    if (g->n_input > OPP_ONNX_MAX_IO || g->n_output > OPP_ONNX_MAX_IO) {
        return opp__onnx_fail(err, err_size,
                              "%s: GraphProto: %zu inputs and %zu outputs, more than the %d "
                              "supported",
                              where, g->n_input, g->n_output, OPP_ONNX_MAX_IO);
    }
    for (size_t k = 0; k < g->n_input; ++k) {
        if (convert_value_info(g->input[k], "GraphProto.input", where, &out->graph_inputs[k], err,
                               err_size) != 0) {
            return -1;
        }
    }
    out->n_graph_inputs = (int32_t)g->n_input;
    for (size_t k = 0; k < g->n_output; ++k) {
        if (convert_value_info(g->output[k], "GraphProto.output", where, &out->graph_outputs[k],
                               err, err_size) != 0) {
            return -1;
        }
    }
    out->n_graph_outputs = (int32_t)g->n_output;
    return 0;
}

// --- public entry

int opp_onnx_model_parse(const void *buf, size_t len, const char *where, opp_onnx_model_t *out,
                         char *err, size_t err_size) {
    if (out == NULL) {
        return opp__onnx_fail(err, err_size, "opp_onnx_model_parse: out is NULL");
    }
    memset(out, 0, sizeof *out);
    where = where != NULL ? where : "(buffer)";
    if (buf == NULL && len > 0) {
        return opp__onnx_fail(err, err_size, "%s: buffer is NULL", where);
    }
    if (len == 0) {
        return opp__onnx_fail(err, err_size, "%s: empty file (0 bytes), not a ModelProto", where);
    }
    Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, len, buf);
    if (mp == NULL) {
        return opp__onnx_fail(err, err_size,
                              "%s: truncated or corrupt protobuf (protobuf-c could not unpack %zu "
                              "bytes as a ModelProto)",
                              where, len);
    }
    int rc = convert_model(mp, where, out, err, err_size);
    onnx__model_proto__free_unpacked(mp, NULL);
    if (rc != 0) {
        opp_onnx_model_free(out);
    }
    return rc;
}

int opp_onnx_model_load(const char *path, opp_onnx_model_t *out, char *err, size_t err_size) {
    uint8_t *buf;
    size_t len;
    if (out == NULL || path == NULL) {
        return opp__onnx_fail(err, err_size, "opp_onnx_model_load: path or out is NULL");
    }
    memset(out, 0, sizeof *out);
    if (opp__onnx_read_file(path, &buf, &len, err, err_size) != 0) {
        return -1;
    }
    int rc = opp_onnx_model_parse(buf, len, path, out, err, err_size);
    free(buf);
    return rc;
}

void opp_onnx_model_free(opp_onnx_model_t *m) {
    if (m == NULL) {
        return;
    }
    for (int32_t k = 0; k < m->n_attrs && k < OPP_ONNX_MAX_ATTRS; ++k) {
        free_attr(&m->attrs[k]);
    }
    memset(m, 0, sizeof *m);
}

const opp_onnx_attr_t *opp_onnx_model_attr(const opp_onnx_model_t *m, const char *name) {
    if (m == NULL || name == NULL) {
        return NULL;
    }
    for (int32_t k = 0; k < m->n_attrs && k < OPP_ONNX_MAX_ATTRS; ++k) {
        if (strcmp(m->attrs[k].name, name) == 0) {
            return &m->attrs[k];
        }
    }
    return NULL;
}

int64_t opp_onnx_model_attr_int(const opp_onnx_model_t *m, const char *name, int64_t dflt) {
    const opp_onnx_attr_t *a = opp_onnx_model_attr(m, name);
    return a != NULL && a->type == OPP_ONNX_ATTR_INT ? a->i : dflt;
}

float opp_onnx_model_attr_float(const opp_onnx_model_t *m, const char *name, float dflt) {
    const opp_onnx_attr_t *a = opp_onnx_model_attr(m, name);
    return a != NULL && a->type == OPP_ONNX_ATTR_FLOAT ? a->f : dflt;
}
