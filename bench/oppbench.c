/*
 * oppbench.c - benchmark of liboppacked's packed attention against the
 * cuBLAS padded Attention-24 reference on the fixed workloads of
 * ../shared/bench/workloads.json (DESIGN.md §7). Validates before it times
 * (bench/oppbench_gpu.c), then prints
 *   workload | impl | ms (median) | ms (min) | TFLOP/s | validation
 * and one JSON line per (workload, impl).
 *
 *   bazel build -c opt //bench:oppbench
 *   bazel-bin/bench/oppbench --help
 *   bazel-bin/bench/oppbench --list          (no GPU needed)
 *   on the GPU machine: bash stage/run_all.sh --bench   (bench/README.md)
 *
 * Exit status: 0 every selected workload validated, 1 a validation failed,
 * 2 bad options, a bad workload file or a CUDA error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/oppbench.h"
#include "bench/workloads.h"

static void usage(FILE *f) {
    fprintf(f,
            "usage: oppbench [options]\n"
            "  --workloads PATH          workload file (default: $OPP_WORKLOADS, else\n"
            "                            ../shared/bench/workloads.json from the repo root)\n"
            "  --only NAME[,NAME...]     run only these workloads\n"
            "  --impl exact,cublas       implementations to time (default both; validation\n"
            "                            always runs both)\n"
            "  --reps N                  timed runs per implementation (default 20)\n"
            "  --warmup N                untimed warm-up runs (default 3)\n"
            "  --max-seconds-per-impl S  a run longer than S seconds is reported as a single\n"
            "                            run without repetitions; repetitions also stop once\n"
            "                            they have taken S seconds (after 3) (default 60)\n"
            "  --json PATH               also write the JSON lines to PATH\n"
            "  --seed N                  value seed (default 1; per workload: seed ^ hash(name))\n"
            "  --cpu-ref-max-gflop X     also check the exact kernel against the CPU reference\n"
            "                            on workloads of at most X GFLOP (default 0 = never;\n"
            "                            the CPU reference runs ~1 GFLOP/s)\n"
            "  --flush-mib N             L2 flush buffer (default max(256, 4 x L2) MiB)\n"
            "  --list                    list the workloads with their FLOPs and exit (no GPU)\n"
            "  --help                    this text\n"
            "Exit status: 0 all validated, 1 a validation failed, 2 error.\n");
}

static int bad(const char *opt, const char *value) {
    fprintf(stderr, "oppbench: bad value for %s: '%s' (see --help)\n", opt, value);
    return 2;
}

static int parse_num(const char *s, double lo, double hi, double *out) {
    char *end = NULL;
    const double v = strtod(s, &end);
    if (end == s || *end != '\0' || !(v >= lo && v <= hi)) {
        return -1;
    }
    *out = v;
    return 0;
}

static int parse_impls(const char *s, bench_opts_t *o) {
    o->impl_exact = o->impl_cublas = 0;
    while (*s != '\0') {
        const size_t len = strcspn(s, ",");
        if (len == 5 && strncmp(s, "exact", 5) == 0) {
            o->impl_exact = 1;
        } else if (len == 6 && strncmp(s, "cublas", 6) == 0) {
            o->impl_cublas = 1;
        } else {
            return -1;
        }
        s += len + (s[len] == ',');
    }
    return (o->impl_exact || o->impl_cublas) ? 0 : -1;
}

static int parse_args(int argc, char **argv, bench_opts_t *o) {
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            exit(0);
        }
        if (strcmp(a, "--list") == 0) {
            o->list = 1;
            continue;
        }
        /* --opt VALUE or --opt=VALUE */
        char name[64];
        const char *val = strchr(a, '=');
        if (val != NULL && (size_t)(val - a) < sizeof name) {
            snprintf(name, sizeof name, "%.*s", (int)(val - a), a);
            ++val;
        } else if (i + 1 < argc && strncmp(a, "--", 2) == 0) {
            snprintf(name, sizeof name, "%s", a);
            val = argv[++i];
        } else {
            fprintf(stderr, "oppbench: unknown option or missing value: %s (see --help)\n", a);
            return 2;
        }
        double x = 0.0;
        if (strcmp(name, "--workloads") == 0) {
            o->workloads_path = val;
        } else if (strcmp(name, "--only") == 0) {
            o->only = val;
        } else if (strcmp(name, "--json") == 0) {
            o->json_path = val;
        } else if (strcmp(name, "--impl") == 0) {
            if (parse_impls(val, o) != 0) {
                return bad(name, val);
            }
        } else if (strcmp(name, "--reps") == 0 || strcmp(name, "--warmup") == 0) {
            const int reps = strcmp(name, "--reps") == 0;
            if (parse_num(val, reps ? 1 : 0, 100000, &x) != 0 || x != (double)(int)x) {
                return bad(name, val);
            }
            *(reps ? &o->reps : &o->warmup) = (int)x;
        } else if (strcmp(name, "--max-seconds-per-impl") == 0) {
            if (parse_num(val, 0.001, 1e6, &o->max_seconds) != 0) {
                return bad(name, val);
            }
        } else if (strcmp(name, "--seed") == 0) {
            if (parse_num(val, 0, 4294967295.0, &x) != 0 || x != (double)(uint64_t)x) {
                return bad(name, val);
            }
            o->seed = (uint64_t)x;
        } else if (strcmp(name, "--cpu-ref-max-gflop") == 0) {
            if (parse_num(val, 0, 1e9, &o->cpu_ref_max_gflop) != 0) {
                return bad(name, val);
            }
        } else if (strcmp(name, "--flush-mib") == 0) {
            if (parse_num(val, 1, 65536, &x) != 0) {
                return bad(name, val);
            }
            o->flush_bytes = (size_t)x << 20;
        } else {
            fprintf(stderr, "oppbench: unknown option %s (see --help)\n", name);
            return 2;
        }
    }
    return 0;
}

