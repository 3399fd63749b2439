/*
 * onnx_attention_run.c - finding ONNX case folders and comparing a run's
 * outputs with a case's expected outputs (see onnx_attention_case.h).
 * Shared by tests/conformance_test.c, tests/golden_test.c and oppcheck.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "harness/onnx_attention_case.h"

static int is_regular(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static char *join(const char *dir, const char *name) {
    const size_t n = strlen(dir) + strlen(name) + 2;
    char *p = (char *)malloc(n);
    if (p != NULL) {
        snprintf(p, n, "%s/%s", dir, name);
    }
    return p;
}

static int cmp_paths(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int is_dir(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

const char *opp_onnx_data_dir(const char *env_var, const char *rel, char *buf, size_t size) {
    const char *env = env_var != NULL ? getenv(env_var) : NULL;
    if (env != NULL && env[0] != '\0') {
        snprintf(buf, size, "%s", env);
        return buf;
    }
    const char *srcdir = getenv("TEST_SRCDIR");
    const char *ws = getenv("TEST_WORKSPACE");
    if (srcdir != NULL && srcdir[0] != '\0') {
        snprintf(buf, size, "%s/%s/%s", srcdir, ws != NULL && ws[0] ? ws : "oppacked", rel);
        if (is_dir(buf)) {
            return buf;
        }
    }
    snprintf(buf, size, "%s", rel);
    return buf;
}

void opp_onnx_case_list_free(char **paths, int n) {
    if (paths != NULL) {
        for (int i = 0; i < n; ++i) {
            free(paths[i]);
        }
        free(paths);
    }
}

static int list_fail(char *err, size_t err_size, const char *dir, const char *why) {
    if (err != NULL && err_size > 0) {
        snprintf(err, err_size, "%s: %s", dir, why);
    }
    return -1;
}

int opp_onnx_case_list(const char *dir, char ***paths, char *err, size_t err_size) {
    if (paths == NULL || dir == NULL) {
        return list_fail(err, err_size, dir != NULL ? dir : "(null)", "NULL argument");
    }
    *paths = NULL;
    char *model = join(dir, "model.onnx");
    if (model == NULL) {
        return list_fail(err, err_size, dir, "out of memory");
    }
    const int single = is_regular(model);
    free(model);
    if (single) {
        *paths = (char **)malloc(sizeof(char *));
        if (*paths == NULL || ((*paths)[0] = strdup(dir)) == NULL) {
            free(*paths);
            *paths = NULL;
            return list_fail(err, err_size, dir, "out of memory");
        }
        return 1;
    }
    DIR *d = opendir(dir);
    if (d == NULL) {
        return list_fail(err, err_size, dir, strerror(errno));
    }
    int n = 0, cap = 0;
    char **list = NULL;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') {
            continue;
        }
        char *sub = join(dir, e->d_name);
        char *m = sub != NULL ? join(sub, "model.onnx") : NULL;
        const int is_case = m != NULL && is_regular(m);
        free(m);
        if (!is_case) {
            free(sub);
            if (sub == NULL || m == NULL) {
                break;
            }
            continue;
        }
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            char **nl = (char **)realloc(list, sizeof(char *) * (size_t)cap);
            if (nl == NULL) {
                free(sub);
                break;
            }
            list = nl;
        }
        list[n++] = sub;
    }
    const int incomplete = e != NULL;
    closedir(d);
    if (incomplete) {
        opp_onnx_case_list_free(list, n);
        return list_fail(err, err_size, dir, "out of memory while listing");
    }
    if (n > 0) {
        qsort(list, (size_t)n, sizeof(char *), cmp_paths);
    }
    *paths = list;
    return n;
}

int opp_onnx_attention_compare(const opp_onnx_case_t *c, const opp_ref_attention24_desc_t *desc,
                               const opp_ref_attention24_tensors_t *t, const char *prefix,
                               size_t max_reported, opp_onnx_attention_result_t *r, char *err,
                               size_t err_size) {
    memset(r, 0, sizeof(*r));
    for (int s = 0; s < OPP_A24_NUM_OUTPUTS; ++s) {
        const opp_onnx_tensor_t *want = opp_onnx_case_output(c, s);
        if (want == NULL) {
            continue;
        }
        const void *got = opp_onnx_attention_output_ptr(t, s);
        if (got == NULL && want->count > 0) {
            if (err != NULL && err_size > 0) {
                snprintf(err, err_size, "no buffer for expected output %s",
                         opp_onnx_attention_output_name(s));
            }
            return -1;
        }
        char what[256];
        snprintf(what, sizeof(what), "%s%s", prefix != NULL ? prefix : "",
                 opp_onnx_attention_output_name(s));
        opp_cmp_stats_t *st = &r->stats[r->n_compared];
        r->slots[r->n_compared++] = s;
        /* max_ulp 0 with exact = 0 would equate +0 and -0: bits are compared
         * (exact), the ulp statistics come with them. */
        const size_t bad =
            opp_cmp(got, want->data, want->count, desc->dtype, 1, 0, what, max_reported, st);
        if (bad == SIZE_MAX) {
            if (err != NULL && err_size > 0) {
                snprintf(err, err_size, "cannot compare output %s (dtype %s)", what,
                         opp_dtype_name(desc->dtype));
            }
            return -1;
        }
        r->mismatches += bad;
        if (st->max_ulp > r->max_ulp) {
            r->max_ulp = st->max_ulp;
        }
    }
    return r->mismatches == 0 ? 0 : 1;
}

