/*
 * json.h - a small strict JSON reader (RFC 8259) for the benchmark's
 * workload files (../shared/bench/workloads.json and files like it).
 *
 * It reads a whole document into a tree of opp_json_t values: objects,
 * arrays, strings, numbers, true, false and null. Strict means: no comments,
 * no trailing commas, no single quotes, no leading zeros or '+', no NaN or
 * Infinity, no control characters inside strings, only the JSON escapes,
 * valid UTF-8 only, no duplicate keys in one object, nothing after the
 * top-level value, at most OPP_JSON_MAX_DEPTH nested containers. Anything
 * else is an error reported as "LINE:COLUMN: what was expected, what was
 * found" (1-based; the column counts bytes), e.g.
 *   3:17: expected ',' or '}' after an object member, found ']'
 * Every value remembers where it started, so a schema check on top of the
 * tree can report its own errors at the right place (bench/workloads.c).
 *
 * Used by bench/oppbench and tests/json_reader_test.c; host code, no CUDA.
 */
#ifndef OPP_BENCH_JSON_H
#define OPP_BENCH_JSON_H

#include <stddef.h>
#include <stdio.h>

#define OPP_JSON_MAX_DEPTH 64

typedef enum opp_json_type {
    OPP_JSON_NULL = 0,
    OPP_JSON_FALSE,
    OPP_JSON_TRUE,
    OPP_JSON_NUMBER,
    OPP_JSON_STRING,
    OPP_JSON_ARRAY,
    OPP_JSON_OBJECT
} opp_json_type_t;

typedef struct opp_json opp_json_t;

struct opp_json {
    opp_json_type_t type;
    int line, column;  /* where the value starts, 1-based (column in bytes) */
    double number;     /* NUMBER: the value (strtod of the literal) */
    int is_integer;    /* NUMBER: the literal had no fraction and no exponent */
    char *string;      /* STRING: NUL-terminated UTF-8 (no embedded NUL) */
    size_t length;     /* STRING: bytes without the NUL */
    size_t count;      /* ARRAY: items; OBJECT: members */
    opp_json_t *items; /* ARRAY / OBJECT: [count] values in document order */
    char **keys;       /* OBJECT: [count] member names, parallel to items */
    int *key_lines;    /* OBJECT: [count] where each member name starts */
    int *key_columns;
};

/*! opp_json_parse() :
 * Parses text[0 .. length) as one JSON document.
 * @return : the root value (free with opp_json_free), or NULL with
 *           "LINE:COLUMN: message" in err (err_size bytes, may be 0). */
opp_json_t *opp_json_parse(const char *text, size_t length, char *err, size_t err_size);

/*! opp_json_parse_file() :
 * Reads and parses the file at path.
 * @return : the root value, or NULL with "PATH:LINE:COLUMN: message" (or
 *           "PATH: <why it could not be read>") in err. */
opp_json_t *opp_json_parse_file(const char *path, char *err, size_t err_size);

/*! opp_json_free() : frees a tree returned by a parse function (NULL is fine). */
void opp_json_free(opp_json_t *root);

/*! opp_json_get() :
 * @return : the member called key of an OBJECT value, or NULL when value is
 *           not an object or has no such member. */
const opp_json_t *opp_json_get(const opp_json_t *value, const char *key);

/*! opp_json_type_name() :
 * @return : "null", "false", "true", "number", "string", "array", "object"
 *           ("a boolean" is spelled by the caller). Never NULL. */
const char *opp_json_type_name(opp_json_type_t type);

/*! opp_json_write_string() :
 * Writes s to f as a JSON string: quotes, \" and \\ escaped, control
 * characters as \u00XX, other bytes as they are (the writer's half, for
 * oppbench's JSON lines and dump sidecars). */
void opp_json_write_string(FILE *f, const char *s);

#endif /* OPP_BENCH_JSON_H */
