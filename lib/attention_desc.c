/*
 * attention_desc.c - host-side validation of
 * opp_attention_desc_t (pure C, never touches a GPU).
 *
 * Every entry first reads the caller's descriptor through
 * opp__attention_desc_load() (lib/desc_size.c: NULL, struct_size, defaults
 * for fields past it) and then reads only that copy.
 * opp_attention_claim_check() checks what a runtime knows at claim time
 * (dtypes, heads, head sizes, scale, softcap, is_causal, algo:
 * lib/problem.c) and asks the dispatch table whether some kernel serves
 * them; opp_attention_desc_check() adds the shape of the batch (batch,
 * totals, max_seqlens, row strides). The totals are the capacity (rows of
 * q / out and k / v; cu_seqlens[batch] may be below them) and max_seqlen
 * an upper bound only, so a CUDA graph captured once can be replayed with
 * new cu_seqlens (lib/oppacked.h). opp__problem_from_desc() is the one
 * place a packed descriptor is resolved into the internal problem
 * (lib/internal/problem.h). Checks run in a fixed order and the first
 * failure is returned, with a message naming the field and its value.
 * Dims: B = batch, Hq = num_heads, Hkv = kv_num_heads, D = head_size,
 * Dv = v_head_size; row widths q: Hq*D, k: Hkv*D, v: Hkv*Dv, out: Hq*Dv
 * (elements). The descriptor is const and never modified.
 */
#include <inttypes.h>

#include "lib/internal/check.h"
#include "lib/internal/desc_size.h"
#include "lib/internal/dispatch.h"
#include "lib/internal/problem.h"

// --- batch shape helpers

static opp_status_t check_total(const char *field, int64_t total) {
    OPP_RETURN_IF(total < 0, OPP_STATUS_BAD_PARAM_TOTAL, "%s = %" PRId64 " must be >= 0", field,
                  total);
    OPP_RETURN_IF(total > INT32_MAX, OPP_STATUS_BAD_PARAM_TOTAL,
                  "%s = %" PRId64 " exceeds INT32_MAX (cu_seqlens are int32)", field, total);
    return OPP_STATUS_SUCCESS;
}

/* max_seqlen is only an upper bound on the sequence lengths (which the
 * device guard checks): any value >= 0, above the total too. The totals are
 * the capacity (cu_seqlens[batch] <= total), so neither bounds the other. */
static opp_status_t check_max_seqlen(const char *side, int32_t max_seqlen) {
    OPP_RETURN_IF(max_seqlen < 0, OPP_STATUS_BAD_PARAM_MAX_SEQLEN,
                  "max_seqlen_%s = %" PRId32 " must be >= 0", side, max_seqlen);
    return OPP_STATUS_SUCCESS;
}

/* The bound the run uses: no sequence is longer than cu_seqlens[batch] <=
 * total, so min(max_seqlen, total) bounds every length as well and keeps a
 * loose bound from sizing the kernels' grids (they are sized from it)
 * beyond the rows that exist. */
static int32_t run_bound(int32_t max_seqlen, int64_t total) {
    return (int64_t)max_seqlen < total ? max_seqlen : (int32_t)total;
}

/* Checks one tensor's row stride against its dense row width (elements) and
 * that its byte extent, ((rows - 1) * stride + width) * elem_bytes, fits in
 * int64 so the run path can form every address without overflow. */
static opp_status_t check_stride(const char *tensor, int64_t stride, const char *width_text,
                                 int64_t width, int64_t rows, int64_t elem_bytes) {
    OPP_RETURN_IF(stride < 0, OPP_STATUS_BAD_PARAM_STRIDE,
                  "%s_row_stride = %" PRId64 " must be >= 0 (0 means dense)", tensor, stride);
    OPP_RETURN_IF(stride > 0 && stride < width, OPP_STATUS_BAD_PARAM_STRIDE,
                  "%s_row_stride = %" PRId64 " is smaller than %s = %" PRId64, tensor, stride,
                  width_text, width);
    if (rows <= 1) {
        return OPP_STATUS_SUCCESS; /* extent = width * elem_bytes < 2^31 * 2^8 * 8 */
    }
    const int64_t step = stride == 0 ? width : stride; /* 0 means dense */
    const int64_t limit = INT64_MAX / elem_bytes;      /* largest extent in elements */
    OPP_RETURN_IF(step > (limit - width) / (rows - 1), OPP_STATUS_BAD_PARAM_STRIDE,
                  "%s_row_stride = %" PRId64 " overflows: (%" PRId64 " - 1) * %" PRId64
                  " + %" PRId64 " elements of %" PRId64 " bytes exceed INT64_MAX bytes",
                  tensor, stride, rows, step, width, elem_bytes);
    return OPP_STATUS_SUCCESS;
}

