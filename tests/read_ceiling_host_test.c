/*
 * read_ceiling_host_test.c - bench/read_ceiling's host side
 * (bench/read_ceiling.h), on the CPU: the shape's keys and split items on
 * hand-counted lengths; rc_word against values computed by a separate
 * Python implementation of its formula; the properties that make the word
 * sum a check of a read pattern (no all-zero 16-byte chunk, so a dropped
 * chunk changes the sum; K's and V's sums differ, so reading one tensor
 * twice does); the --case grammar; the cases' names and the errors that
 * name the bad field.
 *
 *   bazel test //tests:read_ceiling_host_test
 */
#include <stdio.h>
#include <string.h>

#include "bench/read_ceiling.h"
#include "tests/test_util.h"

/* {1, 1024, 1025, 0} keys, 2 kv heads: 2050 keys; the longest needs 2
 * splits of 1024, so 2 x 4 sequences x 2 heads = 16 items. */
static void test_counts_hand_computed(void **state) {
    (void)state;
    const int32_t lkv[4] = {1, 1024, 1025, 0};
    rc_shape_t s = {4, 2, 128, lkv};
    assert_int_equal(rc_total_keys(&s), 2050);
    assert_int_equal(rc_items(&s, 1024), 16);
    assert_int_equal(rc_items(&s, 512), 3 * 4 * 2);
    const int32_t none[2] = {0, 0};
    rc_shape_t e = {2, 8, 64, none};
    assert_int_equal(rc_total_keys(&e), 0);
    assert_int_equal(rc_items(&e, 1024), 0);
    const int32_t neg[2] = {5, -1};
    rc_shape_t n = {2, 8, 64, neg};
    assert_int_equal(rc_total_keys(&n), -1);
}

/* Values from a Python transcription of the formula in read_ceiling.h
 * (i ^ hi(i) 0x9E3779B9 ^ (t + 1) 0x85EBCA6B, then the two rounds),
 * run when this test was written. */
static void test_word_matches_python(void **state) {
    (void)state;
    assert_int_equal(rc_word(0, 0), 0x1efee872u);
    assert_int_equal(rc_word(1, 0), 0xc92aa318u);
    assert_int_equal(rc_word(12345, 0), 0xa3fd5acfu);
    assert_int_equal(rc_word(0, 1), 0x335c3961u);
    assert_int_equal(rc_word(((uint64_t)1 << 32) + 5, 0), 0xe5d21600u);
    assert_true(rc_expected_sum(100000, 0) == 214296212580558ull);
    assert_true(rc_expected_sum(100000, 1) == 215014119474678ull);
}

/* Every 16-byte chunk of the first 2^20 (16 MiB of each tensor) holds a
 * nonzero word: a pattern that skips a chunk reads a smaller sum. */
static void test_no_zero_chunk(void **state) {
    (void)state;
    for (uint32_t t = 0; t < 2; ++t) {
        int zero = 0;
        for (uint64_t c = 0; c < ((uint64_t)1 << 20); ++c) {
            const uint32_t a = rc_word(4 * c, t), b = rc_word(4 * c + 1, t),
                           d = rc_word(4 * c + 2, t), e = rc_word(4 * c + 3, t);
            zero += (a | b | d | e) == 0;
        }
        assert_int_equal(zero, 0);
    }
}

/* K's and V's sums differ (reading K twice is caught), and the sum grows
 * with every word (a missing tail is caught). */
static void test_sums_tell_tensors_apart(void **state) {
    (void)state;
    const uint64_t n = (uint64_t)1 << 20;
    assert_true(rc_expected_sum(n, 0) != rc_expected_sum(n, 1));
    assert_true(rc_expected_sum(n, 0) != rc_expected_sum(n - 4, 0));
    assert_true(rc_expected_sum(0, 0) == 0);
}

