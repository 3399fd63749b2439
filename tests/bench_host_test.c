/*
 * bench_host_test.c - oppbench's host-side pieces on the CPU (bench/options.h,
 * bench/accuracy.h, bench/dump.h, bench/json_write.h): the strict command
 * line, the FAST-vs-EXACT error statistics and their bound, the --dump files
 * read back (meta.json through Jansson), and the JSON string writer.
 *
 *   bazel test //tests:bench_host_test
 * With OPP_TEST_KEEP_DUMP=DIR (--test_env) the dump test also leaves a dump
 * of a small GQA softcap batch, out_exact from the CPU reference, in DIR, for
 * trying bench/fa2_accuracy.py by hand.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench/accuracy.h"
#include "bench/dump.h"
#include "bench/json_write.h"
#include "bench/options.h"
#include "harness/logical_batch.h"
#include "numerics/fp_convert.h"
#include "reference/opp_reference.h"
#include "tests/test_util.h"

// --- options

static int parse(bench_opts_t *o, char *err, const char *a1, const char *a2, const char *a3) {
    char *argv[4] = {"oppbench", (char *)a1, (char *)a2, (char *)a3};
    const int argc = a1 == NULL ? 1 : (a2 == NULL ? 2 : (a3 == NULL ? 3 : 4));
    bench_opts_default(o);
    err[0] = '\0';
    return bench_parse_args(argc, argv, o, err, 256);
}

/* The defaults time exact, fast and cublas (tf32x3 is opt-in); --impl picks
 * a subset in any order. */
static void test_options_impl_lists_select_implementations(void **state) {
    (void)state;
    bench_opts_t o;
    char err[256];
    assert_int_equal(parse(&o, err, NULL, NULL, NULL), 0);
    assert_true(o.impl[BENCH_IMPL_EXACT] && o.impl[BENCH_IMPL_FAST] && o.impl[BENCH_IMPL_CUBLAS]);
    assert_false(o.impl[BENCH_IMPL_TF32X3]);
    assert_int_equal(parse(&o, err, "--impl", "fast,tf32x3", NULL), 0);
    assert_true(!o.impl[BENCH_IMPL_EXACT] && o.impl[BENCH_IMPL_FAST] &&
                !o.impl[BENCH_IMPL_CUBLAS] && o.impl[BENCH_IMPL_TF32X3]);
    assert_string_equal(bench_impl_name(BENCH_IMPL_TF32X3), "tf32x3");
    assert_int_equal(parse(&o, err, "--impl", "tf32x3,tf32x3", NULL), 2);
    assert_int_equal(parse(&o, err, "--sweep", "--impl", "tf32x3"), 2);
    assert_int_equal(o.reps, 20);
    assert_int_equal(parse(&o, err, "--impl", "fast,cublas", NULL), 0);
    assert_true(!o.impl[BENCH_IMPL_EXACT] && o.impl[BENCH_IMPL_FAST] && o.impl[BENCH_IMPL_CUBLAS]);
    assert_int_equal(parse(&o, err, "--impl=cublas,exact", NULL, NULL), 0);
    assert_true(o.impl[BENCH_IMPL_EXACT] && !o.impl[BENCH_IMPL_FAST] && o.impl[BENCH_IMPL_CUBLAS]);
    assert_string_equal(bench_impl_name(BENCH_IMPL_FAST), "fast");
}

/* --impl is strict: unknown names, repeats, empty items and empty lists fail. */
static void test_options_impl_rejects_malformed_lists(void **state) {
    (void)state;
    static const char *bad[] = {"",          ",",    "fast,",      ",fast",      "fast,,exact",
                                "fast,fast", "FAST", "exact,cuda", "fast cublas"};
    bench_opts_t o;
    char err[256];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        if (parse(&o, err, "--impl", bad[i], NULL) != 2) {
            fail_msg("--impl '%s' accepted", bad[i]);
        }
        assert_non_null(strstr(err, "bad value for --impl"));
    }
}

