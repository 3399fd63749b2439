/*
 * onnx_sidecar.c - strict reader of the golden cases' logical_batch.txt
 * (format in testdata/README.md; API in harness/onnx_attention_case.h).
 *
 * Lines starting with '#' are comments; every other line is "key value..."
 * with single spaces, the keys of the format exactly once and in order.
 * Anything else (blank line, tab, CR, double space, unknown or repeated key,
 * a number that does not parse completely or is out of range) is an error
 * naming the file, the line and the key.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/onnx_attention_case.h"

enum {
    K_FORMAT,
    K_NAME,
    K_SEED,
    K_DTYPE,
    K_LAYOUT,
    K_BATCH,
    K_NUM_HEADS,
    K_KV_NUM_HEADS,
    K_HEAD_SIZE,
    K_V_HEAD_SIZE,
    K_SCALE,
    K_IS_CAUSAL,
    K_SOFTCAP,
    K_LQ,
    K_LKV,
    K_Q_POISON,
    K_KV_POISON,
    K_COUNT
};

static const char *const keys[K_COUNT] = {
    "format",    "name",         "seed",      "dtype",       "layout",   "batch",
    "num_heads", "kv_num_heads", "head_size", "v_head_size", "scale",    "is_causal",
    "softcap",   "lq",           "lkv",       "q_poison",    "kv_poison"};

typedef struct parser {
    const char *where;
    int line;
    const char *key;
    char *err;
    size_t err_size;
} parser_t;

static int perr(parser_t *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int perr(parser_t *p, const char *fmt, ...) {
    if (p->err != NULL && p->err_size > 0) {
        int n = snprintf(p->err, p->err_size, "%s:%d: %s: ", p->where, p->line,
                         p->key != NULL ? p->key : "(line)");
        if (n >= 0 && (size_t)n < p->err_size) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(p->err + n, p->err_size - (size_t)n, fmt, ap);
            va_end(ap);
        }
    }
    return -1;
}

/* Strict decimal integer in [min, max]. */
static int parse_int(parser_t *p, const char *s, long long min, long long max, long long *out) {
    char *end = NULL;
    errno = 0;
    const long long v = strtoll(s, &end, 10);
    if (*s == '\0' || *s == '+' || *s == ' ' || end == s || *end != '\0' || errno != 0) {
        return perr(p, "'%s' is not an integer", s);
    }
    if (v < min || v > max) {
        return perr(p, "%lld is out of range %lld..%lld", v, min, max);
    }
    *out = v;
    return 0;
}

static int parse_i32(parser_t *p, const char *s, int32_t min, int32_t *out) {
    long long v;
    if (parse_int(p, s, min, INT32_MAX, &v) != 0) {
        return -1;
    }
    *out = (int32_t)v;
    return 0;
}

/* A finite double >= 0 (> 0 when positive); float32-exact when f32. */
static int parse_real(parser_t *p, const char *s, int positive, int f32, double *out) {
    char *end = NULL;
    errno = 0;
    const double v = strtod(s, &end);
    if (*s == '\0' || *s == ' ' || end == s || *end != '\0' || errno == ERANGE) {
        return perr(p, "'%s' is not a number", s);
    }
    if (!isfinite(v) || v < 0.0 || (positive && v == 0.0)) {
        return perr(p, "%s must be finite and %s 0", s, positive ? ">" : ">=");
    }
    if (f32 && (double)(float)v != v) {
        return perr(p, "%s is not a float32 value", s);
    }
    *out = v;
    return 0;
}

