/*
 * attention_run.h - what the run paths (attention_packed.c,
 * attention24_nonpad.c, device_status.c) share: the workspace plan and the
 * host-side checks of device pointers, all done before any CUDA call.
 * Defined in lib/attention_plan.c. Host code; pointers are device
 * addresses that are never dereferenced here.
 */
#ifndef OPP_INTERNAL_ATTENTION_RUN_H
#define OPP_INTERNAL_ATTENTION_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "lib/oppacked.h"

/* The workspace of the exact path, region by region. */
typedef struct opp__attention_plan {
    size_t workspace_bytes; /* total (a multiple of 256) */
    void *guard_record;     /* OPP__GUARD_RECORD_BYTES at offset 0; NULL when counting */
} opp__attention_plan_t;

/* Lays the workspace out at `workspace` (device), or only counts when it
 * is NULL. The one layout function of both *_workspace_size and *_fwd. */
void opp__attention_plan_layout(void *workspace, opp__attention_plan_t *plan);

/* Checks a caller's workspace (not NULL, 256-byte aligned, at least the
 * planned size) and materialises the plan on it.
 * @return : SUCCESS, BAD_PARAM_NULL_POINTER, BAD_PARAM_MISALIGNED or
 *           BAD_PARAM_WORKSPACE (message with both sizes). */
opp_status_t opp__attention_plan_bind(void *workspace, size_t workspace_bytes,
                                      opp__attention_plan_t *plan);

/* Checks one device tensor argument: NULL is allowed only when it has no
 * row (rows == 0); otherwise 16-byte alignment is required.
 * @return : SUCCESS, BAD_PARAM_NULL_POINTER or BAD_PARAM_MISALIGNED. */
opp_status_t opp__check_device_tensor(const char *name, const void *ptr, int64_t rows);

/* Checks a device index array (cu_seqlens, nonpad): never NULL, aligned to
 * its element size `align`.
 * @return : SUCCESS, BAD_PARAM_NULL_POINTER or BAD_PARAM_MISALIGNED. */
opp_status_t opp__check_device_array(const char *name, const void *ptr, size_t align);

#endif /* OPP_INTERNAL_ATTENTION_RUN_H */