/* --sweep excludes the workload-only options; its own option needs it. */
static void test_options_sweep_conflicts_are_errors(void **state) {
    (void)state;
    bench_opts_t o;
    char err[256];
    assert_int_equal(parse(&o, err, "--sweep", "--sweep-check-max-gflop", "10"), 0);
    assert_true(o.sweep && o.sweep_check_max_gflop == 10.0);
    assert_int_equal(parse(&o, err, "--sweep", "--impl", "fast"), 2);
    assert_string_equal(err, "--impl does not apply with --sweep (see --help)");
    assert_int_equal(parse(&o, err, "--dump", "d", "--sweep"), 2);
    assert_int_equal(parse(&o, err, "--sweep", "--workloads=w.json", NULL), 2);
    assert_int_equal(parse(&o, err, "--sweep-check-max-gflop", "1", NULL), 2);
    assert_string_equal(err, "--sweep-check-max-gflop needs --sweep (see --help)");
    assert_int_equal(parse(&o, err, "--dump", "dir", "--list"), 0);
    assert_string_equal(o.dump_dir, "dir");
    assert_true(o.list && !o.dump_outputs_only);
    assert_int_equal(parse(&o, err, "--dump-outputs", "dir2", NULL), 0);
    assert_string_equal(o.dump_dir, "dir2");
    assert_true(o.dump_outputs_only);
    assert_int_equal(parse(&o, err, "--dump-outputs", "d", "--decode-sweep"), 2);
    assert_string_equal(err, "--dump-outputs does not apply with --decode-sweep (see --help)");
    const char *both[5] = {"oppbench", "--dump", "a", "--dump-outputs", "b"};
    bench_opts_default(&o);
    assert_int_equal(bench_parse_args(5, (char **)both, &o, err, sizeof err), 2);
    assert_string_equal(err, "--dump and --dump-outputs exclude each other (see --help)");
}

/* Values are range-checked; unknown options and --help are reported, not exited on. */
static void test_options_values_checked_and_help_reported(void **state) {
    (void)state;
    bench_opts_t o;
    char err[256];
    assert_int_equal(parse(&o, err, "--reps", "0", NULL), 2);
    assert_int_equal(parse(&o, err, "--reps", "2.5", NULL), 2);
    assert_int_equal(parse(&o, err, "--warmup", "0", NULL), 0);
    assert_int_equal(parse(&o, err, "--flush-mib", "1.5", NULL), 2);
    assert_int_equal(parse(&o, err, "--dump", "", NULL), 2);
    assert_string_equal(err, "bad value for --dump: '' (see --help)");
    assert_int_equal(parse(&o, err, "--dump-outputs", "", NULL), 2);
    assert_string_equal(err, "bad value for --dump-outputs: '' (see --help)");
    assert_int_equal(parse(&o, err, "--reps", NULL, NULL), 2);
    assert_non_null(strstr(err, "missing value: --reps"));
    assert_int_equal(parse(&o, err, "--casual", "1", NULL), 2);
    assert_string_equal(err, "unknown option --casual (see --help)");
    assert_int_equal(parse(&o, err, "-x", NULL, NULL), 2);
    assert_int_equal(parse(&o, err, "--reps", "5", "--help"), 1);
}

/* --decode-sweep excludes the workload-only options and --sweep; its own
 * option needs it and is range-checked. */
static void test_options_decode_sweep_conflicts_are_errors(void **state) {
    (void)state;
    bench_opts_t o;
    char err[256];
    assert_int_equal(parse(&o, err, "--decode-sweep", NULL, NULL), 0);
    assert_true(o.decode_sweep && !o.sweep && o.decode_check_seqs == 4);
    assert_int_equal(parse(&o, err, "--decode-sweep", "--decode-check-seqs", "256"), 0);
    assert_int_equal(o.decode_check_seqs, 256);
    assert_int_equal(parse(&o, err, "--decode-sweep", "--decode-check-seqs=0", NULL), 2);
    assert_string_equal(err, "bad value for --decode-check-seqs: '0' (see --help)");
    assert_int_equal(parse(&o, err, "--decode-check-seqs", "2", NULL), 2);
    assert_string_equal(err, "--decode-check-seqs needs --decode-sweep (see --help)");
    assert_int_equal(parse(&o, err, "--sweep", "--decode-check-seqs", "2"), 2);
    assert_string_equal(err, "--decode-check-seqs needs --decode-sweep (see --help)");
    assert_int_equal(parse(&o, err, "--decode-sweep", "--sweep-check-max-gflop", "1"), 2);
    assert_string_equal(err, "--sweep-check-max-gflop needs --sweep (see --help)");
    assert_int_equal(parse(&o, err, "--decode-sweep", "--impl", "fast"), 2);
    assert_string_equal(err, "--impl does not apply with --decode-sweep (see --help)");
    assert_int_equal(parse(&o, err, "--decode-sweep", "--workloads=w.json", NULL), 2);
    assert_int_equal(parse(&o, err, "--decode-sweep", "--sweep", NULL), 2);
    assert_string_equal(err, "--sweep and --decode-sweep exclude each other (see --help)");
    assert_int_equal(parse(&o, err, "--decode-sweep", "--list", NULL), 0);
    assert_true(o.decode_sweep && o.list);
}

