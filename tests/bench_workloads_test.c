/*
 * bench_workloads_test.c - the benchmark's workload file reader and FLOP
 * count (bench/workloads.h), on the CPU: hand-computed causal pair counts,
 * strict JSON (Jansson's syntax errors at LINE:COLUMN, duplicate keys
 * rejected), schema errors that name the member, selection by name, and (when
 * $OPP_WORKLOADS names ../shared/bench/workloads.json) the real file, whose
 * attended pairs must equal those of torch_anchors.py's attended_pairs();
 * the synthetic sweep of oppbench --sweep (bench/sweep.c) and the decode
 * sweep of oppbench --decode-sweep (bench/decode_sweep.c); the workload
 * file's default path (opp_workloads_path).
 *
 *   bazel test //tests:bench_workloads_test
 *   bazel test //tests:bench_workloads_test \
 *       --test_env=OPP_WORKLOADS=$PWD/../shared/bench/workloads.json
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/workloads.h"
#include "tests/test_util.h"

/* The definition, one visible pair at a time. */
static int64_t brute_pairs(int32_t lq, int32_t lkv, int causal) {
    int64_t n = 0;
    for (int32_t i = 0; i < lq; ++i) {
        for (int32_t j = 0; j < lkv; ++j) {
            n += !causal || (int64_t)j <= (int64_t)i + lkv - lq;
        }
    }
    return n;
}

/* Hand-computed counts: L_q=3, L_kv=5 causal sees 3+4+5; L_q=5, L_kv=2 sees
 * 0+0+0+1+2; square causal is L(L+1)/2; non-causal is L_q*L_kv. */
static void test_attended_pairs_hand_computed(void **state) {
    (void)state;
    assert_int_equal(opp_attended_pairs(3, 5, 1), 12);
    assert_int_equal(opp_attended_pairs(5, 2, 1), 3);
    assert_int_equal(opp_attended_pairs(4, 4, 1), 10);
    assert_int_equal(opp_attended_pairs(1, 7, 1), 7);
    assert_int_equal(opp_attended_pairs(7, 1, 1), 1);
    assert_int_equal(opp_attended_pairs(3, 5, 0), 15);
    assert_int_equal(opp_attended_pairs(0, 5, 1), 0);
    assert_int_equal(opp_attended_pairs(5, 0, 1), 0);
    assert_int_equal(opp_attended_pairs(5, 0, 0), 0);
    assert_int_equal(opp_attended_pairs(16384, 16384, 1), 134225920);
}

/* The closed form equals the pair-by-pair definition for all small shapes. */
static void test_attended_pairs_matches_definition(void **state) {
    (void)state;
    for (int32_t lq = 0; lq <= 40; ++lq) {
        for (int32_t lkv = 0; lkv <= 40; ++lkv) {
            for (int causal = 0; causal < 2; ++causal) {
                if (opp_attended_pairs(lq, lkv, causal) != brute_pairs(lq, lkv, causal)) {
                    fail_msg("lq=%d lkv=%d causal=%d: %lld != %lld", lq, lkv, causal,
                             (long long)opp_attended_pairs(lq, lkv, causal),
                             (long long)brute_pairs(lq, lkv, causal));
                }
            }
        }
    }
}

static int load_text(const char *text, opp_workload_set_t *set, char *err, size_t size) {
    return opp_workloads_parse(text, strlen(text), "t.json", set, err, size);
}

#define W_HEAD "{\"version\": 1, \"workloads\": [\n"
#define W_OK                                                                                   \
    "{\"name\": \"a\", \"dtype\": \"f16\", \"heads\": 4, \"kv_heads\": 2, \"head_size\": 64, " \
    "\"causal\": true, \"lq\": [3, 5], \"lkv\": [5, 2]}"

