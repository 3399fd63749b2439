/*
 * progress_test.c - the progress lines of harness/progress.h on the CPU:
 * every string of tests/progress_cases.txt (the table that also pins
 * tools/opp_progress.py, tests/progress_py_test.py), and the printing
 * functions' lines (counts, weights, the summary) through a memory stream.
 *
 *   bazel test //tests:progress_test
 * The table is argv[1], else $OPP_PROGRESS_CASES, else
 * tests/progress_cases.txt from the current directory (the GPU machine runs
 * the staged binary from the repository root).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/progress.h"
#include "tests/test_util.h"

static const char *g_cases_path = "tests/progress_cases.txt";

/* Splits line at tabs into at most max fields (in place). @return the count. */
static int split_tabs(char *line, char **field, int max) {
    int n = 0;
    line[strcspn(line, "\r\n")] = '\0';
    for (char *p = line; n < max;) {
        field[n++] = p;
        char *tab = strchr(p, '\t');
        if (tab == NULL) {
            break;
        }
        *tab = '\0';
        p = tab + 1;
    }
    return n;
}

/* Every row of the shared table gives exactly its string. */
static void test_progress_matches_shared_table(void **state) {
    (void)state;
    FILE *f = fopen(g_cases_path, "r");
    if (f == NULL) {
        fail_msg("cannot read %s (pass the table as argv[1])", g_cases_path);
    }
    char line[2048], got[1024];
    int rows[3] = {0, 0, 0}, lineno = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        ++lineno;
        if (line[0] == '#' || line[0] == '\n') {
            continue;
        }
        char *fld[10];
        const int n = split_tabs(line, fld, 10);
        const char *want = fld[n - 1];
        if (strcmp(fld[0], "duration") == 0 && n == 3) {
            opp_progress_duration(got, sizeof got, strtod(fld[1], NULL));
            ++rows[0];
        } else if (strcmp(fld[0], "item") == 0 && n == 9) {
            opp_progress_format_item(got, sizeof got, fld[1], atoi(fld[2]), atoi(fld[3]),
                                     strtod(fld[4], NULL), strtod(fld[5], NULL),
                                     strtod(fld[6], NULL), fld[7]);
            ++rows[1];
        } else if (strcmp(fld[0], "done") == 0 && n == 5) {
            opp_progress_format_done(got, sizeof got, fld[1], atoi(fld[2]), strtod(fld[3], NULL));
            ++rows[2];
        } else {
            fclose(f);
            fail_msg("%s:%d: malformed row", g_cases_path, lineno);
        }
        if (strcmp(got, want) != 0) {
            fclose(f);
            fail_msg("%s:%d: got '%s', want '%s'", g_cases_path, lineno, got, want);
        }
    }
    fclose(f);
    assert_true(rows[0] >= 10 && rows[1] >= 5 && rows[2] >= 3); /* the table was read */
}

/* The printed lines: one per item with its count and name, the ETA from the
 * weights given, then the summary; a weightless start counts items. */
static void test_progress_prints_item_lines_and_summary(void **state) {
    (void)state;
    char *buf = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&buf, &size);
    assert_non_null(out);
    opp_progress_t p;
    opp_progress_start(&p, out, "tool", 3, 0.0);
    opp_progress_item(&p, 123.0, "first"); /* the weight is ignored */
    opp_progress_item(&p, 0.0, "second");
    opp_progress_done(&p);
    opp_progress_start(&p, out, "w", 2, 10.0);
    opp_progress_item(&p, 9.0, "heavy");
    fclose(out);
    char *lines[8];
    int n = 0;
    for (char *s = strtok(buf, "\n"); s != NULL && n < 8; s = strtok(NULL, "\n")) {
        lines[n++] = s;
    }
    assert_int_equal(n, 4);
    assert_true(strncmp(lines[0], "tool [1/3]  33.3% elapsed ", 26) == 0);
    assert_non_null(strstr(lines[0], " eta "));
    assert_true(strcmp(lines[0] + strlen(lines[0]) - 7, ": first") == 0);
    assert_true(strncmp(lines[1], "tool [2/3]  66.7% elapsed ", 26) == 0);
    assert_true(strncmp(lines[2], "tool done: 2 items in ", 22) == 0);
    assert_non_null(strstr(lines[2], " ms per item)"));
    assert_true(strncmp(lines[3], "w [1/2]  90.0% elapsed ", 23) == 0);
    free(buf);
}

int main(int argc, char **argv) {
    const char *env = getenv("OPP_PROGRESS_CASES");
    if (argc > 1) {
        g_cases_path = argv[1];
    } else if (env != NULL && env[0] != '\0') {
        g_cases_path = env;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_progress_matches_shared_table),
        cmocka_unit_test(test_progress_prints_item_lines_and_summary),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
