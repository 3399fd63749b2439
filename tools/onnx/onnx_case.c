/*
 * onnx_case.c - one ONNX backend-test case folder -> opp_onnx_case_t:
 * model.onnx plus test_data_set_<N>/input_K.pb and output_K.pb, mapped to
 * node slots. Files are numbered over the node's named inputs (outputs) only:
 * node inputs Q, K, V, "", "", "", nonpad give input_0..input_3 = slots
 * 0, 1, 2, 6. Each tensor is checked against the graph's ValueInfo.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "tools/onnx/onnx_io_internal.h"

#define PATH_BYTES 4096

// --- helpers

static int make_path(char *dst, char *err, size_t err_size, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

static int make_path(char *dst, char *err, size_t err_size, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(dst, PATH_BYTES, fmt, ap);
    va_end(ap);
    if (n < 0 || n >= PATH_BYTES) {
        return opp__onnx_fail(err, err_size, "path too long (over %d bytes): %.200s...",
                              PATH_BYTES - 1, dst);
    }
    return 0;
}

/* The graph's inputs (outputs) must be the node's named slots, in order:
 * that is what makes input_K.pb numbering well defined. */
static int check_numbering(const char *model_path, const char *kind,
                           const char (*slots)[OPP_ONNX_NAME_MAX], int32_t n_slots,
                           const opp_onnx_value_info_t *vis, int32_t n_vis, char *err,
                           size_t err_size) {
    int32_t k = 0;
    for (int32_t s = 0; s < n_slots; ++s) {
        if (slots[s][0] == '\0') {
            continue;
        }
        if (k >= n_vis) {
            break;
        }
        if (strcmp(slots[s], vis[k].name) != 0) {
            return opp__onnx_fail(err, err_size,
                                  "%s: GraphProto.%s: graph %s %d is '%s' but the node's named %s "
                                  "%d (slot %d) is '%s'; cannot number the %s_K.pb files",
                                  model_path, kind, kind, (int)k, vis[k].name, kind, (int)k, (int)s,
                                  slots[s], kind);
        }
        ++k;
    }
    int32_t named = 0;
    for (int32_t s = 0; s < n_slots; ++s) {
        named += slots[s][0] != '\0';
    }
    if (named != n_vis) {
        return opp__onnx_fail(err, err_size,
                              "%s: GraphProto.%s: %d graph %ss but the node has %d named %ss",
                              model_path, kind, (int)n_vis, kind, (int)named, kind);
    }
    return 0;
}

static int check_tensor(const opp_onnx_tensor_t *t, const opp_onnx_value_info_t *vi,
                        const char *path, const char *kind, int32_t slot, char *err,
                        size_t err_size) {
    if (t->name[0] != '\0' && strcmp(t->name, vi->name) != 0) {
        return opp__onnx_fail(err, err_size,
                              "%s: TensorProto.name: '%s' but this file is for node %s slot %d, "
                              "'%s' (%ss named \"\" are not numbered)",
                              path, t->name, kind, (int)slot, vi->name, kind);
    }
    if (vi->elem_type != 0 && t->elem_type != vi->elem_type) {
        return opp__onnx_fail(err, err_size,
                              "%s: TensorProto.data_type: %d (%s) but the model declares '%s' as "
                              "%d (%s)",
                              path, (int)t->elem_type, opp_onnx_dtype_name(t->elem_type), vi->name,
                              (int)vi->elem_type, opp_onnx_dtype_name(vi->elem_type));
    }
    if (vi->rank < 0) {
        return 0;
    }
    int same = vi->rank == t->rank;
    for (int32_t d = 0; same && d < t->rank; ++d) {
        same = vi->dims[d] < 0 || vi->dims[d] == t->dims[d];
    }
    if (!same) {
        char got[160], want[160];
        opp__onnx_format_dims(t->dims, (size_t)t->rank, got, sizeof got);
        opp__onnx_format_dims(vi->dims, (size_t)vi->rank, want, sizeof want);
        return opp__onnx_fail(err, err_size,
                              "%s: TensorProto.dims: %s but the model declares '%s' with shape %s "
                              "(-1 = any)",
                              path, got, vi->name, want);
    }
    return 0;
}

/* Loads <setdir>/<kind>_K.pb for every named slot, then makes sure no
 * <kind>_<n_named>.pb is left over. */
