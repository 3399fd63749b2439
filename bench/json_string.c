/*
 * json_string.c - JSON strings for the strict reader of json.h: the escapes
 * \" \\ \/ \b \f \n \r \t and \uXXXX (surrogate pairs joined, lone
 * surrogates and \u0000 refused), raw bytes checked as UTF-8 (no overlong
 * forms, no encoded surrogates, nothing above U+10FFFF), control
 * characters refused. Output: NUL-terminated UTF-8. And the writer's
 * half, opp_json_write_string().
 * Tested by tests/json_reader_test.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/json.h"
#include "bench/json_internal.h"

static int hex4(parser_t *p, unsigned *out) {
    unsigned v = 0;
    for (int i = 0; i < 4; ++i) {
        if (p->pos >= p->n) {
            return FAIL(p, "unterminated \\u escape: expected 4 hex digits");
        }
        const unsigned char c = p->s[p->pos];
        unsigned d;
        if (c >= '0' && c <= '9') {
            d = c - '0';
        } else if (c >= 'a' && c <= 'f') {
            d = c - 'a' + 10;
        } else if (c >= 'A' && c <= 'F') {
            d = c - 'A' + 10;
        } else {
            char b[16];
            return FAIL(p, "expected a hex digit in \\u escape, found %s",
                        opp_json__found(p, b, sizeof b));
        }
        v = v * 16 + d;
        p->pos++;
    }
    *out = v;
    return 0;
}

static size_t put_utf8(char *dst, unsigned cp) {
    if (cp < 0x80) {
        dst[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        dst[0] = (char)(0xC0 | (cp >> 6));
        dst[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        dst[0] = (char)(0xE0 | (cp >> 12));
        dst[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        dst[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    dst[0] = (char)(0xF0 | (cp >> 18));
    dst[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    dst[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    dst[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Length of the valid UTF-8 sequence at s[0..avail), or 0 if invalid
 * (overlong forms, surrogates and code points above U+10FFFF are invalid). */
static size_t utf8_len(const unsigned char *s, size_t avail) {
    const unsigned char c = s[0];
    size_t len;
    unsigned cp, min;
    if (c >= 0xC2 && c <= 0xDF) {
        len = 2, cp = c & 0x1F, min = 0x80;
    } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3, cp = c & 0x0F, min = 0x800;
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4, cp = c & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    if (avail < len) {
        return 0;
    }
    for (size_t i = 1; i < len; ++i) {
        if ((s[i] & 0xC0) != 0x80) {
            return 0;
        }
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
        return 0;
    }
    return len;
}

/* Parses a string at pos (which holds '"') into a new NUL-terminated buffer. */
int opp_json__parse_string(parser_t *p, char **out, size_t *out_len) {
    const int line = p->line, col = opp_json__column(p, p->pos);
    p->pos++; /* opening quote */
    /* The decoded string is never longer than its source. */
    size_t cap = 16;
    char *buf = malloc(cap);
    size_t len = 0;
    if (buf == NULL) {
        return FAIL(p, "out of memory");
    }
    for (;;) {
        if (len + 8 > cap) {
            char *nb = opp_json__grow(buf, &cap, 1);
            if (nb == NULL) {
                free(buf);
                return FAIL(p, "out of memory");
            }
            buf = nb;
        }
        if (p->pos >= p->n) {
            free(buf);
            return opp_json__fail(p, line, col,
                                  "unterminated string (no closing '\"' before end of input)");
        }
        const unsigned char c = p->s[p->pos];
        if (c == '"') {
            p->pos++;
            break;
        }
        if (c < 0x20) {
            free(buf);
            return FAIL(p, "control character 0x%02x inside a string (escape it)", (unsigned)c);
        }
        if (c >= 0x80) {
            const size_t k = utf8_len(p->s + p->pos, p->n - p->pos);
            if (k == 0) {
                free(buf);
                return FAIL(p, "invalid UTF-8 byte 0x%02x inside a string", (unsigned)c);
            }
            memcpy(buf + len, p->s + p->pos, k);
            len += k;
            p->pos += k;
            continue;
        }
        if (c != '\\') {
            buf[len++] = (char)c;
            p->pos++;
            continue;
        }
        p->pos++; /* backslash */
        const unsigned char e = p->pos < p->n ? p->s[p->pos] : 0;
        static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
        const char *hit = e != 0 ? strchr(from, e) : NULL;
        if (hit != NULL) {
            buf[len++] = to[hit - from];
            p->pos++;
            continue;
        }
        if (e != 'u') {
            char b[16];
            free(buf);
            return FAIL(p,
                        "invalid escape: expected one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u, "
                        "found %s after the backslash",
                        opp_json__found(p, b, sizeof b));
        }
        p->pos++;
        unsigned cp, lo;
        if (hex4(p, &cp) != 0) {
            free(buf);
            return -1;
        }
        if (cp >= 0xDC00 && cp <= 0xDFFF) {
            free(buf);
            return FAIL(p, "\\u%04X is a lone low surrogate", cp);
        }
        if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (p->pos + 1 >= p->n || p->s[p->pos] != '\\' || p->s[p->pos + 1] != 'u') {
                free(buf);
                return FAIL(p, "\\u%04X (high surrogate) is not followed by a \\u low surrogate",
                            cp);
            }
            p->pos += 2;
            if (hex4(p, &lo) != 0) {
                free(buf);
                return -1;
            }
            if (lo < 0xDC00 || lo > 0xDFFF) {
                free(buf);
                return FAIL(p, "\\u%04X after a high surrogate is not a low surrogate", lo);
            }
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        }
        if (cp == 0) {
            free(buf);
            return FAIL(p, "\\u0000 (NUL) inside a string is not supported");
        }
        len += put_utf8(buf + len, cp);
    }
    buf[len] = '\0';
    *out = buf;
    *out_len = len;
    return 0;
}

void opp_json_write_string(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; ++s) {
        const unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            fprintf(f, "\\%c", c);
        } else if (c < 0x20) {
            fprintf(f, "\\u%04x", c);
        } else {
            fputc(c, f);
        }
    }
    fputc('"', f);
}
