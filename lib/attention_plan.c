/*
 * attention_plan.c - the workspace plan of the run path (one layout
 * function, counting or materialising; STYLE.md section 8).
 *
 * Layout (each region 256-byte aligned, offsets from the workspace start):
 *   guard_record   0 .. 255   the device guard's record (kernels/kernels.h);
 *                             it must stay at offset 0:
 *                             opp_attention_device_status() reads it from a
 *                             bare workspace pointer.
 *   split_o        FAST split-KV partial O, float [split_rows, Hq, Dv]
 *   split_ml       its (frame, l) pairs, float [split_rows, Hq, 2]
 *                  (both times OPP__SPLIT_SLICES where the split launch
 *                  may run a split's slices as items of their own:
 *                  opp__split_slice_items, kernels/split_rule.h; a partial
 *                  row's slice s at row 4 r + s)
 * The split regions exist only when the problem's shape has a FAST kernel
 * that splits (16-bit storage, D, Dv <= OPP__SPLIT_DMAX; whatever the
 * algorithm, so one workspace serves EXACT, FAST and TF32X3 alike; f32,
 * the FFMA and TF32X3 kernels' storage, never splits) and some
 * sequence may split (max_seqlen_kv > opp__split_min_kv(G), G <= OPP__SPLIT_ROWS;
 * kernels/split_rule.h);
 * their size is a bound from the host-side extents (opp__plan_split_rows),
 * never from the device lengths, so it holds for any batch the extents allow.
 */
#include <inttypes.h>

#include "kernels/kernel_list.h"
#include "kernels/kernels.h"
#include "kernels/split_rule.h"
#include "lib/internal/attention_plan.h"
#include "lib/internal/check.h"
#include "lib/internal/workspace.h"

int64_t opp__plan_split_rows(const opp__problem_t *p) {
    if (p == NULL) {
        return 0; /* the guard record's layout only (opp_attention_device_status) */
    }
    const opp__attrs_t *a = &p->a;
    if (a->dtype == OPP_DTYPE_F32 || a->d > OPP__SPLIT_DMAX || a->dv > OPP__SPLIT_DMAX ||
        p->max_seqlen_kv <= opp__split_min_kv(a->g) || a->g > OPP__SPLIT_ROWS) {
        return 0;
    }
    const int64_t qmax = OPP__SPLIT_MOST(a->g); /* tokens of a sequence that splits */
    const int64_t b = p->batch;
    const int64_t q_split = p->total_q < b * qmax ? p->total_q : b * qmax;
    const int64_t by_max = ((int64_t)p->max_seqlen_kv + OPP__SPLIT_KEYS - 1) / OPP__SPLIT_KEYS;
    const int64_t rows_a = by_max * q_split;
    const int64_t rows_b = (p->total_kv / OPP__SPLIT_KEYS + b) * qmax;
    return rows_a < rows_b ? rows_a : rows_b;
}

void opp__plan_layout(const opp__problem_t *p, void *workspace, opp__plan_t *plan) {
    opp__bump_t bump = {(char *)workspace, 0};
    plan->guard_record = opp__bump_take(&bump, OPP__GUARD_RECORD_BYTES);
    plan->split_rows = opp__plan_split_rows(p);
    plan->split_o = NULL;
    plan->split_ml = NULL;
    if (plan->split_rows > 0) {
        /* the split launch's items, as flash_split_args counts them */
        const int64_t items = opp__split_items(p->max_seqlen_kv, p->batch, p->a.hkv);
        const size_t slices = opp__split_slice_items(items) ? OPP__SPLIT_SLICES : 1;
        const size_t rows = (size_t)plan->split_rows * (size_t)p->a.hq * slices;
        plan->split_o = (float *)opp__bump_take(&bump, rows * (size_t)p->a.dv * sizeof(float));
        plan->split_ml = (float *)opp__bump_take(&bump, rows * 2 * sizeof(float));
    }
    plan->workspace_bytes = opp__bump_total(&bump);
}

opp_status_t opp__plan_workspace_bytes(const opp__problem_t *p, size_t *workspace_bytes) {
    OPP_RETURN_IF(workspace_bytes == NULL, OPP_STATUS_BAD_PARAM_NULL_POINTER,
                  "workspace_bytes is NULL");
    opp__plan_t plan;
    opp__plan_layout(p, NULL, &plan);
    *workspace_bytes = plan.workspace_bytes;
    return OPP_STATUS_SUCCESS;
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
