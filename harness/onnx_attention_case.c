/*
 * onnx_attention_case.c - maps a loaded ONNX Attention-23/24 case onto the
 * CPU reference's descriptor (opp_onnx_attention_map) and allocates and
 * checks its output buffers (see onnx_attention_case.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/errbuf.h"
#include "harness/onnx_attention_case.h"

static const char *const in_names[7] = {
    "Q", "K", "V", "attn_mask", "past_key", "past_value", "nonpad_kv_seqlen"};

static const char *const out_names[OPP_A24_NUM_OUTPUTS] = {"Y", "present_key", "present_value",
                                                           "qk_matmul_output"};

const char *opp_onnx_attention_output_name(int slot) {
    return slot >= 0 && slot < OPP_A24_NUM_OUTPUTS ? out_names[slot] : "?";
}

static int is_float_dtype(int32_t t) {
    return t == OPP_ONNX_DT_FLOAT || t == OPP_ONNX_DT_FLOAT16 || t == OPP_ONNX_DT_BFLOAT16;
}

/* Writes "[d0,d1,...]" into buf. */
static const char *dims_str(const int64_t *dims, int rank, char *buf, size_t size) {
    size_t n = (size_t)snprintf(buf, size, "[");
    for (int i = 0; i < rank && n < size; ++i) {
        n += (size_t)snprintf(buf + n, size - n, "%s%lld", i ? "," : "", (long long)dims[i]);
    }
    if (n < size) {
        snprintf(buf + n, size - n, "]");
    }
    return buf;
}

static const char *shape_str(const opp_onnx_tensor_t *t, char *buf, size_t size) {
    return dims_str(t->dims, t->rank, buf, size);
}

/* A dim that must fit the descriptor's int32 fields (and be >= min). */
static int dim32(const opp_onnx_tensor_t *t, int axis, int64_t min, int32_t *out, const char *what,
                 char *err, size_t err_size) {
    const int64_t d = t->dims[axis];
    FAIL_IF(d < min || d > INT32_MAX, "%s dims[%d] = %lld (%s) must be %lld..%d", t->name, axis,
            (long long)d, what, (long long)min, INT32_MAX);
    *out = (int32_t)d;
    return 0;
}

static int check_attrs(const opp_onnx_model_t *m, char *err, size_t err_size) {
    static const char *const known[7] = {
        "scale",       "softcap",     "is_causal", "qk_matmul_output_mode", "softmax_precision",
        "q_num_heads", "kv_num_heads"};
    static const int32_t types[7] = {OPP_ONNX_ATTR_FLOAT, OPP_ONNX_ATTR_FLOAT, OPP_ONNX_ATTR_INT,
                                     OPP_ONNX_ATTR_INT,   OPP_ONNX_ATTR_INT,   OPP_ONNX_ATTR_INT,
                                     OPP_ONNX_ATTR_INT};
    for (int32_t a = 0; a < m->n_attrs; ++a) {
        int found = -1;
        for (int k = 0; k < 7; ++k) {
            if (strcmp(m->attrs[a].name, known[k]) == 0) {
                found = k;
            }
        }
        FAIL_IF(found < 0,
                "unknown attribute '%s' (Attention knows scale, softcap, is_causal, "
                "qk_matmul_output_mode, softmax_precision, q_num_heads, kv_num_heads)",
                m->attrs[a].name);
        FAIL_IF(m->attrs[a].type != types[found], "attribute %s has type %d, expected %s",
                m->attrs[a].name, (int)m->attrs[a].type,
                types[found] == OPP_ONNX_ATTR_FLOAT ? "FLOAT (1)" : "INT (2)");
    }
    return 0;
}

