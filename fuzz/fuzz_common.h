/*
 * fuzz_common.h - what every liboppacked fuzz target checks about a call's
 * result, whatever its input (fuzz/README.md):
 *   - the status is one of the enum (opp_status_name() knows it);
 *   - on failure the last error message is non-empty, NUL-terminated within
 *     the 1024-byte buffer, and has no "file:line: " source prefix;
 * and the trap that turns a broken oracle into a libFuzzer crash report.
 * Header-only; host C; used by the fuzz targets (fuzz/<name>_fuzz.c) and their corpus
 * replay (fuzz/replay_main.c).
 */
#ifndef OPP_FUZZ_COMMON_H
#define OPP_FUZZ_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/oppacked.h"

/* An oracle failed: say which, then abort (libFuzzer saves the input). */
#define FUZZ_REQUIRE(cond, ...)                                                                \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            fprintf(stderr, "fuzz oracle failed at %s:%d: %s\n  ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                                      \
            fprintf(stderr, "\n  last error: \"%s\"\n", opp_last_error_message());             \
            abort();                                                                           \
        }                                                                                      \
    } while (0)

/* The status is in the enum; on failure the message is well formed. */
static inline void fuzz_check_result(opp_status_t st, const char *call) {
    FUZZ_REQUIRE(strcmp(opp_status_name(st), "UNKNOWN_STATUS") != 0, "%s returned %d", call,
                 (int)st);
    if (st == OPP_STATUS_SUCCESS) {
        return;
    }
    const char *msg = opp_last_error_message();
    FUZZ_REQUIRE(msg != NULL, "%s: NULL message", call);
    const size_t len = strnlen(msg, 1024);
    FUZZ_REQUIRE(len > 0 && len < 1024, "%s: message of length %zu", call, len);
    /* no "name.c:123: " prefix: a source file name followed by a line number */
    const char *dot = strstr(msg, ".c:");
    FUZZ_REQUIRE(dot == NULL || dot[3] < '0' || dot[3] > '9', "%s: source prefix in \"%s\"", call,
                 msg);
}

/* One status + message of a check, copied out of the thread buffer (the
 * next call overwrites opp_last_error_message()). */
typedef struct fuzz_outcome {
    opp_status_t st;
    char msg[1024];
} fuzz_outcome_t;

/* Checks st as fuzz_check_result() does and captures it with its message. */
static inline fuzz_outcome_t fuzz_outcome(opp_status_t st, const char *call) {
    fuzz_outcome_t o;
    o.st = st;
    fuzz_check_result(st, call);
    snprintf(o.msg, sizeof o.msg, "%s", st == OPP_STATUS_SUCCESS ? "" : opp_last_error_message());
    return o;
}

/* Reads n bytes of input into dst (zero-filled past the input's end). */
static inline void fuzz_take(void *dst, size_t n, const unsigned char **data, size_t *size) {
    const size_t k = *size < n ? *size : n;
    memset(dst, 0, n);
    memcpy(dst, *data, k);
    *data += k;
    *size -= k;
}

#endif /* OPP_FUZZ_COMMON_H */
