/*
 * status.c - status names and descriptions, and the thread-local last error.
 *
 * opp_status_name() and opp_status_string() are generated from the single
 * OPP_STATUS_MAP list in oppacked.h, so a new status needs one line there
 * and nothing here. The last-error buffer is C11 _Thread_local storage of
 * OPP_LAST_ERROR_BYTES bytes: each thread sees only its own message, and a
 * message that does not fit is truncated (ending in "...") and always
 * NUL-terminated. Messages carry no source location; a build with
 * -DOPP_DEBUG_MESSAGES (e.g. bazel build --copt=-DOPP_DEBUG_MESSAGES)
 * prefixes "file:line: " to each. Nothing here prints, allocates or locks.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "lib/internal/check.h"

/* Size of the per-thread message buffer, terminating NUL included. */
#define OPP_LAST_ERROR_BYTES 1024

static _Thread_local char opp_last_error_[OPP_LAST_ERROR_BYTES];

// --- public entry

const char *opp_status_name(opp_status_t status) {
    switch ((int)status) {
#define OPP_STATUS_NAME_CASE_(name, value, text) \
    case value:                                  \
        return #name;
        OPP_STATUS_MAP(OPP_STATUS_NAME_CASE_)
#undef OPP_STATUS_NAME_CASE_
    default:
        return "UNKNOWN_STATUS";
    }
}

const char *opp_status_string(opp_status_t status) {
    switch ((int)status) {
#define OPP_STATUS_STRING_CASE_(name, value, text) \
    case value:                                    \
        return text;
        OPP_STATUS_MAP(OPP_STATUS_STRING_CASE_)
#undef OPP_STATUS_STRING_CASE_
    default:
        return "unknown status";
    }
}

const char *opp_last_error_message(void) {
    return opp_last_error_;
}

// --- internal (lib/internal/check.h)

opp_status_t opp__set_error(opp_status_t status, const char *file, int line, const char *fmt, ...) {
    char *buf = opp_last_error_;
    const size_t cap = sizeof opp_last_error_;
    size_t used = 0;
    buf[0] = '\0';
#ifdef OPP_DEBUG_MESSAGES
    const int prefix = snprintf(buf, cap, "%s:%d: ", file != NULL ? file : "?", line);
    used = prefix < 0 ? 0 : (size_t)prefix;
#else
    (void)file; /* user-facing messages name no source location */
    (void)line;
#endif
    if (used < cap && fmt != NULL) {
        va_list ap;
        va_start(ap, fmt);
        const int n = vsnprintf(buf + used, cap - used, fmt, ap);
        va_end(ap);
        if (n < 0) {
            buf[used] = '\0'; /* encoding error: keep what was written before */
        } else {
            used += (size_t)n;
        }
    }
    if (used >= cap) {
        /* Truncated: snprintf already wrote a NUL at cap - 1; mark the cut. */
        memcpy(buf + cap - 4, "...", 4);
    }
    return status;
}

void opp__clear_error(void) {
    opp_last_error_[0] = '\0';
}
