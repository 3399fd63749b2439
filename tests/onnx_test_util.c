/*
 * onnx_test_util.c - protobuf writer, file helpers and conformance-folder
 * lookup for the ONNX case reader tests (see onnx_test_util.h).
 */
#include "tests/onnx_test_util.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

// --- protobuf writer

static void reserve(otu_pb_t *w, size_t extra) {
    if (w->len + extra <= w->cap) {
        return;
    }
    size_t cap = w->cap > 0 ? w->cap : 64;
    while (cap < w->len + extra) {
        cap *= 2;
    }
    uint8_t *p = realloc(w->buf, cap);
    if (p == NULL) {
        fprintf(stderr, "onnx_test_util: out of memory\n");
        abort();
    }
    w->buf = p;
    w->cap = cap;
}

void otu_pb_free(otu_pb_t *w) {
    free(w->buf);
    memset(w, 0, sizeof *w);
}

void otu_pb_raw(otu_pb_t *w, const void *data, size_t n) {
    reserve(w, n);
    if (n > 0) {
        memcpy(w->buf + w->len, data, n);
    }
    w->len += n;
}

void otu_pb_varint(otu_pb_t *w, uint64_t v) {
    uint8_t b[10];
    size_t n = 0;
    do {
        b[n] = (uint8_t)(v & 0x7f);
        v >>= 7;
        b[n++] |= v != 0 ? 0x80 : 0;
    } while (v != 0);
    otu_pb_raw(w, b, n);
}

static void tag(otu_pb_t *w, uint32_t field, uint32_t wire) {
    otu_pb_varint(w, ((uint64_t)field << 3) | wire);
}

void otu_pb_int(otu_pb_t *w, uint32_t field, int64_t v) {
    tag(w, field, 0);
    otu_pb_varint(w, (uint64_t)v);
}

void otu_pb_fixed32(otu_pb_t *w, uint32_t field, uint32_t bits) {
    uint8_t b[4] = {(uint8_t)bits, (uint8_t)(bits >> 8), (uint8_t)(bits >> 16),
                    (uint8_t)(bits >> 24)};
    tag(w, field, 5);
    otu_pb_raw(w, b, 4);
}

void otu_pb_bytes(otu_pb_t *w, uint32_t field, const void *data, size_t n) {
    tag(w, field, 2);
    otu_pb_varint(w, n);
    otu_pb_raw(w, data, n);
}

void otu_pb_str(otu_pb_t *w, uint32_t field, const char *s) {
    otu_pb_bytes(w, field, s, strlen(s));
}

void otu_pb_msg(otu_pb_t *w, uint32_t field, const otu_pb_t *sub) {
    otu_pb_bytes(w, field, sub->buf, sub->len);
}

void otu_pb_tensor_raw(otu_pb_t *w, const int64_t *dims, int rank, int32_t data_type,
                       const char *name, const void *raw, size_t raw_bytes) {
    for (int d = 0; d < rank; ++d) {
        otu_pb_int(w, 1, dims[d]);
    }
    otu_pb_int(w, 2, data_type);
    if (name != NULL) {
        otu_pb_str(w, 8, name);
    }
    if (raw != NULL) {
        otu_pb_bytes(w, 9, raw, raw_bytes);
    }
}

/* ValueInfoProto{name, type{tensor_type{elem_type FLOAT, shape{dim{2}}}}} */
static void value_info_f32_2(otu_pb_t *w, uint32_t field, const char *name) {
    otu_pb_t dim = {0}, shape = {0}, tt = {0}, type = {0}, vi = {0};
    otu_pb_int(&dim, 1, 2);
    otu_pb_msg(&shape, 1, &dim);
    otu_pb_int(&tt, 1, 1);
    otu_pb_msg(&tt, 2, &shape);
    otu_pb_msg(&type, 1, &tt);
    otu_pb_str(&vi, 1, name);
    otu_pb_msg(&vi, 2, &type);
    otu_pb_msg(w, field, &vi);
    otu_pb_free(&dim);
    otu_pb_free(&shape);
    otu_pb_free(&tt);
    otu_pb_free(&type);
    otu_pb_free(&vi);
}

void otu_pb_model_add(otu_pb_t *w, int n_nodes, int with_opset, const otu_pb_t *attrs) {
    otu_pb_t graph = {0};
    for (int k = 0; k < n_nodes; ++k) {
        otu_pb_t node = {0};
        otu_pb_str(&node, 1, "A");
        otu_pb_str(&node, 1, "B");
        otu_pb_str(&node, 2, k == n_nodes - 1 ? "C" : "T");
        otu_pb_str(&node, 4, "Add");
        if (k == 0 && attrs != NULL) {
            otu_pb_raw(&node, attrs->buf, attrs->len);
        }
        otu_pb_msg(&graph, 1, &node);
        otu_pb_free(&node);
    }
    otu_pb_str(&graph, 2, "g");
    value_info_f32_2(&graph, 11, "A");
    value_info_f32_2(&graph, 11, "B");
    value_info_f32_2(&graph, 12, "C");
    otu_pb_int(w, 1, 10);
    otu_pb_msg(w, 7, &graph);
    if (with_opset) {
        otu_pb_t op = {0};
        otu_pb_str(&op, 1, "");
        otu_pb_int(&op, 2, 21);
        otu_pb_msg(w, 8, &op);
        otu_pb_free(&op);
    }
    otu_pb_free(&graph);
}

