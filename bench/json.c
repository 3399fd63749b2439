/*
 * json.c - the strict JSON reader of json.h: a recursive-descent parser over
 * a byte buffer that builds an opp_json_t tree and reports the first error
 * as "LINE:COLUMN: message". Strings are parsed in json_string.c.
 *
 * Grammar (RFC 8259):
 *   value  = object | array | string | number | true | false | null
 *   object = '{' [ string ':' value *( ',' string ':' value ) ] '}'
 *   array  = '[' [ value *( ',' value ) ] ']'
 *   number = [ '-' ] ( '0' | [1-9][0-9]* ) [ '.' [0-9]+ ] [ ( 'e' | 'E' ) [ '+' | '-' ] [0-9]+ ]
 *   whitespace = space, tab, line feed, carriage return
 * Tested by tests/json_reader_test.c (bazel test //tests:json_reader_test).
 */
#include "bench/json.h"
#include "bench/json_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int opp_json__column(const parser_t *p, size_t pos) {
    return (int)(pos - p->line_start) + 1;
}

/* Records the first error (see json_internal.h). Returns -1. */
int opp_json__fail(parser_t *p, int line, int column, const char *fmt, ...) {
    if (p->failed) {
        return -1;
    }
    p->failed = 1;
    if (p->err != NULL && p->err_size > 0) {
        int k = snprintf(p->err, p->err_size, "%d:%d: ", line, column);
        if (k >= 0 && (size_t)k < p->err_size) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(p->err + k, p->err_size - (size_t)k, fmt, ap);
            va_end(ap);
        }
    }
    return -1;
}

/* A printable description of the byte at pos ("end of input" past the end). */
const char *opp_json__found(const parser_t *p, char *buf, size_t size) {
    if (p->pos >= p->n) {
        return "end of input";
    }
    const unsigned char c = p->s[p->pos];
    if (c == '\n') {
        snprintf(buf, size, "a line feed");
    } else if (c >= 0x20 && c < 0x7f) {
        snprintf(buf, size, "'%c'", c);
    } else {
        snprintf(buf, size, "byte 0x%02x", (unsigned)c);
    }
    return buf;
}

static void skip_ws(parser_t *p) {
    while (p->pos < p->n) {
        const unsigned char c = p->s[p->pos];
        if (c == '\n') {
            p->line++;
            p->line_start = p->pos + 1;
        } else if (c != ' ' && c != '\t' && c != '\r') {
            return;
        }
        p->pos++;
    }
}

void *opp_json__grow(void *ptr, size_t *cap, size_t elem) {
    const size_t n = *cap ? *cap * 2 : 4;
    void *q = realloc(ptr, n * elem);
    if (q != NULL) {
        *cap = n;
    }
    return q;
}

static void free_value(opp_json_t *v) {
    for (size_t i = 0; i < v->count; ++i) {
        free_value(&v->items[i]);
        if (v->keys != NULL) {
            free(v->keys[i]);
        }
    }
    free(v->items);
    free(v->keys);
    free(v->key_lines);
    free(v->key_columns);
    free(v->string);
    memset(v, 0, sizeof(*v));
}

// --- numbers and literals

static int is_digit(const parser_t *p, size_t pos) {
    return pos < p->n && p->s[pos] >= '0' && p->s[pos] <= '9';
}

static int parse_number(parser_t *p, opp_json_t *v) {
    const size_t start = p->pos;
    size_t i = p->pos;
    char b[16];
    if (i < p->n && p->s[i] == '-') {
        i++;
    }
    if (!is_digit(p, i)) {
        p->pos = i;
        return FAIL(p, "expected a digit in a number, found %s", opp_json__found(p, b, sizeof b));
    }
    if (p->s[i] == '0' && is_digit(p, i + 1)) {
        p->pos = i;
        return FAIL(p, "leading zero in a number");
    }
    while (is_digit(p, i)) {
        i++;
    }
    v->is_integer = 1;
    if (i < p->n && p->s[i] == '.') {
        v->is_integer = 0;
        if (!is_digit(p, ++i)) {
            p->pos = i;
            return FAIL(p, "expected a digit after the decimal point, found %s",
                        opp_json__found(p, b, sizeof b));
        }
        while (is_digit(p, i)) {
            i++;
        }
    }
    if (i < p->n && (p->s[i] == 'e' || p->s[i] == 'E')) {
        v->is_integer = 0;
        i++;
        if (i < p->n && (p->s[i] == '+' || p->s[i] == '-')) {
            i++;
        }
        if (!is_digit(p, i)) {
            p->pos = i;
            return FAIL(p, "expected a digit in the exponent, found %s",
                        opp_json__found(p, b, sizeof b));
        }
        while (is_digit(p, i)) {
            i++;
        }
    }
    char tmp[128];
    const size_t len = i - start;
    if (len >= sizeof tmp) {
        return FAIL(p, "number literal longer than %zu characters", sizeof tmp - 1);
    }
    memcpy(tmp, p->s + start, len);
    tmp[len] = '\0';
    errno = 0;
    v->number = strtod(tmp, NULL);
    if (errno == ERANGE && (v->number > 1.0 || v->number < -1.0)) {
        return FAIL(p, "number %s is out of the range of a double", tmp);
    }
    p->pos = i;
    return 0;
}