/* The attributes (checked by check_attrs) into desc. */
static int map_attrs(const opp_onnx_model_t *m, opp_ref_attention24_desc_t *d, char *err,
                     size_t err_size) {
    if (opp_onnx_model_attr(m, "scale") != NULL) {
        const float s = opp_onnx_model_attr_float(m, "scale", 0.0f);
        FAIL_IF(s == 0.0f, "attribute scale = 0 is reserved for the default (NOT_SUPPORTED)");
        d->scale = s;
    }
    d->softcap = opp_onnx_model_attr_float(m, "softcap", 0.0f);
    const int64_t causal = opp_onnx_model_attr_int(m, "is_causal", 0);
    FAIL_IF(causal != 0 && causal != 1, "attribute is_causal = %lld must be 0 or 1",
            (long long)causal);
    d->is_causal = (int32_t)causal;
    const int64_t mode = opp_onnx_model_attr_int(m, "qk_matmul_output_mode", 0);
    FAIL_IF(mode < 0 || mode > 3, "attribute qk_matmul_output_mode = %lld must be 0..3",
            (long long)mode);
    d->qk_matmul_output_mode = (int32_t)mode;
    const int64_t sp = opp_onnx_model_attr_int(m, "softmax_precision", 0);
    FAIL_IF(sp != 0 && sp != 1 && sp != 10 && sp != 11 && sp != 16,
            "attribute softmax_precision = %lld must be 1, 10, 11 or 16", (long long)sp);
    d->softmax_precision = (int32_t)sp;
    return 0;
}