static int load_slots(const char *setdir, const char *kind, const char (*slots)[OPP_ONNX_NAME_MAX],
                      int32_t n_slots, const opp_onnx_value_info_t *vis, opp_onnx_tensor_t *tensors,
                      char *err, size_t err_size) {
    char path[PATH_BYTES];
    int32_t k = 0;
    for (int32_t s = 0; s < n_slots; ++s) {
        if (slots[s][0] == '\0') {
            continue;
        }
        if (make_path(path, err, err_size, "%s/%s_%d.pb", setdir, kind, (int)k) != 0 ||
            opp_onnx_tensor_load(path, &tensors[s], err, err_size) != 0 ||
            check_tensor(&tensors[s], &vis[k], path, kind, s, err, err_size) != 0) {
            return -1;
        }
        ++k;
    }
    struct stat st;
    if (make_path(path, err, err_size, "%s/%s_%d.pb", setdir, kind, (int)k) != 0) {
        return -1;
    }
    if (stat(path, &st) == 0) {
        return opp__onnx_fail(err, err_size,
                              "%s: unexpected file: the node has only %d named %ss (%ss named "
                              "\"\" are not numbered)",
                              path, (int)k, kind, kind);
    }
    return 0;
}

// --- public entry

static int case_load(const char *case_dir, int data_set, opp_onnx_case_t *out, char *err,
                     size_t err_size) {
    char model_path[PATH_BYTES], setdir[PATH_BYTES];
    if (data_set < 0) {
        return opp__onnx_fail(err, err_size, "%s: data set %d is negative", case_dir, data_set);
    }
    if (make_path(model_path, err, err_size, "%s/model.onnx", case_dir) != 0 ||
        make_path(setdir, err, err_size, "%s/test_data_set_%d", case_dir, data_set) != 0) {
        return -1;
    }
    if (opp_onnx_model_load(model_path, &out->model, err, err_size) != 0) {
        return -1;
    }
    out->data_set = data_set;
    const opp_onnx_model_t *m = &out->model;
    if (check_numbering(model_path, "input", m->inputs, m->n_inputs, m->graph_inputs,
                        m->n_graph_inputs, err, err_size) != 0 ||
        check_numbering(model_path, "output", m->outputs, m->n_outputs, m->graph_outputs,
                        m->n_graph_outputs, err, err_size) != 0) {
        return -1;
    }
    struct stat st;
    if (stat(setdir, &st) != 0) {
        return opp__onnx_fail(err, err_size, "cannot open %s: %s", setdir, strerror(errno));
    }
    if (!S_ISDIR(st.st_mode)) {
        return opp__onnx_fail(err, err_size, "cannot open %s: not a directory", setdir);
    }
    if (load_slots(setdir, "input", m->inputs, m->n_inputs, m->graph_inputs, out->inputs, err,
                   err_size) != 0 ||
        load_slots(setdir, "output", m->outputs, m->n_outputs, m->graph_outputs, out->outputs, err,
                   err_size) != 0) {
        return -1;
    }
    return 0;
}

int opp_onnx_case_load(const char *case_dir, int data_set, opp_onnx_case_t *out, char *err,
                       size_t err_size) {
    if (out == NULL || case_dir == NULL) {
        return opp__onnx_fail(err, err_size, "opp_onnx_case_load: case_dir or out is NULL");
    }
    memset(out, 0, sizeof *out);
    if (case_load(case_dir, data_set, out, err, err_size) != 0) {
        opp_onnx_case_free(out);
        return -1;
    }
    return 0;
}

const opp_onnx_tensor_t *opp_onnx_case_input(const opp_onnx_case_t *c, int slot) {
    if (c == NULL || slot < 0 || slot >= c->model.n_inputs || slot >= OPP_ONNX_MAX_IO ||
        c->model.inputs[slot][0] == '\0') {
        return NULL;
    }
    return &c->inputs[slot];
}

const opp_onnx_tensor_t *opp_onnx_case_output(const opp_onnx_case_t *c, int slot) {
    if (c == NULL || slot < 0 || slot >= c->model.n_outputs || slot >= OPP_ONNX_MAX_IO ||
        c->model.outputs[slot][0] == '\0') {
        return NULL;
    }
    return &c->outputs[slot];
}

void opp_onnx_case_free(opp_onnx_case_t *c) {
    if (c == NULL) {
        return;
    }
    for (int k = 0; k < OPP_ONNX_MAX_IO; ++k) {
        opp_onnx_tensor_free(&c->inputs[k]);
        opp_onnx_tensor_free(&c->outputs[k]);
    }
    opp_onnx_model_free(&c->model);
    memset(c, 0, sizeof *c);
}
