/*
 * workloads.c - reads the benchmark workload file (format in workloads.h):
 * Jansson parses it strictly (syntax errors at LINE:COLUMN), then the schema
 * below turns the tree into C structs, naming the offending member and its
 * workload in every error; selects workloads by name, and counts attended
 * pairs and FLOPs (DESIGN.md §7).
 *
 * Tested by tests/bench_workloads_test.c.
 */
#include "bench/workloads.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Jansson, strict: duplicate keys are errors; the top level is an object or
 * an array; nothing may follow it; no NUL inside strings. */
#define WORKLOADS_JSON_FLAGS JSON_REJECT_DUPLICATES

/* Writes "PATH: message" into err. Returns -1. */
static int schema_error(char *err, size_t size, const char *path, const char *fmt, ...) {
    if (err == NULL || size == 0) {
        return -1;
    }
    int k = snprintf(err, size, "%s: ", path);
    if (k >= 0 && (size_t)k < size) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err + k, size - (size_t)k, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* Writes Jansson's error as "PATH:LINE:COLUMN: text" ("PATH: text" when it
 * has no position, e.g. a file that cannot be opened). Returns -1. */
static int syntax_error(char *err, size_t size, const char *path, const json_error_t *e) {
    if (err != NULL && size > 0) {
        if (e->line > 0) {
            snprintf(err, size, "%s:%d:%d: %s", path, e->line, e->column, e->text);
        } else {
            snprintf(err, size, "%s: %s", path, e->text);
        }
    }
    return -1;
}

/* The schema's name for a value's type ("number" for integers and reals). */
static const char *type_name(const json_t *v) {
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "object";
    case JSON_ARRAY:
        return "array";
    case JSON_STRING:
        return "string";
    case JSON_INTEGER:
    case JSON_REAL:
        return "number";
    case JSON_TRUE:
        return "true";
    case JSON_FALSE:
        return "false";
    case JSON_NULL:
    default:
        return "null";
    }
}

typedef enum { WANT_STRING, WANT_NUMBER, WANT_BOOL, WANT_ARRAY } want_t;

/* The member key of obj, which must exist and have the wanted type. */
static const json_t *member(const json_t *obj, const char *what, const char *key, want_t want,
                            const char *path, char *err, size_t size) {
    static const char *const want_names[] = {"string", "number", "true or false", "array"};
    const json_t *v = json_object_get(obj, key);
    if (v == NULL) {
        schema_error(err, size, path, "%s has no member \"%s\"", what, key);
        return NULL;
    }
    const int ok = want == WANT_STRING   ? json_is_string(v)
                   : want == WANT_NUMBER ? json_is_number(v)
                   : want == WANT_BOOL   ? json_is_boolean(v)
                                         : json_is_array(v);
    if (!ok) {
        schema_error(err, size, path, "%s member \"%s\" must be %s, not %s", what, key,
                     want_names[want], type_name(v));
        return NULL;
    }
    return v;
}

/* An integer literal (no fraction, no exponent) in lo..hi. */
static int int_value(const json_t *v, const char *what, const char *key, int64_t lo, int64_t hi,
                     int32_t *out, const char *path, char *err, size_t size) {
    if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi) {
        return schema_error(err, size, path, "%s \"%s\" must be an integer in %lld..%lld", what,
                            key, (long long)lo, (long long)hi);
    }
    *out = (int32_t)json_integer_value(v);
    return 0;
}

/* Rejects members other than the allowed ones (and "note" strings). */
static int only_members(const json_t *obj, const char *what, const char *const *allowed,
                        const char *path, char *err, size_t size) {
    const char *key;
    const json_t *value;
    json_object_foreach((json_t *)obj, key, value) {
        int ok = strcmp(key, "note") == 0 && json_is_string(value);
        for (int a = 0; allowed[a] != NULL && !ok; ++a) {
            ok = strcmp(key, allowed[a]) == 0;
        }
        if (!ok) {
            return schema_error(err, size, path, "unknown member \"%s\" in %s", key, what);
        }
    }
    return 0;
}

static int lengths(const json_t *w, const char *what, const char *key, int32_t **out,
                   int32_t *count, const char *path, char *err, size_t size) {
    const json_t *a = member(w, what, key, WANT_ARRAY, path, err, size);
    if (a == NULL) {
        return -1;
    }
    const size_t n = json_array_size(a);
    if (n == 0 || n > 1000000) {
        return schema_error(err, size, path, "%s \"%s\" must have 1..1000000 entries", what, key);
    }
    *out = calloc(n, sizeof(int32_t));
    if (*out == NULL) {
        return schema_error(err, size, path, "out of memory");
    }
    int64_t total = 0;
    for (size_t i = 0; i < n; ++i) {
        char item[80];
        snprintf(item, sizeof item, "%s[%zu]", key, i);
        if (int_value(json_array_get(a, i), what, item, 0, INT32_MAX, &(*out)[i], path, err,
                      size) != 0) {
            return -1;
        }
        total += (*out)[i];
        if (total > INT32_MAX) {
            return schema_error(err, size, path, "%s \"%s\": the token total exceeds %d", what, key,
                                INT32_MAX);
        }
    }
    *count = (int32_t)n;
    return 0;
}

