/*
 * read_ceiling.c - `read_ceiling`: the time to read a workload's K and V
 * (default decode_gqa_bf16 of ../shared/bench/workloads.json) in the
 * patterns of bench/read_ceiling.h, each checked against the host's word
 * sum before it is timed. Prints one row a case (its median ms, TB/s, its
 * time over flat's, blocks an SM) and a summary line; exit 0 when every
 * case checked, 1 when one did not, 2 on a usage error.
 *   read_ceiling [--workloads PATH] [--only NAME] [--reps N] [--warmup N]
 *                [--flush-mib N] [--split-keys N] [--case SPEC]...
 *                SPEC: flat | cpasync:ROWS:STAGES | tma:ROWS:STAGES[:persistent][:hN]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/read_ceiling.h"
#include "bench/workloads.h"
#include "kernels/kernel_list.h"

#define RC_MAX_CASES 32

/* the split kernel's pattern (tma r64 s3 persistent) beside others; the
 * last two read two adjacent kv heads an item */
static const rc_case_t rc_default_cases[] = {
    {RC_FLAT, 0, 0, 0, 0},     {RC_CPASYNC, 64, 2, 0, 0}, {RC_CPASYNC, 64, 3, 0, 0},
    {RC_CPASYNC, 64, 4, 0, 0}, {RC_TMA, 64, 2, 0, 0},     {RC_TMA, 64, 4, 0, 0},
    {RC_TMA, 128, 2, 0, 0},    {RC_TMA, 64, 3, 1, 0},     {RC_TMA, 64, 4, 1, 0},
    {RC_TMA, 32, 4, 1, 0},     {RC_TMA, 128, 3, 1, 0},    {RC_TMA, 32, 3, 1, 2},
    {RC_TMA, 64, 3, 1, 2},
};

static void rc_usage(FILE *f) {
    fprintf(f, "usage: read_ceiling [--workloads PATH] [--only NAME] [--reps N] [--warmup N]\n"
               "                    [--flush-mib N] [--split-keys N] [--case SPEC]...\n"
               "  --workloads PATH  workload file (default $OPP_WORKLOADS, else\n"
               "                    ../shared/bench/workloads.json from the repo root)\n"
               "  --only NAME       the workload whose K and V are read (default decode_gqa_bf16;\n"
               "                    16-bit, D a multiple of 64 up to 256)\n"
               "  --reps N          timed runs a case, median reported (default 20)\n"
               "  --warmup N        untimed runs before them (default 3)\n"
               "  --flush-mib N     MiB written before each run, untimed, so that L2 holds\n"
               "                    none of K and V (default 256, as oppbench; 0: none)\n"
               "  --split-keys N    keys an item (default OPP__SPLIT_KEYS, the split kernel's;\n"
               "                    a multiple of 128 up to 100000)\n"
               "  --case SPEC       flat | cpasync:ROWS:STAGES |\n"
               "                    tma:ROWS:STAGES[:persistent][:hN]\n"
               "                    (ROWS 32, 64, 128; STAGES 2 .. 8; cpasync builds 32x2, 32x4,\n"
               "                    64x2, 64x3, 64x4, 128x2; hN: N = 2, 4, 8 adjacent kv heads an\n"
               "                    item and a box, N dividing the workload's kv heads);\n"
               "                    repeatable; default: thirteen cases (tma:64:3:persistent is\n"
               "                    OPP__SPLIT_TMA's ring; tma:32:3:persistent:h2 the same\n"
               "                    bytes a stage over two heads)\n");
}

static int rc_int_arg(const char *opt, const char *v, int lo, int *out) {
    char *end = NULL;
    const long x = v != NULL ? strtol(v, &end, 10) : 0;
    if (v == NULL || *v == '\0' || *end != '\0' || x < lo || x > 100000) {
        fprintf(stderr, "read_ceiling: %s needs an integer in %d .. 100000, got '%s'\n", opt, lo,
                v != NULL ? v : "(nothing)");
        return -1;
    }
    *out = (int)x;
    return 0;
}