// --- accuracy

static void fill_bf16(uint16_t *dst, const double *v, size_t n) {
    for (size_t i = 0; i < n; ++i) {
        dst[i] = opp__double_to_bf16(v[i]);
    }
}

/* Max abs and RMS are computed in double from the decoded elements. */
static void test_err_measure_reports_max_and_rms(void **state) {
    (void)state;
    const double want_v[4] = {1.0, -2.0, 0.5, 0.25};
    const double got_v[4] = {1.0078125, -2.0, 0.5, 0.25}; /* one bf16 ulp at 1 */
    uint16_t want[4], got[4];
    fill_bf16(want, want_v, 4);
    fill_bf16(got, got_v, 4);
    bench_err_t e;
    assert_int_equal(bench_err_measure(want, want, 4, OPP_DTYPE_BF16, &e), 1);
    assert_true(e.max_abs == 0.0 && e.rms == 0.0 && e.want_max == 2.0);
    assert_int_equal(bench_err_measure(got, want, 4, OPP_DTYPE_BF16, &e), 1);
    assert_true(e.max_abs == 0.0078125);
    assert_true(e.rms == 0.0078125 / 2.0); /* sqrt(ulp^2 / 4) */
    assert_int_equal(e.worst, 0);
    char msg[200];
    bench_err_describe(&e, 1, msg, sizeof msg);
    assert_string_equal(msg, "ok: max_abs 0.00781 rms 0.00391");
}

/* NaN/inf in the tested output and errors above the bound fail. */
static void test_err_measure_fails_nonfinite_and_large_errors(void **state) {
    (void)state;
    const double want_v[3] = {1.0, 1.0, -1.0};
    uint16_t want[3], got[3];
    fill_bf16(want, want_v, 3);
    memcpy(got, want, sizeof got);
    got[1] = 0x7fc0; /* NaN */
    bench_err_t e;
    char msg[200];
    assert_int_equal(bench_err_measure(got, want, 3, OPP_DTYPE_BF16, &e), 0);
    assert_int_equal(e.nonfinite, 1);
    bench_err_describe(&e, 0, msg, sizeof msg);
    assert_string_equal(msg, "FAILED: 1 NaN/inf of 3 elems");
    assert_int_equal(bench_count_nonfinite(got, 3, OPP_DTYPE_BF16), 1);
    got[1] = opp__double_to_bf16(1.0);
    got[2] = opp__double_to_bf16(-0.5); /* error 0.5 > 0.05 * 1 + 1e-3 */
    assert_int_equal(bench_err_measure(got, want, 3, OPP_DTYPE_BF16, &e), 0);
    assert_true(e.max_abs == 0.5 && e.worst == 2 && e.bound == BENCH_ERR_REL + BENCH_ERR_ABS);
    bench_err_describe(&e, 0, msg, sizeof msg);
    assert_non_null(strstr(msg, "FAILED: max_abs 0.5 > bound 0.051 (elem 2;"));
    const float f_want[2] = {1.0f, 2.0f}, f_got[2] = {1.0f, 2.0f + 0.04f};
    assert_int_equal(bench_err_measure(f_got, f_want, 2, OPP_DTYPE_F32, &e), 1);
}

// --- dump

static size_t file_size(const char *dir, const char *name) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    struct stat st;
    return stat(path, &st) == 0 ? (size_t)st.st_size : (size_t)-1;
}

static int file_equals(const char *dir, const char *name, const void *want, size_t bytes) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return 0;
    }
    char *got = malloc(bytes + 1);
    const size_t n = fread(got, 1, bytes + 1, f);
    fclose(f);
    const int same = n == bytes && memcmp(got, want, bytes) == 0;
    free(got);
    return same;
}

