/*
 * workloads.c - reads the benchmark workload file (format in workloads.h)
 * from a parsed JSON tree, with errors at the offending member's
 * LINE:COLUMN, selects workloads by name, and counts attended pairs and
 * FLOPs (DESIGN.md §7).
 *
 * Tested by tests/bench_workloads_test.c.
 */
#include "bench/workloads.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Writes "PATH:LINE:COLUMN: message" into err. Returns -1. */
static int schema_error(char *err, size_t size, const char *path, int line, int column,
                        const char *fmt, ...) {
    if (err == NULL || size == 0) {
        return -1;
    }
    int k = snprintf(err, size, "%s:%d:%d: ", path, line, column);
    if (k >= 0 && (size_t)k < size) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err + k, size - (size_t)k, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* The member key of obj, which must exist and have type t. */
static const opp_json_t *member(const opp_json_t *obj, const char *what, const char *key,
                                opp_json_type_t type, const char *path, char *err, size_t size) {
    const opp_json_t *v = opp_json_get(obj, key);
    if (v == NULL) {
        schema_error(err, size, path, obj->line, obj->column, "%s has no member \"%s\"", what, key);
        return NULL;
    }
    const int want_bool = type == OPP_JSON_TRUE || type == OPP_JSON_FALSE;
    const int is_bool = v->type == OPP_JSON_TRUE || v->type == OPP_JSON_FALSE;
    if (want_bool ? !is_bool : v->type != type) {
        schema_error(err, size, path, v->line, v->column, "%s member \"%s\" must be %s, not %s",
                     what, key, want_bool ? "true or false" : opp_json_type_name(type),
                     opp_json_type_name(v->type));
        return NULL;
    }
    return v;
}

/* An integer number in lo..hi. */
static int int_value(const opp_json_t *v, const char *what, const char *key, int64_t lo, int64_t hi,
                     int32_t *out, const char *path, char *err, size_t size) {
    if (v->type != OPP_JSON_NUMBER || !v->is_integer || v->number < (double)lo ||
        v->number > (double)hi) {
        return schema_error(err, size, path, v->line, v->column,
                            "%s \"%s\" must be an integer in %lld..%lld", what, key, (long long)lo,
                            (long long)hi);
    }
    *out = (int32_t)v->number;
    return 0;
}

/* Rejects members other than the allowed ones (and "note" strings). */
static int only_members(const opp_json_t *obj, const char *what, const char *const *allowed,
                        const char *path, char *err, size_t size) {
    for (size_t i = 0; i < obj->count; ++i) {
        int ok = strcmp(obj->keys[i], "note") == 0 && obj->items[i].type == OPP_JSON_STRING;
        for (int a = 0; allowed[a] != NULL && !ok; ++a) {
            ok = strcmp(obj->keys[i], allowed[a]) == 0;
        }
        if (!ok) {
            return schema_error(err, size, path, obj->key_lines[i], obj->key_columns[i],
                                "unknown member \"%s\" in %s", obj->keys[i], what);
        }
    }
    return 0;
}

static int lengths(const opp_json_t *w, const char *what, const char *key, int32_t **out,
                   int32_t *count, const char *path, char *err, size_t size) {
    const opp_json_t *a = member(w, what, key, OPP_JSON_ARRAY, path, err, size);
    if (a == NULL) {
        return -1;
    }
    if (a->count == 0 || a->count > 1000000) {
        return schema_error(err, size, path, a->line, a->column,
                            "%s \"%s\" must have 1..1000000 entries", what, key);
    }
    *out = calloc(a->count, sizeof(int32_t));
    if (*out == NULL) {
        return schema_error(err, size, path, a->line, a->column, "out of memory");
    }
    int64_t total = 0;
    for (size_t i = 0; i < a->count; ++i) {
        if (int_value(&a->items[i], what, key, 0, INT32_MAX, &(*out)[i], path, err, size) != 0) {
            return -1;
        }
        total += (*out)[i];
        if (total > INT32_MAX) {
            return schema_error(err, size, path, a->items[i].line, a->items[i].column,
                                "%s \"%s\": the token total exceeds %d", what, key, INT32_MAX);
        }
    }
    *count = (int32_t)a->count;
    return 0;
}

static int read_workload(const opp_json_t *w, int index, const char *path, opp_workload_t *out,
                         char *err, size_t size) {
    static const char *const allowed[] = {"name",   "dtype",   "heads", "kv_heads", "head_size",
                                          "causal", "softcap", "lq",    "lkv",      NULL};
    char what[96];
    snprintf(what, sizeof what, "workloads[%d]", index);
    if (w->type != OPP_JSON_OBJECT) {
        return schema_error(err, size, path, w->line, w->column, "%s must be an object, not %s",
                            what, opp_json_type_name(w->type));
    }
    const opp_json_t *name = member(w, what, "name", OPP_JSON_STRING, path, err, size);
    if (name == NULL) {
        return -1;
    }
    if (name->length == 0 || name->length >= OPP_WORKLOAD_NAME_BYTES ||
        strpbrk(name->string, ", \t") != NULL) {
        return schema_error(err, size, path, name->line, name->column,
                            "%s name must be 1..%d characters without ',' or blanks", what,
                            OPP_WORKLOAD_NAME_BYTES - 1);
    }
    memcpy(out->name, name->string, name->length + 1);
    snprintf(what, sizeof what, "workload \"%s\"", out->name);
    if (only_members(w, what, allowed, path, err, size) != 0) {
        return -1;
    }
    const opp_json_t *dt = member(w, what, "dtype", OPP_JSON_STRING, path, err, size);
    if (dt == NULL) {
        return -1;
    }
    if (strcmp(dt->string, "f32") == 0) {
        out->dtype = OPP_DTYPE_F32;
    } else if (strcmp(dt->string, "f16") == 0) {
        out->dtype = OPP_DTYPE_F16;
    } else if (strcmp(dt->string, "bf16") == 0) {
        out->dtype = OPP_DTYPE_BF16;
    } else {
        return schema_error(err, size, path, dt->line, dt->column,
                            "%s dtype \"%s\" is not one of \"f32\", \"f16\", \"bf16\"", what,
                            dt->string);
    }
    static const char *const ints[3] = {"heads", "kv_heads", "head_size"};
    int32_t *dst[3] = {&out->heads, &out->kv_heads, &out->head_size};
    for (int i = 0; i < 3; ++i) {
        const opp_json_t *v = member(w, what, ints[i], OPP_JSON_NUMBER, path, err, size);
        if (v == NULL || int_value(v, what, ints[i], 1, 1 << 20, dst[i], path, err, size) != 0) {
            return -1;
        }
    }
    if (out->heads % out->kv_heads != 0) {
        const opp_json_t *v = opp_json_get(w, "kv_heads");
        return schema_error(err, size, path, v->line, v->column,
                            "%s kv_heads (%d) does not divide heads (%d)", what, (int)out->kv_heads,
                            (int)out->heads);
    }
    const opp_json_t *causal = member(w, what, "causal", OPP_JSON_TRUE, path, err, size);
    if (causal == NULL) {
        return -1;
    }
    out->causal = causal->type == OPP_JSON_TRUE;
    const opp_json_t *softcap = opp_json_get(w, "softcap");
    out->softcap = 0.0f;
    if (softcap != NULL) {
        if (softcap->type != OPP_JSON_NUMBER || !(softcap->number >= 0.0) ||
            softcap->number > 3.0e38) {
            return schema_error(err, size, path, softcap->line, softcap->column,
                                "%s softcap must be a number >= 0 (0 = off)", what);
        }
        out->softcap = (float)softcap->number;
    }
    int32_t nq = 0, nkv = 0;
    if (lengths(w, what, "lq", &out->lq, &nq, path, err, size) != 0 ||
        lengths(w, what, "lkv", &out->lkv, &nkv, path, err, size) != 0) {
        return -1;
    }
    if (nq != nkv) {
        const opp_json_t *v = opp_json_get(w, "lkv");
        return schema_error(err, size, path, v->line, v->column,
                            "%s has %d lq entries but %d lkv entries", what, (int)nq, (int)nkv);
    }
    out->batch = nq;
    return 0;
}

int opp_workloads_from_json(const opp_json_t *root, const char *path, opp_workload_set_t *set,
                            char *err, size_t size) {
    static const char *const allowed[] = {"version", "workloads", NULL};
    memset(set, 0, sizeof(*set));
    if (root->type != OPP_JSON_OBJECT) {
        return schema_error(err, size, path, root->line, root->column,
                            "the top level must be an object, not %s",
                            opp_json_type_name(root->type));
    }
    if (only_members(root, "the top-level object", allowed, path, err, size) != 0) {
        return -1;
    }
    int32_t version = 0;
    const opp_json_t *v =
        member(root, "the top-level object", "version", OPP_JSON_NUMBER, path, err, size);
    if (v == NULL || int_value(v, "the top-level", "version", 1, 1, &version, path, err, size)) {
        return -1;
    }
    const opp_json_t *list =
        member(root, "the top-level object", "workloads", OPP_JSON_ARRAY, path, err, size);
    if (list == NULL) {
        return -1;
    }
    if (list->count == 0) {
        return schema_error(err, size, path, list->line, list->column, "\"workloads\" is empty");
    }
    set->items = calloc(list->count, sizeof(opp_workload_t));
    if (set->items == NULL) {
        return schema_error(err, size, path, list->line, list->column, "out of memory");
    }
    for (size_t i = 0; i < list->count; ++i) {
        set->count = (int)i + 1;
        if (read_workload(&list->items[i], (int)i, path, &set->items[i], err, size) != 0) {
            opp_workloads_free(set);
            return -1;
        }
        for (size_t j = 0; j < i; ++j) {
            if (strcmp(set->items[j].name, set->items[i].name) == 0) {
                const opp_json_t *n = opp_json_get(&list->items[i], "name");
                schema_error(err, size, path, n->line, n->column,
                             "duplicate workload name \"%s\" (also workloads[%d])",
                             set->items[i].name, (int)j);
                opp_workloads_free(set);
                return -1;
            }
        }
    }
    return 0;
}

int opp_workloads_load(const char *path, opp_workload_set_t *set, char *err, size_t size) {
    memset(set, 0, sizeof(*set));
    opp_json_t *root = opp_json_parse_file(path, err, size);
    if (root == NULL) {
        return -1;
    }
    const int rc = opp_workloads_from_json(root, path, set, err, size);
    opp_json_free(root);
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