/* Q, K, V shapes (3D or 4D) into desc. */
static int map_qkv(const opp_onnx_case_t *c, opp_ref_attention24_desc_t *d, char *err,
                   size_t err_size) {
    const opp_onnx_tensor_t *q = &c->inputs[0], *k = &c->inputs[1], *v = &c->inputs[2];
    char s1[96], s2[96], s3[96];
    FAIL_IF(q->rank != 3 && q->rank != 4, "Q %s: rank %d must be 3 or 4", shape_str(q, s1, 96),
            (int)q->rank);
    FAIL_IF(k->rank != q->rank || v->rank != q->rank, "Q %s, K %s, V %s: ranks must all be %d",
            shape_str(q, s1, 96), shape_str(k, s2, 96), shape_str(v, s3, 96), (int)q->rank);
    FAIL_IF(!is_float_dtype(q->elem_type), "Q dtype %s must be FLOAT, FLOAT16 or BFLOAT16",
            opp_onnx_dtype_name(q->elem_type));
    FAIL_IF(k->elem_type != q->elem_type || v->elem_type != q->elem_type,
            "K dtype %s and V dtype %s must equal Q dtype %s", opp_onnx_dtype_name(k->elem_type),
            opp_onnx_dtype_name(v->elem_type), opp_onnx_dtype_name(q->elem_type));
    d->dtype = (opp_dtype_t)q->elem_type;
    d->input_rank = q->rank;
    FAIL_IF(k->dims[0] != q->dims[0] || v->dims[0] != q->dims[0], "batch differs: Q %s, K %s, V %s",
            shape_str(q, s1, 96), shape_str(k, s2, 96), shape_str(v, s3, 96));
    if (dim32(q, 0, 1, &d->batch, "batch", err, err_size) != 0) {
        return -1;
    }
    const int kv_seq_axis = q->rank == 4 ? 2 : 1;
    FAIL_IF(v->dims[kv_seq_axis] != k->dims[kv_seq_axis],
            "K %s and V %s differ in kv sequence length", shape_str(k, s2, 96),
            shape_str(v, s3, 96));
    if (dim32(q, kv_seq_axis, 0, &d->q_seqlen, "q_sequence_length", err, err_size) != 0 ||
        dim32(k, kv_seq_axis, 0, &d->kv_seqlen, "kv_sequence_length", err, err_size) != 0) {
        return -1;
    }
    const opp_onnx_model_t *m = &c->model;
    const int64_t hq_attr = opp_onnx_model_attr_int(m, "q_num_heads", 0);
    const int64_t hkv_attr = opp_onnx_model_attr_int(m, "kv_num_heads", 0);
    if (q->rank == 4) {
        FAIL_IF(v->dims[1] != k->dims[1], "K %s and V %s differ in kv_num_heads",
                shape_str(k, s2, 96), shape_str(v, s3, 96));
        FAIL_IF(k->dims[3] != q->dims[3], "Q %s and K %s differ in head_size", shape_str(q, s1, 96),
                shape_str(k, s2, 96));
        if (dim32(q, 1, 1, &d->q_num_heads, "q_num_heads", err, err_size) != 0 ||
            dim32(k, 1, 1, &d->kv_num_heads, "kv_num_heads", err, err_size) != 0 ||
            dim32(q, 3, 1, &d->head_size, "head_size", err, err_size) != 0 ||
            dim32(v, 3, 1, &d->v_head_size, "v_head_size", err, err_size) != 0) {
            return -1;
        }
        FAIL_IF(hq_attr != 0 && hq_attr != d->q_num_heads,
                "attribute q_num_heads = %lld differs from Q %s", (long long)hq_attr,
                shape_str(q, s1, 96));
        FAIL_IF(hkv_attr != 0 && hkv_attr != d->kv_num_heads,
                "attribute kv_num_heads = %lld differs from K %s", (long long)hkv_attr,
                shape_str(k, s2, 96));
        return 0;
    }
    FAIL_IF(opp_onnx_model_attr(m, "q_num_heads") == NULL ||
                opp_onnx_model_attr(m, "kv_num_heads") == NULL,
            "3D inputs need the q_num_heads and kv_num_heads attributes");
    FAIL_IF(hq_attr < 1 || hq_attr > INT32_MAX || hkv_attr < 1 || hkv_attr > INT32_MAX,
            "attributes q_num_heads = %lld and kv_num_heads = %lld must be >= 1",
            (long long)hq_attr, (long long)hkv_attr);
    FAIL_IF(q->dims[2] % hq_attr != 0,
            "Q %s: hidden size %lld is not divisible by q_num_heads = %lld", shape_str(q, s1, 96),
            (long long)q->dims[2], (long long)hq_attr);
    FAIL_IF(k->dims[2] % hkv_attr != 0,
            "K %s: hidden size %lld is not divisible by kv_num_heads = %lld", shape_str(k, s2, 96),
            (long long)k->dims[2], (long long)hkv_attr);
    FAIL_IF(v->dims[2] % hkv_attr != 0,
            "V %s: hidden size %lld is not divisible by kv_num_heads = %lld", shape_str(v, s3, 96),
            (long long)v->dims[2], (long long)hkv_attr);
    const int64_t dq = q->dims[2] / hq_attr, dk = k->dims[2] / hkv_attr;
    const int64_t dv = v->dims[2] / hkv_attr;
    FAIL_IF(dq != dk,
            "head_size differs: Q %s / q_num_heads %lld = %lld, K %s / kv_num_heads %lld = %lld",
            shape_str(q, s1, 96), (long long)hq_attr, (long long)dq, shape_str(k, s2, 96),
            (long long)hkv_attr, (long long)dk);
    FAIL_IF(dq < 1 || dv < 1 || dq > INT32_MAX || dv > INT32_MAX,
            "head sizes D = %lld, Dv = %lld must be >= 1", (long long)dq, (long long)dv);
    d->q_num_heads = (int32_t)hq_attr;
    d->kv_num_heads = (int32_t)hkv_attr;
    d->head_size = (int32_t)dq;
    d->v_head_size = (int32_t)dv;
    return 0;
}