static opp_status_t check_strides(const opp_attention_desc_t *desc, const opp__attrs_t *a) {
    const int64_t hq = a->hq, hkv = a->hkv, d = a->d, dv = a->dv;
    const int64_t bytes = (int64_t)opp_dtype_size(a->dtype);
    OPP_TRY(check_stride("q", desc->q_row_stride, "num_heads * head_size", hq * d, desc->total_q,
                         bytes));
    OPP_TRY(check_stride("k", desc->k_row_stride, "kv_num_heads * head_size", hkv * d,
                         desc->total_kv, bytes));
    OPP_TRY(check_stride("v", desc->v_row_stride, "kv_num_heads * v_head_size", hkv * dv,
                         desc->total_kv, bytes));
    OPP_TRY(check_stride("out", desc->out_row_stride, "num_heads * v_head_size", hq * dv,
                         desc->total_q, bytes));
    return OPP_STATUS_SUCCESS;
}

/* Resolves a checked descriptor: dense strides for 0, packed layout. */
static void resolve(const opp_attention_desc_t *desc, const opp__attrs_t *a, opp__problem_t *p) {
    *p = (opp__problem_t){0};
    p->a = *a;
    p->layout = OPP__LAYOUT_PACKED;
    p->entry = "opp_packed_attention_fwd";
    p->batch = desc->batch;
    p->max_seqlen_q = run_bound(desc->max_seqlen_q, desc->total_q);
    p->max_seqlen_kv = run_bound(desc->max_seqlen_kv, desc->total_kv);
    p->total_q = desc->total_q;
    p->total_kv = desc->total_kv;
    p->input_rank = 3;
    const int64_t hq = a->hq, hkv = a->hkv, d = a->d, dv = a->dv;
    p->q = (opp__tensor_t){NULL, desc->q_row_stride != 0 ? desc->q_row_stride : hq * d, d, 0};
    p->k = (opp__tensor_t){NULL, desc->k_row_stride != 0 ? desc->k_row_stride : hkv * d, d, 0};
    p->v = (opp__tensor_t){NULL, desc->v_row_stride != 0 ? desc->v_row_stride : hkv * dv, dv, 0};
    p->out =
        (opp__tensor_t){NULL, desc->out_row_stride != 0 ? desc->out_row_stride : hq * dv, dv, 0};
    p->lse_head = desc->total_q; /* [Hq, total_q] */
    p->lse_batch = 0;
}

opp_status_t opp__problem_from_desc(const opp_attention_desc_t *user, opp__problem_t *p) {
    opp_attention_desc_t local; /* the caller's struct_size bytes, defaults beyond */
    OPP_TRY(opp__attention_desc_load(user, &local));
    const opp_attention_desc_t *desc = &local;
    const opp__claim_fields_t f = OPP__CLAIM_FIELDS(desc);
    opp__attrs_t a;
    OPP_TRY(opp__claim_fields_check(&f, &a));
    OPP_TRY(opp__dispatch_claim(&a)); /* claim-time faults before batch-shape faults */
    OPP_RETURN_IF(desc->batch <= 0, OPP_STATUS_BAD_PARAM_BATCH, "batch = %" PRId32 " must be >= 1",
                  desc->batch);
    OPP_TRY(check_total("total_q", desc->total_q));
    OPP_TRY(check_total("total_kv", desc->total_kv));
    OPP_TRY(check_max_seqlen("q", desc->max_seqlen_q));
    OPP_TRY(check_max_seqlen("kv", desc->max_seqlen_kv));
    OPP_TRY(check_strides(desc, &a));
    resolve(desc, &a, p);
    const opp__kernel_row_t *row; /* the whole problem: strides too */
    return opp__dispatch_select(p, 0, &row);
}

// --- public entry

opp_status_t opp_attention_claim_check(const opp_attention_desc_t *desc) {
    opp_attention_desc_t local;
    OPP_TRY(opp__attention_desc_load(desc, &local));
    const opp__claim_fields_t f = OPP__CLAIM_FIELDS(&local);
    opp__attrs_t a;
    OPP_TRY(opp__claim_fields_check(&f, &a));
    return opp__dispatch_claim(&a);
}

opp_status_t opp_attention_desc_check(const opp_attention_desc_t *desc) {
    opp__problem_t p;
    return opp__problem_from_desc(desc, &p);
}

opp_status_t opp_attention_kernel_query(const opp_attention_desc_t *desc, int32_t sm_arch,
                                        const char **kernel_name) {
    if (kernel_name != NULL) {
        *kernel_name = NULL;
    }
    opp__problem_t p;
    OPP_TRY(opp__problem_from_desc(desc, &p)); /* the descriptor first, then the arguments */
    OPP_TRY(opp__dispatch_query_args(sm_arch, kernel_name));
    return opp__dispatch_name(&p, sm_arch, kernel_name);
}
