/*
 * json_write.h - the one piece of JSON that oppbench writes by hand is not
 * hand-escaped: strings in its JSON lines (report.c) and in the --dump
 * sidecar meta.json (dump.c) are encoded by Jansson (Debian libjansson-dev,
 * //third_party:jansson). Numbers, true/false/null and the punctuation are
 * printed with fprintf so the line formats of bench/README.md stay fixed.
 *
 * Host code, no CUDA; tested through tests/bench_host_test.c.
 */
#ifndef OPP_BENCH_JSON_WRITE_H
#define OPP_BENCH_JSON_WRITE_H

#include <stdio.h>

/*! bench_json_write_string() :
 * Writes s to f as one JSON string (quotes included): '"' and '\\' escaped,
 * control characters as \b \f \n \r \t or \u00XX, other UTF-8 as it is.
 * A byte sequence that is not valid UTF-8 is written with each byte >= 0x80
 * replaced by '?' (the output is always valid JSON).
 * @return : 0, or -1 when writing (or allocating) failed. */
int bench_json_write_string(FILE *f, const char *s);

#endif /* OPP_BENCH_JSON_WRITE_H */