/* attn_mask, past_key/past_value and nonpad_kv_seqlen. */
static int map_optional(const opp_onnx_case_t *c, opp_ref_attention24_desc_t *d,
                        opp_ref_attention24_tensors_t *t, char *err, size_t err_size) {
    char s1[96], s2[96];
    const opp_onnx_tensor_t *mask = opp_onnx_case_input(c, OPP_A24_IN_MASK);
    if (mask != NULL) {
        FAIL_IF(mask->elem_type != OPP_ONNX_DT_BOOL && mask->elem_type != (int32_t)d->dtype,
                "attn_mask dtype %s must be BOOL or Q's dtype %s",
                opp_onnx_dtype_name(mask->elem_type), opp_onnx_dtype_name((int32_t)d->dtype));
        FAIL_IF(mask->rank < 1 || mask->rank > 4, "attn_mask %s: rank %d must be 1..4",
                shape_str(mask, s1, 96), (int)mask->rank);
        d->mask_dtype = (opp_dtype_t)mask->elem_type;
        d->mask_rank = mask->rank;
        for (int32_t i = 0; i < mask->rank; ++i) {
            d->mask_dims[i] = mask->dims[i];
        }
        t->attn_mask = mask->data;
    }
    const opp_onnx_tensor_t *pk = opp_onnx_case_input(c, OPP_A24_IN_PAST_KEY);
    const opp_onnx_tensor_t *pv = opp_onnx_case_input(c, OPP_A24_IN_PAST_VALUE);
    FAIL_IF((pk == NULL) != (pv == NULL), "past_key and past_value must be given together");
    if (pk != NULL) {
        FAIL_IF(pk->rank != 4 || pv->rank != 4, "past_key %s and past_value %s must be rank 4",
                shape_str(pk, s1, 96), shape_str(pv, s2, 96));
        FAIL_IF(pk->elem_type != (int32_t)d->dtype || pv->elem_type != (int32_t)d->dtype,
                "past_key dtype %s and past_value dtype %s must equal Q's dtype %s",
                opp_onnx_dtype_name(pk->elem_type), opp_onnx_dtype_name(pv->elem_type),
                opp_onnx_dtype_name((int32_t)d->dtype));
        FAIL_IF(pk->dims[0] != d->batch || pv->dims[0] != d->batch ||
                    pk->dims[1] != d->kv_num_heads || pv->dims[1] != d->kv_num_heads ||
                    pv->dims[2] != pk->dims[2] || pk->dims[3] != d->head_size ||
                    pv->dims[3] != d->v_head_size,
                "past_key %s / past_value %s must be [B=%d, Hkv=%d, P, D=%d] / [.., Dv=%d]",
                shape_str(pk, s1, 96), shape_str(pv, s2, 96), (int)d->batch, (int)d->kv_num_heads,
                (int)d->head_size, (int)d->v_head_size);
        if (dim32(pk, 2, 0, &d->past_seqlen, "past_sequence_length", err, err_size) != 0) {
            return -1;
        }
        d->has_past = 1;
        t->past_key = pk->data;
        t->past_value = pv->data;
    }
    const opp_onnx_tensor_t *np = opp_onnx_case_input(c, OPP_A24_IN_NONPAD);
    if (np != NULL) {
        FAIL_IF(np->elem_type != OPP_ONNX_DT_INT64 || np->rank != 1 || np->dims[0] != d->batch,
                "nonpad_kv_seqlen %s %s must be INT64 [B=%d]", opp_onnx_dtype_name(np->elem_type),
                shape_str(np, s1, 96), (int)d->batch);
        const int64_t *v = (const int64_t *)np->data;
        for (int32_t b = 0; b < d->batch; ++b) {
            FAIL_IF(v[b] < 0 || v[b] > d->kv_seqlen,
                    "nonpad_kv_seqlen[%d] = %lld must be 0..kv_sequence_length = %d", (int)b,
                    (long long)v[b], (int)d->kv_seqlen);
        }
        d->has_nonpad = 1;
        t->nonpad_kv_seqlen = v;
    }
    return 0;
}