/* A valid file gives the workload and its FLOPs: 4 * (12 + 3) * 4 * 64. */
static void test_workloads_valid_file_reads_fields(void **state) {
    (void)state;
    opp_workload_set_t set;
    char err[512];
    const char *text =
        W_HEAD W_OK ",\n{\"name\": \"b\", \"note\": \"n\", \"dtype\": \"bf16\", "
                    "\"heads\": 2, \"kv_heads\": 2, \"head_size\": 8, \"causal\": false, "
                    "\"softcap\": 50.0, \"lq\": [2], \"lkv\": [3]}]}";
    if (load_text(text, &set, err, sizeof err) != 0) {
        fail_msg("%s", err);
    }
    assert_int_equal(set.count, 2);
    const opp_workload_t *a = &set.items[0], *b = &set.items[1];
    assert_string_equal(a->name, "a");
    assert_int_equal(a->dtype, OPP_DTYPE_F16);
    assert_int_equal(a->batch, 2);
    assert_int_equal(a->causal, 1);
    assert_true(a->softcap == 0.0f);
    assert_true(opp_workload_flops(a) == 4.0 * 15 * 4 * 64);
    assert_int_equal(b->dtype, OPP_DTYPE_BF16);
    assert_true(b->softcap == 50.0f);
    assert_true(opp_workload_flops(b) == 4.0 * 6 * 2 * 8);
    int64_t tq, tkv;
    opp_workload_tokens(a, &tq, &tkv);
    assert_int_equal(tq, 8);
    assert_int_equal(tkv, 7);
    int sel[2];
    assert_int_equal(opp_workloads_select(&set, NULL, sel, err, sizeof err), 2);
    assert_int_equal(opp_workloads_select(&set, "b", sel, err, sizeof err), 1);
    assert_true(sel[0] == 0 && sel[1] == 1);
    assert_int_equal(opp_workloads_select(&set, "b,a,b", sel, err, sizeof err), 2);
    assert_int_equal(opp_workloads_select(&set, "a,zz", sel, err, sizeof err), -1);
    assert_string_equal(err, "unknown workload 'zz' (known: a b)");
    opp_workloads_free(&set);
    opp_workloads_free(&set); /* idempotent */
}

static void expect_schema_error(const char *text, const char *want) {
    opp_workload_set_t set;
    char err[512];
    if (load_text(text, &set, err, sizeof err) == 0) {
        opp_workloads_free(&set);
        fail_msg("accepted: %s", text);
    }
    if (strstr(err, want) == NULL) {
        fail_msg("error '%s' lacks '%s'", err, want);
    }
    assert_int_equal(set.count, 0);
}

/* Schema mistakes name the file, the workload and the member. */
static void test_workloads_schema_errors_name_member(void **state) {
    (void)state;
    expect_schema_error("[]", "t.json: the top level must be an object, not array");
    expect_schema_error("{\"workloads\": []}", "t.json: the top-level object has no member "
                                               "\"version\"");
    expect_schema_error("{\"version\": 2, \"workloads\": []}",
                        "t.json: the top-level \"version\" must be an integer in 1..1");
    expect_schema_error("{\"version\": 1.0, \"workloads\": []}",
                        "t.json: the top-level \"version\" must be an integer in 1..1");
    expect_schema_error("{\"version\": 1, \"workloads\": []}", "t.json: \"workloads\" is empty");
    expect_schema_error("{\"version\": 1, \"extra\": 0, \"workloads\": [" W_OK "]}",
                        "t.json: unknown member \"extra\" in the top-level object");
    expect_schema_error(W_HEAD "{\"name\": \"a\", \"dtype\": \"f64\"}]}",
                        "t.json: workload \"a\" dtype \"f64\" is not one of");
    expect_schema_error(W_HEAD "{\"name\": \"a\", \"casual\": true}]}",
                        "t.json: unknown member \"casual\" in workload \"a\"");
    expect_schema_error(W_HEAD "{\"name\": \"a\", \"note\": 3}]}",
                        "t.json: unknown member \"note\" in workload \"a\"");
    expect_schema_error(W_HEAD "{\"dtype\": \"f16\"}]}",
                        "t.json: workloads[0] has no member \"name\"");
    expect_schema_error(W_HEAD "{\"name\": \"a\", \"dtype\": \"f16\", \"heads\": 4.5}]}",
                        "t.json: workload \"a\" \"heads\" must be an integer");
    expect_schema_error(W_HEAD "{\"name\": \"a\", \"dtype\": \"f16\", \"heads\": 4e0}]}",
                        "t.json: workload \"a\" \"heads\" must be an integer");
    expect_schema_error(W_HEAD "{\"name\": \"a\", \"dtype\": \"f16\", \"heads\": \"4\"}]}",
                        "t.json: workload \"a\" member \"heads\" must be number, not string");
    expect_schema_error(W_HEAD
                        "{\"name\": \"a\", \"dtype\": \"f16\", \"heads\": 4, \"kv_heads\": 3, "
                        "\"head_size\": 8}]}",
                        "kv_heads (3) does not divide heads (4)");
    expect_schema_error(W_HEAD
                        "{\"name\": \"a\", \"dtype\": \"f16\", \"heads\": 4, \"kv_heads\": 2, "
                        "\"head_size\": 8, \"causal\": 1}]}",
                        "member \"causal\" must be true or false, not number");
    expect_schema_error(W_HEAD
                        "{\"name\": \"a\", \"dtype\": \"f16\", \"heads\": 4, \"kv_heads\": 2, "
                        "\"head_size\": 8, \"causal\": true, \"lq\": [1, -1], \"lkv\": [1]}]}",
                        "t.json: workload \"a\" \"lq[1]\" must be an integer in 0..2147483647");
    expect_schema_error(W_HEAD
                        "{\"name\": \"a\", \"dtype\": \"f16\", \"heads\": 4, \"kv_heads\": 2, "
                        "\"head_size\": 8, \"causal\": true, \"lq\": [1, 2], \"lkv\": [1]}]}",
                        "has 2 lq entries but 1 lkv entries");
    expect_schema_error(W_HEAD
                        "{\"name\": \"a\", \"dtype\": \"f16\", \"heads\": 4, \"kv_heads\": 2, "
                        "\"head_size\": 8, \"causal\": true, \"softcap\": -1, \"lq\": [1], "
                        "\"lkv\": [1]}]}",
                        "softcap must be a number >= 0");
    expect_schema_error(W_HEAD W_OK ",\n" W_OK "]}",
                        "t.json: duplicate workload name \"a\" (workloads[0] and workloads[1])");
    expect_schema_error(W_HEAD "{\"name\": \"a b\"}]}", "t.json: workloads[0] name must be");
    expect_schema_error(W_HEAD "3]}", "t.json: workloads[0] must be an object, not number");
}

