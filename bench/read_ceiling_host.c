/*
 * read_ceiling_host.c - the host side of bench/read_ceiling that needs no
 * GPU (bench/read_ceiling.h): the shape's counts, the expected word sums
 * the patterns are checked against, and the cases' names and checks.
 * CPU-tested by //tests:read_ceiling_host_test.
 */
#include <stdio.h>
#include <string.h>

#include "bench/read_ceiling.h"

int64_t rc_total_keys(const rc_shape_t *s) {
    int64_t n = 0;
    for (int32_t b = 0; b < s->batch; ++b) {
        if (s->lkv[b] < 0) {
            return -1;
        }
        n += s->lkv[b];
    }
    return n;
}

int64_t rc_items(const rc_shape_t *s, int32_t split_keys) {
    int32_t most = 0;
    for (int32_t b = 0; b < s->batch; ++b) {
        most = s->lkv[b] > most ? s->lkv[b] : most;
    }
    return ((int64_t)most + split_keys - 1) / split_keys * s->batch * s->hkv;
}

uint64_t rc_expected_sum(uint64_t words, uint32_t t) {
    uint64_t sum = 0;
    for (uint64_t i = 0; i < words; ++i) {
        sum += rc_word(i, t);
    }
    return sum;
}

static const char *const rc_pattern_names[] = {"flat", "cpasync", "tma"};

void rc_case_name(const rc_case_t *c, char *buf, size_t size) {
    if (c->pattern == RC_FLAT) {
        snprintf(buf, size, "flat");
    } else if ((int)c->pattern >= 0 && c->pattern <= RC_TMA) {
        char heads[16] = "";
        if (c->heads > 1) {
            snprintf(heads, sizeof heads, " h%d", c->heads);
        }
        snprintf(buf, size, "%s r%d s%d%s%s", rc_pattern_names[c->pattern], c->rows, c->stages,
                 c->persistent ? " persistent" : "", heads);
    } else {
        snprintf(buf, size, "pattern %d", (int)c->pattern);
    }
}

int32_t rc_case_heads(const rc_case_t *c) {
    return c->pattern == RC_TMA && c->heads > 1 ? c->heads : 1;
}

int rc_split_keys_check(int32_t keys, char *err, size_t err_size) {
    if (keys < 128 || keys % 128 != 0) {
        snprintf(err, err_size, "split keys %d: a multiple of 128 (every ROWS), at least 128",
                 (int)keys);
        return -1;
    }
    return 0;
}

int rc_case_check(const rc_case_t *c, char *err, size_t err_size) {
    if ((int)c->pattern < 0 || c->pattern > RC_TMA) {
        snprintf(err, err_size, "case: pattern %d (0 flat, 1 cpasync, 2 tma)", (int)c->pattern);
        return -1;
    }
    if (c->pattern == RC_FLAT) {
        return 0;
    }
    if (c->rows != 32 && c->rows != 64 && c->rows != 128) {
        snprintf(err, err_size, "case %s: rows %d (32, 64 or 128)", rc_pattern_names[c->pattern],
                 c->rows);
        return -1;
    }
    if (c->stages < 2 || c->stages > 8) {
        snprintf(err, err_size, "case %s: stages %d (2 .. 8)", rc_pattern_names[c->pattern],
                 c->stages);
        return -1;
    }
    if (c->pattern == RC_CPASYNC && c->persistent) {
        snprintf(err, err_size,
                 "case cpasync: persistent 1 (tma only; cpasync runs a block an item)");
        return -1;
    }
    if (c->heads != 0 && c->heads != 1 && c->heads != 2 && c->heads != 4 && c->heads != 8) {
        snprintf(err, err_size, "case %s: heads %d (0 or 1: one; 2, 4 or 8)",
                 rc_pattern_names[c->pattern], c->heads);
        return -1;
    }
    if (c->pattern == RC_CPASYNC && c->heads > 1) {
        snprintf(err, err_size, "case cpasync: heads %d (tma only; cpasync reads one head an item)",
                 c->heads);
        return -1;
    }
    return 0;
}

/* A decimal integer of 1 .. 6 digits at *p (no sign, no space), *p moved
 * past it; -1 when there is none. */
static int32_t rc_digits(const char **p) {
    int32_t v = 0, n = 0;
    while (**p >= '0' && **p <= '9' && n < 7) {
        v = v * 10 + (**p - '0');
        ++*p;
        ++n;
    }
    return n >= 1 && n <= 6 ? v : -1;
}

int rc_case_parse(const char *spec, rc_case_t *c) {
    memset(c, 0, sizeof(*c)); /* what a bad spec leaves */
    if (spec == NULL) {
        return -1;
    }
    if (strcmp(spec, "flat") == 0) {
        return 0;
    }
    rc_case_t t = {RC_FLAT, 0, 0, 0, 0};
    const char *p = spec;
    if (strncmp(p, "cpasync:", 8) == 0) {
        t.pattern = RC_CPASYNC;
        p += 8;
    } else if (strncmp(p, "tma:", 4) == 0) {
        t.pattern = RC_TMA;
        p += 4;
    } else {
        return -1;
    }
    t.rows = rc_digits(&p);
    if (t.rows < 0 || *p++ != ':') {
        return -1;
    }
    t.stages = rc_digits(&p);
    if (t.stages < 0) {
        return -1;
    }
    if (strncmp(p, ":persistent", 11) == 0) {
        t.persistent = 1;
        p += 11;
    }
    if (p[0] == ':' && p[1] == 'h') {
        p += 2;
        t.heads = rc_digits(&p);
        if (t.heads < 2 || t.heads > 8) {
            return -1;
        }
    }
    if (*p != '\0') {
        return -1;
    }
    *c = t;
    return 0;
}

int rc_case_fits(const rc_case_t *c, const rc_shape_t *s, char *err, size_t err_size) {
    if (rc_case_check(c, err, err_size) != 0) {
        return -1;
    }
    const int32_t heads = rc_case_heads(c);
    if (s->hkv < 1 || s->hkv % heads != 0) {
        snprintf(err, err_size, "heads %d: does not divide the workload's %d kv heads", heads,
                 s->hkv);
        return -1;
    }
    return 0;
}
