/*
 * device_status.c - opp_attention_device_status() (alias
 * opp_packed_attention_device_status()): reads back what the device guard
 * of the last run on a workspace (either layout's entry) found and turns it into
 * the status and message the host check would give, plus
 * " (found on the device)".
 *
 *   workspace : device, 256-byte aligned; its first 256 bytes are the guard
 *               record (lib/attention_plan.c, kernels/kernels.h)
 *
 * Copies the record with cudaMemcpyAsync on the caller's stream and
 * synchronizes that stream (a debugging / after-failure call, not for the
 * hot path).
 */
#include <inttypes.h>

#include "kernels/kernels.h"
#include "lib/internal/attention_plan.h"
#include "lib/internal/check.h"
#include "lib/internal/workspace.h"

#define FOUND " (found on the device)"

/* The status and message of a record whose code is not SUCCESS. */
static opp_status_t record_status(const opp__guard_record_t *r) {
    const char *side = r->array == OPP__GUARD_CU_SEQLENS_Q ? "q" : "kv";
    switch (r->code) {
    case OPP_STATUS_BAD_PARAM_SEQLENS_START:
        OPP_RETURN_IF(1, OPP_STATUS_BAD_PARAM_SEQLENS_START,
                      "cu_seqlens_%s[0] = %" PRId64 ", expected 0" FOUND, side, r->value);
        break;
    case OPP_STATUS_BAD_PARAM_SEQLENS_DECREASING:
        OPP_RETURN_IF(1, OPP_STATUS_BAD_PARAM_SEQLENS_DECREASING,
                      "cu_seqlens_%s[%" PRId64 "] = %" PRId64 " < cu_seqlens_%s[%" PRId64
                      "] = %" PRId64 FOUND,
                      side, r->index, r->value, side, r->index - 1, r->other);
        break;
    case OPP_STATUS_BAD_PARAM_SEQLENS_TOTAL:
        OPP_RETURN_IF(1, OPP_STATUS_BAD_PARAM_SEQLENS_TOTAL,
                      "cu_seqlens_%s[%" PRId64 "] = %" PRId64 " > total_%s = %" PRId64 FOUND, side,
                      r->index, r->value, side, r->limit);
        break;
    case OPP_STATUS_BAD_PARAM_MAX_SEQLEN:
        OPP_RETURN_IF(1, OPP_STATUS_BAD_PARAM_MAX_SEQLEN,
                      "sequence %" PRId64 ": L_%s = cu_seqlens_%s[%" PRId64
                      "] - cu_seqlens_%s[%" PRId64 "] = %" PRId64
                      " > max_seqlen_%s = %" PRId64 FOUND,
                      r->index, side, side, r->index + 1, side, r->index, r->value, side, r->limit);
        break;
    case OPP_STATUS_BAD_PARAM_NONPAD:
        OPP_RETURN_IF(1, OPP_STATUS_BAD_PARAM_NONPAD,
                      "nonpad_kv_seqlen[%" PRId64 "] = %" PRId64
                      " is outside 0..kv_seqlen = %" PRId64 FOUND,
                      r->index, r->value, r->limit);
        break;
    default:
        break;
    }
    OPP_RETURN_IF(1, OPP_STATUS_INTERNAL_ERROR, "the guard record holds unknown code %d",
                  (int)r->code);
    return OPP_STATUS_INTERNAL_ERROR;
}

// --- public entry

opp_status_t opp_attention_device_status(const void *workspace, size_t workspace_bytes,
                                         struct CUstream_st *stream) {
    OPP_RETURN_IF(workspace == NULL, OPP_STATUS_BAD_PARAM_NULL_POINTER, "workspace is NULL");
    OPP_RETURN_IF((uintptr_t)workspace % OPP__WORKSPACE_ALIGN != 0, OPP_STATUS_BAD_PARAM_MISALIGNED,
                  "workspace = %p is not %d-byte aligned", workspace, OPP__WORKSPACE_ALIGN);
    opp__plan_t plan; /* the guard record's offset is the same for every problem */
    opp__plan_layout(NULL, (void *)workspace, &plan);
    OPP_RETURN_IF(workspace_bytes < OPP__GUARD_RECORD_BYTES, OPP_STATUS_BAD_PARAM_WORKSPACE,
                  "workspace_bytes = %zu is below the %d-byte guard record", workspace_bytes,
                  OPP__GUARD_RECORD_BYTES);
    opp__guard_record_t record;
    OPP_TRY(opp__guard_record_read(plan.guard_record, &record, stream));
    OPP_RETURN_IF(record.magic != OPP__GUARD_MAGIC, OPP_STATUS_BAD_PARAM,
                  "the workspace holds no guard record: no run has used it");
    if (record.code == OPP_STATUS_SUCCESS) {
        return OPP_STATUS_SUCCESS;
    }
    return record_status(&record);
}

opp_status_t opp_packed_attention_device_status(const void *workspace, size_t workspace_bytes,
                                                struct CUstream_st *stream) {
    return opp_attention_device_status(workspace, workspace_bytes, stream);
}
