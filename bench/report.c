/*
 * report.c - what oppbench prints: the JSON line of a result row, the
 * result table and the --list table (formats in bench/README.md).
 */
#include <stdio.h>
#include <string.h>

#include "bench/json_write.h"
#include "bench/oppbench.h"

void bench_result_init(bench_result_t *r, const opp_workload_t *w, int impl) {
    memset(r, 0, sizeof(*r));
    snprintf(r->workload, sizeof r->workload, "%s", w->name);
    r->impl = bench_impl_name(impl);
    r->flops = opp_workload_flops(w);
    r->supported = 1;
}

void bench_json_line(FILE *f, const bench_result_t *r) {
    fprintf(f, "{\"workload\":");
    bench_json_write_string(f, r->workload);
    fprintf(f, ",\"impl\":\"%s\"", r->impl);
    if (r->timed) {
        fprintf(f, ",\"median_ms\":%.6g,\"min_ms\":%.6g,\"tflops\":%.6g", r->median_ms, r->min_ms,
                r->tflops);
    } else {
        fprintf(f, ",\"median_ms\":null,\"min_ms\":null,\"tflops\":null");
    }
    fprintf(f,
            ",\"validated\":%s,\"supported\":%s,\"flops\":%.17g,\"workspace_bytes\":%zu,"
            "\"reps\":%d,\"kernel\":",
            r->validated ? "true" : "false", r->supported ? "true" : "false", r->flops,
            r->workspace_bytes, r->timed ? r->reps : 0);
    if (r->kernel[0] != '\0') {
        bench_json_write_string(f, r->kernel);
    } else {
        fprintf(f, "null");
    }
    if (r->has_err) {
        fprintf(f, ",\"max_abs_err\":%.6g,\"rms_err\":%.6g", r->max_abs_err, r->rms_err);
    }
    if (r->has_bytes) {
        fprintf(f, ",\"bytes\":%.17g,\"bw_gbps\":%.6g", r->bytes, r->bw_gbps);
        if (r->timed) {
            fprintf(f, ",\"gbps\":%.6g,\"bw_fraction\":%.6g", r->gbps, r->bw_fraction);
        } else {
            fprintf(f, ",\"gbps\":null,\"bw_fraction\":null");
        }
    }
    fprintf(f, ",\"validation\":");
    bench_json_write_string(f, r->validation);
    if (r->note[0] != '\0') {
        fprintf(f, ",\"note\":");
        bench_json_write_string(f, r->note);
    }
    fprintf(f, "}\n");
    fflush(f);
}

void bench_print_table(const bench_result_t *rows, int n) {
    printf("\n%-28s | %-6s | %-20s | %11s | %9s | %8s | %s\n", "workload", "impl", "kernel",
           "ms (median)", "ms (min)", "TFLOP/s", "validation");
    printf("%.28s-+-%.6s-+-%.20s-+-%.11s-+-%.9s-+-%.8s-+-%.40s\n",
           "------------------------------------", "--------", "----------------------",
           "-------------", "-----------", "----------",
           "------------------------------------------------");
    for (int i = 0; i < n; ++i) {
        const bench_result_t *r = &rows[i];
        const char *kernel = r->kernel[0] != '\0' ? r->kernel : "-";
        if (r->timed) {
            printf("%-28s | %-6s | %-20s | %11.3f | %9.3f | %8.2f | %s%s%s%s\n", r->workload,
                   r->impl, kernel, r->median_ms, r->min_ms, r->tflops, r->validation,
                   r->note[0] ? " [" : "", r->note, r->note[0] ? "]" : "");
        } else {
            printf("%-28s | %-6s | %-20s | %11s | %9s | %8s | %s\n", r->workload, r->impl, kernel,
                   "-", "-", "-", r->validation);
        }
    }
}

