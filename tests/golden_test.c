/*
 * golden_test.c - L1 and L0-through-golden on the project's golden cases
 * (the folders of testdata/cases, written by testdata/regenerate.py):
 *   (a) the CPU padded Attention-24 reference reproduces every golden Y bit
 *       for bit on ALL rows (valid and padded query rows);
 *   (b) the packed representation gathered from the golden's padded inputs
 *       (per the logical_batch.txt sidecar) run through the CPU packed
 *       reference equals the golden's valid rows bit for bit;
 * plus the sidecar / case cross-check, the padding poison pattern, and the
 * sidecar parser's rejection of malformed files.
 *
 * Data: $OPP_GOLDEN_DIR, else Bazel runfiles (//testdata:golden_cases), else
 * testdata/cases relative to the current directory. The group FAILS when the
 * folder is missing or holds fewer than 20 cases.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/golden_packed.h"
#include "harness/onnx_attention_case.h"
#include "tests/test_util.h"

#define MIN_CASES 20

static char g_dir[4096];
static char **g_cases;
static int g_n_cases;

static int group_setup(void **state) {
    (void)state;
    char err[1024];
    g_n_cases = opp_onnx_case_folder("OPP_GOLDEN_DIR", "testdata/cases", MIN_CASES, g_dir,
                                     sizeof(g_dir), &g_cases, err, sizeof(err));
    if (g_n_cases < 0) {
        fprintf(stderr, "FATAL: %s\n", err);
        return -1;
    }
    printf("golden folder: %s (%d cases)\n", g_dir, g_n_cases);
    return 0;
}

static int group_teardown(void **state) {
    (void)state;
    opp_onnx_case_list_free(g_cases, g_n_cases);
    return 0;
}

/* One loaded golden case: the case, its mapping, outputs and sidecar. */
typedef struct golden {
    opp_onnx_case_t c;
    opp_ref_attention24_desc_t d;
    opp_ref_attention24_tensors_t t;
    opp_onnx_sidecar_t s;
} golden_t;

static void golden_free(golden_t *g) {
    opp_onnx_attention_free_outputs(&g->t);
    opp_onnx_case_free(&g->c);
    opp_onnx_sidecar_free(&g->s);
}

/* Loads, maps and cross-checks case path; 0 or -1 with the reason in err. */
static int golden_load(const char *path, golden_t *g, char *err, size_t err_size) {
    char side[4200];
    memset(g, 0, sizeof(*g));
    snprintf(side, sizeof(side), "%s/logical_batch.txt", path);
    if (opp_onnx_case_load(path, 0, &g->c, err, err_size) != 0 ||
        opp_onnx_attention_map(&g->c, &g->d, &g->t, err, err_size) != 0 ||
        opp_onnx_attention_alloc_outputs(&g->c, &g->d, &g->t, err, err_size) != 0 ||
        opp_onnx_sidecar_load(side, &g->s, err, err_size) != 0 ||
        golden_crosscheck(&g->s, &g->c, &g->d, opp_onnx_case_name(path), err, err_size) != 0) {
        golden_free(g);
        return -1;
    }
    return 0;
}

/* (a) The padded reference reproduces every golden Y bit for bit, all rows. */
static void test_golden_padded_reference_all_rows_bit_identical(void **state) {
    (void)state;
    int ok = 0;
    for (int i = 0; i < g_n_cases; ++i) {
        golden_t g;
        char err[1024], prefix[300], line[1100];
        const char *name = opp_onnx_case_name(g_cases[i]);
        if (golden_load(g_cases[i], &g, err, sizeof(err)) != 0) {
            printf("FAIL %s: %s\n", name, err);
            continue;
        }
        opp_onnx_attention_result_t r;
        const opp_status_t st = opp_ref_attention24(&g.d, &g.t);
        snprintf(prefix, sizeof(prefix), "%s/", name);
        if (st != OPP_STATUS_SUCCESS) {
            printf("FAIL %s: reference: %s: %s\n", name, opp_status_name(st),
                   opp_last_error_message());
        } else if (opp_onnx_attention_compare(&g.c, &g.d, &g.t, prefix, 5, &r, err, sizeof(err)) !=
                   0) {
            opp_onnx_attention_result_str(&r, line, sizeof(line));
            printf("FAIL %s: padded %s\n", name, r.n_compared ? line : err);
        } else {
            printf("ok   %s: padded Y (%zu elements, all rows) bit-identical\n", name,
                   r.stats[0].compared);
            ++ok;
        }
        golden_free(&g);
    }
    printf("golden padded: %d cases, %d bit-identical, %d not\n", g_n_cases, ok, g_n_cases - ok);
    assert_int_equal(ok, g_n_cases);
}

