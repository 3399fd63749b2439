/*
 * check.h - internal error plumbing: record a message, return a status.
 *
 * OPP_RETURN_IF(cond, status, fmt, ...)  if cond holds, record the
 *     formatted message as the thread's last error and return status from
 *     the enclosing function. The message is user-facing: no source
 *     location (a -DOPP_DEBUG_MESSAGES build prefixes "file:line: ").
 * OPP_TRY(expr)        evaluate an opp_status_t expression; on failure return
 *                      it unchanged (the callee already recorded the message).
 * OPP_CUDA_TRY(expr)   evaluate a cudaError_t expression (CUDA sources only);
 *                      on failure record the CUDA error name and return
 *                      OPP_STATUS_NO_DEVICE for the errors that mean "no
 *                      usable device" (OPP__CUDA_IS_NO_DEVICE), else
 *                      OPP_STATUS_CUDA_ERROR.
 * Nothing here prints, exits or aborts.
 */
#ifndef OPP_INTERNAL_CHECK_H
#define OPP_INTERNAL_CHECK_H

#include "lib/oppacked.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Records the formatted message as this thread's last error and returns
 * status unchanged; file and line are used only by a -DOPP_DEBUG_MESSAGES
 * build. Defined in lib/status.c. */
opp_status_t opp__set_error(opp_status_t status, const char *file, int line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* Clears this thread's last error message (to ""). */
void opp__clear_error(void);

#ifdef __cplusplus
}
#endif

#define OPP_RETURN_IF(cond, status, ...)                                      \
    do {                                                                      \
        if (cond) {                                                           \
            return opp__set_error((status), __FILE__, __LINE__, __VA_ARGS__); \
        }                                                                     \
    } while (0)

#define OPP_TRY(expr)                                \
    do {                                             \
        opp_status_t opp_try_status_ = (expr);       \
        if (opp_try_status_ != OPP_STATUS_SUCCESS) { \
            return opp_try_status_;                  \
        }                                            \
    } while (0)

/* The CUDA errors that mean there is no usable device: none present, no
 * (or too old a) driver, every device busy or unavailable. */
#define OPP__CUDA_IS_NO_DEVICE(err)                                        \
    ((err) == cudaErrorNoDevice || (err) == cudaErrorInsufficientDriver || \
     (err) == cudaErrorDevicesUnavailable)

#define OPP_CUDA_TRY(expr)                                                                       \
    do {                                                                                         \
        cudaError_t opp_cuda_err_ = (expr);                                                      \
        if (opp_cuda_err_ != cudaSuccess) {                                                      \
            return opp__set_error(OPP__CUDA_IS_NO_DEVICE(opp_cuda_err_) ? OPP_STATUS_NO_DEVICE   \
                                                                        : OPP_STATUS_CUDA_ERROR, \
                                  __FILE__, __LINE__, "%s: %s (%s)", #expr,                      \
                                  cudaGetErrorName(opp_cuda_err_),                               \
                                  cudaGetErrorString(opp_cuda_err_));                            \
        }                                                                                        \
    } while (0)

#endif /* OPP_INTERNAL_CHECK_H */