static void test_case_names(void **state) {
    (void)state;
    char buf[64];
    const rc_case_t flat = {RC_FLAT, 0, 0, 0, 0}, cp = {RC_CPASYNC, 64, 2, 0, 0},
                    tma = {RC_TMA, 32, 4, 1, 0}, one = {RC_TMA, 64, 3, 0, 1},
                    two = {RC_TMA, 32, 3, 1, 2};
    rc_case_name(&flat, buf, sizeof buf);
    assert_string_equal(buf, "flat");
    rc_case_name(&cp, buf, sizeof buf);
    assert_string_equal(buf, "cpasync r64 s2");
    rc_case_name(&tma, buf, sizeof buf);
    assert_string_equal(buf, "tma r32 s4 persistent");
    rc_case_name(&one, buf, sizeof buf); /* heads 1: the plain name */
    assert_string_equal(buf, "tma r64 s3");
    rc_case_name(&two, buf, sizeof buf);
    assert_string_equal(buf, "tma r32 s3 persistent h2");
    assert_int_equal(rc_case_heads(&two), 2);
    assert_int_equal(rc_case_heads(&one), 1);
    assert_int_equal(rc_case_heads(&tma), 1);        /* heads 0: one */
    const rc_case_t cp2 = {RC_CPASYNC, 64, 2, 0, 2}; /* (rc_case_check rejects it) */
    assert_int_equal(rc_case_heads(&cp2), 1);
}

/* The --case grammar: each good spec into the fields written by hand
 * here; every bad one (unknown kind, a missing, signed, spaced or
 * over-long number, trailing characters, heads outside 2 .. 8) -1 with the
 * case zeroed. */
static void test_case_parse(void **state) {
    (void)state;
    const struct {
        const char *spec;
        rc_case_t want;
    } good[] = {
        {"flat", {RC_FLAT, 0, 0, 0, 0}},
        {"cpasync:64:2", {RC_CPASYNC, 64, 2, 0, 0}},
        {"tma:64:4:persistent", {RC_TMA, 64, 4, 1, 0}},
        {"tma:32:3:persistent:h2", {RC_TMA, 32, 3, 1, 2}},
        {"tma:128:8:h8", {RC_TMA, 128, 8, 0, 8}},
        {"cpasync:0:0", {RC_CPASYNC, 0, 0, 0, 0}}, /* (rc_case_check's to reject) */
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; ++i) {
        rc_case_t c;
        memset(&c, 0x5A, sizeof c);
        if (rc_case_parse(good[i].spec, &c) != 0 || memcmp(&c, &good[i].want, sizeof c) != 0) {
            fail_msg("'%s': parsed as %d %d %d %d %d", good[i].spec, (int)c.pattern, c.rows,
                     c.stages, c.persistent, c.heads);
        }
    }
    const char *bad[] = {"",
                         "fla",
                         "flat:1",
                         "tma",
                         "tma:",
                         "tma:64",
                         "tma:64:",
                         "tma:64:3x",
                         "tma:64:3:",
                         "tma::3",
                         "tma:-64:3",
                         "tma:+64:3",
                         "tma: 64:3",
                         "tma:1234567:3",
                         "tma:64:3:persist",
                         "tma:64:3:persistentx",
                         "tma:64:3:h1",
                         "tma:64:3:h9",
                         "tma:64:3:h",
                         "tma:64:3:h2:persistent",
                         "tma:64:3:persistent:h2x",
                         "dma:64:3",
                         "TMA:64:3",
                         NULL};
    for (int i = 0; bad[i] != NULL; ++i) {
        rc_case_t c, zero;
        memset(&c, 0x5A, sizeof c);
        memset(&zero, 0, sizeof zero);
        if (rc_case_parse(bad[i], &c) != -1 || memcmp(&c, &zero, sizeof c) != 0) {
            fail_msg("'%s' was not rejected with the case zeroed", bad[i]);
        }
    }
    rc_case_t c;
    assert_int_equal(rc_case_parse(NULL, &c), -1);
}

/* check CASE, WANT: rc_case_check fails and its message contains WANT. */
static void expect_bad(rc_case_t c, const char *want) {
    char err[128] = "";
    assert_int_equal(rc_case_check(&c, err, sizeof err), -1);
    if (strstr(err, want) == NULL) {
        fail_msg("message '%s' lacks '%s'", err, want);
    }
}