/* Splits line (modified in place) at single spaces; rejects empty fields. */
static int split(parser_t *p, char *line, char **fields, int max_fields, int *n) {
    *n = 0;
    char *s = line;
    for (;;) {
        if (*n == max_fields) {
            return perr(p, "more than %d values", max_fields - 1);
        }
        fields[(*n)++] = s;
        if (*n == 1) {
            p->key = s; /* terminated below, before any message uses it */
        }
        char *sp = strchr(s, ' ');
        if (sp == NULL) {
            break;
        }
        *sp = '\0';
        s = sp + 1;
    }
    for (int i = 0; i < *n; ++i) {
        if (fields[i][0] == '\0') {
            return perr(p, "empty value (values are separated by single spaces)");
        }
        if (strpbrk(fields[i], "\t\r\v\f") != NULL) {
            return perr(p, "tab or carriage return in '%s'", fields[i]);
        }
    }
    return 0;
}

static int lengths(parser_t *p, char **f, int n, const opp_onnx_sidecar_t *s, int32_t **out) {
    if (s->batch <= 0) {
        return perr(p, "batch must come first");
    }
    if (n - 1 != s->batch) {
        return perr(p, "%d values for batch %d", n - 1, (int)s->batch);
    }
    *out = (int32_t *)malloc(sizeof(int32_t) * (size_t)s->batch);
    if (*out == NULL) {
        return perr(p, "out of memory");
    }
    for (int i = 1; i < n; ++i) {
        if (parse_i32(p, f[i], 0, &(*out)[i - 1]) != 0) {
            return -1;
        }
    }
    return 0;
}

static int value(parser_t *p, int k, char **f, int n, opp_onnx_sidecar_t *s) {
    if (k != K_LQ && k != K_LKV && n != 2) {
        return perr(p, "expected one value, got %d", n - 1);
    }
    long long v;
    double d;
    switch (k) {
    case K_FORMAT:
        if (strcmp(f[1], "1") != 0) {
            return perr(p, "format '%s' is not 1", f[1]);
        }
        s->format = 1;
        return 0;
    case K_NAME:
        if (strlen(f[1]) >= sizeof(s->name)) {
            return perr(p, "name longer than %zu bytes", sizeof(s->name) - 1);
        }
        strcpy(s->name, f[1]);
        return 0;
    case K_SEED:
        if (parse_int(p, f[1], 0, INT64_MAX, &v) != 0) {
            return -1;
        }
        s->seed = (uint64_t)v;
        return 0;
    case K_DTYPE:
        s->dtype = strcmp(f[1], "f32") == 0    ? OPP_DTYPE_F32
                   : strcmp(f[1], "f16") == 0  ? OPP_DTYPE_F16
                   : strcmp(f[1], "bf16") == 0 ? OPP_DTYPE_BF16
                                               : OPP_DTYPE_UNDEFINED;
        return s->dtype == OPP_DTYPE_UNDEFINED ? perr(p, "'%s' is not f32, f16 or bf16", f[1]) : 0;
    case K_LAYOUT:
        s->input_rank = strcmp(f[1], "4d") == 0 ? 4 : strcmp(f[1], "3d") == 0 ? 3 : 0;
        return s->input_rank == 0 ? perr(p, "'%s' is not 4d or 3d", f[1]) : 0;
    case K_BATCH:
        return parse_i32(p, f[1], 1, &s->batch);
    case K_NUM_HEADS:
        return parse_i32(p, f[1], 1, &s->num_heads);
    case K_KV_NUM_HEADS:
        return parse_i32(p, f[1], 1, &s->kv_num_heads);
    case K_HEAD_SIZE:
        return parse_i32(p, f[1], 1, &s->head_size);
    case K_V_HEAD_SIZE:
        return parse_i32(p, f[1], 1, &s->v_head_size);
    case K_SCALE:
    case K_SOFTCAP:
        if (parse_real(p, f[1], 0, 1, &d) != 0) {
            return -1;
        }
        *(k == K_SCALE ? &s->scale : &s->softcap) = (float)d;
        return 0;
    case K_IS_CAUSAL:
        if (parse_int(p, f[1], 0, 1, &v) != 0) {
            return -1;
        }
        s->is_causal = (int32_t)v;
        return 0;
    case K_LQ:
        return lengths(p, f, n, s, &s->lq);
    case K_LKV:
        return lengths(p, f, n, s, &s->lkv);
    default:
        return parse_real(p, f[1], 1, 0, k == K_Q_POISON ? &s->q_poison : &s->kv_poison);
    }
}

