/*
 * options.c - oppbench's command line (see options.h): defaults, the usage
 * text and a strict parser that reports instead of exiting.
 */
#include "bench/options.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static const char *const impl_names[BENCH_IMPLS] = {"exact", "fast", "cublas", "tf32x3"};

const char *bench_impl_name(int impl) {
    return impl >= 0 && impl < BENCH_IMPLS ? impl_names[impl] : "?";
}

void bench_opts_default(bench_opts_t *o) {
    memset(o, 0, sizeof(*o));
    o->reps = 20;
    o->warmup = 3;
    for (int i = 0; i < BENCH_IMPLS; ++i) {
        o->impl[i] = i != BENCH_IMPL_TF32X3; /* opt-in: only when --impl names it */
    }
    o->max_seconds = 60.0;
    o->seed = 1;
    o->sweep_check_max_gflop = 2500.0;
    o->decode_check_seqs = 4;
}

void bench_usage(FILE *f) {
    fprintf(f,
            "usage: oppbench [options]\n"
            "  --workloads PATH          workload file (default: $OPP_WORKLOADS, else\n"
            "                            ../shared/bench/workloads.json from the repo root)\n"
            "  --only NAME[,NAME...]     run only these workloads (or sweep cases)\n"
            "  --impl exact,fast,cublas  implementations to time (default all three; also\n"
            "                            tf32x3: the opt-in OPP_ALGO_TF32X3 kernel, f32 on\n"
            "                            sm_90); validation always runs exact and cublas,\n"
            "                            fast where a FAST kernel serves the workload, and\n"
            "                            tf32x3 (against exact, as fast) when named\n"
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
            "  --dump DIR                write each workload's q, k, v, cu_seqlens, exact,\n"
            "                            fast and (--impl tf32x3) tf32x3 outputs and\n"
            "                            meta.json to DIR/<workload>/ (for\n"
            "                            bench/fa2_accuracy.py)\n"
            "  --dump-outputs DIR        the same without q, k, v: the outputs, cu_seqlens and\n"
            "                            meta.json (tools/gpu_ab.sh --same-bits)\n"
            "  --sweep                   time FAST alone on the synthetic bf16 sweep (16384\n"
            "                            tokens, L = 128..16384, heads = 2048 / D, D = 64,\n"
            "                            128, 256, causal and not) instead of the workloads\n"
            "  --sweep-check-max-gflop X sweep: check FAST against EXACT on the first\n"
            "                            sequence when that costs at most X GFLOP (default\n"
            "                            2500: every case); NaN/inf is always checked\n"
            "  --decode-sweep            time FAST alone on the decode sweep (bf16, D 128,\n"
            "                            8 KV heads, group 1/4/8, batch 1..256, one query\n"
            "                            against 1k..128k keys; K + V <= 16 GiB), GB/s and\n"
            "                            the fraction of a copy bandwidth measured first\n"
            "  --decode-check-seqs N     decode sweep: check N sequences of each case\n"
            "                            (evenly spaced, first and last included) against\n"
            "                            EXACT (default 4); NaN/inf is always checked\n"
            "  --list                    list the workloads (or, with --sweep or\n"
            "                            --decode-sweep, the cases, and the skipped ones)\n"
            "                            with their FLOPs and exit (no GPU); with --json\n"
            "                            also write them as JSON lines\n"
            "  --help                    this text\n"
            "Exit status: 0 all validated, 1 a validation failed, 2 error.\n");
}

static int fail(char *err, size_t size, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, size, fmt, ap);
    va_end(ap);
    return 2;
}