/* --workloads, else $OPP_WORKLOADS, else ../shared/bench/workloads.json
 * relative to the repo root (the cwd, or $BUILD_WORKSPACE_DIRECTORY under
 * bazel run). */
static const char *workloads_path(const bench_opts_t *o, char *buf, size_t size) {
    const char *env = getenv("OPP_WORKLOADS");
    const char *root = getenv("BUILD_WORKSPACE_DIRECTORY");
    if (o->workloads_path != NULL) {
        return o->workloads_path;
    }
    if (env != NULL && env[0] != '\0') {
        return env;
    }
    snprintf(buf, size, "%s%s../shared/bench/workloads.json", root != NULL ? root : "",
             root != NULL ? "/" : "");
    return buf;
}

static void list_workloads(const opp_workload_set_t *set, const int *selected) {
    printf("%-26s %-5s %5s %4s %4s %4s %-6s %7s %9s %9s %7s %7s %15s %10s\n", "workload", "dtype",
           "B", "Hq", "Hkv", "D", "causal", "softcap", "total_q", "total_kv", "max_lq", "max_lkv",
           "attended pairs", "GFLOP");
    for (int i = 0; i < set->count; ++i) {
        const opp_workload_t *w = &set->items[i];
        if (!selected[i]) {
            continue;
        }
        int64_t tq, tkv, pairs = 0;
        int32_t mq = 0, mkv = 0;
        opp_workload_tokens(w, &tq, &tkv);
        for (int32_t b = 0; b < w->batch; ++b) {
            pairs += opp_attended_pairs(w->lq[b], w->lkv[b], w->causal);
            mq = w->lq[b] > mq ? w->lq[b] : mq;
            mkv = w->lkv[b] > mkv ? w->lkv[b] : mkv;
        }
        printf("%-26s %-5s %5d %4d %4d %4d %-6s %7g %9lld %9lld %7d %7d %15lld %10.3f\n", w->name,
               opp_dtype_name(w->dtype), (int)w->batch, (int)w->heads, (int)w->kv_heads,
               (int)w->head_size, w->causal ? "yes" : "no", (double)w->softcap, (long long)tq,
               (long long)tkv, (int)mq, (int)mkv, (long long)pairs, opp_workload_flops(w) / 1e9);
    }
}

static void json_string(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; ++s) {
        const unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            fprintf(f, "\\%c", c);
        } else if (c < 0x20) {
            fprintf(f, "\\u%04x", c);
        } else {
            fputc(c, f);
        }
    }
    fputc('"', f);
}

static void json_line(FILE *f, const bench_result_t *r) {
    fprintf(f, "{\"workload\":");
    json_string(f, r->workload);
    fprintf(f, ",\"impl\":\"%s\"", r->impl);
    if (r->timed) {
        fprintf(f, ",\"median_ms\":%.6g,\"min_ms\":%.6g,\"tflops\":%.6g", r->median_ms, r->min_ms,
                r->tflops);
    } else {
        fprintf(f, ",\"median_ms\":null,\"min_ms\":null,\"tflops\":null");
    }
    fprintf(f, ",\"validated\":%s,\"flops\":%.17g,\"workspace_bytes\":%zu,\"reps\":%d",
            r->validated ? "true" : "false", r->flops, r->workspace_bytes, r->timed ? r->reps : 0);
    fprintf(f, ",\"validation\":");
    json_string(f, r->validation);
    if (r->note[0] != '\0') {
        fprintf(f, ",\"note\":");
        json_string(f, r->note);
    }
    fprintf(f, "}\n");
    fflush(f);
}

