/*
 * attention_plan.c - the workspace plan of the run path (one layout
 * function, counting or materialising; STYLE.md section 8).
 *
 * Layout (each region 256-byte aligned, offsets from the workspace start):
 *   guard_record   0 .. 255   the device guard's record (kernels/kernels.h);
 *                             it must stay at offset 0:
 *                             opp_attention_device_status() reads it from a
 *                             bare workspace pointer.
 * No kernel of the table needs other scratch today (per-block state lives
 * in shared memory), so the workspace does not grow with the batch.
 */
#include <inttypes.h>

#include "kernels/kernels.h"
#include "lib/internal/attention_plan.h"
#include "lib/internal/check.h"
#include "lib/internal/workspace.h"

void opp__plan_layout(const opp__problem_t *p, void *workspace, opp__plan_t *plan) {
    (void)p; /* every problem has the same layout today */
    opp__bump_t bump = {(char *)workspace, 0};
    plan->guard_record = opp__bump_take(&bump, OPP__GUARD_RECORD_BYTES);
    plan->workspace_bytes = opp__bump_total(&bump);
}

opp_status_t opp__plan_bind(const opp__problem_t *p, void *workspace, size_t workspace_bytes,
                            opp__plan_t *plan) {
    opp__plan_layout(p, NULL, plan);
    OPP_RETURN_IF(workspace == NULL, OPP_STATUS_BAD_PARAM_NULL_POINTER,
                  "workspace is NULL (%zu bytes are required)", plan->workspace_bytes);
    OPP_RETURN_IF((uintptr_t)workspace % OPP__WORKSPACE_ALIGN != 0, OPP_STATUS_BAD_PARAM_MISALIGNED,
                  "workspace = %p is not %d-byte aligned", workspace, OPP__WORKSPACE_ALIGN);
    OPP_RETURN_IF(workspace_bytes < plan->workspace_bytes, OPP_STATUS_BAD_PARAM_WORKSPACE,
                  "workspace_bytes = %zu is below the %zu bytes this descriptor needs",
                  workspace_bytes, plan->workspace_bytes);
    opp__plan_layout(p, workspace, plan);
    return OPP_STATUS_SUCCESS;
}
