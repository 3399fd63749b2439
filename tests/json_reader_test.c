/*
 * json_reader_test.c - the strict JSON reader of bench/json.h: every value
 * kind, escapes and UTF-8, and a clear "LINE:COLUMN: message" for each kind
 * of malformed input (CPU only).
 *
 *   bazel test //tests:json_reader_test
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/json.h"
#include "tests/test_util.h"

static opp_json_t *parse(const char *text) {
    char err[256];
    opp_json_t *v = opp_json_parse(text, strlen(text), err, sizeof err);
    if (v == NULL) {
        fail_msg("unexpected parse error: %s", err);
    }
    return v;
}

/* text must fail with an error that starts with prefix ("LINE:COL: ...")
 * and contains substring. */
static void expect_error(const char *text, size_t len, const char *prefix, const char *substring) {
    char err[256];
    opp_json_t *v = opp_json_parse(text, len, err, sizeof err);
    if (v != NULL) {
        opp_json_free(v);
        fail_msg("parsed although malformed: %s", text);
    }
    if (strncmp(err, prefix, strlen(prefix)) != 0 || strstr(err, substring) == NULL) {
        fail_msg("input %s\n  error   '%s'\n  wanted  '%s' ... '%s'", text, err, prefix, substring);
    }
}

#define EXPECT_ERROR(text, prefix, substring) expect_error((text), strlen(text), prefix, substring)

/* Objects, arrays, numbers, strings and literals build the expected tree
 * with 1-based positions. */
static void test_json_parse_all_kinds_builds_tree(void **state) {
    (void)state;
    opp_json_t *v = parse("{\"a\": [1, -2.5, 3e2, 0, -0],\n \"b\": {\"c\": \"x\"},\n"
                          " \"t\": true, \"f\": false, \"n\": null, \"e\": [], \"o\": {}}");
    assert_int_equal(v->type, OPP_JSON_OBJECT);
    assert_int_equal(v->count, 7);
    const opp_json_t *a = opp_json_get(v, "a");
    assert_non_null(a);
    assert_int_equal(a->type, OPP_JSON_ARRAY);
    assert_int_equal(a->count, 5);
    assert_true(a->items[0].number == 1.0 && a->items[0].is_integer);
    assert_true(a->items[1].number == -2.5 && !a->items[1].is_integer);
    assert_true(a->items[2].number == 300.0 && !a->items[2].is_integer);
    assert_int_equal(a->line, 1);
    assert_int_equal(a->column, 7);
    const opp_json_t *c = opp_json_get(opp_json_get(v, "b"), "c");
    assert_non_null(c);
    assert_string_equal(c->string, "x");
    assert_int_equal(c->line, 2);
    assert_int_equal(c->column, 13);
    assert_int_equal(opp_json_get(v, "t")->type, OPP_JSON_TRUE);
    assert_int_equal(opp_json_get(v, "f")->type, OPP_JSON_FALSE);
    assert_int_equal(opp_json_get(v, "n")->type, OPP_JSON_NULL);
    assert_int_equal(opp_json_get(v, "e")->count, 0);
    assert_int_equal(opp_json_get(v, "o")->type, OPP_JSON_OBJECT);
    assert_null(opp_json_get(v, "missing"));
    assert_null(opp_json_get(a, "a"));
    opp_json_free(v);
}

/* Escapes decode to UTF-8, surrogate pairs included; raw UTF-8 passes. */
static void test_json_string_escapes_decode(void **state) {
    (void)state;
    opp_json_t *v = parse("[\"q\\\"b\\\\s\\/n\\nt\\tu\\u00e9\\ud83d\\ude00\", \"\xc3\xa9\"]");
    assert_string_equal(v->items[0].string, "q\"b\\s/n\nt\tu\xc3\xa9\xf0\x9f\x98\x80");
    assert_int_equal(v->items[0].length, strlen("q\"b\\s/n\nt\tu\xc3\xa9\xf0\x9f\x98\x80"));
    assert_string_equal(v->items[1].string, "\xc3\xa9");
    opp_json_free(v);
}

/* Top-level scalars and surrounding whitespace are accepted. */
static void test_json_scalar_document_parses(void **state) {
    (void)state;
    opp_json_t *v = parse(" \r\n\t42 \n");
    assert_int_equal(v->type, OPP_JSON_NUMBER);
    assert_true(v->number == 42.0);
    assert_int_equal(v->line, 2);
    assert_int_equal(v->column, 2);
    opp_json_free(v);
}

/* Structural mistakes are reported at the offending byte. */
static void test_json_malformed_structure_reports_line_column(void **state) {
    (void)state;
    EXPECT_ERROR("", "1:1:", "expected a value, found end of input");
    EXPECT_ERROR("{\"a\": 1,}", "1:9:", "trailing comma before '}'");
    EXPECT_ERROR("[1, 2,]", "1:7:", "trailing comma before ']'");
    EXPECT_ERROR("{\"a\": 1\n \"b\": 2}", "2:2:", "expected ',' or '}' after an object member");
    EXPECT_ERROR("{\"a\": [1, 2}", "1:12:", "expected ',' or ']' after an array item, found '}'");
    EXPECT_ERROR("{\"a\" 1}", "1:6:", "expected ':' after member name \"a\"");
    EXPECT_ERROR("{a: 1}", "1:2:", "expected a member name in double quotes, found 'a'");
    EXPECT_ERROR("[1, 2", "1:6:", "found end of input");
    EXPECT_ERROR("{\"x\": 1} {}", "1:10:", "unexpected '{' after the top-level value");
    EXPECT_ERROR("[1]\n]", "2:1:", "after the top-level value");
    EXPECT_ERROR("{\"a\": 1, \"a\": 2}", "1:10:", "duplicate member \"a\" (first at 1:2)");
    EXPECT_ERROR("// c\n{}", "1:1:", "expected a value");
    EXPECT_ERROR("['a']", "1:2:", "found '''");
    EXPECT_ERROR("\xEF\xBB\xBF{}", "1:1:", "byte order mark");
}