/* Jansson reads strictly: each kind of malformed JSON is an error at its
 * LINE:COLUMN ("t.json:2:..."), the file is not half-read. */
static void test_workloads_bad_json_is_a_syntax_error(void **state) {
    (void)state;
    expect_schema_error(W_HEAD W_OK ",]}", "t.json:2:");         /* trailing comma */
    expect_schema_error(W_HEAD "// c\n" W_OK "]}", "t.json:2:"); /* a comment */
    expect_schema_error(W_HEAD "{'name': 'a'}]}", "t.json:2:");  /* single quotes */
    expect_schema_error(W_HEAD "{\"name\": \"a\", \"heads\": 04}]}", "t.json:2:"); /* 0 lead */
    expect_schema_error(W_HEAD "{\"name\": \"a\", \"heads\": NaN}]}", "t.json:2:");
    expect_schema_error(W_HEAD "{\"name\": \"a\\q\"}]}", "t.json:2:"); /* a bad escape */
    expect_schema_error(W_HEAD "{\"name\": \"\xff\"}]}", "t.json:2:"); /* bad UTF-8 */
    expect_schema_error(W_HEAD "{\"name\": \"a\", \"name\": \"b\"}]}",
                        "t.json:2:");                     /* duplicate key */
    expect_schema_error(W_HEAD W_OK "]} x", "t.json:2:"); /* text after the document */
    expect_schema_error(W_HEAD W_OK, "t.json:2:");        /* cut short */
    expect_schema_error("{\"version\": 1, \"workloads\": [{\"name\": \"a\", \"lq\": "
                        "[99999999999999999999]}]}",
                        "t.json:1:"); /* too big for an integer */
    opp_workload_set_t set;
    char err[512];
    assert_int_equal(opp_workloads_load("/proc/no/such/workloads.json", &set, err, sizeof err), -1);
    assert_non_null(strstr(err, "/proc/no/such/workloads.json: "));
    assert_int_equal(set.count, 0);
}

/* The real workload file parses; its pair counts equal torch_anchors.py's
 * attended_pairs() (computed with that function when this test was written). */