static void test_case_check_names_field(void **state) {
    (void)state;
    char err[128];
    const rc_case_t ok[5] = {{RC_FLAT, 0, 0, 0, 0},
                             {RC_CPASYNC, 128, 2, 0, 1},
                             {RC_TMA, 32, 8, 1, 0},
                             {RC_TMA, 32, 3, 1, 2},
                             {RC_TMA, 64, 2, 0, 8}};
    for (int i = 0; i < 5; ++i) {
        assert_int_equal(rc_case_check(&ok[i], err, sizeof err), 0);
    }
    expect_bad((rc_case_t){RC_TMA, 48, 2, 0, 0}, "rows 48");
    expect_bad((rc_case_t){RC_CPASYNC, 64, 1, 0, 0}, "stages 1");
    expect_bad((rc_case_t){RC_TMA, 64, 9, 0, 0}, "stages 9");
    expect_bad((rc_case_t){RC_CPASYNC, 64, 2, 1, 0}, "persistent");
    expect_bad((rc_case_t){(rc_pattern_t)7, 64, 2, 0, 0}, "pattern 7");
    expect_bad((rc_case_t){RC_TMA, 64, 2, 0, 3}, "heads 3");
    expect_bad((rc_case_t){RC_TMA, 64, 2, 1, -1}, "heads -1");
    expect_bad((rc_case_t){RC_TMA, 64, 2, 1, 16}, "heads 16");
    expect_bad((rc_case_t){RC_CPASYNC, 64, 2, 0, 2}, "heads 2");
}

/* rc_case_fits: a case's heads an item must divide the shape's kv heads
 * (decode_gqa_bf16's 8: h2, h4, h8 fit; 6 kv heads: h4 and h8 do not, and
 * the message names the heads and the count); a bad case fails as
 * rc_case_check does. */
static void test_case_fits_shape(void **state) {
    (void)state;
    const int32_t lkv[1] = {1024};
    const rc_shape_t s8 = {1, 8, 128, lkv}, s6 = {1, 6, 128, lkv};
    char err[128] = "";
    for (int32_t h = 2; h <= 8; h *= 2) {
        const rc_case_t c = {RC_TMA, 64, 3, 1, h};
        assert_int_equal(rc_case_fits(&c, &s8, err, sizeof err), 0);
    }
    const rc_case_t h2 = {RC_TMA, 64, 3, 1, 2}, h4 = {RC_TMA, 64, 3, 1, 4},
                    flat = {RC_FLAT, 0, 0, 0, 0}, cp = {RC_CPASYNC, 64, 2, 0, 0};
    assert_int_equal(rc_case_fits(&h2, &s6, err, sizeof err), 0);
    assert_int_equal(rc_case_fits(&flat, &s6, err, sizeof err), 0);
    assert_int_equal(rc_case_fits(&cp, &s6, err, sizeof err), 0);
    err[0] = '\0';
    assert_int_equal(rc_case_fits(&h4, &s6, err, sizeof err), -1);
    assert_non_null(strstr(err, "heads 4"));
    assert_non_null(strstr(err, "6 kv heads"));
    const rc_case_t bad = {RC_TMA, 48, 3, 0, 0};
    err[0] = '\0';
    assert_int_equal(rc_case_fits(&bad, &s8, err, sizeof err), -1);
    char want[128] = "";
    assert_int_equal(rc_case_check(&bad, want, sizeof want), -1);
    assert_string_equal(err, want);
}

static void test_split_keys_check_names_value(void **state) {
    (void)state;
    char err[128] = "";
    assert_int_equal(rc_split_keys_check(128, err, sizeof err), 0);
    assert_int_equal(rc_split_keys_check(1024, err, sizeof err), 0);
    const int32_t bad[3] = {0, 64, 1000};
    for (int i = 0; i < 3; ++i) {
        char want[32];
        snprintf(want, sizeof want, "split keys %d:", (int)bad[i]);
        err[0] = '\0';
        assert_int_equal(rc_split_keys_check(bad[i], err, sizeof err), -1);
        if (strstr(err, want) == NULL || strstr(err, "multiple of 128") == NULL) {
            fail_msg("message '%s' lacks '%s' or the rule", err, want);
        }
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counts_hand_computed),
        cmocka_unit_test(test_word_matches_python),
        cmocka_unit_test(test_no_zero_chunk),
        cmocka_unit_test(test_sums_tell_tensors_apart),
        cmocka_unit_test(test_case_names),
        cmocka_unit_test(test_case_parse),
        cmocka_unit_test(test_case_check_names_field),
        cmocka_unit_test(test_case_fits_shape),
        cmocka_unit_test(test_split_keys_check_names_value),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