static int read_workload(const json_t *w, int index, const char *path, opp_workload_t *out,
                         char *err, size_t size) {
    static const char *const allowed[] = {"name",   "dtype",   "heads", "kv_heads", "head_size",
                                          "causal", "softcap", "lq",    "lkv",      NULL};
    char what[96];
    snprintf(what, sizeof what, "workloads[%d]", index);
    if (!json_is_object(w)) {
        return schema_error(err, size, path, "%s must be an object, not %s", what, type_name(w));
    }
    const json_t *name = member(w, what, "name", WANT_STRING, path, err, size);
    if (name == NULL) {
        return -1;
    }
    const size_t name_len = json_string_length(name);
    if (name_len == 0 || name_len >= OPP_WORKLOAD_NAME_BYTES ||
        strpbrk(json_string_value(name), ", \t") != NULL) {
        return schema_error(err, size, path,
                            "%s name must be 1..%d characters without ',' or blanks", what,
                            OPP_WORKLOAD_NAME_BYTES - 1);
    }
    memcpy(out->name, json_string_value(name), name_len + 1);
    snprintf(what, sizeof what, "workload \"%s\"", out->name);
    if (only_members(w, what, allowed, path, err, size) != 0) {
        return -1;
    }
    const json_t *dt = member(w, what, "dtype", WANT_STRING, path, err, size);
    if (dt == NULL) {
        return -1;
    }
    const char *dts = json_string_value(dt);
    if (strcmp(dts, "f32") == 0) {
        out->dtype = OPP_DTYPE_F32;
    } else if (strcmp(dts, "f16") == 0) {
        out->dtype = OPP_DTYPE_F16;
    } else if (strcmp(dts, "bf16") == 0) {
        out->dtype = OPP_DTYPE_BF16;
    } else {
        return schema_error(err, size, path,
                            "%s dtype \"%s\" is not one of \"f32\", \"f16\", \"bf16\"", what, dts);
    }
    static const char *const ints[3] = {"heads", "kv_heads", "head_size"};
    int32_t *dst[3] = {&out->heads, &out->kv_heads, &out->head_size};
    for (int i = 0; i < 3; ++i) {
        const json_t *v = member(w, what, ints[i], WANT_NUMBER, path, err, size);
        if (v == NULL || int_value(v, what, ints[i], 1, 1 << 20, dst[i], path, err, size) != 0) {
            return -1;
        }
    }
    if (out->heads % out->kv_heads != 0) {
        return schema_error(err, size, path, "%s kv_heads (%d) does not divide heads (%d)", what,
                            (int)out->kv_heads, (int)out->heads);
    }
    const json_t *causal = member(w, what, "causal", WANT_BOOL, path, err, size);
    if (causal == NULL) {
        return -1;
    }
    out->causal = json_is_true(causal);
    const json_t *softcap = json_object_get(w, "softcap");
    out->softcap = 0.0f;
    if (softcap != NULL) {
        if (!json_is_number(softcap) || !(json_number_value(softcap) >= 0.0) ||
            json_number_value(softcap) > 3.0e38) {
            return schema_error(err, size, path, "%s softcap must be a number >= 0 (0 = off)",
                                what);
        }
        out->softcap = (float)json_number_value(softcap);
    }
    int32_t nq = 0, nkv = 0;
    if (lengths(w, what, "lq", &out->lq, &nq, path, err, size) != 0 ||
        lengths(w, what, "lkv", &out->lkv, &nkv, path, err, size) != 0) {
        return -1;
    }
    if (nq != nkv) {
        return schema_error(err, size, path, "%s has %d lq entries but %d lkv entries", what,
                            (int)nq, (int)nkv);
    }
    out->batch = nq;
    return 0;
}

/* The schema on a parsed tree: the top-level object, then each workload. */
static int from_tree(const json_t *root, const char *path, opp_workload_set_t *set, char *err,
                     size_t size) {
    static const char *const allowed[] = {"version", "workloads", NULL};
    static const char *const top = "the top-level object";
    if (!json_is_object(root)) {
        return schema_error(err, size, path, "the top level must be an object, not %s",
                            type_name(root));
    }
    if (only_members(root, top, allowed, path, err, size) != 0) {
        return -1;
    }
    int32_t version = 0;
    const json_t *v = member(root, top, "version", WANT_NUMBER, path, err, size);
    if (v == NULL || int_value(v, "the top-level", "version", 1, 1, &version, path, err, size)) {
        return -1;
    }
    const json_t *list = member(root, top, "workloads", WANT_ARRAY, path, err, size);
    if (list == NULL) {
        return -1;
    }
    const size_t n = json_array_size(list);
    if (n == 0) {
        return schema_error(err, size, path, "\"workloads\" is empty");
    }
    set->items = calloc(n, sizeof(opp_workload_t));
    if (set->items == NULL) {
        return schema_error(err, size, path, "out of memory");
    }
    for (size_t i = 0; i < n; ++i) {
        set->count = (int)i + 1;
        if (read_workload(json_array_get(list, i), (int)i, path, &set->items[i], err, size) != 0) {
            opp_workloads_free(set);
            return -1;
        }
        for (size_t j = 0; j < i; ++j) {
            if (strcmp(set->items[j].name, set->items[i].name) == 0) {
                schema_error(err, size, path,
                             "duplicate workload name \"%s\" (workloads[%d] and workloads[%d])",
                             set->items[i].name, (int)j, (int)i);
                opp_workloads_free(set);
                return -1;
            }
        }
    }
    return 0;
}