void bench_print_decode_table(const bench_result_t *rows, int n) {
    printf("\n%-24s | %-20s | %11s | %9s | %7s | %10s | %s\n", "case", "kernel", "ms (median)",
           "ms (min)", "GB/s", "of copy BW", "validation");
    printf("%.24s-+-%.20s-+-%.11s-+-%.9s-+-%.7s-+-%.10s-+-%.40s\n",
           "------------------------------", "----------------------", "-------------",
           "-----------", "---------", "------------",
           "------------------------------------------------");
    for (int i = 0; i < n; ++i) {
        const bench_result_t *r = &rows[i];
        const char *kernel = r->kernel[0] != '\0' ? r->kernel : "-";
        if (r->timed) {
            printf("%-24s | %-20s | %11.4f | %9.4f | %7.0f | %9.1f%% | %s%s%s%s\n", r->workload,
                   kernel, r->median_ms, r->min_ms, r->gbps, 100.0 * r->bw_fraction, r->validation,
                   r->note[0] ? " [" : "", r->note, r->note[0] ? "]" : "");
        } else {
            printf("%-24s | %-20s | %11s | %9s | %7s | %10s | %s\n", r->workload, kernel, "-", "-",
                   "-", "-", r->validation);
        }
    }
    if (n > 0) {
        printf("GB/s counts K + V read, Q read and out written once (bytes / median); the copy "
               "bandwidth: %.0f GB/s (cudaMemcpy device to device, read + write)\n",
               rows[0].bw_gbps);
    }
}

void bench_list_decode_skipped(FILE *json) {
    opp_decode_case_t cases[OPP_DECODE_COMBINATIONS];
    opp_decode_sweep_cases(cases);
    for (int i = 0; i < OPP_DECODE_COMBINATIONS; ++i) {
        const opp_decode_case_t *c = &cases[i];
        if (!c->skipped) {
            continue;
        }
        printf("skipped: %s (K + V %.1f GiB > the %.0f GiB cap)\n", c->name,
               (double)c->kv_bytes / 1073741824.0, (double)OPP_DECODE_MAX_KV_BYTES / 1073741824.0);
        if (json != NULL) {
            fprintf(json, "{\"workload\":");
            bench_json_write_string(json, c->name);
            fprintf(json, ",\"skipped\":true,\"kv_bytes\":%lld}\n", (long long)c->kv_bytes);
        }
    }
}

void bench_list_workloads(const opp_workload_set_t *set, const int *selected, int with_bytes,
                          FILE *json) {
    printf("%-28s %-5s %5s %4s %4s %4s %-6s %7s %9s %9s %7s %7s %15s %10s\n", "workload", "dtype",
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
        printf("%-28s %-5s %5d %4d %4d %4d %-6s %7g %9lld %9lld %7d %7d %15lld %10.3f\n", w->name,
               opp_dtype_name(w->dtype), (int)w->batch, (int)w->heads, (int)w->kv_heads,
               (int)w->head_size, w->causal ? "yes" : "no", (double)w->softcap, (long long)tq,
               (long long)tkv, (int)mq, (int)mkv, (long long)pairs, opp_workload_flops(w) / 1e9);
        if (json == NULL) {
            continue;
        }
        fprintf(json, "{\"workload\":");
        bench_json_write_string(json, w->name);
        fprintf(json,
                ",\"dtype\":\"%s\",\"batch\":%d,\"heads\":%d,\"kv_heads\":%d,\"head_size\":%d,"
                "\"causal\":%s,\"softcap\":%.9g,\"total_q\":%lld,\"total_kv\":%lld,"
                "\"max_seqlen_q\":%d,\"max_seqlen_kv\":%d,\"pairs\":%lld,\"flops\":%.17g",
                opp_dtype_name(w->dtype), (int)w->batch, (int)w->heads, (int)w->kv_heads,
                (int)w->head_size, w->causal ? "true" : "false", (double)w->softcap, (long long)tq,
                (long long)tkv, (int)mq, (int)mkv, (long long)pairs, opp_workload_flops(w));
        if (with_bytes) {
            fprintf(json, ",\"bytes\":%.17g", opp_workload_min_bytes(w));
        }
        fprintf(json, "}\n");
    }
}
