/*
 * attention_plan.c - the workspace plan of the exact run path (one layout
 * function, counting or materialising; STYLE.md section 8) and the
 * host-side checks of the device pointers a run receives.
 *
 * Layout (each region 256-byte aligned, offsets from the workspace start):
 *   guard_record   0 .. 255   the device guard's record (kernels/kernels.h);
 *                             it must stay at offset 0:
 *                             opp_packed_attention_device_status() reads it
 *                             from a bare workspace pointer.
 * The exact kernel needs no other scratch: its per-block state lives in
 * shared memory, so the workspace does not grow with the batch.
 */
#include <inttypes.h>

#include "kernels/kernels.h"
#include "lib/internal/attention_run.h"
#include "lib/internal/check.h"
#include "lib/internal/workspace.h"

void opp__attention_plan_layout(void *workspace, opp__attention_plan_t *plan) {
    opp__bump_t bump = {(char *)workspace, 0};
    plan->guard_record = opp__bump_take(&bump, OPP__GUARD_RECORD_BYTES);
    plan->workspace_bytes = opp__bump_total(&bump);
}

opp_status_t opp__attention_plan_bind(void *workspace, size_t workspace_bytes,
                                      opp__attention_plan_t *plan) {
    opp__attention_plan_layout(NULL, plan);
    OPP_RETURN_IF(workspace == NULL, OPP_STATUS_BAD_PARAM_NULL_POINTER,
                  "workspace is NULL (%zu bytes are required)", plan->workspace_bytes);
    OPP_RETURN_IF((uintptr_t)workspace % OPP__WORKSPACE_ALIGN != 0, OPP_STATUS_BAD_PARAM_MISALIGNED,
                  "workspace = %p is not %d-byte aligned", workspace, OPP__WORKSPACE_ALIGN);
    OPP_RETURN_IF(workspace_bytes < plan->workspace_bytes, OPP_STATUS_BAD_PARAM_WORKSPACE,
                  "workspace_bytes = %zu is below the %zu bytes this descriptor needs",
                  workspace_bytes, plan->workspace_bytes);
    opp__attention_plan_layout(workspace, plan);
    return OPP_STATUS_SUCCESS;
}

opp_status_t opp__check_device_tensor(const char *name, const void *ptr, int64_t rows) {
    OPP_RETURN_IF(ptr == NULL && rows > 0, OPP_STATUS_BAD_PARAM_NULL_POINTER,
                  "%s is NULL but has %" PRId64 " rows", name, rows);
    OPP_RETURN_IF((uintptr_t)ptr % 16 != 0, OPP_STATUS_BAD_PARAM_MISALIGNED,
                  "%s = %p is not 16-byte aligned", name, ptr);
    return OPP_STATUS_SUCCESS;
}

opp_status_t opp__check_device_array(const char *name, const void *ptr, size_t align) {
    OPP_RETURN_IF(ptr == NULL, OPP_STATUS_BAD_PARAM_NULL_POINTER, "%s is NULL", name);
    OPP_RETURN_IF((uintptr_t)ptr % align != 0, OPP_STATUS_BAD_PARAM_MISALIGNED,
                  "%s = %p is not %zu-byte aligned", name, ptr, align);
    return OPP_STATUS_SUCCESS;
}
