/*
 * ref_threads.h - the worker threads of the exact CPU references.
 *
 * A reference call is split into GROUPS (one per (sequence or batch entry,
 * kv head)) and each group into ITEMS (a query head and a block of at most
 * OPP__REF_ROWS_PER_ITEM of its query rows). The threads take items in
 * order from one atomic counter, so ragged batches balance by themselves.
 * The first thread that needs a group widens its keys and values once
 * (opp__exact_kv_t, shared read-only by every item of the group) and the
 * last one to finish an item of it frees them: at most one group per thread
 * is held at a time.
 *
 * Each output row belongs to exactly one item and is computed by one thread
 * in the fixed order of numerics/exact_order.h, so the result does not
 * depend on the number of threads or on which thread ran what.
 */
#ifndef OPP_REFERENCE_REF_THREADS_H
#define OPP_REFERENCE_REF_THREADS_H

#include <stddef.h>
#include <stdint.h>

#include "lib/oppacked.h"
#include "reference/exact_row.h"

/* Query rows per item: one block of the row kernels. */
#define OPP__REF_ROWS_PER_ITEM OPP__EXACT_MAX_ROWS

/* One reference call's work. The callbacks run on any of the threads, at
 * the same time for different items; they must not record errors or print. */
typedef struct opp__ref_work {
    int64_t n_groups;
    int32_t d, dv;          /* head sizes of every group's keys / values */
    size_t scratch_doubles; /* per-thread scratch handed to run() */
    void *ctx;
    /* Items of group g (>= 0; 0: the group is never loaded). */
    int64_t (*group_items)(void *ctx, int64_t g);
    /* Keys of group g (the n of its opp__exact_kv_t). */
    int32_t (*group_keys)(void *ctx, int64_t g);
    /* Fills kv (laid out and zeroed) with group g's keys and values. */
    void (*load)(void *ctx, int64_t g, opp__exact_kv_t *kv);
    /* Computes item `item` (0 .. group_items(g) - 1) of group g. */
    void (*run)(void *ctx, int64_t g, int64_t item, const opp__exact_kv_t *kv, double *scratch);
} opp__ref_work_t;

/* Runs every item of w on min(opp_ref_threads(), items) threads (the
 * calling thread is one of them) and returns when all are done.
 * @return : OPP_STATUS_SUCCESS, or OPP_STATUS_HOST_ALLOC_FAILED (recorded on
 *           the calling thread) when scratch or a group's keys and values
 *           cannot be allocated; the output is then incomplete. */
opp_status_t opp__ref_run(const opp__ref_work_t *w);

#endif /* OPP_REFERENCE_REF_THREADS_H */
