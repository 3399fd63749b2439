/*
 * attention_plan.h - the workspace plan of the run path (lib/attention_plan.c):
 * one layout function, counting (workspace == NULL) or materialising, used
 * by every *_workspace_size() and *_fwd() (STYLE.md section 8). Host code;
 * the workspace is device memory never dereferenced here.
 */
#ifndef OPP_INTERNAL_ATTENTION_PLAN_H
#define OPP_INTERNAL_ATTENTION_PLAN_H

#include <stddef.h>

#include "lib/internal/problem.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The workspace, region by region. */
typedef struct opp__plan {
    size_t workspace_bytes; /* total (a multiple of 256) */
    void *guard_record;     /* OPP__GUARD_RECORD_BYTES at offset 0; NULL when counting */
    /* FAST split-KV partials (kernels/flash_split.cuh), NULL when the
     * problem cannot split: split_rows partial rows of Hq heads each */
    float *split_o;     /* [split_rows, Hq, Dv] */
    float *split_ml;    /* [split_rows, Hq, 2] */
    int64_t split_rows; /* the bound, opp__plan_split_rows() */
} opp__plan_t;

/* Partial rows the FAST split-KV path may need for p (0: none): a bound on
 * sum over sequences with L_kv > S of ceil(L_kv / S) ts, ts = min(L_q, qmax)
 * split tokens (kernels/flash_split.cuh), from the host-side
 * extents alone, min(ceil(max_kv / S) min(total_q, B qmax),
 * (floor(total_kv / S) + B) qmax), qmax = OPP__SPLIT_MOST(G). */
int64_t opp__plan_split_rows(const opp__problem_t *p);

/* Lays the workspace of problem p out at `workspace` (device), or only
 * counts when it is NULL. p == NULL lays out the guard record alone (its
 * offset is the same for every problem). */
void opp__plan_layout(const opp__problem_t *p, void *workspace, opp__plan_t *plan);

/* *workspace_bytes = the workspace problem p needs (opp__plan_layout
 * counting), after the NULL check the public size queries share: the
 * descriptor's faults come first, then this argument's. @return : SUCCESS
 * or BAD_PARAM_NULL_POINTER. */
opp_status_t opp__plan_workspace_bytes(const opp__problem_t *p, size_t *workspace_bytes);

/* Checks a caller's workspace (not NULL, 256-byte aligned, at least the
 * planned size) and materialises the plan on it.
 * @return : SUCCESS, BAD_PARAM_NULL_POINTER, BAD_PARAM_MISALIGNED or
 *           BAD_PARAM_WORKSPACE (message with both sizes). */
opp_status_t opp__plan_bind(const opp__problem_t *p, void *workspace, size_t workspace_bytes,
                            opp__plan_t *plan);

#ifdef __cplusplus
}
#endif
#endif /* OPP_INTERNAL_ATTENTION_PLAN_H */