static int parse_literal(parser_t *p, opp_json_t *v) {
    static const struct {
        const char *word;
        opp_json_type_t type;
    } words[3] = {{"true", OPP_JSON_TRUE}, {"false", OPP_JSON_FALSE}, {"null", OPP_JSON_NULL}};
    for (int w = 0; w < 3; ++w) {
        const size_t k = strlen(words[w].word);
        if (p->s[p->pos] == (unsigned char)words[w].word[0]) {
            if (p->n - p->pos < k || memcmp(p->s + p->pos, words[w].word, k) != 0) {
                return FAIL(p, "invalid literal (expected '%s')", words[w].word);
            }
            p->pos += k;
            v->type = words[w].type;
            return 0;
        }
    }
    char b[16];
    return FAIL(p, "expected a value (object, array, string, number, true, false, null), found %s",
                opp_json__found(p, b, sizeof b));
}

// --- containers

static int parse_value(parser_t *p, opp_json_t *v, int depth);

static int parse_array(parser_t *p, opp_json_t *v, int depth) {
    size_t cap = 0;
    char b[16];
    p->pos++; /* '[' */
    skip_ws(p);
    if (p->pos < p->n && p->s[p->pos] == ']') {
        p->pos++;
        return 0;
    }
    for (;;) {
        if (v->count == cap) {
            opp_json_t *ni = opp_json__grow(v->items, &cap, sizeof(opp_json_t));
            if (ni == NULL) {
                return FAIL(p, "out of memory");
            }
            v->items = ni;
        }
        memset(&v->items[v->count], 0, sizeof(opp_json_t));
        v->count++;
        if (parse_value(p, &v->items[v->count - 1], depth + 1) != 0) {
            return -1;
        }
        skip_ws(p);
        if (p->pos < p->n && p->s[p->pos] == ',') {
            p->pos++;
            skip_ws(p);
            if (p->pos < p->n && p->s[p->pos] == ']') {
                return FAIL(p, "trailing comma before ']'");
            }
            continue;
        }
        if (p->pos < p->n && p->s[p->pos] == ']') {
            p->pos++;
            return 0;
        }
        return FAIL(p, "expected ',' or ']' after an array item, found %s",
                    opp_json__found(p, b, sizeof b));
    }
}

static int parse_object(parser_t *p, opp_json_t *v, int depth) {
    size_t cap = 0;
    char b[16];
    p->pos++; /* '{' */
    skip_ws(p);
    if (p->pos < p->n && p->s[p->pos] == '}') {
        p->pos++;
        return 0;
    }
    for (;;) {
        if (p->pos >= p->n || p->s[p->pos] != '"') {
            return FAIL(p, "expected a member name in double quotes, found %s",
                        opp_json__found(p, b, sizeof b));
        }
        if (v->count == cap) {
            size_t c1 = cap, c2 = cap, c3 = cap, c4 = cap;
            opp_json_t *ni = opp_json__grow(v->items, &c1, sizeof(opp_json_t));
            v->items = ni != NULL ? ni : v->items;
            char **nk = opp_json__grow(v->keys, &c2, sizeof(char *));
            v->keys = nk != NULL ? nk : v->keys;
            int *nl = opp_json__grow(v->key_lines, &c3, sizeof(int));
            v->key_lines = nl != NULL ? nl : v->key_lines;
            int *nc = opp_json__grow(v->key_columns, &c4, sizeof(int));
            v->key_columns = nc != NULL ? nc : v->key_columns;
            if (ni == NULL || nk == NULL || nl == NULL || nc == NULL) {
                return FAIL(p, "out of memory");
            }
            cap = c1;
        }
        const size_t i = v->count;
        memset(&v->items[i], 0, sizeof(opp_json_t));
        v->keys[i] = NULL;
        v->key_lines[i] = p->line;
        v->key_columns[i] = opp_json__column(p, p->pos);
        v->count++;
        size_t klen;
        if (opp_json__parse_string(p, &v->keys[i], &klen) != 0) {
            return -1;
        }
        for (size_t j = 0; j < i; ++j) {
            if (strcmp(v->keys[j], v->keys[i]) == 0) {
                return opp_json__fail(p, v->key_lines[i], v->key_columns[i],
                                      "duplicate member \"%s\" (first at %d:%d)", v->keys[i],
                                      v->key_lines[j], v->key_columns[j]);
            }
        }
        skip_ws(p);
        if (p->pos >= p->n || p->s[p->pos] != ':') {
            return FAIL(p, "expected ':' after member name \"%s\", found %s", v->keys[i],
                        opp_json__found(p, b, sizeof b));
        }
        p->pos++;
        if (parse_value(p, &v->items[i], depth + 1) != 0) {
            return -1;
        }
        skip_ws(p);
        if (p->pos < p->n && p->s[p->pos] == ',') {
            p->pos++;
            skip_ws(p);
            if (p->pos < p->n && p->s[p->pos] == '}') {
                return FAIL(p, "trailing comma before '}'");
            }
            continue;
        }
        if (p->pos < p->n && p->s[p->pos] == '}') {
            p->pos++;
            return 0;
        }
        return FAIL(p, "expected ',' or '}' after an object member, found %s",
                    opp_json__found(p, b, sizeof b));
    }
}

