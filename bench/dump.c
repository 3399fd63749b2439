/*
 * dump.c - oppbench --dump: a workload's tensors as raw files plus
 * meta.json (layout in dump.h).
 */
#include "bench/dump.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "bench/json_write.h"

static int fail(char *err, size_t size, const char *path, const char *why) {
    snprintf(err, size, "%s: %s", path, why);
    return -1;
}

static int make_dir(const char *path, char *err, size_t size) {
    if (mkdir(path, 0777) != 0 && errno != EEXIST) {
        return fail(err, size, path, strerror(errno));
    }
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode)) {
        return fail(err, size, path, "not a folder");
    }
    return 0;
}

/* path := dir/name. @return : 0, or -1 when it does not fit (err says so). */
static int join(char path[4096], const char *dir, const char *name, char *err, size_t size) {
    const int n = snprintf(path, 4096, "%s/%s", dir, name);
    return n >= 0 && n < 4096 ? 0 : fail(err, size, dir, "path too long");
}

static int write_file(const char *dir, const char *name, const void *data, size_t bytes, char *err,
                      size_t size) {
    char path[4096];
    if (join(path, dir, name, err, size) != 0) {
        return -1;
    }
    FILE *f = fopen(path, "wb");
    if (f == NULL) {
        return fail(err, size, path, strerror(errno));
    }
    const size_t put = bytes > 0 ? fwrite(data, 1, bytes, f) : 0;
    const int closed = fclose(f);
    if (put != bytes || closed != 0) {
        return fail(err, size, path, "write failed (disk full?)");
    }
    return 0;
}

/* One file's entry of "files": "name": {"shape": [a, b, c], "dtype": "bf16"}. */
static void meta_file(FILE *f, const char *sep, const char *name, const char *dtype,
                      const long long *shape, int rank) {
    fprintf(f, "%s\n    \"%s\": {\"shape\": [", sep, name);
    for (int i = 0; i < rank; ++i) {
        fprintf(f, "%s%lld", i ? ", " : "", shape[i]);
    }
    fprintf(f, "], \"dtype\": \"%s\"}", dtype);
}

static void write_meta(FILE *f, const bench_dump_t *d) {
    const opp_lb_t *lb = d->lb;
    const char *dt = opp_dtype_name(lb->dtype);
    const double scale = lb->scale != 0.0f ? (double)lb->scale : 1.0 / sqrt((double)lb->head_size);
    fprintf(f, "{\n  \"workload\": ");
    bench_json_write_string(f, d->workload);
    fprintf(f,
            ",\n  \"index\": %d,\n  \"dtype\": \"%s\",\n  \"batch\": %d,\n  \"heads\": %d,\n"
            "  \"kv_heads\": %d,\n  \"head_size\": %d,\n  \"v_head_size\": %d,\n"
            "  \"total_q\": %lld,\n  \"total_kv\": %lld,\n  \"max_seqlen_q\": %d,\n"
            "  \"max_seqlen_kv\": %d,\n  \"causal\": %s,\n  \"softcap\": %.9g,\n"
            "  \"scale\": %.17g,\n  \"exact_validated\": %s,\n  \"fast_kernel\": ",
            d->index, dt, (int)lb->batch, (int)lb->num_heads, (int)lb->kv_num_heads,
            (int)lb->head_size, (int)lb->v_head_size, (long long)lb->total_q,
            (long long)lb->total_kv, (int)lb->max_lq, (int)lb->max_lkv,
            lb->is_causal ? "true" : "false", (double)lb->softcap, scale,
            d->exact_validated ? "true" : "false");
    if (d->fast_kernel != NULL) {
        bench_json_write_string(f, d->fast_kernel);
    } else {
        fprintf(f, "null");
    }
    fprintf(f, ",\n  \"fast_validation\": ");
    bench_json_write_string(f, d->fast_validation != NULL ? d->fast_validation : "");
    fprintf(f, ",\n  \"files\": {");
    const long long tq = lb->total_q, tkv = lb->total_kv, hq = lb->num_heads,
                    hkv = lb->kv_num_heads, dk = lb->head_size, dv = lb->v_head_size,
                    b1 = (long long)lb->batch + 1;
    const long long q[] = {tq, hq, dk}, k[] = {tkv, hkv, dk}, v[] = {tkv, hkv, dv},
                    out[] = {tq, hq, dv}, cu[] = {b1};
    if (!d->outputs_only) {
        meta_file(f, "", "q.bin", dt, q, 3);
        meta_file(f, ",", "k.bin", dt, k, 3);
        meta_file(f, ",", "v.bin", dt, v, 3);
    }
    meta_file(f, d->outputs_only ? "" : ",", "cu_seqlens_q.bin", "int32", cu, 1);
    meta_file(f, ",", "cu_seqlens_kv.bin", "int32", cu, 1);
    if (d->out_exact != NULL) {
        meta_file(f, ",", "out_exact.bin", dt, out, 3);
    }
    if (d->out_fast != NULL) {
        meta_file(f, ",", "out_fast.bin", dt, out, 3);
    }
    if (d->out_tf32x3 != NULL) {
        meta_file(f, ",", "out_tf32x3.bin", dt, out, 3);
    }
    fprintf(f, "\n  }\n}\n");
}