static int map_impl(const opp_onnx_case_t *c, opp_ref_attention24_desc_t *d,
                    opp_ref_attention24_tensors_t *t, char *err, size_t err_size) {
    const opp_onnx_model_t *m = &c->model;
    FAIL_IF(strcmp(m->op_type, "Attention") != 0, "op_type '%s' is not Attention", m->op_type);
    FAIL_IF(m->domain[0] != '\0' && strcmp(m->domain, "ai.onnx") != 0,
            "node domain '%s' is not the default domain", m->domain);
    FAIL_IF(m->opset_version != 23 && m->opset_version != 24,
            "opset %lld: Attention is read at opset 23 or 24 only", (long long)m->opset_version);
    FAIL_IF(m->n_inputs < 3 || m->n_inputs > 7, "node has %d inputs; Attention takes 3..7",
            (int)m->n_inputs);
    FAIL_IF(m->n_outputs < 1 || m->n_outputs > 4, "node has %d outputs; Attention gives 1..4",
            (int)m->n_outputs);
    for (int s = 0; s < 3; ++s) {
        FAIL_IF(opp_onnx_case_input(c, s) == NULL, "required input %s (slot %d) is missing",
                in_names[s], s);
    }
    FAIL_IF(opp_onnx_case_output(c, OPP_A24_OUT_Y) == NULL, "output Y (slot 0) is not named");
    if (check_attrs(m, err, err_size) != 0 || map_attrs(m, d, err, err_size) != 0 ||
        map_qkv(c, d, err, err_size) != 0 || map_optional(c, d, t, err, err_size) != 0) {
        return -1;
    }
    t->q = c->inputs[0].data;
    t->k = c->inputs[1].data;
    t->v = c->inputs[2].data;
    const opp_status_t st = opp_ref_attention24_check(d);
    FAIL_IF(st != OPP_STATUS_SUCCESS, "reference rejects the case: %s: %s", opp_status_name(st),
            opp_last_error_message());
    return 0;
}

int opp_onnx_attention_map(const opp_onnx_case_t *c, opp_ref_attention24_desc_t *desc,
                           opp_ref_attention24_tensors_t *host_tensors, char *err,
                           size_t err_size) {
    if (c == NULL || desc == NULL || host_tensors == NULL) {
        return opp_errbuf_fail(err, err_size, "opp_onnx_attention_map: NULL argument");
    }
    opp_ref_attention24_desc_init(desc);
    memset(host_tensors, 0, sizeof(*host_tensors));
    if (map_impl(c, desc, host_tensors, err, err_size) != 0) {
        memset(desc, 0, sizeof(*desc));
        memset(host_tensors, 0, sizeof(*host_tensors));
        return -1;
    }
    return 0;
}

int opp_onnx_attention_output_shape(const opp_ref_attention24_desc_t *d, int slot,
                                    int64_t dims[4]) {
    const int64_t total = (int64_t)d->past_seqlen + d->kv_seqlen;
    switch (slot) {
    case OPP_A24_OUT_Y:
        if (d->input_rank == 3) {
            dims[0] = d->batch;
            dims[1] = d->q_seqlen;
            dims[2] = (int64_t)d->q_num_heads * d->v_head_size;
            dims[3] = 0;
            return 3;
        }
        dims[0] = d->batch;
        dims[1] = d->q_num_heads;
        dims[2] = d->q_seqlen;
        dims[3] = d->v_head_size;
        return 4;
    case OPP_A24_OUT_PRESENT_KEY:
    case OPP_A24_OUT_PRESENT_VALUE:
        dims[0] = d->batch;
        dims[1] = d->kv_num_heads;
        dims[2] = total;
        dims[3] = slot == OPP_A24_OUT_PRESENT_KEY ? d->head_size : d->v_head_size;
        return 4;
    case OPP_A24_OUT_QK:
        dims[0] = d->batch;
        dims[1] = d->q_num_heads;
        dims[2] = d->q_seqlen;
        dims[3] = total;
        return 4;
    default:
        return -1;
    }
}

static void **out_slot(opp_ref_attention24_tensors_t *t, int slot) {
    switch (slot) {
    case OPP_A24_OUT_Y:
        return &t->y;
    case OPP_A24_OUT_PRESENT_KEY:
        return &t->present_key;
    case OPP_A24_OUT_PRESENT_VALUE:
        return &t->present_value;
    case OPP_A24_OUT_QK:
        return &t->qk_matmul_output;
    default:
        return NULL;
    }
}