static void print_table(const bench_result_t *rows, int n) {
    printf("\n%-26s | %-6s | %11s | %9s | %8s | %s\n", "workload", "impl", "ms (median)",
           "ms (min)", "TFLOP/s", "validation");
    printf("%.26s-+-%.6s-+-%.11s-+-%.9s-+-%.8s-+-%.40s\n", "----------------------------------",
           "--------", "-------------", "-----------", "----------",
           "------------------------------------------------");
    for (int i = 0; i < n; ++i) {
        const bench_result_t *r = &rows[i];
        if (r->timed) {
            printf("%-26s | %-6s | %11.3f | %9.3f | %8.2f | %s%s%s%s\n", r->workload, r->impl,
                   r->median_ms, r->min_ms, r->tflops, r->validation, r->note[0] ? " [" : "",
                   r->note, r->note[0] ? "]" : "");
        } else {
            printf("%-26s | %-6s | %11s | %9s | %8s | %s\n", r->workload, r->impl, "-", "-", "-",
                   r->validation);
        }
    }
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0); /* progress lines through tee, in order */
    bench_opts_t o;
    memset(&o, 0, sizeof o);
    o.reps = 20;
    o.warmup = 3;
    o.impl_exact = o.impl_cublas = 1;
    o.max_seconds = 60.0;
    o.seed = 1;
    int rc = parse_args(argc, argv, &o);
    if (rc != 0) {
        return rc;
    }
    char pathbuf[4096], err[1024];
    const char *path = workloads_path(&o, pathbuf, sizeof pathbuf);
    opp_workload_set_t set;
    if (opp_workloads_load(path, &set, err, sizeof err) != 0) {
        fprintf(stderr, "oppbench: %s\n", err);
        return 2;
    }
    int *selected = calloc((size_t)set.count, sizeof(int));
    if (selected == NULL) {
        BENCH_DIE("out of host memory");
    }
    const int n_sel = opp_workloads_select(&set, o.only, selected, err, sizeof err);
    if (n_sel < 0) {
        fprintf(stderr, "oppbench: --only: %s\n", err);
        return 2;
    }
    printf("oppbench: %d of %d workloads from %s\n", n_sel, set.count, path);
    if (o.list) {
        list_workloads(&set, selected);
        free(selected);
        opp_workloads_free(&set);
        return 0;
    }
    FILE *jf = NULL;
    if (o.json_path != NULL && (jf = fopen(o.json_path, "w")) == NULL) {
        fprintf(stderr, "oppbench: cannot write %s\n", o.json_path);
        return 2;
    }
    printf("reps %d, warm-up %d, impl %s%s%s, max %.0f s per impl, seed %llu\n", o.reps, o.warmup,
           o.impl_exact ? "exact" : "", o.impl_exact && o.impl_cublas ? "," : "",
           o.impl_cublas ? "cublas" : "", o.max_seconds, (unsigned long long)o.seed);
    bench_gpu_init(&o);
    bench_result_t *rows = calloc((size_t)n_sel * 2 + 1, sizeof(bench_result_t));
    if (rows == NULL) {
        BENCH_DIE("out of host memory");
    }
    int n_rows = 0, done = 0, failed = 0;
    for (int i = 0; i < set.count; ++i) {
        const opp_workload_t *w = &set.items[i];
        if (!selected[i]) {
            continue;
        }
        printf("[%d/%d] %s: %s Hq=%d Hkv=%d D=%d%s softcap=%g\n", ++done, n_sel, w->name,
               opp_dtype_name(w->dtype), (int)w->heads, (int)w->kv_heads, (int)w->head_size,
               w->causal ? " causal" : "", (double)w->softcap);
        fflush(stdout);
        bench_result_t res[2];
        memset(res, 0, sizeof res);
        for (int k = 0; k < 2; ++k) {
            snprintf(res[k].workload, sizeof res[k].workload, "%s", w->name);
            res[k].impl = k == BENCH_IMPL_EXACT ? "exact" : "cublas";
            res[k].flops = opp_workload_flops(w);
        }
        failed += bench_gpu_run(&o, w, res) != 0;
        const int want[2] = {o.impl_exact, o.impl_cublas};
        for (int k = 0; k < 2; ++k) {
            if (!want[k]) {
                continue;
            }
            rows[n_rows++] = res[k];
            json_line(stdout, &res[k]);
            if (jf != NULL) {
                json_line(jf, &res[k]);
            }
        }
    }
    bench_gpu_shutdown();
    print_table(rows, n_rows);
    printf("\n%d workloads, %d validated, %d FAILED\n", n_sel, n_sel - failed, failed);
    if (jf != NULL) {
        fclose(jf);
    }
    free(rows);
    free(selected);
    opp_workloads_free(&set);
    return failed ? 1 : 0;
}