static int parse_impl(parser_t *p, char *text, opp_onnx_sidecar_t *s) {
    int next = 0;
    char *line = text;
    while (*line != '\0') {
        ++p->line;
        p->key = NULL;
        char *nl = strchr(line, '\n');
        if (nl != NULL) {
            *nl = '\0';
        }
        if (line[0] != '#') {
            char *f[4097];
            int n = 0;
            if (line[0] == '\0') {
                return perr(p, "empty line");
            }
            if (split(p, line, f, 4097, &n) != 0) {
                return -1;
            }
            p->key = f[0];
            int k = -1;
            for (int i = 0; i < K_COUNT; ++i) {
                if (strcmp(f[0], keys[i]) == 0) {
                    k = i;
                }
            }
            if (k < 0) {
                return perr(p, "unknown key");
            }
            if (k != next) {
                return perr(p, "%s; expected '%s' here",
                            k < next ? "repeated or out of order" : "out of order",
                            next < K_COUNT ? keys[next] : "(end of file)");
            }
            if (value(p, k, f, n, s) != 0) {
                return -1;
            }
            ++next;
        }
        if (nl == NULL) {
            break;
        }
        line = nl + 1;
    }
    if (next < K_COUNT) {
        p->key = keys[next];
        return perr(p, "missing (end of file)");
    }
    p->key = "num_heads";
    if (s->num_heads % s->kv_num_heads != 0) {
        return perr(p, "%d is not a multiple of kv_num_heads %d", (int)s->num_heads,
                    (int)s->kv_num_heads);
    }
    return 0;
}

int opp_onnx_sidecar_parse(const char *text, size_t len, const char *where, opp_onnx_sidecar_t *out,
                           char *err, size_t err_size) {
    parser_t p = {where != NULL ? where : "(text)", 0, NULL, err, err_size};
    if (out == NULL || (text == NULL && len > 0)) {
        return perr(&p, "NULL argument");
    }
    memset(out, 0, sizeof(*out));
    if (text != NULL && memchr(text, '\0', len) != NULL) {
        return perr(&p, "NUL byte in the file");
    }
    char *copy = (char *)malloc(len + 1);
    if (copy == NULL) {
        return perr(&p, "out of memory");
    }
    if (len > 0) {
        memcpy(copy, text, len);
    }
    copy[len] = '\0';
    const int rc = parse_impl(&p, copy, out);
    free(copy);
    if (rc != 0) {
        opp_onnx_sidecar_free(out);
    }
    return rc;
}

int opp_onnx_sidecar_load(const char *path, opp_onnx_sidecar_t *out, char *err, size_t err_size) {
    parser_t p = {path != NULL ? path : "(null)", 0, NULL, err, err_size};
    if (out != NULL) {
        memset(out, 0, sizeof(*out));
    }
    if (path == NULL || out == NULL) {
        return perr(&p, "NULL argument");
    }
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return perr(&p, "cannot open: %s", strerror(errno));
    }
    char *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap) {
            cap = cap ? cap * 2 : 4096;
            char *nb = cap <= ((size_t)1 << 24) ? (char *)realloc(buf, cap) : NULL;
            if (nb == NULL) {
                free(buf);
                fclose(f);
                return perr(&p, "file too large or out of memory");
            }
            buf = nb;
        }
        const size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0) {
            break;
        }
    }
    const int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        return perr(&p, "read error");
    }
    const int rc = opp_onnx_sidecar_parse(buf, len, path, out, err, err_size);
    free(buf);
    return rc;
}

void opp_onnx_sidecar_free(opp_onnx_sidecar_t *s) {
    if (s != NULL) {
        free(s->lq);
        free(s->lkv);
        memset(s, 0, sizeof(*s));
    }
}
