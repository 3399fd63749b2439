/*
 * oppbench.c - benchmark of liboppacked's packed attention - the EXACT
 * kernel, the FAST (tensor-core) kernel - and the cuBLAS padded
 * Attention-24 reference on the fixed workloads of
 * ../shared/bench/workloads.json (DESIGN.md §7), or of FAST alone on a
 * synthetic sweep (--sweep, bench/sweep.c) or decode sweep (--decode-sweep,
 * bench/decode_sweep.c: GB/s and the fraction of a copy bandwidth measured
 * in the same process). Validates before it times (bench/oppbench_gpu.c,
 * bench/sweep_gpu.c, bench/decode_gpu.c), then prints
 *   workload | impl | kernel | ms (median) | ms (min) | TFLOP/s | validation
 * and one JSON line per (workload, impl). After each workload a progress
 * line with elapsed time and ETA (harness/progress.h), at the end its
 * summary. --dump writes each workload's tensors for bench/fa2_accuracy.py
 * (bench/dump.h).
 *
 *   bazel build -c opt //bench:oppbench
 *   bazel-bin/bench/oppbench --help
 *   bazel-bin/bench/oppbench --list          (no GPU needed; --sweep --list and
 *                                             --decode-sweep --list too)
 *   on the GPU machine: bash stage/run_all.sh --no-tests --bench   (bench/README.md)
 *
 * Exit status: 0 every selected workload validated, 1 a validation failed,
 * 2 bad options, a bad workload file or a CUDA error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/oppbench.h"
#include "bench/workloads.h"
#include "harness/progress.h"

/* The workload set: the file's, or with --sweep / --decode-sweep a synthetic one. */
static int load_set(const bench_opts_t *o, opp_workload_set_t *set, char *path, size_t path_size) {
    char err[1024];
    if (o->decode_sweep) {
        snprintf(path, path_size, "the decode sweep (bench/decode_sweep.c)");
        if (opp_decode_sweep_workloads(set) != 0) {
            BENCH_DIE("out of host memory");
        }
        return 0;
    }
    if (o->sweep) {
        snprintf(path, path_size, "the sweep (bench/sweep.c)");
        if (opp_sweep_workloads(set) != 0) {
            BENCH_DIE("out of host memory");
        }
        return 0;
    }
    char buf[4096];
    snprintf(path, path_size, "%s", opp_workloads_path(o->workloads_path, buf, sizeof buf));
    if (opp_workloads_load(path, set, err, sizeof err) != 0) {
        fprintf(stderr, "oppbench: %s\n", err);
        return 2;
    }
    return 0;
}

/* Runs workload i of set; appends the requested rows. Returns 1 on failure. */
static int run_one(const bench_opts_t *o, const opp_workload_t *w, int index, FILE *jf,
                   bench_result_t *rows, int *n_rows) {
    bench_result_t res[BENCH_IMPLS];
    int want[BENCH_IMPLS], failed;
    if (o->sweep || o->decode_sweep) {
        failed = (o->sweep ? bench_gpu_sweep_run(o, w, &res[BENCH_IMPL_FAST])
                           : bench_gpu_decode_run(o, w, &res[BENCH_IMPL_FAST])) != 0;
        for (int k = 0; k < BENCH_IMPLS; ++k) {
            want[k] = k == BENCH_IMPL_FAST;
        }
    } else {
        failed = bench_gpu_run(o, w, index, res) != 0;
        memcpy(want, o->impl, sizeof want);
    }
    for (int k = 0; k < BENCH_IMPLS; ++k) {
        if (!want[k]) {
            continue;
        }
        rows[(*n_rows)++] = res[k];
        bench_json_line(stdout, &res[k]);
        if (jf != NULL) {
            bench_json_line(jf, &res[k]);
        }
    }
    return failed;
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0); /* progress lines through tee, in order */
    bench_opts_t o;
    bench_opts_default(&o);
    char err[1024], path[4096];
    const int rc = bench_parse_args(argc, argv, &o, err, sizeof err);
    if (rc == 1) {
        bench_usage(stdout);
        return 0;
    }
    if (rc != 0) {
        fprintf(stderr, "oppbench: %s\n", err);
        return 2;
    }
    opp_workload_set_t set;
    if (load_set(&o, &set, path, sizeof path) != 0) {
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
    const int synthetic = o.sweep || o.decode_sweep;
    printf("oppbench: %d of %d %s from %s\n", n_sel, set.count, synthetic ? "cases" : "workloads",
           path);
    FILE *jf = NULL;
    if (o.json_path != NULL && (jf = fopen(o.json_path, "w")) == NULL) {
        fprintf(stderr, "oppbench: cannot write %s\n", o.json_path);
        return 2;
    }
    if (o.list) {
        bench_list_workloads(&set, selected, o.decode_sweep, jf);
        if (o.decode_sweep && o.only == NULL) {
            bench_list_decode_skipped(jf);
        }
        if (jf != NULL) {
            fclose(jf);
        }
        free(selected);
        opp_workloads_free(&set);
        return 0;
    }
    printf("reps %d, warm-up %d, impl", o.reps, o.warmup);
    for (int k = 0, first = 1; k < BENCH_IMPLS; ++k) {
        if (synthetic ? k == BENCH_IMPL_FAST : o.impl[k]) {
            printf("%s%s", first ? " " : ",", bench_impl_name(k));
            first = 0;
        }
    }
    printf(", max %.0f s per impl, seed %llu%s%s\n", o.max_seconds, (unsigned long long)o.seed,
           o.dump_dir ? ", dump to " : "", o.dump_dir ? o.dump_dir : "");
    bench_gpu_init(&o);
    if (o.decode_sweep) {
        bench_gpu_decode_init(&o, &set, selected);
    }
    bench_result_t *rows = calloc((size_t)n_sel * BENCH_IMPLS + 1, sizeof(bench_result_t));
    if (rows == NULL) {
        BENCH_DIE("out of host memory");
    }
    int n_rows = 0, done = 0, failed = 0;
    opp_progress_t progress;
    opp_progress_start(&progress, stdout, "oppbench", n_sel, 0.0);
    for (int i = 0; i < set.count; ++i) {
        const opp_workload_t *w = &set.items[i];
        if (!selected[i]) {
            continue;
        }
        printf("[%d/%d] %s: %s B=%d Hq=%d Hkv=%d D=%d%s softcap=%g\n", ++done, n_sel, w->name,
               opp_dtype_name(w->dtype), (int)w->batch, (int)w->heads, (int)w->kv_heads,
               (int)w->head_size, w->causal ? " causal" : "", (double)w->softcap);
        fflush(stdout);
        failed += run_one(&o, w, i, jf, rows, &n_rows);
        opp_progress_item(&progress, 1.0, w->name);
    }
    opp_progress_done(&progress);
    bench_gpu_sweep_release();
    bench_gpu_decode_release();
    bench_gpu_shutdown();
    if (o.decode_sweep) {
        bench_print_decode_table(rows, n_rows);
    } else {
        bench_print_table(rows, n_rows);
    }
    printf("\n%d %s, %d validated, %d FAILED\n", n_sel, synthetic ? "cases" : "workloads",
           n_sel - failed, failed);
    if (jf != NULL) {
        fclose(jf);
    }
    free(rows);
    free(selected);
    opp_workloads_free(&set);
    return failed ? 1 : 0;
}
