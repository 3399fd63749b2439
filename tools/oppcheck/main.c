/*
 * main.c - oppcheck, the main job: build one real logical batch, run every
 * implementation on both of its representations (packed and padded
 * Attention-24), and print what agreed and what it cost.
 *
 *   bazel run //tools:oppcheck                         the default batch
 *   bazel run //tools:oppcheck -- --dtype f16 --batch 4 --lq 100,7,0,300 ...
 *   bazel run //tools:oppcheck -- --onnx-test DIR [DIR...]   ONNX cases (onnx_check.c)
 *   bazel run //tools:oppcheck -- --help
 *
 * Exit status: 0 everything agreed, 1 a disagreement, 2 bad options or an
 * error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/gpu_status.h"
#include "tools/oppcheck/oppcheck.h"

static void usage(FILE *f) {
    fprintf(f,
            "usage: oppcheck [options]\n"
            "  --dtype f32|f16|bf16       storage dtype (default bf16)\n"
            "  --batch N                  sequences (default 6)\n"
            "  --lq L0,L1,...             query lengths (default: random in --len)\n"
            "  --lkv L0,L1,...            key/value lengths (default: L_q + random 0..--kv-extra)\n"
            "  --len MIN:MAX              random query length range (default 1:384)\n"
            "  --kv-extra N               extra random keys per sequence (default 64)\n"
            "  --heads H                  query heads (default 8)\n"
            "  --kv-heads H               key/value heads, divides --heads (default 2)\n"
            "  --head-size D              (default 128)\n"
            "  --v-head-size D            (default = --head-size)\n"
            "  --causal 0|1               tail-aligned causal mask (default 1)\n"
            "  --softcap X                (default 0 = off)\n"
            "  --scale X                  (default 0 = 1/sqrt(head size))\n"
            "  --seed S                   (default 1)\n"
            "  --layout 4d|3d|both        padded layouts to check (default both)\n"
            "  --poison finite|nan|both   padding poison passes (default both)\n"
            "  --cpu-only                 skip the GPU paths\n"
            "or:    oppcheck [--cpu-only] --onnx-test DIR [DIR...]\n"
            "  run ONNX Attention case folders (DIR: a case folder or a folder of them)\n"
            "  through the CPU reference and, with a GPU, the cuBLAS reference and the exact\n"
            "  kernel; exit 0 all bit-identical, 1 differ, 2 unreadable\n");
}

/* Parses "a,b,c" into a new array; returns its length or -1. */
static int parse_list(const char *s, int32_t **out) {
    int n = 1;
    for (const char *p = s; *p; ++p) {
        n += *p == ',';
    }
    int32_t *v = malloc(sizeof(int32_t) * (size_t)n);
    if (v == NULL) {
        return -1;
    }
    char *end = NULL;
    for (int i = 0; i < n; ++i) {
        long x = strtol(s, &end, 10);
        if (end == s || x < 0 || x > 1000000 || (*end != ',' && *end != '\0')) {
            free(v);
            return -1;
        }
        v[i] = (int32_t)x;
        s = end + 1;
    }
    *out = v;
    return n;
}

static int parse_int(const char *s, long lo, long hi, long *out) {
    char *end = NULL;
    const long v = strtol(s, &end, 10);
    if (end == s || *end != '\0' || v < lo || v > hi) {
        return -1;
    }
    *out = v;
    return 0;
}

static int bad(const char *opt, const char *value) {
    fprintf(stderr, "oppcheck: bad value for %s: '%s' (see --help)\n", opt, value);
    return 2;
}