static void test_workloads_real_file_matches_anchor_counts(void **state) {
    (void)state;
    static const struct {
        const char *name;
        int32_t batch;
        int64_t total_q, pairs;
    } want[] = {
        {"prefill_gqa_causal_bf16", 16, 29113, 36517986}, {"encoder_mha_f16", 64, 30185, 17995097},
        {"short_many_causal_bf16", 128, 21437, 1896037},  {"decode_gqa_bf16", 64, 64, 275108},
        {"long_causal_bf16", 1, 16384, 134225920},        {"prefill_f32", 8, 7156, 4444132},
        {"softcap_hd256_bf16", 8, 12712, 13266626},
    };
    const char *path = getenv("OPP_WORKLOADS");
    if (path == NULL || path[0] == '\0') {
        skip(); /* the file lives outside the repository: see the file comment */
    }
    opp_workload_set_t set;
    char err[1024];
    if (opp_workloads_load(path, &set, err, sizeof err) != 0) {
        fail_msg("%s", err);
    }
    assert_int_equal(set.count, (int)(sizeof want / sizeof want[0]));
    for (int i = 0; i < set.count; ++i) {
        const opp_workload_t *w = &set.items[i];
        int64_t tq, tkv, pairs = 0;
        opp_workload_tokens(w, &tq, &tkv);
        for (int32_t b = 0; b < w->batch; ++b) {
            pairs += opp_attended_pairs(w->lq[b], w->lkv[b], w->causal);
        }
        assert_string_equal(w->name, want[i].name);
        assert_int_equal(w->batch, want[i].batch);
        assert_int_equal(tq, want[i].total_q);
        assert_int_equal(pairs, want[i].pairs);
        assert_true(opp_workload_flops(w) ==
                    4.0 * (double)pairs * (double)w->heads * (double)w->head_size);
    }
    opp_workloads_free(&set);
}

/* The sweep: 48 cases of FlashAttention's benchmark shapes, named and
 * ordered as bench/fa2_sweep.py lists them (tests/bench_scripts_test.sh
 * compares the two lists). */
static void test_sweep_cases_follow_flash_attention_shapes(void **state) {
    (void)state;
    static const int32_t head_sizes[3] = {64, 128, 256};
    opp_workload_set_t set;
    assert_int_equal(opp_sweep_workloads(&set), 0);
    assert_int_equal(set.count, 48);
    int i = 0;
    for (int d = 0; d < 3; ++d) {
        for (int causal = 0; causal < 2; ++causal) {
            for (int32_t len = 128; len <= 16384; len *= 2, ++i) {
                const opp_workload_t *w = &set.items[i];
                char name[64];
                snprintf(name, sizeof name, "sweep_d%d_%s_L%d", (int)head_sizes[d],
                         causal ? "causal" : "noncausal", (int)len);
                assert_string_equal(w->name, name);
                assert_int_equal(w->dtype, OPP_DTYPE_BF16);
                assert_int_equal(w->head_size, head_sizes[d]);
                assert_int_equal(w->heads * w->head_size, OPP_SWEEP_HIDDEN);
                assert_int_equal(w->kv_heads, w->heads);
                assert_int_equal(w->causal, causal);
                assert_true(w->softcap == 0.0f);
                assert_int_equal(w->batch * len, OPP_SWEEP_TOKENS);
                for (int32_t b = 0; b < w->batch; ++b) {
                    assert_int_equal(w->lq[b], len);
                    assert_int_equal(w->lkv[b], len);
                }
                const double pairs =
                    causal ? (double)len * (len + 1) / 2.0 : (double)len * (double)len;
                assert_true(opp_workload_flops(w) ==
                            4.0 * w->batch * pairs * w->heads * w->head_size);
            }
        }
    }
    int sel[48];
    char err[2048];
    assert_int_equal(opp_workloads_select(&set, "sweep_d64_causal_L128,sweep_d256_noncausal_L16384",
                                          sel, err, sizeof err),
                     2);
    assert_true(sel[8] && sel[47 - 8] && !sel[0]);
    opp_workloads_free(&set);
}

/* The decode sweep: 3 groups x 4 batches x 5 lengths, named and ordered as
 * bench/fa2_sweep.py --decode lists them; the 9 whose K + V exceed 16 GiB
 * are skipped (batch 256 at 64k and 128k keys, batch 64 at 128k), the
 * largest run ones are exactly 16 GiB. */