/* (b) Packed reference on the gathered valid rows == golden valid rows, bit for bit. */
static void test_golden_packed_reference_valid_rows_bit_identical(void **state) {
    (void)state;
    int ok = 0;
    for (int i = 0; i < g_n_cases; ++i) {
        golden_t g;
        golden_packed_t p;
        char err[1024], what[300];
        const char *name = opp_onnx_case_name(g_cases[i]);
        if (golden_load(g_cases[i], &g, err, sizeof(err)) != 0 ||
            golden_packed_derive(&g.s, &g.c, &p, err, sizeof(err)) != 0) {
            printf("FAIL %s: %s\n", name, err);
            golden_free(&g); /* zeroed or loaded: both fine */
            continue;
        }
        const opp_status_t st =
            opp_ref_packed_attention(&p.desc, p.cu_q, p.cu_kv, p.q, p.k, p.v, p.out);
        snprintf(what, sizeof(what), "%s/packed", name);
        opp_cmp_stats_t cs = {0, 0, 0, 0};
        if (st != OPP_STATUS_SUCCESS) {
            printf("FAIL %s: packed reference: %s: %s\n", name, opp_status_name(st),
                   opp_last_error_message());
        } else if (opp_cmp(p.out, p.want, p.out_elems, g.s.dtype, 1, 0, what, 5, &cs) != 0) {
            printf("FAIL %s: packed: %zu of %zu valid elements differ, max %llu ulp\n", name,
                   cs.mismatches, cs.compared, (unsigned long long)cs.max_ulp);
        } else {
            printf("ok   %s: packed (total_q %lld, total_kv %lld, %zu valid elements) "
                   "bit-identical\n",
                   name, (long long)p.desc.total_q, (long long)p.desc.total_kv, cs.compared);
            ++ok;
        }
        golden_packed_free(&p);
        golden_free(&g);
    }
    printf("golden packed: %d cases, %d bit-identical, %d not\n", g_n_cases, ok, g_n_cases - ok);
    assert_int_equal(ok, g_n_cases);
}

/* The padding of every golden Q, K and V holds the documented poison pattern. */
static void test_golden_padding_holds_poison(void **state) {
    (void)state;
    int ok = 0;
    for (int i = 0; i < g_n_cases; ++i) {
        golden_t g;
        char err[1024];
        size_t bad = 0;
        if (golden_load(g_cases[i], &g, err, sizeof(err)) != 0 ||
            golden_check_poison(&g.s, &g.c, &bad, err, sizeof(err)) != 0) {
            printf("FAIL %s: %s\n", opp_onnx_case_name(g_cases[i]), err);
        } else {
            ++ok;
        }
        golden_free(&g);
    }
    assert_int_equal(ok, g_n_cases);
}

/* A sidecar that disagrees with its case (lkv, heads, scale) is caught. */
static void test_golden_crosscheck_rejects_inconsistent_sidecar(void **state) {
    (void)state;
    golden_t g;
    char err[1024] = "";
    const char *path = g_cases[0];
    if (golden_load(path, &g, err, sizeof(err)) != 0) {
        fail_msg("%s: %s", path, err);
    }
    int b = 0; /* a sequence shorter than S_kv: changing it keeps S_kv */
    while (b < g.s.batch && g.s.lkv[b] >= g.d.kv_seqlen) {
        ++b;
    }
    assert_true(b < g.s.batch);
    char want[64];
    snprintf(want, sizeof(want), "sidecar lkv[%d] = %d", b, (int)g.s.lkv[b] + 1);
    g.s.lkv[b] += 1;
    assert_int_equal(
        golden_crosscheck(&g.s, &g.c, &g.d, opp_onnx_case_name(path), err, sizeof(err)), -1);
    assert_non_null(strstr(err, want));
    g.s.lkv[b] -= 1;
    g.s.kv_num_heads += 1;
    assert_int_equal(
        golden_crosscheck(&g.s, &g.c, &g.d, opp_onnx_case_name(path), err, sizeof(err)), -1);
    assert_non_null(strstr(err, "kv_num_heads"));
    g.s.kv_num_heads -= 1;
    g.s.scale = 0.25f;
    assert_int_equal(
        golden_crosscheck(&g.s, &g.c, &g.d, opp_onnx_case_name(path), err, sizeof(err)), -1);
    assert_non_null(strstr(err, "scale"));
    golden_free(&g);
}

static const char k_sidecar[] = "# liboppacked logical batch (testdata/README.md)\n"
                                "format 1\nname x\nseed 7\ndtype f16\nlayout 3d\nbatch 2\n"
                                "num_heads 4\nkv_num_heads 2\nhead_size 64\nv_head_size 80\n"
                                "scale 0.30000001192092896\nis_causal 1\nsoftcap 0\n"
                                "lq 0 3\nlkv 5 0\nq_poison 30000.0\nkv_poison 30000.0\n";