static int parse_args(int argc, char **argv, oppcheck_opts_t *o, int *kv_extra) {
    long v;
    int nq = -1, nkv = -1;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            exit(0);
        }
        if (strcmp(a, "--cpu-only") == 0) {
            o->cpu_only = 1;
            continue;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "oppcheck: unknown option or missing value: %s (see --help)\n", a);
            return 2;
        }
        const char *val = argv[++i];
        if (strcmp(a, "--dtype") == 0) {
            o->dtype = strcmp(val, "f32") == 0    ? OPP_DTYPE_F32
                       : strcmp(val, "f16") == 0  ? OPP_DTYPE_F16
                       : strcmp(val, "bf16") == 0 ? OPP_DTYPE_BF16
                                                  : OPP_DTYPE_UNDEFINED;
            if (o->dtype == OPP_DTYPE_UNDEFINED) {
                return bad(a, val);
            }
        } else if (strcmp(a, "--batch") == 0) {
            if (parse_int(val, 1, 100000, &v)) {
                return bad(a, val);
            }
            o->batch = (int32_t)v;
        } else if (strcmp(a, "--lq") == 0) {
            if ((nq = parse_list(val, &o->lq)) < 0) {
                return bad(a, val);
            }
        } else if (strcmp(a, "--lkv") == 0) {
            if ((nkv = parse_list(val, &o->lkv)) < 0) {
                return bad(a, val);
            }
        } else if (strcmp(a, "--len") == 0) {
            int lo = 0, hi = 0;
            if (sscanf(val, "%d:%d", &lo, &hi) != 2 || lo < 0 || hi < lo || hi > 1000000) {
                return bad(a, val);
            }
            o->min_len = lo;
            o->max_len = hi;
        } else if (strcmp(a, "--kv-extra") == 0) {
            if (parse_int(val, 0, 1000000, &v)) {
                return bad(a, val);
            }
            *kv_extra = (int)v;
        } else if (strcmp(a, "--heads") == 0 || strcmp(a, "--kv-heads") == 0 ||
                   strcmp(a, "--head-size") == 0 || strcmp(a, "--v-head-size") == 0) {
            if (parse_int(val, 1, 4096, &v)) {
                return bad(a, val);
            }
            int32_t *dst = strcmp(a, "--heads") == 0       ? &o->num_heads
                           : strcmp(a, "--kv-heads") == 0  ? &o->kv_num_heads
                           : strcmp(a, "--head-size") == 0 ? &o->head_size
                                                           : &o->v_head_size;
            *dst = (int32_t)v;
        } else if (strcmp(a, "--causal") == 0) {
            if (parse_int(val, 0, 1, &v)) {
                return bad(a, val);
            }
            o->is_causal = (int32_t)v;
        } else if (strcmp(a, "--softcap") == 0 || strcmp(a, "--scale") == 0) {
            char *end = NULL;
            const float f = strtof(val, &end);
            if (end == val || *end != '\0') {
                return bad(a, val);
            }
            *(strcmp(a, "--softcap") == 0 ? &o->softcap : &o->scale) = f;
        } else if (strcmp(a, "--seed") == 0) {
            if (parse_int(val, 0, 0x7fffffffL, &v)) {
                return bad(a, val);
            }
            o->seed = (uint64_t)v;
        } else if (strcmp(a, "--layout") == 0 || strcmp(a, "--poison") == 0) {
            const int layout = strcmp(a, "--layout") == 0;
            const int m = strcmp(val, layout ? "4d" : "finite") == 0 ? 1
                          : strcmp(val, layout ? "3d" : "nan") == 0  ? 2
                          : strcmp(val, "both") == 0                 ? 3
                                                                     : 0;
            if (m == 0) {
                return bad(a, val);
            }
            *(layout ? &o->layouts : &o->poisons) = m;
        } else {
            fprintf(stderr, "oppcheck: unknown option %s (see --help)\n", a);
            return 2;
        }
    }
    if (nq >= 0 && nkv >= 0 && nq != nkv) {
        fprintf(stderr, "oppcheck: --lq has %d lengths but --lkv has %d\n", nq, nkv);
        return 2;
    }
    if (nq >= 0 || nkv >= 0) {
        const int n = nq >= 0 ? nq : nkv;
        if (o->batch != 0 && o->batch != n) {
            fprintf(stderr, "oppcheck: --batch %d but %d lengths given\n", (int)o->batch, n);
            return 2;
        }
        o->batch = n;
    }
    return 0;
}

/* "[--cpu-only] --onnx-test DIR..." anywhere: the ONNX case mode; -1 if absent. */
static int onnx_test_mode(int argc, char **argv) {
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--onnx-test") != 0) {
            continue;
        }
        int cpu_only = 0;
        for (int k = 1; k < i; ++k) {
            if (strcmp(argv[k], "--cpu-only") != 0) {
                fprintf(stderr, "oppcheck: %s cannot be combined with --onnx-test\n", argv[k]);
                return 2;
            }
            cpu_only = 1;
        }
        return oppcheck_onnx_test(argc - i - 1, argv + i + 1, cpu_only);
    }
    return -1;
}

