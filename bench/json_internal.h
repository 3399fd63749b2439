/*
 * json_internal.h - the parser state and helpers shared by bench/json.c
 * (values, numbers, containers) and bench/json_string.c (strings, escapes,
 * UTF-8). Not part of json.h's interface.
 */
#ifndef OPP_BENCH_JSON_INTERNAL_H
#define OPP_BENCH_JSON_INTERNAL_H

#include <stddef.h>

typedef struct parser {
    const unsigned char *s;
    size_t n, pos;
    size_t line_start; /* offset of the current line's first byte */
    int line;
    int failed;
    char *err;
    size_t err_size;
} parser_t;

/* 1-based column of byte offset pos on the current line. */
int opp_json__column(const parser_t *p, size_t pos);

/* Records the first error as "LINE:COLUMN: message". Returns -1. */
int opp_json__fail(parser_t *p, int line, int column, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* An error at the current position. */
#define FAIL(p, ...) opp_json__fail((p), (p)->line, opp_json__column((p), (p)->pos), __VA_ARGS__)

/* A printable description of the byte at the current position. */
const char *opp_json__found(const parser_t *p, char *buf, size_t size);

/* realloc to twice *cap elements (4 at first); NULL (ptr kept) on failure. */
void *opp_json__grow(void *ptr, size_t *cap, size_t elem);

/* Parses the string at the current position (a '"') into a new
 * NUL-terminated UTF-8 buffer. Returns 0, or -1 after FAIL. */
int opp_json__parse_string(parser_t *p, char **out, size_t *out_len);

#endif /* OPP_BENCH_JSON_INTERNAL_H */