/* A well-formed sidecar parses to its values. */
static void test_onnx_sidecar_parses_documented_format(void **state) {
    (void)state;
    opp_onnx_sidecar_t s;
    char err[512] = "";
    if (opp_onnx_sidecar_parse(k_sidecar, strlen(k_sidecar), "mem", &s, err, sizeof(err)) != 0) {
        fail_msg("%s", err);
    }
    assert_string_equal(s.name, "x");
    assert_int_equal(s.dtype, OPP_DTYPE_F16);
    assert_int_equal(s.input_rank, 3);
    assert_int_equal(s.v_head_size, 80);
    assert_true(s.scale == 0.3f);
    assert_int_equal(s.lq[1], 3);
    assert_int_equal(s.lkv[0], 5);
    assert_true(s.kv_poison == 30000.0);
    opp_onnx_sidecar_free(&s);
}

/* Malformed sidecars are rejected with file, line and key in the message. */
static void test_onnx_sidecar_rejects_malformed_files(void **state) {
    (void)state;
    static const struct {
        const char *from, *to, *want;
    } edits[] = {
        {"lq 0 3\n", "lq 0 3 4\n", "mem:15: lq: 3 values for batch 2"},
        {"lkv 5 0\n", "lkv 5 -1\n", "mem:16: lkv: -1 is out of range"},
        {"seed 7\n", "", "mem:4: dtype: out of order; expected 'seed'"},
        {"batch 2\n", "batch 2\nbatch 2\n", "mem:8: batch: repeated or out of order"},
        {"head_size 64\n", "head_size  64\n", "mem:10: head_size: empty value"},
        {"scale 0.30000001192092896\n", "scale 0.3\n", "mem:12: scale: 0.3 is not a float32"},
        {"softcap 0\n", "softcap x\n", "mem:14: softcap: 'x' is not a number"},
        {"dtype f16\n", "dtype f64\n", "mem:5: dtype: 'f64' is not f32, f16 or bf16"},
        {"layout 3d\n", "layout 3d\r\n", "mem:6: layout: tab or carriage return"},
        {"kv_poison 30000.0\n", "", "kv_poison: missing (end of file)"},
        {"format 1\n", "format 2\n", "mem:2: format: format '2' is not 1"},
        {"is_causal 1\n", "is_causal 1\n\n", "mem:14: (line): empty line"},
        {"name x\n", "nom x\n", "mem:3: nom: unknown key"},
        {"kv_num_heads 2\n", "kv_num_heads 3\n", "num_heads: 4 is not a multiple"},
    };
    for (size_t i = 0; i < sizeof(edits) / sizeof(edits[0]); ++i) {
        char text[1024], err[512] = "";
        const char *at = strstr(k_sidecar, edits[i].from);
        assert_non_null(at);
        const size_t head = (size_t)(at - k_sidecar);
        snprintf(text, sizeof(text), "%.*s%s%s", (int)head, k_sidecar, edits[i].to,
                 at + strlen(edits[i].from));
        opp_onnx_sidecar_t s;
        const int rc = opp_onnx_sidecar_parse(text, strlen(text), "mem", &s, err, sizeof(err));
        if (rc == 0 || strstr(err, edits[i].want) == NULL) {
            fail_msg("edit %zu: rc %d, message '%s', want '%s'", i, rc, err, edits[i].want);
        }
        assert_null(s.lq);
    }
}

/* A missing sidecar file is an error naming the path. */
static void test_onnx_sidecar_load_names_missing_file(void **state) {
    (void)state;
    opp_onnx_sidecar_t s;
    char err[512] = "";
    assert_int_equal(opp_onnx_sidecar_load("/nonexistent/logical_batch.txt", &s, err, 512), -1);
    assert_non_null(strstr(err, "/nonexistent/logical_batch.txt"));
    assert_non_null(strstr(err, "cannot open"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden_padded_reference_all_rows_bit_identical),
        cmocka_unit_test(test_golden_packed_reference_valid_rows_bit_identical),
        cmocka_unit_test(test_golden_padding_holds_poison),
        cmocka_unit_test(test_golden_crosscheck_rejects_inconsistent_sidecar),
        cmocka_unit_test(test_onnx_sidecar_parses_documented_format),
        cmocka_unit_test(test_onnx_sidecar_rejects_malformed_files),
        cmocka_unit_test(test_onnx_sidecar_load_names_missing_file),
    };
    return cmocka_run_group_tests_name("golden", tests, group_setup, group_teardown);
}