int main(int argc, char **argv) {
    opp_hgpu_set_program("oppcheck"); /* CUDA failures: "oppcheck: ... failed: ...", exit 2 */
    const int onnx_rc = onnx_test_mode(argc, argv);
    if (onnx_rc >= 0) {
        return onnx_rc;
    }
    oppcheck_opts_t o;
    memset(&o, 0, sizeof(o));
    o.dtype = OPP_DTYPE_BF16;
    o.min_len = 1;
    o.max_len = 384;
    o.num_heads = 8;
    o.kv_num_heads = 2;
    o.head_size = 128;
    o.is_causal = 1;
    o.seed = 1;
    o.layouts = 3;
    o.poisons = 3;
    int kv_extra = 64;
    int rc = parse_args(argc, argv, &o, &kv_extra);
    if (rc != 0) {
        return rc;
    }
    if (o.batch == 0) {
        o.batch = 6;
    }
    if (o.v_head_size == 0) {
        o.v_head_size = o.head_size;
    }
    /* Lengths: explicit, or seeded random (L_kv = L_q + up to kv_extra). */
    uint64_t st = o.seed * 0x9E3779B97F4A7C15ull + 12345u;
    int32_t *lq = malloc(sizeof(int32_t) * (size_t)o.batch);
    int32_t *lkv = malloc(sizeof(int32_t) * (size_t)o.batch);
    if (lq == NULL || lkv == NULL) {
        fprintf(stderr, "oppcheck: out of host memory\n");
        return 2;
    }
    for (int32_t b = 0; b < o.batch; ++b) {
        st = st * 6364136223846793005ull + 1442695040888963407ull;
        const uint32_t r = (uint32_t)(st >> 33);
        lq[b] = o.lq != NULL ? o.lq[b]
                             : o.min_len + (int32_t)(r % (uint32_t)(o.max_len - o.min_len + 1));
        lkv[b] =
            o.lkv != NULL
                ? o.lkv[b]
                : (o.lq != NULL ? lq[b] : lq[b] + (int32_t)((r >> 9) % (uint32_t)(kv_extra + 1)));
    }
    opp_attention_desc_t check;
    opp_lb_t lb;
    if (opp_lb_from_lengths(&lb, o.dtype, o.batch, lq, lkv, o.num_heads, o.kv_num_heads,
                            o.head_size, o.v_head_size, o.scale, o.is_causal, o.softcap,
                            o.seed) != 0) {
        fprintf(stderr, "oppcheck: out of host memory for the batch\n");
        return 2;
    }
    opp_lb_packed_desc(&lb, &check);
    opp_status_t st_check = opp_attention_desc_check(&check);
    if (st_check != OPP_STATUS_SUCCESS) {
        fprintf(stderr, "oppcheck: the options describe an invalid batch: %s: %s\n",
                opp_status_name(st_check), opp_last_error_message());
        return 2;
    }
    char desc[1024];
    opp_lb_describe(&lb, desc, sizeof(desc));
    printf("oppcheck %s: logical batch %s\n", opp_version_string(), desc);
    printf("  total_q = %lld, total_kv = %lld tokens; max L_q = %d, max L_kv = %d\n",
           (long long)lb.total_q, (long long)lb.total_kv, (int)lb.max_lq, (int)lb.max_lkv);
    printf("  CPU references: %d threads (OPP_REF_THREADS; default: online CPUs)\n",
           opp_ref_threads());
    oppcheck_table_t table;
    memset(&table, 0, sizeof(table));
    void *packed = NULL;
    rc = oppcheck_run_cpu(&lb, &o, &table, &packed);
    char gpu[256];
    if (o.cpu_only) {
        printf("  GPU: not run (--cpu-only)\n");
    } else if (!oppcheck_gpu_name(gpu, sizeof(gpu))) {
        printf("  GPU: none found - ran CPU-only (the CPU references and L0)\n");
    } else if (packed != NULL) {
        printf("  GPU: %s\n", gpu);
        const int g = oppcheck_run_gpu(&lb, &o, packed, &table);
        rc = rc > g ? rc : g;
    }
    oppcheck_table_print(&table);
    printf("\n%s\n", rc == 0   ? "RESULT: all comparisons bit-identical"
                     : rc == 1 ? "RESULT: DISAGREEMENT (see rows marked DISAGREES)"
                               : "RESULT: ERROR");
    free(packed);
    free(lq);
    free(lkv);
    free(o.lq);
    free(o.lkv);
    opp_lb_free(&lb);
    return rc;
}