// --- files

void otu_join(char out[OTU_PATH_BYTES], const char *dir, const char *name) {
    size_t a = strlen(dir), b = strlen(name);
    if (a + 1 + b >= OTU_PATH_BYTES) {
        fprintf(stderr, "onnx_test_util: path too long: %s/%s\n", dir, name);
        abort();
    }
    memmove(out, dir, a); /* out may alias dir */
    out[a] = '/';
    memcpy(out + a + 1, name, b + 1);
}

int otu_write_file(const char *path, const void *data, size_t n) {
    FILE *f = fopen(path, "wb");
    if (f == NULL) {
        return -1;
    }
    size_t put = n > 0 ? fwrite(data, 1, n, f) : 0;
    return (fclose(f) == 0 && put == n) ? 0 : -1;
}

uint8_t *otu_read_file(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    *n = 0;
    if (f == NULL) {
        return NULL;
    }
    size_t cap = 4096, len = 0;
    uint8_t *buf = malloc(cap);
    for (;;) {
        if (buf == NULL) {
            break;
        }
        len += fread(buf + len, 1, cap - len, f);
        if (len < cap) {
            break;
        }
        cap *= 2;
        uint8_t *p = realloc(buf, cap);
        if (p == NULL) {
            free(buf);
            buf = NULL;
        }
        buf = p;
    }
    fclose(f);
    *n = len;
    return buf;
}

int otu_make_temp_dir(char out[OTU_PATH_BYTES]) {
    const char *base = getenv("TEST_TMPDIR");
    if (base == NULL || base[0] == '\0') {
        base = "/tmp";
    }
    otu_join(out, base, "onnx_io_XXXXXX");
    return mkdtemp(out) != NULL ? 0 : -1;
}

int otu_remove_tree(const char *path) {
    struct stat st;
    if (lstat(path, &st) != 0) {
        return -1;
    }
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        if (d == NULL) {
            return -1;
        }
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            char child[OTU_PATH_BYTES];
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) {
                continue;
            }
            otu_join(child, path, e->d_name);
            otu_remove_tree(child);
        }
        closedir(d);
        return rmdir(path);
    }
    return unlink(path);
}

static int copy_file(const char *src, const char *dst) {
    size_t n;
    uint8_t *buf = otu_read_file(src, &n);
    if (buf == NULL) {
        return -1;
    }
    int rc = otu_write_file(dst, buf, n);
    free(buf);
    return rc;
}

int otu_copy_case(const char *src, const char *dst) {
    char a[OTU_PATH_BYTES], b[OTU_PATH_BYTES];
    if (mkdir(dst, 0700) != 0) {
        return -1;
    }
    otu_join(a, src, "model.onnx");
    otu_join(b, dst, "model.onnx");
    if (copy_file(a, b) != 0) {
        return -1;
    }
    otu_join(a, src, "test_data_set_0");
    otu_join(b, dst, "test_data_set_0");
    DIR *d = opendir(a);
    if (d == NULL || mkdir(b, 0700) != 0) {
        if (d != NULL) {
            closedir(d);
        }
        return -1;
    }
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        char from[OTU_PATH_BYTES], to[OTU_PATH_BYTES];
        if (e->d_name[0] == '.') {
            continue;
        }
        otu_join(from, a, e->d_name);
        otu_join(to, b, e->d_name);
        rc = copy_file(from, to);
    }
    closedir(d);
    return rc;
}

// --- conformance data

static int is_dir(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

const char *otu_conformance_dir(void) {
    static char dir[OTU_PATH_BYTES];
    const char *env = getenv("OPP_ONNX_CONFORMANCE_DIR");
    const char *srcdir = getenv("TEST_SRCDIR");
    if (env != NULL && env[0] != '\0') {
        snprintf(dir, sizeof dir, "%s", env);
        return dir;
    }
    if (srcdir != NULL && srcdir[0] != '\0') {
        otu_join(dir, srcdir, "oppacked/testdata/onnx-attention-conformance");
        if (is_dir(dir)) {
            return dir;
        }
    }
    snprintf(dir, sizeof dir, "testdata/onnx-attention-conformance");
    return dir;
}

static int cmp_names(const void *a, const void *b) {
    return strcmp((const char *)a, (const char *)b);
}

int otu_list_cases(const char *dir, char names[][256], int max) {
    DIR *d = opendir(dir);
    if (d == NULL) {
        return -1;
    }
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < max) {
        char model[OTU_PATH_BYTES];
        struct stat st;
        if (e->d_name[0] == '.' || strlen(e->d_name) >= 256) {
            continue;
        }
        char sub[OTU_PATH_BYTES];
        otu_join(sub, dir, e->d_name);
        otu_join(model, sub, "model.onnx");
        if (stat(model, &st) == 0 && S_ISREG(st.st_mode)) {
            snprintf(names[n++], 256, "%s", e->d_name);
        }
    }
    closedir(d);
    qsort(names, (size_t)n, 256, cmp_names);
    return n;
}

int otu_contains(const char *haystack, const char *needle) {
    return haystack != NULL && needle != NULL && strstr(haystack, needle) != NULL;
}