static void test_decode_sweep_cases_and_skips(void **state) {
    (void)state;
    static const int32_t groups[3] = {1, 4, 8}, batches[4] = {1, 8, 64, 256};
    static const int32_t lengths[5] = {1024, 4096, 16384, 65536, 131072};
    opp_decode_case_t cases[OPP_DECODE_COMBINATIONS];
    opp_decode_sweep_cases(cases);
    opp_workload_set_t set;
    assert_int_equal(opp_decode_sweep_workloads(&set), 0);
    assert_int_equal(set.count, 51);
    int i = 0, run = 0, skipped = 0;
    for (int g = 0; g < 3; ++g) {
        for (int b = 0; b < 4; ++b) {
            for (int l = 0; l < 5; ++l, ++i) {
                const int32_t lkv = lengths[l];
                const opp_decode_case_t *c = &cases[i];
                char name[64];
                snprintf(name, sizeof name, "decode_g%d_b%d_kv%d", (int)groups[g], (int)batches[b],
                         (int)lkv);
                assert_string_equal(c->name, name);
                assert_int_equal(c->group, groups[g]);
                assert_int_equal(c->batch, batches[b]);
                assert_int_equal(c->lkv, lkv);
                /* bytes = batch * L_kv * 8 heads * (128 + 128) * 2 */
                assert_true(c->kv_bytes == (int64_t)batches[b] * lkv * 4096);
                const int want_skip =
                    (batches[b] == 256 && lkv >= 65536) || (batches[b] == 64 && lkv == 131072);
                assert_int_equal(c->skipped, want_skip);
                if (c->skipped) {
                    ++skipped;
                    continue;
                }
                const opp_workload_t *w = &set.items[run++];
                assert_string_equal(w->name, name);
                assert_int_equal(w->dtype, OPP_DTYPE_BF16);
                assert_int_equal(w->head_size, 128);
                assert_int_equal(w->kv_heads, 8);
                assert_int_equal(w->heads, 8 * groups[g]);
                assert_int_equal(w->causal, 0);
                assert_true(w->softcap == 0.0f);
                assert_int_equal(w->batch, batches[b]);
                for (int32_t s = 0; s < w->batch; ++s) {
                    assert_int_equal(w->lq[s], 1);
                    assert_int_equal(w->lkv[s], lkv);
                }
                assert_true(opp_workload_flops(w) == 4.0 * w->batch * lkv * w->heads * 128);
                /* K + V read, Q read, out written: 2 bytes per bf16 element */
                assert_true(opp_workload_min_bytes(w) ==
                            (double)c->kv_bytes + 2.0 * w->batch * w->heads * 128 * 2);
            }
        }
    }
    assert_int_equal(i, OPP_DECODE_COMBINATIONS);
    assert_int_equal(skipped, 9);
    assert_true(cases[OPP_DECODE_COMBINATIONS - 1].skipped);
    assert_true(cases[13].kv_bytes == OPP_DECODE_MAX_KV_BYTES && !cases[13].skipped);
    opp_workloads_free(&set);
}

/* opp_workloads_path: --workloads, else $OPP_WORKLOADS (not empty), else
 * ../shared/bench/workloads.json from the repo root ($BUILD_WORKSPACE_DIRECTORY
 * under bazel run, else the cwd). The environment is restored after. */
static void test_workloads_path_order(void **state) {
    (void)state;
    char *saved_env = getenv("OPP_WORKLOADS"), *saved_root = getenv("BUILD_WORKSPACE_DIRECTORY");
    char env_copy[4096] = "", root_copy[4096] = "", buf[4096];
    snprintf(env_copy, sizeof env_copy, "%s", saved_env != NULL ? saved_env : "");
    snprintf(root_copy, sizeof root_copy, "%s", saved_root != NULL ? saved_root : "");
    setenv("OPP_WORKLOADS", "/env/w.json", 1);
    setenv("BUILD_WORKSPACE_DIRECTORY", "/repo", 1);
    assert_string_equal(opp_workloads_path("/given.json", buf, sizeof buf), "/given.json");
    assert_string_equal(opp_workloads_path(NULL, buf, sizeof buf), "/env/w.json");
    setenv("OPP_WORKLOADS", "", 1);
    assert_string_equal(opp_workloads_path(NULL, buf, sizeof buf),
                        "/repo/../shared/bench/workloads.json");
    unsetenv("BUILD_WORKSPACE_DIRECTORY");
    unsetenv("OPP_WORKLOADS");
    assert_string_equal(opp_workloads_path(NULL, buf, sizeof buf),
                        "../shared/bench/workloads.json");
    if (saved_env != NULL) {
        setenv("OPP_WORKLOADS", env_copy, 1);
    }
    if (saved_root != NULL) {
        setenv("BUILD_WORKSPACE_DIRECTORY", root_copy, 1);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_workloads_path_order),
        cmocka_unit_test(test_attended_pairs_hand_computed),
        cmocka_unit_test(test_attended_pairs_matches_definition),
        cmocka_unit_test(test_workloads_valid_file_reads_fields),
        cmocka_unit_test(test_workloads_schema_errors_name_member),
        cmocka_unit_test(test_workloads_bad_json_is_a_syntax_error),
        cmocka_unit_test(test_workloads_real_file_matches_anchor_counts),
        cmocka_unit_test(test_sweep_cases_follow_flash_attention_shapes),
        cmocka_unit_test(test_decode_sweep_cases_and_skips),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
