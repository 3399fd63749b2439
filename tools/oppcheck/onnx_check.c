/*
 * onnx_check.c - oppcheck --onnx-test DIR [DIR...]: run ONNX Attention case
 * folders (ONNX backend-test layout, e.g. testdata/onnx-attention-conformance
 * or testdata/cases) through the CPU Attention-24 reference and compare every
 * output the case has, bit for bit.
 *
 * Each DIR is a case folder (holds model.onnx) or a folder of case folders.
 * Per case it prints the outputs compared and "bit-identical" or the mismatch
 * count and largest ulp distance (the first mismatching elements go to
 * stderr); a case that cannot be loaded or mapped is UNREADABLE with the
 * loader's message; a DIR that cannot be read or holds no case counts as one
 * unreadable case. After each case a progress line with elapsed time and
 * ETA (harness/progress.h: "oppcheck [ 3/66]   4.5% elapsed ...: NAME"),
 * after the last its summary ("oppcheck done: 66 items in ..."); the last
 * line is exactly
 *   N cases, N bit-identical, N differ, N unreadable
 * Exit status: 0 everything bit-identical, 1 some case differs, 2 some input
 * was unreadable (2 wins over 1).
 *
 * GPU: when a CUDA device is present (and --cpu-only is not given) each case
 * also runs through the cuBLAS reference and, where it fits, the exact,
 * FAST and TF32X3 kernels (onnx_gpu.c); a case then counts as bit-identical
 * only if every exact path was bit-identical and the FAST and TF32X3
 * kernels' errors (they are not bit-exact by design) stayed within their
 * bound.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/onnx_attention_case.h"
#include "harness/progress.h"
#include "tools/onnx/onnx_io.h"
#include "tools/oppcheck/oppcheck.h"

typedef struct tally {
    int cases, identical, differ, unreadable;
} tally_t;

/* Runs one case folder; updates t. */
static void check_case(const char *path, oppcheck_onnx_gpu_t *gpu, tally_t *t) {
    char err[1024], prefix[1100], line[1024];
    opp_onnx_case_t c;
    opp_ref_attention24_desc_t d;
    opp_ref_attention24_tensors_t ref;
    ++t->cases;
    if (opp_onnx_attention_prepare(path, &c, &d, &ref, err, sizeof(err)) != 0) {
        printf("%s: UNREADABLE: %s\n", path, err);
        ++t->unreadable;
        return;
    }
    int verdict; /* 0 identical, 1 differs */
    const double t0 = oppcheck_now_ms();
    const opp_status_t st = opp_ref_attention24(&d, &ref);
    const double ms = oppcheck_now_ms() - t0;
    if (st != OPP_STATUS_SUCCESS) {
        printf("%s: CPU reference FAILED: %s: %s\n", path, opp_status_name(st),
               opp_last_error_message());
        verdict = 1;
    } else {
        opp_onnx_attention_result_t r;
        snprintf(prefix, sizeof(prefix), "%s: ", path);
        const int rc = opp_onnx_attention_compare(&c, &d, &ref, prefix, 3, &r, err, sizeof(err));
        if (rc < 0) {
            printf("%s: CPU reference: ERROR: %s\n", path, err);
            verdict = 1;
        } else {
            opp_onnx_attention_result_str(&r, line, sizeof(line));
            printf("%s: CPU reference (%.1f ms): %s\n", path, ms, line);
            verdict = rc;
        }
    }
    if (gpu != NULL) {
        const int g = oppcheck_onnx_gpu_case(gpu, path, &c, &d, &ref);
        verdict = verdict != 0 || g != 0 ? 1 : 0;
    }
    if (verdict == 0) {
        ++t->identical;
    } else {
        ++t->differ;
    }
    opp_onnx_attention_free_outputs(&ref);
    opp_onnx_case_free(&c);
}

/* A DIR relative to where `bazel run` was started, when that is known. */
static const char *resolve(const char *dir, char *buf, size_t size) {
    const char *wd = getenv("BUILD_WORKING_DIRECTORY");
    if (dir[0] == '/' || wd == NULL || wd[0] == '\0') {
        return dir;
    }
    snprintf(buf, size, "%s/%s", wd, dir);
    return buf;
}

int oppcheck_onnx_test(int n_dirs, char **dirs, int cpu_only) {
    tally_t t = {0, 0, 0, 0};
    if (n_dirs < 1) {
        fprintf(stderr, "oppcheck: --onnx-test needs at least one DIR (see --help)\n");
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0); /* keep case lines and stderr details in order */
    char name[256];
    oppcheck_onnx_gpu_t *gpu = NULL;
    if (cpu_only) {
        snprintf(name, sizeof(name), "not run (--cpu-only)");
    } else if (!oppcheck_gpu_name(name, sizeof(name))) {
        snprintf(name, sizeof(name), "none found - CPU reference only");
    } else if (oppcheck_onnx_gpu_open(&gpu) != 0) {
        return 2;
    }
    printf("oppcheck %s: ONNX cases through the CPU Attention-24 reference; GPU: %s%s\n",
           opp_version_string(), name,
           gpu != NULL ? " - cuBLAS reference, exact, FAST and TF32X3 kernels too" : "");
    /* Every DIR is listed first, so the progress lines know the total. */
    char ***paths = calloc((size_t)n_dirs, sizeof(char **));
    int *counts = calloc((size_t)n_dirs, sizeof(int));
    int total = 0;
    if (paths == NULL || counts == NULL) {
        fprintf(stderr, "oppcheck: out of host memory\n");
        free(paths);
        free(counts);
        oppcheck_onnx_gpu_close(gpu);
        return 2;
    }
    for (int i = 0; i < n_dirs; ++i) {
        char buf[4096], err[1024];
        const char *dir = resolve(dirs[i], buf, sizeof(buf));
        counts[i] = opp_onnx_case_list(dir, &paths[i], err, sizeof(err));
        if (counts[i] <= 0) {
            printf("%s: UNREADABLE: %s\n", dir,
                   counts[i] < 0 ? err : "no case folder (model.onnx) here");
            ++t.cases;
            ++t.unreadable;
            counts[i] = 0;
        }
        total += counts[i];
    }
    opp_progress_t progress;
    opp_progress_start(&progress, stdout, "oppcheck", total, 0.0);
    for (int i = 0; i < n_dirs; ++i) {
        for (int k = 0; k < counts[i]; ++k) {
            check_case(paths[i][k], gpu, &t);
            opp_progress_item(&progress, 1.0, opp_onnx_case_name(paths[i][k]));
        }
        if (paths[i] != NULL) {
            opp_onnx_case_list_free(paths[i], counts[i]);
        }
    }
    opp_progress_done(&progress);
    free(paths);
    free(counts);
    oppcheck_onnx_gpu_close(gpu);
    printf("%d cases, %d bit-identical, %d differ, %d unreadable\n", t.cases, t.identical, t.differ,
           t.unreadable);
    fflush(stdout);
    return t.unreadable > 0 ? 2 : t.differ > 0 ? 1 : 0;
}