int opp_workloads_parse(const char *text, size_t length, const char *path, opp_workload_set_t *set,
                        char *err, size_t size) {
    memset(set, 0, sizeof(*set));
    json_error_t e;
    json_t *root = json_loadb(text, length, WORKLOADS_JSON_FLAGS, &e);
    if (root == NULL) {
        return syntax_error(err, size, path, &e);
    }
    const int rc = from_tree(root, path, set, err, size);
    json_decref(root);
    return rc;
}

const char *opp_workloads_path(const char *given, char *buf, size_t size) {
    const char *env = getenv("OPP_WORKLOADS");
    const char *root = getenv("BUILD_WORKSPACE_DIRECTORY");
    if (given != NULL) {
        return given;
    }
    if (env != NULL && env[0] != '\0') {
        return env;
    }
    snprintf(buf, size, "%s%s../shared/bench/workloads.json", root != NULL ? root : "",
             root != NULL ? "/" : "");
    return buf;
}

int opp_workloads_load(const char *path, opp_workload_set_t *set, char *err, size_t size) {
    memset(set, 0, sizeof(*set));
    json_error_t e;
    json_t *root = json_load_file(path, WORKLOADS_JSON_FLAGS, &e);
    if (root == NULL) {
        return syntax_error(err, size, path, &e);
    }
    const int rc = from_tree(root, path, set, err, size);
    json_decref(root);
    return rc;
}

void opp_workloads_free(opp_workload_set_t *set) {
    if (set == NULL) {
        return;
    }
    for (int i = 0; i < set->count; ++i) {
        free(set->items[i].lq);
        free(set->items[i].lkv);
    }
    free(set->items);
    memset(set, 0, sizeof(*set));
}

int opp_workloads_select(const opp_workload_set_t *set, const char *only, int *selected, char *err,
                         size_t size) {
    int n = 0;
    for (int i = 0; i < set->count; ++i) {
        selected[i] = (only == NULL || only[0] == '\0');
        n += selected[i];
    }
    if (n > 0) {
        return n;
    }
    const char *p = only;
    while (*p != '\0') {
        const size_t len = strcspn(p, ",");
        int hit = 0;
        for (int i = 0; i < set->count; ++i) {
            if (strlen(set->items[i].name) == len && strncmp(set->items[i].name, p, len) == 0) {
                n += !selected[i];
                selected[i] = hit = 1;
            }
        }
        if (!hit) {
            int k = snprintf(err, size, "unknown workload '%.*s' (known:", (int)len, p);
            for (int i = 0; i < set->count && k >= 0 && (size_t)k < size; ++i) {
                k += snprintf(err + k, size - (size_t)k, " %s", set->items[i].name);
            }
            if (k >= 0 && (size_t)k < size) {
                snprintf(err + k, size - (size_t)k, ")");
            }
            return -1;
        }
        p += len + (p[len] == ',');
    }
    return n;
}

int64_t opp_attended_pairs(int32_t lq, int32_t lkv, int causal) {
    if (lq <= 0 || lkv <= 0) {
        return 0;
    }
    if (!causal) {
        return (int64_t)lq * lkv;
    }
    /* Query i sees keys 0 .. i + off (off = lkv - lq), i.e. i + off + 1 keys
     * when positive; the last query (i = lq - 1) sees all lkv. The counts are
     * consecutive integers from first = i0 + off + 1 up to lkv, where i0 is
     * the first query that sees a key. */
    const int64_t off = (int64_t)lkv - lq;
    const int64_t i0 = off >= 0 ? 0 : -off;
    const int64_t n = (int64_t)lq - i0;
    if (n <= 0) {
        return 0;
    }
    const int64_t first = i0 + off + 1;
    return n * (first + lkv) / 2;
}

double opp_workload_flops(const opp_workload_t *w) {
    int64_t pairs = 0;
    for (int32_t b = 0; b < w->batch; ++b) {
        pairs += opp_attended_pairs(w->lq[b], w->lkv[b], w->causal);
    }
    return 4.0 * (double)pairs * (double)w->heads * (double)w->head_size;
}

void opp_workload_tokens(const opp_workload_t *w, int64_t *total_q, int64_t *total_kv) {
    *total_q = *total_kv = 0;
    for (int32_t b = 0; b < w->batch; ++b) {
        *total_q += w->lq[b];
        *total_kv += w->lkv[b];
    }
}