static double member_number(const json_t *obj, const char *key) {
    const json_t *v = json_object_get(obj, key);
    assert_non_null(v);
    assert_true(json_is_number(v));
    return json_number_value(v);
}

static const char *member_string(const json_t *obj, const char *key) {
    const json_t *v = json_object_get(obj, key);
    assert_non_null(v);
    assert_true(json_is_string(v));
    return json_string_value(v);
}

/* meta.json read strictly (duplicate keys would be an error). */
static json_t *load_meta(const char *path) {
    json_error_t e;
    json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &e);
    if (root == NULL) {
        fail_msg("%s:%d:%d: %s", path, e.line, e.column, e.text);
    }
    return root;
}

/* OPP_TEST_KEEP_DUMP only: two more dumps (f16 non-causal MHA with a FAST
 * output; f32 causal without one), out_exact from the CPU reference. */
static void keep_more_dumps(const char *root) {
    static const struct {
        const char *name;
        opp_dtype_t dtype;
        int32_t heads, kv_heads, d, causal, with_fast;
    } v[2] = {{"mha_f16", OPP_DTYPE_F16, 3, 3, 24, 0, 1},
              {"causal_f32", OPP_DTYPE_F32, 2, 1, 8, 1, 0}};
    const int32_t lq[2] = {6, 11}, lkv[2] = {13, 3};
    for (int i = 0; i < 2; ++i) {
        opp_lb_t lb;
        assert_int_equal(opp_lb_from_lengths(&lb, v[i].dtype, 2, lq, lkv, v[i].heads, v[i].kv_heads,
                                             v[i].d, v[i].d, 0.0f, v[i].causal, 0.0f, 11 + i),
                         0);
        opp_attention_desc_t desc;
        opp_lb_packed_desc(&lb, &desc);
        const size_t bytes = (size_t)lb.total_q * v[i].heads * v[i].d * opp_dtype_size(v[i].dtype);
        void *exact = malloc(bytes);
        assert_opp_ok(opp_ref_packed_attention(&desc, lb.cu_q, lb.cu_kv, lb.q, lb.k, lb.v, exact));
        const bench_dump_t d = {root,   v[i].name, 10 + i,
                                &lb,    exact,     v[i].with_fast ? exact : NULL,
                                NULL,   1,         v[i].with_fast ? "flash_f16_d32" : NULL,
                                "kept", 0};
        char err[512];
        assert_int_equal(bench_dump_write(&d, err, sizeof err), 0);
        free(exact);
        opp_lb_free(&lb);
    }
}

/* The raw files hold the tensors byte for byte; meta.json names shapes and
 * attributes; a rewrite without a FAST (TF32X3) output removes the old
 * out_fast.bin (out_tf32x3.bin). TF32X3 serves f32 only, but the dump does
 * not look at which kernel wrote an output: bf16 bytes stand in here. */