void opp_onnx_attention_result_str(const opp_onnx_attention_result_t *r, char *buf, size_t size) {
    size_t n = 0;
    buf[0] = '\0';
    for (int i = 0; i < r->n_compared && n < size; ++i) {
        n += (size_t)snprintf(buf + n, size - n, "%s%s", i ? ", " : "",
                              opp_onnx_attention_output_name(r->slots[i]));
    }
    if (n >= size) {
        return;
    }
    if (r->mismatches == 0) {
        snprintf(buf + n, size - n, ": bit-identical");
        return;
    }
    char ulp[32];
    if (r->max_ulp == UINT64_MAX) {
        snprintf(ulp, sizeof(ulp), "NaN vs number");
    } else {
        snprintf(ulp, sizeof(ulp), "%llu ulp", (unsigned long long)r->max_ulp);
    }
    n += (size_t)snprintf(buf + n, size - n, ": %zu mismatches, max %s (", r->mismatches, ulp);
    for (int i = 0, first = 1; i < r->n_compared && n < size; ++i) {
        if (r->stats[i].mismatches > 0) {
            n += (size_t)snprintf(buf + n, size - n, "%s%s %zu", first ? "" : ", ",
                                  opp_onnx_attention_output_name(r->slots[i]),
                                  r->stats[i].mismatches);
            first = 0;
        }
    }
    if (n < size) {
        snprintf(buf + n, size - n, ")");
    }
}

int opp_onnx_case_folder(const char *env_var, const char *rel, int min_cases, char *dir,
                         size_t dir_size, char ***paths, char *err, size_t err_size) {
    char why[1024];
    opp_onnx_data_dir(env_var, rel, dir, dir_size);
    const int n = opp_onnx_case_list(dir, paths, why, sizeof(why));
    if (n < min_cases) {
        snprintf(err, err_size, "case folder %s: %s (%d cases, need >= %d); set %s", dir,
                 n < 0 ? why : "too few cases", n, min_cases, env_var);
        opp_onnx_case_list_free(*paths, n);
        *paths = NULL;
        return -1;
    }
    return n;
}

const char *opp_onnx_case_name(const char *path) {
    const char *s = strrchr(path, '/');
    return s != NULL ? s + 1 : path;
}