static int bad(char *err, size_t size, const char *opt, const char *value) {
    return fail(err, size, "bad value for %s: '%s' (see --help)", opt, value);
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

/* "exact,fast,tf32x3": each known name once, no empty item. */
static int parse_impls(const char *s, int impl[BENCH_IMPLS]) {
    for (int i = 0; i < BENCH_IMPLS; ++i) {
        impl[i] = 0;
    }
    for (;;) {
        const size_t len = strcspn(s, ",");
        int hit = -1;
        for (int i = 0; i < BENCH_IMPLS; ++i) {
            if (strlen(impl_names[i]) == len && strncmp(s, impl_names[i], len) == 0) {
                hit = i;
            }
        }
        if (hit < 0 || impl[hit]) {
            return -1;
        }
        impl[hit] = 1;
        if (s[len] == '\0') {
            return 0;
        }
        s += len + 1;
    }
}

/* Options the sweeps rule out, and the ones only one sweep allows. */
enum {
    SEEN_IMPL,
    SEEN_DUMP,
    SEEN_DUMP_OUTPUTS,
    SEEN_WORKLOADS,
    SEEN_CPU_REF,
    SEEN_SWEEP_CHECK,
    SEEN_DECODE_CHECK,
    SEEN_COUNT
};
static const char *const seen_names[SEEN_COUNT] = {"--impl",
                                                   "--dump",
                                                   "--dump-outputs",
                                                   "--workloads",
                                                   "--cpu-ref-max-gflop",
                                                   "--sweep-check-max-gflop",
                                                   "--decode-check-seqs"};

/* One "--name" with its value. */
static int parse_one(const char *name, const char *val, bench_opts_t *o, int seen[SEEN_COUNT],
                     char *err, size_t size) {
    double x = 0.0;
    if (strcmp(name, "--workloads") == 0) {
        o->workloads_path = val;
        seen[SEEN_WORKLOADS] = 1;
    } else if (strcmp(name, "--only") == 0) {
        o->only = val;
    } else if (strcmp(name, "--json") == 0) {
        o->json_path = val;
    } else if (strcmp(name, "--dump") == 0 || strcmp(name, "--dump-outputs") == 0) {
        if (val[0] == '\0') {
            return bad(err, size, name, val);
        }
        const int outputs = strcmp(name, "--dump-outputs") == 0;
        o->dump_dir = val;
        o->dump_outputs_only = outputs;
        seen[outputs ? SEEN_DUMP_OUTPUTS : SEEN_DUMP] = 1;
    } else if (strcmp(name, "--impl") == 0) {
        if (parse_impls(val, o->impl) != 0) {
            return bad(err, size, name, val);
        }
        seen[SEEN_IMPL] = 1;
    } else if (strcmp(name, "--reps") == 0 || strcmp(name, "--warmup") == 0) {
        const int reps = strcmp(name, "--reps") == 0;
        if (parse_num(val, reps ? 1 : 0, 100000, &x) != 0 || x != (double)(int)x) {
            return bad(err, size, name, val);
        }
        *(reps ? &o->reps : &o->warmup) = (int)x;
    } else if (strcmp(name, "--max-seconds-per-impl") == 0) {
        if (parse_num(val, 0.001, 1e6, &o->max_seconds) != 0) {
            return bad(err, size, name, val);
        }
    } else if (strcmp(name, "--seed") == 0) {
        if (parse_num(val, 0, 4294967295.0, &x) != 0 || x != (double)(uint64_t)x) {
            return bad(err, size, name, val);
        }
        o->seed = (uint64_t)x;
    } else if (strcmp(name, "--cpu-ref-max-gflop") == 0) {
        if (parse_num(val, 0, 1e9, &o->cpu_ref_max_gflop) != 0) {
            return bad(err, size, name, val);
        }
        seen[SEEN_CPU_REF] = 1;
    } else if (strcmp(name, "--sweep-check-max-gflop") == 0) {
        if (parse_num(val, 0, 1e9, &o->sweep_check_max_gflop) != 0) {
            return bad(err, size, name, val);
        }
        seen[SEEN_SWEEP_CHECK] = 1;
    } else if (strcmp(name, "--decode-check-seqs") == 0) {
        if (parse_num(val, 1, 100000, &x) != 0 || x != (double)(int)x) {
            return bad(err, size, name, val);
        }
        o->decode_check_seqs = (int)x;
        seen[SEEN_DECODE_CHECK] = 1;
    } else if (strcmp(name, "--flush-mib") == 0) {
        if (parse_num(val, 1, 65536, &x) != 0 || x != (double)(int)x) {
            return bad(err, size, name, val);
        }
        o->flush_bytes = (size_t)x << 20;
    } else {
        return fail(err, size, "unknown option %s (see --help)", name);
    }
    return 0;
}

int bench_parse_args(int argc, char **argv, bench_opts_t *o, char *err, size_t size) {
    int seen[SEEN_COUNT] = {0};
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            return 1;
        }
        if (strcmp(a, "--list") == 0 || strcmp(a, "--sweep") == 0 ||
            strcmp(a, "--decode-sweep") == 0) {
            *(a[2] == 'l' ? &o->list : a[2] == 's' ? &o->sweep : &o->decode_sweep) = 1;
            continue;
        }
        /* --opt VALUE or --opt=VALUE */
        char name[64];
        const char *val = strchr(a, '=');
        if (strncmp(a, "--", 2) == 0 && val != NULL && (size_t)(val - a) < sizeof name) {
            snprintf(name, sizeof name, "%.*s", (int)(val - a), a);
            ++val;
        } else if (strncmp(a, "--", 2) == 0 && val == NULL && i + 1 < argc) {
            snprintf(name, sizeof name, "%s", a);
            val = argv[++i];
        } else {
            return fail(err, size, "unknown option or missing value: %s (see --help)", a);
        }
        const int rc = parse_one(name, val, o, seen, err, size);
        if (rc != 0) {
            return rc;
        }
    }
    if (o->sweep && o->decode_sweep) {
        return fail(err, size, "--sweep and --decode-sweep exclude each other (see --help)");
    }
    if (seen[SEEN_DUMP] && seen[SEEN_DUMP_OUTPUTS]) {
        return fail(err, size, "--dump and --dump-outputs exclude each other (see --help)");
    }
    for (int s = 0; s < SEEN_COUNT; ++s) {
        const int needs = s == SEEN_SWEEP_CHECK ? 1 : s == SEEN_DECODE_CHECK ? 2 : 0;
        const int mode = o->sweep ? 1 : o->decode_sweep ? 2 : 0;
        if (!seen[s] || mode == needs) {
            continue;
        }
        if (needs != 0) {
            return fail(err, size, "%s needs %s (see --help)", seen_names[s],
                        needs == 1 ? "--sweep" : "--decode-sweep");
        }
        return fail(err, size, "%s does not apply with %s (see --help)", seen_names[s],
                    mode == 1 ? "--sweep" : "--decode-sweep");
    }
    return 0;
}