static void test_dump_writes_tensors_and_meta(void **state) {
    (void)state;
    const int32_t lq[3] = {5, 1, 9}, lkv[3] = {7, 12, 4}; /* 9 > 4: rows without keys */
    opp_lb_t lb;
    assert_int_equal(
        opp_lb_from_lengths(&lb, OPP_DTYPE_BF16, 3, lq, lkv, 4, 2, 16, 16, 0.0f, 1, 30.0f, 7), 0);
    const size_t n_out = (size_t)lb.total_q * 4 * 16, out_bytes = n_out * 2;
    uint16_t *exact = malloc(out_bytes), *fast = malloc(out_bytes), *tf32x3 = malloc(out_bytes);
    opp_attention_desc_t desc;
    opp_lb_packed_desc(&lb, &desc);
    assert_opp_ok(opp_ref_packed_attention(&desc, lb.cu_q, lb.cu_kv, lb.q, lb.k, lb.v, exact));
    memcpy(fast, exact, out_bytes);
    fast[3] ^= 1; /* one ulp: what a FAST kernel might give */
    memcpy(tf32x3, exact, out_bytes);
    tf32x3[5] ^= 1; /* differs from both */
    const char *keep = getenv("OPP_TEST_KEEP_DUMP");
    const char *tmp = keep != NULL && keep[0] != '\0' ? keep : getenv("TEST_TMPDIR");
    char root[512], dir[600], err[512];
    snprintf(root, sizeof root, "%s/dump", tmp != NULL ? tmp : "/tmp");
    snprintf(dir, sizeof dir, "%s/gqa_softcap", root);
    bench_dump_t d = {root, "gqa_softcap",    3,       &lb, exact, fast, tf32x3,
                      1,    "flash_bf16_d32", "ok: x", 0};
    if (bench_dump_write(&d, err, sizeof err) != 0) {
        fail_msg("%s", err);
    }
    assert_true(file_equals(dir, "q.bin", lb.q, (size_t)lb.total_q * 4 * 16 * 2));
    assert_true(file_equals(dir, "k.bin", lb.k, (size_t)lb.total_kv * 2 * 16 * 2));
    assert_true(file_equals(dir, "v.bin", lb.v, (size_t)lb.total_kv * 2 * 16 * 2));
    assert_true(file_equals(dir, "cu_seqlens_q.bin", lb.cu_q, 4 * sizeof(int32_t)));
    assert_true(file_equals(dir, "cu_seqlens_kv.bin", lb.cu_kv, 4 * sizeof(int32_t)));
    assert_true(file_equals(dir, "out_exact.bin", exact, out_bytes));
    assert_true(file_equals(dir, "out_fast.bin", fast, out_bytes));
    assert_true(file_equals(dir, "out_tf32x3.bin", tf32x3, out_bytes));

    char meta[700];
    snprintf(meta, sizeof meta, "%s/meta.json", dir);
    json_t *root_json = load_meta(meta);
    assert_string_equal(member_string(root_json, "workload"), "gqa_softcap");
    assert_string_equal(member_string(root_json, "dtype"), "bf16");
    assert_string_equal(member_string(root_json, "fast_kernel"), "flash_bf16_d32");
    assert_string_equal(member_string(root_json, "fast_validation"), "ok: x");
    assert_true(member_number(root_json, "index") == 3 && member_number(root_json, "heads") == 4);
    assert_true(member_number(root_json, "kv_heads") == 2);
    assert_true(member_number(root_json, "total_q") == 15 &&
                member_number(root_json, "total_kv") == 23);
    assert_true(member_number(root_json, "max_seqlen_kv") == 12);
    assert_true(member_number(root_json, "softcap") == 30.0);
    assert_true(member_number(root_json, "scale") == 0.25); /* 1 / sqrt(16) */
    assert_true(json_is_true(json_object_get(root_json, "causal")));
    const json_t *files = json_object_get(root_json, "files");
    const json_t *shape = json_object_get(json_object_get(files, "k.bin"), "shape");
    assert_int_equal(json_array_size(shape), 3);
    assert_true(json_integer_value(json_array_get(shape, 0)) == 23 &&
                json_integer_value(json_array_get(shape, 1)) == 2);
    assert_non_null(json_object_get(files, "out_fast.bin"));
    shape = json_object_get(json_object_get(files, "out_tf32x3.bin"), "shape");
    assert_int_equal(json_array_size(shape), 3);
    assert_true(json_integer_value(json_array_get(shape, 0)) == 15 &&
                json_integer_value(json_array_get(shape, 1)) == 4 &&
                json_integer_value(json_array_get(shape, 2)) == 16);
    assert_string_equal(member_string(json_object_get(files, "out_tf32x3.bin"), "dtype"), "bf16");
    json_decref(root_json);

    d.out_fast = NULL;
    d.out_tf32x3 = NULL;
    d.fast_kernel = NULL;
    if (bench_dump_write(&d, err, sizeof err) != 0) {
        fail_msg("%s", err);
    }
    assert_true(file_size(dir, "out_fast.bin") == (size_t)-1);
    assert_true(file_size(dir, "out_tf32x3.bin") == (size_t)-1);
    root_json = load_meta(meta);
    assert_true(json_is_null(json_object_get(root_json, "fast_kernel")));
    assert_null(json_object_get(json_object_get(root_json, "files"), "out_fast.bin"));
    assert_null(json_object_get(json_object_get(root_json, "files"), "out_tf32x3.bin"));
    json_decref(root_json);
    if (keep != NULL && keep[0] != '\0') { /* leave a complete dump for fa2_accuracy.py */
        d.out_fast = fast;
        d.fast_kernel = "flash_bf16_d32";
        assert_int_equal(bench_dump_write(&d, err, sizeof err), 0);
        keep_more_dumps(root);
    }

    /* outputs only (oppbench --dump-outputs): the last dump's q, k, v go,
     * the outputs and cu_seqlens stay, meta.json lists no input */
    d.out_fast = fast;
    d.out_tf32x3 = tf32x3;
    d.fast_kernel = "flash_bf16_d32";
    d.outputs_only = 1;
    if (bench_dump_write(&d, err, sizeof err) != 0) {
        fail_msg("%s", err);
    }
    assert_true(file_size(dir, "q.bin") == (size_t)-1 && file_size(dir, "k.bin") == (size_t)-1 &&
                file_size(dir, "v.bin") == (size_t)-1);
    assert_true(file_equals(dir, "out_fast.bin", fast, out_bytes));
    assert_true(file_equals(dir, "out_tf32x3.bin", tf32x3, out_bytes));
    assert_true(file_equals(dir, "out_exact.bin", exact, out_bytes));
    assert_true(file_equals(dir, "cu_seqlens_kv.bin", lb.cu_kv, 4 * sizeof(int32_t)));
    root_json = load_meta(meta);
    files = json_object_get(root_json, "files");
    assert_null(json_object_get(files, "q.bin"));
    assert_null(json_object_get(files, "v.bin"));
    assert_non_null(json_object_get(files, "cu_seqlens_q.bin"));
    assert_non_null(json_object_get(files, "out_fast.bin"));
    assert_non_null(json_object_get(files, "out_tf32x3.bin"));
    json_decref(root_json);
    d.outputs_only = 0;

    d.dir = "/proc/no/such/dir";
    assert_int_equal(bench_dump_write(&d, err, sizeof err), -1);
    assert_non_null(strstr(err, "/proc/no/such/dir"));
    free(exact);
    free(fast);
    free(tf32x3);
    opp_lb_free(&lb);
}