/* Literals and numbers outside JSON's grammar are refused. */
static void test_json_malformed_scalars_report_line_column(void **state) {
    (void)state;
    EXPECT_ERROR("[tru]", "1:2:", "invalid literal (expected 'true')");
    EXPECT_ERROR("[nul]", "1:2:", "expected 'null'");
    EXPECT_ERROR("[True]", "1:2:", "expected a value");
    EXPECT_ERROR("[NaN]", "1:2:", "expected a value");
    EXPECT_ERROR("[Infinity]", "1:2:", "expected a value");
    EXPECT_ERROR("[01]", "1:2:", "leading zero");
    EXPECT_ERROR("[+1]", "1:2:", "expected a value");
    EXPECT_ERROR("[-]", "1:3:", "expected a digit in a number, found ']'");
    EXPECT_ERROR("[1.]", "1:4:", "expected a digit after the decimal point");
    EXPECT_ERROR("[.5]", "1:2:", "expected a value");
    EXPECT_ERROR("[1e]", "1:4:", "expected a digit in the exponent");
    EXPECT_ERROR("[1e400]", "1:2:", "out of the range of a double");
    EXPECT_ERROR("[0x10]", "1:3:", "expected ',' or ']'");
}

/* Bad strings: control characters, escapes, surrogates, UTF-8, NUL. */
static void test_json_malformed_strings_report_line_column(void **state) {
    (void)state;
    EXPECT_ERROR("[\"abc", "1:2:", "unterminated string");
    EXPECT_ERROR("[\"a\nb\"]", "1:4:", "control character 0x0a inside a string");
    EXPECT_ERROR("[\"a\tb\"]", "1:4:", "control character 0x09");
    EXPECT_ERROR("[\"\\x\"]", "1:4:", "invalid escape");
    EXPECT_ERROR("[\"\\u12g4\"]", "1:7:", "expected a hex digit in \\u escape, found 'g'");
    EXPECT_ERROR("[\"\\ud800\"]", "1:9:", "high surrogate");
    EXPECT_ERROR("[\"\\udc00\"]", "1:9:", "lone low surrogate");
    EXPECT_ERROR("[\"\\ud800\\u0041\"]", "1:15:", "is not a low surrogate");
    EXPECT_ERROR("[\"\\u0000\"]", "1:9:", "NUL");
    EXPECT_ERROR("[\"\xff\"]", "1:3:", "invalid UTF-8 byte 0xff");
    EXPECT_ERROR("[\"\xc0\xaf\"]", "1:3:", "invalid UTF-8");         /* overlong '/' */
    EXPECT_ERROR("[\"\xed\xa0\x80\"]", "1:3:", "invalid UTF-8");     /* encoded surrogate */
    EXPECT_ERROR("[\"\xe2\x82\"]", "1:3:", "invalid UTF-8");         /* truncated */
    expect_error("[\"a\0b\"]", 7, "1:4:", "control character 0x00"); /* raw NUL byte */
}

/* Nesting deeper than OPP_JSON_MAX_DEPTH is an error, not a stack overflow. */
static void test_json_deep_nesting_is_refused(void **state) {
    (void)state;
    char ok[2 * OPP_JSON_MAX_DEPTH + 3], deep[4096];
    memset(ok, '[', OPP_JSON_MAX_DEPTH + 1);
    memset(ok + OPP_JSON_MAX_DEPTH + 1, ']', OPP_JSON_MAX_DEPTH + 1);
    ok[2 * OPP_JSON_MAX_DEPTH + 2] = '\0';
    opp_json_t *v = parse(ok);
    opp_json_free(v);
    memset(deep, '[', 2000);
    deep[2000] = '\0';
    EXPECT_ERROR(deep, "1:", "nested deeper than");
}

/* Parsing a file prefixes the path; a missing file says so. */
static void test_json_parse_file_prefixes_path(void **state) {
    (void)state;
    const char *tmp = getenv("TEST_TMPDIR");
    char path[1024], err[512];
    snprintf(path, sizeof path, "%s/json_reader_test.json", tmp != NULL ? tmp : "/tmp");
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("{\n  \"workloads\": [\n    {\"name\": \"x\",}\n  ]\n}\n", f);
    fclose(f);
    assert_null(opp_json_parse_file(path, err, sizeof err));
    char want[1100];
    snprintf(want, sizeof want, "%s:3:18: trailing comma before '}'", path);
    assert_string_equal(err, want);
    remove(path);
    assert_null(opp_json_parse_file(path, err, sizeof err));
    assert_non_null(strstr(err, "cannot open"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_parse_all_kinds_builds_tree),
        cmocka_unit_test(test_json_string_escapes_decode),
        cmocka_unit_test(test_json_scalar_document_parses),
        cmocka_unit_test(test_json_malformed_structure_reports_line_column),
        cmocka_unit_test(test_json_malformed_scalars_report_line_column),
        cmocka_unit_test(test_json_malformed_strings_report_line_column),
        cmocka_unit_test(test_json_deep_nesting_is_refused),
        cmocka_unit_test(test_json_parse_file_prefixes_path),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