int main(int argc, char **argv) {
    const char *path = NULL, *only = "decode_gqa_bf16";
    int reps = 20, warmup = 3, ncases = 0, flush_mib = 256, split_keys = OPP__SPLIT_KEYS;
    rc_case_t cases[RC_MAX_CASES];
    for (int i = 1; i < argc; ++i) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            rc_usage(stdout);
            return 0;
        } else if (strcmp(argv[i], "--workloads") == 0 && v != NULL) {
            path = v;
        } else if (strcmp(argv[i], "--only") == 0 && v != NULL) {
            only = v;
        } else if (strcmp(argv[i], "--reps") == 0) {
            if (rc_int_arg("--reps", v, 1, &reps) != 0) {
                return 2;
            }
        } else if (strcmp(argv[i], "--warmup") == 0) {
            if (rc_int_arg("--warmup", v, 0, &warmup) != 0) {
                return 2;
            }
        } else if (strcmp(argv[i], "--flush-mib") == 0) {
            if (rc_int_arg("--flush-mib", v, 0, &flush_mib) != 0) {
                return 2;
            }
        } else if (strcmp(argv[i], "--split-keys") == 0) {
            char err[128];
            if (rc_int_arg("--split-keys", v, 128, &split_keys) != 0) {
                return 2;
            }
            if (rc_split_keys_check(split_keys, err, sizeof err) != 0) {
                fprintf(stderr, "read_ceiling: --split-keys: %s\n", err);
                return 2;
            }
        } else if (strcmp(argv[i], "--case") == 0 && v != NULL) {
            char err[256];
            if (ncases == RC_MAX_CASES) {
                fprintf(stderr, "read_ceiling: more than %d --case options\n", RC_MAX_CASES);
                return 2;
            }
            if (rc_case_parse(v, &cases[ncases]) != 0 ||
                rc_case_check(&cases[ncases], err, sizeof err) != 0) {
                fprintf(stderr,
                        "read_ceiling: --case '%s': not flat, cpasync:ROWS:STAGES or "
                        "tma:ROWS:STAGES[:persistent][:hN] with ROWS 32 / 64 / 128, STAGES 2 .. 8, "
                        "N 2 / 4 / 8\n",
                        v);
                return 2;
            }
            ++ncases;
        } else {
            fprintf(stderr, "read_ceiling: unknown option or missing value: '%s'\n", argv[i]);
            rc_usage(stderr);
            return 2;
        }
        ++i;
    }
    if (ncases == 0) {
        ncases = (int)(sizeof rc_default_cases / sizeof rc_default_cases[0]);
        memcpy(cases, rc_default_cases, sizeof rc_default_cases);
    }
    char err[512], path_buf[4096];
    path = opp_workloads_path(path, path_buf, sizeof path_buf);
    opp_workload_set_t set = {0};
    if (opp_workloads_load(path, &set, err, sizeof err) != 0) {
        fprintf(stderr, "read_ceiling: %s\n", err);
        return 2;
    }
    const opp_workload_t *w = NULL;
    for (int i = 0; i < set.count; ++i) {
        if (strcmp(set.items[i].name, only) == 0) {
            w = &set.items[i];
        }
    }
    if (w == NULL || w->dtype == OPP_DTYPE_F32 || w->head_size % 64 != 0 || w->head_size > 256) {
        fprintf(stderr, "read_ceiling: --only '%s': %s\n", only,
                w == NULL ? "no such workload in the file"
                          : "not 16-bit with D a multiple of 64 up to 256");
        opp_workloads_free(&set);
        return 2;
    }
    const rc_shape_t shape = {w->batch, w->kv_heads, w->head_size, w->lkv};
    rc_gpu_t *g = NULL;
    if (rc_gpu_open(&shape, &g, err, sizeof err) != 0) {
        fprintf(stderr, "read_ceiling: %s\n", err);
        rc_gpu_close(g);
        opp_workloads_free(&set);
        return 2;
    }
    if (rc_gpu_set_flush(g, (size_t)flush_mib << 20, err, sizeof err) != 0 ||
        rc_gpu_set_split_keys(g, split_keys, err, sizeof err) != 0) {
        fprintf(stderr, "read_ceiling: --flush-mib %d / --split-keys %d: %s\n", flush_mib,
                split_keys, err);
        rc_gpu_close(g);
        opp_workloads_free(&set);
        return 2;
    }
    const int64_t keys = rc_total_keys(&shape);
    const uint64_t words = (uint64_t)keys * (uint64_t)shape.hkv * (uint64_t)shape.d / 2;
    const double bytes = 2.0 * (double)words * 4.0;
    const uint64_t expect = rc_expected_sum(words, 0) + rc_expected_sum(words, 1);
    printf("read_ceiling: %s on %s: %.4f GB of K and V (B %d, Hkv %d, D %d, %lld keys), "
           "%lld items of %d keys; %d timed runs a case after %d, each after %d MiB written\n",
           w->name, rc_gpu_name(g), bytes * 1e-9, shape.batch, shape.hkv, shape.d, (long long)keys,
           (long long)rc_items(&shape, split_keys), split_keys, reps, warmup, flush_mib);
    printf("%-26s %9s %8s %8s %10s %s\n", "case", "ms", "TB/s", "/flat", "blocks/SM", "check");
    int bad = 0, good = 0;
    double flat_ms = 0.0;
    for (int i = 0; i < ncases; ++i) {
        char name[64];
        rc_case_name(&cases[i], name, sizeof name);
        rc_result_t r;
        memset(&r, 0, sizeof r);
        const int rc = rc_gpu_run(g, &cases[i], expect, warmup, reps, &r, err, sizeof err);
        if (rc != 0) {
            printf("%-26s %9s %8s %8s %10d FAILED: %s\n", name, "-", "-", "-", r.blocks_per_sm,
                   err);
            ++bad;
            if (rc < 0) {
                break; /* a CUDA error: the context may be gone */
            }
            continue;
        }
        if (cases[i].pattern == RC_FLAT) {
            flat_ms = r.ms;
        }
        char ratio[16] = "-";
        if (flat_ms > 0.0) {
            snprintf(ratio, sizeof ratio, "%.3f", r.ms / flat_ms);
        }
        ++good;
        printf("%-26s %9.4f %8.3f %8s %10d ok\n", name, r.ms, bytes / (r.ms * 1e-3) * 1e-12, ratio,
               r.blocks_per_sm);
        fflush(stdout);
    }
    printf("read_ceiling: %d cases, %d checked and timed, %d failed, %d not run\n", ncases, good,
           bad, ncases - good - bad);
    rc_gpu_close(g);
    opp_workloads_free(&set);
    return bad == 0 ? 0 : 1;
}