// --- JSON strings

/* s written by bench_json_write_string() into a memory stream. */
static char *written(const char *s) {
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    assert_non_null(f);
    assert_int_equal(bench_json_write_string(f, s), 0);
    fclose(f);
    return buf;
}

/* Quotes, backslashes and control characters are escaped, UTF-8 is kept,
 * and what is written reads back (through Jansson) as the same string;
 * invalid UTF-8 still gives valid JSON, with '?' for the high bytes. */
static void test_json_write_string_escapes_and_round_trips(void **state) {
    (void)state;
    static const char *const cases[] = {"plain",
                                        "",
                                        "q\"uote",
                                        "back\\slash",
                                        "tab\tnl\n",
                                        "\x01"
                                        "ctl\x1f",
                                        "caf\xc3\xa9 \xe2\x89\xa4"};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        char *out = written(cases[i]);
        json_error_t e;
        json_t *back = json_loads(out, JSON_DECODE_ANY, &e);
        if (back == NULL || !json_is_string(back)) {
            fail_msg("case %zu: '%s' is not a JSON string (%s)", i, out, e.text);
        }
        assert_string_equal(json_string_value(back), cases[i]);
        json_decref(back);
        free(out);
    }
    char *out = written("q\"\\\x01");
    assert_string_equal(out, "\"q\\\"\\\\\\u0001\"");
    free(out);
    out = written("bad \xff\xfe utf8");
    assert_string_equal(out, "\"bad ?? utf8\"");
    free(out);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_options_impl_lists_select_implementations),
        cmocka_unit_test(test_options_impl_rejects_malformed_lists),
        cmocka_unit_test(test_options_sweep_conflicts_are_errors),
        cmocka_unit_test(test_options_decode_sweep_conflicts_are_errors),
        cmocka_unit_test(test_options_values_checked_and_help_reported),
        cmocka_unit_test(test_err_measure_reports_max_and_rms),
        cmocka_unit_test(test_err_measure_fails_nonfinite_and_large_errors),
        cmocka_unit_test(test_dump_writes_tensors_and_meta),
        cmocka_unit_test(test_json_write_string_escapes_and_round_trips),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