static int parse_value(parser_t *p, opp_json_t *v, int depth) {
    skip_ws(p);
    v->line = p->line;
    v->column = opp_json__column(p, p->pos);
    if (p->pos >= p->n) {
        return FAIL(p, "expected a value, found end of input");
    }
    if (depth > OPP_JSON_MAX_DEPTH) {
        return FAIL(p, "containers nested deeper than %d levels", OPP_JSON_MAX_DEPTH);
    }
    const unsigned char c = p->s[p->pos];
    if (c == '{') {
        v->type = OPP_JSON_OBJECT;
        return parse_object(p, v, depth);
    }
    if (c == '[') {
        v->type = OPP_JSON_ARRAY;
        return parse_array(p, v, depth);
    }
    if (c == '"') {
        v->type = OPP_JSON_STRING;
        return opp_json__parse_string(p, &v->string, &v->length);
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
        v->type = OPP_JSON_NUMBER;
        return parse_number(p, v);
    }
    return parse_literal(p, v);
}

// --- public entry

opp_json_t *opp_json_parse(const char *text, size_t length, char *err, size_t err_size) {
    parser_t p = {(const unsigned char *)text, length, 0, 0, 1, 0, err, err_size};
    if (err != NULL && err_size > 0) {
        err[0] = '\0';
    }
    opp_json_t *root = calloc(1, sizeof(opp_json_t));
    if (root == NULL) {
        opp_json__fail(&p, 1, 1, "out of memory");
        return NULL;
    }
    if (text == NULL) {
        length = 0;
        p.n = 0;
    }
    if (length >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) {
        opp_json__fail(&p, 1, 1, "byte order mark at the start (JSON text must not have one)");
    } else if (parse_value(&p, root, 0) == 0) {
        skip_ws(&p);
        if (p.pos < p.n) {
            char b[16];
            FAIL(&p, "unexpected %s after the top-level value", opp_json__found(&p, b, sizeof b));
        }
    }
    if (p.failed) {
        opp_json_free(root);
        return NULL;
    }
    return root;
}

opp_json_t *opp_json_parse_file(const char *path, char *err, size_t err_size) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        snprintf(err, err_size, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    while (buf != NULL) {
        len += fread(buf + len, 1, cap - len, f);
        if (len < cap) {
            break;
        }
        char *nb = opp_json__grow(buf, &cap, 1);
        if (nb == NULL) {
            free(buf);
            buf = NULL;
        } else {
            buf = nb;
        }
    }
    const int read_error = ferror(f);
    fclose(f);
    if (buf == NULL || read_error) {
        snprintf(err, err_size, "%s: %s", path, buf == NULL ? "out of memory" : "read error");
        free(buf);
        return NULL;
    }
    char msg[512];
    opp_json_t *root = opp_json_parse(buf, len, msg, sizeof msg);
    free(buf);
    if (root == NULL) {
        snprintf(err, err_size, "%s:%s", path, msg);
    }
    return root;
}

void opp_json_free(opp_json_t *root) {
    if (root != NULL) {
        free_value(root);
        free(root);
    }
}

const opp_json_t *opp_json_get(const opp_json_t *value, const char *key) {
    if (value == NULL || value->type != OPP_JSON_OBJECT) {
        return NULL;
    }
    for (size_t i = 0; i < value->count; ++i) {
        if (value->keys[i] != NULL && strcmp(value->keys[i], key) == 0) {
            return &value->items[i];
        }
    }
    return NULL;
}

const char *opp_json_type_name(opp_json_type_t type) {
    static const char *names[] = {"null", "false", "true", "number", "string", "array", "object"};
    return (unsigned)type < 7 ? names[type] : "invalid";
}
