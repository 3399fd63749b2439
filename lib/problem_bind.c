/*
 * problem_bind.c - opp__problem_bind() (lib/internal/problem.h): checks the
 * device pointers of a run and binds them, with the scales the kernels use,
 * to a resolved problem. Part of the run path (links libm); never
 * dereferences a device pointer.
 */
#include <inttypes.h>
#include <math.h>

#include "lib/internal/check.h"
#include "lib/internal/problem.h"
#include "numerics/exact_order.h"

// --- device pointers

static opp_status_t check_device_tensor(const char *name, const void *ptr, int64_t rows) {
    OPP_RETURN_IF(ptr == NULL && rows > 0, OPP_STATUS_BAD_PARAM_NULL_POINTER,
                  "%s is NULL but has %" PRId64 " rows", name, rows);
    OPP_RETURN_IF((uintptr_t)ptr % 16 != 0, OPP_STATUS_BAD_PARAM_MISALIGNED,
                  "%s = %p is not 16-byte aligned", name, ptr);
    return OPP_STATUS_SUCCESS;
}

static opp_status_t check_device_array(const char *name, const void *ptr, size_t align) {
    OPP_RETURN_IF(ptr == NULL, OPP_STATUS_BAD_PARAM_NULL_POINTER, "%s is NULL", name);
    OPP_RETURN_IF((uintptr_t)ptr % align != 0, OPP_STATUS_BAD_PARAM_MISALIGNED,
                  "%s = %p is not %zu-byte aligned", name, ptr, align);
    return OPP_STATUS_SUCCESS;
}

opp_status_t opp__problem_bind(opp__problem_t *p, const int32_t *cu_seqlens_q,
                               const int32_t *cu_seqlens_kv, const int64_t *nonpad, const void *q,
                               const void *k, const void *v, void *out, const char *out_name,
                               float *lse) {
    if (p->layout == OPP__LAYOUT_PACKED) {
        OPP_TRY(check_device_array("varlen->cu_seqlens_q", cu_seqlens_q, 4));
        OPP_TRY(check_device_array("varlen->cu_seqlens_kv", cu_seqlens_kv, 4));
    } else {
        OPP_TRY(check_device_array("nonpad_kv_seqlen", nonpad, 8));
    }
    OPP_TRY(check_device_tensor("q", q, p->total_q));
    OPP_TRY(check_device_tensor("k", k, p->total_kv));
    OPP_TRY(check_device_tensor("v", v, p->total_kv));
    OPP_TRY(check_device_tensor(out_name, out, p->total_q));
    OPP_RETURN_IF((uintptr_t)lse % 4 != 0, OPP_STATUS_BAD_PARAM_MISALIGNED,
                  "lse = %p is not 4-byte aligned", (void *)lse);
    p->cu_seqlens_q = cu_seqlens_q;
    p->cu_seqlens_kv = cu_seqlens_kv;
    p->nonpad = nonpad;
    p->q.ptr = q;
    p->k.ptr = k;
    p->v.ptr = v;
    p->out.ptr = out;
    p->lse = lse;
    p->a.sqrt_scale = opp__exact_sqrt_scale(p->a.scale, p->a.d);
    p->a.softmax_scale = p->a.scale != 0.0f ? p->a.scale : (float)(1.0 / sqrt((double)p->a.d));
    return OPP_STATUS_SUCCESS;
}
