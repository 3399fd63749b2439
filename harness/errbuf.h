/*
 * errbuf.h - "write a message into err, return -1" for the harness
 * modules that report errors through a caller's (char *err, size_t
 * err_size) pair (ONNX case mapping, golden derivation).
 *
 *   FAIL_IF(cond, fmt, ...)  in a function with parameters err, err_size:
 *                            if cond, format the message and return -1.
 */
#ifndef OPP_HARNESS_ERRBUF_H
#define OPP_HARNESS_ERRBUF_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

static inline int opp_errbuf_fail(char *err, size_t err_size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static inline int opp_errbuf_fail(char *err, size_t err_size, const char *fmt, ...) {
    if (err != NULL && err_size > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, err_size, fmt, ap);
        va_end(ap);
    }
    return -1;
}

#define FAIL_IF(cond, ...)                                      \
    do {                                                        \
        if (cond) {                                             \
            return opp_errbuf_fail(err, err_size, __VA_ARGS__); \
        }                                                       \
    } while (0)

#endif /* OPP_HARNESS_ERRBUF_H */