int bench_dump_write(const bench_dump_t *d, char *err, size_t size) {
    const opp_lb_t *lb = d->lb;
    char dir[4096], meta[4096];
    if (join(dir, d->dir, d->workload, err, size) != 0 || make_dir(d->dir, err, size) != 0 ||
        make_dir(dir, err, size) != 0 || join(meta, dir, "meta.json", err, size) != 0) {
        return -1;
    }
    remove(meta); /* written last: without it the folder is incomplete */
    const size_t es = opp_dtype_size(lb->dtype);
    const size_t tq = (size_t)lb->total_q, tkv = (size_t)lb->total_kv;
    const size_t hq = (size_t)lb->num_heads, hkv = (size_t)lb->kv_num_heads;
    const size_t out_bytes = tq * hq * (size_t)lb->v_head_size * es;
    const size_t cu_bytes = ((size_t)lb->batch + 1) * sizeof(int32_t);
    if (write_file(dir, "cu_seqlens_q.bin", lb->cu_q, cu_bytes, err, size) != 0 ||
        write_file(dir, "cu_seqlens_kv.bin", lb->cu_kv, cu_bytes, err, size) != 0) {
        return -1;
    }
    /* a file without data (inputs with outputs_only, an output that did not
     * run) is removed: an earlier dump's must not pass for this run's */
    const int in = !d->outputs_only;
    const char *names[6] = {"q.bin",         "k.bin",        "v.bin",
                            "out_exact.bin", "out_fast.bin", "out_tf32x3.bin"};
    const void *data[6] = {in ? lb->q : NULL, in ? lb->k : NULL, in ? lb->v : NULL,
                           d->out_exact,      d->out_fast,       d->out_tf32x3};
    const size_t bytes[6] = {tq * hq * (size_t)lb->head_size * es,
                             tkv * hkv * (size_t)lb->head_size * es,
                             tkv * hkv * (size_t)lb->v_head_size * es,
                             out_bytes,
                             out_bytes,
                             out_bytes};
    for (int i = 0; i < 6; ++i) {
        char stale[4096];
        if (data[i] == NULL && join(stale, dir, names[i], err, size) == 0) {
            remove(stale);
        } else if (data[i] != NULL &&
                   write_file(dir, names[i], data[i], bytes[i], err, size) != 0) {
            return -1;
        }
    }
    FILE *f = fopen(meta, "w");
    if (f == NULL) {
        return fail(err, size, meta, strerror(errno));
    }
    write_meta(f, d);
    if (fclose(f) != 0) {
        return fail(err, size, meta, "write failed (disk full?)");
    }
    return 0;
}