void *opp_onnx_attention_output_ptr(const opp_ref_attention24_tensors_t *t, int slot) {
    void **p = out_slot((opp_ref_attention24_tensors_t *)t, slot);
    return p != NULL ? *p : NULL;
}

void opp_onnx_attention_free_outputs(opp_ref_attention24_tensors_t *t) {
    if (t == NULL) {
        return;
    }
    for (int s = 0; s < OPP_A24_NUM_OUTPUTS; ++s) {
        void **p = out_slot(t, s);
        free(*p);
        *p = NULL;
    }
}

static int alloc_impl(const opp_onnx_case_t *c, const opp_ref_attention24_desc_t *d,
                      opp_ref_attention24_tensors_t *t, char *err, size_t err_size) {
    const size_t esize = opp_onnx_dtype_size((int32_t)d->dtype);
    FAIL_IF(esize != 2 && esize != 4, "output dtype %s is not a float type",
            opp_onnx_dtype_name((int32_t)d->dtype));
    for (int s = 0; s < OPP_A24_NUM_OUTPUTS; ++s) {
        if (s >= c->model.n_outputs || c->model.outputs[s][0] == '\0') {
            continue;
        }
        int64_t dims[4];
        const int rank = opp_onnx_attention_output_shape(d, s, dims);
        size_t count = 1;
        for (int i = 0; i < rank; ++i) {
            count *= (size_t)dims[i];
        }
        const opp_onnx_tensor_t *want = opp_onnx_case_output(c, s);
        if (want != NULL) {
            char sh[96], sh2[96];
            FAIL_IF(want->elem_type != (int32_t)d->dtype,
                    "expected output %s has dtype %s, the reference writes %s", out_names[s],
                    opp_onnx_dtype_name(want->elem_type), opp_onnx_dtype_name((int32_t)d->dtype));
            int same = want->rank == rank;
            for (int i = 0; same && i < rank; ++i) {
                same = want->dims[i] == dims[i];
            }
            FAIL_IF(!same, "expected output %s has shape %s, the reference writes %s", out_names[s],
                    shape_str(want, sh, 96), dims_str(dims, rank, sh2, 96));
        }
        void *buf = malloc(count * esize > 0 ? count * esize : 1);
        FAIL_IF(buf == NULL, "cannot allocate %zu bytes for output %s", count * esize,
                out_names[s]);
        memset(buf, 0xff, count * esize);
        *out_slot(t, s) = buf;
    }
    return 0;
}

int opp_onnx_attention_alloc_outputs(const opp_onnx_case_t *c,
                                     const opp_ref_attention24_desc_t *desc,
                                     opp_ref_attention24_tensors_t *t, char *err, size_t err_size) {
    if (c == NULL || desc == NULL || t == NULL) {
        return opp_errbuf_fail(err, err_size, "opp_onnx_attention_alloc_outputs: NULL argument");
    }
    for (int s = 0; s < OPP_A24_NUM_OUTPUTS; ++s) {
        *out_slot(t, s) = NULL;
    }
    if (alloc_impl(c, desc, t, err, err_size) != 0) {
        opp_onnx_attention_free_outputs(t);
        return -1;
    }
    return 0;
}

int opp_onnx_attention_prepare(const char *case_dir, opp_onnx_case_t *c,
                               opp_ref_attention24_desc_t *desc, opp_ref_attention24_tensors_t *t,
                               char *err, size_t err_size) {
    if (opp_onnx_case_load(case_dir, 0, c, err, err_size) != 0) {
        return -1;
    }
    if (opp_onnx_attention_map(c, desc, t, err, err_size) != 0 ||
        opp_onnx_attention_alloc_outputs(c, desc, t, err, err_size) != 0) {
        opp_onnx_case_free(c);
        return -1;
    }
    return 0;
}
